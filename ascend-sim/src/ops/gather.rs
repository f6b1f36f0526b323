//! `aclnnGather` (torch.gather; ops-nn `index/gather_elements_v2`) and `aclnnIndexSelect`
//! (ops-nn `index/gather_v2`): elements of self picked by an integer index.
//!
//! Gather's phase-1 checks in the vendor's order (161001 NULL, 161002 invalid):
//! 1. `workspaceSize` or `executor`, then self, index, out NULL;
//! 2. self's dtype outside FLOAT, INT32, FLOAT16, INT8, DOUBLE, INT16, INT64, UINT64,
//!    UINT32, UINT16, UINT8, BOOL (+ BF16 on Atlas A2 / A3); a non-empty index not INT64
//!    or INT32; out's dtype not self's;
//! 3. the ranks of self and index differ (a 0-D counts as 1-D); self, index or out above
//!    8 dims; out's shape not index's; `dim` outside [−r, r−1]; unless index is empty:
//!    `index[d] > self[d]` on an axis `d != dim`, or `self[dim] == 0`;
//! 4. self or index empty: success, workspace 0.
//!
//! `out[p] = self[p with p[dim] replaced by index[p]]`. Storage formats are not checked.
//!
//! IndexSelect's, in the vendor's order:
//! 1. `workspaceSize` or `executor`, then self, index, out NULL;
//! 2. self's dtype outside FLOAT, INT32, INT64, FLOAT16, INT16, INT8, UINT8, BOOL, UINT64,
//!    UINT32, UINT16, DOUBLE, COMPLEX64, COMPLEX128, BF16; BF16 off Atlas A2 / A3; out's
//!    dtype not self's; index not INT32 or INT64;
//! 3. a private storage format on self, index or out;
//! 4. a 0-D self with an out that is not 0-D; self above 8 dims; `dim` outside
//!    [−r, r−1] (r = 1 for a 0-D self); index above 1 dim; when self and index are both
//!    non-empty, out's shape not self's with `[dim]` = index's length (1 for a 0-D index);
//! 5. self or index empty: success, workspace 0.
//!
//! `out[.., j, ..] = self[.., index[j], ..]` along `dim`.
//!
//! Both copy elements bit for bit. CANN does not check the index values: out of range,
//! its kernels read outside self. The simulator fails the launch instead, naming the
//! first offending index, its position and the valid range [0, size) (negative indices
//! are refused too: CANN documents none).

use super::MAX_DIMS;
use super::entry_pair::entry_pair;
use super::random::refuse_private_formats;
use crate::nnopbase::{
    Arg, Attr, Decision, KernelCall, OpDef, OutParams, Phase1, invalid, op_def, positions,
};
use crate::stream::Scratch;
use crate::tables::{Family, dtype_name};
use ascend_sys::*;

positions!(SELF, INDEX, OUT);
// Attribute: the dim, normalised to [0, r).
positions!(DIM);

pub(crate) static GATHER: OpDef =
    op_def!("Gather", ["self", "index", "out"], [SELF, INDEX] -> [OUT], gather);
pub(crate) static INDEX_SELECT: OpDef =
    op_def!("IndexSelect", ["self", "index", "out"], [SELF, INDEX] -> [OUT], index_select);

entry_pair!(gather_entries: "aclnnGatherGetWorkspaceSize"(
    self_: *const aclTensor, dim: i64, index: *const aclTensor, out: *mut aclTensor,
) => gather_checks; "aclnnGather" => super::GATHER);
entry_pair!(index_select_entries: "aclnnIndexSelectGetWorkspaceSize"(
    self_: *const aclTensor, dim: i64, index: *const aclTensor, out: *mut aclTensor,
) => index_select_checks; "aclnnIndexSelect" => super::INDEX_SELECT);

/// The integer index dtypes.
pub(super) const INDEX_DTYPES: &[aclDataType] = &[ACL_INT64, ACL_INT32];

fn gather_dtypes(family: Family) -> &'static [aclDataType] {
    const LIST: &[aclDataType] = &[
        ACL_FLOAT,
        ACL_INT32,
        ACL_FLOAT16,
        ACL_INT8,
        ACL_DOUBLE,
        ACL_INT16,
        ACL_INT64,
        ACL_UINT64,
        ACL_UINT32,
        ACL_UINT16,
        ACL_UINT8,
        ACL_BOOL,
        ACL_BF16,
    ];
    if family.has_bf16() {
        LIST
    } else {
        &LIST[..LIST.len() - 1]
    }
}

const INDEX_SELECT_DTYPES: &[aclDataType] = &[
    ACL_FLOAT,
    ACL_INT32,
    ACL_INT64,
    ACL_FLOAT16,
    ACL_INT16,
    ACL_INT8,
    ACL_UINT8,
    ACL_BOOL,
    ACL_UINT64,
    ACL_UINT32,
    ACL_UINT16,
    ACL_DOUBLE,
    ACL_COMPLEX64,
    ACL_COMPLEX128,
    ACL_BF16,
];

/// Fails with 161002 unless argument `b`'s dtype is argument `a`'s.
pub(super) fn require_same_dtype(p: &Phase1<'_>, a: usize, b: usize) -> Result<(), i32> {
    let (x, y) = (p.desc(a).dtype, p.desc(b).dtype);
    if x == y {
        return Ok(());
    }
    let names = p.op().args;
    Err(invalid(format!(
        "{} dtype {} should be the same as {} dtype {}",
        names[b],
        dtype_name(y),
        names[a],
        dtype_name(x)
    )))
}

/// `dim` normalised into [0, r), or 161002 naming the range.
pub(super) fn normalise_dim(dim: i64, r: i64) -> Result<i64, i32> {
    if dim < -r || dim >= r {
        return Err(invalid(format!(
            "Dimension out of range (expected to be in range of [{}, {}], but got {dim})",
            -r,
            r - 1
        )));
    }
    Ok(dim.rem_euclid(r))
}

fn gather_checks(
    self_: *const aclTensor,
    dim: i64,
    index: *const aclTensor,
    out: *mut aclTensor,
    outs: OutParams<'_>,
) -> aclnnStatus {
    let args = [Arg::Tensor(self_), Arg::Tensor(index), Arg::Tensor(out)];
    GATHER.phase1(outs, &args, |p| {
        p.require_dtype(SELF, gather_dtypes(p.family))?;
        let (x, i, o) = (p.desc(SELF), p.desc(INDEX), p.desc(OUT));
        if !i.is_empty() {
            p.require_dtype(INDEX, INDEX_DTYPES)?;
        }
        require_same_dtype(&p, SELF, OUT)?;
        let r = x.dims.len().max(1) as i64;
        if r != i.dims.len().max(1) as i64 {
            return Err(invalid(
                "Index tensor must have the same number of dimensions as input tensor.".into(),
            ));
        }
        for a in [SELF, INDEX, OUT] {
            p.require_max_dims(a, MAX_DIMS)?;
        }
        if o.dims != i.dims {
            return Err(invalid(format!(
                "out shape {:?} should be index shape {:?}",
                o.dims, i.dims
            )));
        }
        let d = normalise_dim(dim, r)?;
        if !i.is_empty() {
            for (k, (&s, &n)) in x.dims.iter().zip(i.dims.iter()).enumerate() {
                if k as i64 != d && n > s {
                    return Err(invalid(format!(
                        "Size does not match at dimension {k}, expected index shape {n} smaller than self shape {s}"
                    )));
                }
                if k as i64 == d && s == 0 {
                    return Err(invalid(format!(
                        "Size does not match at dimension {k}, expected index shape to be 0"
                    )));
                }
            }
        }
        let mut decision = Decision::new(x.dtype, &o.dims, x.is_empty() || i.is_empty());
        decision.attrs[DIM] = Attr::Int(d);
        p.finish(decision)
    })
}

fn index_select_checks(
    self_: *const aclTensor,
    dim: i64,
    index: *const aclTensor,
    out: *mut aclTensor,
    outs: OutParams<'_>,
) -> aclnnStatus {
    let args = [Arg::Tensor(self_), Arg::Tensor(index), Arg::Tensor(out)];
    INDEX_SELECT.phase1(outs, &args, |p| {
        p.require_dtype(SELF, INDEX_SELECT_DTYPES)?;
        if p.desc(SELF).dtype == ACL_BF16 && !p.family.has_bf16() {
            return Err(invalid(format!("{} does not support BF16", p.soc)));
        }
        require_same_dtype(&p, SELF, OUT)?;
        p.require_dtype(INDEX, INDEX_DTYPES)?;
        refuse_private_formats(&p, &[SELF, INDEX, OUT])?;
        let (x, i, o) = (p.desc(SELF), p.desc(INDEX), p.desc(OUT));
        if x.dims.is_empty() && !o.dims.is_empty() {
            return Err(invalid(
                "self is scalar, and out should also be scalar".into(),
            ));
        }
        p.require_max_dims(SELF, MAX_DIMS)?;
        let d = normalise_dim(dim, x.dims.len().max(1) as i64)?;
        if i.dims.len() > 1 {
            return Err(invalid(format!(
                "index dimNum is {}, should not greater than 1",
                i.dims.len()
            )));
        }
        let len = i.dims.first().copied().unwrap_or(1);
        let mut want = x.dims.clone();
        if let Some(w) = want.get_mut(d as usize) {
            *w = len;
        }
        let empty = x.is_empty() || i.is_empty();
        if !empty && o.dims != want {
            return Err(invalid(format!(
                "Shape of out should be {want:?}, but current is {:?}.",
                o.dims
            )));
        }
        let mut decision = Decision::new(x.dtype, &o.dims, empty);
        decision.attrs[DIM] = Attr::Int(d);
        p.finish(decision)
    })
}

/// Argument `arg`'s values as integers (row-major over its dims), each checked to lie in
/// [0, `size`): the first that does not fails the launch with its position.
pub(super) fn checked_indices(
    call: &KernelCall,
    (arg, name): (usize, &str),
    size: usize,
    what: &str,
) -> Result<Vec<usize>, String> {
    let dims = call.dims(arg).to_vec();
    let n = dims.iter().product::<usize>();
    let mut v = vec![0f64; n];
    call.read_f64(arg, &dims, &mut v)?;
    let mut out = Vec::with_capacity(n);
    for (k, &x) in v.iter().enumerate() {
        if !(x >= 0.0 && x < size as f64) {
            return Err(format!(
                "{}: {} value {x} at {:?} is outside [0, {size}) ({what}); CANN does not check \
                 it and would read or write outside the tensor",
                call.api(),
                name,
                position(&dims, k)
            ));
        }
        out.push(x as usize);
    }
    Ok(out)
}

/// The coordinates of row-major element `k` of `dims`.
pub(super) fn position(dims: &[usize], mut k: usize) -> Vec<usize> {
    let mut at = vec![0; dims.len()];
    for (a, &d) in at.iter_mut().zip(dims).rev() {
        if d > 0 {
            *a = k % d;
            k /= d;
        }
    }
    at
}

/// Argument `arg`'s elements, row-major, as raw bytes, and its element size.
pub(super) fn bytes_of(call: &KernelCall, arg: usize) -> Result<(Vec<u8>, usize), String> {
    let esz = call.elem_size(arg)?;
    let n = call.dims(arg).iter().product::<usize>();
    let mut b = vec![0u8; n * esz];
    call.read_bytes(arg, &mut b)?;
    Ok((b, esz))
}

fn gather(call: &KernelCall, _scratch: &mut Scratch) -> Result<(), String> {
    let d = call.decision().attr_i64(DIM) as usize;
    let one = [1usize];
    let sd = match call.dims(SELF) {
        [] => &one[..],
        s => s,
    };
    let size = sd[d];
    let idx = checked_indices(call, (INDEX, "index"), size, &format!("self's dim {d}"))?;
    let id = match call.dims(INDEX) {
        [] => one.to_vec(),
        s => s.to_vec(),
    };
    let (src, esz) = bytes_of(call, SELF)?;
    let mut stride = vec![1usize; sd.len()];
    for k in (0..sd.len().saturating_sub(1)).rev() {
        stride[k] = stride[k + 1] * sd[k + 1];
    }
    let mut out = vec![0u8; idx.len() * esz];
    let mut at = vec![0usize; id.len()];
    for (k, &v) in idx.iter().enumerate() {
        let from: usize = at
            .iter()
            .enumerate()
            .map(|(a, &c)| if a == d { v } else { c } * stride[a])
            .sum();
        out[k * esz..(k + 1) * esz].copy_from_slice(&src[from * esz..(from + 1) * esz]);
        // The next row-major position of index.
        for a in (0..at.len()).rev() {
            at[a] += 1;
            if at[a] < id[a] {
                break;
            }
            at[a] = 0;
        }
    }
    call.scatter_bytes(OUT, &out)
}

fn index_select(call: &KernelCall, _scratch: &mut Scratch) -> Result<(), String> {
    let d = call.decision().attr_i64(DIM) as usize;
    let sd = call.dims(SELF).to_vec();
    let len = sd.get(d).copied().unwrap_or(1);
    let idx = checked_indices(call, (INDEX, "index"), len, &format!("self's dim {d}"))?;
    if sd.is_empty() && idx.len() != 1 {
        return Err(format!(
            "aclnnIndexSelect: a 0-D self takes one index, got {}",
            idx.len()
        ));
    }
    let outer = sd.get(..d).map_or(1, |s| s.iter().product::<usize>());
    let inner = sd.get(d + 1..).map_or(1, |s| s.iter().product::<usize>());
    let (src, esz) = bytes_of(call, SELF)?;
    let row = inner * esz;
    let m = idx.len();
    let mut out = vec![0u8; outer * m * row];
    for o in 0..outer {
        for (j, &v) in idx.iter().enumerate() {
            let from = (o * len + v) * row;
            let to = (o * m + j) * row;
            out[to..to + row].copy_from_slice(&src[from..from + row]);
        }
    }
    call.scatter_bytes(OUT, &out)
}
