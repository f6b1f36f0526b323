//! `aclnnInplaceOne` (ops-math `math/ones_like`): every element of selfRef's view becomes 1.
//!
//! Phase-1 checks in the vendor's order (`op_api/aclnn_ones.cpp`):
//! 1. `workspaceSize` or `executor` NULL, then selfRef NULL: 161001;
//! 2. selfRef's dtype outside FLOAT, FLOAT16, INT8, INT16, INT32, INT64, UINT8, BOOL,
//!    DOUBLE (+ BF16 on Atlas A2 / A3, the SoC versions ASCEND910B and ASCEND910_93 of
//!    the vendor's code): 161002. The documentation also lists UINT16, which the code
//!    refuses;
//! 3. selfRef above 8 dims: 161002;
//! 4. an empty selfRef: success, workspace 0, nothing written.
//!
//! The code refuses no product. The chain is Contiguous, OnesLike, then a copy into
//! selfRef's view, so any strides work; 1 is exact in every listed dtype (`true` for BOOL).

use super::MAX_DIMS;
use super::entry_pair::entry_pair;
use crate::cast;
use crate::nnopbase::{Arg, Decision, KernelCall, OpDef, OutParams, op_def, positions};
use crate::stream::Scratch;
use crate::tables::Family;
use ascend_sys::*;

positions!(SELF);

pub(crate) static INPLACE_ONE: OpDef = op_def!("InplaceOne", ["selfRef"], [SELF] -> [SELF], run);

entry_pair!(inplace_one_entries: "aclnnInplaceOneGetWorkspaceSize"(
    self_ref: *const aclTensor,
) => checks; "aclnnInplaceOne" => super::INPLACE_ONE);

fn dtypes(family: Family) -> &'static [aclDataType] {
    const LIST: &[aclDataType] = &[
        ACL_FLOAT,
        ACL_FLOAT16,
        ACL_INT8,
        ACL_INT16,
        ACL_INT32,
        ACL_INT64,
        ACL_UINT8,
        ACL_BOOL,
        ACL_DOUBLE,
        ACL_BF16,
    ];
    if family.has_bf16() {
        LIST
    } else {
        &LIST[..LIST.len() - 1]
    }
}

fn checks(self_ref: *const aclTensor, outs: OutParams<'_>) -> aclnnStatus {
    let args = [Arg::Tensor(self_ref)];
    INPLACE_ONE.phase1(outs, &args, |p| {
        p.require_dtype(SELF, dtypes(p.family))?;
        p.require_max_dims(SELF, MAX_DIMS)?;
        let decision = Decision::over(p.desc(SELF));
        p.finish(decision)
    })
}

fn run(call: &KernelCall, scratch: &mut Scratch) -> Result<(), String> {
    let dt = call.dtype(SELF)?;
    let mut one = [0u8; 16];
    let elem = call.elem_size(SELF)?;
    let to = one.get_mut(..elem).ok_or("no element size")?;
    cast::convert(ACL_DOUBLE, &1f64.to_le_bytes(), dt, to);
    call.fill(SELF, scratch, to)
}
