//! `aclnnGeluBackward` (ops-nn `activation/gelu_grad`): `gradInput = gradOutput ·
//! gelu'(self)`, the derivative of the tanh approximation that `aclnnGelu` computes
//! (the kernel's constants 1.5957691 = 2·√(2/π) and 0.044715), with broadcasting.
//!
//! Phase-1 checks in the vendor's order:
//! 1. gradOutput, self or gradInput NULL, then `workspaceSize` or `executor` NULL: 161001;
//! 2. PromoteType(gradOutput, self) undefined, or outside FLOAT, FLOAT16 (plus BF16 on
//!    Atlas A2 / A3): 161002 (gradInput's dtype is not checked: the chain casts to it);
//! 3. gradOutput, then self above 8 dims; their broadcast shape not gradInput's: 161002;
//! 4. an empty gradOutput or self: success, workspace 0, nothing computed.
//!
//! Every product runs it. The kernel computes in the promoted dtype (half types in f32,
//! rounded once) and casts to gradInput's dtype. At ±∞ the derivative is its limit (1 at
//! +∞, 0 at −∞), where the literal formula would give NaN.

use super::MAX_DIMS;
use crate::cast::round;
use crate::catalog::{Entry, Slot};
use crate::nnopbase::{
    Decision, KernelCall, OpDef, OutParams, Phase1, invalid, positions, release_on_fault,
    require_non_null,
};
use crate::state::status_of;
use crate::stream::Scratch;
use crate::tables::{dtype_name, float_dtypes, promote_type};
use ascend_sys::*;
use std::ffi::c_void;

positions!(GRAD, SELF, OUT);

pub(crate) static OP: OpDef = OpDef {
    name: "GeluBackward",
    launch_api: "aclnnGeluBackward",
    args: &["gradOutput", "self", "gradInput"],
    inputs: &[GRAD, SELF],
    outputs: &[OUT],
    available: crate::nnopbase::every_product,
    kernel: run,
};

static PHASE1: Slot = Slot::new("aclnnGeluBackwardGetWorkspaceSize");
static PHASE2: Slot = Slot::new("aclnnGeluBackward");

/// The entry points, for the catalog.
pub(crate) static ENTRIES: &[Entry] = &[
    Entry {
        name: "aclnnGeluBackwardGetWorkspaceSize",
        address: || phase1 as *const c_void,
    },
    Entry {
        name: "aclnnGeluBackward",
        address: || phase2 as *const c_void,
    },
];

/// Simulated `aclnnGeluBackwardGetWorkspaceSize`.
///
/// # Safety
/// The C function's contract: each pointer NULL or valid for its access.
#[cfg_attr(
    feature = "c-exports",
    unsafe(export_name = "aclnnGeluBackwardGetWorkspaceSize")
)]
pub unsafe extern "C" fn phase1(
    grad_output: *const aclTensor,
    self_: *const aclTensor,
    grad_input: *const aclTensor,
    workspace_size: *mut u64,
    executor: *mut *mut aclOpExecutor,
) -> aclnnStatus {
    let code = crate::introspect::fault_code_at(PHASE1.index());
    crate::state::entry(&PHASE1, code, move || {
        // SAFETY: by the caller's C contract each out-parameter is NULL or writable and
        // unaliased until this call returns.
        let outs = unsafe { OutParams::new(workspace_size, executor) };
        get_workspace_size(grad_output, self_, grad_input, outs)
    })
}

/// Simulated `aclnnGeluBackward`.
///
/// # Safety
/// The C function's contract: each pointer NULL or valid for its access.
#[cfg_attr(feature = "c-exports", unsafe(export_name = "aclnnGeluBackward"))]
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
    grad_input: *const aclTensor,
    outs: OutParams<'_>,
) -> aclnnStatus {
    status_of(|| {
        require_non_null(&[
            (grad_output as usize, "gradOutput"),
            (self_ as usize, "self"),
            (grad_input as usize, "gradInput"),
        ])?;
        let outs = outs.slots()?;
        let p = Phase1::begin(&OP, &[grad_output, self_, grad_input], outs)?;
        let (g, x) = (p.desc(GRAD).clone(), p.desc(SELF).clone());
        let list = float_dtypes(p.family);
        let promote = promote_type(g.dtype, x.dtype).filter(|d| list.contains(d));
        let Some(promote) = promote else {
            return Err(invalid(format!(
                "the promote dtype of gradOutput {} and self {} should be in {}",
                dtype_name(g.dtype),
                dtype_name(x.dtype),
                crate::tables::dtype_list(list)
            )));
        };
        p.require_max_dims(GRAD, MAX_DIMS)?;
        p.require_max_dims(SELF, MAX_DIMS)?;
        p.require_broadcast_to(GRAD, SELF, OUT)?;
        let out = p.desc(OUT).dims.clone();
        p.finish(Decision::new(promote, &out, g.is_empty() || x.is_empty()))
    })
}

fn run(call: &KernelCall, scratch: &mut Scratch) -> Result<(), String> {
    let compute = call.decision().compute;
    let shape = &call.decision().out_shape;
    let [g, x] = scratch.get::<2>(call.decision().numel());
    call.read(GRAD, shape, g)?;
    call.read(SELF, shape, x)?;
    crate::strided::par_zip(g, x, |g, x| {
        for (gv, &xv) in g.iter_mut().zip(x) {
            *gv = gelu_grad_f32(*gv, xv);
        }
    });
    if compute != ACL_FLOAT {
        for v in g.iter_mut() {
            *v = round(compute, f64::from(*v)) as f32;
        }
    }
    call.write(OUT, g)
}

/// `grad · gelu'(x)` in f32 for the tanh approximation `gelu(x) = x·s(z)`, `s` the
/// sigmoid and `z = 1.5957691·(x + 0.044715·x³)`: `gelu'(x) = s + x·s·(1 − s)·1.5957691·(1
/// + 3·0.044715·x²)`. Where `s·(1 − s)` underflows to 0 (|x| above about 10, ±∞
/// included) the second term is 0 rather than `0·∞`.
pub fn gelu_grad_f32(grad: f32, x: f32) -> f32 {
    // The f32 nearest the kernel's 1.5957691.
    const BETA: f32 = 1.595_769;
    const C: f32 = 0.044_715;
    if x.is_nan() {
        return f32::NAN;
    }
    let z = BETA * (x + C * x * x * x);
    let s = 1.0 / (1.0 + (-z).exp());
    let t = s * (1.0 - s);
    let d = if t == 0.0 {
        s
    } else {
        s + x * t * BETA * (1.0 + 3.0 * C * x * x)
    };
    grad * d
}

#[cfg(test)]
mod tests {
    use super::gelu_grad_f32;

    #[test]
    fn limits_and_a_known_value() {
        assert_eq!(gelu_grad_f32(2.0, f32::INFINITY), 2.0);
        assert_eq!(gelu_grad_f32(2.0, f32::NEG_INFINITY), 0.0);
        assert_eq!(gelu_grad_f32(1.0, 0.0), 0.5);
        assert!(gelu_grad_f32(1.0, f32::NAN).is_nan());
        // d/dx of the tanh form at 1: 1.0829640 (central difference in f64).
        assert!((gelu_grad_f32(1.0, 1.0) - 1.082_964).abs() < 1e-5);
    }
}
