//! `aclnnClamp` (ops-math `conversion/clip_by_value_v2`): `out = min(max(self, min), max)`
//! with optional bounds: `clipValueMin` and `clipValueMax` are `aclScalar *`, either of
//! which may be NULL (no bound on that side), not both.
//!
//! Phase-1 checks in the vendor's order:
//! 1. self or out NULL, then both bounds NULL: 161001; then `workspaceSize` or `executor`
//!    NULL: 161001;
//! 2. self's dtype, then out's, outside FLOAT16, FLOAT, INT32, INT64, INT16, INT8, UINT8,
//!    DOUBLE (plus BF16 on Atlas A2 / A3): 161002;
//! 3. out's shape not self's (no broadcasting), then self, then out above 8 dims: 161002;
//! 4. an empty self: success, workspace 0, nothing computed;
//! 5. self's dtype not castable to out's (a floating self into an integer out): 161002.
//!
//! Every product runs it. Off the arch35 products (all the simulator models) the compute
//! dtype is out's: self is cast to it, each present bound converted to it (floating to
//! integer truncates), an absent bound is the dtype's extreme, then `min(max(x, lo), hi)`
//! (so `hi` wins when `lo > hi`). How the kernel treats NaN is not documented: the
//! simulator propagates a NaN element, and a NaN bound leaves the element unchanged.

use super::MAX_DIMS;
use crate::cast::round;
use crate::catalog::{Entry, Slot};
use crate::nnopbase::{
    Attr, Decision, KernelCall, OpDef, OutParams, Phase1, invalid, positions, release_on_fault,
    require_non_null,
};
use crate::state::{fail, status_of};
use crate::stream::Scratch;
use crate::tables::{Family, can_cast, dtype_name};
use ascend_sys::*;
use std::ffi::c_void;

positions!(SELF, OUT);
// Attributes: the bounds, `Attr::None` when absent.
positions!(LO, HI);

pub(crate) static OP: OpDef = OpDef {
    name: "Clamp",
    launch_api: "aclnnClamp",
    args: &["self", "out"],
    inputs: &[SELF],
    outputs: &[OUT],
    available: crate::nnopbase::every_product,
    kernel: run,
};

static PHASE1: Slot = Slot::new("aclnnClampGetWorkspaceSize");
static PHASE2: Slot = Slot::new("aclnnClamp");

/// The entry points, for the catalog.
pub(crate) static ENTRIES: &[Entry] = &[
    Entry {
        name: "aclnnClampGetWorkspaceSize",
        address: || phase1 as *const c_void,
    },
    Entry {
        name: "aclnnClamp",
        address: || phase2 as *const c_void,
    },
];

/// The dtypes of self and out: the Atlas A2 / A3 list adds BF16.
fn dtypes(family: Family) -> &'static [aclDataType] {
    const BASE: &[aclDataType] = &[
        ACL_FLOAT16,
        ACL_FLOAT,
        ACL_INT32,
        ACL_INT64,
        ACL_INT16,
        ACL_INT8,
        ACL_UINT8,
        ACL_DOUBLE,
        ACL_BF16,
    ];
    if family.has_bf16() {
        BASE
    } else {
        &BASE[..BASE.len() - 1]
    }
}

/// Simulated `aclnnClampGetWorkspaceSize`.
///
/// # Safety
/// The C function's contract: each pointer NULL or valid for its access.
#[cfg_attr(
    feature = "c-exports",
    unsafe(export_name = "aclnnClampGetWorkspaceSize")
)]
pub unsafe extern "C" fn phase1(
    self_: *const aclTensor,
    clip_value_min: *const aclScalar,
    clip_value_max: *const aclScalar,
    out: *mut aclTensor,
    workspace_size: *mut u64,
    executor: *mut *mut aclOpExecutor,
) -> aclnnStatus {
    let code = crate::introspect::fault_code_at(PHASE1.index());
    crate::state::entry(&PHASE1, code, move || {
        // SAFETY: by the caller's C contract each out-parameter is NULL or writable and
        // unaliased until this call returns.
        let outs = unsafe { OutParams::new(workspace_size, executor) };
        get_workspace_size(self_, clip_value_min, clip_value_max, out, outs)
    })
}

/// Simulated `aclnnClamp`.
///
/// # Safety
/// The C function's contract: each pointer NULL or valid for its access.
#[cfg_attr(feature = "c-exports", unsafe(export_name = "aclnnClamp"))]
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
    min: *const aclScalar,
    max: *const aclScalar,
    out: *const aclTensor,
    outs: OutParams<'_>,
) -> aclnnStatus {
    status_of(|| {
        require_non_null(&[(self_ as usize, "self"), (out as usize, "out")])?;
        if min.is_null() && max.is_null() {
            return Err(fail(
                ACLNN_ERR_PARAM_NULLPTR,
                "clamp: at least one of 'min' or 'max' must not be None".into(),
            ));
        }
        let outs = outs.slots()?;
        let p = Phase1::begin(&OP, &[self_, out], outs)?;
        let bound = |s: *const aclScalar, name| -> Result<Attr, i32> {
            if s.is_null() {
                Ok(Attr::None)
            } else {
                p.scalar(s, name).map(Attr::Scalar)
            }
        };
        let (lo, hi) = (bound(min, "clipValueMin")?, bound(max, "clipValueMax")?);
        let list = dtypes(p.family);
        p.require_dtype(SELF, list)?;
        p.require_dtype(OUT, list)?;
        let (x, y) = (p.desc(SELF).clone(), p.desc(OUT).clone());
        if *x.dims != *y.dims {
            return Err(invalid(format!(
                "out shape {:?} is not self's shape {:?}",
                y.dims, x.dims
            )));
        }
        p.require_max_dims(SELF, MAX_DIMS)?;
        p.require_max_dims(OUT, MAX_DIMS)?;
        if x.is_empty() {
            return p.finish(Decision::new(y.dtype, &x.dims, true));
        }
        if !can_cast(x.dtype, y.dtype) {
            return Err(invalid(format!(
                "self dtype {} can't be cast to the out dtype {}",
                dtype_name(x.dtype),
                dtype_name(y.dtype)
            )));
        }
        let mut decision = Decision::new(y.dtype, &x.dims, false);
        decision.attrs[LO] = lo;
        decision.attrs[HI] = hi;
        p.finish(decision)
    })
}

/// A bound converted to the compute dtype, or `absent` (an infinity, beyond every value).
fn bound(attr: &Attr, compute: aclDataType, absent: f64) -> f64 {
    match attr {
        Attr::Scalar(s) => round(compute, s.to_f64()),
        _ => absent,
    }
}

/// The clamp of one element already in the compute dtype: NaN stays NaN, a NaN bound
/// compares false and leaves the element.
pub(crate) fn clamp(x: f64, lo: f64, hi: f64) -> f64 {
    let y = if x < lo { lo } else { x };
    if y > hi { hi } else { y }
}

fn run(call: &KernelCall, scratch: &mut Scratch) -> Result<(), String> {
    let d = call.decision();
    let compute = d.compute;
    let lo = bound(&d.attrs[LO], compute, f64::NEG_INFINITY);
    let hi = bound(&d.attrs[HI], compute, f64::INFINITY);
    let [x] = scratch.wide::<1>(d.numel());
    call.read_f64(SELF, &d.out_shape, x)?;
    for v in x.iter_mut() {
        *v = clamp(round(compute, *v), lo, hi);
    }
    call.write_f64(OUT, x)
}
