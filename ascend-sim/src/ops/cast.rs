//! `aclnnCast` (ops-math `math/cast`): `out = self` converted to the dtype named by the
//! `dtype` argument.
//!
//! Phase-1 checks in the vendor's order (`op_api/aclnn_cast.cpp`), 161001 NULL, 161002
//! invalid:
//! 1. `workspaceSize` or `executor`, then self, out NULL;
//! 2. self's dtype, then the `dtype` argument, outside FLOAT16, FLOAT, DOUBLE, INT8, UINT8,
//!    INT16, INT32, INT64, UINT16, UINT32, UINT64, BOOL, COMPLEX64, COMPLEX128 (+ BF16 on
//!    Atlas A2 / A3, the vendor's DAV_2201 list; every other simulated product takes the
//!    list without it);
//! 3. self above 8 dims, then out's shape not self's;
//! 4. out of dtype INT4 and a non-contiguous self;
//! 5. self empty: success, workspace 0, nothing written.
//!
//! Out's dtype is not checked against `dtype`: the vendor's chain is Contiguous, Cast to
//! `dtype`, ViewCopy into out, and the ViewCopy of a result of another dtype than out's
//! fails with 561103, which the simulator reports at the same point (after the empty
//! return). A private storage format is only a warning there; the simulator ignores it.
//! The code refuses no product.
//!
//! Every pair of the listed dtypes casts (to AI Core or, for the pairs it lacks, AI CPU),
//! as [`crate::cast`] converts, with the kernel of `aclnnInplaceCopy`, which casts through
//! the same `l0op::Cast`: round to nearest even between floats, truncation toward zero
//! from float to integer (saturating at the target's range, NaN to 0), integers wrapped,
//! nonzero to `true`, the real part of a complex number. The documented precision limits
//! (INT32 to INT8 exact only within (-2048, 1920); DOUBLE or a complex type to UINT8 exact
//! only for non-negative values) describe where the device may differ from that, not a
//! result the simulator could reproduce.

use super::MAX_DIMS;
use super::entry_pair::entry_pair;
use super::inplace_copy::convert_into;
use crate::nnopbase::{Arg, Decision, KernelCall, OpDef, OutParams, invalid, op_def, positions};
use crate::state::fail;
use crate::stream::Scratch;
use crate::tables::{Family, dtype_list, dtype_name, dtype_size};
use ascend_sys::*;

positions!(SELF, OUT);

pub(crate) static CAST: OpDef = op_def!("Cast", ["self", "out"], [SELF] -> [OUT], run);

entry_pair!(cast_entries: "aclnnCastGetWorkspaceSize"(
    self_: *const aclTensor, dtype: aclDataType, out: *mut aclTensor,
) => checks; "aclnnCast" => super::CAST);

/// The dtypes of self and of the `dtype` argument on `family`.
fn dtypes(family: Family) -> &'static [aclDataType] {
    const LIST: &[aclDataType] = &[
        ACL_FLOAT16,
        ACL_FLOAT,
        ACL_DOUBLE,
        ACL_INT8,
        ACL_UINT8,
        ACL_INT16,
        ACL_INT32,
        ACL_INT64,
        ACL_UINT16,
        ACL_UINT32,
        ACL_UINT64,
        ACL_BOOL,
        ACL_COMPLEX64,
        ACL_COMPLEX128,
        ACL_BF16,
    ];
    if family.has_bf16() {
        LIST
    } else {
        &LIST[..LIST.len() - 1]
    }
}

fn checks(
    self_: *const aclTensor,
    dtype: aclDataType,
    out: *mut aclTensor,
    outs: OutParams<'_>,
) -> aclnnStatus {
    let args = [Arg::Tensor(self_), Arg::Tensor(out)];
    CAST.phase1(outs, &args, |p| {
        let list = dtypes(p.family);
        p.require_dtype(SELF, list)?;
        if !list.contains(&dtype) {
            return Err(invalid(format!(
                "The param dtype not implemented for {}, should be in dtype support list {}.",
                dtype_name(dtype),
                dtype_list(list)
            )));
        }
        p.require_max_dims(SELF, MAX_DIMS)?;
        let (s, o) = (p.desc(SELF), p.desc(OUT));
        if *o.dims != *s.dims {
            return Err(invalid(format!(
                "Expected tensor for out to have same size as tensor for self, but {:?} does \
                 not equal {:?}.",
                o.dims, s.dims
            )));
        }
        if o.dtype == ACL_INT4 && !s.is_contiguous() {
            return Err(invalid(
                "Input tensor must be contiguous if dst_type in INT4".into(),
            ));
        }
        if s.is_empty() {
            let decision = Decision::new(dtype, &s.dims, true);
            return p.finish(decision);
        }
        if o.dtype != dtype {
            return Err(fail(
                ACLNN_ERR_INNER_NULLPTR,
                format!(
                    "ViewCopy of the cast result into out fails: the result's dtype {} is not \
                     out's dtype {}",
                    dtype_name(dtype),
                    dtype_name(o.dtype)
                ),
            ));
        }
        let mut decision = Decision::new(dtype, &s.dims, false);
        // Contiguous (a non-contiguous self) or the cast (another dtype) writes a
        // temporary in the workspace; a contiguous self of out's dtype is moved as it is.
        let changed = s.dtype != dtype || !s.is_contiguous();
        decision.temporary(SELF, changed, dtype_size(dtype).unwrap_or(1))?;
        p.finish(decision)
    })
}

fn run(call: &KernelCall, scratch: &mut Scratch) -> Result<(), String> {
    convert_into(call, scratch, SELF, OUT)
}
