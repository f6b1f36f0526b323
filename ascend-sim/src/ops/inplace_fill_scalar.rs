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

use crate::nnopbase::{
    Attr, Decision, KernelCall, OpDef, Phase1, every_product, out_params, require_non_null,
};
use crate::state::{fail, status_of};
use crate::stream::Scratch;
use crate::tables::{Family, dtype_name, dtype_size, numeric_dtypes, promote_type};
use ascend_sys::*;

const SELF: usize = 0;
const VALUE: usize = 0;
const MAX_DIMS: usize = 8;

/// The numeric dtypes, plus UINT16, UINT32 and UINT64 on Atlas A2 / A3.
fn dtypes(family: Family) -> &'static [aclDataType] {
    const WIDE: &[aclDataType] = &[
        ACL_FLOAT,
        ACL_FLOAT16,
        ACL_DOUBLE,
        ACL_INT8,
        ACL_INT16,
        ACL_INT32,
        ACL_INT64,
        ACL_UINT8,
        ACL_BOOL,
        ACL_COMPLEX64,
        ACL_COMPLEX128,
        ACL_BF16,
        ACL_UINT16,
        ACL_UINT32,
        ACL_UINT64,
    ];
    if family.has_bf16() {
        WIDE
    } else {
        numeric_dtypes(family)
    }
}

pub(crate) static OP: OpDef = OpDef {
    name: "InplaceFillScalar",
    launch_api: "aclnnInplaceFillScalar",
    args: &["selfRef"],
    inputs: &[SELF],
    outputs: &[SELF],
    available: every_product,
    kernel: run,
};

pub(crate) unsafe fn get_workspace_size(
    self_ref: *mut aclTensor,
    value: *const aclScalar,
    workspace_size: *mut u64,
    executor: *mut *mut aclOpExecutor,
) -> aclnnStatus {
    status_of(|| {
        // SAFETY: NULL or writable and unaliased during the call, by the C contract.
        let outs = unsafe { out_params(workspace_size, executor) }?;
        require_non_null(&[
            (self_ref as usize, OP.args[SELF]),
            (value as usize, "value"),
        ])?;
        let p = Phase1::begin(&OP, &[self_ref], outs)?;
        let v = p.scalar(value, "value")?;
        p.require_dtype(SELF, dtypes(p.family))?;
        let x = p.desc(SELF);
        if promote_type(x.dtype, v.dtype).is_none() {
            return Err(fail(
                ACLNN_ERR_PARAM_INVALID,
                format!(
                    "selfRef dtype {} and value dtype {} can not promote",
                    dtype_name(x.dtype),
                    dtype_name(v.dtype)
                ),
            ));
        }
        p.require_max_dims(SELF, MAX_DIMS)?;
        let mut decision = Decision::new(x.dtype, &x.dims, x.is_empty());
        decision.attrs[VALUE] = Attr::Scalar(v);
        p.finish(decision)
    })
}

fn run(call: &KernelCall, scratch: &mut Scratch) -> Result<(), String> {
    let dt = call.dtype(SELF)?;
    let elem = dtype_size(dt).ok_or("no element size")?;
    let Attr::Scalar(v) = &call.decision.attrs[VALUE] else {
        return Err("the decision holds no value".into());
    };
    let mut one = [0u8; 16];
    v.convert_to(dt, &mut one[..elem]);
    let bytes = scratch.bytes(elem * call.decision.numel());
    for chunk in bytes.chunks_exact_mut(elem) {
        chunk.copy_from_slice(&one[..elem]);
    }
    call.scatter_bytes(SELF, bytes)
}
