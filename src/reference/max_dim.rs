//! The reference of `aclnnMaxDim`: the maximum along one dim and its position.

use crate::element::Element;
use crate::error::{Error, Result};
use crate::shape::Dims;
use ndarray::{ArrayD, ArrayView, Axis, Dimension, IxDyn};

/// The maxima of `x` along `dim` and their positions along it, as `aclnnMaxDim` gives
/// them: `dim` in `[−r, r−1]` (`r` = rank; a 0-D `x` takes −1 and 0, and gives itself
/// and index 0), the dim removed or kept as size 1 with `keep_dim`. The first maximum
/// wins a tie; a NaN is the maximum (the first NaN, the simulator's choice: CANN does not
/// document it). Exact: the values are elements of `x`. An empty `x` gives zeros of the
/// reduced shape (the device computes nothing and leaves its outputs as they were).
///
/// # Errors
/// [`Error::TooManyDims`] when `x` has more than 8 dims, [`Error::InvalidArgument`] naming
/// `dim` when it is out of range.
///
/// # Examples
/// ```
/// use ascendcl::reference::max_dim;
/// use ndarray::array;
///
/// let x = array![[1.0f32, 5.0, 5.0], [7.0, f32::NAN, 0.0]];
/// let (m, at) = max_dim(x.view(), 1, false)?;
/// assert_eq!(m[[0]], 5.0);
/// assert!(m[[1]].is_nan());
/// assert_eq!(at, array![1i64, 1].into_dyn());
/// # Ok::<(), ascendcl::Error>(())
/// ```
pub fn max_dim<T: Element, D: Dimension>(
    x: ArrayView<'_, T, D>,
    dim: i64,
    keep_dim: bool,
) -> Result<(ArrayD<T>, ArrayD<i64>)> {
    let x = x.into_dyn();
    let dims = Dims::new("self", x.shape())?;
    let r = dims.ndim() as i64;
    let (lo, hi) = if r == 0 { (-1, 0) } else { (-r, r - 1) };
    if dim < lo || dim > hi {
        return Err(Error::InvalidArgument(format!(
            "dim {dim} is outside [{lo}, {hi}]"
        )));
    }
    if r == 0 {
        return Ok((x.to_owned(), ArrayD::zeros(IxDyn(&[]))));
    }
    // In range, so the axis is below the rank.
    let axis = Axis(dim.rem_euclid(r) as usize);
    let mut reduced: Vec<usize> = x.shape().to_vec();
    reduced[axis.0] = 1;
    let mut values = ArrayD::<T>::from_elem(IxDyn(&reduced), T::default());
    let mut at = ArrayD::<i64>::zeros(IxDyn(&reduced));
    if !x.is_empty() {
        for ((lane, v), i) in x
            .lanes(axis)
            .into_iter()
            .zip(values.iter_mut())
            .zip(at.iter_mut())
        {
            let (mut best, mut k_best) = (lane[0].to_f64(), 0usize);
            for (k, e) in lane.iter().enumerate().skip(1) {
                let e = e.to_f64();
                if !best.is_nan() && (e > best || e.is_nan()) {
                    (best, k_best) = (e, k);
                }
            }
            *v = lane[k_best];
            *i = k_best as i64;
        }
    }
    if !keep_dim {
        values = values.index_axis_move(axis, 0);
        at = at.index_axis_move(axis, 0);
    }
    Ok((values, at))
}
