//! `aclnnInplaceMaskedFillScalar` (torch.Tensor.masked_fill_; ops-math
//! `conversion/masked_fill`): `selfRef[i] = value` where `mask[i]`, mask broadcast to
//! selfRef's shape.
//!
//! Phase-1 checks in the vendor's order (`op_api/aclnn_masked_fill_scalar.cpp`), 161001
//! NULL, 161002 invalid:
//! 1. `workspaceSize` or `executor`, then selfRef, mask, value NULL;
//! 2. a BF16 selfRef off the SoCs from Ascend910B to Ascend910E (Atlas A2 / A3), then
//!    selfRef's dtype outside FLOAT, INT32, INT64, FLOAT16, INT8, BOOL, BF16; mask's not
//!    BOOL (UINT8 is refused);
//! 3. selfRef or mask above 8 dims; selfRef and mask not broadcastable, or their
//!    broadcast shape not selfRef's;
//! 4. selfRef or mask empty: success, workspace 0.
//!
//! The value's dtype is not checked (the documentation asks that it convert to selfRef's;
//! the code converts whatever it is): it becomes one element of selfRef's dtype at phase 1
//! by the device's cast (floating to integer truncates, nonzero to BOOL is true), so a
//! repeatable executor keeps it. Storage formats are not checked (the UT passes NHWC,
//! NCHW, HWCN, NDHWC, NCDHW and NC1HWC0). Every product runs it.

use super::MAX_DIMS;
use super::entry_pair::entry_pair;
use crate::nnopbase::{
    Arg, Attr, Decision, KernelCall, OpDef, OutParams, Phase1, broadcast, invalid, op_def,
    positions,
};
use crate::stream::Scratch;
use crate::tables::Family;
use ascend_sys::*;

positions!(SELF, MASK);
positions!(VALUE);

pub(crate) static MASKED_FILL_SCALAR: OpDef = op_def!(
    "InplaceMaskedFillScalar",
    ["selfRef", "mask"],
    [SELF, MASK] -> [SELF],
    masked_fill
);

entry_pair!(masked_fill_scalar_entries: "aclnnInplaceMaskedFillScalarGetWorkspaceSize"(
    self_ref: *mut aclTensor, mask: *const aclTensor, value: *const aclScalar,
) => checks; "aclnnInplaceMaskedFillScalar" => super::MASKED_FILL_SCALAR);

/// selfRef's dtypes (BF16 only where the SoC check lets it through).
const SELF_DTYPES: &[aclDataType] = &[
    ACL_FLOAT,
    ACL_INT32,
    ACL_INT64,
    ACL_FLOAT16,
    ACL_INT8,
    ACL_BOOL,
    ACL_BF16,
];

fn checks(
    self_ref: *mut aclTensor,
    mask: *const aclTensor,
    value: *const aclScalar,
    outs: OutParams<'_>,
) -> aclnnStatus {
    let args = [
        Arg::Tensor(self_ref),
        Arg::Tensor(mask),
        Arg::object(value, "value"),
    ];
    MASKED_FILL_SCALAR.phase1(outs, &args, |p: Phase1<'_>| {
        let v = p.scalar(value, "value")?;
        let x = p.desc(SELF);
        if x.dtype == ACL_BF16 && !bf16_soc(p.family) {
            return Err(invalid(format!(
                "Input dtype of aclnnInplaceMaskedFillScalar is not support bfloat16 on {}",
                p.soc
            )));
        }
        p.require_dtype(SELF, SELF_DTYPES)?;
        p.require_dtype(MASK, &[ACL_BOOL])?;
        p.require_max_dims(SELF, MAX_DIMS)?;
        p.require_max_dims(MASK, MAX_DIMS)?;
        let m = p.desc(MASK);
        match broadcast(&x.dims, &m.dims) {
            None => {
                return Err(invalid(format!(
                    "selfRef shape {:?} and mask shape {:?} can not broadcast",
                    x.dims, m.dims
                )));
            }
            Some(b) if *b != *x.dims => {
                return Err(invalid(format!(
                    "Shape of out should be {b:?}, but current is {:?}",
                    x.dims
                )));
            }
            Some(_) => {}
        }
        let empty = x.is_empty() || m.is_empty();
        let mut decision = Decision::new(x.dtype, &x.dims.clone(), empty);
        decision.attrs[VALUE] = Attr::Scalar(v);
        p.finish(decision)
    })
}

/// Whether the SoC lies between Ascend910B and Ascend910E, the vendor's BF16 range.
fn bf16_soc(family: Family) -> bool {
    family.has_bf16()
}

fn masked_fill(call: &KernelCall, _scratch: &mut Scratch) -> Result<(), String> {
    let dt = call.dtype(SELF)?;
    let size = call.elem_size(SELF)?;
    let Attr::Scalar(v) = &call.decision().attrs[VALUE] else {
        return Err("the decision holds no value".into());
    };
    let mut one = [0u8; 16];
    v.convert_to(dt, &mut one[..size]);
    let n = call.decision().numel();
    let mut mask = vec![0u8; n];
    call.gather_as(MASK, ACL_BOOL, &mut mask)?;
    let mut x = vec![0u8; n * size];
    call.read_bytes(SELF, &mut x)?;
    for (e, &m) in x.chunks_exact_mut(size).zip(&mask) {
        if m != 0 {
            e.copy_from_slice(&one[..size]);
        }
    }
    call.scatter_bytes(SELF, &x)
}
