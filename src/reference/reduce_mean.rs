//! The references of `aclnnArgMax` and `aclnnMean`.

use crate::element::Element;
use crate::error::{Error, Result};
use crate::shape::Dims;
use ndarray::{ArrayD, ArrayView, Axis, Dimension, IxDyn};

/// The position along `dim` of the maximum of `x`, as `aclnnArgMax` gives it (`i64`):
/// `dim` in `[−r, r−1]` (a 0-D `x` takes −1 and 0 and gives 0), the dim removed or kept
/// as 1. The first maximum wins a tie; a NaN is the maximum (the first NaN), as torch.
///
/// # Errors
/// [`Error::TooManyDims`] above 8 dims, [`Error::InvalidArgument`] for `dim`.
///
/// # Examples
/// ```
/// use ascendcl::reference::arg_max;
/// use ndarray::array;
/// let at = arg_max(array![[1.0f32, 5.0, 5.0], [7.0, f32::NAN, 0.0]].view(), 1, false)?;
/// assert_eq!(at, array![1i64, 1].into_dyn());
/// # Ok::<(), ascendcl::Error>(())
/// ```
pub fn arg_max<T: Element, D: Dimension>(
    x: ArrayView<'_, T, D>,
    dim: i64,
    keep_dim: bool,
) -> Result<ArrayD<i64>> {
    Ok(super::max_dim(x, dim, keep_dim)?.1)
}

/// The mean of `x` over `dims` (every dim when empty; each in `[−r, r−1]`, `r` =
/// max(rank, 1), none twice), kept as 1 with `keep_dims`, as `aclnnMean` computes it in
/// `O`: `x` cast to `O` first, summed in f64, the mean rounded once to `O` (integers:
/// truncated toward zero). An empty `x` gives NaN (0 for an integer `O`).
///
/// # Errors
/// [`Error::TooManyDims`] above 8 dims, [`Error::InvalidArgument`] for a dim out of range
/// or repeated.
///
/// # Examples
/// ```
/// use ascendcl::reference::mean;
/// use ndarray::array;
/// let m = mean::<f32, f32, _>(array![[1.0f32, 2.0], [3.0, 6.0]].view(), &[0], true)?;
/// assert_eq!(m, array![[2.0f32, 4.0]].into_dyn());
/// # Ok::<(), ascendcl::Error>(())
/// ```
pub fn mean<T: Element, O: Element, D: Dimension>(
    x: ArrayView<'_, T, D>,
    dims: &[i64],
    keep_dims: bool,
) -> Result<ArrayD<O>> {
    let x = x.into_dyn();
    let shape = Dims::new("self", x.shape())?;
    let rank = shape.ndim();
    let r = rank.max(1) as i64;
    let mut folded = vec![false; rank.max(1)];
    for &d in dims {
        if !(-r..r).contains(&d) {
            return Err(Error::InvalidArgument(format!(
                "dim {d} is outside [{}, {}]",
                -r,
                r - 1
            )));
        }
        let k = d.rem_euclid(r) as usize;
        if std::mem::replace(&mut folded[k], true) {
            return Err(Error::InvalidArgument(format!("dim {d} appears twice")));
        }
    }
    if dims.is_empty() {
        folded.iter_mut().for_each(|f| *f = true);
    }
    let mut acc: ArrayD<f64> = x.mapv(|v| O::from_f64(v.to_f64()).to_f64());
    let mut count = 1usize;
    for k in (0..rank).rev() {
        if folded[k] {
            count *= x.shape()[k];
            acc = acc.sum_axis(Axis(k)).insert_axis(Axis(k));
        }
    }
    if !keep_dims {
        for k in (0..rank).rev() {
            if folded[k] {
                acc = acc.index_axis_move(Axis(k), 0);
            }
        }
    }
    let n = count as f64;
    let out: Vec<O> = acc.iter().map(|&s| O::from_f64(s / n)).collect();
    ArrayD::from_shape_vec(IxDyn(acc.shape()), out)
        .map_err(|e| Error::InvalidArgument(e.to_string()))
}
