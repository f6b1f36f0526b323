//! `aclnnInplaceZero` (ops-math `math/zero_op`): every element of selfRef's view becomes 0.
//!
//! Phase-1 checks in the vendor's order:
//! 1. `workspaceSize` or `executor` NULL, then selfRef NULL: 161001;
//! 2. selfRef's dtype outside INT8, INT16, INT32, INT64, UINT8, UINT16, FLOAT16, FLOAT,
//!    BF16, DOUBLE, BOOL, COMPLEX64, COMPLEX128 (on every product; BF16 is not gated):
//!    161002;
//! 3. an empty selfRef: success, workspace 0, nothing written.
//!
//! There is no dim limit. Every product runs it (the vendor's code refuses no SoC). The
//! chain is ZerosLike then a copy into selfRef's view, so any strides work; all-zero bytes
//! are 0 (+0.0 for the floating-point dtypes) in every listed dtype.

use crate::nnopbase::{Arg, Decision, KernelCall, OpDef, OutParams, Phase1, op_def, positions};
use crate::stream::Scratch;
use ascend_sys::*;

positions!(SELF);

const DTYPES: &[aclDataType] = &[
    ACL_INT8,
    ACL_INT32,
    ACL_INT64,
    ACL_UINT8,
    ACL_FLOAT16,
    ACL_FLOAT,
    ACL_BOOL,
    ACL_DOUBLE,
    ACL_INT16,
    ACL_UINT16,
    ACL_COMPLEX128,
    ACL_COMPLEX64,
    ACL_BF16,
];

pub(crate) static OP: OpDef = op_def!("InplaceZero", ["selfRef"], [SELF] -> [SELF], run);

pub(crate) fn get_workspace_size(self_ref: *mut aclTensor, outs: OutParams<'_>) -> aclnnStatus {
    let args = [Arg::Tensor(self_ref)];
    let checks = |p: Phase1<'_>| {
        p.require_dtype(SELF, DTYPES)?;
        let decision = Decision::over(p.desc(SELF));
        p.finish(decision)
    };
    OP.phase1(outs, &args, checks)
}

fn run(call: &KernelCall, scratch: &mut Scratch) -> Result<(), String> {
    let zero = [0u8; 16];
    let elem = call.elem_size(SELF)?;
    call.fill(SELF, scratch, zero.get(..elem).ok_or("no element size")?)
}
