//! The precise evaluation of the formulas of [`crate::reference::math`] on AVX2+FMA
//! (4 f64 lanes) and AVX-512F (8 lanes): the same operations in the same order as the
//! scalar code, with the root Taylor expansion blended in when a lane is in the root
//! window, and non-finite lanes recomputed with the scalar code (`mish'`) or blended
//! (`mish`).
//!
//! The vector code is written once, in the macro `precise!`, against a table of vector
//! operations that [`avx512`] and [`avx2`] each fill with their intrinsics (`ops!`). A
//! macro rather than a function generic over the table: each instance carries the
//! `#[target_feature]` of the operations it calls, so they inline into it as intrinsics
//! written out by hand do; one generic function could not carry the attribute for both
//! and would rely on being inlined itself first. The AVX-512 instance lives beside the
//! fast path that falls back to it ([`super::fast`]): rustc splits codegen units by
//! module, and only within one unit does LLVM pass the vectors to the cold patch in
//! registers.

use super::Vectorized;
use crate::reference::math::{Mish, MishGrad};
use std::arch::x86_64::*;
use std::array::from_fn;

/// An instruction set's table of the operations `precise!` uses, each function made
/// `#[inline]`, compiled with `$feature` and visible to the reference. Besides the types
/// `F` (a vector of `LANES` f64) and `M` (a lane mask), a table defines:
///
/// - `splat`, `zero`, `sub`, `add`, `mul`, `div`, `fmadd` (`a·b + c`, one rounding),
///   `abs`, and `min`, `max` as x86 defines them (`a < b ? a : b`, `a > b ? a : b`: `b`
///   if either is NaN);
/// - `pow2_from_shifted(t)`: `2^k` for `t = SHIFTER + k`, whose low mantissa bits hold
///   `k`, by adding the exponent bias and shifting it into the exponent field;
/// - `lt(a, b)` (ordered, false for NaN), `eq(a, b)` (ordered), `blend(m, a, b)` (`b` in
///   the lanes of `m`, `a` elsewhere), `any(m)`, `bits(m)` (lane `i` in bit `i`);
/// - `load` (`LANES` f32 widened), `load_f64`, `store` (`LANES` f64), `store_f32`
///   (`LANES` f64 rounded to f32), all from or to the start of a slice that they check is
///   long enough.
macro_rules! ops {
    (
        $feature:literal;
        $(
            $(#[$attr:meta])*
            fn $name:ident($($arg:ident: $ty:ty),*) $(-> $ret:ty)? $body:block
        )*
    ) => {
        $(
            $(#[$attr])*
            #[inline]
            #[target_feature(enable = $feature)]
            pub(crate) fn $name($($arg: $ty),*) $(-> $ret)? $body
        )*
    };
}

/// The precise formulas over the table `$ops`, compiled with `$feature`: `$product`
/// (`g · mish'(x)`) with its cold `$patch`, and `$mish`.
macro_rules! precise {
    (
        ops: $ops:ident, feature: $feature:literal, exp: $exp:ident, product: $product:ident,
        patch: $patch:ident, mish: $mish:ident
    ) => {
        /// `exp(max(−|x|, −708))`, as [`crate::reference::math::exp_neg_abs`].
        #[inline]
        #[target_feature(enable = $feature)]
        fn $exp(x: $ops::F) -> $ops::F {
            use crate::reference::math::{EXP_MIN_ARG, EXP_TAYLOR, LN2_HI, LN2_LO, LOG2E, SHIFTER};
            use $ops::*;
            let a = max(min(x, sub(zero(), x)), splat(EXP_MIN_ARG));
            let t = fmadd(a, splat(LOG2E), splat(SHIFTER));
            let k = sub(t, splat(SHIFTER));
            let r = fmadd(k, splat(-LN2_HI), a);
            let r = fmadd(k, splat(-LN2_LO), r);
            let mut p = splat(EXP_TAYLOR[0]);
            for &e in &EXP_TAYLOR[1..] {
                p = fmadd(p, r, splat(e));
            }
            p = fmadd(p, r, splat(1.0));
            p = fmadd(p, r, splat(1.0));
            mul(p, pow2_from_shifted(t))
        }

        /// Products `g · mish'(x)` of one vector.
        #[inline]
        #[target_feature(enable = $feature)]
        fn $product(g: $ops::F, x: $ops::F) -> $ops::F {
            use crate::reference::math::{R_HI, R_LO, ROOT_TAYLOR, ROOT_WINDOW};
            use $ops::*;
            let finite = lt(abs(x), splat(f64::INFINITY));
            let dhi = sub(x, splat(R_HI));
            let window = lt(abs(dhi), splat(ROOT_WINDOW));
            let v = $exp(x);
            let four_x1 = fmadd(splat(4.0), x, splat(4.0));
            let four_x6 = fmadd(splat(4.0), x, splat(6.0));
            // The coefficients of the x < 0 form where `neg` is set, of the x ≥ 0 form
            // elsewhere (see `math`).
            let neg = lt(x, zero());
            let h3 = blend(neg, four_x1, splat(1.0));
            let h2 = blend(neg, four_x6, splat(4.0));
            let h1 = blend(neg, splat(4.0), four_x6);
            let h0 = blend(neg, splat(1.0), four_x1);
            let pre = blend(neg, splat(1.0), v);
            let k2 = blend(neg, splat(2.0), splat(1.0));
            let k0 = blend(neg, splat(1.0), splat(2.0));
            let q = fmadd(fmadd(fmadd(h3, v, h2), v, h1), v, h0);
            let d = fmadd(fmadd(k2, v, splat(2.0)), v, k0);
            let mut m = div(mul(pre, q), mul(d, d));
            // Rare in real data: the Taylor expansion only when a lane needs it.
            if any(window) {
                let dd = sub(dhi, splat(R_LO));
                let mut p = splat(ROOT_TAYLOR[11]);
                for &c in ROOT_TAYLOR[..11].iter().rev() {
                    p = fmadd(p, dd, splat(c));
                }
                m = blend(window, m, mul(dd, p));
            }
            let prod = mul(g, m);
            let finite = bits(finite);
            if finite == (1 << LANES) - 1 {
                prod
            } else {
                $patch(g, x, prod, finite)
            }
        }

        /// Recomputes the lanes not set in `finite` with the scalar code (out of line:
        /// real inputs hardly hold ±∞ or NaN).
        #[cold]
        #[target_feature(enable = $feature)]
        fn $patch(g: $ops::F, x: $ops::F, prod: $ops::F, finite: u32) -> $ops::F {
            use $ops::*;
            let (mut ga, mut xa, mut pa) = ([0.0f64; LANES], [0.0f64; LANES], [0.0f64; LANES]);
            store(&mut ga, g);
            store(&mut xa, x);
            store(&mut pa, prod);
            for lane in 0..LANES {
                if finite & (1 << lane) == 0 {
                    pa[lane] = ga[lane] * crate::reference::math::nonfinite_dmish(xa[lane]);
                }
            }
            load_f64(&pa)
        }

        /// `mish(x)` of one vector, as [`crate::reference::math::mish`].
        #[inline]
        #[target_feature(enable = $feature)]
        fn $mish(x: $ops::F) -> $ops::F {
            use $ops::*;
            let v = $exp(x);
            let neg = lt(x, zero());
            let a = blend(neg, zero(), splat(1.0));
            let b = blend(neg, splat(1.0), zero());
            let c = blend(neg, mul(splat(2.0), mul(v, v)), splat(2.0));
            let numerator = fmadd(v, fmadd(a, v, splat(2.0)), b);
            let y = div(mul(x, numerator), add(numerator, c));
            // ±∞ and NaN: x + x, but −0 at −∞ (see `nonfinite_mish`)
            let finite = lt(abs(x), splat(f64::INFINITY));
            let y = blend(finite, add(x, x), y);
            blend(eq(x, splat(f64::NEG_INFINITY)), y, splat(-0.0))
        }
    };
}
pub(super) use precise;

/// The operations of the precise path on AVX-512F: 8 lanes, masks in mask registers.
pub(super) mod avx512 {
    use std::arch::x86_64::*;

    pub(crate) type F = __m512d;
    pub(crate) type M = __mmask8;
    pub(crate) const LANES: usize = 8;

    ops! { "avx512f";
        fn splat(v: f64) -> F { _mm512_set1_pd(v) }
        fn zero() -> F { _mm512_setzero_pd() }
        fn sub(a: F, b: F) -> F { _mm512_sub_pd(a, b) }
        fn add(a: F, b: F) -> F { _mm512_add_pd(a, b) }
        fn mul(a: F, b: F) -> F { _mm512_mul_pd(a, b) }
        fn div(a: F, b: F) -> F { _mm512_div_pd(a, b) }
        fn fmadd(a: F, b: F, c: F) -> F { _mm512_fmadd_pd(a, b, c) }
        fn min(a: F, b: F) -> F { _mm512_min_pd(a, b) }
        fn max(a: F, b: F) -> F { _mm512_max_pd(a, b) }
        fn abs(a: F) -> F { _mm512_abs_pd(a) }
        fn pow2_from_shifted(t: F) -> F {
            let biased = _mm512_add_epi64(_mm512_castpd_si512(t), _mm512_set1_epi64(1023));
            _mm512_castsi512_pd(_mm512_slli_epi64::<52>(biased))
        }
        fn lt(a: F, b: F) -> M { _mm512_cmp_pd_mask::<_CMP_LT_OQ>(a, b) }
        fn eq(a: F, b: F) -> M { _mm512_cmp_pd_mask::<_CMP_EQ_OQ>(a, b) }
        fn blend(m: M, a: F, b: F) -> F { _mm512_mask_blend_pd(m, a, b) }
        fn any(m: M) -> bool { m != 0 }
        fn bits(m: M) -> u32 { m.into() }
        fn load(s: &[f32]) -> F {
            assert!(s.len() >= LANES);
            // SAFETY: `s` has at least 8 elements (checked above); unaligned load.
            _mm512_cvtps_pd(unsafe { _mm256_loadu_ps(s.as_ptr()) })
        }
        fn load_f64(s: &[f64]) -> F {
            assert!(s.len() >= LANES);
            // SAFETY: `s` has at least 8 elements (checked above); unaligned load.
            unsafe { _mm512_loadu_pd(s.as_ptr()) }
        }
        fn store(s: &mut [f64], v: F) {
            assert!(s.len() >= LANES);
            // SAFETY: `s` has at least 8 elements (checked above); unaligned store.
            unsafe { _mm512_storeu_pd(s.as_mut_ptr(), v) }
        }
        fn store_f32(s: &mut [f32], v: F) {
            assert!(s.len() >= LANES);
            // SAFETY: `s` has at least 8 elements (checked above); unaligned store.
            unsafe { _mm256_storeu_ps(s.as_mut_ptr(), _mm512_cvtpd_ps(v)) }
        }
    }
}

/// The operations of the precise path on AVX2+FMA: 4 lanes, masks as vectors of
/// all-ones lanes.
pub(super) mod avx2 {
    use std::arch::x86_64::*;

    pub(crate) type F = __m256d;
    pub(crate) type M = __m256d;
    pub(crate) const LANES: usize = 4;

    ops! { "avx2,fma";
        fn splat(v: f64) -> F { _mm256_set1_pd(v) }
        fn zero() -> F { _mm256_setzero_pd() }
        fn sub(a: F, b: F) -> F { _mm256_sub_pd(a, b) }
        fn add(a: F, b: F) -> F { _mm256_add_pd(a, b) }
        fn mul(a: F, b: F) -> F { _mm256_mul_pd(a, b) }
        fn div(a: F, b: F) -> F { _mm256_div_pd(a, b) }
        fn fmadd(a: F, b: F, c: F) -> F { _mm256_fmadd_pd(a, b, c) }
        fn min(a: F, b: F) -> F { _mm256_min_pd(a, b) }
        fn max(a: F, b: F) -> F { _mm256_max_pd(a, b) }
        // AVX2 has no abs: clear the sign bit.
        fn abs(a: F) -> F { _mm256_andnot_pd(_mm256_set1_pd(-0.0), a) }
        fn pow2_from_shifted(t: F) -> F {
            let biased = _mm256_add_epi64(_mm256_castpd_si256(t), _mm256_set1_epi64x(1023));
            _mm256_castsi256_pd(_mm256_slli_epi64::<52>(biased))
        }
        fn lt(a: F, b: F) -> M { _mm256_cmp_pd::<_CMP_LT_OQ>(a, b) }
        fn eq(a: F, b: F) -> M { _mm256_cmp_pd::<_CMP_EQ_OQ>(a, b) }
        fn blend(m: M, a: F, b: F) -> F { _mm256_blendv_pd(a, b, m) }
        fn any(m: M) -> bool { _mm256_movemask_pd(m) != 0 }
        // movemask sets only the low 4 bits: the cast keeps the value.
        fn bits(m: M) -> u32 { _mm256_movemask_pd(m) as u32 }
        fn load(s: &[f32]) -> F {
            assert!(s.len() >= LANES);
            // SAFETY: `s` has at least 4 elements (checked above); unaligned load.
            _mm256_cvtps_pd(unsafe { _mm_loadu_ps(s.as_ptr()) })
        }
        fn load_f64(s: &[f64]) -> F {
            assert!(s.len() >= LANES);
            // SAFETY: `s` has at least 4 elements (checked above); unaligned load.
            unsafe { _mm256_loadu_pd(s.as_ptr()) }
        }
        fn store(s: &mut [f64], v: F) {
            assert!(s.len() >= LANES);
            // SAFETY: `s` has at least 4 elements (checked above); unaligned store.
            unsafe { _mm256_storeu_pd(s.as_mut_ptr(), v) }
        }
        fn store_f32(s: &mut [f32], v: F) {
            assert!(s.len() >= LANES);
            // SAFETY: `s` has at least 4 elements (checked above); unaligned store.
            unsafe { _mm_storeu_ps(s.as_mut_ptr(), _mm256_cvtpd_ps(v)) }
        }
    }
}

precise! {
    ops: avx2, feature: "avx2,fma", exp: exp4, product: product4, patch: patch4, mish: mish4
}

impl Vectorized<1> for Mish {
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn precise4([x]: [__m256d; 1]) -> __m256d {
        mish4(x)
    }
}

impl Vectorized<2> for MishGrad {
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn precise4([g, x]: [__m256d; 2]) -> __m256d {
        product4(g, x)
    }
}

/// What a precise loop writes: f32 results (rounded once) or f64 values.
pub(crate) trait Out: Copy + Default {
    /// Stores the 4 lanes of `v` to `out[..4]`.
    ///
    /// # Safety
    /// The CPU must support AVX2 and FMA.
    unsafe fn put4(out: &mut [Self], v: __m256d);
    /// Stores the 8 lanes of `v` to `out[..8]`.
    ///
    /// # Safety
    /// The CPU must support AVX-512F.
    unsafe fn put8(out: &mut [Self], v: __m512d);
}

impl Out for f32 {
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn put4(out: &mut [f32], v: __m256d) {
        avx2::store_f32(out, v);
    }
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn put8(out: &mut [f32], v: __m512d) {
        avx512::store_f32(out, v);
    }
}

impl Out for f64 {
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn put4(out: &mut [f64], v: __m256d) {
        avx2::store(out, v);
    }
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn put8(out: &mut [f64], v: __m512d) {
        avx512::store(out, v);
    }
}

/// The precise values of `K` over slices of equal length, 4 lanes at a time (the fast
/// path's reference in the tests; its loop is [`super::fast4`]).
///
/// # Safety
/// The CPU must support AVX2 and FMA; slices of equal length.
#[target_feature(enable = "avx2,fma")]
pub(super) unsafe fn loop_avx2<K: Vectorized<N>, O: Out, const N: usize>(
    x: [&[f32]; N],
    out: &mut [O],
) {
    use avx2::{LANES, load};
    let n = out.len();
    let body = n - n % LANES;
    for (c, o) in out[..body].chunks_exact_mut(LANES).enumerate() {
        let i = c * LANES;
        // SAFETY: AVX2 and FMA are enabled here.
        unsafe { O::put4(o, K::precise4(from_fn(|k| load(&x[k][i..])))) };
    }
    if body < n {
        let inputs: [[f32; LANES]; N] = from_fn(|k| {
            let mut t = [0.0f32; LANES];
            t[..n - body].copy_from_slice(&x[k][body..]);
            t
        });
        let mut ot = [O::default(); LANES];
        // SAFETY: AVX2 and FMA are enabled here.
        unsafe { O::put4(&mut ot, K::precise4(from_fn(|k| load(&inputs[k])))) };
        out[body..].copy_from_slice(&ot[..n - body]);
    }
}
