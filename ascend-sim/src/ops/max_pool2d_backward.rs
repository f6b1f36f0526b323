//! `aclnnMaxPool2dWithIndicesBackward` (ops-nn `pooling/max_pool3d_grad_with_argmax`):
//! the gradient of 2-D max pooling, routed through the forward's indices.
//!
//! Products: Atlas A2/A3 take a FLOAT self only with INT32 (or INT8) indices (the 950
//! adds FLOAT16, BF16 and INT64); the training series, 310P and 310B list no dtype.
//!
//! Phase-1 checks in the vendor's order, 161002 unless said otherwise:
//! 1. gradOutput, self, indices, kernelSize, stride, padding, dilation, gradInput NULL:
//!    161001;
//! 2. self's dtype (above), gradOutput's and gradInput's equal to it, indices' dtype;
//! 3. self's, gradOutput's and gradInput's storage formats equal and not private; self,
//!    gradInput, gradOutput and indices each 3-D or 4-D;
//! 4. the window as the forward checks it; gradInput of self's shape; C, H, W not 0; the
//!    output's size positive and gradOutput's and indices' shapes the expected one;
//! 5. an empty self: success, workspace 0.
//!
//! The kernel: gradInput = 0, then for each output position gradInput[plane, index] +=
//! gradOutput (overlapping windows accumulate).

use super::max_pool2d::{Window, expected, is_private, window};
use crate::catalog::{Entry, Slot};
use crate::nnopbase::{
    Decision, KernelCall, OpDef, OutParams, Phase1, invalid, positions, release_on_fault,
    require_non_null,
};
use crate::state::status_of;
use crate::stream::Scratch;
use crate::tables::{Family, dtype_name, format_name};
use ascend_sys::*;
use std::ffi::c_void;

positions!(GRAD_OUT, SELF, INDICES, GRAD_INPUT);
// Attribute: the window.
positions!(WINDOW);

pub(crate) static OP: OpDef = OpDef {
    name: "MaxPool2dWithIndicesBackward",
    launch_api: "aclnnMaxPool2dWithIndicesBackward",
    args: &["gradOutput", "self", "indices", "gradInput"],
    inputs: &[GRAD_OUT, SELF, INDICES],
    outputs: &[GRAD_INPUT],
    available: crate::nnopbase::every_product,
    kernel: run,
};

static PHASE1: Slot = Slot::new("aclnnMaxPool2dWithIndicesBackwardGetWorkspaceSize");
static PHASE2: Slot = Slot::new("aclnnMaxPool2dWithIndicesBackward");

/// The entry points, for the catalog.
pub(crate) static ENTRIES: &[Entry] = &[
    Entry {
        name: "aclnnMaxPool2dWithIndicesBackwardGetWorkspaceSize",
        address: || phase1 as *const c_void,
    },
    Entry {
        name: "aclnnMaxPool2dWithIndicesBackward",
        address: || phase2 as *const c_void,
    },
];

/// Simulated `aclnnMaxPool2dWithIndicesBackwardGetWorkspaceSize`.
///
/// # Safety
/// The C function's contract: each pointer NULL or valid for its access.
#[cfg_attr(
    feature = "c-exports",
    unsafe(export_name = "aclnnMaxPool2dWithIndicesBackwardGetWorkspaceSize")
)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn phase1(
    grad_output: *const aclTensor,
    self_: *const aclTensor,
    indices: *const aclTensor,
    kernel_size: *const aclIntArray,
    stride: *const aclIntArray,
    padding: *const aclIntArray,
    dilation: *const aclIntArray,
    ceil_mode: bool,
    grad_input: *mut aclTensor,
    workspace_size: *mut u64,
    executor: *mut *mut aclOpExecutor,
) -> aclnnStatus {
    let code = crate::introspect::fault_code_at(PHASE1.index());
    crate::state::entry(&PHASE1, code, move || {
        // SAFETY: by the caller's C contract each out-parameter is NULL or writable and
        // unaliased until this call returns.
        let outs = unsafe { OutParams::new(workspace_size, executor) };
        let lists = [kernel_size, stride, padding, dilation];
        get_workspace_size(
            [grad_output, self_, indices, grad_input],
            lists,
            ceil_mode,
            outs,
        )
    })
}

/// Simulated `aclnnMaxPool2dWithIndicesBackward`.
///
/// # Safety
/// The C function's contract: each pointer NULL or valid for its access.
#[cfg_attr(
    feature = "c-exports",
    unsafe(export_name = "aclnnMaxPool2dWithIndicesBackward")
)]
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
    t: [*const aclTensor; 4],
    lists: [*const aclIntArray; 4],
    ceil: bool,
    outs: OutParams<'_>,
) -> aclnnStatus {
    status_of(|| {
        require_non_null(&[
            (t[0] as usize, "gradOutput"),
            (t[1] as usize, "self"),
            (t[2] as usize, "indices"),
            (lists[0] as usize, "kernelSize"),
            (lists[1] as usize, "stride"),
            (lists[2] as usize, "padding"),
            (lists[3] as usize, "dilation"),
            (t[3] as usize, "gradInput"),
        ])?;
        let outs = outs.slots()?;
        let p = Phase1::begin(&OP, &t, outs)?;
        let d = |k: usize| p.desc(k).clone();
        let (go, x, ix, gi) = (d(GRAD_OUT), d(SELF), d(INDICES), d(GRAD_INPUT));
        if !matches!(p.family, Family::A2 | Family::A3) {
            return Err(invalid(format!(
                "MaxPool2dWithIndicesBackward is not implemented on {} (dtype {} not supported)",
                p.soc,
                dtype_name(x.dtype)
            )));
        }
        p.require_dtype(SELF, &[ACL_FLOAT])?;
        for (name, o) in [("gradOutput", &go), ("gradInput", &gi)] {
            if o.dtype != x.dtype {
                return Err(invalid(format!(
                    "{name} dtype {} is not self's {}",
                    dtype_name(o.dtype),
                    dtype_name(x.dtype)
                )));
            }
        }
        p.require_dtype(INDICES, &[ACL_INT32, ACL_INT8])?;
        if go.format != x.format
            || gi.format != x.format
            || [&x, &go, &gi].iter().any(|t| is_private(t.format))
        {
            return Err(invalid(format!(
                "self, gradOutput and gradInput storage formats {}, {}, {} must be equal and not private",
                format_name(x.format),
                format_name(go.format),
                format_name(gi.format)
            )));
        }
        for (name, o) in [
            ("self", &x),
            ("gradInput", &gi),
            ("gradOutput", &go),
            ("indices", &ix),
        ] {
            if !(3..=4).contains(&o.dims.len()) {
                return Err(invalid(format!(
                    "{name} has {} dims, not 3 or 4",
                    o.dims.len()
                )));
            }
        }
        let w = window(&p, lists)?;
        if gi.dims != x.dims {
            return Err(invalid(format!(
                "gradInput shape {:?} is not self's {:?}",
                gi.dims, x.dims
            )));
        }
        let want = expected(&x, &w, ceil)?;
        for (name, o) in [("gradOutput", &go), ("indices", &ix)] {
            if *o.dims != *want {
                return Err(invalid(format!(
                    "{name} shape {:?} is not the expected {:?}",
                    o.dims, want
                )));
            }
        }
        let mut decision = Decision::new(x.dtype, &x.dims, x.is_empty());
        decision.attrs[WINDOW] = w.to_attr();
        p.finish(decision)
    })
}

fn run(call: &KernelCall, _scratch: &mut Scratch) -> Result<(), String> {
    let _ = Window::from_attr(&call.decision().attrs[WINDOW]);
    let xd = call.dims(SELF).to_vec();
    let gd = call.dims(GRAD_OUT).to_vec();
    let r = xd.len();
    let plane = xd[r - 2] * xd[r - 1];
    let per: usize = gd[r - 2] * gd[r - 1];
    let mut g = vec![0f32; gd.iter().product()];
    call.read(GRAD_OUT, &gd, &mut g)?;
    let mut at = vec![0f64; g.len()];
    call.read_f64(INDICES, &gd, &mut at)?;
    let mut gi = vec![0f32; xd.iter().product()];
    for (k, (&v, &i)) in g.iter().zip(&at).enumerate() {
        let pl = k / per.max(1);
        let i = i as i64;
        if i < 0 || i as usize >= plane {
            return Err(format!(
                "index {i} at gradOutput element {k} is outside the plane of {plane}"
            ));
        }
        gi[pl * plane + i as usize] += v;
    }
    call.write(GRAD_INPUT, &gi)
}
