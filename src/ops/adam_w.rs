//! `aclnnApplyAdamWV2`: one AdamW step in place, one launch per parameter tensor.

use crate::device::SocFamily;
use crate::element::DType;
use crate::error::{Error, Result};
use crate::protocol::{Arg, Call};

/// var, m, v, maxGradNorm and grad: FLOAT, FLOAT16, BF16; step: FLOAT or INT64. Only
/// Atlas A2 / A3 have the operator, so the 16-bit lists need no product test.
fn arg_dtypes(_soc: SocFamily, arg: &Arg, dtype: DType) -> bool {
    match arg.name {
        "step" => matches!(dtype, DType::F32 | DType::I64),
        _ => matches!(dtype, DType::F32 | DType::F16 | DType::BF16),
    }
}

/// m, v, maxGradNorm (when given) and grad of var's shape; step of one element.
fn rule(c: &Call<'_>) -> Result<()> {
    const VAR: usize = 0;
    const STEP: usize = 5;
    let var = c.dims(VAR);
    for i in 1..STEP {
        if c.is_absent(i) {
            continue;
        }
        if c.dims(i) != var {
            return Err(Error::ShapeMismatch {
                argument: c.label(i),
                expected: var.to_vec(),
                actual: c.dims(i).to_vec(),
            });
        }
    }
    let n: usize = c.dims(STEP).iter().product();
    if n != 1 {
        return Err(Error::InvalidArgument(format!(
            "{} must hold one element (the steps taken), got shape {:?}",
            c.label(STEP),
            c.dims(STEP)
        )));
    }
    Ok(())
}

crate::operator! {
    @verified
    /// `aclnnApplyAdamWV2`: one AdamW step of a parameter tensor and its moments, in
    /// place. Atlas A2 / A3 only (the vendor lists no other product).
    pub struct ApplyAdamWV2: aclnnApplyAdamWV2, aclnnApplyAdamWV2GetWorkspaceSize;
    products: |soc: SocFamily| soc.has_bf16();
    arg_dtypes: arg_dtypes;
    rule: rule;

    /// One AdamW step of `var` with moments `m`, `v`, queued on `stream`
    /// (`aclnnApplyAdamWV2`), as [`reference::apply_adam_w_v2`](crate::reference::apply_adam_w_v2)
    /// computes it:
    ///
    /// ```text
    /// t = step + 1;  g = maximize ? −grad : grad
    /// var ← var·(1 − lr·weight_decay)
    /// m ← m + (g − m)·(1 − β₁)            v ← β₂·v + (1 − β₂)·g²
    /// v̂ = amsgrad ? (max_grad_norm ← max(max_grad_norm, v)) : v
    /// var ← var − lr/(1 − β₁ᵗ) · m / (√v̂ / √(1 − β₂ᵗ) + eps)
    /// ```
    ///
    /// * `var` (varRef), `m` (mRef), `v` (vRef): written in place, `f32`, `f16` or `bf16`,
    ///   all of one shape, in any layout;
    /// * `max_grad_norm` (maxGradNormOptionalRef): the running maximum of `v`, required
    ///   (`Some`) when `amsgrad`, left as it is otherwise; `None` for NULL;
    /// * `grad`: of var's shape; of var's dtype, or `f16` / `bf16` with `f32` moments;
    /// * `step`: a one-element `f32` or `i64` tensor on the device holding the number of
    ///   steps already taken (0 before the first): a plan's launches read its current
    ///   value, so a training loop advances it on the device (`adds_inplace`) with no new
    ///   plan;
    /// * `lr`, `beta1`, `beta2`, `weight_decay`, `eps`: C `float`s; `amsgrad`,
    ///   `maximize`: C `bool`s.
    ///
    /// The device computes in f32 (16-bit tensors widened, each result rounded once to
    /// its tensor's dtype). An empty `var` computes nothing.
    ///
    /// # Errors
    /// [`Error::UnsupportedOperator`] off Atlas A2 / A3,
    /// [`Error::DeviceMismatch`],
    /// [`Error::UnsupportedDtype`],
    /// [`Error::ShapeMismatch`] (a tensor not of var's shape),
    /// [`Error::InvalidArgument`] (`step` not of one
    /// element); [`Error::Aclnn`] from the library (161001 when
    /// `amsgrad` without `max_grad_norm`).
    pub fn apply_adam_w_v2<T, G, S>(
        var: inplace<T> = "varRef",
        m: inplace<T> = "mRef",
        v: inplace<T> = "vRef",
        max_grad_norm: opt_inplace<T> = "maxGradNormOptionalRef",
        grad: input<G> = "grad",
        step: input<S> = "step",
        lr: attr<f32> = "lr",
        beta1: attr<f32> = "beta1",
        beta2: attr<f32> = "beta2",
        weight_decay: attr<f32> = "weightDecay",
        eps: attr<f32> = "eps",
        amsgrad: attr<bool> = "amsgrad",
        maximize: attr<bool> = "maximize",
    );

    /// A planned [`apply_adam_w_v2`]: phase 1 once for the tensors' layouts, then one
    /// launch per step (the `step` tensor's device value read at each launch); the
    /// learning rate changes with `set_attr("lr", Attr::F32(lr))`, which runs phase 1
    /// again at the next launch.
    pub type ApplyAdamWV2Plan;
}
