//! The reference of `aclnnMishBackward`: `grad · mish'(x)` of two broadcastable views.

use super::engine;
use super::math::MishGrad;
use crate::element::{DType, FloatElement, Promote};
use crate::error::{Error, Result};
use crate::shape::check_broadcast;
use ndarray::{Array, ArrayView, ArrayViewMut, DimMax, Dimension, IxDyn};

/// The broadcast dimension type of two inputs (ndarray's [`DimMax`]: the larger of two
/// fixed dimensionalities, [`IxDyn`](type@IxDyn) with any dynamic one).
pub type Broadcast<DG, DX> = <DG as DimMax<DX>>::Output;

/// `grad · mish'(x)` of two broadcastable views, as a new array of the broadcast shape
/// (standard layout) in their compute type `promote(G, X)` ([`Promote`]).
///
/// The value is the exact real `grad·mish'(x)` rounded once to the compute type (see the
/// [module docs](super)). For another output type, [`mish_backward_into`] writes into an
/// output view of any element type, as [`cast`](super::cast) of this result would.
///
/// # Errors
/// [`Error::TooManyDims`] when an input has more than 8 dims, [`Error::NotBroadcastable`]
/// when the shapes do not broadcast, [`Error::InvalidArgument`] when the output would not
/// fit in memory.
///
/// # Examples
/// ```
/// use ascendcl::reference::mish_backward;
/// use half::f16;
/// use ndarray::{arr0, array};
///
/// let grad = array![1.0f32, 2.0, -1.0];
/// let x = array![[0.0f32], [f32::INFINITY]]; // broadcasts to [2, 3]
/// let out = mish_backward(grad.view(), x.view())?; // an Array2<f32>
/// assert_eq!(out.dim(), (2, 3));
/// assert_eq!(out[[0, 0]], 0.6); // mish'(0) = 3/5
/// assert_eq!(out[[1, 1]], 2.0); // mish'(+inf) = 1
///
/// // f16 inputs compute in f16
/// let tiny = mish_backward(arr0(f16::ONE).view(), arr0(f16::from_f32(-100.0)).view())?;
/// assert_eq!(tiny[()], f16::NEG_ZERO); // -3.7e-42 rounds to -0 in f16
/// # Ok::<(), ascendcl::Error>(())
/// ```
pub fn mish_backward<G, X, DG, DX>(
    grad: ArrayView<'_, G, DG>,
    x: ArrayView<'_, X, DX>,
) -> Result<Array<G::Output, Broadcast<DG, DX>>>
where
    G: Promote<X>,
    X: FloatElement,
    DG: Dimension + DimMax<DX>,
    DX: Dimension,
{
    let shape = check_broadcast(&[("grad_output", grad.shape()), ("self", x.shape())], &[])?;
    let mut out = super::zeros::<G::Output, Broadcast<DG, DX>>(&shape)?;
    mish_backward_into(grad, x, out.view_mut())?;
    Ok(out)
}

/// `grad · mish'(x)` written into `out`, whose shape must be the broadcast shape of `grad`
/// and `x`. All three views may have any strides (non-contiguous, negative, zero for
/// broadcast inputs) and any dimension types.
///
/// # Errors
/// [`Error::TooManyDims`] when an argument has more than 8 dims,
/// [`Error::NotBroadcastable`] when `grad` and `x` do not broadcast,
/// [`Error::ShapeMismatch`] when `out` does not have the broadcast shape. On error `out`
/// is untouched.
///
/// # Examples
/// ```
/// use ascendcl::reference::mish_backward_into;
/// use ndarray::{Array2, array};
///
/// let grad = array![[1.0f32, 2.0], [3.0, 4.0]];
/// let x = array![0.0f32, 1.0];
/// let mut out = Array2::<f32>::zeros((2, 2));
/// mish_backward_into(grad.view(), x.view(), out.view_mut().reversed_axes())?; // transposed
/// assert_eq!(out[[0, 0]], 0.6);
/// assert_eq!(out[[0, 1]], 1.8); // grad[1][0] · mish'(x[0]), rounded once
///
/// // a wrong output shape is a typed error
/// let mut bad = Array2::<f32>::zeros((3, 2));
/// let err = mish_backward_into(grad.view(), x.view(), bad.view_mut());
/// assert!(matches!(err, Err(ascendcl::Error::ShapeMismatch { .. })));
/// # Ok::<(), ascendcl::Error>(())
/// ```
pub fn mish_backward_into<G, X, O, DG, DX, DO>(
    grad: ArrayView<'_, G, DG>,
    x: ArrayView<'_, X, DX>,
    out: ArrayViewMut<'_, O, DO>,
) -> Result<()>
where
    G: FloatElement,
    X: FloatElement,
    O: FloatElement,
    DG: Dimension,
    DX: Dimension,
    DO: Dimension,
{
    let shape = check_broadcast(
        &[("grad_output", grad.shape()), ("self", x.shape())],
        &[("grad_input", out.shape())],
    )?;
    if shape.numel() == 0 {
        return Ok(());
    }
    let not_broadcastable = || Error::NotBroadcastable {
        argument: "grad_output",
        shape: grad.shape().to_vec(),
        other: "self",
        other_shape: x.shape().to_vec(),
    };
    let dim = IxDyn(&shape);
    let g = grad.broadcast(dim.clone()).ok_or_else(not_broadcastable)?;
    let xb = x.broadcast(dim).ok_or_else(not_broadcastable)?;
    let mut out = out.into_dyn();
    engine::run::<MishGrad, 2>(
        G::DTYPE.promote(X::DTYPE).unwrap_or(DType::F32),
        [G::typed(g.view()), X::typed(xb.view())],
        O::typed_mut(out.view_mut()),
    );
    Ok(())
}
