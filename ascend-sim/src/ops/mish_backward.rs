//! `aclnnMishBackward`: `gradInput = gradOutput * mish'(self)`, with broadcasting and
//! dtype promotion. Phase-1 checks in the vendor's order, and the vendor's f32 kernel.
//!
//! Phase 1 applies the vendor's checks in the vendor's order: null
//! tensors or out-pointers (161001), stale tensor handles (161002), no initialized runtime
//! or no current context (361001), a `Ascend310B*` SoC (561003, operator not available),
//! self not castable to gradInput (161002), a dtype outside the SoC's list (161002: FLOAT,
//! FLOAT16 everywhere, plus BF16 on `Ascend910B*`/`Ascend910_93*`), more than 8 dims,
//! non-broadcastable inputs, wrong output shape (161002), and empty tensors (success,
//! workspace 0, nothing computed). It asks for a workspace region of the compute dtype for
//! every temporary the real operator needs: gradOutput or self when cast, broadcast or
//! non-contiguous, and the result when it must be cast or written to a non-contiguous
//! gradInput. The kernel really stores those temporaries in the workspace and reads them
//! back from there.
//!
//! The compute:
//!
//! promote(self, gradOutput) (same -> same, anything with f32 -> f32, f16 + bf16 -> f32);
//! read through strides and offset (bounds-checked against the owning live allocation),
//! widen to f32, broadcast, apply [`mish_grad_f32`], round to the compute dtype
//! (round to nearest even), cast to gradInput's dtype (round to nearest even), write through
//! gradInput's strides and offset.
//!
//! [`mish_grad_f32`] evaluates the vendor formula in the vendor's order in f32.
//! Decision on the points where the literal f32 evaluation breaks down: at `x = ±inf` it
//! would give NaN (`inf * 0`, `inf / inf`), and for `x` below about -88 `exp(-x)` overflows
//! so the sigmoid term vanishes and the result gets the wrong sign. The simulator keeps the
//! literal formula wherever `exp(-x)` is finite, evaluates the division by `1 + exp(-x)` as
//! the multiplication by the divided-through sigmoid `e / (1 + e)` (`e = exp(x)`, same value,
//! no overflow) where it is not, and returns the mathematical limits at the infinities
//! (`mish'(+inf) = 1`, `mish'(-inf) = 0`, so `grad * 1` and `grad * 0`). NaN in gives NaN
//! out. The simulator thus agrees with a correctly rounded CPU reference on every special
//! value.

use super::MAX_DIMS;
use crate::nnopbase::{
    Decision, KernelCall, OpDef, OutParams, Phase1, broadcast, op_def, positions, require_non_null,
};
use crate::state::{fail, status_of};
use crate::stream::Scratch;
use crate::strided::{DType, par_zip};
use crate::tables::{Family, can_cast, dtype_name, float_dtypes};
use ascend_sys::*;

positions!(GRAD, SELF, OUT);

pub(crate) static OP: OpDef = op_def!("MishBackward",
    ["gradOutput", "self", "gradInput"], [GRAD, SELF] -> [OUT], run, on available);

/// Every product but Atlas 200I/500 A2 has the kernel.
fn available(family: Family) -> bool {
    family != Family::Atlas310B
}

pub(crate) fn get_workspace_size(
    grad_output: *const aclTensor,
    self_: *const aclTensor,
    grad_input: *mut aclTensor,
    outs: OutParams<'_>,
) -> aclnnStatus {
    status_of(|| {
        // 1. Null checks.
        require_non_null(&[
            (grad_output as usize, OP.args[GRAD]),
            (self_ as usize, OP.args[SELF]),
            (grad_input as usize, OP.args[OUT]),
        ])?;
        let outs = outs.slots()?;
        let p = Phase1::begin(&OP, &[grad_output, self_, grad_input], outs)?;
        let (g, x, out) = (p.desc(GRAD), p.desc(SELF), p.desc(OUT));
        // 2. Dtypes.
        if !can_cast(x.dtype, out.dtype) {
            return Err(fail(
                ACLNN_ERR_PARAM_INVALID,
                format!(
                    "self dtype {} can not cast to gradInput dtype {}",
                    dtype_name(x.dtype),
                    dtype_name(out.dtype)
                ),
            ));
        }
        for arg in [GRAD, SELF, OUT] {
            p.require_dtype(arg, float_dtypes(p.family))?;
        }
        // 3. Shapes.
        for arg in [GRAD, SELF, OUT] {
            p.require_max_dims(arg, MAX_DIMS)?;
        }
        let Some(bshape) = broadcast(&g.dims, &x.dims) else {
            return Err(fail(
                ACLNN_ERR_PARAM_INVALID,
                format!(
                    "gradOutput shape {:?} and self shape {:?} can not broadcast",
                    g.dims, x.dims
                ),
            ));
        };
        if *out.dims != *bshape {
            return Err(fail(
                ACLNN_ERR_PARAM_INVALID,
                format!(
                    "gradInput shape {:?} is not equal to the broadcast shape {:?} of gradOutput and self",
                    out.dims, bshape
                ),
            ));
        }
        // 4. Empty tensors, and a workspace region of the compute dtype for each
        // temporary of the vendor's chain: promote, contiguous, cast, broadcast, compute,
        // cast, copy into gradInput's view.
        let dtype = |arg: usize| {
            DType::from_acl(p.desc(arg).dtype)
                .ok_or_else(|| fail(ACLNN_ERR_INNER, "unexpected dtype after validation".into()))
        };
        let (gd, xd, od) = (dtype(GRAD)?, dtype(SELF)?, dtype(OUT)?);
        let compute = DType::promote(xd, gd);
        let empty = [g, x, out].iter().any(|d| d.is_empty());
        let mut decision = Decision::new(compute.to_acl(), &bshape, empty);
        let size = compute.size();
        let reshaped = |d: &crate::nnopbase::TensorDesc| *d.dims != *bshape || !d.is_contiguous();
        decision.temporary(GRAD, gd != compute || reshaped(g), size)?;
        decision.temporary(SELF, xd != compute || reshaped(x), size)?;
        decision.temporary(OUT, od != compute || !out.is_contiguous(), size)?;
        p.finish(decision)
    })
}

/// The queued compute; the f32 temporaries live in the stream worker's grow-only scratch.
fn run(call: &KernelCall, scratch: &mut Scratch) -> Result<(), String> {
    let compute = DType::from_acl(call.decision().compute).ok_or("no compute dtype")?;
    let [g, x] = scratch.get::<2>(call.decision().numel());
    call.read(GRAD, &call.decision().out_shape, g)?;
    call.read(SELF, &call.decision().out_shape, x)?;
    call.through_workspace(GRAD, compute, g)?;
    call.through_workspace(SELF, compute, x)?;
    par_zip(g, x, |g, x| {
        for (gv, &xv) in g.iter_mut().zip(x) {
            *gv = compute.round(mish_grad_f32(*gv, xv));
        }
    });
    call.through_workspace(OUT, compute, g)?;
    call.write(OUT, g)
}

/// `grad * mish'(x)` evaluated in f32 the way the vendor kernel does (see the module docs
/// for the handling of infinities and of `x` below about -88).
///
/// `t = tanh(softplus(x))` is `(e^2 + 2e) / (e^2 + 2e + 2)` with `e = exp(x)` for `x < 0`,
/// and the same divided through by `exp(2x)` for `x >= 0` (`e' = exp(-x)`,
/// `t = (1 + 2e') / (1 + 2e' + 2e'^2)`); then `mish'(x) = t - x * (t^2 - 1) / (1 + exp(-x))`.
/// Where `exp(-x)` overflows (x below about -88.7) the division by `1 + exp(-x)` is
/// evaluated as the multiplication by the divided-through sigmoid `e / (1 + e)`.
/// At `x = +inf` the result is `grad * 1`, at `x = -inf` it is `grad * 0`.
pub fn mish_grad_f32(grad: f32, x: f32) -> f32 {
    if x.is_nan() {
        return f32::NAN;
    }
    if x == f32::INFINITY {
        return grad * 1.0;
    }
    if x == f32::NEG_INFINITY {
        return grad * 0.0;
    }
    let t = if x < 0.0 {
        let e = x.exp();
        let n = e * e + 2.0 * e;
        n / (n + 2.0)
    } else {
        let e = (-x).exp();
        let n = 1.0 + 2.0 * e;
        n / (n + 2.0 * e * e)
    };
    let d = 1.0 + (-x).exp();
    let term = if d.is_finite() {
        x * (t * t - 1.0) / d
    } else {
        let e = x.exp();
        x * (t * t - 1.0) * (e / (1.0 + e))
    };
    (t - term) * grad
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vendor_sample_values() {
        let expect = [
            (0.0, 1.0, 0.0),
            (1.0, 1.0, 1.049036),
            (2.0, 1.0, 2.098072),
            (6.0, 3.0, 6.126641),
            (7.0, 3.0, 7.147748),
            (3.0, 2.0, 3.207954),
        ];
        for (g, x, want) in expect {
            let got = mish_grad_f32(g, x);
            assert!((got - want).abs() < 1e-4, "{g} {x}: {got} vs {want}");
        }
    }

    #[test]
    fn special_values() {
        assert!(mish_grad_f32(1.0, f32::NAN).is_nan());
        assert_eq!(mish_grad_f32(2.0, f32::INFINITY), 2.0);
        assert_eq!(mish_grad_f32(-3.0, f32::INFINITY), -3.0);
        assert_eq!(mish_grad_f32(2.0, f32::NEG_INFINITY), 0.0);
        assert!(mish_grad_f32(f32::INFINITY, f32::NEG_INFINITY).is_nan());
        assert_eq!(mish_grad_f32(f32::INFINITY, 1.0), f32::INFINITY);
        assert_eq!(mish_grad_f32(f32::NEG_INFINITY, 1.0), f32::NEG_INFINITY);
        // Very negative x: mish'(x) ~ e^x (1 + x) < 0, tiny.
        let v = mish_grad_f32(1.0, -95.0);
        assert!(v <= 0.0 && v.is_finite(), "{v}");
        let v = mish_grad_f32(1.0, -87.0);
        assert!(v < 0.0 && v.is_finite(), "{v}");
        assert_eq!(mish_grad_f32(1.0, 200.0), 1.0);
        assert!(mish_grad_f32(1.0, -200.0).abs() == 0.0);
    }
}
