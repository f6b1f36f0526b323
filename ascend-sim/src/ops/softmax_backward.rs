//! `aclnnSoftmaxBackward` (ops-nn `activation/softmax_grad`):
//! `out = output · (gradOutput − Σ gradOutput·output)`, and `aclnnLogSoftmaxBackward`
//! (`activation/log_softmax_grad`): `out = gradOutput − exp(output) · Σ gradOutput`, the
//! sums along `dim` (`output` is the forward's result).
//!
//! SoftmaxBackward's phase-1 checks in the vendor's order:
//! 1. gradOutput, output or out NULL: 161001; then `workspaceSize` or `executor`: 161001;
//! 2. gradOutput or output empty: success, workspace 0 (nothing else checked);
//! 3. a BF16 gradOutput on a product without BF16, then gradOutput's, then output's dtype
//!    outside FLOAT, FLOAT16, BF16, then output's dtype not gradOutput's: 161002;
//! 4. `dim` outside [−r, r−1], r = max(rank, 1): 161002;
//! 5. gradOutput above 8 dims, output's then out's shape not gradOutput's: 161002.
//!
//! LogSoftmaxBackward's:
//! 1. output, gradOutput, out NULL (in that order): 161001; then the out-parameters;
//! 2. gradOutput or output empty: success, workspace 0;
//! 3. BF16 in either on a product without BF16, then output's, then gradOutput's dtype
//!    outside FLOAT, FLOAT16, BF16, then the two dtypes different: 161002;
//! 4. gradOutput or output above 8 dims, output's then out's shape not gradOutput's
//!    (before the dim): 161002;
//! 5. `dim` out of range: 161002.
//!
//! out's dtype is never checked: the chain ends in a cast to it. Both are on every
//! product but 310B. The kernels widen to f32, reduce in f32, and round once to the
//! inputs' dtype before the cast.

use super::MAX_DIMS;
use super::softmax::{DIM, normal_dim, par_blocks, read_f32, require_same_shape, split, write_f32};
use crate::catalog::{Entry, Slot};
use crate::nnopbase::{
    Attr, Decision, KernelCall, OpDef, OutParams, Phase1, invalid, positions, release_on_fault,
    require_non_null,
};
use crate::state::status_of;
use crate::stream::Scratch;
use crate::strided::DType;
use crate::tables::{Family, dtype_name};
use ascend_sys::*;
use std::ffi::c_void;

positions!(GRAD, OUTPUT, OUT);

fn not_310b(f: Family) -> bool {
    f != Family::Atlas310B
}

pub(crate) static SOFTMAX_BACKWARD: OpDef = OpDef {
    name: "SoftmaxBackward",
    launch_api: "aclnnSoftmaxBackward",
    args: &["gradOutput", "output", "out"],
    inputs: &[GRAD, OUTPUT],
    outputs: &[OUT],
    available: not_310b,
    kernel: run_softmax,
};

pub(crate) static LOG_SOFTMAX_BACKWARD: OpDef = OpDef {
    name: "LogSoftmaxBackward",
    launch_api: "aclnnLogSoftmaxBackward",
    args: &["gradOutput", "output", "out"],
    inputs: &[GRAD, OUTPUT],
    outputs: &[OUT],
    available: not_310b,
    kernel: run_log_softmax,
};

static P1_SOFTMAX: Slot = Slot::new("aclnnSoftmaxBackwardGetWorkspaceSize");
static P2_SOFTMAX: Slot = Slot::new("aclnnSoftmaxBackward");
static P1_LOG: Slot = Slot::new("aclnnLogSoftmaxBackwardGetWorkspaceSize");
static P2_LOG: Slot = Slot::new("aclnnLogSoftmaxBackward");

/// The entry points, for the catalog.
pub(crate) static ENTRIES: &[Entry] = &[
    Entry {
        name: "aclnnSoftmaxBackwardGetWorkspaceSize",
        address: || softmax_backward_phase1 as *const c_void,
    },
    Entry {
        name: "aclnnSoftmaxBackward",
        address: || softmax_backward_phase2 as *const c_void,
    },
    Entry {
        name: "aclnnLogSoftmaxBackwardGetWorkspaceSize",
        address: || log_softmax_backward_phase1 as *const c_void,
    },
    Entry {
        name: "aclnnLogSoftmaxBackward",
        address: || log_softmax_backward_phase2 as *const c_void,
    },
];

const GRAD_DTYPES: &[aclDataType] = &[ACL_FLOAT, ACL_FLOAT16, ACL_BF16];

fn bf16_refused(p: &Phase1<'_>, arg: usize) -> Result<(), i32> {
    if !p.family.has_bf16() && p.desc(arg).dtype == ACL_BF16 {
        return Err(invalid(format!(
            "{} dtype BF16 is not supported on {}",
            p.op().args[arg],
            p.soc
        )));
    }
    Ok(())
}

fn same_dtype(p: &Phase1<'_>) -> Result<(), i32> {
    let (g, y) = (p.desc(GRAD).dtype, p.desc(OUTPUT).dtype);
    if g != y {
        return Err(invalid(format!(
            "output dtype {} is not gradOutput dtype {}",
            dtype_name(y),
            dtype_name(g)
        )));
    }
    Ok(())
}

fn empty_decision(p: &Phase1<'_>) -> Option<Decision> {
    let (g, y) = (p.desc(GRAD), p.desc(OUTPUT));
    (g.is_empty() || y.is_empty()).then(|| Decision::new(g.dtype, &g.dims, true))
}

fn decision(p: &Phase1<'_>, d: usize) -> Decision {
    let g = p.desc(GRAD);
    let mut decision = Decision::new(g.dtype, &g.dims, false);
    decision.attrs[DIM] = Attr::Int(d as i64);
    decision
}

/// Simulated `aclnnSoftmaxBackwardGetWorkspaceSize`.
///
/// # Safety
/// The C function's contract: each pointer NULL or valid for its access.
#[cfg_attr(
    feature = "c-exports",
    unsafe(export_name = "aclnnSoftmaxBackwardGetWorkspaceSize")
)]
pub unsafe extern "C" fn softmax_backward_phase1(
    grad: *const aclTensor,
    output: *const aclTensor,
    dim: i64,
    out: *mut aclTensor,
    workspace_size: *mut u64,
    executor: *mut *mut aclOpExecutor,
) -> aclnnStatus {
    let code = crate::introspect::fault_code_at(P1_SOFTMAX.index());
    crate::state::entry(&P1_SOFTMAX, code, move || {
        // SAFETY: by the caller's C contract each out-parameter is NULL or writable and
        // unaliased until this call returns.
        let outs = unsafe { OutParams::new(workspace_size, executor) };
        status_of(|| {
            require_non_null(&[
                (grad as usize, "gradOutput"),
                (output as usize, "output"),
                (out as usize, "out"),
            ])?;
            let p = Phase1::begin(&SOFTMAX_BACKWARD, &[grad, output, out], outs.slots()?)?;
            if let Some(empty) = empty_decision(&p) {
                return p.finish(empty);
            }
            bf16_refused(&p, GRAD)?;
            p.require_dtype(GRAD, GRAD_DTYPES)?;
            p.require_dtype(OUTPUT, GRAD_DTYPES)?;
            same_dtype(&p)?;
            let d = normal_dim(dim, p.desc(GRAD).dims.len())?;
            p.require_max_dims(GRAD, MAX_DIMS)?;
            require_same_shape(&p, GRAD, OUTPUT)?;
            require_same_shape(&p, GRAD, OUT)?;
            let decision = decision(&p, d);
            p.finish(decision)
        })
    })
}

/// Simulated `aclnnLogSoftmaxBackwardGetWorkspaceSize`.
///
/// # Safety
/// The C function's contract: each pointer NULL or valid for its access.
#[cfg_attr(
    feature = "c-exports",
    unsafe(export_name = "aclnnLogSoftmaxBackwardGetWorkspaceSize")
)]
pub unsafe extern "C" fn log_softmax_backward_phase1(
    grad: *const aclTensor,
    output: *const aclTensor,
    dim: i64,
    out: *mut aclTensor,
    workspace_size: *mut u64,
    executor: *mut *mut aclOpExecutor,
) -> aclnnStatus {
    let code = crate::introspect::fault_code_at(P1_LOG.index());
    crate::state::entry(&P1_LOG, code, move || {
        // SAFETY: by the caller's C contract each out-parameter is NULL or writable and
        // unaliased until this call returns.
        let outs = unsafe { OutParams::new(workspace_size, executor) };
        status_of(|| {
            require_non_null(&[
                (output as usize, "output"),
                (grad as usize, "gradOutput"),
                (out as usize, "out"),
            ])?;
            let p = Phase1::begin(&LOG_SOFTMAX_BACKWARD, &[grad, output, out], outs.slots()?)?;
            if let Some(empty) = empty_decision(&p) {
                return p.finish(empty);
            }
            bf16_refused(&p, GRAD)?;
            bf16_refused(&p, OUTPUT)?;
            p.require_dtype(OUTPUT, GRAD_DTYPES)?;
            p.require_dtype(GRAD, GRAD_DTYPES)?;
            same_dtype(&p)?;
            p.require_max_dims(GRAD, MAX_DIMS)?;
            p.require_max_dims(OUTPUT, MAX_DIMS)?;
            require_same_shape(&p, GRAD, OUTPUT)?;
            require_same_shape(&p, GRAD, OUT)?;
            let d = normal_dim(dim, p.desc(GRAD).dims.len())?;
            let decision = decision(&p, d);
            p.finish(decision)
        })
    })
}

/// Simulated `aclnnSoftmaxBackward`.
///
/// # Safety
/// The C function's contract: each pointer NULL or valid for its access.
#[cfg_attr(feature = "c-exports", unsafe(export_name = "aclnnSoftmaxBackward"))]
pub unsafe extern "C" fn softmax_backward_phase2(
    workspace: *mut c_void,
    workspace_size: u64,
    executor: *mut aclOpExecutor,
    stream: aclrtStream,
) -> aclnnStatus {
    crate::state::entry_with_fault_effect(
        &P2_SOFTMAX,
        crate::introspect::fault_code_at(P2_SOFTMAX.index()),
        move || release_on_fault(executor),
        move || {
            crate::nnopbase::phase2(
                &SOFTMAX_BACKWARD,
                workspace,
                workspace_size,
                executor,
                stream,
            )
        },
    )
}

/// Simulated `aclnnLogSoftmaxBackward`.
///
/// # Safety
/// The C function's contract: each pointer NULL or valid for its access.
#[cfg_attr(feature = "c-exports", unsafe(export_name = "aclnnLogSoftmaxBackward"))]
pub unsafe extern "C" fn log_softmax_backward_phase2(
    workspace: *mut c_void,
    workspace_size: u64,
    executor: *mut aclOpExecutor,
    stream: aclrtStream,
) -> aclnnStatus {
    crate::state::entry_with_fault_effect(
        &P2_LOG,
        crate::introspect::fault_code_at(P2_LOG.index()),
        move || release_on_fault(executor),
        move || {
            crate::nnopbase::phase2(
                &LOG_SOFTMAX_BACKWARD,
                workspace,
                workspace_size,
                executor,
                stream,
            )
        },
    )
}

fn run_softmax(call: &KernelCall, scratch: &mut Scratch) -> Result<(), String> {
    run(call, scratch, false)
}

fn run_log_softmax(call: &KernelCall, scratch: &mut Scratch) -> Result<(), String> {
    run(call, scratch, true)
}

/// The gradient of each block of `len` rows of `inner` columns, into `g`: per column,
/// `s` = Σ g·y (softmax) or Σ g (log-softmax) over the rows, then each element.
fn grad_blocks(g: &mut [f32], y: &[f32], len: usize, inner: usize, log: bool) {
    if inner == 1 {
        for (gr, yr) in g.chunks_mut(len).zip(y.chunks(len)) {
            let s: f32 = if log {
                gr.iter().sum()
            } else {
                gr.iter().zip(yr).map(|(g, y)| g * y).sum()
            };
            for (g, &y) in gr.iter_mut().zip(yr) {
                *g = if log { *g - y.exp() * s } else { y * (*g - s) };
            }
        }
        return;
    }
    let mut s = vec![0.0f32; inner];
    for (gb, yb) in g.chunks_mut(len * inner).zip(y.chunks(len * inner)) {
        s.iter_mut().for_each(|v| *v = 0.0);
        for (gr, yr) in gb.chunks(inner).zip(yb.chunks(inner)) {
            for ((s, &g), &y) in s.iter_mut().zip(gr).zip(yr) {
                *s += if log { g } else { g * y };
            }
        }
        for (gr, yr) in gb.chunks_mut(inner).zip(yb.chunks(inner)) {
            for ((g, &y), &s) in gr.iter_mut().zip(yr).zip(&s) {
                *g = if log { *g - y.exp() * s } else { y * (*g - s) };
            }
        }
    }
}

fn run(call: &KernelCall, scratch: &mut Scratch, log: bool) -> Result<(), String> {
    let d = call.decision();
    let dims = call.dims(GRAD).to_vec();
    let (_, len, inner) = split(&dims, d.attr_i64(DIM) as usize);
    let compute = DType::from_acl(d.compute).ok_or("no compute dtype")?;
    let [g, y] = scratch.get::<2>(d.numel());
    read_f32(call, GRAD, g)?;
    read_f32(call, OUTPUT, y)?;
    par_blocks(g, y, len * inner, |g, y| grad_blocks(g, y, len, inner, log));
    if compute != DType::F32 {
        g.iter_mut().for_each(|v| *v = compute.round(*v));
    }
    write_f32(call, OUT, g)
}
