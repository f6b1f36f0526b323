//! `aclnnAdd` (`out = self + alpha·other`, ops-math `math/add`) and `aclnnInplaceAdd`
//! (`out = selfRef`).
//!
//! aclnnAdd's phase-1 checks in the vendor's order:
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
//! aclnnInplaceAdd checks selfRef and other for NULL and their broadcast against selfRef's
//! shape **before** the out-parameters, then runs aclnnAdd's checks with `out = selfRef`.
//! No product is refused (the vendor's code has no gate).
//!
//! Compute: both operands cast to the promote (a mixed f16/bf16-with-f32 pair is added in
//! f32). alpha counts as 1 unless it is above or below 1 (NaN counts as 1). FLOAT, FLOAT16
//! and INT32 with alpha ≠ 1 run Axpy (`self + alpha·other`, alpha an f32 attribute, half
//! types widened to f32 and the result rounded once; INT32 exactly); the other promotes
//! turn alpha into a
//! one-element tensor of the promote (rounded to it), multiply, then add, rounding after
//! each step. Integers are exact below 2^53 and wrap to their width. The result is cast to
//! out's dtype and written through out's view. A complex promote multiplies and adds in
//! complex arithmetic, each part rounded to the promote's precision after each step.

use super::alpha_chain::{ALPHA, Inplace, OTHER, OUT, SELF, compute, is_one};
use super::checks::is_complex;
use super::complex;
use super::float_pair_fast_path;
use crate::cast::round;
use crate::nnopbase::{KernelCall, OpDef, op_def};
use crate::stream::Scratch;
use ascend_sys::*;

pub(crate) static OP: OpDef = op_def!("Add", ["self", "other", "out"], [SELF, OTHER] -> [OUT], run);

pub(crate) static INPLACE_OP: OpDef =
    op_def!("InplaceAdd", ["selfRef", "other", "selfRef"], [SELF, OTHER] -> [OUT], run);

/// aclnnInplaceAdd checks its inputs before the out-parameters.
pub(crate) static INPLACE: Inplace = Inplace {
    op: &INPLACE_OP,
    checks_inputs_first: true,
};

/// The queued compute of either kind.
fn run(call: &KernelCall, scratch: &mut Scratch) -> Result<(), String> {
    let alpha = call.decision().attr_f64(ALPHA);
    let positions = [SELF, OTHER, OUT];
    let fast = if is_one(alpha) {
        float_pair_fast_path(call, scratch, positions, |x, y| x + y)
    } else {
        let alpha = alpha as f32;
        float_pair_fast_path(call, scratch, positions, move |x, y| x + alpha * y)
    };
    if let Some(result) = fast {
        return result;
    }
    let promote = call.decision().compute;
    if is_complex(promote) {
        // The Mul-then-Add of the promotes Axpy does not take, rounding after each step.
        let alpha = complex::narrow(promote, complex::scalar_attr(call, ALPHA));
        let (x, y) = (complex::read(call, SELF)?, complex::read(call, OTHER)?);
        let z: Vec<_> = x
            .into_iter()
            .zip(y)
            .map(|(x, y)| {
                let y = if is_one(alpha.re) && alpha.im == 0.0 {
                    y
                } else {
                    complex::narrow(promote, alpha * y)
                };
                complex::narrow(promote, x + y)
            })
            .collect();
        return complex::write(call, OUT, &z);
    }
    compute(call, scratch, |promote, alpha, x, y| {
        if is_one(alpha) {
            sum(promote, x, y)
        } else if matches!(promote, ACL_FLOAT | ACL_FLOAT16) {
            // Axpy with alpha as an f32 attribute.
            round(promote, f64::from(x as f32 + alpha as f32 * y as f32))
        } else {
            // INT32's Axpy is exact here like the Mul-then-Add of the other promotes.
            sum(promote, x, round(promote, round(promote, alpha) * y))
        }
    })
}

/// `a + b` in the promote dtype, rounded once (half types through f32).
fn sum(promote: aclDataType, a: f64, b: f64) -> f64 {
    match promote {
        ACL_DOUBLE => a + b,
        ACL_FLOAT | ACL_FLOAT16 | ACL_BF16 => round(promote, f64::from(a as f32 + b as f32)),
        _ => round(promote, a + b),
    }
}
