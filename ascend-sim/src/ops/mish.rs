//! `aclnnMish` (`out = self * tanh(softplus(self))`) and `aclnnInplaceMish`, the same with
//! `out = selfRef`. Phase-1 checks in the vendor's order:
//!
//! 1. self or out NULL (the in-place form: selfRef), then `workspaceSize` or `executor`
//!    NULL: 161001;
//! 2. self's dtype outside the product's list, then out's, then out's dtype not self's:
//!    161002 (FLOAT, FLOAT16; BF16 too on Atlas A2 / A3);
//! 3. more than 8 dims on either, then out's shape not self's (no broadcasting): 161002;
//! 4. an empty self: success, workspace 0, nothing computed.
//!
//! Atlas A3, A2 and the training series have the kernel; the inference series (310P) and
//! Atlas 200I/500 A2 (310B) do not (561003). The chain is contiguous(self), Mish, a copy
//! into out's view: a non-contiguous self or out gets a workspace region in self's dtype.
//!
//! The kernel, [`mish_f32`], evaluates the vendor's f32 formula (half types widened, the
//! result rounded to the dtype, to nearest even); at `x = -inf` it returns the limit
//! `-0.0` instead of the literal `0 * -inf`.

use super::MAX_DIMS;
use crate::nnopbase::{
    Decision, KernelCall, OpDef, OutParams, Phase1, TensorDesc, invalid, op_def, positions,
    require_non_null,
};
use crate::state::{fail, status_of};
use crate::stream::Scratch;
use crate::strided::{DType, par_chunks};
use crate::tables::{Family, dtype_name, float_dtypes};
use ascend_sys::*;

positions!(SELF, OUT);

pub(crate) static OP: OpDef = op_def!("Mish", ["self", "out"], [SELF] -> [OUT], run, on available);

/// The in-place form holds selfRef as both arguments.
pub(crate) static INPLACE_OP: OpDef =
    op_def!("InplaceMish", ["selfRef", "selfRef"], [SELF] -> [OUT], run, on available);

fn available(family: Family) -> bool {
    matches!(family, Family::A3 | Family::A2 | Family::Training)
}

/// Phase 1 of either form.
fn phase1(
    op: &'static OpDef,
    self_: *const aclTensor,
    out: *const aclTensor,
    outs: OutParams<'_>,
) -> aclnnStatus {
    status_of(|| {
        require_non_null(&[
            (self_ as usize, op.args[SELF]),
            (out as usize, op.args[OUT]),
        ])?;
        let outs = outs.slots()?;
        let p = Phase1::begin(op, &[self_, out], outs)?;
        let (x, y) = (p.desc(SELF), p.desc(OUT));
        p.require_dtype(SELF, float_dtypes(p.family))?;
        p.require_dtype(OUT, float_dtypes(p.family))?;
        if y.dtype != x.dtype {
            return Err(invalid(format!(
                "out dtype {} is not self's dtype {}",
                dtype_name(y.dtype),
                dtype_name(x.dtype)
            )));
        }
        p.require_max_dims(SELF, MAX_DIMS)?;
        p.require_max_dims(OUT, MAX_DIMS)?;
        if *y.dims != *x.dims {
            return Err(invalid(format!(
                "out shape {:?} is not self's shape {:?}",
                y.dims, x.dims
            )));
        }
        let dt = DType::from_acl(x.dtype)
            .ok_or_else(|| fail(ACLNN_ERR_INNER, "unexpected dtype after validation".into()))?;
        let mut decision = Decision::new(x.dtype, &x.dims, x.is_empty());
        let strided = |d: &TensorDesc| !d.is_contiguous();
        decision.temporary(SELF, strided(x), dt.size())?;
        decision.temporary(OUT, strided(y), dt.size())?;
        p.finish(decision)
    })
}

pub(crate) fn get_workspace_size(
    self_: *const aclTensor,
    out: *mut aclTensor,
    outs: OutParams<'_>,
) -> aclnnStatus {
    phase1(&OP, self_, out, outs)
}

pub(crate) fn inplace_get_workspace_size(
    self_ref: *mut aclTensor,
    outs: OutParams<'_>,
) -> aclnnStatus {
    phase1(&INPLACE_OP, self_ref, self_ref, outs)
}

/// The queued compute: all of self is read before out is written, so the in-place form
/// needs no care about overlap.
fn run(call: &KernelCall, scratch: &mut Scratch) -> Result<(), String> {
    let dt = DType::from_acl(call.decision().compute).ok_or("no compute dtype")?;
    let [x] = scratch.get::<1>(call.decision().numel());
    call.read(SELF, &call.decision().out_shape, x)?;
    call.through_workspace(SELF, dt, x)?;
    par_chunks(x, |_, x| {
        for v in x {
            *v = dt.round(mish_f32(*v));
        }
    });
    call.through_workspace(OUT, dt, x)?;
    call.write(OUT, x)
}

/// `x * tanh(softplus(x))` evaluated in f32 the way the vendor kernel does:
/// `t = (2e' + 1) / (2e'^2 + 2e' + 1)` with `e' = exp(-x)` for `x >= 0`, and
/// `t = (e^2 + 2e) / (e^2 + 2e + 2)` with `e = exp(x)` for `x < 0`; then `t * x`.
/// Neither `exp` can overflow on its branch. At `x = -inf` the literal evaluation gives
/// `0 * -inf = NaN`; the result is the limit, `-0.0`, as the simulator does for MishBackward.
pub fn mish_f32(x: f32) -> f32 {
    if x == f32::NEG_INFINITY {
        return -0.0;
    }
    let t = if x >= 0.0 {
        let e = (-x).exp();
        (2.0 * e + 1.0) / (2.0 * e * e + 2.0 * e + 1.0)
    } else {
        let e = x.exp();
        let n = e * e + 2.0 * e;
        n / (n + 2.0)
    };
    t * x
}
