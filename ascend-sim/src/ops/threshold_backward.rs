//! `aclnnThresholdBackward` (ops-nn `activation/threshold_grad_v2_d`): ReLU's gradient,
//! `out = self <= threshold ? 0 : gradOutput`, with broadcasting and no dtype promotion.
//!
//! Phase-1 checks in the vendor's order:
//! 1. threshold NULL, out NULL, then `workspaceSize` or `executor` NULL, then gradOutput
//!    or self NULL: 161001;
//! 2. gradOutput's, then self's dtype outside FLOAT, INT32, FLOAT16, INT8, UINT8 (plus BF16
//!    on Atlas A2 / A3); gradOutput's, then out's dtype not self's: 161002;
//! 3. gradOutput, then self above 8 dims; their broadcast shape not out's: 161002;
//! 4. an empty self or gradOutput: success, workspace 0, nothing computed.
//!
//! Every product runs it. The threshold is read as a float (`ToFloat`); within
//! `FLT_EPSILON` of 0 the vendor runs ReluGrad (threshold 0), otherwise ThresholdGradV2D.
//! The comparison is exact in the inputs' dtype (an integer against the float threshold,
//! in f64); a NaN self is not `<=` the threshold, so its gradient passes.

use super::MAX_DIMS;
use crate::catalog::{Entry, Slot};
use crate::nnopbase::{
    Attr, Decision, KernelCall, OpDef, OutParams, Phase1, invalid, positions, release_on_fault,
    require_non_null,
};
use crate::state::status_of;
use crate::stream::Scratch;
use crate::tables::{Family, dtype_name};
use ascend_sys::*;
use std::ffi::c_void;

positions!(GRAD, SELF, OUT);
// Attribute: the threshold as the kernel compares with it.
positions!(THRESHOLD);

pub(crate) static OP: OpDef = OpDef {
    name: "ThresholdBackward",
    launch_api: "aclnnThresholdBackward",
    args: &["gradOutput", "self", "out"],
    inputs: &[GRAD, SELF],
    outputs: &[OUT],
    available: crate::nnopbase::every_product,
    kernel: run,
};

static PHASE1: Slot = Slot::new("aclnnThresholdBackwardGetWorkspaceSize");
static PHASE2: Slot = Slot::new("aclnnThresholdBackward");

/// The entry points, for the catalog.
pub(crate) static ENTRIES: &[Entry] = &[
    Entry {
        name: "aclnnThresholdBackwardGetWorkspaceSize",
        address: || phase1 as *const c_void,
    },
    Entry {
        name: "aclnnThresholdBackward",
        address: || phase2 as *const c_void,
    },
];

/// gradOutput's and self's dtypes: Atlas A2 / A3 add BF16.
fn dtypes(family: Family) -> &'static [aclDataType] {
    const ALL: &[aclDataType] = &[
        ACL_FLOAT,
        ACL_INT32,
        ACL_FLOAT16,
        ACL_INT8,
        ACL_UINT8,
        ACL_BF16,
    ];
    if family.has_bf16() {
        ALL
    } else {
        &ALL[..ALL.len() - 1]
    }
}

/// Simulated `aclnnThresholdBackwardGetWorkspaceSize`.
///
/// # Safety
/// The C function's contract: each pointer NULL or valid for its access.
#[cfg_attr(
    feature = "c-exports",
    unsafe(export_name = "aclnnThresholdBackwardGetWorkspaceSize")
)]
pub unsafe extern "C" fn phase1(
    grad_output: *const aclTensor,
    self_: *const aclTensor,
    threshold: *const aclScalar,
    out: *mut aclTensor,
    workspace_size: *mut u64,
    executor: *mut *mut aclOpExecutor,
) -> aclnnStatus {
    let code = crate::introspect::fault_code_at(PHASE1.index());
    crate::state::entry(&PHASE1, code, move || {
        // SAFETY: by the caller's C contract each out-parameter is NULL or writable and
        // unaliased until this call returns.
        let outs = unsafe { OutParams::new(workspace_size, executor) };
        get_workspace_size(grad_output, self_, threshold, out, outs)
    })
}

/// Simulated `aclnnThresholdBackward`.
///
/// # Safety
/// The C function's contract: each pointer NULL or valid for its access.
#[cfg_attr(feature = "c-exports", unsafe(export_name = "aclnnThresholdBackward"))]
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
    grad_output: *const aclTensor,
    self_: *const aclTensor,
    threshold: *const aclScalar,
    out: *const aclTensor,
    outs: OutParams<'_>,
) -> aclnnStatus {
    status_of(|| {
        require_non_null(&[(threshold as usize, "threshold"), (out as usize, "out")])?;
        let outs = outs.slots()?;
        require_non_null(&[
            (grad_output as usize, "gradOutput"),
            (self_ as usize, "self"),
        ])?;
        let p = Phase1::begin(&OP, &[grad_output, self_, out], outs)?;
        let t = p.scalar(threshold, "threshold")?.to_f64() as f32;
        let list = dtypes(p.family);
        p.require_dtype(GRAD, list)?;
        p.require_dtype(SELF, list)?;
        let (g, x, o) = (
            p.desc(GRAD).clone(),
            p.desc(SELF).clone(),
            p.desc(OUT).clone(),
        );
        for (name, d) in [("gradOutput", g.dtype), ("out", o.dtype)] {
            if d != x.dtype {
                return Err(invalid(format!(
                    "{name} dtype {} should be self's dtype {}",
                    dtype_name(d),
                    dtype_name(x.dtype)
                )));
            }
        }
        p.require_max_dims(GRAD, MAX_DIMS)?;
        p.require_max_dims(SELF, MAX_DIMS)?;
        p.require_broadcast_to(SELF, GRAD, OUT)?;
        let t = if t.abs() <= f32::EPSILON { 0.0 } else { t };
        let mut decision = Decision::new(x.dtype, &o.dims, g.is_empty() || x.is_empty());
        decision.attrs[THRESHOLD] = Attr::Float(f64::from(t));
        p.finish(decision)
    })
}

fn run(call: &KernelCall, scratch: &mut Scratch) -> Result<(), String> {
    let t = call.decision().attr_f64(THRESHOLD);
    let t32 = t as f32;
    let pass = move |g: f32, x: f32| if x <= t32 { 0.0 } else { g };
    if let Some(done) = super::float_pair_fast_path(call, scratch, [GRAD, SELF, OUT], pass) {
        return done;
    }
    let shape = &call.decision().out_shape;
    let [g, x] = scratch.wide::<2>(call.decision().numel());
    call.read_f64(GRAD, shape, g)?;
    call.read_f64(SELF, shape, x)?;
    for (gv, &xv) in g.iter_mut().zip(x.iter()) {
        if xv <= t {
            *gv = 0.0;
        }
    }
    call.write_f64(OUT, g)
}
