//! `aclnnInplaceFillScalar` (ops-math `conversion/fill`): every element of selfRef's view
//! becomes `value`.
//!
//! Phase-1 checks in the vendor's order:
//! 1. `workspaceSize` or `executor` NULL, then selfRef or value NULL: 161001;
//! 2. selfRef's dtype outside FLOAT, INT32, INT64, FLOAT16, INT16, INT8, UINT8, DOUBLE,
//!    BOOL, COMPLEX64, COMPLEX128 (plus BF16, UINT16, UINT32, UINT64 on Atlas A2 / A3):
//!    161002;
//! 3. PromoteType(selfRef, value) undefined (a UINT16 tensor with an INT64 scalar): 161002;
//! 4. more than 8 dims: 161002;
//! 5. an empty selfRef: success, workspace 0, nothing written.
//!
//! Every product runs it. The chain makes `value` a one-element tensor of selfRef's dtype
//! (the device's cast: round to nearest even, floating to integer truncates; how the
//! vendor rounds there is not documented), fills selfRef's shape and copies into its view.
//! The value is taken at phase 1, so a repeatable executor keeps it.

use super::MAX_DIMS;
use super::checks::promote_of;
use crate::nnopbase::{
    Arg, Attr, Decision, KernelCall, OpDef, OutParams, Phase1, op_def, positions,
};
use crate::stream::Scratch;
use crate::tables::numeric_and_unsigned_dtypes;
use ascend_sys::*;

positions!(SELF);
positions!(VALUE);

pub(crate) static OP: OpDef = op_def!("InplaceFillScalar", ["selfRef"], [SELF] -> [SELF], run);

pub(crate) fn get_workspace_size(
    self_ref: *mut aclTensor,
    value: *const aclScalar,
    outs: OutParams<'_>,
) -> aclnnStatus {
    let args = [Arg::Tensor(self_ref), Arg::object(value, "value")];
    let checks = |p: Phase1<'_>| {
        let v = p.scalar(value, "value")?;
        p.require_dtype(SELF, numeric_and_unsigned_dtypes(p.family))?;
        let x = p.desc(SELF);
        promote_of((OP.args[SELF], x.dtype), ("value", v.dtype))?;
        p.require_max_dims(SELF, MAX_DIMS)?;
        let mut decision = Decision::over(x);
        decision.attrs[VALUE] = Attr::Scalar(v);
        p.finish(decision)
    };
    OP.phase1(outs, &args, checks)
}

fn run(call: &KernelCall, scratch: &mut Scratch) -> Result<(), String> {
    let dt = call.dtype(SELF)?;
    let elem = call.elem_size(SELF)?;
    let Attr::Scalar(v) = &call.decision().attrs[VALUE] else {
        return Err("the decision holds no value".into());
    };
    let mut one = [0u8; 16];
    v.convert_to(dt, &mut one[..elem]);
    call.fill(SELF, scratch, &one[..elem])
}
