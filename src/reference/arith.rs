//! The references of `aclnnAdd` (`self + alpha·other`) and `aclnnMul` (`self·other`) on
//! two broadcastable views.

use super::exact::{broadcast_to, zip2};
use super::mish_backward::Broadcast;
use crate::element::{Element, Promote};
use crate::error::Result;
use crate::protocol::Scalar;
use crate::shape::check_broadcast;
use ndarray::{Array, ArrayView, DimMax, Dimension};

/// `self + alpha·other` of two broadcastable views, as a new array of the broadcast shape
/// in their compute type `promote(A, B)` ([`Promote`]). For another output type,
/// [`cast`](super::cast) it, as the device's final cast does.
///
/// `alpha` is a plain number, as the operator's [`Scalar`] takes (`f64`, `f32`, `i64`,
/// `i32`, `bool`). As the device's (non-950) code does, an alpha that is neither `> 1`
/// nor `< 1` counts as 1, so a NaN alpha adds `other` unscaled.
///
/// # Accuracy
/// `self + alpha·other` is evaluated in f64 (two roundings, each relative 2⁻⁵³) and
/// rounded **once** to the compute type: the correctly rounded result unless the exact
/// value lies within `2⁻⁵²·(|self| + |alpha·other|)` of a rounding boundary (then 1 ulp
/// off). With `alpha = 1` the f64 sum of two f32 values is exact or below half an f32
/// ulp of the larger, so the result is always correctly rounded. The device rounds alpha
/// to f32 (and, for bf16, the product to bf16) first; the reference does not.
///
/// # Errors
/// [`crate::Error::TooManyDims`] when an input has more than 8 dims,
/// [`crate::Error::NotBroadcastable`] when the shapes do not broadcast,
/// [`crate::Error::InvalidArgument`] when the output would not fit in memory.
///
/// # Examples
/// ```
/// use ascendcl::reference::add;
/// use half::f16;
/// use ndarray::{arr0, array};
///
/// let w = array![[1.0f32, 2.0], [3.0, 4.0]];
/// let grad = array![0.5f32, -0.5]; // broadcast along the rows
/// let updated = add(w.view(), grad.view(), -0.1)?; // an SGD step
/// assert_eq!(updated, array![[0.95, 2.05], [2.95, 4.05]]);
///
/// // a 0-D operand, in f16
/// let h = add(arr0(f16::from_f32(1.0)).view(), arr0(f16::from_f32(2.0)).view(), 3)?;
/// assert_eq!(h[()], f16::from_f32(7.0));
/// # Ok::<(), ascendcl::Error>(())
/// ```
pub fn add<A, B, DA, DB>(
    a: ArrayView<'_, A, DA>,
    b: ArrayView<'_, B, DB>,
    alpha: impl Into<Scalar>,
) -> Result<Array<A::Output, Broadcast<DA, DB>>>
where
    A: Promote<B>,
    B: Element,
    DA: Dimension + DimMax<DB>,
    DB: Dimension,
{
    let alpha = alpha.into().to_f64();
    // Non-950 code takes alpha as 1 unless it is > 1 or < 1: only NaN changes.
    let alpha = if alpha.is_nan() { 1.0 } else { alpha };
    binary(a, b, |x, y| x + alpha * y)
}

/// `self · other` of two broadcastable views, as a new array of the broadcast shape in
/// their compute type `promote(A, B)`. For another output type, [`cast`](super::cast) it.
///
/// # Accuracy
/// The product of two values of these types is exact in f64, so the result is always
/// the correctly rounded product.
///
/// # Errors
/// As [`add`].
///
/// # Examples
/// ```
/// use ascendcl::reference::mul;
/// use half::bf16;
/// use ndarray::array;
///
/// let a = array![[1.0f32], [2.0]]; // (2, 1)
/// let b = array![3.0f32, 4.0, 5.0]; // (3)
/// assert_eq!(mul(a.view(), b.view())?, array![[3.0, 4.0, 5.0], [6.0, 8.0, 10.0]]);
///
/// // bf16 with f32 computes in f32
/// let m = mul(array![bf16::from_f32(1.5)].view(), array![1.0f32 / 3.0].view())?;
/// assert_eq!(m[0], 0.5);
/// # Ok::<(), ascendcl::Error>(())
/// ```
pub fn mul<A, B, DA, DB>(
    a: ArrayView<'_, A, DA>,
    b: ArrayView<'_, B, DB>,
) -> Result<Array<A::Output, Broadcast<DA, DB>>>
where
    A: Promote<B>,
    B: Element,
    DA: Dimension + DimMax<DB>,
    DB: Dimension,
{
    binary(a, b, |x, y| x * y)
}

/// `f(self, other)` over the broadcast shape, rounded once to `promote(A, B)`.
fn binary<A, B, DA, DB>(
    a: ArrayView<'_, A, DA>,
    b: ArrayView<'_, B, DB>,
    f: impl Fn(f64, f64) -> f64,
) -> Result<Array<A::Output, Broadcast<DA, DB>>>
where
    A: Promote<B>,
    B: Element,
    DA: Dimension + DimMax<DB>,
    DB: Dimension,
{
    let shape = check_broadcast(&[("self", a.shape()), ("other", b.shape())], &[])?;
    let mut out = super::zeros::<A::Output, Broadcast<DA, DB>>(&shape)?;
    let a = broadcast_to("self", &a, &shape)?;
    let b = broadcast_to("other", &b, &shape)?;
    zip2(a, b, out.view_mut().into_dyn(), f);
    Ok(out)
}
