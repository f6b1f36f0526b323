//! `aclnnNLLLoss` (ops-nn `loss/nll_loss`): `l_n = −w[y_n]·self[n, y_n]` with
//! `w_c = weight[c]·1{c ≠ ignoreIndex}`, returned per sample (reduction 0), as
//! `Σ l_n / Σ w[y_n]` (1, mean) or `Σ l_n` (2, sum), with `totalWeight = Σ w[y_n]`; and
//! `aclnnNLLLossBackward` (`loss/nll_loss_grad`): zero except `out[n, y_n] = −w[y_n]·g`
//! (g = gradOutput[n] for none, gradOutput for sum, gradOutput / totalWeight for mean).
//!
//! NLLLoss's phase-1 checks in the vendor's order:
//! 1. self, target, weight, out or totalWeightOut NULL: 161001 (weight is mandatory);
//!    then `workspaceSize` or `executor` NULL: 161001;
//! 2. weight's dtype not self's; self's dtype not castable to out's, to totalWeightOut's;
//!    self's dtype outside FLOAT, FLOAT16 (plus BF16 on Atlas A2 / A3); target's outside
//!    INT64, UINT8, INT32: 161002;
//! 3. reduction outside 0..2: 161002;
//! 4. shapes (161002): self 1-D or 2-D; target 0-D or 1-D; self 1-D with target 0-D, or
//!    self 2-D with target 1-D of self's first dim; weight 1-D of C (self's last dim);
//!    for none with a 2-D self, out 1-D of N, otherwise out of at most 1 dim and one
//!    element; totalWeightOut of one element; an empty self with C = 0 and a non-empty
//!    target: "Target is out of bounds".
//! 5. an empty self: success; none computes nothing (workspace 0); mean fills out with
//!    NaN and totalWeightOut with 0; sum fills both with 0.
//!
//! NLLLossBackward's: NULL gradOutput, self, target, weight, totalWeight, out (161001);
//! weight's, gradOutput's, totalWeight's dtype not self's, self's not castable to out's;
//! self's, then target's dtype outside the lists (161002); reduction (161002); shapes as
//! NLLLoss (gradOutput in out's place, 1-D of N for none with a 2-D self), totalWeight of
//! one element, out of self's shape (161002); an empty self: success, workspace 0.
//!
//! Both are on every product but 310B (NLLLossBackward not on 310P either). The kernels
//! (as the vendor's chains outside the 950): FLOAT16 is computed in f32, BF16 in f32
//! rounded to BF16, FLOAT in f32; the samples' losses and weights summed in f32 in order.
//! NLLLoss writes totalWeightOut only for mean and sum. A target outside `[0, C)` other
//! than ignoreIndex is undefined on the device (not checked); the simulator counts it as
//! ignored.

use super::checks::require_reduction;
use super::softmax::{read_f32, write_f32};
use crate::catalog::{Entry, Slot};
use crate::nnopbase::{
    Attr, Decision, KernelCall, OpDef, OutParams, Phase1, TensorDesc, invalid, positions,
    release_on_fault, require_non_null,
};
use crate::state::status_of;
use crate::stream::Scratch;
use crate::strided::DType;
use crate::tables::{Family, can_cast, dtype_name, float_dtypes};
use ascend_sys::*;
use std::ffi::c_void;

positions!(SELF, TARGET, WEIGHT, OUT, TOTAL);
positions!(G_GRAD, G_SELF, G_TARGET, G_WEIGHT, G_TOTAL, G_OUT);
// Attributes: reduction, ignoreIndex, whether self is empty.
positions!(REDUCTION, IGNORE, EMPTY);

pub(crate) static NLL_LOSS: OpDef = OpDef {
    name: "NLLLoss",
    launch_api: "aclnnNLLLoss",
    args: &["self", "target", "weight", "out", "totalWeightOut"],
    inputs: &[SELF, TARGET, WEIGHT],
    outputs: &[OUT, TOTAL],
    available: |f| f != Family::Atlas310B,
    kernel: run_forward,
};

pub(crate) static NLL_LOSS_BACKWARD: OpDef = OpDef {
    name: "NLLLossBackward",
    launch_api: "aclnnNLLLossBackward",
    args: &[
        "gradOutput",
        "self",
        "target",
        "weight",
        "totalWeight",
        "out",
    ],
    inputs: &[G_GRAD, G_SELF, G_TARGET, G_WEIGHT, G_TOTAL],
    outputs: &[G_OUT],
    available: |f| !matches!(f, Family::Atlas310B | Family::Inference310P),
    kernel: run_backward,
};

static P1: Slot = Slot::new("aclnnNLLLossGetWorkspaceSize");
static P2: Slot = Slot::new("aclnnNLLLoss");
static P1_BACK: Slot = Slot::new("aclnnNLLLossBackwardGetWorkspaceSize");
static P2_BACK: Slot = Slot::new("aclnnNLLLossBackward");

/// The entry points, for the catalog.
pub(crate) static ENTRIES: &[Entry] = &[
    Entry {
        name: "aclnnNLLLossGetWorkspaceSize",
        address: || nll_loss_phase1 as *const c_void,
    },
    Entry {
        name: "aclnnNLLLoss",
        address: || nll_loss_phase2 as *const c_void,
    },
    Entry {
        name: "aclnnNLLLossBackwardGetWorkspaceSize",
        address: || nll_loss_backward_phase1 as *const c_void,
    },
    Entry {
        name: "aclnnNLLLossBackward",
        address: || nll_loss_backward_phase2 as *const c_void,
    },
];

const TARGET_DTYPES: &[aclDataType] = &[ACL_INT64, ACL_UINT8, ACL_INT32];

fn require_dtype_of(p: &Phase1<'_>, arg: usize, of: usize) -> Result<(), i32> {
    let (a, b) = (p.desc(arg).dtype, p.desc(of).dtype);
    if a != b {
        return Err(invalid(format!(
            "{} dtype {} should be {} dtype {}",
            p.op().args[arg],
            dtype_name(a),
            p.op().args[of],
            dtype_name(b)
        )));
    }
    Ok(())
}

fn require_castable(p: &Phase1<'_>, from: usize, to: usize) -> Result<(), i32> {
    let (a, b) = (p.desc(from).dtype, p.desc(to).dtype);
    if !can_cast(a, b) {
        return Err(invalid(format!(
            "{} dtype {} can not cast to {} dtype {}",
            p.op().args[from],
            dtype_name(a),
            p.op().args[to],
            dtype_name(b)
        )));
    }
    Ok(())
}

fn numel(d: &TensorDesc) -> i64 {
    d.dims.iter().product()
}

/// The shape checks the two share: self 1-D or 2-D, target 0-D or 1-D matching it,
/// weight of C. Returns (N, C) (N = 1 for a 1-D self).
fn require_nll_shapes(x: &TensorDesc, t: &TensorDesc, w: &TensorDesc) -> Result<(i64, i64), i32> {
    if x.dims.is_empty() || x.dims.len() > 2 {
        return Err(invalid("Input tensor should be 1D or 2D.".into()));
    }
    if t.dims.len() > 1 {
        return Err(invalid(
            "0D or 1D target tensor expected, multi-target not supported.".into(),
        ));
    }
    let no_batch = x.dims.len() == 1 && t.dims.is_empty();
    let batch = x.dims.len() == 2 && t.dims.len() == 1 && x.dims[0] == t.dims[0];
    if !(no_batch || batch) {
        return Err(invalid(format!(
            "when self is 1D, target need be 0D; when self is 2D, target need be 1D, and \
             target first dimension need equal to self first dimension, but (got self: {:?}, \
             target: {:?})",
            x.dims, t.dims
        )));
    }
    let c = x.dims[x.dims.len() - 1];
    if w.dims.len() != 1 || w.dims[0] != c {
        return Err(invalid(format!(
            "Weight tensor should be defined for all {c} classes but got weight tensor of \
             shape: {:?}",
            w.dims
        )));
    }
    let n = if x.dims.len() == 2 { x.dims[0] } else { 1 };
    Ok((n, c))
}

/// Fails unless `d` is 1-D of `n` (none with a 2-D self) or has one element in at most 1
/// dim.
fn require_loss_shape(d: &TensorDesc, name: &str, per_sample: Option<i64>) -> Result<(), i32> {
    match per_sample {
        Some(n) if d.dims.len() != 1 || d.dims[0] != n => Err(invalid(format!(
            "Expect {name} shape [{n}], but got: {:?}.",
            d.dims
        ))),
        None if d.dims.len() > 1 || numel(d) != 1 => Err(invalid(format!(
            "Expected a single element {name} tensor, but got: {:?}",
            d.dims
        ))),
        _ => Ok(()),
    }
}

fn require_single(d: &TensorDesc, name: &str) -> Result<(), i32> {
    if numel(d) != 1 {
        return Err(invalid(format!(
            "Shape of {name} tensor should be [1], but current is {:?}.",
            d.dims
        )));
    }
    Ok(())
}

/// FLOAT16 computes in FLOAT; FLOAT and BF16 in themselves.
fn compute_dtype(dt: aclDataType) -> aclDataType {
    if dt == ACL_FLOAT16 { ACL_FLOAT } else { dt }
}

/// Simulated `aclnnNLLLossGetWorkspaceSize`.
///
/// # Safety
/// The C function's contract: each pointer NULL or valid for its access.
#[cfg_attr(
    feature = "c-exports",
    unsafe(export_name = "aclnnNLLLossGetWorkspaceSize")
)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn nll_loss_phase1(
    self_: *const aclTensor,
    target: *const aclTensor,
    weight: *const aclTensor,
    reduction: i64,
    ignore_index: i64,
    out: *mut aclTensor,
    total: *mut aclTensor,
    workspace_size: *mut u64,
    executor: *mut *mut aclOpExecutor,
) -> aclnnStatus {
    let code = crate::introspect::fault_code_at(P1.index());
    crate::state::entry(&P1, code, move || {
        // SAFETY: by the caller's C contract each out-parameter is NULL or writable and
        // unaliased until this call returns.
        let outs = unsafe { OutParams::new(workspace_size, executor) };
        status_of(|| {
            require_non_null(&[
                (self_ as usize, "self"),
                (target as usize, "target"),
                (weight as usize, "weight"),
                (out as usize, "out"),
                (total as usize, "totalWeightOut"),
            ])?;
            let tensors = [self_, target, weight, out as *const _, total as *const _];
            let p = Phase1::begin(&NLL_LOSS, &tensors, outs.slots()?)?;
            require_dtype_of(&p, WEIGHT, SELF)?;
            require_castable(&p, SELF, OUT)?;
            require_castable(&p, SELF, TOTAL)?;
            p.require_dtype(SELF, float_dtypes(p.family))?;
            p.require_dtype(TARGET, TARGET_DTYPES)?;
            require_reduction(reduction)?;
            let (x, t, w) = (p.desc(SELF), p.desc(TARGET), p.desc(WEIGHT));
            let (n, c) = require_nll_shapes(x, t, w)?;
            let per_sample = (reduction == 0 && x.dims.len() == 2).then_some(n);
            require_loss_shape(p.desc(OUT), "out", per_sample)?;
            require_single(p.desc(TOTAL), "totalWeightOut")?;
            let empty = x.is_empty();
            if empty && c == 0 && numel(t) > 0 {
                return Err(invalid("Target is out of bounds".into()));
            }
            let dims = [n, c];
            let mut decision = Decision::new(
                compute_dtype(x.dtype),
                &dims[2 - x.dims.len()..],
                empty && reduction == 0,
            );
            decision.attrs[REDUCTION] = Attr::Int(reduction);
            decision.attrs[IGNORE] = Attr::Int(ignore_index);
            decision.attrs[EMPTY] = Attr::Bool(empty);
            p.finish(decision)
        })
    })
}

/// Simulated `aclnnNLLLossBackwardGetWorkspaceSize`.
///
/// # Safety
/// The C function's contract: each pointer NULL or valid for its access.
#[cfg_attr(
    feature = "c-exports",
    unsafe(export_name = "aclnnNLLLossBackwardGetWorkspaceSize")
)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn nll_loss_backward_phase1(
    grad: *const aclTensor,
    self_: *const aclTensor,
    target: *const aclTensor,
    weight: *const aclTensor,
    reduction: i64,
    ignore_index: i64,
    total: *const aclTensor,
    out: *mut aclTensor,
    workspace_size: *mut u64,
    executor: *mut *mut aclOpExecutor,
) -> aclnnStatus {
    let code = crate::introspect::fault_code_at(P1_BACK.index());
    crate::state::entry(&P1_BACK, code, move || {
        // SAFETY: by the caller's C contract each out-parameter is NULL or writable and
        // unaliased until this call returns.
        let outs = unsafe { OutParams::new(workspace_size, executor) };
        status_of(|| {
            require_non_null(&[
                (grad as usize, "gradOutput"),
                (self_ as usize, "self"),
                (target as usize, "target"),
                (weight as usize, "weight"),
                (total as usize, "totalWeight"),
                (out as usize, "out"),
            ])?;
            let tensors = [grad, self_, target, weight, total, out as *const _];
            let p = Phase1::begin(&NLL_LOSS_BACKWARD, &tensors, outs.slots()?)?;
            require_dtype_of(&p, G_WEIGHT, G_SELF)?;
            require_dtype_of(&p, G_GRAD, G_SELF)?;
            require_dtype_of(&p, G_TOTAL, G_SELF)?;
            require_castable(&p, G_SELF, G_OUT)?;
            p.require_dtype(G_SELF, float_dtypes(p.family))?;
            p.require_dtype(G_TARGET, TARGET_DTYPES)?;
            require_reduction(reduction)?;
            let (x, t, w) = (p.desc(G_SELF), p.desc(G_TARGET), p.desc(G_WEIGHT));
            let (n, _) = require_nll_shapes(x, t, w)?;
            require_single(p.desc(G_TOTAL), "totalWeight")?;
            let per_sample = (reduction == 0 && x.dims.len() == 2).then_some(n);
            require_loss_shape(p.desc(G_GRAD), "gradOutput", per_sample)?;
            if p.desc(G_OUT).dims != x.dims {
                return Err(invalid(format!(
                    "out shape {:?} is not self shape {:?}",
                    p.desc(G_OUT).dims,
                    x.dims
                )));
            }
            let mut decision = Decision::new(compute_dtype(x.dtype), &x.dims, x.is_empty());
            decision.attrs[REDUCTION] = Attr::Int(reduction);
            decision.attrs[IGNORE] = Attr::Int(ignore_index);
            p.finish(decision)
        })
    })
}

/// Simulated `aclnnNLLLoss`.
///
/// # Safety
/// The C function's contract: each pointer NULL or valid for its access.
#[cfg_attr(feature = "c-exports", unsafe(export_name = "aclnnNLLLoss"))]
pub unsafe extern "C" fn nll_loss_phase2(
    workspace: *mut c_void,
    workspace_size: u64,
    executor: *mut aclOpExecutor,
    stream: aclrtStream,
) -> aclnnStatus {
    crate::state::entry_with_fault_effect(
        &P2,
        crate::introspect::fault_code_at(P2.index()),
        move || release_on_fault(executor),
        move || crate::nnopbase::phase2(&NLL_LOSS, workspace, workspace_size, executor, stream),
    )
}

/// Simulated `aclnnNLLLossBackward`.
///
/// # Safety
/// The C function's contract: each pointer NULL or valid for its access.
#[cfg_attr(feature = "c-exports", unsafe(export_name = "aclnnNLLLossBackward"))]
pub unsafe extern "C" fn nll_loss_backward_phase2(
    workspace: *mut c_void,
    workspace_size: u64,
    executor: *mut aclOpExecutor,
    stream: aclrtStream,
) -> aclnnStatus {
    crate::state::entry_with_fault_effect(
        &P2_BACK,
        crate::introspect::fault_code_at(P2_BACK.index()),
        move || release_on_fault(executor),
        move || {
            crate::nnopbase::phase2(
                &NLL_LOSS_BACKWARD,
                workspace,
                workspace_size,
                executor,
                stream,
            )
        },
    )
}

/// The targets as class indices (`None` for an ignored or out-of-range one).
fn classes(
    call: &KernelCall,
    target: usize,
    c: usize,
    ignore: i64,
) -> Result<Vec<Option<usize>>, String> {
    let dims = call.dims(target).to_vec();
    let mut t = vec![0.0f64; dims.iter().product()];
    call.read_f64(target, &dims, &mut t)?;
    Ok(t.iter()
        .map(|&v| {
            let k = v as i64;
            (k != ignore && (0..c as i64).contains(&k)).then_some(k as usize)
        })
        .collect())
}

fn rounder(compute: aclDataType) -> impl Fn(f32) -> f32 {
    let dt = DType::from_acl(compute).unwrap_or(DType::F32);
    move |v| dt.round(v)
}

fn run_forward(call: &KernelCall, _scratch: &mut Scratch) -> Result<(), String> {
    let d = call.decision();
    let reduction = d.attr_i64(REDUCTION);
    let round = rounder(d.compute);
    if matches!(d.attrs[EMPTY], Attr::Bool(true)) {
        // Mean of nothing: NaN; sum: 0; totalWeight 0.
        write_f32(call, OUT, &[if reduction == 1 { f32::NAN } else { 0.0 }])?;
        return write_f32(call, TOTAL, &[0.0]);
    }
    let xd = call.dims(SELF).to_vec();
    let c = xd[xd.len() - 1];
    let mut x = vec![0.0f32; xd.iter().product()];
    let mut w = vec![0.0f32; c];
    read_f32(call, SELF, &mut x)?;
    read_f32(call, WEIGHT, &mut w)?;
    let ys = classes(call, TARGET, c, d.attr_i64(IGNORE))?;
    let mut losses = vec![0.0f32; ys.len()];
    let (mut sum, mut total) = (0.0f32, 0.0f32);
    for (n, (l, y)) in losses.iter_mut().zip(&ys).enumerate() {
        if let Some(k) = *y {
            *l = round(-w[k] * x[n * c + k]);
            sum += *l;
            total += w[k];
        }
    }
    match reduction {
        0 => write_f32(call, OUT, &losses),
        r => {
            let loss = if r == 1 { sum / total } else { sum };
            write_f32(call, OUT, &[round(loss)])?;
            write_f32(call, TOTAL, &[round(total)])
        }
    }
}

fn run_backward(call: &KernelCall, scratch: &mut Scratch) -> Result<(), String> {
    let d = call.decision();
    let reduction = d.attr_i64(REDUCTION);
    let round = rounder(d.compute);
    let xd = call.dims(G_SELF).to_vec();
    let c = xd[xd.len() - 1];
    let ys = classes(call, G_TARGET, c, d.attr_i64(IGNORE))?;
    let mut w = vec![0.0f32; c];
    read_f32(call, G_WEIGHT, &mut w)?;
    let mut g = vec![0.0f32; call.dims(G_GRAD).iter().product()];
    read_f32(call, G_GRAD, &mut g)?;
    let mut total = [0.0f32];
    read_f32(call, G_TOTAL, &mut total)?;
    let [out] = scratch.get::<1>(d.numel());
    out.iter_mut().for_each(|v| *v = 0.0);
    for (n, y) in ys.iter().enumerate() {
        if let Some(k) = *y {
            let scale = match reduction {
                0 => g[n],
                1 => g[0] / total[0],
                _ => g[0],
            };
            out[n * c + k] = round(-w[k] * scale);
        }
    }
    write_f32(call, G_OUT, out)
}
