//! The AVX2+FMA fast path, the design of [`super::fast`] on 4 f64 lanes: for each
//! formula a cheaper value with a proven error bound, kept wherever the same rounding test
//! shows that it rounds like the precise one, the precise path for the vectors it rejects.
//!
//! **Fast values.** `e = exp(x) = 2^k·p(r)`, `k = round(x/ln 2)`, `r = x − k·ln 2` (ln 2's
//! high part only: |k|·2.3e−17 more), `p` a Chebyshev fit on |r| ≤ ln2/2, one formula for
//! all covered `x`, a division, 4 vectors in lockstep.
//!
//! - `mish(x)`: `p` of degree 8 (relative error 1.06e−12 with f64 coefficients),
//!   `y = x·n / (n + 2)` with `n = e·(e + 2)`. On covered lanes (|x| < 150) its relative
//!   error is below 1.2e−12: every sensitivity is at most about 1, so `p`'s error
//!   dominates.
//! - `g·mish'(x)`: `p` of degree 10 (3.3e−16), then the formula of the AVX-512 fast
//!   product. On its covered lanes (at least 1/1024 and less than 150 from the root of
//!   `mish'`) its relative error is below 4.3e−13, dominated, as there, by the window's
//!   border.
//!
//! Both bounds: `scripts/fast-path-constants.py`; with the precise values' 1e−15 each
//! stays below the rounding test's 2^−38.
//!
//! **Rounding test.** As in [`super::fast`], on 64-bit integer lanes: AVX2 compares them
//! signed only, so the unsigned comparison with the smallest normal number flips both
//! sign bits first.

use super::Vectorized;
use super::fast::{DMISH_FROM_ROOT_MAX, DMISH_ROOT_WINDOW, Grid};
use super::precise::{Out, avx2};
use crate::reference::math::{LN2_HI, LOG2E, Mish, MishGrad, R_HI, SHIFTER};
use std::arch::x86_64::*;
use std::array::from_fn;

/// The relative error bounds of the fast values on covered lanes.
pub(super) const MISH_ERROR_BOUND: f64 = 1.2e-12;
pub(super) const DMISH_ERROR_BOUND: f64 = 4.3e-13;
const _: () = assert!(MISH_ERROR_BOUND + 1e-15 < 1.0 / (1u64 << 38) as f64);
const _: () = assert!(DMISH_ERROR_BOUND + 1e-15 < 1.0 / (1u64 << 38) as f64);

/// `|x|` from which lanes are left to the precise path: below it `n²` stays finite and
/// `exp` far from underflow.
const MISH_ABS_MAX: f64 = 150.0;

/// Coefficients of exp on |r| ≤ ln2/2 for `mish`, highest degree first (degree 8,
/// Chebyshev fit in mpmath; see `scripts/fast-path-constants.py`).
const EXP_POLY: [f64; 9] = [
    2.487_616_416_506_405_4e-5,
    0.000_199_158_670_692_985_18,
    0.001_388_882_167_737_374_3,
    0.008_333_266_097_692_854,
    0.041_666_666_890_958_284,
    0.166_666_668_910_470_6,
    0.499_999_999_997_979_34,
    0.999_999_999_979_785_1,
    1.0,
];

/// The same for `mish'` (degree 10), whose sensitivity to `exp`'s error reaches 191.7.
const DMISH_EXP_POLY: [f64; 11] = [
    2.762_635_737_327_897_5e-7,
    2.764_018_095_446_885e-6,
    2.480_150_434_668_099_7e-5,
    0.000_198_411_702_700_598_97,
    0.001_388_888_893_248_884_8,
    0.008_333_333_385_668_083,
    0.041_666_666_666_573_14,
    0.166_666_666_665_544_03,
    0.500_000_000_000_000_6,
    1.000_000_000_000_006_7,
    1.0,
];

/// `exp(x)` of `U` vectors with the polynomial `poly` (see the module docs), for
/// |x| < 1022·ln 2.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn exp4<const U: usize, const D: usize>(x: [__m256d; U], poly: &[f64; D]) -> [__m256d; U] {
    let c = _mm256_set1_pd;
    let t: [__m256d; U] = from_fn(|i| _mm256_fmadd_pd(x[i], c(LOG2E), c(SHIFTER)));
    let k: [__m256d; U] = from_fn(|i| _mm256_sub_pd(t[i], c(SHIFTER)));
    let r: [__m256d; U] = from_fn(|i| _mm256_fmadd_pd(k[i], c(-LN2_HI), x[i]));
    let mut p = [c(poly[0]); U];
    for &coef in &poly[1..] {
        for i in 0..U {
            p[i] = _mm256_fmadd_pd(p[i], r[i], c(coef));
        }
    }
    from_fn(|i| _mm256_mul_pd(p[i], avx2::pow2_from_shifted(t[i])))
}

/// The AVX2 fast path of a formula. Each implementation carries
/// `#[target_feature(enable = "avx2,fma")]`.
pub(crate) trait Fast4<const N: usize> {
    /// The fast values of `U` vectors of 4 lanes, every step on all vectors before the
    /// next. Finite for covered lanes; other lanes are discarded.
    ///
    /// # Safety
    /// The CPU must support AVX2 and FMA.
    unsafe fn fast4<const U: usize>(x: [[__m256d; U]; N]) -> [__m256d; U];

    /// All-ones in the lanes whose inputs the error bound of [`Fast4::fast4`] covers.
    ///
    /// # Safety
    /// The CPU must support AVX2 and FMA.
    unsafe fn covered4(x: [__m256d; N]) -> __m256d;
}

impl Fast4<1> for Mish {
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn fast4<const U: usize>([x]: [[__m256d; U]; 1]) -> [__m256d; U] {
        let c = _mm256_set1_pd;
        let e = exp4(x, &EXP_POLY);
        let n: [__m256d; U] = from_fn(|i| _mm256_mul_pd(e[i], _mm256_add_pd(e[i], c(2.0))));
        from_fn(|i| _mm256_div_pd(_mm256_mul_pd(x[i], n[i]), _mm256_add_pd(n[i], c(2.0))))
    }

    /// `|x| <` [`MISH_ABS_MAX`]; NaN and ±∞ fail.
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn covered4([x]: [__m256d; 1]) -> __m256d {
        _mm256_cmp_pd::<_CMP_LT_OQ>(avx2::abs(x), _mm256_set1_pd(MISH_ABS_MAX))
    }
}

impl Fast4<2> for MishGrad {
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn fast4<const U: usize>([g, x]: [[__m256d; U]; 2]) -> [__m256d; U] {
        let c = _mm256_set1_pd;
        let e = exp4(x, &DMISH_EXP_POLY);
        // With w = e + 1: d = w² + 1 and the numerator's factor is w·(w² + w + 1 + 4x) + 1.
        let w: [__m256d; U] = from_fn(|i| _mm256_add_pd(e[i], c(1.0)));
        let d: [__m256d; U] = from_fn(|i| _mm256_fmadd_pd(w[i], w[i], c(1.0)));
        let q: [__m256d; U] = from_fn(|i| {
            let inner = _mm256_fmadd_pd(x[i], c(4.0), _mm256_add_pd(d[i], w[i]));
            _mm256_fmadd_pd(w[i], inner, c(1.0))
        });
        from_fn(|i| {
            let numerator = _mm256_mul_pd(_mm256_mul_pd(g[i], e[i]), q[i]);
            _mm256_div_pd(numerator, _mm256_mul_pd(d[i], d[i]))
        })
    }

    /// At least [`DMISH_ROOT_WINDOW`] and less than [`DMISH_FROM_ROOT_MAX`] from the root
    /// (`x − R_HI` is exact near the root, by Sterbenz' lemma); NaN and ±∞ fail.
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn covered4([_, x]: [__m256d; 2]) -> __m256d {
        let c = _mm256_set1_pd;
        let from_root = avx2::abs(_mm256_sub_pd(x, c(R_HI)));
        let outside = _mm256_cmp_pd::<_CMP_GE_OQ>(from_root, c(DMISH_ROOT_WINDOW));
        let near = _mm256_cmp_pd::<_CMP_LT_OQ>(from_root, c(f64::from(DMISH_FROM_ROOT_MAX)));
        _mm256_and_pd(outside, near)
    }
}

/// All-ones in the lanes of `y` whose rounding on `grid` is not safe to take from the
/// fast value (see [`super::fast`]): the shifted encoding's masked bits all zero (near a
/// midpoint), or its doubled value (the sign shifted out) below `grid.normal_min_x2`
/// (subnormal in the format).
#[inline]
#[target_feature(enable = "avx2,fma")]
fn rounding_fails(y: __m256d, grid: Grid) -> __m256i {
    let shifted = _mm256_add_epi64(_mm256_castpd_si256(y), _mm256_set1_epi64x(grid.shift));
    let sign = _mm256_set1_epi64x(i64::MIN);
    let doubled = _mm256_xor_si256(_mm256_slli_epi64::<1>(shifted), sign);
    let min = _mm256_set1_epi64x(grid.normal_min_x2 ^ i64::MIN);
    let subnormal = _mm256_cmpgt_epi64(min, doubled);
    let masked = _mm256_and_si256(shifted, _mm256_set1_epi64x(grid.mask));
    let near_midpoint = _mm256_cmpeq_epi64(masked, _mm256_setzero_si256());
    _mm256_or_si256(subnormal, near_midpoint)
}

/// The fast values of `U` vectors when every lane is covered and passes the rounding test
/// on `grid`; `None` otherwise.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn rounded_fast<K: Vectorized<N>, const N: usize, const U: usize>(
    x: [[__m256d; U]; N],
    grid: Grid,
) -> Option<[__m256d; U]> {
    let covered = (0..U).fold(_mm256_castsi256_pd(_mm256_set1_epi64x(-1)), |m, i| {
        // SAFETY: AVX2 and FMA are enabled here.
        _mm256_and_pd(m, unsafe { K::covered4(from_fn(|k| x[k][i])) })
    });
    // SAFETY: AVX2 and FMA are enabled here.
    let y = unsafe { K::fast4::<U>(x) };
    let fails = y.iter().fold(_mm256_setzero_si256(), |f, &y| {
        _mm256_or_si256(f, rounding_fails(y, grid))
    });
    let fails = _mm256_or_si256(fails, _mm256_castpd_si256(not(covered)));
    (_mm256_testz_si256(fails, fails) == 1).then_some(y)
}

/// The lanes not set in the mask `m`.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn not(m: __m256d) -> __m256d {
    _mm256_xor_pd(m, _mm256_castsi256_pd(_mm256_set1_epi64x(-1)))
}

/// [`rounded_fast`] one vector at a time, with the precise path for the vectors it
/// rejects; slices of equal length, a multiple of 4. Out of line: it runs rarely, and
/// the loop keeps its registers.
#[cold]
#[inline(never)]
#[target_feature(enable = "avx2,fma")]
fn rounded_checked<K: Vectorized<N>, O: Out, const N: usize>(
    x: [&[f32]; N],
    out: &mut [O],
    grid: Grid,
) {
    for (c, o) in out.chunks_exact_mut(4).enumerate() {
        let v: [__m256d; N] = from_fn(|k| avx2::load(&x[k][4 * c..]));
        let y = match rounded_fast::<K, N, 1>(v.map(|v| [v]), grid) {
            Some([y]) => y,
            // SAFETY: AVX2 and FMA are enabled here.
            None => unsafe { K::precise4(v) },
        };
        // SAFETY: AVX2 and FMA are enabled here.
        unsafe { O::put4(o, y) };
    }
}

/// The fast path over slices of equal length: 4 vectors in lockstep, the steps and the
/// tail that [`rounded_fast`] rejects through [`rounded_checked`].
///
/// # Safety
/// The CPU must support AVX2 and FMA; slices of equal length.
#[target_feature(enable = "avx2,fma")]
pub(super) unsafe fn loop_avx2<K: Vectorized<N>, O: Out, const N: usize>(
    x: [&[f32]; N],
    out: &mut [O],
    grid: Grid,
) {
    const LOCKSTEP: usize = 4;
    const STEP: usize = 4 * LOCKSTEP;
    let n = out.len();
    let body = n - n % STEP;
    for (s, o) in out[..body].chunks_exact_mut(STEP).enumerate() {
        let xs: [&[f32]; N] = from_fn(|k| &x[k][s * STEP..(s + 1) * STEP]);
        let v: [[__m256d; LOCKSTEP]; N] = from_fn(|k| from_fn(|i| avx2::load(&xs[k][4 * i..])));
        match rounded_fast::<K, N, LOCKSTEP>(v, grid) {
            Some(y) => {
                for (i, y) in y.into_iter().enumerate() {
                    // SAFETY: AVX2 and FMA are enabled here.
                    unsafe { O::put4(&mut o[4 * i..], y) };
                }
            }
            None => rounded_checked::<K, O, N>(xs, o, grid),
        }
    }
    let mut ot = [O::default(); 4];
    for (c, o) in out[body..].chunks_mut(4).enumerate() {
        let len = o.len();
        let start = body + 4 * c;
        let inputs: [[f32; 4]; N] = from_fn(|k| {
            let mut t = [0.0f32; 4];
            t[..len].copy_from_slice(&x[k][start..start + len]);
            t
        });
        rounded_checked::<K, O, N>(from_fn(|k| &inputs[k][..]), &mut ot, grid);
        o.copy_from_slice(&ot[..len]);
    }
}

/// The fast values of `K` over a slice (a multiple of 16 long), `None` for uncovered
/// lanes; for the error tests.
///
/// # Safety
/// The CPU must support AVX2 and FMA.
#[cfg(test)]
#[target_feature(enable = "avx2,fma")]
pub(super) unsafe fn fast_values_avx2<K: Vectorized<N>, const N: usize>(
    x: [&[f32]; N],
) -> Vec<Option<f64>> {
    let mut out = Vec::new();
    for s in 0..x[0].len() / 16 {
        let v: [[__m256d; 4]; N] = from_fn(|k| from_fn(|i| avx2::load(&x[k][16 * s + 4 * i..])));
        // SAFETY: AVX2 and FMA are enabled here.
        let y = unsafe { K::fast4::<4>(v) };
        for (i, y) in y.into_iter().enumerate() {
            let (mut lanes, mut covered) = ([0.0f64; 4], [0.0f64; 4]);
            avx2::store(&mut lanes, y);
            // SAFETY: AVX2 and FMA are enabled here.
            avx2::store(&mut covered, unsafe { K::covered4(from_fn(|k| v[k][i])) });
            out.extend((0..4).map(|l| (covered[l] != 0.0).then_some(lanes[l])));
        }
    }
    out
}

/// Whether the rounding of each value of `y` (a multiple of 4 long) on `grid` passes.
///
/// # Safety
/// The CPU must support AVX2 and FMA.
#[cfg(test)]
#[target_feature(enable = "avx2,fma")]
pub(super) unsafe fn rounding_ok_avx2(y: &[f64], grid: Grid) -> Vec<bool> {
    y.chunks_exact(4)
        .flat_map(|y| {
            let mut fails = [0.0f64; 4];
            let v = _mm256_castsi256_pd(rounding_fails(avx2::load_f64(y), grid));
            avx2::store(&mut fails, v);
            fails.map(|f| f.to_bits() == 0)
        })
        .collect()
}
