//! The reference of `aclnnReduceSum`: the sum over some dims, kept as size 1 or removed.

use super::exact::{Sum, finish};
use crate::element::Element;
use crate::error::{Error, Result};
use crate::shape::{Dims, MAX_DIMS};
use ndarray::{ArrayD, ArrayView, Dimension, IxDyn};

/// The sum of `x` over `dims`, as a new array in `x`'s element type. `dims` follows the
/// vendor: each in `[−r, r−1]` with `r = max(ndim, 1)` (negative dims count from the
/// end), no dim twice after normalising, and **an empty `dims` reduces over all dims**.
/// The reduced dims are removed, or kept with size 1 when `keep_dims`. A 0-D `x` gives
/// itself; an empty `x` gives zeros. For another output type (`aclnnReduceSum`'s `dtype`
/// argument, which is the output's), [`reduce_sum_as`].
///
/// # Accuracy
/// Each output element is a compensated (Neumaier) f64 sum of its inputs, within
/// `2⁻⁵²·|S| + n·2⁻¹⁰⁶·Σ|xᵢ|` of the exact sum `S` of its `n` inputs, rounded **once** to
/// the output type: the correctly rounded sum except within that bound of a rounding
/// boundary. The device sums in the output dtype (`dtype` is the compute dtype).
///
/// # Errors
/// [`Error::TooManyDims`] when `x` has more than 8 dims, [`Error::InvalidArgument`]
/// naming `dims` for a dim out of range or repeated.
///
/// # Examples
/// ```
/// use ascendcl::reference::reduce_sum;
/// use ndarray::{arr0, array};
///
/// let x = array![[1.0f32, 2.0, 3.0], [4.0, 5.0, 6.0]];
/// assert_eq!(reduce_sum(x.view(), &[0], false)?, array![5.0, 7.0, 9.0].into_dyn());
/// assert_eq!(reduce_sum(x.view(), &[-1], true)?, array![[6.0], [15.0]].into_dyn());
/// assert_eq!(reduce_sum(x.view(), &[], false)?, arr0(21.0).into_dyn()); // all dims
///
/// let err = reduce_sum(x.view(), &[0, -2], false).unwrap_err(); // dim 0 twice
/// assert!(err.to_string().contains("dims"));
/// # Ok::<(), ascendcl::Error>(())
/// ```
pub fn reduce_sum<T: Element, D: Dimension>(
    x: ArrayView<'_, T, D>,
    dims: &[i64],
    keep_dims: bool,
) -> Result<ArrayD<T>> {
    reduce_sum_as(x, dims, keep_dims)
}

/// [`reduce_sum`] with the output in element type `O` (`aclnnReduceSum`'s `dtype`): the
/// sum is rounded once to `O`.
///
/// # Errors
/// As [`reduce_sum`].
///
/// # Examples
/// ```
/// use ascendcl::reference::reduce_sum_as;
/// use half::f16;
/// use ndarray::{ArrayD, Array1};
///
/// let x = Array1::from_elem(2049, f16::ONE);
/// let wide: ArrayD<f32> = reduce_sum_as(x.view(), &[0], false)?;
/// assert_eq!(wide[[]], 2049.0);
/// let narrow: ArrayD<f16> = reduce_sum_as(x.view(), &[0], false)?;
/// assert_eq!(narrow[[]], f16::from_f32(2048.0)); // 2049 rounds to even in f16
/// # Ok::<(), ascendcl::Error>(())
/// ```
pub fn reduce_sum_as<O: Element, T: Element, D: Dimension>(
    x: ArrayView<'_, T, D>,
    dims: &[i64],
    keep_dims: bool,
) -> Result<ArrayD<O>> {
    let input = Dims::new("self", x.shape())?;
    let reduced = reduced_dims(input.ndim(), dims)?;
    let x = x.into_dyn();
    if input.ndim() == 0 {
        return Ok(x.mapv(|v| O::from_f64(v.to_f64())));
    }
    // The result's shape, and the same with size 1 in place of each reduced dim.
    let mut out_shape = Vec::with_capacity(input.ndim());
    let mut kept = Vec::with_capacity(input.ndim());
    for (axis, &len) in input.iter().enumerate() {
        let r = reduced[axis];
        kept.push(if r { 1 } else { len });
        if !r {
            out_shape.push(len);
        } else if keep_dims {
            out_shape.push(1);
        }
    }
    let mut sums = ArrayD::<Sum>::from_elem(IxDyn(&kept), Sum::default());
    // Each input element goes to the output element it reduces into.
    let mut index = vec![0usize; input.ndim()];
    for (at, v) in x.indexed_iter() {
        for (axis, i) in at.slice().iter().enumerate() {
            index[axis] = if reduced[axis] { 0 } else { *i };
        }
        sums[index.as_slice()].add(v.to_f64());
    }
    let values: Vec<O> = sums.iter().map(|s| finish(O::DTYPE, s.value())).collect();
    ArrayD::from_shape_vec(IxDyn(&out_shape), values)
        .map_err(|e| Error::InvalidArgument(e.to_string()))
}

/// Which of `ndim` dims `dims` reduces, checked as the vendor does.
fn reduced_dims(ndim: usize, dims: &[i64]) -> Result<[bool; MAX_DIMS]> {
    let mut reduced = [false; MAX_DIMS];
    if dims.is_empty() {
        reduced[..ndim].fill(true);
        return Ok(reduced);
    }
    let r = ndim.max(1) as i64;
    for &d in dims {
        if d < -r || d >= r {
            return Err(Error::InvalidArgument(format!(
                "dims {dims:?}: dim {d} is out of range [{}, {}] for self of {ndim} dims",
                -r,
                r - 1
            )));
        }
        let at = d.rem_euclid(r) as usize;
        if reduced[at] {
            return Err(Error::InvalidArgument(format!(
                "dims {dims:?}: dim {at} appears more than once"
            )));
        }
        reduced[at] = true;
    }
    Ok(reduced)
}
