//! The AVX-512F fast path: for each formula a cheaper product with a proven error bound,
//! kept wherever a rounding test shows that it rounds like the precise one.
//!
//! **Fast products.** `e = exp(x)` from a 16-entry table of `2^(j/16)` and a degree-5
//! polynomial on |r| ≤ ln2/32 (relative error 4.6e−15; its and the table's roundings
//! below 6·2^−53; reducing by ln 2's high part only adds |k/16|·2.3e−17), one formula for
//! all covered `x`, the last step a division for one vector in four and `rcp14` with one
//! third-order Newton step (error below 2^−42) for the others, 8 vectors of 8 lanes in
//! lockstep so that both FMA ports stay busy.
//!
//! - `g·mish'(x)`: with `w = e + 1`, `y = g·e·(w·(w² + w + 1 + 4x) + 1) / (w² + 1)²`. On
//!   covered lanes (at least 1/1024 and less than 150 from the root of `mish'`) its
//!   relative error is below 1.52e−12 < 2^−39.2: the window's border dominates, where the
//!   sensitivity to `exp`'s error is 191.7 and the summed sensitivities to the numerator's
//!   five roundings at most 2380.
//! - `mish(x)`: `y = x·n / (n + 2)` with `n = e·(e + 2)`. On covered lanes (|x| < 150)
//!   its relative error is below 2.6e−13: every sensitivity is at most about 1, and the
//!   reciprocal's 2^−42 dominates.
//!
//! Both bounds: mpmath at 200 bits, first-order propagation of every rounding over the
//! covered range (`scripts/fast-path-constants.py`). The precise products are within
//! 1e−15 of the exact values.
//!
//! **Rounding test** ([`rounding_ok`]). The rounding boundaries of a normal result are
//! where the bits that the format drops from the f64 encoding (the low 29 for f32, 42 for
//! f16, 45 for bf16) equal their midpoint. A lane passes when they are at least 2^15
//! units from it: that is at least 2^−38 of |y|, more than both error bounds together, so
//! the exact value and the precise product round the same way as `y` (rounding is
//! monotonic). Results subnormal in the format fail; a zero `y` (from a zero `g` or `x`)
//! is exact and passes. `y` is NaN only for a NaN `g`, whose (quieted) payload every
//! product passes on, as in the precise path. Lanes fail the test at a rate of about
//! 2^−13 for random inputs; a vector with a failing or uncovered lane is recomputed by
//! the precise path, so results are bitwise those of the precise path.

use super::Vectorized;
use super::precise::{Out, avx512, precise};
use crate::reference::math::{LN2_HI, LOG2E, Mish, MishGrad, R_HI, SHIFTER};
use crate::reference::narrow::Narrow;
use std::arch::x86_64::*;
use std::array::from_fn;

precise! {
    ops: avx512, feature: "avx512f", exp: exp8, product: product8, patch: patch8, mish: mish8
}

/// The AVX-512F versions of a formula of `N` inputs. Each implementation carries
/// `#[target_feature(enable = "avx512f")]`.
pub(crate) trait Fast<const N: usize> {
    /// The precise value of 8 lanes.
    ///
    /// # Safety
    /// The CPU must support AVX-512F.
    unsafe fn precise8(x: [__m512d; N]) -> __m512d;

    /// The fast values of `U` vectors, every step on all vectors before the next so that
    /// the independent chains keep both FMA ports busy. Finite for covered lanes
    /// ([`Fast::covered16`]); other lanes are discarded. Generic over the output only so
    /// that each output's loop has instances of its own to inline (LLVM leaves an instance
    /// with two callers out of line).
    ///
    /// # Safety
    /// The CPU must support AVX-512F.
    unsafe fn fast8<O: Out, const U: usize>(x: [[__m512d; U]; N]) -> [__m512d; U];

    /// The lanes of `lanes` whose inputs (16 lanes of each, as f32) the error bound of
    /// [`Fast::fast8`] covers.
    ///
    /// # Safety
    /// The CPU must support AVX-512F.
    unsafe fn covered16(x: [__m512; N], lanes: __mmask16) -> __mmask16;
}

/// `2^(j/16)` for j = 0..16, each rounded to nearest f64 (mpmath, 300 bits).
const EXP2_SIXTEENTHS: [f64; 16] = [
    1.0,
    1.044_273_782_427_413_8,
    1.090_507_732_665_257_7,
    1.138_788_634_756_691_6,
    1.189_207_115_002_721,
    1.241_857_812_073_484,
    1.296_839_554_651_009_6,
    1.354_255_546_936_892_7,
    std::f64::consts::SQRT_2,
    1.476_826_145_939_499_3,
    1.542_210_825_407_940_7,
    1.610_490_331_949_254_3,
    1.681_792_830_507_429,
    1.756_252_160_373_299_5,
    1.834_008_086_409_342_4,
    1.915_206_561_397_147_4,
];

/// Coefficients of exp on |r| ≤ ln2/32, highest degree first (degree 5, Chebyshev fit
/// in mpmath, relative error 4.6e−15 with the coefficients rounded to f64; see
/// `scripts/fast-path-constants.py`).
const EXP_REDUCED_POLY: [f64; 6] = [
    0.008_333_472_975_217_577,
    0.041_667_644_161_903_84,
    0.166_666_666_642_096_98,
    0.499_999_999_828_011_7,
    1.000_000_000_000_000_7,
    1.000_000_000_000_004_4,
];

/// Lanes at this distance from the root of `mish'` or farther are left to the precise
/// path: below it (x < 148.8) `g·e·q` and `d²` stay finite for every finite f32 `g`, and
/// above −151.2 `exp` is far from underflow, so no clamp is needed.
pub(super) const DMISH_FROM_ROOT_MAX: f32 = 150.0;

/// Half width of the window around the root of `mish'` that the fast product leaves to
/// the precise path (its Taylor expansion). Outside it the sensitivity of the formula to
/// a relative error of `exp` is at most 191.7 and the summed sensitivities to the
/// numerator's roundings at most 2380 (mpmath at 200 bits over the covered range, at
/// distances from the root down to 1/1024 − 4e−8, the slack of the f32 check; see
/// `scripts/fast-path-constants.py`).
pub(super) const DMISH_ROOT_WINDOW: f64 = 1.0 / 1024.0;

/// `|x|` from which the fast `mish` leaves lanes to the precise path: below it `n²`
/// stays finite and `exp` far from underflow.
const MISH_ABS_MAX: f32 = 150.0;

/// One vector in this many takes a division in [`divide`]; the divider runs beside the
/// FMA ports, but a division per vector would wait on it.
const DIV_EVERY: usize = 4;

/// The relative error bounds of the fast products on covered lanes; with the precise
/// products' 1e−15 each must stay below the rounding test's 2^−38.
pub(super) const DMISH_ERROR_BOUND: f64 = 1.52e-12;
pub(super) const MISH_ERROR_BOUND: f64 = 2.6e-13;
const _: () = assert!(DMISH_ERROR_BOUND + 1e-15 < 1.0 / (1u64 << 38) as f64);
const _: () = assert!(MISH_ERROR_BOUND + 1e-15 < 1.0 / (1u64 << 38) as f64);

/// Where a rounding of f64 values to a narrower format is safe to take from the fast
/// product (see [`rounding_ok`]).
#[derive(Clone, Copy)]
pub(super) struct Grid {
    /// Added to an f64 encoding: moves the window of ±2^15 units around the midpoint of
    /// the low bits that the narrower format drops to 0..2^16, and takes one from the
    /// exponent field, so that zero wraps to the top of it.
    pub(super) shift: i64,
    /// The dropped bits from bit 16 up: all zero after `shift` when the value is within
    /// 2^15 units of a midpoint.
    pub(super) mask: i64,
    /// Twice the shifted encoding of the narrower format's smallest normal number: a
    /// shifted and doubled encoding below it (the sign shifted out) is subnormal there.
    pub(super) normal_min_x2: i64,
}

impl Grid {
    /// The grid of a format that keeps `52 − dropped` fraction bits and whose smallest
    /// normal number has the f64 exponent field `min_normal_field`.
    const fn new(dropped: u32, min_normal_field: i64) -> Grid {
        Grid {
            shift: ((1i64 << (dropped - 1)) + (1 << 15)).wrapping_sub(1 << 52),
            mask: ((1i64 << dropped) - 1) & !((1i64 << 16) - 1),
            normal_min_x2: (min_normal_field - 1) << 53,
        }
    }
}

/// f32: 23 fraction bits, smallest normal 2^−126.
pub(super) const F32_GRID: Grid = Grid::new(29, 1023 - 126);
/// f16: 10 fraction bits, smallest normal 2^−14.
pub(super) const F16_GRID: Grid = Grid::new(42, 1023 - 14);
/// bf16: 7 fraction bits, smallest normal 2^−126.
pub(super) const BF16_GRID: Grid = Grid::new(45, 1023 - 126);

/// The grid of a 16-bit format.
pub(super) fn grid(to: Narrow) -> Grid {
    match to {
        Narrow::F16 => F16_GRID,
        Narrow::Bf16 => BF16_GRID,
    }
}

/// `exp(x)` of `U` vectors: `2^(k/16)·exp(r)`, `k = round(16·x/ln 2)`, |r| ≤ ln2/32.
#[inline]
#[target_feature(enable = "avx512f")]
fn exp_fast<const U: usize>(x: [__m512d; U]) -> [__m512d; U] {
    let c = _mm512_set1_pd;
    // Adding SHIFTER/16 rounds to a multiple of 1/16, so `kq` = k/16 exactly and the low
    // 4 bits of `t` are k mod 16: they pick 2^(j/16) from the table, `scalef` applies
    // 2^floor(k/16).
    let t: [__m512d; U] = from_fn(|i| _mm512_fmadd_pd(x[i], c(LOG2E), c(SHIFTER / 16.0)));
    let kq: [__m512d; U] = from_fn(|i| _mm512_sub_pd(t[i], c(SHIFTER / 16.0)));
    // Without ln 2's low part: r is off by |kq|·2.3e−17, a relative error of e that the
    // error bounds include.
    let r: [__m512d; U] = from_fn(|i| _mm512_fmadd_pd(kq[i], c(-LN2_HI), x[i]));
    // SAFETY: `EXP2_SIXTEENTHS` holds 16 f64; unaligned loads of 8 at 0 and 8.
    let (table_lo, table_hi) = unsafe {
        (
            _mm512_loadu_pd(EXP2_SIXTEENTHS.as_ptr()),
            _mm512_loadu_pd(EXP2_SIXTEENTHS.as_ptr().add(8)),
        )
    };
    let mut p = [c(EXP_REDUCED_POLY[0]); U];
    for &coef in &EXP_REDUCED_POLY[1..] {
        for i in 0..U {
            p[i] = _mm512_fmadd_pd(p[i], r[i], c(coef));
        }
    }
    from_fn(|i| {
        let two_j16 = _mm512_permutex2var_pd(table_lo, _mm512_castpd_si512(t[i]), table_hi);
        _mm512_scalef_pd(_mm512_mul_pd(p[i], two_j16), kq[i])
    })
}

/// `numerator / denominator` of `U` vectors: a division for one vector in
/// [`DIV_EVERY`], `rcp14` with a third-order Newton step for the others.
#[inline]
#[target_feature(enable = "avx512f")]
fn divide<const U: usize>(numerator: [__m512d; U], denominator: [__m512d; U]) -> [__m512d; U] {
    let c = _mm512_set1_pd;
    from_fn(|i| {
        if i % DIV_EVERY == 0 {
            _mm512_div_pd(numerator[i], denominator[i])
        } else {
            // 1/d: rcp14 (relative error ε ≤ 2^−14), then y0·(1 + ε + ε²) (error ε³)
            let y0 = _mm512_rcp14_pd(denominator[i]);
            let eps = _mm512_fnmadd_pd(denominator[i], y0, c(1.0));
            let inv = _mm512_fmadd_pd(y0, _mm512_fmadd_pd(eps, eps, eps), y0);
            _mm512_mul_pd(numerator[i], inv)
        }
    })
}

impl Fast<2> for MishGrad {
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn precise8([g, x]: [__m512d; 2]) -> __m512d {
        product8(g, x)
    }

    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn fast8<O: Out, const U: usize>([g, x]: [[__m512d; U]; 2]) -> [__m512d; U] {
        let c = _mm512_set1_pd;
        let e = exp_fast(x);
        // With w = e + 1: d = w² + 1 and the numerator's factor is w·(w² + w + 1 + 4x) + 1.
        let w: [__m512d; U] = from_fn(|i| _mm512_add_pd(e[i], c(1.0)));
        let d: [__m512d; U] = from_fn(|i| _mm512_fmadd_pd(w[i], w[i], c(1.0)));
        let q: [__m512d; U] = from_fn(|i| {
            let inner = _mm512_fmadd_pd(x[i], c(4.0), _mm512_add_pd(d[i], w[i]));
            _mm512_fmadd_pd(w[i], inner, c(1.0))
        });
        let numerator = from_fn(|i| _mm512_mul_pd(_mm512_mul_pd(g[i], e[i]), q[i]));
        divide(numerator, from_fn(|i| _mm512_mul_pd(d[i], d[i])))
    }

    /// At least [`DMISH_ROOT_WINDOW`] and less than [`DMISH_FROM_ROOT_MAX`] from the root,
    /// checked on `x` in f32: `x − f32(r)` is exact near the root (Sterbenz), and `f32(r)`
    /// is within 4e−8 of `r`, so covered lanes are at least 1/1024 − 4e−8 from the root,
    /// where the bounds of [`DMISH_ROOT_WINDOW`] were computed. `|x − r|` is NaN or ∞
    /// exactly when `x` is, and fails both comparisons.
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn covered16([_, x]: [__m512; 2], lanes: __mmask16) -> __mmask16 {
        let c = _mm512_set1_ps;
        let from_root = _mm512_abs_ps(_mm512_sub_ps(x, c(R_HI as f32)));
        let outside =
            _mm512_mask_cmp_ps_mask::<_CMP_GE_OQ>(lanes, from_root, c(DMISH_ROOT_WINDOW as f32));
        _mm512_mask_cmp_ps_mask::<_CMP_LT_OQ>(outside, from_root, c(DMISH_FROM_ROOT_MAX))
    }
}

impl Fast<1> for Mish {
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn precise8([x]: [__m512d; 1]) -> __m512d {
        mish8(x)
    }

    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn fast8<O: Out, const U: usize>([x]: [[__m512d; U]; 1]) -> [__m512d; U] {
        let c = _mm512_set1_pd;
        let e = exp_fast(x);
        let n: [__m512d; U] = from_fn(|i| _mm512_mul_pd(e[i], _mm512_add_pd(e[i], c(2.0))));
        divide(
            from_fn(|i| _mm512_mul_pd(x[i], n[i])),
            from_fn(|i| _mm512_add_pd(n[i], c(2.0))),
        )
    }

    /// `|x| <` [`MISH_ABS_MAX`]; NaN and ±∞ fail.
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn covered16([x]: [__m512; 1], lanes: __mmask16) -> __mmask16 {
        let bound = _mm512_set1_ps(MISH_ABS_MAX);
        _mm512_mask_cmp_ps_mask::<_CMP_LT_OQ>(lanes, _mm512_abs_ps(x), bound)
    }
}

/// The fast values of `U` vectors of 8 lanes, when every lane is covered and passes the
/// rounding test on `grid`, so that each rounds to the format of `grid` as the precise
/// value does; `None` otherwise.
#[inline]
#[target_feature(enable = "avx512f")]
fn rounded_fast<K: Fast<N>, O: Out, const N: usize, const U: usize>(
    x: [[__m512d; U]; N],
    covered: bool,
    grid: Grid,
) -> Option<[__m512d; U]> {
    // SAFETY: AVX-512F is enabled here.
    let y = unsafe { K::fast8::<O, U>(x) };
    let all_ok = y.iter().fold(0xff, |ok, &y| rounding_ok(y, ok, grid));
    (covered & (all_ok == 0xff)).then_some(y)
}

/// Lanes of `covered` where rounding `y` on `grid` is safe (see the module docs): after
/// `grid.shift`, a doubled encoding (the sign shifted out) at least
/// `grid.normal_min_x2` and some bit of `grid.mask` set.
#[inline]
#[target_feature(enable = "avx512f")]
fn rounding_ok(y: __m512d, covered: __mmask8, grid: Grid) -> __mmask8 {
    let shifted = _mm512_add_epi64(_mm512_castpd_si512(y), _mm512_set1_epi64(grid.shift));
    let normal = _mm512_mask_cmpge_epu64_mask(
        covered,
        _mm512_slli_epi64::<1>(shifted),
        _mm512_set1_epi64(grid.normal_min_x2),
    );
    _mm512_mask_test_epi64_mask(normal, shifted, _mm512_set1_epi64(grid.mask))
}

/// 8 f32 from `s[..8]`, zero-extended to 16 lanes.
#[inline]
#[target_feature(enable = "avx512f")]
fn load8_as16(s: &[f32]) -> __m512 {
    assert!(s.len() >= 8);
    // SAFETY: `s` has at least 8 elements (checked above); unaligned load.
    _mm512_zextps256_ps512(unsafe { _mm256_loadu_ps(s.as_ptr()) })
}

/// Load of 16 f32 from `s[..16]`.
#[inline]
#[target_feature(enable = "avx512f")]
fn load16(s: &[f32]) -> __m512 {
    assert!(s.len() >= 16);
    // SAFETY: `s` has at least 16 elements (checked above); unaligned load.
    unsafe { _mm512_loadu_ps(s.as_ptr()) }
}

/// [`rounded_fast`] one vector at a time, with the precise path for the vectors it
/// rejects; slices of equal length, a multiple of 8. Out of line: it runs for about one
/// block of 64 elements in 100, and the loop keeps its registers.
#[cold]
#[inline(never)]
#[target_feature(enable = "avx512f")]
fn rounded_checked<K: Fast<N>, O: Out, const N: usize>(x: [&[f32]; N], out: &mut [O], grid: Grid) {
    for (c, o) in out.chunks_exact_mut(8).enumerate() {
        let v: [__m512d; N] = from_fn(|k| avx512::load(&x[k][8 * c..]));
        // SAFETY: AVX-512F is enabled here.
        let covered = unsafe { K::covered16(from_fn(|k| load8_as16(&x[k][8 * c..])), 0xff) };
        let y = match rounded_fast::<K, O, N, 1>(v.map(|v| [v]), covered == 0xff, grid) {
            Some([y]) => y,
            // SAFETY: AVX-512F is enabled here.
            None => unsafe { K::precise8(v) },
        };
        // SAFETY: AVX-512F is enabled here.
        unsafe { O::put8(o, y) };
    }
}

/// The fast path over slices of equal length: 8 vectors in lockstep, the blocks and the
/// tail that [`rounded_fast`] rejects through [`rounded_checked`].
///
/// # Safety
/// The CPU must support AVX-512F; slices of equal length.
#[target_feature(enable = "avx512f")]
pub(super) unsafe fn loop_avx512<K: Vectorized<N>, O: Out, const N: usize>(
    x: [&[f32]; N],
    out: &mut [O],
    grid: Grid,
) {
    const LOCKSTEP: usize = 8;
    const STEP: usize = 8 * LOCKSTEP;
    const {
        assert!(
            LOCKSTEP.is_multiple_of(2),
            "inputs are checked 16 lanes at a time"
        )
    };
    /// Elements ahead of the loop that the inputs are prefetched (4 KiB).
    const PREFETCH: usize = 1024;
    let n = out.len();
    let body = n - n % STEP;
    for (s, o) in out[..body].chunks_exact_mut(STEP).enumerate() {
        let xs: [&[f32]; N] = from_fn(|k| &x[k][s * STEP..(s + 1) * STEP]);
        // The hardware prefetchers alone leave large inputs ~10% slower than cached
        // ones. A prefetch never faults, so addresses past the end are harmless.
        for line in (0..STEP).step_by(16) {
            for input in xs {
                prefetch::<_MM_HINT_T0>(input.as_ptr().wrapping_add(PREFETCH + line).cast());
            }
        }
        // the output's lines by bytes: 4 per step for f32, 8 for f64
        for line in (0..STEP * size_of::<O>()).step_by(64) {
            let ahead = PREFETCH * size_of::<O>() + line;
            prefetch::<_MM_HINT_ET0>(o.as_ptr().cast::<i8>().wrapping_add(ahead));
        }
        let v: [[__m512d; LOCKSTEP]; N] = from_fn(|k| from_fn(|i| avx512::load(&xs[k][8 * i..])));
        let covered = (0..LOCKSTEP / 2).fold(0xffff, |lanes, i| {
            // SAFETY: AVX-512F is enabled here.
            unsafe { K::covered16(from_fn(|k| load16(&xs[k][16 * i..])), lanes) }
        }) == 0xffff;
        match rounded_fast::<K, O, N, LOCKSTEP>(v, covered, grid) {
            Some(y) => {
                for (i, y) in y.into_iter().enumerate() {
                    // SAFETY: AVX-512F is enabled here.
                    unsafe { O::put8(&mut o[8 * i..], y) };
                }
            }
            None => rounded_checked::<K, O, N>(xs, o, grid),
        }
    }
    let tail = n - body;
    if tail > 0 {
        let mut ot = [O::default(); 8];
        for (c, o) in out[body..].chunks_mut(8).enumerate() {
            let len = o.len();
            let start = body + 8 * c;
            let inputs: [[f32; 8]; N] = from_fn(|k| {
                let mut t = [0.0f32; 8];
                t[..len].copy_from_slice(&x[k][start..start + len]);
                t
            });
            rounded_checked::<K, O, N>(from_fn(|k| &inputs[k][..]), &mut ot, grid);
            o.copy_from_slice(&ot[..len]);
        }
    }
}

/// The precise values of `K` over slices of equal length, 8 lanes at a time.
///
/// # Safety
/// The CPU must support AVX-512F; slices of equal length.
#[target_feature(enable = "avx512f")]
pub(super) unsafe fn precise_loop_avx512<K: Vectorized<N>, const N: usize>(
    x: [&[f32]; N],
    out: &mut [f64],
) {
    let n = out.len();
    let body = n - n % 8;
    for (c, o) in out[..body].chunks_exact_mut(8).enumerate() {
        // SAFETY: AVX-512F is enabled here.
        let y = unsafe { K::precise8(from_fn(|k| avx512::load(&x[k][8 * c..]))) };
        avx512::store(o, y);
    }
    if body < n {
        let inputs: [[f32; 8]; N] = from_fn(|k| {
            let mut t = [0.0f32; 8];
            t[..n - body].copy_from_slice(&x[k][body..]);
            t
        });
        let mut ot = [0.0f64; 8];
        // SAFETY: AVX-512F is enabled here.
        let y = unsafe { K::precise8(from_fn(|k| avx512::load(&inputs[k]))) };
        avx512::store(&mut ot, y);
        out[body..].copy_from_slice(&ot[..n - body]);
    }
}

/// The fast values of `K` over slices of equal length (multiples of 64), 8 vectors at a
/// time as in the loop (so both the division and `rcp14` are taken), `None` for the lanes
/// that [`Fast::covered16`] leaves to the precise path; for the error tests.
///
/// # Safety
/// The CPU must support AVX-512F.
#[cfg(test)]
#[target_feature(enable = "avx512f")]
pub(super) unsafe fn fast_values_avx512<K: Vectorized<N>, const N: usize>(
    x: [&[f32]; N],
) -> Vec<Option<f64>> {
    let n = x[0].len();
    let mut out = Vec::with_capacity(n);
    for s in 0..n / 64 {
        let xs: [&[f32]; N] = from_fn(|k| &x[k][64 * s..64 * (s + 1)]);
        // SAFETY: AVX-512F is enabled here.
        let y =
            unsafe { K::fast8::<f64, 8>(from_fn(|k| from_fn(|i| avx512::load(&xs[k][8 * i..])))) };
        for (i, y) in y.into_iter().enumerate() {
            let mut lanes = [0.0f64; 8];
            avx512::store(&mut lanes, y);
            // SAFETY: AVX-512F is enabled here.
            let covered = unsafe { K::covered16(from_fn(|k| load8_as16(&xs[k][8 * i..])), 0xff) };
            out.extend((0..8).map(|l| (covered >> l & 1 == 1).then_some(lanes[l])));
        }
    }
    out
}

/// [`rounding_ok`] of each value of `y` (a multiple of 8 long), every lane covered.
///
/// # Safety
/// The CPU must support AVX-512F.
#[cfg(test)]
#[target_feature(enable = "avx512f")]
pub(super) unsafe fn rounding_ok_avx512(y: &[f64], grid: Grid) -> Vec<bool> {
    y.chunks_exact(8)
        .flat_map(|y| {
            let ok = rounding_ok(avx512::load_f64(y), 0xff, grid);
            (0..8).map(move |i| ok >> i & 1 == 1)
        })
        .collect()
}

/// `_mm_prefetch`, which the older compilers of the declared `rust-version` still declare
/// `unsafe`.
#[inline(always)]
fn prefetch<const HINT: i32>(p: *const i8) {
    #[allow(unused_unsafe)]
    // SAFETY: a prefetch is a hint; it never faults, whatever the address.
    unsafe {
        _mm_prefetch::<HINT>(p)
    }
}
