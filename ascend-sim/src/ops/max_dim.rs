//! `aclnnMaxDim` (ops-math `math/arg_max_with_value`): the maximum of self along `dim`
//! into out and its position into indices, the dim dropped or kept as 1 (`keepdim`).
//!
//! Phase-1 checks in the vendor's order:
//! 1. self, out or indices NULL: 161001; then `workspaceSize` or `executor` NULL: 161001;
//! 2. self's dtype outside FLOAT, FLOAT16, INT64, BOOL (plus BF16 on Atlas A2 / A3), then
//!    out's dtype not self's: 161002 (indices may have any dtype: the chain casts to it);
//! 3. self, out, then indices above 8 dims: 161002;
//! 4. `dim` outside [−r, r−1] (r = rank; [−1, 0] for a 0-D self): 161002;
//! 5. an empty self: success, workspace 0, nothing computed (no shape checked);
//! 6. indices', then out's shape not the reduced shape, unless both have one element:
//!    161002.
//!
//! Every product runs it. The chain casts a BOOL self to FLOAT, and an INT64 self too on
//! the products older than the training series (310P, 310B), takes the maximum and its
//! int32 index, and casts both to out's and indices' dtypes. The first maximum wins a
//! tie; how the kernel orders NaN is not documented: the simulator takes a NaN as the
//! maximum (the first one).

use super::MAX_DIMS;
use crate::cast::round;
use crate::catalog::{Entry, Slot};
use crate::nnopbase::{
    Attr, Decision, KernelCall, OpDef, OutParams, Phase1, invalid, positions, release_on_fault,
    require_non_null,
};
use crate::slab::Dims64;
use crate::state::status_of;
use crate::stream::Scratch;
use crate::tables::{Family, dtype_name};
use ascend_sys::*;
use std::ffi::c_void;

positions!(SELF, OUT, INDICES);
// Attribute: the reduced dim, normalised (0 for a 0-D self).
positions!(DIM);

pub(crate) static OP: OpDef = OpDef {
    name: "MaxDim",
    launch_api: "aclnnMaxDim",
    args: &["self", "out", "indices"],
    inputs: &[SELF],
    outputs: &[OUT, INDICES],
    available: crate::nnopbase::every_product,
    kernel: run,
};

static PHASE1: Slot = Slot::new("aclnnMaxDimGetWorkspaceSize");
static PHASE2: Slot = Slot::new("aclnnMaxDim");

/// The entry points, for the catalog.
pub(crate) static ENTRIES: &[Entry] = &[
    Entry {
        name: "aclnnMaxDimGetWorkspaceSize",
        address: || phase1 as *const c_void,
    },
    Entry {
        name: "aclnnMaxDim",
        address: || phase2 as *const c_void,
    },
];

/// Self's dtypes: Atlas A2 / A3 add BF16.
fn dtypes(family: Family) -> &'static [aclDataType] {
    const ALL: &[aclDataType] = &[ACL_FLOAT, ACL_FLOAT16, ACL_INT64, ACL_BOOL, ACL_BF16];
    if family.has_bf16() {
        ALL
    } else {
        &ALL[..ALL.len() - 1]
    }
}

/// Simulated `aclnnMaxDimGetWorkspaceSize`.
///
/// # Safety
/// The C function's contract: each pointer NULL or valid for its access.
#[cfg_attr(
    feature = "c-exports",
    unsafe(export_name = "aclnnMaxDimGetWorkspaceSize")
)]
pub unsafe extern "C" fn phase1(
    self_: *const aclTensor,
    dim: i64,
    keepdim: bool,
    out: *mut aclTensor,
    indices: *mut aclTensor,
    workspace_size: *mut u64,
    executor: *mut *mut aclOpExecutor,
) -> aclnnStatus {
    let code = crate::introspect::fault_code_at(PHASE1.index());
    crate::state::entry(&PHASE1, code, move || {
        // SAFETY: by the caller's C contract each out-parameter is NULL or writable and
        // unaliased until this call returns.
        let outs = unsafe { OutParams::new(workspace_size, executor) };
        get_workspace_size(self_, dim, keepdim, out, indices, outs)
    })
}

/// Simulated `aclnnMaxDim`.
///
/// # Safety
/// The C function's contract: each pointer NULL or valid for its access.
#[cfg_attr(feature = "c-exports", unsafe(export_name = "aclnnMaxDim"))]
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

fn get_workspace_size(
    self_: *const aclTensor,
    dim: i64,
    keepdim: bool,
    out: *const aclTensor,
    indices: *const aclTensor,
    outs: OutParams<'_>,
) -> aclnnStatus {
    status_of(|| {
        require_non_null(&[
            (self_ as usize, "self"),
            (out as usize, "out"),
            (indices as usize, "indices"),
        ])?;
        let outs = outs.slots()?;
        let p = Phase1::begin(&OP, &[self_, out, indices], outs)?;
        p.require_dtype(SELF, dtypes(p.family))?;
        let (x, o, i) = (
            p.desc(SELF).clone(),
            p.desc(OUT).clone(),
            p.desc(INDICES).clone(),
        );
        if o.dtype != x.dtype {
            return Err(invalid(format!(
                "out dtype {} is not self's dtype {}",
                dtype_name(o.dtype),
                dtype_name(x.dtype)
            )));
        }
        for arg in [SELF, OUT, INDICES] {
            p.require_max_dims(arg, MAX_DIMS)?;
        }
        let r = x.dims.len() as i64;
        let (lo, hi) = if r == 0 { (-1, 0) } else { (-r, r - 1) };
        if !(lo..=hi).contains(&dim) {
            return Err(invalid(format!(
                "dim should within the range of [[{lo}], [{hi}]], got {dim}"
            )));
        }
        if x.is_empty() {
            return p.finish(Decision::new(x.dtype, &x.dims, true));
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
        let shape = Dims64::from_slice(&kept[..n]);
        let one = |s: &[i64]| s.iter().product::<i64>() == 1;
        for (name, t) in [("indices", &i), ("out", &o)] {
            if *t.dims != *shape && !(one(&t.dims) && one(&shape)) {
                return Err(invalid(format!(
                    "{name} shape {:?} is not the reduced shape {shape:?}",
                    t.dims
                )));
            }
        }
        let older = matches!(p.family, Family::Inference310P | Family::Atlas310B);
        let compute = match x.dtype {
            ACL_BOOL => ACL_FLOAT,
            ACL_INT64 if older => ACL_FLOAT,
            dt => dt,
        };
        let mut decision = Decision::new(compute, &shape, false);
        decision.attrs[DIM] = Attr::Int(d as i64);
        p.finish(decision)
    })
}

fn run(call: &KernelCall, scratch: &mut Scratch) -> Result<(), String> {
    let compute = call.decision().compute;
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
    let [x, best, at] = scratch.wide::<3>(n);
    call.read_f64(SELF, &xd, x)?;
    for o in 0..outer {
        for i in 0..inner {
            let (mut m, mut k_m) = (f64::NEG_INFINITY, 0usize);
            for k in 0..len {
                let v = round(compute, x[(o * len + k) * inner + i]);
                let first = k == 0;
                if first || (!m.is_nan() && (v > m || v.is_nan())) {
                    (m, k_m) = (v, k);
                }
            }
            best[o * inner + i] = m;
            at[o * inner + i] = k_m as f64;
        }
    }
    let m = outer * inner;
    call.write_f64(OUT, &best[..m])?;
    call.write_f64(INDICES, &at[..m])
}
