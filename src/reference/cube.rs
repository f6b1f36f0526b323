//! What a [`CubeMath`] makes of a matrix product on Atlas A2/A3 (the vendor's "A2 rule",
//! also Ascend 950's): the operands' compute format and the dtype the kernel writes.

use crate::attrs::CubeMath;
use crate::element::DType;
use half::{bf16, f16};

/// The format a matrix product's operands are rounded to before the products are formed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CubeFormat {
    /// IEEE f32 (operands unchanged when f32, widened exactly otherwise).
    F32,
    /// HF32: f32's sign and exponent with 10 fraction bits (`CubeMath::UseHf32` and
    /// `AllowFp32DownPrecision` on an f32 compute dtype).
    Hf32,
    /// f16.
    F16,
    /// bf16.
    Bf16,
}

impl CubeFormat {
    /// The dtype of the compute format (HF32 is an f32 computation).
    pub const fn dtype(self) -> DType {
        match self {
            CubeFormat::F32 | CubeFormat::Hf32 => DType::F32,
            CubeFormat::F16 => DType::F16,
            CubeFormat::Bf16 => DType::BF16,
        }
    }

    /// `v` (a value of one of the operand dtypes) rounded to the format.
    pub(crate) fn round(self, v: f64) -> f64 {
        match self {
            CubeFormat::F32 => f64::from(v as f32),
            CubeFormat::Hf32 => f64::from(hf32(v as f32)),
            CubeFormat::F16 => f16::from_f64(v).to_f64(),
            CubeFormat::Bf16 => bf16::from_f64(v).to_f64(),
        }
    }
}

/// The compute format of `self @ mat2` with dtypes `a`, `b` under `math`, by the A2 rule
/// (ops-nn `matmul_util.cpp`): f32 with f32 or f16 computes in f32, HF32 for
/// `AllowFp32DownPrecision`/`UseHf32`, f16 for `UseFp16`; f32 with bf16 likewise; f16
/// with f16 in f16 and bf16 with bf16 in bf16 whatever the value; f16 with bf16 in f32
/// (f16 for `UseFp16`).
///
/// # Examples
/// ```
/// use ascendcl::{CubeMath, DType, reference::{CubeFormat, cube_format}};
///
/// assert_eq!(cube_format(DType::F32, DType::F32, CubeMath::KeepDtype), CubeFormat::F32);
/// assert_eq!(cube_format(DType::F32, DType::F32, CubeMath::UseFp16), CubeFormat::F16);
/// assert_eq!(cube_format(DType::F32, DType::F16, CubeMath::UseHf32), CubeFormat::Hf32);
/// assert_eq!(cube_format(DType::BF16, DType::BF16, CubeMath::UseFp16), CubeFormat::Bf16);
/// ```
pub const fn cube_format(a: DType, b: DType, math: CubeMath) -> CubeFormat {
    use DType::{BF16, F16};
    match (a, b) {
        (F16, F16) => CubeFormat::F16,
        (BF16, BF16) => CubeFormat::Bf16,
        (F16, BF16) | (BF16, F16) => match math {
            CubeMath::UseFp16 => CubeFormat::F16,
            _ => CubeFormat::F32,
        },
        // At least one f32 operand.
        _ => match math {
            CubeMath::KeepDtype | CubeMath::UseFp32Add => CubeFormat::F32,
            CubeMath::AllowFp32DownPrecision | CubeMath::UseHf32 => CubeFormat::Hf32,
            CubeMath::UseFp16 => CubeFormat::F16,
        },
    }
}

/// The dtype the cube kernel writes for operand dtypes `a`, `b` under `math`, with compute
/// format `format` and output dtype `out` (before the cast to `out`): an f32 output is
/// written directly unless `math` is `UseFp16`; two f16 (or two bf16) operands with an
/// f32 output ("16-in-32-out") are not rounded to half either; otherwise the kernel writes
/// the compute dtype.
pub(crate) fn kernel_dtype(
    a: DType,
    b: DType,
    math: CubeMath,
    format: CubeFormat,
    out: DType,
) -> DType {
    let sixteen_in_32_out = a == b && a != DType::F32;
    if out == DType::F32 && (math != CubeMath::UseFp16 || sixteen_in_32_out) {
        DType::F32
    } else {
        format.dtype()
    }
}

/// `v` rounded to HF32: 11 significant bits, to nearest with ties away from zero (the
/// vendor's documentation of HF32 mode 1; its bit layout is not published), f32's
/// exponent range, infinities and NaN unchanged.
fn hf32(v: f32) -> f32 {
    if !v.is_finite() {
        return v;
    }
    // Adding half of the dropped range to the magnitude bits rounds halfway cases away
    // from zero; a carry into the exponent is the correct next power of two (or ∞).
    let bits = v.to_bits();
    f32::from_bits((bits + 0x1000) & !0x1FFF)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hf32_keeps_eleven_bits() {
        let p = |e: i32| 2f32.powi(e);
        assert_eq!(hf32(1.0 + p(-10)), 1.0 + p(-10));
        assert_eq!(hf32(1.0 + p(-11)), 1.0 + p(-10)); // tie away from zero
        assert_eq!(hf32(-(1.0 + p(-11))), -(1.0 + p(-10)));
        assert_eq!(hf32(1.0 + p(-12)), 1.0);
        assert_eq!(hf32(f32::MAX), f32::INFINITY);
        assert!(hf32(f32::NAN).is_nan());
        // f16 and bf16 values are exact in HF32
        for bits in (0u16..0x7C00).step_by(7) {
            let h = f16::from_bits(bits).to_f32();
            assert_eq!(hf32(h), h);
            let b = bf16::from_bits(bits).to_f32();
            assert_eq!(hf32(b), b);
        }
    }

    #[test]
    fn kernel_dtype_follows_the_output() {
        use CubeMath::{KeepDtype, UseFp16, UseHf32};
        use DType::{BF16, F16, F32};
        let k = |a, b, m| kernel_dtype(a, b, m, cube_format(a, b, m), F32);
        assert_eq!(k(F32, F32, UseFp16), F16);
        assert_eq!(k(F16, BF16, UseFp16), F16);
        assert_eq!(k(F16, F16, UseFp16), F32);
        assert_eq!(k(F16, F16, KeepDtype), F32);
        assert_eq!(k(F32, F32, UseHf32), F32);
        let f = cube_format(BF16, BF16, KeepDtype);
        assert_eq!(kernel_dtype(BF16, BF16, KeepDtype, f, F16), BF16);
        let f = cube_format(F32, F32, KeepDtype);
        assert_eq!(kernel_dtype(F32, F32, KeepDtype, f, BF16), F32);
    }
}
