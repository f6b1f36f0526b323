//! `aclnnMatmul` (ops-nn `matmul/mat_mul_v3`): torch.matmul with batch broadcasting.
//!
//! Phase-1 checks in the vendor's order:
//! 1. `workspaceSize` or `executor` NULL, then self, mat2, out NULL: 161001;
//! 2. the rule check, 161002. Atlas A2 / A3 (the "A2 rule"): self, mat2 and out in
//!    {FLOAT, FLOAT16, BF16}, cubeMathType in −1..4 (−1 acts as 0). Other products (the
//!    "default rule"): dtypes in {FLOAT, FLOAT16}; an f32 input with cubeMathType 0, 3 or
//!    −1 is refused. (The vendor's default rule reads past its table for f16 inputs with
//!    a cubeMathType above 3 or below −1, and gives f32 inputs with 4 no meaning: the
//!    simulator refuses both, loudly, rather than invent a result.)
//! 3. mat2 stored FRACTAL_NZ with f16 and bf16 inputs: 161002;
//! 4. self or mat2 outside 1..6 dims, K mismatch `(self[-1]` against `mat2[0]` for a 1-D/2-D
//!    mat2, else `mat2[-2])`, batch dims that do not broadcast: 161002;
//! 5. self or out stored FRACTAL_NZ: 161002;
//! 6. out empty with an empty input: success, workspace 0.
//! 7. Neither out's shape nor its dtype against the inputs is checked: the result is
//!    reshaped into out's view, so any out with the right element count works; another
//!    count fails in the vendor's Reshape, 561103.
//!
//! Compute dtype (A2 rule): f16·f16 → f16, bf16·bf16 → bf16, f16·bf16 → f32 (f16 with 2);
//! with an f32 input: 2 → f16, 1 and 3 → f32 with operands rounded to HF32, 0 and 4 → f32.
//! Default rule: f16. Operands are rounded to the compute dtype, multiplied with f32
//! accumulation (a real GEMM, `matrixmultiply::sgemm`, over each batch), and the kernel
//! writes f32 when out is f32 (A2: unless cubeMathType is 2) or the compute dtype
//! otherwise; a cast to out's dtype follows. K = 0 with a non-empty out gives zeros. Any
//! view (transposed, strided) is read through its strides. The HF32 layout is not
//! documented: the simulator keeps 10 explicit mantissa bits, rounding ties away from zero.

use crate::cube::{as_matrix, compute_rule, gemm, product, round_operands, to_i64};
use crate::nnopbase::{
    Arg, Attr, Decision, KernelCall, OpDef, OutParams, Phase1, invalid, op_def, positions,
};
use crate::state::fail;
use crate::stream::Scratch;
use ascend_sys::*;

positions!(SELF, MAT2, OUT);
// Attributes: the kernel's output dtype and whether operands round to HF32.
positions!(KERNEL_OUT, HF32);

pub(crate) static OP: OpDef =
    op_def!("Matmul", ["self", "mat2", "out"], [SELF, MAT2] -> [OUT], run);

pub(crate) fn get_workspace_size(
    self_: *const aclTensor,
    mat2: *const aclTensor,
    out: *mut aclTensor,
    cube_math_type: i8,
    outs: OutParams<'_>,
) -> aclnnStatus {
    let args = [Arg::Tensor(self_), Arg::Tensor(mat2), Arg::Tensor(out)];
    let checks = |p: Phase1<'_>| {
        let (a, b, o) = (p.desc(SELF), p.desc(MAT2), p.desc(OUT));
        let (compute, hf32, kernel_out) =
            compute_rule(p.family, a.dtype, b.dtype, o.dtype, cube_math_type).map_err(invalid)?;
        let mixed = [a.dtype, b.dtype] == [ACL_FLOAT16, ACL_BF16]
            || [a.dtype, b.dtype] == [ACL_BF16, ACL_FLOAT16];
        if mixed && b.format == ACL_FORMAT_FRACTAL_NZ {
            return Err(invalid(
                "mat2 stored FRACTAL_NZ with f16 and bf16 inputs".into(),
            ));
        }
        let prod = product(&a.dims, &b.dims, ["self", "mat2"]).map_err(invalid)?;
        if let Some(name) = [(a, "self"), (o, "out")]
            .iter()
            .find(|(d, _)| d.format == ACL_FORMAT_FRACTAL_NZ)
        {
            return Err(invalid(format!(
                "{} stored FRACTAL_NZ is not supported",
                name.1
            )));
        }
        let numel = |d: &[i64]| d.iter().product::<i64>();
        if o.is_empty() && (a.is_empty() || b.is_empty()) {
            let decision = Decision::new(compute, &o.dims, true);
            return p.finish(decision);
        }
        if numel(&o.dims) != numel(&prod.out) {
            return Err(fail(
                ACLNN_ERR_INNER_NULLPTR,
                format!(
                    "Reshape of the result {:?} into out's view {:?} fails: the element counts differ",
                    prod.out, o.dims
                ),
            ));
        }
        let mut decision = Decision::new(compute, &prod.out, false);
        decision.attrs[KERNEL_OUT] = Attr::DType(kernel_out);
        decision.attrs[HF32] = Attr::Bool(hf32);
        p.finish(decision)
    };
    OP.phase1(outs, &args, checks)
}

fn run(call: &KernelCall, scratch: &mut Scratch) -> Result<(), String> {
    let (ad, bd) = (call.dims(SELF), call.dims(MAT2));
    let pr = product(&to_i64(ad), &to_i64(bd), ["self", "mat2"])?;
    let (na, nb, nc): (usize, usize, usize) = (
        ad.iter().product(),
        bd.iter().product(),
        call.decision().numel(),
    );
    let [a, b, c] = scratch.get::<3>(na.max(nb).max(nc));
    let (a, b, c) = (&mut a[..na], &mut b[..nb], &mut c[..nc]);
    call.read(SELF, ad, a)?;
    call.read(MAT2, bd, b)?;
    let hf = matches!(call.decision().attrs[HF32], Attr::Bool(true));
    round_operands(a, call.decision().compute, hf);
    round_operands(b, call.decision().compute, hf);
    gemm(a, &as_matrix(ad, true), b, &as_matrix(bd, false), &pr, c);
    if let Attr::DType(kout) = call.decision().attrs[KERNEL_OUT] {
        round_operands(c, kout, false);
    }
    call.write(OUT, c)
}
