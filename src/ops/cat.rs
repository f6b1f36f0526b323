//! `aclnnCat`: a list of tensors joined along one dim (the argument model's tensor list).

use crate::device::SocFamily;
use crate::element::DType;
use crate::error::{Error, Result};
use crate::protocol::{Arg, Attr, Call};
use crate::shape::MAX_DIMS;

/// Positions of the arguments.
const TENSORS: usize = 0;
const DIM: usize = 1;
const OUT: usize = 2;

/// Every element type of the crate everywhere, but `bf16` only where the vendor's list for
/// the product has it (Atlas A2 / A3 and 310B).
fn arg_dtypes(soc: SocFamily, _arg: &Arg, dtype: DType) -> bool {
    dtype != DType::BF16 || matches!(soc, SocFamily::AtlasA2 | SocFamily::AtlasA3 | SocFamily::Atlas310B | SocFamily::Other)
}

/// aclnn's cast rule (PyTorch's `canCast`): no floating to integral, nothing but BOOL to
/// BOOL.
fn casts_to(from: DType, to: DType) -> bool {
    let rank = |d: DType| {
        if d == DType::Bool {
            0
        } else if d.is_float() {
            2
        } else {
            1
        }
    };
    if to == DType::Bool {
        return from == DType::Bool;
    }
    rank(from) <= rank(to)
}

/// The vendor's checks after the dtypes, in its order: the elements other than the 1-D
/// empty ones (`[0]`, dropped first) promote to a dtype that casts to out's; the first has
/// at most 8 dims and `dim` lies in its rank; every element has its rank and its dims off
/// `dim`; out has the joined shape of the non-empty elements. No element left: nothing
/// to check (a pending out is `[0]`).
fn rule(c: &Call<'_>) -> Result<()> {
    let kept: Vec<usize> = (0..c.list_len(TENSORS))
        .filter(|&k| c.list_dims(TENSORS, k) != [0])
        .collect();
    let label = c.label(TENSORS);
    let Some(&first) = kept.first() else {
        if c.is_pending(OUT) {
            c.infer(OUT, &[0])?;
        }
        return Ok(());
    };
    let mut promote = c.list_dtype(TENSORS, first).unwrap_or(DType::F32);
    for &k in &kept[1..] {
        let d = c.list_dtype(TENSORS, k).unwrap_or(promote);
        promote = promote.promote(d).ok_or_else(|| {
            Error::InvalidArgument(format!(
                "{label}: tensor {k} of dtype {d} does not promote with {promote}"
            ))
        })?;
    }
    c.infer_dtype(OUT, promote);
    if let Some(o) = c.dtype(OUT)
        && !casts_to(promote, o)
    {
        return Err(Error::InvalidArgument(format!(
            "{}: the tensors promote to {promote}, which does not cast to {o}",
            c.label(OUT)
        )));
    }
    let dims0 = c.list_dims(TENSORS, first);
    let r = dims0.len();
    if r > MAX_DIMS {
        return Err(Error::TooManyDims {
            argument: label,
            dims: r,
            max: MAX_DIMS,
        });
    }
    let Some(Attr::I64(dim)) = c.attr(DIM) else {
        return Err(Error::InvalidArgument(format!(
            "{}: not an integer",
            c.label(DIM)
        )));
    };
    let real = if dim < 0 { dim + r as i64 } else { dim };
    if real < 0 || real >= r as i64 {
        return Err(Error::InvalidArgument(format!(
            "{}: {dim} is outside the rank {r} of the tensors",
            c.label(DIM)
        )));
    }
    let real = real as usize;
    let mut joined = dims0.clone();
    joined[real] = 0;
    for &k in &kept {
        let d = c.list_dims(TENSORS, k);
        let off_dim_equal = d.len() == r && (0..r).all(|j| j == real || d[j] == dims0[j]);
        if !off_dim_equal {
            return Err(Error::InvalidArgument(format!(
                "{label}: tensor {k} has shape {d:?}, which joins with {dims0:?} only if it \
                 differs along dim {real} alone"
            )));
        }
        if !d.contains(&0) {
            joined[real] += d[real];
        }
    }
    if c.is_pending(OUT) {
        return c.infer(OUT, &joined);
    }
    let got = c.dims(OUT);
    if got != joined.as_slice() {
        return Err(Error::ShapeMismatch {
            argument: c.label(OUT),
            expected: joined,
            actual: got.to_vec(),
        });
    }
    Ok(())
}

crate::operator! {
    @verified
    /// `aclnnCat`: `out = cat(tensors, dim)`. Every product.
    pub struct Cat: aclnnCat, aclnnCatGetWorkspaceSize;
    products: |_soc: SocFamily| true;
    arg_dtypes: arg_dtypes;
    rule: rule;

    /// The tensors of `xs` joined along `dim` into `out`, queued on `stream`
    /// (`aclnnCat`).
    ///
    /// * `xs` (tensors): a slice of [`TensorView`](crate::TensorView)s of one element type
    ///   (any of the crate's; `bf16` on Atlas A2/A3 and 310B only), any strides, of one
    ///   rank (up to 8 dims) and equal dims off `dim`. A 1-D empty tensor (`[0]`) is
    ///   dropped first, as the vendor does; other empty tensors join as their size.
    /// * `dim`: in `-rank..rank`.
    /// * `out`: the joined shape, of an element type the tensors' dtype casts to.
    ///
    /// A call with a list is never taken from the device's executor cache (its key would
    /// grow with the list) and allocates the list's handles; a [`CatPlan`] launches
    /// without allocating, for lists of the planned length and layouts.
    ///
    /// # Errors
    /// [`Error::DeviceMismatch`],
    /// [`Error::UnsupportedDtype`],
    /// [`Error::InvalidArgument`] (promotion, cast to out,
    /// `dim`, the shapes of the tensors),
    /// [`Error::TooManyDims`],
    /// [`Error::ShapeMismatch`] (`out`);
    /// [`Error::Aclnn`] from the library.
    ///
    /// ```
    /// # fn main() -> ascendcl::Result<()> {
    /// use ascendcl::{DeviceTensor, Runtime, cat, cat_new};
    /// use ndarray::array;
    /// let stream = Runtime::auto()?.device(0)?.stream()?;
    /// let a = DeviceTensor::from_array(&stream, &array![[1.0f32, 2.0], [3.0, 4.0]])?;
    /// let b = DeviceTensor::from_array(&stream, &array![[5.0f32], [6.0]])?;
    /// let mut out = DeviceTensor::<f32>::zeros(&stream, [2, 3])?;
    /// cat(&[a.view(), b.view()], -1, &mut out, &stream)?;
    /// assert_eq!(out.to_array(&stream)?, array![[1.0f32, 2.0, 5.0], [3.0, 4.0, 6.0]].into_dyn());
    /// let rows: DeviceTensor<f32> = cat_new(&[a.view(), a.view()], 0, &stream)?;
    /// assert_eq!(rows.shape(), &[4, 2]);
    /// # Ok(()) }
    /// ```
    pub fn cat<T, O>(
        xs: list<T> = "tensors",
        dim: attr<i64> = "dim",
        out: output<O> = "out",
    );

    /// A reusable [`cat`] for a fixed number of tensors, their layouts, element types and
    /// `dim` (a [`Plan`](crate::Plan)).
    pub type CatPlan;
    allocating: cat_new;
}
