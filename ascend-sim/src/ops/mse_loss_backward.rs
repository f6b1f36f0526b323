//! `aclnnMseLossBackward` (ops-nn `loss/mse_loss_grad_v2`): the gradient of MseLoss,
//! `2·grad·(self − target)`, divided by numel(self) for reduction 1 (mean).
//!
//! Phase-1 checks in the vendor's order:
//! 1. `workspaceSize` or `executor` NULL: 161001;
//! 2. gradOutput, self, target or out NULL: 161001;
//! 3. gradOutput's or target's dtype not self's, then self's or out's dtype outside FLOAT,
//!    FLOAT16 (plus BF16 on Atlas A2 / A3): 161002;
//! 4. reduction outside 0..2: 161002;
//! 5. any above 8 dims, B1 = broadcast(gradOutput, self) or B = broadcast(target, B1)
//!    missing, out's shape not B: 161002;
//! 6. self, gradOutput or target empty: success, workspace 0, nothing computed.
//!
//! The vendor's doc lists no kernel for the training series; its code refuses no product.
//! Compute (MseLossGradV2): cof = 2·(1/N in f32) for mean (N = numel(self)), else 2; per
//! element `((x − y)·cof)·dout` in that order, in f32 (f16/bf16 widened), rounded to self's
//! dtype, then cast to out. The older kernel (mismatched shapes, such as torch's 0-D
//! gradOutput of a mean) is not documented; the simulator computes it the same way.

use super::MAX_DIMS;
use super::checks::{require_out_broadcast, require_reduction};
use crate::nnopbase::{
    Arg, Attr, Decision, KernelCall, OpDef, OutParams, Phase1, broadcast, invalid, op_def,
    positions,
};
use crate::stream::Scratch;
use crate::strided::DType;
use crate::tables::{dtype_name, float_dtypes};
use ascend_sys::*;

positions!(GRAD, SELF, TARGET, OUT);
positions!(REDUCTION);

pub(crate) static OP: OpDef = op_def!("MseLossBackward",
    ["gradOutput", "self", "target", "out"], [GRAD, SELF, TARGET] -> [OUT], run);

pub(crate) fn get_workspace_size(
    grad_output: *const aclTensor,
    self_: *const aclTensor,
    target: *const aclTensor,
    reduction: i64,
    out: *mut aclTensor,
    outs: OutParams<'_>,
) -> aclnnStatus {
    let args = [
        Arg::Tensor(grad_output),
        Arg::Tensor(self_),
        Arg::Tensor(target),
        Arg::Tensor(out),
    ];
    let checks = |p: Phase1<'_>| {
        let (g, x, y, o) = (p.desc(GRAD), p.desc(SELF), p.desc(TARGET), p.desc(OUT));
        for (d, name) in [(g, "gradOutput"), (y, "target")] {
            if d.dtype != x.dtype {
                return Err(invalid(format!(
                    "{name} dtype {} is not self's dtype {}",
                    dtype_name(d.dtype),
                    dtype_name(x.dtype)
                )));
            }
        }
        p.require_dtype(SELF, float_dtypes(p.family))?;
        p.require_dtype(OUT, float_dtypes(p.family))?;
        require_reduction(reduction)?;
        for arg in [GRAD, SELF, TARGET, OUT] {
            p.require_max_dims(arg, MAX_DIMS)?;
        }
        let b = broadcast(&g.dims, &x.dims)
            .and_then(|b1| broadcast(&y.dims, &b1))
            .ok_or_else(|| {
                invalid(format!(
                    "gradOutput {:?}, self {:?} and target {:?} can not broadcast",
                    g.dims, x.dims, y.dims
                ))
            })?;
        require_out_broadcast(&o.dims, &b)?;
        let empty = x.is_empty() || g.is_empty() || y.is_empty();
        let mut decision = Decision::new(x.dtype, &b, empty);
        decision.attrs[REDUCTION] = Attr::Int(reduction);
        // N of the mean: self's element count.
        decision.attrs[1] = Attr::Int(x.dims.iter().product());
        p.finish(decision)
    };
    OP.phase1(outs, &args, checks)
}

fn run(call: &KernelCall, scratch: &mut Scratch) -> Result<(), String> {
    let dt = DType::from_acl(call.decision().compute).ok_or("no compute dtype")?;
    let cof = if call.decision().attr_i64(REDUCTION) == 1 {
        (1.0 / call.decision().attr_i64(1) as f64) as f32 * 2.0
    } else {
        2.0
    };
    let shape = &call.decision().out_shape;
    let [g, x, y] = scratch.get::<3>(call.decision().numel());
    call.read(GRAD, shape, g)?;
    call.read(SELF, shape, x)?;
    call.read(TARGET, shape, y)?;
    for ((r, &xv), &yv) in g.iter_mut().zip(x.iter()).zip(y.iter()) {
        *r = dt.round((xv - yv) * cof * *r);
    }
    call.write(OUT, g)
}
