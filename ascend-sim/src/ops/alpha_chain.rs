//! aclnnAdd's phase-1 entries, out of place and in place, its treatment of alpha, and its
//! compute loop (aclnnSub, which runs the same checks, is a row of the binary family).

use super::MAX_DIMS;
use super::checks::{promote_of, require_cast};
use crate::cast::round;
use crate::nnopbase::{
    Arg, Attr, Decision, KernelCall, OpDef, OutParams, Phase1, invalid, live_tensor, positions,
    require_broadcast, require_non_null,
};
use crate::state::{state, status_of};
use crate::stream::Scratch;
use crate::tables::{can_cast, dtype_name, is_integral, numeric_dtypes};
use ascend_sys::*;

positions!(pub(super) SELF, OTHER, OUT);
positions!(pub(super) ALPHA);

/// Phase 1 of aclnnAdd (`op` names the operator kind), for either kind, as a C
/// status.
pub(crate) fn get_workspace_size(
    op: &'static OpDef,
    self_: *const aclTensor,
    other: *const aclTensor,
    alpha: *const aclScalar,
    out: *const aclTensor,
    outs: OutParams<'_>,
) -> aclnnStatus {
    let args = [
        Arg::Tensor(self_),
        Arg::Tensor(other),
        Arg::object(alpha, "alpha"),
        Arg::Tensor(out),
    ];
    let checks = |p: Phase1<'_>| alpha_checks(p, alpha);
    op.phase1(outs, &args, checks)
}

/// An in-place kind of aclnnAdd.
pub(crate) struct Inplace {
    pub op: &'static OpDef,
    /// Whether selfRef and other are checked (NULL, then their broadcast against
    /// selfRef's shape) before the opening's NULL checks of workspaceSize and executor.
    pub checks_inputs_first: bool,
}

/// Phase 1 of an in-place kind: its own first checks, if any, then the out-of-place chain
/// with `out = selfRef`.
pub(crate) fn inplace_alpha_chain(
    kind: &'static Inplace,
    self_ref: *const aclTensor,
    other: *const aclTensor,
    alpha: *const aclScalar,
    outs: OutParams<'_>,
) -> aclnnStatus {
    let op = kind.op;
    if kind.checks_inputs_first {
        let first = status_of(|| {
            require_non_null(&[
                (self_ref as usize, op.args[SELF]),
                (other as usize, op.args[OTHER]),
            ])?;
            let st = state();
            let (_, x) = live_tensor(&st, self_ref, op.args[SELF])?;
            let (_, y) = live_tensor(&st, other, op.args[OTHER])?;
            require_broadcast(op, (SELF, x), (OTHER, y), (SELF, x))
        });
        if first != ACL_SUCCESS {
            return first;
        }
    }
    get_workspace_size(op, self_ref, other, alpha, self_ref, outs)
}

/// The checks after the opening, in the vendor's order.
fn alpha_checks(p: Phase1<'_>, alpha: *const aclScalar) -> Result<(), i32> {
    let op = p.op();
    let alpha = p.scalar(alpha, "alpha")?;
    p.require_dtype(SELF, numeric_dtypes(p.family))?;
    p.require_dtype(OTHER, numeric_dtypes(p.family))?;
    let (x, y, o) = (p.desc(SELF), p.desc(OTHER), p.desc(OUT));
    let promote = promote_of((op.args[SELF], x.dtype), (op.args[OTHER], y.dtype))?;
    let alpha_ok = if promote == ACL_BOOL {
        alpha.dtype == ACL_BOOL || is_integral(alpha.dtype)
    } else {
        can_cast(alpha.dtype, promote)
    };
    if !alpha_ok {
        return Err(invalid(format!(
            "alpha dtype {} can not cast to the promote dtype {}",
            dtype_name(alpha.dtype),
            dtype_name(promote)
        )));
    }
    require_cast(promote, (op.args[OUT], o.dtype))?;
    p.require_max_dims(SELF, MAX_DIMS)?;
    p.require_max_dims(OTHER, MAX_DIMS)?;
    p.require_broadcast_to(SELF, OTHER, OUT)?;
    let mut decision = Decision::new(promote, &o.dims, x.is_empty() || y.is_empty());
    decision.attrs[ALPHA] = Attr::Scalar(alpha);
    p.finish(decision)
}

/// Add's compute: both operands read over out's shape and cast to the
/// promote, then `combine(promote, alpha, self, other)` for each element, written to out.
pub(super) fn compute(
    call: &KernelCall,
    scratch: &mut Scratch,
    combine: impl Fn(aclDataType, f64, f64, f64) -> f64,
) -> Result<(), String> {
    let promote = call.decision().compute;
    let alpha = call.decision().attr_f64(ALPHA);
    let [a, b] = scratch.wide::<2>(call.decision().numel());
    call.read_f64(SELF, call.dims(OUT), a)?;
    call.read_f64(OTHER, call.dims(OUT), b)?;
    for (r, &w) in a.iter_mut().zip(b.iter()) {
        *r = combine(promote, alpha, round(promote, *r), round(promote, w));
    }
    call.write_f64(OUT, a)
}

/// Whether alpha counts as 1: unless it is above or below 1 (NaN counts as 1).
pub(super) fn is_one(alpha: f64) -> bool {
    use std::cmp::Ordering::{Greater, Less};
    !matches!(alpha.partial_cmp(&1.0), Some(Less | Greater))
}
