//! Rounding f64 values once (to nearest, ties to even) to f16 or bf16, 16 at a time on
//! AVX-512F: round to odd through f32, then F16C or an integer round-to-nearest-even.

use super::simd::Isa;
use crate::element::{DType, Element};
use half::{bf16, f16};

/// The 16-bit compute types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Narrow {
    F16,
    Bf16,
}

impl Narrow {
    /// The 16-bit floating format of a compute type, `None` for f32 (and the integers).
    pub(crate) fn of(dtype: DType) -> Option<Narrow> {
        match dtype {
            DType::F32
            | DType::F64
            | DType::I32
            | DType::I64
            | DType::I8
            | DType::U8
            | DType::Bool => None,
            DType::F16 => Some(Narrow::F16),
            DType::BF16 => Some(Narrow::Bf16),
        }
    }

    /// The value of the bits `b` of this format (exact).
    #[inline]
    pub(crate) fn value(self, b: u16) -> f32 {
        match self {
            Narrow::F16 => f16::from_bits(b).to_f32(),
            Narrow::Bf16 => bf16::from_bits(b).to_f32(),
        }
    }
}

/// `out[i]` = the bits of `src[i]` rounded once (to nearest, ties to even) to f16 or bf16,
/// like [`crate::Element::from_f64`]. Both slices must have the same length.
pub(crate) fn narrow16(isa: Isa, to: Narrow, src: &[f64], out: &mut [u16]) {
    assert_eq!(src.len(), out.len());
    #[cfg(target_arch = "x86_64")]
    if isa == Isa::Avx512 {
        // SAFETY: `Isa::Avx512` is only produced when avx512f and f16c were detected.
        return unsafe { x86::narrow16_avx512(to, src, out) };
    }
    let _ = isa;
    narrow16_scalar(to, src, out);
}

/// [`narrow16`] in scalar code.
pub(crate) fn narrow16_scalar(to: Narrow, src: &[f64], out: &mut [u16]) {
    for (o, &v) in out.iter_mut().zip(src) {
        *o = match to {
            Narrow::F16 => <f16 as Element>::from_f64(v).to_bits(),
            Narrow::Bf16 => <bf16 as Element>::from_f64(v).to_bits(),
        };
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{Narrow, narrow16_scalar};
    use std::arch::x86_64::*;

    /// Load of 8 f64 from `s[..8]`.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn load_f64(s: &[f64]) -> __m512d {
        assert!(s.len() >= 8);
        // SAFETY: `s` has at least 8 elements (checked above); unaligned load.
        unsafe { _mm512_loadu_pd(s.as_ptr()) }
    }

    /// 8 f64 rounded to f32 toward zero, with the last bit set where that was inexact
    /// (round to odd, see [`crate::element`]): a following round-to-nearest-even to f16
    /// or bf16 is then a single correct rounding.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn to_f32_odd(v: __m512d) -> __m256i {
        let toward_zero = _mm512_cvt_roundpd_ps::<{ _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC }>(v);
        let inexact = _mm512_cmp_pd_mask::<_CMP_NEQ_UQ>(_mm512_cvtps_pd(toward_zero), v);
        let odd_bit = _mm512_cvtepi64_epi32(_mm512_maskz_set1_epi64(inexact, 1));
        _mm256_or_si256(_mm256_castps_si256(toward_zero), odd_bit)
    }

    /// See [`super::narrow16`]: 16 values at a time, the rest in scalar code.
    ///
    /// # Safety
    /// The CPU must support AVX-512F and F16C; slices of equal length.
    #[target_feature(enable = "avx512f,f16c")]
    pub(super) unsafe fn narrow16_avx512(to: Narrow, src: &[f64], out: &mut [u16]) {
        let body = src.len() - src.len() % 16;
        for (o, s) in out[..body]
            .chunks_exact_mut(16)
            .zip(src[..body].chunks_exact(16))
        {
            let odd = [to_f32_odd(load_f64(s)), to_f32_odd(load_f64(&s[8..]))];
            let bits = match to {
                Narrow::F16 => {
                    // vcvtps2ph with an immediate rounding mode: to nearest, ties to even
                    let half = odd.map(|v| {
                        _mm256_cvtps_ph::<_MM_FROUND_TO_NEAREST_INT>(_mm256_castsi256_ps(v))
                    });
                    _mm256_set_m128i(half[1], half[0])
                }
                Narrow::Bf16 => {
                    let x = _mm512_inserti64x4::<1>(_mm512_castsi256_si512(odd[0]), odd[1]);
                    // to nearest, ties to even on the upper 16 bits; NaN stays a quiet NaN
                    let lsb = _mm512_and_si512(_mm512_srli_epi32::<16>(x), _mm512_set1_epi32(1));
                    let bias = _mm512_add_epi32(lsb, _mm512_set1_epi32(0x7fff));
                    let rounded = _mm512_srli_epi32::<16>(_mm512_add_epi32(x, bias));
                    let quiet =
                        _mm512_or_si512(_mm512_srli_epi32::<16>(x), _mm512_set1_epi32(0x40));
                    let xf = _mm512_castsi512_ps(x);
                    let nan = _mm512_cmp_ps_mask::<_CMP_UNORD_Q>(xf, xf);
                    _mm512_cvtepi32_epi16(_mm512_mask_blend_epi32(nan, rounded, quiet))
                }
            };
            // SAFETY: `o` has exactly 16 u16 (32 bytes); unaligned store.
            unsafe { _mm256_storeu_si256(o.as_mut_ptr().cast(), bits) };
        }
        narrow16_scalar(to, &src[body..], &mut out[body..]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Deterministic xorshift for test inputs.
    fn next(state: &mut u64) -> u64 {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        *state
    }

    /// The vectorized once-rounding to f16/bf16 against the scalar one, on values next to
    /// midpoints of both formats (where rounding through the nearest f32 goes wrong), near
    /// the overflow thresholds, in the subnormal ranges and at specials.
    #[test]
    fn narrow16_paths_agree() {
        let mut s = 0x5151_7e7e_0123_9876u64;
        let mut v = vec![
            0.0,
            -0.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            f64::MAX,
            -f64::MAX,
            65519.99,
            65520.0,
            3.3961e38,
            1e-50,
            -1e-300,
        ];
        while v.len() < 1 << 16 {
            let r = next(&mut s);
            let mantissa = 1.0 + (r >> 12) as f64 / (1u64 << 52) as f64;
            let e = ((r >> 4) % 80) as i32 - 40;
            let base = mantissa * 2f64.powi(e);
            // an f16/bf16 midpoint nudged by less than half an f32 ulp, or any value
            let mid16 = (base * 2048.0).floor() / 2048.0 + 2f64.powi(-12);
            let midb = (base * 256.0).floor() / 256.0 + 2f64.powi(-9);
            let nudge = ((r & 7) as f64 - 3.5) * 2f64.powi(-40);
            let sign = if r & 8 == 0 { 1.0 } else { -1.0 };
            v.push(
                sign * match r % 3 {
                    0 => mid16 * (1.0 + nudge) * 2f64.powi(e.min(0)),
                    1 => midb * (1.0 + nudge) * 2f64.powi(e),
                    _ => base * 2f64.powi(3 * e),
                },
            );
        }
        for to in [Narrow::F16, Narrow::Bf16] {
            let mut want = vec![0u16; v.len()];
            narrow16_scalar(to, &v, &mut want);
            for isa in Isa::available() {
                let mut got = vec![0u16; v.len()];
                narrow16(isa, to, &v, &mut got);
                for i in 0..v.len() {
                    let nan = |b: u16| match to {
                        Narrow::F16 => half::f16::from_bits(b).is_nan(),
                        Narrow::Bf16 => half::bf16::from_bits(b).is_nan(),
                    };
                    assert!(
                        got[i] == want[i] || (nan(got[i]) && nan(want[i])),
                        "{} {to:?} {:e}: {:#06x} vs {:#06x}",
                        isa.name(),
                        v[i],
                        got[i],
                        want[i]
                    );
                }
            }
        }
    }
}
