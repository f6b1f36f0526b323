//! The reference of `aclnnMatmul`: the matrix product with batch broadcasting, computed as
//! the device does for a [`CubeMath`].

use super::cube::{CubeFormat, cube_format, kernel_dtype};
use super::exact::finish;
use crate::attrs::CubeMath;
use crate::element::{Element, Promote};
use crate::error::{Error, Result};
use crate::shape::{Dims, broadcast};
use ndarray::linalg::general_mat_mul;
use ndarray::{Array3, ArrayD, ArrayView, Axis, Dimension, IxDyn};

/// The most dims a matmul operand may have.
const MAX_MATMUL_DIMS: usize = 6;

/// `self @ mat2` as `aclnnMatmul` computes it under `math` on Atlas A2/A3, as a new array
/// in the inputs' promoted type ([`Promote`]). For another output type, [`matmul_as`].
///
/// Shapes follow torch's `matmul`: each operand has 1 to 6 dims; `(K)·(K)` gives a 0-D
/// result, `(K)·(K,N)` gives `(N)`, `(M,K)·(K)` gives `(M)`, `(M,K)·(K,N)` gives `(M,N)`;
/// with more dims the batch dims (all but the last two) broadcast and the dim added to a
/// 1-D operand is dropped again, e.g. `(B,M,K)·(K,N)` gives `(B,M,N)`. `K = 0` gives
/// zeros. Any strides (transposed views) are accepted.
///
/// # Compute chain and accuracy
/// The operands are rounded to the compute format of [`cube_format`] (e.g. f32 inputs to
/// f16 for [`CubeMath::UseFp16`], to HF32 for [`CubeMath::UseHf32`]); their products are
/// exact in f64 and summed in f64 (ndarray's `general_mat_mul`), which is within
/// `K·2⁻⁵³·Σₖ|aₖbₖ|` of the exact sum; that sum is rounded **once** to the dtype the
/// device kernel writes (f32 for an f32 output unless `UseFp16`; else the compute dtype)
/// and converted to the output type. So each element is the correctly rounded dot
/// product of the rounded operands except when it lies within that bound of a rounding
/// boundary (then 1 ulp off).
///
/// # Errors
/// [`Error::TooManyDims`] for an operand of more than 6 dims, [`Error::InvalidArgument`]
/// for a 0-D operand or unequal `K`, [`Error::NotBroadcastable`] for batch dims that do
/// not broadcast.
///
/// # Examples
/// ```
/// use ascendcl::{CubeMath, reference::matmul};
/// use ndarray::{Array3, array};
///
/// let a = array![[1.0f32, 2.0], [3.0, 4.0]];
/// let b = array![[5.0f32, 6.0], [7.0, 8.0]];
/// let c = matmul(a.view(), b.view(), CubeMath::KeepDtype)?;
/// assert_eq!(c, array![[19.0, 22.0], [43.0, 50.0]].into_dyn());
///
/// // a transposed view and a batch broadcast: (3, 2, 2) · (2, 2) gives (3, 2, 2)
/// let batch = Array3::from_shape_fn((3, 2, 2), |(i, j, k)| (i + j + k) as f32);
/// let c = matmul(batch.view(), a.t(), CubeMath::KeepDtype)?;
/// assert_eq!(c.shape(), &[3, 2, 2]);
/// assert_eq!(c[[1, 1, 0]], 2.0 * 1.0 + 3.0 * 2.0);
///
/// // UseFp16 rounds the f32 inputs and the result to f16
/// let x = array![[1.0f32 + 1e-4]];
/// let one = array![[1.0f32]];
/// assert_eq!(matmul(x.view(), one.view(), CubeMath::UseFp16)?[[0, 0]], 1.0);
/// # Ok::<(), ascendcl::Error>(())
/// ```
pub fn matmul<A, B, DA, DB>(
    a: ArrayView<'_, A, DA>,
    b: ArrayView<'_, B, DB>,
    math: CubeMath,
) -> Result<ArrayD<A::Output>>
where
    A: Promote<B>,
    B: Element,
    DA: Dimension,
    DB: Dimension,
{
    matmul_as(a, b, math)
}

/// [`matmul`] with the output in element type `O`, which also decides what the kernel
/// writes (an f32 output receives the f32 accumulation unless `UseFp16`; a half output
/// the compute dtype's rounding, then the cast to `O`).
///
/// # Errors
/// As [`matmul`].
///
/// # Examples
/// ```
/// use ascendcl::{CubeMath, reference::matmul_as};
/// use half::f16;
/// use ndarray::{ArrayD, array};
///
/// let a = array![[f16::from_f32(1.0), f16::from_f32(2.0)]];
/// let b = array![[f16::from_f32(0.25)], [f16::from_f32(0.001)]];
/// let wide: ArrayD<f32> = matmul_as(a.view(), b.view(), CubeMath::KeepDtype)?;
/// // 16-in-32-out: no rounding to f16 of the f32 accumulation
/// assert_eq!(wide[[0, 0]], (0.25 + 2.0 * f16::from_f32(0.001).to_f64()) as f32);
/// # Ok::<(), ascendcl::Error>(())
/// ```
pub fn matmul_as<O, A, B, DA, DB>(
    a: ArrayView<'_, A, DA>,
    b: ArrayView<'_, B, DB>,
    math: CubeMath,
) -> Result<ArrayD<O>>
where
    O: Element,
    A: Element,
    B: Element,
    DA: Dimension,
    DB: Dimension,
{
    let shapes = MatmulShapes::of(a.shape(), b.shape())?;
    let format = cube_format(A::DTYPE, B::DTYPE, math);
    let kernel = kernel_dtype(A::DTYPE, B::DTYPE, math, format, O::DTYPE);
    let sums = products(a.into_dyn(), b.into_dyn(), &shapes, format)?;
    let values: Vec<O> = sums.iter().map(|&v| finish(kernel, v)).collect();
    ArrayD::from_shape_vec(IxDyn(&shapes.out), values)
        .map_err(|e| Error::InvalidArgument(e.to_string()))
}

/// The shapes of one matrix product after the vendor's checks.
pub(crate) struct MatmulShapes {
    /// The broadcast batch dims.
    batch: Dims,
    m: usize,
    k: usize,
    n: usize,
    /// The result's shape (batch, then M and N unless they came from a 1-D operand).
    pub(crate) out: Vec<usize>,
}

impl MatmulShapes {
    /// Checks `self` and `mat2` as `aclnnMatmul` does (1 to 6 dims, equal K, batch dims
    /// broadcastable) and derives the result's shape.
    pub(crate) fn of(a: &[usize], b: &[usize]) -> Result<MatmulShapes> {
        for (name, s) in [("self", a), ("mat2", b)] {
            if s.len() > MAX_MATMUL_DIMS {
                return Err(Error::TooManyDims {
                    argument: name,
                    dims: s.len(),
                    max: MAX_MATMUL_DIMS,
                });
            }
            if s.is_empty() {
                return Err(Error::InvalidArgument(format!(
                    "{name} is 0-D; matmul operands need 1 to {MAX_MATMUL_DIMS} dims"
                )));
            }
            Dims::new(name, s)?;
        }
        let (ka, kb) = (
            a[a.len() - 1],
            if b.len() == 1 { b[0] } else { b[b.len() - 2] },
        );
        if ka != kb {
            return Err(Error::InvalidArgument(format!(
                "self {a:?} and mat2 {b:?} do not chain: self's last dim {ka} differs from \
                 mat2's reduced dim {kb}"
            )));
        }
        let m = if a.len() == 1 { 1 } else { a[a.len() - 2] };
        let n = if b.len() == 1 { 1 } else { b[b.len() - 1] };
        let batch_a = &a[..a.len().saturating_sub(2)];
        let batch_b = &b[..b.len().saturating_sub(2)];
        let batch = broadcast(&[("self", batch_a), ("mat2", batch_b)])?;
        let mut out = batch.to_vec();
        if a.len() > 1 {
            out.push(m);
        }
        if b.len() > 1 {
            out.push(n);
        }
        Dims::new("out", &out)?;
        Ok(MatmulShapes {
            batch,
            m,
            k: ka,
            n,
            out,
        })
    }
}

/// The f64 sums of the products of the operands rounded to `format`, as a
/// `(batch, M, N)` array in standard layout.
pub(crate) fn products<A: Element, B: Element>(
    a: ArrayView<'_, A, IxDyn>,
    b: ArrayView<'_, B, IxDyn>,
    s: &MatmulShapes,
    format: CubeFormat,
) -> Result<Array3<f64>> {
    let a = if a.ndim() == 1 {
        a.insert_axis(Axis(0))
    } else {
        a
    };
    let b = if b.ndim() == 1 {
        b.insert_axis(Axis(1))
    } else {
        b
    };
    let batches = s.batch.numel();
    let a = operand("self", a, &s.batch, [s.m, s.k], format)?;
    let b = operand("mat2", b, &s.batch, [s.k, s.n], format)?;
    let mut c = Array3::<f64>::zeros((batches, s.m, s.n));
    if s.k > 0 {
        for ((a, b), mut c) in a.outer_iter().zip(b.outer_iter()).zip(c.outer_iter_mut()) {
            general_mat_mul(1.0, &a, &b, 0.0, &mut c);
        }
    }
    Ok(c)
}

/// `view` broadcast to `batch` × `mat`, its values rounded to `format`, as an owned
/// `(batch, rows, cols)` f64 array.
fn operand<T: Element>(
    name: &'static str,
    view: ArrayView<'_, T, IxDyn>,
    batch: &Dims,
    mat: [usize; 2],
    format: CubeFormat,
) -> Result<Array3<f64>> {
    let mut full = batch.to_vec();
    full.extend_from_slice(&mat);
    let wide = view
        .broadcast(IxDyn(&full))
        .ok_or_else(|| Error::NotBroadcastable {
            argument: name,
            shape: view.shape().to_vec(),
            other: "the batch shape",
            other_shape: full.clone(),
        })?;
    // Logical (row-major) order, whatever the view's strides.
    let values: Vec<f64> = wide.iter().map(|v| format.round(v.to_f64())).collect();
    Array3::from_shape_vec((batch.numel(), mat[0], mat[1]), values)
        .map_err(|e| Error::InvalidArgument(e.to_string()))
}
