//! The cube unit shared by the matrix operators: cubeMathType's compute-dtype rules per
//! product, torch.matmul's shape rule, HF32 rounding, and a batched f32 GEMM
//! (`matrixmultiply`). Nothing here knows a particular operator.

use crate::nnopbase::broadcast;
use crate::slab::Dims64;
use crate::strided::DType;
use crate::tables::{Family, dtype_name};
use ascend_sys::*;

/// The compute dtype, whether f32 operands round to HF32, and the kernel's output dtype.
pub(crate) fn compute_rule(
    family: Family,
    a: aclDataType,
    b: aclDataType,
    out: aclDataType,
    cmt: i8,
) -> Result<(aclDataType, bool, aclDataType), String> {
    let (f32_in, f16_in) = (
        a == ACL_FLOAT || b == ACL_FLOAT,
        a == ACL_FLOAT16 || b == ACL_FLOAT16,
    );
    if !family.has_bf16() {
        let ok = |d| d == ACL_FLOAT || d == ACL_FLOAT16;
        if let Some(d) = [a, b, out].into_iter().find(|&d| !ok(d)) {
            return Err(format!(
                "dtype {} is not in [FLOAT, FLOAT16] on this product",
                dtype_name(d)
            ));
        }
        if f32_in && !matches!(cmt, 1 | 2) || !(-1..=3).contains(&cmt) {
            return Err(format!(
                "cubeMathType {cmt} is not supported for these dtypes on this product (f32 inputs need 1 or 2; others -1..3)"
            ));
        }
        return Ok((
            ACL_FLOAT16,
            false,
            if out == ACL_FLOAT {
                ACL_FLOAT
            } else {
                ACL_FLOAT16
            },
        ));
    }
    let ok = |d| matches!(d, ACL_FLOAT | ACL_FLOAT16 | ACL_BF16);
    if let Some(d) = [a, b, out].into_iter().find(|&d| !ok(d)) {
        return Err(format!(
            "dtype {} is not in [FLOAT, FLOAT16, BF16]",
            dtype_name(d)
        ));
    }
    if !(-1..=4).contains(&cmt) {
        return Err(format!("cubeMathType {cmt} is outside -1..4"));
    }
    let (compute, hf32) = if f32_in {
        match cmt {
            2 => (ACL_FLOAT16, false),
            1 | 3 => (ACL_FLOAT, true),
            _ => (ACL_FLOAT, false),
        }
    } else if a == b {
        (a, false)
    } else if cmt == 2 {
        (ACL_FLOAT16, false)
    } else {
        (ACL_FLOAT, false)
    };
    let same_half = a == b && !f32_in && (f16_in || a == ACL_BF16);
    let direct_f32 = out == ACL_FLOAT && (cmt != 2 || same_half);
    Ok((compute, hf32, if direct_f32 { ACL_FLOAT } else { compute }))
}

/// The product's shape: broadcast batch dims, M, K, N, and the result's dims.
pub(crate) struct Product {
    pub batch: Dims64,
    pub m: usize,
    pub k: usize,
    pub n: usize,
    pub out: Dims64,
}

/// torch.matmul's shape rule for 1..6-dim operands.
pub(crate) fn product(a: &[i64], b: &[i64], names: [&str; 2]) -> Result<Product, String> {
    for (d, name) in [a, b].into_iter().zip(names) {
        if !(1..=6).contains(&d.len()) {
            return Err(format!("{name} has {} dims; 1 to 6 are supported", d.len()));
        }
    }
    let (ra, rb) = (a.len(), b.len());
    let (ka, kb) = (a[ra - 1], if rb <= 2 { b[0] } else { b[rb - 2] });
    if ka != kb {
        return Err(format!(
            "{} shape {a:?} and {} shape {b:?}: K {ka} != {kb}",
            names[0], names[1]
        ));
    }
    let lead = |d: &[i64]| Dims64::from_slice(&d[..d.len().saturating_sub(2)]);
    let batch = broadcast(&lead(a), &lead(b))
        .ok_or_else(|| format!("batch dims of {a:?} and {b:?} can not broadcast"))?;
    let (m, n) = (
        if ra > 1 { a[ra - 2] } else { 1 },
        if rb > 1 { b[rb - 1] } else { 1 },
    );
    let tail = [(ra > 1).then_some(m), (rb > 1).then_some(n)];
    let mut out = Dims64::zeroed(batch.len() + tail.iter().flatten().count());
    out[..batch.len()].copy_from_slice(&batch);
    for (o, &t) in out[batch.len()..].iter_mut().zip(tail.iter().flatten()) {
        *o = t;
    }
    let u = |v: i64| v as usize;
    Ok(Product {
        batch,
        m: u(m),
        k: u(ka),
        n: u(n),
        out,
    })
}

/// `x` rounded to 10 explicit mantissa bits, ties away from zero (finite values only).
pub(crate) fn hf32(x: f32) -> f32 {
    if !x.is_finite() {
        return x;
    }
    f32::from_bits((x.to_bits() + (1 << 12)) & !((1 << 13) - 1))
}

/// Rounds operands to the compute dtype (`hf32`: to HF32).
pub(crate) fn round_operands(v: &mut [f32], compute: aclDataType, hf: bool) {
    match DType::from_acl(compute) {
        Some(DType::F32) if hf => v.iter_mut().for_each(|x| *x = hf32(*x)),
        Some(dt @ (DType::F16 | DType::Bf16)) => v.iter_mut().for_each(|x| *x = dt.round(*x)),
        _ => {}
    }
}

/// `c = a @ b` per batch over contiguous row-major operands of dims `ad`/`bd`.
/// `ad`/`bd` are the operands' dims with a 1-D operand unsqueezed (M = 1 or N = 1).
pub(crate) fn gemm(a: &[f32], ad: &[usize], b: &[f32], bd: &[usize], pr: &Product, c: &mut [f32]) {
    let (m, k, n) = (pr.m, pr.k, pr.n);
    if k == 0 {
        c.fill(0.0);
        return;
    }
    let batch = &pr.batch;
    // Offset of a batch index into an operand whose own batch dims broadcast to `batch`.
    let offset = |d: &[usize], mat: usize, mut idx: usize| {
        let lead = &d[..d.len().saturating_sub(2)];
        let (mut off, mut stride) = (0, mat);
        for (j, &size) in batch.iter().enumerate().rev() {
            let size = size.max(1) as usize;
            let i = idx % size;
            idx /= size;
            let own = (j + lead.len())
                .checked_sub(batch.len())
                .and_then(|t| lead.get(t));
            if let Some(&own) = own {
                off += if own == 1 { 0 } else { i * stride };
                stride *= own;
            }
        }
        off
    };
    for (bi, cb) in c.chunks_exact_mut(m * n).enumerate() {
        let (ao, bo) = (offset(ad, m * k, bi), offset(bd, k * n, bi));
        // SAFETY: `a[ao..ao + m*k]`, `b[bo..bo + k*n]` and `cb` (m*n) are in bounds: each
        // operand holds its batch dims' product of matrices, and the offsets index one.
        unsafe {
            matrixmultiply::sgemm(
                m,
                k,
                n,
                1.0,
                a[ao..].as_ptr(),
                k as isize,
                1,
                b[bo..].as_ptr(),
                n as isize,
                1,
                0.0,
                cb.as_mut_ptr(),
                n as isize,
                1,
            );
        }
    }
}

/// Dims as `i64`s.
pub(crate) fn to_i64(d: &[usize]) -> Dims64 {
    let mut v = Dims64::zeroed(d.len());
    for (o, &x) in v.iter_mut().zip(d) {
        *o = x as i64;
    }
    v
}

/// Dims with a 1-D operand unsqueezed: at 0 for the left operand, at -1 for the right.
pub(crate) fn as_matrix(d: &[usize], left: bool) -> crate::slab::Shape {
    match (d.len(), left) {
        (1, true) => crate::slab::Shape::from_slice(&[1, d[0]]),
        (1, false) => crate::slab::Shape::from_slice(&[d[0], 1]),
        _ => crate::slab::Shape::from_slice(d),
    }
}
