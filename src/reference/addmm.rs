//! The reference of `aclnnAddmm`: `beta·self + alpha·(mat1 @ mat2)` with a bias `self`
//! broadcast to the product's shape.

use super::cube::{cube_format, kernel_dtype};
use super::exact::{broadcast_to, finish, round_to};
use super::matmul::{MatmulShapes, products};
use crate::attrs::CubeMath;
use crate::element::{DType, Element, Promote};
use crate::error::{Error, Result};
use crate::protocol::Scalar;
use crate::shape::broadcast;
use ndarray::{Array2, ArrayView, Dimension, Ix2, Zip};

/// `beta·self + alpha·(mat1 @ mat2)` as `aclnnAddmm` computes it under `math` on Atlas
/// A2/A3, as a new `(n, p)` array in the matrices' promoted type ([`Promote`]). For
/// another output type, [`addmm_as`].
///
/// `mat1` is `(n, k)`, `mat2` is `(k, p)`, `self` (the bias) has at most 2 dims and
/// broadcasts to `(n, p)` (a row `(p)` or `(1, p)` in a linear layer). `beta` and
/// `alpha` are plain numbers, as the operator's [`Scalar`] takes. As the device does, an
/// `alpha` within `f32::EPSILON` of 0 skips the product (NaN or ∞ in the matrices do not
/// reach the result), a `beta` within it of 0 never reads `self`, and `k = 0` gives
/// `beta·self`.
///
/// # Compute chain and accuracy
/// The matrices are rounded to [`cube_format`]'s compute format and their products
/// summed in f64 as in [`matmul`](super::matmul) (within `k·2⁻⁵³·Σ|aᵢbᵢ|` of exact).
/// Then the device's chain: with `alpha = beta = 1` and a bias row (`(p)` or `(1, p)`)
/// the bias enters the product's accumulator and the result is rounded **once** to the
/// dtype the kernel writes (f32 for an f32 output unless `UseFp16`). Otherwise the
/// product is rounded to that dtype, `beta·self` (unless beta is 1) to `self`'s dtype,
/// and `t + alpha·m` once more to their promoted dtype ([`DType::promote`]): three
/// roundings, each modelled, so that with mixed signs (a sum that cancels) the reference
/// carries the device's error and not an error of its own. The result is then
/// converted to the output type. Where the product is skipped, `beta·self` is rounded
/// once to `self`'s type.
///
/// [`DType::promote`]: crate::DType::promote
///
/// # Errors
/// [`Error::InvalidArgument`] naming `mat1` or `mat2` when either is not 2-D or `k`
/// differs, [`Error::TooManyDims`] for a `self` of more than 2 dims,
/// [`Error::NotBroadcastable`] when `self` does not broadcast to `(n, p)`.
///
/// # Examples
/// ```
/// use ascendcl::{CubeMath, reference::addmm};
/// use ndarray::array;
///
/// let x = array![[1.0f32, 2.0], [3.0, 4.0], [5.0, 6.0]]; // 3 samples, 2 features
/// let w = array![[1.0f32, 0.0, -1.0], [0.5, 2.0, 0.0]]; // 2 -> 3
/// let b = array![0.25f32, 0.0, 1.0];
/// let h = addmm(b.view(), x.view(), w.view(), 1, 1, CubeMath::KeepDtype)?;
/// assert_eq!(h.row(0), array![2.25, 4.0, 0.0]);
///
/// // beta 0: the bias is not read (NaN does not propagate); alpha scales the product
/// let nan = array![f32::NAN];
/// let h = addmm(nan.view(), x.view(), w.view(), 0, 2, CubeMath::KeepDtype)?;
/// assert_eq!(h[[2, 1]], 24.0);
/// # Ok::<(), ascendcl::Error>(())
/// ```
pub fn addmm<S, A, B, DS>(
    bias: ArrayView<'_, S, DS>,
    mat1: ArrayView<'_, A, Ix2>,
    mat2: ArrayView<'_, B, Ix2>,
    beta: impl Into<Scalar>,
    alpha: impl Into<Scalar>,
    math: CubeMath,
) -> Result<Array2<A::Output>>
where
    S: Element,
    A: Promote<B>,
    B: Element,
    DS: Dimension,
{
    addmm_as(bias, mat1, mat2, beta, alpha, math)
}

/// [`addmm`] with the output in element type `O`, which also decides what the kernel
/// writes (as in [`matmul_as`](super::matmul_as)).
///
/// # Errors
/// As [`addmm`].
///
/// # Examples
/// ```
/// use ascendcl::{CubeMath, reference::addmm_as};
/// use half::f16;
/// use ndarray::{Array2, array};
///
/// let a = array![[1.0f32, 1.0]];
/// let b = array![[0.5f32], [0.25]];
/// let out: Array2<f16> = addmm_as(array![1.0f32].view(), a.view(), b.view(), 1, 1, CubeMath::KeepDtype)?;
/// assert_eq!(out[[0, 0]], f16::from_f32(1.75));
/// # Ok::<(), ascendcl::Error>(())
/// ```
pub fn addmm_as<O, S, A, B, DS>(
    bias: ArrayView<'_, S, DS>,
    mat1: ArrayView<'_, A, Ix2>,
    mat2: ArrayView<'_, B, Ix2>,
    beta: impl Into<Scalar>,
    alpha: impl Into<Scalar>,
    math: CubeMath,
) -> Result<Array2<O>>
where
    O: Element,
    S: Element,
    A: Element,
    B: Element,
    DS: Dimension,
{
    let (beta, alpha) = (beta.into().to_f64(), alpha.into().to_f64());
    let (n, k) = mat1.dim();
    let (k2, p) = mat2.dim();
    if k != k2 {
        return Err(Error::InvalidArgument(format!(
            "mat1 {:?} and mat2 {:?} do not chain: mat1's {k} columns differ from mat2's {k2} rows",
            mat1.shape(),
            mat2.shape()
        )));
    }
    if bias.ndim() > 2 {
        return Err(Error::TooManyDims {
            argument: "self",
            dims: bias.ndim(),
            max: 2,
        });
    }
    broadcast(&[("self", bias.shape()), ("out", &[n, p])]).and_then(|b| {
        if b.as_slice() == [n, p] {
            Ok(())
        } else {
            Err(Error::NotBroadcastable {
                argument: "self",
                shape: bias.shape().to_vec(),
                other: "out",
                other_shape: vec![n, p],
            })
        }
    })?;
    let mut out = Array2::<O>::default((n, p));
    if n == 0 || p == 0 {
        return Ok(out);
    }
    let is_zero = |v: f64| v.abs() <= f64::from(f32::EPSILON);
    let bias_row = bias.len() == p && bias.shape().last() == Some(&p);
    let bias = broadcast_to("self", &bias, &[n, p])?;
    if k == 0 || is_zero(alpha) {
        Zip::from(out.view_mut().into_dyn())
            .and(&bias)
            .for_each(|o, s| *o = finish(S::DTYPE, beta * s.to_f64()));
        return Ok(out);
    }
    let format = cube_format(A::DTYPE, B::DTYPE, math);
    let kernel = kernel_dtype(A::DTYPE, B::DTYPE, math, format, O::DTYPE);
    let shapes = MatmulShapes::of(mat1.shape(), mat2.shape())?;
    let sums = products(mat1.into_dyn(), mat2.into_dyn(), &shapes, format)?
        .into_shape_with_order((n, p))
        .map_err(|e| Error::InvalidArgument(e.to_string()))?;
    let is_one = |v: f64| (v - 1.0).abs() <= f64::from(f32::EPSILON);
    // The one-kernel bias path: alpha = beta = 1 and a bias row of `p` elements.
    let fused = is_one(alpha) && is_one(beta) && bias_row;
    let promote = S::DTYPE.promote(kernel).unwrap_or(DType::F32);
    Zip::from(out.view_mut().into_dyn())
        .and(&bias)
        .and(sums.view().into_dyn())
        .for_each(|o, s, &m| {
            *o = if fused {
                finish(kernel, s.to_f64() + m)
            } else {
                // The matmul kernel writes its product, beta·self is rounded to self's
                // dtype, and the sum is rounded to their promoted dtype: under
                // cancellation these roundings, not the last one, decide the error.
                let m = round_to(kernel, m);
                let t = if is_one(beta) {
                    s.to_f64()
                } else {
                    round_to(S::DTYPE, beta * s.to_f64())
                };
                match (is_zero(beta), is_one(alpha)) {
                    (true, true) => O::from_f64(m),
                    (true, false) => finish(kernel, alpha * m),
                    (false, _) => finish(promote, t + alpha * m),
                }
            };
        });
    Ok(out)
}
