//! `aclnnAddmm` (ops-nn `matmul/mat_mul_v3`): `out = beta·self + alpha·(mat1 @ mat2)`;
//! beta precedes alpha in the C order.
//!
//! Phase-1 checks in the vendor's order:
//! 1. `workspaceSize` or `executor` NULL, then self, mat1, mat2, beta, alpha, out NULL:
//!    161001;
//! 2. the cube rule check of Matmul on (mat1, mat2, out), and self's dtype in the same
//!    list: 161002;
//! 3. mat1 or mat2 not 2-D, `mat1[1]` != `mat2[0]`, self stored FRACTAL_NZ: 161002;
//! 4. self above 2 view dims, self with no storage dim, self not broadcastable to
//!    `(mat1[0], mat2[1])`: 161002;
//! 5. out: empty when `mat1[0]` or `mat2[1]` is 0, else its dims 0 and 1 ==
//!    `(mat1[0], mat2[1])` (only those two): 161002;
//! 6. cubeMathType above 4, or 4 off Atlas A2 / A3: 161002;
//! 7. self empty, or `mat1[0]` or `mat2[1]` 0: success, workspace 0.
//!
//! beta and alpha are read as doubles; their dtypes are never checked. "Is 1" means
//! |v − 1| ≤ FLT_EPSILON and "is 0" |v| ≤ FLT_EPSILON. The chain, first match: K = 0 or
//! alpha 0 → beta·self broadcast (the product is never computed, so NaN in mat1/mat2 does
//! not reach out); beta 0 → alpha·(mat1 @ mat2) (self never read); alpha = beta = 1 with a
//! bias row (1-D of length `mat2[1]`, or (1, `mat2[1])`) → the bias is added in f32 inside the
//! matmul kernel before its one rounding; otherwise t = beta·self in self's dtype and the
//! matmul's result m, both cast to PromoteType, then t + m (alpha 1) or t + alpha·m. The
//! matmul itself follows Matmul's cubeMathType rules. A result of another shape than out's
//! fails in the vendor's ViewCopy, 561103.

use crate::cube::{Product, compute_rule, gemm, round_operands};
use crate::nnopbase::{
    Arg, Attr, Decision, KernelCall, OpDef, OutParams, Phase1, broadcast, invalid, op_def,
    positions,
};
use crate::slab::{Dims64, Shape};
use crate::state::fail;
use crate::stream::Scratch;
use crate::tables::{dtype_name, promote_type};
use ascend_sys::*;

positions!(SELF, MAT1, MAT2, OUT);
positions!(BETA, ALPHA, KERNEL_OUT, HF32);

pub(crate) static OP: OpDef =
    op_def!("Addmm", ["self", "mat1", "mat2", "out"], [SELF, MAT1, MAT2] -> [OUT], run);

#[allow(clippy::too_many_arguments)]
pub(crate) fn get_workspace_size(
    self_: *const aclTensor,
    mat1: *const aclTensor,
    mat2: *const aclTensor,
    beta: *const aclScalar,
    alpha: *const aclScalar,
    out: *mut aclTensor,
    cube_math_type: i8,
    outs: OutParams<'_>,
) -> aclnnStatus {
    let args = [
        Arg::Tensor(self_),
        Arg::Tensor(mat1),
        Arg::Tensor(mat2),
        Arg::object(beta, "beta"),
        Arg::object(alpha, "alpha"),
        Arg::Tensor(out),
    ];
    let checks = |p: Phase1<'_>| {
        let (beta, alpha) = (p.scalar(beta, "beta")?, p.scalar(alpha, "alpha")?);
        let (s, a, b, o) = (p.desc(SELF), p.desc(MAT1), p.desc(MAT2), p.desc(OUT));
        let cmt = cube_math_type;
        let (compute, hf32, kernel_out) =
            compute_rule(p.family, a.dtype, b.dtype, o.dtype, cmt).map_err(invalid)?;
        compute_rule(p.family, s.dtype, s.dtype, s.dtype, cmt)
            .map_err(|m| invalid(format!("self: {m}")))?;
        if a.dims.len() != 2 || b.dims.len() != 2 || a.dims[1] != b.dims[0] {
            return Err(invalid(format!(
                "mat1 {:?} and mat2 {:?} must be 2-D with mat1[1] == mat2[0]",
                a.dims, b.dims
            )));
        }
        if s.format == ACL_FORMAT_FRACTAL_NZ {
            return Err(invalid("self stored FRACTAL_NZ is not supported".into()));
        }
        let np = [a.dims[0], b.dims[1]];
        let fits = broadcast(&s.dims, &np).is_some_and(|d| *d == np);
        if s.dims.len() > 2 || s.storage.is_empty() || !fits {
            return Err(invalid(format!(
                "self (dims {:?}, storage {:?}) must have 1..2 storage dims, at most 2 dims, and broadcast to {np:?}",
                s.dims, s.storage
            )));
        }
        let out_ok = if np.contains(&0) {
            o.is_empty()
        } else {
            o.dims.len() >= 2 && o.dims[..2] == np
        };
        if !out_ok {
            return Err(invalid(format!(
                "out shape {:?} does not match {np:?}",
                o.dims
            )));
        }
        if cmt > 4 || cmt == 4 && !p.family.has_bf16() {
            return Err(invalid(format!(
                "cubeMathType {cmt} is not supported on {}",
                p.soc
            )));
        }
        if s.is_empty() || np.contains(&0) {
            let decision = Decision::new(compute, &np, true);
            return p.finish(decision);
        }
        if *o.dims != np {
            return Err(fail(
                ACLNN_ERR_INNER_NULLPTR,
                format!(
                    "ViewCopy of the result {np:?} into out {:?} fails: the shapes differ",
                    o.dims
                ),
            ));
        }
        if promote_type(s.dtype, kernel_out).is_none() {
            return Err(invalid(format!(
                "self dtype {} does not promote",
                dtype_name(s.dtype)
            )));
        }
        let mut decision = Decision::new(compute, &np, false);
        decision.attrs = [
            Attr::Scalar(beta),
            Attr::Scalar(alpha),
            Attr::DType(kernel_out),
            Attr::Bool(hf32),
        ];
        p.finish(decision)
    };
    OP.phase1(outs, &args, checks)
}

fn run(call: &KernelCall, scratch: &mut Scratch) -> Result<(), String> {
    let (ad, bd) = (call.dims(MAT1), call.dims(MAT2));
    let (n, k, p) = (ad[0], ad[1], bd[1]);
    let (beta, alpha) = (
        call.decision().attr_f64(BETA),
        call.decision().attr_f64(ALPHA),
    );
    let (is0, is1) = (
        |v: f64| v.abs() <= f64::from(f32::EPSILON),
        |v: f64| (v - 1.0).abs() <= f64::from(f32::EPSILON),
    );
    let Attr::DType(kout) = call.decision().attrs[KERNEL_OUT] else {
        return Err("the decision holds no kernel dtype".into());
    };
    let self_dt = call.dtype(SELF)?;
    let [a, b, c, t] = scratch.get::<4>((n * k).max(k * p).max(n * p));
    let (a, b, c, t) = (
        &mut a[..n * k],
        &mut b[..k * p],
        &mut c[..n * p],
        &mut t[..n * p],
    );
    let np = Shape::from_slice(&[n, p]);
    let matmul = !(k == 0 || is0(alpha));
    if !is0(beta) || !matmul {
        call.read(SELF, &np, t)?;
    }
    if matmul {
        call.read(MAT1, ad, a)?;
        call.read(MAT2, bd, b)?;
        let hf = matches!(call.decision().attrs[HF32], Attr::Bool(true));
        round_operands(a, call.decision().compute, hf);
        round_operands(b, call.decision().compute, hf);
        let pr = Product {
            batch: Dims64::default(),
            m: n,
            k,
            n: p,
            out: Dims64::default(),
        };
        gemm(a, &[n, k], b, &[k, p], &pr, c);
    }
    let bias_row =
        call.dims(SELF).iter().product::<usize>() == p && call.dims(SELF).last() == Some(&p);
    if matmul && is1(alpha) && is1(beta) && bias_row {
        // The bias enters the kernel's f32 accumulator; one rounding at the end.
        c.iter_mut().zip(t.iter()).for_each(|(m, &s)| *m += s);
        round_operands(c, kout, false);
        return call.write(OUT, c);
    }
    if matmul {
        round_operands(c, kout, false);
    }
    let promote = promote_type(self_dt, kout).ok_or("no promote dtype")?;
    let (bf, af) = (beta as f32, alpha as f32);
    for (r, &s) in c.iter_mut().zip(t.iter()) {
        let m = *r;
        let s = if is1(beta) {
            s
        } else {
            round1(self_dt, bf * s)
        };
        *r = match (matmul, is0(beta)) {
            (false, _) => s,
            (true, true) if is1(alpha) => m,
            (true, true) => round1(kout, af * m),
            (true, false) if is1(alpha) => round1(promote, s + m),
            (true, false) => round1(promote, s + af * m),
        };
    }
    call.write(OUT, c)
}

fn round1(dt: aclDataType, v: f32) -> f32 {
    let mut one = [v];
    round_operands(&mut one, dt, false);
    one[0]
}
