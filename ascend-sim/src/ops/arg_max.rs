//! `aclnnArgMax` (ops-math `math/arg_max_v2`): the position of the maximum of self along
//! `dim`, the dim dropped or kept as 1 (`keepdim`), cast to out's dtype (INT64 as torch;
//! INT32 too).
//!
//! Phase-1 checks in the vendor's order:
//! 1. self or out NULL, then `workspaceSize` or `executor` NULL: 161001;
//! 2. self's dtype outside FLOAT, FLOAT16, DOUBLE, INT8, INT16, INT32, INT64, UINT8 (plus
//!    BF16 on Atlas A2 / A3 and 310B): 161002 (out's dtype is not checked: the chain
//!    casts the indices to it);
//! 3. self, then out above 8 dims: 161002;
//! 4. `dim` outside [−r, r−1] (r = rank; [−1, 0] for a 0-D self): 161002;
//! 5. an empty self or out: success, workspace 0, nothing computed (no shape checked);
//! 6. the result's shape not out's, unless both have one element: 161002.
//!
//! Every product runs it. The first maximum wins a tie; a NaN is the maximum (the first
//! NaN), as torch. Values are compared in f64 (exact for every dtype but INT64 beyond
//! 2^53). Reducing the last dim walks each contiguous row; any other dim is walked as
//! whole rows of the dims after it, so the inner loop runs over contiguous memory.

use super::MAX_DIMS;
use crate::catalog::{Entry, Slot};
use crate::nnopbase::{
    Arg, Attr, Decision, KernelCall, OpDef, OutParams, Phase1, invalid, positions, release_on_fault,
};
use crate::slab::Dims64;
use crate::stream::Scratch;
use crate::tables::Family;
use ascend_sys::*;
use std::ffi::c_void;

positions!(SELF, OUT);
// Attribute: the reduced dim, normalised (0 for a 0-D self).
positions!(DIM);

pub(crate) static OP: OpDef = OpDef {
    name: "ArgMax",
    launch_api: "aclnnArgMax",
    args: &["self", "out"],
    inputs: &[SELF],
    outputs: &[OUT],
    available: crate::nnopbase::every_product,
    kernel: run,
};

static PHASE1: Slot = Slot::new("aclnnArgMaxGetWorkspaceSize");
static PHASE2: Slot = Slot::new("aclnnArgMax");

/// The entry points, for the catalog.
pub(crate) static ENTRIES: &[Entry] = &[
    Entry {
        name: "aclnnArgMaxGetWorkspaceSize",
        address: || phase1 as *const c_void,
    },
    Entry {
        name: "aclnnArgMax",
        address: || phase2 as *const c_void,
    },
];

/// Simulated `aclnnArgMaxGetWorkspaceSize`.
///
/// # Safety
/// The C function's contract: each pointer NULL or valid for its access.
#[cfg_attr(
    feature = "c-exports",
    unsafe(export_name = "aclnnArgMaxGetWorkspaceSize")
)]
pub unsafe extern "C" fn phase1(
    self_: *const aclTensor,
    dim: i64,
    keepdim: bool,
    out: *mut aclTensor,
    workspace_size: *mut u64,
    executor: *mut *mut aclOpExecutor,
) -> aclnnStatus {
    let code = crate::introspect::fault_code_at(PHASE1.index());
    crate::state::entry(&PHASE1, code, move || {
        // SAFETY: by the caller's C contract each out-parameter is NULL or writable and
        // unaliased until this call returns.
        let outs = unsafe { OutParams::new(workspace_size, executor) };
        get_workspace_size(self_, dim, keepdim, out, outs)
    })
}

/// Simulated `aclnnArgMax`.
///
/// # Safety
/// The C function's contract: each pointer NULL or valid for its access.
#[cfg_attr(feature = "c-exports", unsafe(export_name = "aclnnArgMax"))]
pub unsafe extern "C" fn phase2(
    workspace: *mut c_void,
    workspace_size: u64,
    executor: *mut aclOpExecutor,
    stream: aclrtStream,
) -> aclnnStatus {
    crate::state::entry_with_fault_effect(
        &PHASE2,
        crate::introspect::fault_code_at(PHASE2.index()),
        move || release_on_fault(executor),
        move || crate::nnopbase::phase2(&OP, workspace, workspace_size, executor, stream),
    )
}

/// Self's dtypes: Atlas A2 / A3 and 310B add BF16.
fn dtypes(family: Family) -> &'static [aclDataType] {
    const ALL: &[aclDataType] = &[
        ACL_FLOAT,
        ACL_FLOAT16,
        ACL_DOUBLE,
        ACL_INT8,
        ACL_INT16,
        ACL_INT32,
        ACL_INT64,
        ACL_UINT8,
        ACL_BF16,
    ];
    match family {
        Family::Training | Family::Inference310P => &ALL[..ALL.len() - 1],
        _ => ALL,
    }
}

fn get_workspace_size(
    self_: *const aclTensor,
    dim: i64,
    keepdim: bool,
    out: *const aclTensor,
    outs: OutParams<'_>,
) -> aclnnStatus {
    let args = [Arg::Tensor(self_), Arg::Tensor(out)];
    let checks = |p: Phase1<'_>| {
        p.require_dtype(SELF, dtypes(p.family))?;
        p.require_max_dims(SELF, MAX_DIMS)?;
        p.require_max_dims(OUT, MAX_DIMS)?;
        let (x, o) = (p.desc(SELF).clone(), p.desc(OUT).clone());
        let r = x.dims.len() as i64;
        let (lo, hi) = if r == 0 { (-1, 0) } else { (-r, r - 1) };
        if !(lo..=hi).contains(&dim) {
            return Err(invalid(format!(
                "dim should within the range of [[{lo}], [{hi}]], got {dim}"
            )));
        }
        if x.is_empty() || o.is_empty() {
            return p.finish(Decision::new(x.dtype, &o.dims, true));
        }
        let d = dim.rem_euclid(r.max(1)) as usize;
        let mut kept = [0i64; MAX_DIMS];
        let mut n = 0;
        for (k, &s) in x.dims.iter().enumerate() {
            if k != d || keepdim {
                kept[n] = if k == d { 1 } else { s };
                n += 1;
            }
        }
        if r == 0 && keepdim {
            // The 0-D self is reshaped to [1] first.
            kept[0] = 1;
            n = 1;
        }
        let shape = Dims64::from_slice(&kept[..n]);
        let one = |s: &[i64]| s.iter().product::<i64>() == 1;
        if *o.dims != *shape && !(one(&o.dims) && one(&shape)) {
            return Err(invalid(format!(
                "out shape {:?} is not the result shape {shape:?}",
                o.dims
            )));
        }
        let mut decision = Decision::new(x.dtype, &o.dims, false);
        decision.attrs[DIM] = Attr::Int(d as i64);
        p.finish(decision)
    };
    OP.phase1(outs, &args, checks)
}

/// Whether `v` replaces the best so far `m` (a NaN is the maximum; the first wins ties).
#[inline]
fn beats(v: f64, m: f64) -> bool {
    !m.is_nan() && (v > m || v.is_nan())
}

fn run(call: &KernelCall, scratch: &mut Scratch) -> Result<(), String> {
    let d = call.decision().attr_i64(DIM) as usize;
    let xd = call.dims(SELF).to_vec();
    let n = xd.iter().product::<usize>();
    let (outer, len, inner) = if xd.is_empty() {
        (1, 1, 1)
    } else {
        (
            xd[..d].iter().product::<usize>(),
            xd[d],
            xd[d + 1..].iter().product::<usize>(),
        )
    };
    let m = outer * inner;
    let [x, best, at] = scratch.wide::<3>(n);
    call.read_f64(SELF, &xd, x)?;
    if inner == 1 {
        for (row, a) in x.chunks_exact(len).zip(at.iter_mut()) {
            let (mut mx, mut k_m) = (row[0], 0usize);
            for (k, &v) in row.iter().enumerate().skip(1) {
                if beats(v, mx) {
                    (mx, k_m) = (v, k);
                }
            }
            *a = k_m as f64;
        }
    } else {
        for o in 0..outer {
            let block = &x[o * len * inner..(o + 1) * len * inner];
            let (b, a) = (
                &mut best[o * inner..(o + 1) * inner],
                &mut at[o * inner..(o + 1) * inner],
            );
            b.copy_from_slice(&block[..inner]);
            a.fill(0.0);
            for k in 1..len {
                let row = &block[k * inner..(k + 1) * inner];
                for ((bv, av), &v) in b.iter_mut().zip(a.iter_mut()).zip(row) {
                    if beats(v, *bv) {
                        (*bv, *av) = (v, k as f64);
                    }
                }
            }
        }
    }
    call.write_f64(OUT, &at[..m])
}
