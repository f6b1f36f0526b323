//! `aclnnInplaceCopy`: writes `src` into `selfRef`'s view, broadcast to selfRef's shape
//! and cast to its dtype. Phase-1 checks in the vendor's order:
//!
//! 1. `workspaceSize` or `executor` NULL, then selfRef or src NULL: 161001;
//! 2. a dtype outside INT8..INT64, UINT8..UINT64, FLOAT16, FLOAT, BF16, DOUBLE, BOOL,
//!    COMPLEX64, COMPLEX128 and the FP8 kinds (HIFLOAT8, FLOAT8_E5M2, FLOAT8_E4M3FN,
//!    FLOAT8_E8M0), selfRef's first: 161002;
//! 3. more than 8 dims, then src not broadcastable to exactly selfRef's shape: 161002;
//! 4. either tensor empty: success, workspace 0, nothing copied.
//!
//! Every product has it. The chain is contiguous(src), a cast to selfRef's dtype (round to
//! nearest even), a broadcast to selfRef's shape, a copy into selfRef's view (any
//! strides); src's temporary gets a workspace region when any of the first three steps
//! changes it. Casts between bool, the integers, f16, bf16, f32, f64 and the complex types
//! round to nearest even (floats), truncate toward zero (float to integer, saturating, NaN
//! to 0), wrap (integers), keep the real part (complex to real); any dtype copies to itself
//! byte for byte; a cast from or to an FP8 kind is not modeled and fails phase 1 with
//! 561000, saying so.

use super::MAX_DIMS;
use crate::cast;
use crate::nnopbase::{
    Arg, Decision, KernelCall, OpDef, OutParams, Phase1, broadcast, op_def, positions,
};
use crate::state::fail;
use crate::stream::Scratch;
use crate::tables::{dtype_name, dtype_size};
use ascend_sys::*;

positions!(SELF, SRC);

/// The dtypes the operator accepts, FP8 kinds (34 to 37) included.
const DTYPES: &[aclDataType] = &[
    ACL_INT8,
    ACL_INT16,
    ACL_INT32,
    ACL_INT64,
    ACL_UINT8,
    ACL_UINT16,
    ACL_UINT32,
    ACL_UINT64,
    ACL_FLOAT16,
    ACL_FLOAT,
    ACL_BF16,
    ACL_DOUBLE,
    ACL_BOOL,
    ACL_COMPLEX64,
    ACL_COMPLEX128,
    34,
    35,
    36,
    37,
];

pub(crate) static OP: OpDef =
    op_def!("InplaceCopy", ["selfRef", "src"], [SELF, SRC] -> [SELF], run);

pub(crate) fn get_workspace_size(
    self_ref: *mut aclTensor,
    src: *const aclTensor,
    outs: OutParams<'_>,
) -> aclnnStatus {
    let args = [Arg::Tensor(self_ref), Arg::Tensor(src)];
    let checks = |p: Phase1<'_>| {
        let (y, s) = (p.desc(SELF), p.desc(SRC));
        p.require_dtype(SELF, DTYPES)?;
        p.require_dtype(SRC, DTYPES)?;
        p.require_max_dims(SELF, MAX_DIMS)?;
        p.require_max_dims(SRC, MAX_DIMS)?;
        if broadcast(&y.dims, &s.dims).is_none_or(|b| *b != *y.dims) {
            return Err(fail(
                ACLNN_ERR_PARAM_INVALID,
                format!(
                    "src shape {:?} can not broadcast to selfRef shape {:?}",
                    s.dims, y.dims
                ),
            ));
        }
        let empty = y.is_empty() || s.is_empty();
        if !empty && !cast::supported(s.dtype, y.dtype) {
            return Err(fail(
                ACLNN_ERR_INNER,
                format!(
                    "the simulator does not model a cast from {} to {}",
                    dtype_name(s.dtype),
                    dtype_name(y.dtype)
                ),
            ));
        }
        let elem = dtype_size(y.dtype).unwrap_or(1);
        let mut decision = Decision::new(y.dtype, &y.dims, empty);
        let changed = s.dtype != y.dtype || *s.dims != *y.dims || !s.is_contiguous();
        decision.temporary(SRC, changed, elem)?;
        p.finish(decision)
    };
    OP.phase1(outs, &args, checks)
}

fn run(call: &KernelCall, scratch: &mut Scratch) -> Result<(), String> {
    convert_into(call, scratch, SRC, SELF)
}

/// The queued conversion of argument `src` into argument `dst`'s view, in the decision's
/// dtype and shape (`aclnnCast` runs the same one, so the two operators agree element for
/// element). All of src is read (and converted) before dst is written, so the two may
/// overlap.
pub(super) fn convert_into(
    call: &KernelCall,
    scratch: &mut Scratch,
    src: usize,
    dst: usize,
) -> Result<(), String> {
    let to = call.decision().compute;
    let bytes = dtype_size(to)
        .and_then(|e| e.checked_mul(call.decision().numel()))
        .ok_or("the result's byte size overflows")?;
    let buf = scratch.bytes(bytes);
    call.gather_as(src, to, buf)?;
    call.through_workspace_bytes(src, buf)?;
    call.scatter_bytes(dst, buf)
}
