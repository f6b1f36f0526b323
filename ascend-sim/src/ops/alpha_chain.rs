//! The check chain aclnnAdd and aclnnSub share (Sub runs Add's checks in the same order
//! with the same codes), and their treatment of alpha.

use super::MAX_DIMS;
use super::checks::{promote_of, refuse_complex, require_cast};
use crate::nnopbase::{Arg, Attr, Decision, OpDef, Phase1, invalid, positions};
use crate::tables::{can_cast, dtype_name, is_integral, numeric_dtypes};
use ascend_sys::*;

positions!(pub(super) SELF, OTHER, OUT);
positions!(pub(super) ALPHA);

/// Phase 1 of aclnnAdd or aclnnSub (`op` names which), for either operator kind, as a C
/// status.
///
/// # Safety
/// As [`OpDef::phase1`].
pub(crate) unsafe fn get_workspace_size(
    op: &'static OpDef,
    self_: *const aclTensor,
    other: *const aclTensor,
    alpha: *const aclScalar,
    out: *const aclTensor,
    workspace_size: *mut u64,
    executor: *mut *mut aclOpExecutor,
) -> aclnnStatus {
    let args = [
        Arg::Tensor(self_),
        Arg::Tensor(other),
        Arg::object(alpha, "alpha"),
        Arg::Tensor(out),
    ];
    let checks = |p: Phase1<'_>| alpha_checks(p, alpha);
    // SAFETY: the caller's contract.
    unsafe { op.phase1(workspace_size, executor, &args, checks) }
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
    refuse_complex(promote, "arithmetic")?;
    let mut decision = Decision::new(promote, &o.dims, x.is_empty() || y.is_empty());
    decision.attrs[ALPHA] = Attr::Scalar(alpha);
    p.finish(decision)
}

pub(super) fn is_one(alpha: f64) -> bool {
    use std::cmp::Ordering::{Greater, Less};
    !matches!(alpha.partial_cmp(&1.0), Some(Less | Greater))
}
