//! `aclnnApplyAdamWV2` (ops-nn `optim/apply_adam_w_v2`): one AdamW step in place on
//! varRef, mRef, vRef (and maxGradNormOptionalRef under amsgrad), from grad and a
//! one-element `step` tensor holding the number of steps already taken.
//!
//! Phase-1 checks in the vendor's order (`CheckParams`):
//! 1. varRef, mRef, vRef NULL, maxGradNormOptionalRef NULL when `amsgrad`, grad, step
//!    NULL: 161001; then `workspaceSize` or `executor` NULL: 161001;
//! 2. varRef's, mRef's, vRef's, maxGradNormOptionalRef's (when given), grad's dtype outside
//!    FLOAT, FLOAT16, BF16 (Atlas A2 / A3, the products that have the kernel), then step's
//!    outside FLOAT, INT64: 161002;
//! 3. mRef's, vRef's, maxGradNormOptionalRef's (when given), grad's shape not varRef's,
//!    then step not of one element: 161002;
//! 4. an empty varRef: success, workspace 0, nothing computed.
//!
//! Mixed dtypes are not refused: the vendor casts every tensor to FLOAT unless they all
//! share a dtype or var, m, v are FLOAT with a FLOAT16 / BF16 grad (a kernel of its own).
//! Every kernel computes in f32 (the 16-bit one widens its loads), so the simulator reads
//! each tensor widened to f32, runs the vendor's sequence of f32 operations and rounds
//! each result once to its tensor's dtype. `t = step + 1`; the bias corrections and the
//! step size are f32 scalars computed once per launch, as the kernel's `Init` does.
//! Under `amsgrad = false` maxGradNormOptionalRef, if given, is left as it is.

use crate::catalog::{Entry, Slot};
use crate::nnopbase::{
    Attr, Decision, KernelCall, OpDef, OutParams, Phase1, invalid, positions, release_on_fault,
    require_non_null,
};
use crate::slab::Dims64;
use crate::state::status_of;
use crate::stream::Scratch;
use crate::tables::Family;
use ascend_sys::*;
use std::ffi::c_void;

positions!(VAR, M, V, MAX_V, GRAD, STEP);
// Attributes: lr, β₁, β₂, then the rest packed (weight decay's and ε's f32 bits, amsgrad,
// maximize, whether maxGradNormOptionalRef was given).
positions!(LR, BETA1, BETA2, REST);

/// Only Atlas A2 / A3 (and the arch35 products the simulator does not model) have the
/// kernel.
fn available(family: Family) -> bool {
    family.has_bf16()
}

pub(crate) static OP: OpDef = OpDef {
    name: "ApplyAdamWV2",
    launch_api: "aclnnApplyAdamWV2",
    args: &[
        "varRef",
        "mRef",
        "vRef",
        "maxGradNormOptionalRef",
        "grad",
        "step",
    ],
    inputs: &[VAR, M, V, MAX_V, GRAD, STEP],
    outputs: &[VAR, M, V, MAX_V],
    available,
    kernel: run,
};

static PHASE1: Slot = Slot::new("aclnnApplyAdamWV2GetWorkspaceSize");
static PHASE2: Slot = Slot::new("aclnnApplyAdamWV2");

/// The entry points, for the catalog.
pub(crate) static ENTRIES: &[Entry] = &[
    Entry {
        name: "aclnnApplyAdamWV2GetWorkspaceSize",
        address: || phase1 as *const c_void,
    },
    Entry {
        name: "aclnnApplyAdamWV2",
        address: || phase2 as *const c_void,
    },
];

/// The tensors' dtypes on the products with the kernel (the vendor's older list, FLOAT
/// and FLOAT16, belongs to a product without it).
const DTYPES: &[aclDataType] = &[ACL_FLOAT, ACL_FLOAT16, ACL_BF16];
const STEP_DTYPES: &[aclDataType] = &[ACL_FLOAT, ACL_INT64];

/// The hyper-parameters as phase 1 received them.
#[derive(Clone, Copy)]
struct Hyper {
    lr: f32,
    beta1: f32,
    beta2: f32,
    weight_decay: f32,
    eps: f32,
    amsgrad: bool,
    maximize: bool,
}

/// Simulated `aclnnApplyAdamWV2GetWorkspaceSize`.
///
/// # Safety
/// The C function's contract: each pointer NULL or valid for its access.
#[allow(clippy::too_many_arguments)]
#[cfg_attr(
    feature = "c-exports",
    unsafe(export_name = "aclnnApplyAdamWV2GetWorkspaceSize")
)]
pub unsafe extern "C" fn phase1(
    var_ref: *mut aclTensor,
    m_ref: *mut aclTensor,
    v_ref: *mut aclTensor,
    max_grad_norm: *mut aclTensor,
    grad: *const aclTensor,
    step: *const aclTensor,
    lr: f32,
    beta1: f32,
    beta2: f32,
    weight_decay: f32,
    eps: f32,
    amsgrad: bool,
    maximize: bool,
    workspace_size: *mut u64,
    executor: *mut *mut aclOpExecutor,
) -> aclnnStatus {
    let code = crate::introspect::fault_code_at(PHASE1.index());
    crate::state::entry(&PHASE1, code, move || {
        // SAFETY: by the caller's C contract each out-parameter is NULL or writable and
        // unaliased until this call returns.
        let outs = unsafe { OutParams::new(workspace_size, executor) };
        let h = Hyper {
            lr,
            beta1,
            beta2,
            weight_decay,
            eps,
            amsgrad,
            maximize,
        };
        let tensors = [
            var_ref as *const aclTensor,
            m_ref as *const aclTensor,
            v_ref as *const aclTensor,
            max_grad_norm as *const aclTensor,
            grad,
            step,
        ];
        get_workspace_size(tensors, h, outs)
    })
}

/// Simulated `aclnnApplyAdamWV2`.
///
/// # Safety
/// The C function's contract: each pointer NULL or valid for its access.
#[cfg_attr(feature = "c-exports", unsafe(export_name = "aclnnApplyAdamWV2"))]
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

fn get_workspace_size(t: [*const aclTensor; 6], h: Hyper, outs: OutParams<'_>) -> aclnnStatus {
    status_of(|| {
        let [var, m, v, max_v, grad, step] = t;
        require_non_null(&[
            (var as usize, "varRef"),
            (m as usize, "mRef"),
            (v as usize, "vRef"),
        ])?;
        if h.amsgrad {
            require_non_null(&[(max_v as usize, "maxGradNormOptionalRef")])?;
        }
        require_non_null(&[(grad as usize, "grad"), (step as usize, "step")])?;
        let outs = outs.slots()?;
        let has_max = !max_v.is_null();
        // Without maxGradNormOptionalRef, varRef stands in its slot; the kernel never
        // touches the slot then.
        let max_slot = if has_max { max_v } else { var };
        let p = Phase1::begin(&OP, &[var, m, v, max_slot, grad, step], outs)?;
        for arg in [VAR, M, V, MAX_V, GRAD] {
            if arg != MAX_V || has_max {
                p.require_dtype(arg, DTYPES)?;
            }
        }
        p.require_dtype(STEP, STEP_DTYPES)?;
        let var_dims = p.desc(VAR).dims.clone();
        for (arg, name) in [
            (M, "mRef"),
            (V, "vRef"),
            (MAX_V, "maxGradNormOptionalRef"),
            (GRAD, "grad"),
        ] {
            if arg == MAX_V && !has_max {
                continue;
            }
            if *p.desc(arg).dims != *var_dims {
                return Err(invalid(format!(
                    "{name} shape {:?} is not varRef's shape {:?}",
                    p.desc(arg).dims,
                    var_dims
                )));
            }
        }
        let numel: i64 = p.desc(STEP).dims.iter().product();
        if numel != 1 {
            return Err(invalid(format!(
                "Numel of step must be 1, but got {numel}."
            )));
        }
        let empty = p.desc(VAR).is_empty();
        let mut decision = Decision::new(ACL_FLOAT, &var_dims, empty);
        decision.attrs[LR] = Attr::Float(f64::from(h.lr));
        decision.attrs[BETA1] = Attr::Float(f64::from(h.beta1));
        decision.attrs[BETA2] = Attr::Float(f64::from(h.beta2));
        decision.attrs[REST] = Attr::Ints(Dims64::from_slice(&[
            i64::from(h.weight_decay.to_bits()),
            i64::from(h.eps.to_bits()),
            i64::from(h.amsgrad),
            i64::from(h.maximize),
            i64::from(has_max),
        ]));
        p.finish(decision)
    })
}

/// The hyper-parameters back from the decision, and whether maxGradNorm was given.
fn hyper(call: &KernelCall) -> Result<(Hyper, bool), String> {
    let d = call.decision();
    let Attr::Ints(rest) = &d.attrs[REST] else {
        return Err("ApplyAdamWV2: the decision lacks its attributes".into());
    };
    let bits = |k: usize| f32::from_bits(rest[k] as u32);
    let h = Hyper {
        lr: d.attr_f64(LR) as f32,
        beta1: d.attr_f64(BETA1) as f32,
        beta2: d.attr_f64(BETA2) as f32,
        weight_decay: bits(0),
        eps: bits(1),
        amsgrad: rest[2] != 0,
        maximize: rest[3] != 0,
    };
    Ok((h, rest[4] != 0))
}

fn run(call: &KernelCall, scratch: &mut Scratch) -> Result<(), String> {
    let (h, has_max) = hyper(call)?;
    let dims = call.dims(VAR);
    let n = dims.iter().product::<usize>();
    let mut s = [0f64];
    call.read_f64(STEP, call.dims(STEP), &mut s)?;
    // The kernel reads step as f32 and adds one (an INT64 step converted first).
    let t = s[0] as f32 + 1.0;
    let bc1 = 1.0f32 - h.beta1.powf(t);
    let bc2 = 1.0f32 - h.beta2.powf(t);
    let step_size = h.lr / bc1;
    let bc2_sqrt = 1.0f32 / bc2.sqrt();
    let decay = 1.0f32 - h.lr * h.weight_decay;
    let (one_sub_b1, one_sub_b2) = (1.0f32 - h.beta1, 1.0f32 - h.beta2);
    let [w, m, v, mx, g] = scratch.get::<5>(n);
    call.read(VAR, dims, w)?;
    call.read(M, dims, m)?;
    call.read(V, dims, v)?;
    call.read(GRAD, dims, g)?;
    let amsgrad = h.amsgrad && has_max;
    if amsgrad {
        call.read(MAX_V, dims, mx)?;
    }
    for k in 0..n {
        let gk = if h.maximize { -g[k] } else { g[k] };
        let wk = w[k] * decay;
        let mk = (gk - m[k]) * one_sub_b1 + m[k];
        let vk = v[k] * h.beta2 + gk * gk * one_sub_b2;
        let second = if amsgrad {
            mx[k] = mx[k].max(vk);
            mx[k]
        } else {
            vk
        };
        let denom = second.sqrt() * bc2_sqrt + h.eps;
        w[k] = wk - mk / denom * step_size;
        m[k] = mk;
        v[k] = vk;
    }
    call.write(VAR, w)?;
    call.write(M, m)?;
    call.write(V, v)?;
    if amsgrad {
        call.write(MAX_V, mx)?;
    }
    Ok(())
}
