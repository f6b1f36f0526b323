//! The reference of `aclnnApplyAdamWV2`: one AdamW step in place, by the vendor's formula.

use crate::element::Element;
use crate::error::{Error, Result};
use ndarray::{ArrayView, ArrayViewMut, Dimension, Zip};

/// The hyper-parameters of an AdamW step (`aclnnApplyAdamWV2`'s attributes).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AdamW {
    /// The learning rate η.
    pub lr: f32,
    /// β₁, the first moment's decay.
    pub beta1: f32,
    /// β₂, the second moment's decay.
    pub beta2: f32,
    /// λ, the decoupled weight decay.
    pub weight_decay: f32,
    /// ε, added to the denominator.
    pub eps: f32,
    /// Keep the running maximum of the second moment (`maxGradNorm`) and divide by it.
    pub amsgrad: bool,
    /// Ascend the gradient instead.
    pub maximize: bool,
}

/// One AdamW step of the parameters `var` with moments `m`, `v` (and the running maximum
/// `max_v` when `amsgrad`), gradient `grad`, after `step` steps already taken, in place,
/// as the vendor's kernel defines it (`t = step + 1`):
///
/// ```text
/// g = maximize ? −grad : grad
/// var ← var·(1 − η·λ)
/// m ← m + (g − m)·(1 − β₁)            v ← β₂·v + (1 − β₂)·g²
/// v̂ = amsgrad ? (max_v ← max(max_v, v)) : v
/// var ← var − η/(1 − β₁ᵗ) · m / (√v̂ / √(1 − β₂ᵗ) + ε)
/// ```
///
/// Evaluated in f64 and rounded once to `T` per stored value (`f32`, `f16`, `bf16` as the
/// device stores them; `f64` exactly).
///
/// # Errors
/// [`Error::ShapeMismatch`] when `m`, `v`, `max_v` or `grad` do not have `var`'s shape;
/// [`Error::InvalidArgument`] when `amsgrad` is set without `max_v`.
///
/// # Examples
/// ```
/// use ascendcl::reference::{AdamW, apply_adam_w_v2};
/// use ndarray::array;
/// let h = AdamW { lr: 0.1, beta1: 0.9, beta2: 0.999, weight_decay: 0.0, eps: 1e-8, amsgrad: false, maximize: false };
/// let (mut w, mut m, mut v) = (array![1.0f32], array![0.0f32], array![0.0f32]);
/// apply_adam_w_v2(w.view_mut(), m.view_mut(), v.view_mut(), None, array![0.5f32].view(), 0.0, &h)?;
/// assert!((w[0] - 0.9).abs() < 1e-6); // the first step moves by lr·sign(grad)
/// # Ok::<(), ascendcl::Error>(())
/// ```
pub fn apply_adam_w_v2<T: Element, D: Dimension>(
    var: ArrayViewMut<'_, T, D>,
    m: ArrayViewMut<'_, T, D>,
    v: ArrayViewMut<'_, T, D>,
    max_v: Option<ArrayViewMut<'_, T, D>>,
    grad: ArrayView<'_, T, D>,
    step: f64,
    h: &AdamW,
) -> Result<()> {
    let shape = var.shape().to_vec();
    let named: [(&'static str, &[usize]); 3] =
        [("m", m.shape()), ("v", v.shape()), ("grad", grad.shape())];
    for (name, s) in named
        .into_iter()
        .chain(max_v.as_ref().map(|x| ("max_grad_norm", x.shape())))
    {
        if s != shape.as_slice() {
            return Err(Error::ShapeMismatch {
                argument: name,
                expected: shape.clone(),
                actual: s.to_vec(),
            });
        }
    }
    if h.amsgrad && max_v.is_none() {
        return Err(Error::InvalidArgument(
            "amsgrad needs max_grad_norm".to_string(),
        ));
    }
    let (lr, b1, b2) = (f64::from(h.lr), f64::from(h.beta1), f64::from(h.beta2));
    let (wd, eps) = (f64::from(h.weight_decay), f64::from(h.eps));
    let t = step + 1.0;
    let (bc1, bc2) = (1.0 - b1.powf(t), 1.0 - b2.powf(t));
    let step_size = lr / bc1;
    let inv_bc2_sqrt = 1.0 / bc2.sqrt();
    let update = |w: &mut T, mt: &mut T, vt: &mut T, mx: Option<&mut T>, g: T| {
        let g = if h.maximize { -g.to_f64() } else { g.to_f64() };
        let decayed = w.to_f64() * (1.0 - lr * wd);
        let m1 = mt.to_f64() + (g - mt.to_f64()) * (1.0 - b1);
        let v1 = b2 * vt.to_f64() + (1.0 - b2) * g * g;
        let vhat = match mx {
            Some(mx) => {
                let top = mx.to_f64().max(v1);
                *mx = T::from_f64(top);
                top
            }
            None => v1,
        };
        let denom = vhat.sqrt() * inv_bc2_sqrt + eps;
        *w = T::from_f64(decayed - m1 / denom * step_size);
        *mt = T::from_f64(m1);
        *vt = T::from_f64(v1);
    };
    match max_v {
        Some(mut mx) if h.amsgrad => Zip::from(var)
            .and(m)
            .and(v)
            .and(&mut mx)
            .and(&grad)
            .for_each(|w, mt, vt, x, &g| update(w, mt, vt, Some(x), g)),
        _ => Zip::from(var)
            .and(m)
            .and(v)
            .and(&grad)
            .for_each(|w, mt, vt, &g| update(w, mt, vt, None, g)),
    }
    Ok(())
}
