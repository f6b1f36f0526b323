//! The reference of `aclnnMish`: `mish(x) = x·tanh(softplus(x))`, elementwise.

use super::engine;
use super::math::Mish;
use crate::element::FloatElement;
use crate::error::{Error, Result};
use crate::shape::Dims;
use ndarray::{Array, ArrayView, ArrayViewMut, Dimension};

/// `mish(x) = x·tanh(softplus(x))` of every element of `x`, as a new array of its shape,
/// dimension type and element type (standard layout).
///
/// The value is the exact real `mish(x)` rounded once to `T` (round to nearest, ties to
/// even): always for f16 and bf16, for f32 except when it lies within about 1e−15
/// (relative) of a rounding boundary, then 1 ulp off. `mish(+∞) = +∞`, `mish(−∞) = −0`,
/// NaN propagates, `mish(−0) = −0`.
///
/// # Errors
/// [`Error::TooManyDims`] when `x` has more than 8 dims, [`Error::InvalidArgument`] when
/// the output would not fit in memory.
///
/// # Examples
/// ```
/// use ascendcl::reference::mish;
/// use ndarray::array;
///
/// let x = array![[0.0f32, 1.0], [-1.0, f32::INFINITY]];
/// let y = mish(x.view())?;
/// assert_eq!(y.dim(), (2, 2)); // the input's dimension type
/// assert_eq!(y[[0, 0]], 0.0);
/// assert_eq!(y[[0, 1]], 0.865_098_4); // tanh(ln(1 + e)), correctly rounded
/// assert_eq!(y[[1, 1]], f32::INFINITY);
/// # Ok::<(), ascendcl::Error>(())
/// ```
pub fn mish<T: FloatElement, D: Dimension>(x: ArrayView<'_, T, D>) -> Result<Array<T, D>> {
    Dims::new("self", x.shape())?;
    let mut out = super::zeros::<T, D>(x.shape())?;
    mish_into(x, out.view_mut())?;
    Ok(out)
}

/// `mish(x)` written into `out`, which must have the shape of `x`. Both views may have
/// any strides (non-contiguous, negative, zero for a broadcast input); the dimension
/// types may differ.
///
/// # Errors
/// [`Error::TooManyDims`] when an argument has more than 8 dims, [`Error::ShapeMismatch`]
/// when `out`'s shape is not `x`'s (there is no broadcasting, as in `aclnnMish`). On error
/// `out` is untouched.
///
/// # Examples
/// ```
/// use ascendcl::reference::mish_into;
/// use ndarray::{Array2, array};
///
/// let x = array![[0.0f32, 1.0], [2.0, 3.0]];
/// let mut out = Array2::<f32>::zeros((2, 2));
/// mish_into(x.view(), out.view_mut().reversed_axes())?; // a transposed output
/// assert_eq!(out[[1, 0]], ascendcl::reference::mish(ndarray::arr0(1.0f32).view())?[()]);
///
/// let mut bad = Array2::<f32>::zeros((1, 4));
/// let err = mish_into(x.view(), bad.view_mut());
/// assert!(matches!(err, Err(ascendcl::Error::ShapeMismatch { .. })));
/// # Ok::<(), ascendcl::Error>(())
/// ```
pub fn mish_into<T: FloatElement, D: Dimension, E: Dimension>(
    x: ArrayView<'_, T, D>,
    out: ArrayViewMut<'_, T, E>,
) -> Result<()> {
    Dims::new("self", x.shape())?;
    Dims::new("out", out.shape())?;
    if out.shape() != x.shape() {
        return Err(Error::ShapeMismatch {
            argument: "out",
            expected: x.shape().to_vec(),
            actual: out.shape().to_vec(),
        });
    }
    if x.is_empty() {
        return Ok(());
    }
    let x = x.into_dyn();
    let mut out = out.into_dyn();
    engine::run::<Mish, 1>(T::DTYPE, [T::typed(x.view())], T::typed_mut(out.view_mut()));
    Ok(())
}
