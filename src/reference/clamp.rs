//! The reference of `aclnnClamp`: every element bounded by optional scalars.

use crate::element::Element;
use crate::error::{Error, Result};
use crate::shape::Dims;
use ndarray::{ArrayD, ArrayView, Dimension};

/// `min(max(x, min), max)` computed in the output type `O`, as `aclnnClamp` computes in
/// out's dtype: each element of `x` converted to `O` (rounded once to nearest even; to an
/// integer type truncated toward zero and saturated), each present bound converted the
/// same way (how CANN converts a bound outside an integer type's range is not
/// documented), an absent bound (`None`) no bound at all. `max` wins when `min > max`. A NaN
/// element stays NaN; a NaN bound leaves the elements unchanged (the simulator's choice:
/// CANN does not document it).
///
/// # Errors
/// [`Error::InvalidArgument`] when both bounds are `None`, [`Error::TooManyDims`] when `x`
/// has more than 8 dims.
///
/// # Examples
/// ```
/// use ascendcl::reference::clamp_as;
/// use ndarray::array;
///
/// let x = array![-2.5f32, 0.5, 3.0];
/// let relu: ndarray::ArrayD<f32> = clamp_as(x.view(), Some(0.0), None)?;
/// assert_eq!(relu, array![0.0f32, 0.5, 3.0].into_dyn());
/// // into i32: -2.5 truncates to -2, the bound 1.9 to 1
/// let ints: ndarray::ArrayD<i32> = clamp_as(x.view(), None, Some(1.9))?;
/// assert_eq!(ints, array![-2, 0, 1].into_dyn());
/// assert!(clamp_as::<f32, f32, _>(x.view(), None, None).is_err());
/// # Ok::<(), ascendcl::Error>(())
/// ```
pub fn clamp_as<T: Element, O: Element, D: Dimension>(
    x: ArrayView<'_, T, D>,
    min: Option<f64>,
    max: Option<f64>,
) -> Result<ArrayD<O>> {
    if min.is_none() && max.is_none() {
        return Err(Error::InvalidArgument(
            "clipValueMin and clipValueMax are both None: clamp needs at least one bound".into(),
        ));
    }
    Dims::new("self", x.shape())?;
    let to_o = |v: f64| O::from_f64(v).to_f64();
    let lo = min.map_or(f64::NEG_INFINITY, to_o);
    let hi = max.map_or(f64::INFINITY, to_o);
    Ok(x.into_dyn().mapv(|v| {
        let v = to_o(v.to_f64());
        let y = if v < lo { lo } else { v };
        O::from_f64(if y > hi { hi } else { y })
    }))
}
