//! `aclnnMean` (ops-math `math/reduce_mean`): the mean of self over `dim` (every dim when
//! `dim` is empty), kept as 1 with `keepDim`, computed in `dtype` and cast to out.
//!
//! Phase-1 checks in the vendor's order:
//! 1. self, dim or out NULL, then `workspaceSize` or `executor` NULL: 161001;
//! 2. self's dtype, `dtype`, then out's dtype outside FLOAT, INT32, INT64, FLOAT16, INT16,
//!    INT8, UINT8, DOUBLE, COMPLEX64, COMPLEX128 (plus BF16 on Atlas A2 / A3): 161002;
//! 3. self's dtype not castable to `dtype`, or `dtype` not castable to out's: 161002;
//! 4. a dim outside [−r, r−1] (r = max(rank, 1)) or repeated after wrapping: 161002;
//! 5. self, then out above 8 dims: 161002;
//! 6. an empty self: out is filled with NaN (0 in an integer out; a complex out is
//!    refused, 161002), workspace 0, out's shape not checked;
//! 7. the reduced shape not out's, unless both have one element: 161002.
//!
//! Every product runs it. The chain casts self to `dtype`, averages, and casts to out. The
//! vendor's accumulation order is not documented: the simulator sums in f64 and rounds the
//! mean once to `dtype` (integers: truncated toward zero). Reducing trailing dims sums
//! contiguous rows (a loop the compiler vectorises); other dims are summed as whole rows
//! of the dims after them. Complex means are not modeled (561000).

use super::MAX_DIMS;
use super::checks::{is_complex, unmodeled_complex};
use crate::cast::round;
use crate::catalog::{Entry, Slot};
use crate::nnopbase::{
    Arg, Attr, Decision, KernelCall, OpDef, OutParams, Phase1, invalid, positions, release_on_fault,
};
use crate::slab::{Dims64, Shape};
use crate::stream::Scratch;
use crate::tables::{Family, can_cast, dtype_list, dtype_name};
use ascend_sys::*;
use std::ffi::c_void;

positions!(SELF, OUT);
// Attribute: the reduced dims as a bit mask (-1: fill out with NaN).
positions!(MASK);

pub(crate) static OP: OpDef = OpDef {
    name: "Mean",
    launch_api: "aclnnMean",
    args: &["self", "out"],
    inputs: &[SELF],
    outputs: &[OUT],
    available: crate::nnopbase::every_product,
    kernel: run,
};

static PHASE1: Slot = Slot::new("aclnnMeanGetWorkspaceSize");
static PHASE2: Slot = Slot::new("aclnnMean");

/// The entry points, for the catalog.
pub(crate) static ENTRIES: &[Entry] = &[
    Entry {
        name: "aclnnMeanGetWorkspaceSize",
        address: || phase1 as *const c_void,
    },
    Entry {
        name: "aclnnMean",
        address: || phase2 as *const c_void,
    },
];

/// Simulated `aclnnMeanGetWorkspaceSize`.
///
/// # Safety
/// The C function's contract: each pointer NULL or valid for its access.
#[cfg_attr(
    feature = "c-exports",
    unsafe(export_name = "aclnnMeanGetWorkspaceSize")
)]
pub unsafe extern "C" fn phase1(
    self_: *const aclTensor,
    dim: *const aclIntArray,
    keep_dim: bool,
    dtype: aclDataType,
    out: *mut aclTensor,
    workspace_size: *mut u64,
    executor: *mut *mut aclOpExecutor,
) -> aclnnStatus {
    let code = crate::introspect::fault_code_at(PHASE1.index());
    crate::state::entry(&PHASE1, code, move || {
        // SAFETY: by the caller's C contract each out-parameter is NULL or writable and
        // unaliased until this call returns.
        let outs = unsafe { OutParams::new(workspace_size, executor) };
        get_workspace_size(self_, dim, keep_dim, dtype, out, outs)
    })
}

/// Simulated `aclnnMean`.
///
/// # Safety
/// The C function's contract: each pointer NULL or valid for its access.
#[cfg_attr(feature = "c-exports", unsafe(export_name = "aclnnMean"))]
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

/// The dtypes of self, `dtype` and out: Atlas A2 / A3 add BF16.
fn dtypes(family: Family) -> &'static [aclDataType] {
    const ALL: &[aclDataType] = &[
        ACL_FLOAT,
        ACL_INT32,
        ACL_INT64,
        ACL_FLOAT16,
        ACL_INT16,
        ACL_INT8,
        ACL_UINT8,
        ACL_DOUBLE,
        ACL_COMPLEX64,
        ACL_COMPLEX128,
        ACL_BF16,
    ];
    if family.has_bf16() {
        ALL
    } else {
        &ALL[..ALL.len() - 1]
    }
}

fn get_workspace_size(
    self_: *const aclTensor,
    dim: *const aclIntArray,
    keep_dim: bool,
    dtype: aclDataType,
    out: *const aclTensor,
    outs: OutParams<'_>,
) -> aclnnStatus {
    let args = [
        Arg::Tensor(self_),
        Arg::object(dim, "dim"),
        Arg::Tensor(out),
    ];
    let checks = |p: Phase1<'_>| {
        let dims = p.int_array(dim, "dim")?;
        let list = dtypes(p.family);
        p.require_dtype(SELF, list)?;
        if !list.contains(&dtype) {
            return Err(invalid(format!(
                "dtype {} should be in {}",
                dtype_name(dtype),
                dtype_list(list)
            )));
        }
        p.require_dtype(OUT, list)?;
        let (x, o) = (p.desc(SELF).clone(), p.desc(OUT).clone());
        for (from, to) in [(x.dtype, dtype), (dtype, o.dtype)] {
            if !can_cast(from, to) {
                return Err(invalid(format!(
                    "{} can not cast to {}",
                    dtype_name(from),
                    dtype_name(to)
                )));
            }
        }
        let rank = x.dims.len() as i64;
        let r = rank.max(1);
        let mut mask = 0u32;
        for &d in dims.iter() {
            if !(-r..r).contains(&d) {
                return Err(invalid(format!(
                    "dim {d} is out of range [{}, {}]",
                    -r,
                    r - 1
                )));
            }
            let bit = 1 << d.rem_euclid(r);
            if mask & bit != 0 {
                return Err(invalid(format!(
                    "dim {d} appears more than once in {:?}",
                    &*dims
                )));
            }
            mask |= bit;
        }
        if dims.is_empty() {
            mask = (1u32 << rank) - 1;
        }
        p.require_max_dims(SELF, MAX_DIMS)?;
        p.require_max_dims(OUT, MAX_DIMS)?;
        if x.is_empty() {
            if is_complex(o.dtype) {
                return Err(invalid(format!(
                    "out dtype {} cannot be filled with NaN",
                    dtype_name(o.dtype)
                )));
            }
            let mut decision = Decision::new(dtype, &o.dims, o.is_empty());
            decision.attrs[MASK] = Attr::Int(-1);
            return p.finish(decision);
        }
        let (mut kept, mut len) = ([0i64; MAX_DIMS], 0);
        for (k, &d) in x.dims.iter().enumerate() {
            let folded = mask & (1 << k) != 0;
            if !folded || keep_dim {
                kept[len] = if folded { 1 } else { d };
                len += 1;
            }
        }
        let shape = Dims64::from_slice(&kept[..len]);
        let one = |d: &[i64]| d.iter().product::<i64>() == 1;
        if *shape != *o.dims && !(one(&shape) && one(&o.dims)) {
            return Err(invalid(format!(
                "out shape {:?} is not the reduced shape {shape:?}",
                o.dims
            )));
        }
        if is_complex(dtype) || is_complex(x.dtype) {
            return Err(unmodeled_complex("means"));
        }
        let mut decision = Decision::new(dtype, &o.dims, false);
        decision.attrs[MASK] = Attr::Int(i64::from(mask));
        p.finish(decision)
    };
    OP.phase1(outs, &args, checks)
}

/// The sum of a contiguous row, in eight independent lanes the compiler vectorises.
fn row_sum(row: &[f64]) -> f64 {
    let mut lanes = [0.0f64; 8];
    let chunks = row.chunks_exact(8);
    let tail: f64 = chunks.remainder().iter().sum();
    for c in chunks {
        for (l, &v) in lanes.iter_mut().zip(c) {
            *l += v;
        }
    }
    lanes.iter().sum::<f64>() + tail
}

fn run(call: &KernelCall, scratch: &mut Scratch) -> Result<(), String> {
    let compute = call.decision().compute;
    let mask = call.decision().attr_i64(MASK);
    let out_n = call.dims(OUT).iter().product::<usize>();
    if mask < 0 {
        let [z] = scratch.wide::<1>(out_n);
        z.fill(f64::NAN);
        return call.write_f64(OUT, z);
    }
    let xd = Shape::from_slice(call.dims(SELF));
    let n = xd.iter().product::<usize>();
    let [x, acc] = scratch.wide::<2>(n);
    call.read_f64(SELF, &xd, x)?;
    if compute != call.dtype(SELF)? {
        for v in x.iter_mut() {
            *v = round(compute, *v);
        }
    }
    let count = (n / out_n.max(1)) as f64;
    let rank = xd.len();
    // The reduced dims that form a suffix: their elements are contiguous rows.
    let suffix = (0..rank)
        .rev()
        .take_while(|&k| mask & (1 << k) != 0)
        .count();
    let row: usize = xd[rank - suffix..].iter().product();
    let acc = &mut acc[..n / row];
    for (a, r) in acc.iter_mut().zip(x.chunks_exact(row)) {
        *a = row_sum(r);
    }
    // The remaining reduced dims: each output row adds whole rows of the dims after them.
    let dims = &xd[..rank - suffix];
    let kept: Vec<bool> = (0..dims.len()).map(|k| mask & (1 << k) == 0).collect();
    let out = &mut x[..out_n];
    out.fill(0.0);
    let mut idx = Shape::zeroed(dims.len());
    for &v in acc.iter() {
        let mut o = 0usize;
        for ((&i, &d), &keep) in idx.iter().zip(dims.iter()).zip(&kept) {
            if keep {
                o = o * d + i;
            }
        }
        out[o] += v;
        for k in (0..dims.len()).rev() {
            idx[k] += 1;
            if idx[k] < dims[k] {
                break;
            }
            idx[k] = 0;
        }
    }
    for v in out.iter_mut() {
        *v = round(compute, *v / count);
    }
    call.write_f64(OUT, out)
}
