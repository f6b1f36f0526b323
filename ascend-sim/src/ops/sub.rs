//! `aclnnSub` (`out = self − alpha·other`, ops-math `math/sub`) and `aclnnInplaceSub`
//! (`out = selfRef`).
//!
//! aclnnSub's phase-1 checks are aclnnAdd's, in the same order and with the same codes:
//! 1. `workspaceSize` or `executor` NULL, then self, other, alpha or out NULL: 161001;
//! 2. self's, then other's dtype outside FLOAT, INT32, INT64, FLOAT16, INT16, INT8, UINT8,
//!    DOUBLE, BOOL, COMPLEX64, COMPLEX128 (plus BF16 on Atlas A2 / A3): 161002 (out's dtype
//!    is not held against the list);
//! 3. PromoteType(self, other) undefined: 161002;
//! 4. a BOOL promote with an alpha neither BOOL nor integral, or an alpha that cannot cast
//!    to the promote: 161002;
//! 5. the promote that cannot cast to out's dtype: 161002;
//! 6. self or other above 8 dims, or their broadcast shape not out's: 161002;
//! 7. self or other empty: success, workspace 0, nothing computed.
//!
//! aclnnInplaceSub's own pre-check reports success even when it fails, so its statuses are
//! aclnnSub's, in aclnnSub's order, with `out = selfRef`. No product is refused: the
//! documentation leaves out the inference series 310P, but no code gates on the SoC, so
//! there as everywhere off A2 / A3 the list without BF16 applies.
//!
//! Compute: both operands cast to the promote. alpha counts as 1 unless it is above or
//! below 1 (NaN counts as 1): then one Sub in the promote (half types through f32, rounded
//! once). With alpha ≠ 1 a floating promote computes in FLOAT (DOUBLE stays DOUBLE): FLOAT,
//! FLOAT16 and BF16 run Axpy(self, other, −alpha) in f32 and are rounded only by the cast
//! to out's dtype; DOUBLE and the integral promotes turn alpha into a one-element tensor
//! of the promote, multiply, then subtract, rounding after each step (integers wrap to
//! their width). The result is cast to out's dtype and written through out's view.
//! Complex arithmetic is not modeled: a complex promote fails phase 1 with 561000.

use super::alpha_chain::{Inplace, OTHER, OUT, SELF, compute, is_one};
use crate::cast::round;
use crate::nnopbase::{KernelCall, OpDef, op_def};
use crate::stream::Scratch;
use ascend_sys::*;

pub(crate) static OP: OpDef = op_def!("Sub", ["self", "other", "out"], [SELF, OTHER] -> [OUT], run);

pub(crate) static INPLACE_OP: OpDef =
    op_def!("InplaceSub", ["selfRef", "other", "selfRef"], [SELF, OTHER] -> [OUT], run);

/// aclnnInplaceSub's own pre-check does not count: it reports success even when it fails.
pub(crate) static INPLACE: Inplace = Inplace {
    op: &INPLACE_OP,
    checks_inputs_first: false,
};

/// The queued compute of either kind.
fn run(call: &KernelCall, scratch: &mut Scratch) -> Result<(), String> {
    compute(call, scratch, |promote, alpha, x, y| {
        if is_one(alpha) {
            difference(promote, x, y)
        } else if matches!(promote, ACL_FLOAT | ACL_FLOAT16 | ACL_BF16) {
            // Axpy in f32 with −alpha as its attribute; the cast to out rounds the halves.
            f64::from(x as f32 + -(alpha as f32) * y as f32)
        } else {
            difference(promote, x, round(promote, round(promote, alpha) * y))
        }
    })
}

/// `a − b` in the promote dtype, rounded once (half types through f32).
fn difference(promote: aclDataType, a: f64, b: f64) -> f64 {
    match promote {
        ACL_DOUBLE => a - b,
        ACL_FLOAT | ACL_FLOAT16 | ACL_BF16 => round(promote, f64::from(a as f32 - b as f32)),
        _ => round(promote, a - b),
    }
}
