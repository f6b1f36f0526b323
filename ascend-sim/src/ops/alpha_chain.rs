//! The check chain aclnnAdd and aclnnSub share (Sub runs Add's checks in the same order
//! with the same codes), and their treatment of alpha.

use crate::nnopbase::{Attr, Decision, OpDef, Phase1, out_params, require_non_null};
use crate::state::fail;
use crate::tables::{can_cast, dtype_name, is_integral, numeric_dtypes, promote_type};
use ascend_sys::*;

pub(super) const SELF: usize = 0;
pub(super) const OTHER: usize = 1;
pub(super) const OUT: usize = 2;
pub(super) const ALPHA: usize = 0;
pub(super) const MAX_DIMS: usize = 8;

fn invalid(msg: String) -> i32 {
    fail(ACLNN_ERR_PARAM_INVALID, msg)
}

/// The phase 1 of aclnnAdd or aclnnSub (`op` names which), for either operator kind.
pub(super) fn phase1(
    op: &'static OpDef,
    self_: *const aclTensor,
    other: *const aclTensor,
    alpha: *const aclScalar,
    out: *const aclTensor,
    workspace_size: *mut u64,
    executor: *mut *mut aclOpExecutor,
) -> Result<(), i32> {
    // SAFETY: NULL or writable and unaliased during the call, by the C contract.
    let outs = unsafe { out_params(workspace_size, executor) }?;
    require_non_null(&[
        (self_ as usize, op.args[SELF]),
        (other as usize, op.args[OTHER]),
        (alpha as usize, "alpha"),
        (out as usize, op.args[OUT]),
    ])?;
    let p = Phase1::begin(op, &[self_, other, out], outs)?;
    let alpha = p.scalar(alpha, "alpha")?;
    p.require_dtype(SELF, numeric_dtypes(p.family))?;
    p.require_dtype(OTHER, numeric_dtypes(p.family))?;
    let (x, y, o) = (p.desc(SELF), p.desc(OTHER), p.desc(OUT));
    let Some(promote) = promote_type(x.dtype, y.dtype) else {
        return Err(invalid(format!(
            "{} dtype {} and other dtype {} can not promote",
            op.args[SELF],
            dtype_name(x.dtype),
            dtype_name(y.dtype)
        )));
    };
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
    if !can_cast(promote, o.dtype) {
        return Err(invalid(format!(
            "the promote dtype {} can not cast to {} dtype {}",
            dtype_name(promote),
            op.args[OUT],
            dtype_name(o.dtype)
        )));
    }
    p.require_max_dims(SELF, MAX_DIMS)?;
    p.require_max_dims(OTHER, MAX_DIMS)?;
    p.require_broadcast_to(SELF, OTHER, OUT)?;
    if matches!(promote, ACL_COMPLEX64 | ACL_COMPLEX128) {
        return Err(fail(
            ACLNN_ERR_INNER,
            "the simulator does not model complex arithmetic".into(),
        ));
    }
    let mut decision = Decision::new(promote, &o.dims, x.is_empty() || y.is_empty());
    decision.attrs[ALPHA] = Attr::Scalar(alpha);
    p.finish(decision)
}

pub(super) fn is_one(alpha: f64) -> bool {
    use std::cmp::Ordering::{Greater, Less};
    !matches!(alpha.partial_cmp(&1.0), Some(Less | Greater))
}
