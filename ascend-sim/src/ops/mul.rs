//! `aclnnMul` (`out = self · other`, ops-math `math/mul`) and `aclnnInplaceMul`
//! (`selfRef ·= other`).
//!
//! aclnnMul's phase-1 checks in the vendor's order:
//! 1. `workspaceSize` or `executor` NULL, then self, other or out NULL: 161001;
//! 2. self's, other's, then out's dtype outside FLOAT, FLOAT16, DOUBLE, INT8, INT16, INT32,
//!    INT64, UINT8, BOOL, COMPLEX64, COMPLEX128 (plus BF16 on Atlas A2 / A3): 161002;
//! 3. PromoteType(self, other) undefined, then the promote not castable to out: 161002;
//! 4. self or other above 8 dims, or their broadcast shape not out's: 161002;
//! 5. self or other empty: success, workspace 0, nothing computed.
//!
//! aclnnInplaceMul: selfRef or other NULL (161001), the same dtype, promote and cast
//! checks against selfRef, and the broadcast against selfRef's shape, **without** the
//! 8-dim limit; then the empty short-cut. No product is refused.
//!
//! Compute: a mixed (f16 or bf16, f32) pair is multiplied in f32; otherwise both are cast
//! to the promote and multiplied in it (half types widened to f32 and rounded once,
//! integers exact below 2^53 and wrapped to their width, BOOL a logical and); the result
//! is cast to out's dtype and written through out's view. A complex promote multiplies in
//! complex arithmetic, each part rounded once to the promote's precision.

use super::checks::{is_complex, promote_of, require_cast};
use super::complex;
use super::{MAX_DIMS, float_pair_fast_path};
use crate::cast::round;
use crate::nnopbase::{Arg, Decision, KernelCall, OpDef, OutParams, Phase1, op_def, positions};
use crate::stream::Scratch;
use crate::tables::numeric_dtypes;
use ascend_sys::*;

positions!(SELF, OTHER, OUT);

pub(crate) static OP: OpDef = op_def!("Mul", ["self", "other", "out"], [SELF, OTHER] -> [OUT], run);

pub(crate) static INPLACE_OP: OpDef =
    op_def!("InplaceMul", ["selfRef", "other", "selfRef"], [SELF, OTHER] -> [OUT], run);

/// Phase 1's checks of either kind; the in-place one has no dim limit.
fn checks(p: Phase1<'_>) -> Result<(), i32> {
    let op = p.op();
    let inplace = std::ptr::eq(op, &INPLACE_OP);
    p.require_dtype(SELF, numeric_dtypes(p.family))?;
    p.require_dtype(OTHER, numeric_dtypes(p.family))?;
    if !inplace {
        p.require_dtype(OUT, numeric_dtypes(p.family))?;
    }
    let (x, y, o) = (p.desc(SELF), p.desc(OTHER), p.desc(OUT));
    let promote = promote_of((op.args[SELF], x.dtype), (op.args[OTHER], y.dtype))?;
    require_cast(promote, (op.args[OUT], o.dtype))?;
    if !inplace {
        p.require_max_dims(SELF, MAX_DIMS)?;
        p.require_max_dims(OTHER, MAX_DIMS)?;
    }
    p.require_broadcast_to(SELF, OTHER, OUT)?;
    let decision = Decision::new(promote, &o.dims, x.is_empty() || y.is_empty());
    p.finish(decision)
}

pub(crate) fn get_workspace_size(
    self_: *const aclTensor,
    other: *const aclTensor,
    out: *mut aclTensor,
    outs: OutParams<'_>,
) -> aclnnStatus {
    let args = [Arg::Tensor(self_), Arg::Tensor(other), Arg::Tensor(out)];
    OP.phase1(outs, &args, checks)
}

pub(crate) fn inplace_get_workspace_size(
    self_ref: *mut aclTensor,
    other: *const aclTensor,
    outs: OutParams<'_>,
) -> aclnnStatus {
    let args = [
        Arg::Tensor(self_ref),
        Arg::Tensor(other),
        Arg::Tensor(self_ref),
    ];
    INPLACE_OP.phase1(outs, &args, checks)
}

fn run(call: &KernelCall, scratch: &mut Scratch) -> Result<(), String> {
    if let Some(result) = float_pair_fast_path(call, scratch, [SELF, OTHER, OUT], |x, y| x * y) {
        return result;
    }
    let promote = call.decision().compute;
    if is_complex(promote) {
        let (x, y) = (complex::read(call, SELF)?, complex::read(call, OTHER)?);
        let z: Vec<_> = x
            .into_iter()
            .zip(y)
            .map(|(x, y)| complex::narrow(promote, x * y))
            .collect();
        return complex::write(call, OUT, &z);
    }
    let [a, b] = scratch.wide::<2>(call.decision().numel());
    call.read_f64(SELF, call.dims(OUT), a)?;
    call.read_f64(OTHER, call.dims(OUT), b)?;
    for (r, &w) in a.iter_mut().zip(b.iter()) {
        let (x, y) = (round(promote, *r), round(promote, w));
        *r = match promote {
            ACL_DOUBLE => x * y,
            ACL_FLOAT | ACL_FLOAT16 | ACL_BF16 => round(promote, f64::from(x as f32 * y as f32)),
            _ => round(promote, x * y),
        };
    }
    call.write_f64(OUT, a)
}
