//! The references of `aclnnMseLoss` (`(self − target)²`, reduced) and
//! `aclnnMseLossBackward` (its gradient with respect to `self`).

use super::exact::{Sum, broadcast_to, zip2, zip3};
use crate::attrs::Reduction;
use crate::element::{Element, Promote};
use crate::error::Result;
use crate::shape::check_broadcast;
use ndarray::{ArrayD, ArrayView, Dimension, IxDyn, arr0};

/// The mean squared error of two broadcastable views under `reduction`, as a new array in
/// their compute type `promote(X, T)` ([`Promote`]): for [`Reduction::None`] the
/// elementwise `(self − target)²` of the broadcast shape, for [`Reduction::Mean`] and
/// [`Reduction::Sum`] a 0-D array with their mean (over the broadcast shape's element
/// count) or sum. Empty inputs give an empty array, a NaN mean (as the device fills) or
/// a zero sum. For another output type, [`cast`](super::cast) it, as the device's final
/// cast does.
///
/// # Accuracy
/// Each `(self − target)²` is evaluated in f64 (relative error at most 3·2⁻⁵³) and the
/// sum is compensated (all terms are non-negative, so the sum's relative error is at
/// most about 2⁻⁵¹); the value is rounded **once** to the compute type: correctly
/// rounded except within that relative distance of a rounding boundary. The device sums
/// per tile in f32 and scales each tile by `1/N` rounded to f32 before accumulating.
///
/// # Errors
/// [`crate::Error::TooManyDims`] when an input has more than 8 dims,
/// [`crate::Error::NotBroadcastable`] when the shapes do not broadcast.
///
/// # Examples
/// ```
/// use ascendcl::{Reduction, reference::mse_loss};
/// use ndarray::{arr0, array};
///
/// let pred = array![[1.0f32], [2.0], [4.0]];
/// let target = array![[1.0f32], [1.0], [1.0]];
/// assert_eq!(mse_loss(pred.view(), target.view(), Reduction::Mean)?, arr0(10.0f32 / 3.0).into_dyn());
/// assert_eq!(mse_loss(pred.view(), target.view(), Reduction::Sum)?, arr0(10.0).into_dyn());
/// let each = mse_loss(pred.view(), array![0.0f32].view(), Reduction::None)?; // broadcast
/// assert_eq!(each, array![[1.0], [4.0], [16.0]].into_dyn());
/// # Ok::<(), ascendcl::Error>(())
/// ```
pub fn mse_loss<X, T, DX, DT>(
    x: ArrayView<'_, X, DX>,
    target: ArrayView<'_, T, DT>,
    reduction: Reduction,
) -> Result<ArrayD<X::Output>>
where
    X: Promote<T>,
    T: Element,
    DX: Dimension,
    DT: Dimension,
{
    let shape = check_broadcast(&[("self", x.shape()), ("target", target.shape())], &[])?;
    let x = broadcast_to("self", &x, &shape)?;
    let y = broadcast_to("target", &target, &shape)?;
    let sq = |a: f64, b: f64| (a - b) * (a - b);
    if reduction == Reduction::None {
        let mut out = super::zeros::<X::Output, IxDyn>(&shape)?;
        zip2(x, y, out.view_mut(), sq);
        return Ok(out);
    }
    let mut sum = Sum::default();
    ndarray::Zip::from(&x)
        .and(&y)
        .for_each(|a, b| sum.add(sq(a.to_f64(), b.to_f64())));
    let n = shape.numel();
    let value = match reduction {
        Reduction::Mean if n == 0 => f64::NAN,
        Reduction::Mean => sum.value() / n as f64,
        _ => sum.value(),
    };
    Ok(arr0(X::Output::from_f64(value)).into_dyn())
}

/// The gradient of [`mse_loss`] with respect to `self`: `2·grad·(self − target)`, divided
/// by `self`'s element count for [`Reduction::Mean`], over the broadcast shape of all
/// three, as a new array in their element type (the device requires `grad_output` and
/// `target` to have `self`'s dtype). `grad` is usually the 0-D gradient of a reduced
/// loss. For another output type, [`cast`](super::cast) it, as the device's final cast
/// does.
///
/// # Accuracy
/// Evaluated in f64 (relative error at most 4·2⁻⁵³) and rounded **once**: correctly
/// rounded except within that relative distance of a rounding boundary. The device
/// computes `((self − target)·c)·grad` in f32 with `c = 2·(1/N rounded to f32)` for a
/// mean.
///
/// # Errors
/// [`crate::Error::TooManyDims`] when an input has more than 8 dims,
/// [`crate::Error::NotBroadcastable`] when the shapes do not broadcast.
///
/// # Examples
/// ```
/// use ascendcl::{Reduction, reference::mse_loss_backward};
/// use ndarray::{arr0, array};
///
/// let pred = array![[1.0f32], [2.0], [4.0], [1.5]];
/// let target = array![[1.0f32], [1.0], [1.0], [1.0]];
/// let one = arr0(1.0f32);
/// let d = mse_loss_backward(one.view(), pred.view(), target.view(), Reduction::Mean)?;
/// assert_eq!(d, array![[0.0], [0.5], [1.5], [0.25]].into_dyn()); // 2·(x − y)/4
/// let d = mse_loss_backward(one.view(), pred.view(), target.view(), Reduction::Sum)?;
/// assert_eq!(d[[2, 0]], 6.0);
/// # Ok::<(), ascendcl::Error>(())
/// ```
pub fn mse_loss_backward<T, DG, DX, DT>(
    grad: ArrayView<'_, T, DG>,
    x: ArrayView<'_, T, DX>,
    target: ArrayView<'_, T, DT>,
    reduction: Reduction,
) -> Result<ArrayD<T>>
where
    T: Element,
    DG: Dimension,
    DX: Dimension,
    DT: Dimension,
{
    let shape = check_broadcast(
        &[
            ("grad_output", grad.shape()),
            ("self", x.shape()),
            ("target", target.shape()),
        ],
        &[],
    )?;
    let scale = match reduction {
        // An empty self leaves nothing to compute: the scale is never used then.
        Reduction::Mean => 2.0 / x.len().max(1) as f64,
        Reduction::None | Reduction::Sum => 2.0,
    };
    let mut out = super::zeros::<T, IxDyn>(&shape)?;
    let g = broadcast_to("grad_output", &grad, &shape)?;
    let xb = broadcast_to("self", &x, &shape)?;
    let y = broadcast_to("target", &target, &shape)?;
    zip3(g, xb, y, out.view_mut(), |g, x, y| scale * g * (x - y));
    Ok(out)
}
