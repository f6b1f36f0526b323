//! The references of `aclnnGeluBackward` and `aclnnThresholdBackward`: elementwise
//! gradients of two broadcastable views.

use crate::element::{Element, FloatElement};
use crate::error::Result;
use crate::shape::check_broadcast;
use ndarray::{ArrayD, ArrayView, Dimension, IxDyn, Zip};

/// `grad · gelu'(x)` for the tanh approximation `aclnnGelu` computes,
/// `gelu(x) = x / (1 + e^(−1.5957691·(x + 0.044715·x³)))`: evaluated in f64 and rounded
/// once to `T`, as a new array of the broadcast shape. At ±∞ the derivative is its limit
/// (1 at +∞, 0 at −∞).
///
/// # Errors
/// [`Error::TooManyDims`](crate::Error::TooManyDims) above 8 dims,
/// [`Error::NotBroadcastable`](crate::Error::NotBroadcastable).
///
/// # Examples
/// ```
/// use ascendcl::reference::gelu_backward;
/// use ndarray::array;
/// let g = gelu_backward(array![1.0f32, 2.0].view(), array![0.0f32].view())?;
/// assert_eq!(g, array![0.5f32, 1.0].into_dyn()); // gelu'(0) = 1/2
/// # Ok::<(), ascendcl::Error>(())
/// ```
pub fn gelu_backward<T: FloatElement, DG: Dimension, DX: Dimension>(
    grad: ArrayView<'_, T, DG>,
    x: ArrayView<'_, T, DX>,
) -> Result<ArrayD<T>> {
    binary(grad, x, |g, x| {
        T::from_f64(g.to_f64() * gelu_grad(x.to_f64()))
    })
}

/// gelu'(x) of the tanh approximation, in f64.
fn gelu_grad(x: f64) -> f64 {
    const BETA: f64 = 1.5957691;
    const C: f64 = 0.044715;
    if x.is_nan() {
        return f64::NAN;
    }
    let s = 1.0 / (1.0 + (-BETA * (x + C * x * x * x)).exp());
    let t = s * (1.0 - s);
    if t == 0.0 {
        s
    } else {
        s + x * t * BETA * (1.0 + 3.0 * C * x * x)
    }
}

/// ReLU's gradient generalised to a threshold, as `aclnnThresholdBackward` gives it:
/// `0` where `x <= threshold`, else `grad`, over the broadcast shape. The threshold is
/// read as an f32 (`ToFloat`), and one within `f32::EPSILON` of 0 is 0 (the vendor then
/// runs ReluGrad). Exact; a NaN `x` passes its gradient.
///
/// # Errors
/// [`Error::TooManyDims`](crate::Error::TooManyDims) above 8 dims,
/// [`Error::NotBroadcastable`](crate::Error::NotBroadcastable).
///
/// # Examples
/// ```
/// use ascendcl::reference::threshold_backward;
/// use ndarray::array;
/// let g = threshold_backward(array![5i32, 6, 7].view(), array![-1i32, 0, 1].view(), 0.0)?;
/// assert_eq!(g, array![0i32, 0, 7].into_dyn());
/// # Ok::<(), ascendcl::Error>(())
/// ```
pub fn threshold_backward<T: Element, DG: Dimension, DX: Dimension>(
    grad: ArrayView<'_, T, DG>,
    x: ArrayView<'_, T, DX>,
    threshold: f64,
) -> Result<ArrayD<T>> {
    let t = threshold as f32;
    let t = if t.abs() <= f32::EPSILON {
        0.0
    } else {
        f64::from(t)
    };
    binary(
        grad,
        x,
        |g, x| {
            if x.to_f64() <= t { T::from_f64(0.0) } else { g }
        },
    )
}

/// `f(grad, x)` over the broadcast shape of the two views.
fn binary<T: Element, DG: Dimension, DX: Dimension>(
    grad: ArrayView<'_, T, DG>,
    x: ArrayView<'_, T, DX>,
    f: impl Fn(T, T) -> T,
) -> Result<ArrayD<T>> {
    let shape = check_broadcast(&[("grad_output", grad.shape()), ("self", x.shape())], &[])?;
    let shape: Vec<usize> = shape.iter().copied().collect();
    let mut out = super::zeros::<T, IxDyn>(&shape)?;
    let dim = IxDyn(&shape);
    let not_broadcastable = || crate::Error::NotBroadcastable {
        argument: "grad_output",
        shape: grad.shape().to_vec(),
        other: "self",
        other_shape: x.shape().to_vec(),
    };
    let g = grad.broadcast(dim.clone()).ok_or_else(not_broadcastable)?;
    let xb = x.broadcast(dim).ok_or_else(not_broadcastable)?;
    Zip::from(&mut out)
        .and(&g)
        .and(&xb)
        .for_each(|o, &g, &x| *o = f(g, x));
    Ok(out)
}
