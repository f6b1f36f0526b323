//! `aclnnScatterAdd` (torch.scatter_add; ops-nn `index/scatter_elements_v2`, documented in
//! `index/scatter_add/docs/aclnnScatterAdd.md`): `out = self`, then
//! `out[p with p[dim] = index[p]] += src[p]` for every position `p` of index.
//!
//! Phase 1 in the vendor's order (`op_api/aclnn_scatter.cpp`, ScatterReduce with reduce
//! "add" and includeSelf), 161001 NULL, 161002 invalid:
//! 1. `workspaceSize` or `executor`, then self, index, src, out NULL;
//! 2. self's dtype outside U8, I8, I16, I32, I64, BOOL, F16, F32, F64, C64, C128 (+ BF16
//!    on Atlas A2 / A3); src's or out's dtype not self's; a non-empty index not I64/I32;
//! 3. index empty: success (out receives a copy of self; nothing else is checked);
//! 4. the ranks of self, index and src differ (a 0-D counts as 0 dims on A2/A3/910);
//! 5. out not 0-D and out's shape not self's; index larger than src on some dim;
//!    index larger than self on a dim other than `dim`; self above 8 dims;
//! 6. `dim` outside [−r, r−1] (for a 0-D self: [−1, 0]).
//!
//! Not modelled: the 950's "no transpose" path, which skips steps 3 to 6 (no 950 is
//! simulated). Storage formats other than ND are only a warning in the vendor's code.
//!
//! The kernel accumulates in f64 and rounds once to out's dtype (the vendor accumulates
//! F16/BF16 in F32 on A2/A3); integers are exact up to 2^53. CANN does not check the
//! index values; the simulator fails the launch naming the first outside [0, self[dim]).

use super::MAX_DIMS;
use super::entry_pair::entry_pair;
use super::gather::{INDEX_DTYPES, checked_indices, require_same_dtype};
use crate::nnopbase::{
    Arg, Attr, Decision, KernelCall, OpDef, OutParams, invalid, op_def, positions,
};
use crate::stream::Scratch;
use crate::tables::Family;
use ascend_sys::*;

positions!(SELF, INDEX, SRC, OUT);
// Attribute: the dim, normalised to [0, r).
positions!(DIM);

pub(crate) static SCATTER_ADD: OpDef = op_def!(
    "ScatterAdd",
    ["self", "index", "src", "out"],
    [SELF, INDEX, SRC] -> [OUT],
    scatter_add
);

entry_pair!(scatter_add_entries: "aclnnScatterAddGetWorkspaceSize"(
    self_: *const aclTensor, dim: i64, index: *const aclTensor, src: *const aclTensor,
    out: *mut aclTensor,
) => scatter_add_checks; "aclnnScatterAdd" => super::SCATTER_ADD);

fn dtypes(family: Family) -> &'static [aclDataType] {
    const LIST: &[aclDataType] = &[
        ACL_UINT8,
        ACL_INT8,
        ACL_INT16,
        ACL_INT32,
        ACL_INT64,
        ACL_BOOL,
        ACL_FLOAT16,
        ACL_FLOAT,
        ACL_DOUBLE,
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

/// The vendor's `CompareTensorShape`: over the leading dims both have, `b[k] >= a[k]`
/// except at `skip`.
fn no_larger(a: &[i64], b: &[i64], skip: Option<usize>) -> bool {
    a.iter()
        .zip(b)
        .enumerate()
        .all(|(k, (&x, &y))| Some(k) == skip || y >= x)
}

fn scatter_add_checks(
    self_: *const aclTensor,
    dim: i64,
    index: *const aclTensor,
    src: *const aclTensor,
    out: *mut aclTensor,
    outs: OutParams<'_>,
) -> aclnnStatus {
    let args = [
        Arg::Tensor(self_),
        Arg::Tensor(index),
        Arg::Tensor(src),
        Arg::Tensor(out),
    ];
    SCATTER_ADD.phase1(outs, &args, |p| {
        p.require_dtype(SELF, dtypes(p.family))?;
        require_same_dtype(&p, SELF, SRC)?;
        require_same_dtype(&p, SELF, OUT)?;
        let (x, i, s, o) = (p.desc(SELF), p.desc(INDEX), p.desc(SRC), p.desc(OUT));
        if !i.is_empty() {
            p.require_dtype(INDEX, INDEX_DTYPES)?;
        }
        let r = x.dims.len() as i64;
        if i.is_empty() {
            // out = a copy of self, when it can hold one.
            let copy = o.dims == x.dims && !x.is_empty();
            let mut decision = Decision::new(x.dtype, &o.dims, !copy);
            decision.attrs[DIM] = Attr::Int(0);
            return p.finish(decision);
        }
        if x.dims.len() != i.dims.len() || x.dims.len() != s.dims.len() {
            return Err(invalid(
                "expect self, index, src have same number of dimensions.".into(),
            ));
        }
        if !o.dims.is_empty() && o.dims != x.dims {
            return Err(invalid(format!(
                "out shape {:?} should be self shape {:?}",
                o.dims, x.dims
            )));
        }
        // The vendor clamps `dim` for this comparison; its range is checked after.
        let clamped = if dim < 0 { (dim + r).max(0) } else { dim.min(r - 1) };
        if !no_larger(&i.dims, &s.dims, None) {
            return Err(invalid(format!(
                "Expect index shape {:?} should be smaller than src shape {:?} in each dimension.",
                i.dims, s.dims
            )));
        }
        if !no_larger(&i.dims, &x.dims, usize::try_from(clamped).ok()) {
            return Err(invalid(format!(
                "Apart from dimension {dim}, index shape {:?} should be smaller than self shape {:?} in each dimension.",
                i.dims, x.dims
            )));
        }
        p.require_max_dims(SELF, MAX_DIMS)?;
        let (lo, hi) = ((-r).min(r - 1), (-r).max(r - 1));
        if dim < lo || dim > hi {
            return Err(invalid(format!("dim must be in range [{lo}, {hi}].")));
        }
        let d = if r == 0 { 0 } else { dim.rem_euclid(r) };
        let mut decision = Decision::new(x.dtype, &o.dims, x.is_empty());
        decision.attrs[DIM] = Attr::Int(d);
        p.finish(decision)
    })
}

/// Row-major strides of `dims`.
fn strides(dims: &[usize]) -> Vec<usize> {
    let mut st = vec![1usize; dims.len()];
    for k in (0..dims.len().saturating_sub(1)).rev() {
        st[k] = st[k + 1] * dims[k + 1];
    }
    st
}

fn scatter_add(call: &KernelCall, _scratch: &mut Scratch) -> Result<(), String> {
    let d = call.decision().attr_i64(DIM) as usize;
    let xd = call.dims(SELF).to_vec();
    let n = xd.iter().product::<usize>();
    if call.dims(INDEX).contains(&0) {
        let (bytes, _) = super::gather::bytes_of(call, SELF)?;
        return call.scatter_bytes(OUT, &bytes);
    }
    // Complex elements are pairs: accumulate each part (the index picks elements).
    let parts = match call.dtype(SELF)? {
        ACL_COMPLEX64 | ACL_COMPLEX128 => 2,
        _ => 1,
    };
    let size = xd.get(d).copied().unwrap_or(1);
    let idx = checked_indices(call, (INDEX, "index"), size, &format!("self's dim {d}"))?;
    let id = call.dims(INDEX).to_vec();
    let sd = call.dims(SRC).to_vec();
    let mut acc = vec![0f64; n * parts];
    read_parts(call, SELF, &xd, parts, &mut acc)?;
    let mut sv = vec![0f64; sd.iter().product::<usize>() * parts];
    read_parts(call, SRC, &sd, parts, &mut sv)?;
    let (xs, ss) = (strides(&xd), strides(&sd));
    let mut at = vec![0usize; id.len()];
    for &v in &idx {
        let (mut to, mut from) = (0, 0);
        for (a, &c) in at.iter().enumerate() {
            to += if a == d { v } else { c } * xs[a];
            from += c * ss[a];
        }
        for q in 0..parts {
            acc[to * parts + q] += sv[from * parts + q];
        }
        // The next row-major position of index.
        for a in (0..at.len()).rev() {
            at[a] += 1;
            if at[a] < id[a] {
                break;
            }
            at[a] = 0;
        }
    }
    if parts == 1 {
        return call.write_f64(OUT, &acc);
    }
    write_complex(call, &acc)
}

/// Argument `arg`'s elements as f64 (complex ones as (re, im) pairs).
fn read_parts(
    call: &KernelCall,
    arg: usize,
    dims: &[usize],
    parts: usize,
    dst: &mut [f64],
) -> Result<(), String> {
    if parts == 1 {
        return call.read_f64(arg, dims, dst);
    }
    let (bytes, esz) = super::gather::bytes_of(call, arg)?;
    let half = esz / 2;
    for (k, v) in dst.iter_mut().enumerate() {
        let b = &bytes[k * half..(k + 1) * half];
        *v = if half == 4 {
            f64::from(f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        } else {
            f64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]])
        };
    }
    Ok(())
}

/// Writes (re, im) pairs to out's complex elements.
fn write_complex(call: &KernelCall, acc: &[f64]) -> Result<(), String> {
    let half = call.elem_size(OUT)? / 2;
    let mut bytes = Vec::with_capacity(acc.len() * half);
    for &v in acc {
        if half == 4 {
            bytes.extend_from_slice(&(v as f32).to_le_bytes());
        } else {
            bytes.extend_from_slice(&v.to_le_bytes());
        }
    }
    call.scatter_bytes(OUT, &bytes)
}
