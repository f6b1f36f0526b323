//! `aclnnSWhere` (torch.where; ops-math `math/select`): `out = condition ? self : other`
//! elementwise, the three inputs broadcast together to out's shape.
//!
//! Phase-1 checks in the vendor's order (`op_api/aclnn_s_where.cpp`), 161001 NULL,
//! 161002 invalid:
//! 1. `workspaceSize` or `executor`, then self, other, condition, out NULL (the vendor's
//!    order, not the parameters');
//! 2. self's, other's, then out's dtype outside FLOAT, INT32, UINT64, INT64, UINT32,
//!    FLOAT16, UINT16, INT16, INT8, UINT8, DOUBLE, BOOL, COMPLEX64, COMPLEX128 (+ BF16 on
//!    Atlas A2 / A3); condition's outside BOOL, UINT8;
//! 3. self, other or condition above 8 dims (out's rank is not checked: it must equal the
//!    broadcast shape's);
//! 4. self and other not broadcastable, then condition not broadcastable with their
//!    shape, then out's shape not the broadcast of the three;
//! 5. self, condition or other empty: success, workspace 0.
//!
//! The vendor checks neither that self and other promote nor that the promote dtype casts
//! to out's: it casts both inputs to `PromoteType(self, other)` and the selection to out's
//! dtype, whatever it is (a DOUBLE selection into an INT8 out truncates). Where the promote
//! is undefined (a UINT16 self with an INT8 other) that Cast fails, after the empty check,
//! with 561103, which the simulator reports at the same point. Two BOOL inputs select as
//! INT8 views, bit for bit, as a BOOL promote does. Storage formats are not checked.
//!
//! The kernel: condition cast to BOOL (UINT8 nonzero is true), self and other converted to
//! the promote dtype, the selection converted once to out's dtype by the device's cast.
//! Every product runs it.

use super::MAX_DIMS;
use super::checks::require_out_broadcast;
use super::entry_pair::entry_pair;
use crate::nnopbase::{
    Decision, KernelCall, OpDef, OutParams, Phase1, broadcast, invalid, op_def, positions,
    require_non_null,
};
use crate::state::{fail, status_of};
use crate::stream::Scratch;
use crate::tables::{Family, dtype_name, dtype_size, promote_type};
use ascend_sys::*;

positions!(CONDITION, SELF, OTHER, OUT);

pub(crate) static S_WHERE: OpDef = op_def!(
    "SWhere",
    ["condition", "self", "other", "out"],
    [CONDITION, SELF, OTHER] -> [OUT],
    s_where
);

entry_pair!(s_where_entries: "aclnnSWhereGetWorkspaceSize"(
    condition: *const aclTensor, self_: *const aclTensor, other: *const aclTensor,
    out: *const aclTensor,
) => checks; "aclnnSWhere" => super::S_WHERE);

/// The dtypes of self, other and out: the Atlas A2 / A3 list adds BF16.
fn data_dtypes(family: Family) -> &'static [aclDataType] {
    const LIST: &[aclDataType] = &[
        ACL_FLOAT,
        ACL_INT32,
        ACL_UINT64,
        ACL_INT64,
        ACL_UINT32,
        ACL_FLOAT16,
        ACL_UINT16,
        ACL_INT16,
        ACL_INT8,
        ACL_UINT8,
        ACL_DOUBLE,
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

const CONDITION_DTYPES: &[aclDataType] = &[ACL_BOOL, ACL_UINT8];

fn checks(
    condition: *const aclTensor,
    self_: *const aclTensor,
    other: *const aclTensor,
    out: *const aclTensor,
    outs: OutParams<'_>,
) -> aclnnStatus {
    status_of(|| {
        let outs = outs.slots()?;
        require_non_null(&[
            (self_ as usize, "self"),
            (other as usize, "other"),
            (condition as usize, "condition"),
            (out as usize, "out"),
        ])?;
        let p = Phase1::begin(&S_WHERE, &[condition, self_, other, out], outs)?;
        let list = data_dtypes(p.family);
        p.require_dtype(SELF, list)?;
        p.require_dtype(OTHER, list)?;
        p.require_dtype(OUT, list)?;
        p.require_dtype(CONDITION, CONDITION_DTYPES)?;
        for a in [SELF, OTHER, CONDITION] {
            p.require_max_dims(a, MAX_DIMS)?;
        }
        let (c, x, y, o) = (p.desc(CONDITION), p.desc(SELF), p.desc(OTHER), p.desc(OUT));
        let Some(pair) = broadcast(&x.dims, &y.dims) else {
            return Err(invalid(format!(
                "self shape {:?} and other shape {:?} can not broadcast",
                x.dims, y.dims
            )));
        };
        let Some(all) = broadcast(&c.dims, &pair) else {
            return Err(invalid(format!(
                "Shape of self other and condition can't broadcast: condition {:?} with {:?}",
                c.dims, pair
            )));
        };
        require_out_broadcast(&o.dims, &all)?;
        if x.is_empty() || c.is_empty() || y.is_empty() {
            let decision = Decision::new(o.dtype, &o.dims, true);
            return p.finish(decision);
        }
        let promote = if x.dtype == ACL_BOOL && y.dtype == ACL_BOOL {
            ACL_BOOL
        } else {
            promote_type(x.dtype, y.dtype).ok_or_else(|| {
                fail(
                    ACLNN_ERR_INNER_NULLPTR,
                    format!(
                        "Cast of self ({}) to the promote dtype of self and other ({}) fails: \
                         they do not promote",
                        dtype_name(x.dtype),
                        dtype_name(y.dtype)
                    ),
                )
            })?
        };
        if !crate::cast::supported(promote, o.dtype) {
            return Err(fail(
                ACLNN_ERR_INNER_NULLPTR,
                format!(
                    "Cast of the selection ({}) to out's dtype {} fails",
                    dtype_name(promote),
                    dtype_name(o.dtype)
                ),
            ));
        }
        let dims = o.dims.clone();
        p.finish(Decision::new(promote, &dims, false))
    })
}

fn s_where(call: &KernelCall, _scratch: &mut Scratch) -> Result<(), String> {
    let d = call.decision();
    let (n, promote) = (d.numel(), d.compute);
    let size = dtype_size(promote).ok_or("no element size")?;
    let mut keep = vec![0u8; n];
    call.gather_as(CONDITION, ACL_BOOL, &mut keep)?;
    let mut a = vec![0u8; n * size];
    let mut b = vec![0u8; n * size];
    call.gather_as(SELF, promote, &mut a)?;
    call.gather_as(OTHER, promote, &mut b)?;
    for ((x, y), &k) in a
        .chunks_exact_mut(size)
        .zip(b.chunks_exact(size))
        .zip(&keep)
    {
        if k == 0 {
            x.copy_from_slice(y);
        }
    }
    let to = call.dtype(OUT)?;
    if to == promote {
        return call.scatter_bytes(OUT, &a);
    }
    let out_size = call.elem_size(OUT)?;
    let mut out = vec![0u8; n * out_size];
    for (o, x) in out.chunks_exact_mut(out_size).zip(a.chunks_exact(size)) {
        crate::cast::convert(promote, x, to, o);
    }
    call.scatter_bytes(OUT, &out)
}
