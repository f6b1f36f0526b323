//! The phase-1 checks several operators run with the same text: dtype promotion and
//! casts, the reduction argument, the broadcast shape of out, and the complex dtypes the
//! simulator does not compute. Each operator calls them in its own vendor's order.

use crate::nnopbase::invalid;
use crate::state::fail;
use crate::tables::{can_cast, dtype_name, promote_type};
use ascend_sys::*;

/// PromoteType of two named dtypes (161002 when it is undefined).
pub(super) fn promote_of(
    (a, x): (&str, aclDataType),
    (b, y): (&str, aclDataType),
) -> Result<aclDataType, i32> {
    promote_type(x, y).ok_or_else(|| {
        invalid(format!(
            "{a} dtype {} and {b} dtype {} can not promote",
            dtype_name(x),
            dtype_name(y)
        ))
    })
}

/// Fails with 161002 unless the promote dtype casts to argument `out`'s dtype.
pub(super) fn require_cast(promote: aclDataType, (out, o): (&str, aclDataType)) -> Result<(), i32> {
    if can_cast(promote, o) {
        return Ok(());
    }
    Err(invalid(format!(
        "the promote dtype {} can not cast to {out} dtype {}",
        dtype_name(promote),
        dtype_name(o)
    )))
}

/// Fails with 161002 unless `reduction` is 0 (none), 1 (mean) or 2 (sum).
pub(super) fn require_reduction(reduction: i64) -> Result<(), i32> {
    if (0..=2).contains(&reduction) {
        return Ok(());
    }
    Err(invalid(format!(
        "reduction {reduction} should be 0 (none), 1 (mean) or 2 (sum)"
    )))
}

/// Fails with 161002 unless out's shape is the broadcast shape `b` of the inputs.
pub(super) fn require_out_broadcast(out: &[i64], b: &[i64]) -> Result<(), i32> {
    if out == b {
        return Ok(());
    }
    Err(invalid(format!(
        "out shape {out:?} is not the broadcast shape {b:?}"
    )))
}

/// Whether `dt` is a complex dtype.
pub(super) fn is_complex(dt: aclDataType) -> bool {
    matches!(dt, ACL_COMPLEX64 | ACL_COMPLEX128)
}

/// Fails with 561000 when `dt` is complex: the simulator does not model complex `what`.
pub(super) fn refuse_complex(dt: aclDataType, what: &str) -> Result<(), i32> {
    if is_complex(dt) {
        return Err(unmodeled_complex(what));
    }
    Ok(())
}

/// The status and text of a complex computation the simulator does not model (561000).
pub(super) fn unmodeled_complex(what: &str) -> i32 {
    fail(
        ACLNN_ERR_INNER,
        format!("the simulator does not model complex {what}"),
    )
}
