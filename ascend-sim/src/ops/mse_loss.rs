//! `aclnnMseLoss` (ops-nn `loss/mse_loss`): `(self − target)²`, per element (reduction 0,
//! none), its mean (1) or its sum (2).
//!
//! Phase-1 checks in the vendor's order:
//! 1. `workspaceSize` or `executor` NULL: 161001;
//! 2. self, target or out NULL: 161001;
//! 3. PromoteType(self, target) outside the list first, then self's, target's, out's
//!    dtype: FLOAT, FLOAT16 (plus BF16 on Atlas A2 / A3): 161002;
//! 4. reduction outside 0..2: 161002;
//! 5. self or target above 8 dims, shapes that do not broadcast; none: out's shape the
//!    broadcast shape; mean and sum: out 0-D (shape `[1]` is refused): 161002;
//! 6. self or target empty: success, workspace 0; phase 2 writes NaN (mean) or 0 (sum)
//!    into out, nothing for none.
//!
//! Compute: both cast to the promote and broadcast; none gives `d·d` (d = x − y) in f32,
//! rounded to the promote and cast to out. Mean and sum follow MSELossV2: f16/bf16
//! widened to f32; per tile, the `d·d` summed by repeated halving (the upper half added
//! onto the lower, half lengths rounded up to 8-float blocks), the tile sum times the scale
//! (mean: 1/N computed in f64 and rounded to f32, N the element count; sum: 1) added into
//! an f32 accumulator; rounded once to the promote, then cast to out. The vendor's tile
//! length and core split are not documented (the simulator uses one core and tiles of
//! 4096 elements), nor the older kernel's arithmetic (the simulator uses MSELossV2's).

use super::MAX_DIMS;
use super::checks::{require_out_broadcast, require_reduction};
use crate::nnopbase::{
    Arg, Attr, Decision, KernelCall, OpDef, OutParams, Phase1, broadcast, invalid, op_def,
    positions,
};
use crate::stream::Scratch;
use crate::strided::DType;
use crate::tables::{dtype_list, dtype_name, float_dtypes, promote_type};
use ascend_sys::*;

positions!(SELF, TARGET, OUT);
// Attributes: the reduction, and whether an input is empty (phase 2 only fills out).
positions!(REDUCTION, EMPTY);
const TILE: usize = 4096;

pub(crate) static OP: OpDef =
    op_def!("MseLoss", ["self", "target", "out"], [SELF, TARGET] -> [OUT], run);

pub(crate) fn get_workspace_size(
    self_: *const aclTensor,
    target: *const aclTensor,
    reduction: i64,
    out: *mut aclTensor,
    outs: OutParams<'_>,
) -> aclnnStatus {
    let args = [Arg::Tensor(self_), Arg::Tensor(target), Arg::Tensor(out)];
    let checks = |p: Phase1<'_>| {
        let (x, y, o) = (p.desc(SELF), p.desc(TARGET), p.desc(OUT));
        let list = float_dtypes(p.family);
        let promote = promote_type(x.dtype, y.dtype)
            .filter(|d| list.contains(d))
            .ok_or_else(|| {
                invalid(format!(
                    "the promote dtype of self {} and target {} should be in {}",
                    dtype_name(x.dtype),
                    dtype_name(y.dtype),
                    dtype_list(list)
                ))
            })?;
        for arg in [SELF, TARGET, OUT] {
            p.require_dtype(arg, list)?;
        }
        require_reduction(reduction)?;
        p.require_max_dims(SELF, MAX_DIMS)?;
        p.require_max_dims(TARGET, MAX_DIMS)?;
        let b = broadcast(&x.dims, &y.dims).ok_or_else(|| {
            invalid(format!(
                "self shape {:?} and target shape {:?} can not broadcast",
                x.dims, y.dims
            ))
        })?;
        if reduction == 0 {
            require_out_broadcast(&o.dims, &b)?;
        }
        if reduction != 0 && !o.dims.is_empty() {
            return Err(invalid(format!(
                "out shape {:?} should be 0-D for reduction {reduction}",
                o.dims
            )));
        }
        let empty = x.is_empty() || y.is_empty();
        let mut decision = Decision::new(promote, &b, empty && reduction == 0);
        decision.attrs[REDUCTION] = Attr::Int(reduction);
        decision.attrs[EMPTY] = Attr::Bool(empty);
        p.finish(decision)
    };
    OP.phase1(outs, &args, checks)
}

/// Repeated halving: the upper part added onto the lower, the kept length rounded up to a
/// block of 8 floats, until one block is left; then that block halved to one value.
fn halving_sum(v: &mut [f32]) -> f32 {
    let mut n = v.len();
    while n > 8 {
        let half = n.div_ceil(2).next_multiple_of(8);
        for i in 0..n - half {
            v[i] += v[half + i];
        }
        n = half;
    }
    while n > 1 {
        let half = n.div_ceil(2);
        for i in 0..n - half {
            v[i] += v[half + i];
        }
        n = half;
    }
    v.first().copied().unwrap_or(0.0)
}

fn run(call: &KernelCall, scratch: &mut Scratch) -> Result<(), String> {
    let reduction = call.decision().attr_i64(REDUCTION);
    let compute = DType::from_acl(call.decision().compute).ok_or("no compute dtype")?;
    if matches!(call.decision().attrs[EMPTY], Attr::Bool(true)) {
        return call.write(OUT, &[if reduction == 1 { f32::NAN } else { 0.0 }]);
    }
    let shape = &call.decision().out_shape;
    let [x, y] = scratch.get::<2>(call.decision().numel());
    call.read(SELF, shape, x)?;
    call.read(TARGET, shape, y)?;
    for (d, &t) in x.iter_mut().zip(y.iter()) {
        let diff = compute.round(*d) - compute.round(t);
        *d = diff * diff;
    }
    if reduction == 0 {
        x.iter_mut().for_each(|v| *v = compute.round(*v));
        return call.write(OUT, x);
    }
    let scale = if reduction == 1 {
        (1.0 / x.len() as f64) as f32
    } else {
        1.0
    };
    let mut acc = 0.0f32;
    for tile in x.chunks_mut(TILE) {
        acc += halving_sum(tile) * scale;
    }
    call.write(OUT, &[compute.round(acc)])
}
