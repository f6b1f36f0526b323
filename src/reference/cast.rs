//! The reference of the device's final cast: a result computed in its compute type,
//! converted to the output tensor's element type.

use crate::element::{Element, FloatElement};
use ndarray::{Array, ArrayBase, Data, Dimension};

/// `x` converted element by element to `O`, as the cast that ends an operator's compute
/// chain converts the compute type to the output's dtype: exact when `O` holds every
/// value of `T`, else rounded once (to nearest, ties to even; to an integer type truncated
/// toward zero and saturated).
///
/// A reference whose operator's kernel writes the compute type returns that type; `cast`
/// of its result is what the device gives for another output dtype. Where the output's
/// type changes what the kernel computes, the reference's `_as` form takes it instead
/// (see the [module docs](super)).
///
/// # Examples
/// ```
/// use ascendcl::reference::{add, cast};
/// use half::{bf16, f16};
/// use ndarray::{Array1, array};
///
/// // computed in f32 (1 + 2⁻¹¹ + 2⁻²³ exactly), then one rounding to f16: up, not a tie
/// let p = |e: i32| 2f32.powi(e);
/// let sum = add(array![1.0f32].view(), array![p(-11) + p(-23)].view(), 1)?;
/// let out: Array1<f16> = cast(&sum);
/// assert_eq!(out[0], f16::from_f32(1.0 + p(-10)));
///
/// let wide: Array1<f32> = cast(&array![bf16::from_f32(0.1)]); // exact
/// assert_eq!(wide[0], bf16::from_f32(0.1).to_f32());
/// # Ok::<(), ascendcl::Error>(())
/// ```
pub fn cast<O, T, S, D>(x: &ArrayBase<S, D>) -> Array<O, D>
where
    O: Element,
    T: FloatElement,
    S: Data<Elem = T>,
    D: Dimension,
{
    // Every floating value widens exactly to f64, so `from_f64` rounds only once.
    x.mapv(|v| O::from_f64(v.to_f64()))
}
