//! The formulas of the reference in f64, for inputs that are f32 values: `mish` and
//! `mish'`, the constants they use, and the operators' formula types.
//!
//! Every function here is the exact operation sequence of the vector code in
//! [`super::simd`] (FMA where it fuses), so that the scalar and the vector paths give
//! bitwise identical results.
//!
//! # `mish'`
//!
//! With `e = exp(x)`, `mish'(x) = e·ω / δ²`, `ω = 4(x+1) + (4x+6)·e + 4e² + e³`,
//! `δ = e² + 2e + 2`. Evaluated in two forms that never overflow:
//!
//! - `x < 0`, `v = exp(x)`:  `v·(((v + 4)·v + (4x+6))·v + 4(x+1)) / ((v + 2)·v + 2)²`
//! - `x ≥ 0`, `v = exp(-x)`: `(((4(x+1)·v + (4x+6))·v + 4)·v + 1) / ((2v + 2)·v + 1)²`
//!
//! Near the root `r ≈ −1.1924` of `mish'` the terms of `ω` cancel; for `|x − r| < 1/16`
//! a degree-12 Taylor expansion around `r`, with `x − r` computed from a double-double
//! `r` (exact subtraction of the high part by Sterbenz' lemma).
//!
//! # `mish`
//!
//! `mish(x) = x·tanh(ln(1 + e)) = x·e(e + 2) / (e(e + 2) + 2)`, in the same two forms:
//! `x·v(v + 2) / (v(v + 2) + 2)` with `v = exp(x)` for `x < 0`, and
//! `x·(2v + 1) / ((2v + 2)·v + 1)` with `v = exp(−x)` for `x ≥ 0`. Every term is
//! positive, so nothing cancels: the relative error is that of `exp` and a few roundings.
//!
//! # `exp`
//!
//! Both share `v = exp(−|x|)`, from an own f64 exp (Cody–Waite reduction with FMA,
//! degree-13 Taylor polynomial, ≲ 2 ulp) that the vector code repeats bit for bit. The
//! argument is clamped at −708 (so `v` stays normal): for `x < −708` the clamped value
//! still gives results below 1e−260 in magnitude with the exact value's sign, which round
//! to the same signed zero (or signed infinity, for `mish'` times an infinite gradient)
//! as the exact value in every element type; for `x > 708` it gives what the exact value
//! rounds to.

use super::simd::{Formula, Vector};

/// Double-double root of mish': `R_HI + R_LO`.
///
/// Computed offline with mpmath 1.3 at 400 bits precision: `findroot(m, -1.19)` with
/// `m(x) = e·(4(1+x) + e(6+4x) + 4e² + e³)/(2+2e+e²)²`, `e = exp(x)`; `R_HI = float(r)`,
/// `R_LO = float(r - R_HI)`. r = −1.192431214515495212137588340420739405601…
pub(crate) const R_HI: f64 = -1.192_431_214_515_495_2;
pub(crate) const R_LO: f64 = -4.848_482_984_803_104_4e-17;

/// Half width of the window around the root that takes the Taylor path. Outside it the
/// direct formula's condition number is below 4.3 (mpmath, same script).
pub(crate) const ROOT_WINDOW: f64 = 0.0625;

/// Taylor coefficients `mish^(k)(r)/k!` for k = 1..=12 (index k−1), from
/// `mpmath.taylor(m, r, 14)` at 400 bits, each rounded to nearest f64. At |x − r| < 1/16 the
/// first omitted term is below 1.3e−20 of the value.
pub(crate) const ROOT_TAYLOR: [f64; 12] = [
    0.266_947_914_049_534_5,
    0.204_731_264_080_105_86,
    0.041_907_821_043_609_87,
    -0.020_271_822_716_684_245,
    -0.015_821_126_561_733_38,
    -0.003_360_684_927_023_268_5,
    0.001_092_405_540_944_585_4,
    0.000_989_818_102_128_919_6,
    0.000_254_129_363_861_910_73,
    -4.196_149_603_169_612_6e-5,
    -5.582_891_567_360_688e-5,
    -1.729_927_081_030_44e-5,
];

/// Lower clamp of the exp argument (keeps `exp` normal, see the module docs).
pub(crate) const EXP_MIN_ARG: f64 = -708.0;
/// `1/ln 2` rounded to f64.
pub(crate) const LOG2E: f64 = std::f64::consts::LOG2_E;
/// `ln 2` rounded to f64 and the rounding remainder (mpmath, 300 bits).
pub(crate) const LN2_HI: f64 = std::f64::consts::LN_2;
pub(crate) const LN2_LO: f64 = 2.319_046_813_846_299_6e-17;
/// 1.5·2^52: adding it rounds to an integer held in the low mantissa bits.
pub(crate) const SHIFTER: f64 = 6_755_399_441_055_744.0;
/// `1/n!` for n = 13 down to 2, correctly rounded (mpmath); degree-13 Taylor of exp on
/// |r| ≤ ln2/2 has truncation error below 6e−18 relative.
pub(crate) const EXP_TAYLOR: [f64; 12] = [
    1.605_904_383_682_161_3e-10,
    2.087_675_698_786_81e-9,
    2.505_210_838_544_172e-8,
    2.755_731_922_398_589e-7,
    2.755_731_922_398_589_3e-6,
    2.480_158_730_158_73e-5,
    0.000_198_412_698_412_698_4,
    0.001_388_888_888_888_889,
    0.008_333_333_333_333_333,
    0.041_666_666_666_666_664,
    0.166_666_666_666_666_66,
    0.5,
];

/// The forward formula, `mish(x)`; one input.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Mish;

/// The backward formula, `grad · mish'(x)`; inputs `[grad, x]`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct MishGrad;

impl Formula<1> for Mish {
    #[inline]
    fn precise([x]: [f64; 1]) -> f64 {
        mish(x)
    }

    const VECTOR: Option<Vector<1>> = Some(Vector::of::<Mish>());
}

impl Formula<2> for MishGrad {
    #[inline]
    fn precise([grad, x]: [f64; 2]) -> f64 {
        grad * dmish(x)
    }

    const VECTOR: Option<Vector<2>> = Some(Vector::of::<MishGrad>());
}

/// Whether `x` is inside the window around the root that uses the Taylor expansion.
#[inline]
fn in_root_window(x: f64) -> bool {
    (x - R_HI).abs() < ROOT_WINDOW
}

/// `mish'(x)` for `|x − r| < ROOT_WINDOW`: Taylor expansion around the root, in
/// `d = x − r` computed from the double-double root (exact first subtraction).
#[inline]
pub(crate) fn root_dmish(x: f64) -> f64 {
    let d = (x - R_HI) - R_LO;
    let mut p = ROOT_TAYLOR[11];
    for &c in ROOT_TAYLOR[..11].iter().rev() {
        p = p.mul_add(d, c);
    }
    d * p
}

/// `exp(−|x|)`, its argument clamped at [`EXP_MIN_ARG`]: the exact operation sequence of
/// the vector code.
#[inline]
pub(crate) fn exp_neg_abs(x: f64) -> f64 {
    let a = (-x.abs()).max(EXP_MIN_ARG);
    let t = a.mul_add(LOG2E, SHIFTER);
    let k = t - SHIFTER;
    let r = k.mul_add(-LN2_HI, a);
    let r = k.mul_add(-LN2_LO, r);
    let mut p = EXP_TAYLOR[0];
    for &c in &EXP_TAYLOR[1..] {
        p = p.mul_add(r, c);
    }
    p = p.mul_add(r, 1.0);
    p = p.mul_add(r, 1.0);
    let scale = f64::from_bits(t.to_bits().wrapping_add(1023) << 52);
    p * scale
}

/// `mish'(x)` by the direct formula for finite `x`.
#[inline]
pub(crate) fn direct_dmish(x: f64) -> f64 {
    let v = exp_neg_abs(x);
    let four_x1 = 4.0f64.mul_add(x, 4.0);
    let four_x6 = 4.0f64.mul_add(x, 6.0);
    let (h3, h2, h1, h0, pre, k2, k0): (f64, f64, f64, f64, f64, f64, f64) = if x < 0.0 {
        (1.0, 4.0, four_x6, four_x1, v, 1.0, 2.0)
    } else {
        (four_x1, four_x6, 4.0, 1.0, 1.0, 2.0, 1.0)
    };
    let q = h3.mul_add(v, h2).mul_add(v, h1).mul_add(v, h0);
    let d = k2.mul_add(v, 2.0).mul_add(v, k0);
    (pre * q) / (d * d)
}

/// `mish'(x)` for the lanes the vector code leaves to scalar code: NaN and ±∞.
///
/// `mish'(−∞)` is taken as −0, the sign of the limit (mish' is negative below the root),
/// so that a finite gradient gives the same signed zero as at very negative finite `x`.
#[cold]
pub(crate) fn nonfinite_dmish(x: f64) -> f64 {
    if x == f64::INFINITY {
        1.0
    } else if x == f64::NEG_INFINITY {
        -0.0
    } else {
        x // NaN
    }
}

/// `mish'(x)` for any f64 holding an f32 value.
#[inline]
pub(crate) fn dmish(x: f64) -> f64 {
    if !x.is_finite() {
        nonfinite_dmish(x)
    } else if in_root_window(x) {
        root_dmish(x)
    } else {
        direct_dmish(x)
    }
}

/// `mish(x)` for any f64 holding an f32 value (see the module docs). `mish(−∞) = −0`,
/// the sign of the limit; `mish(+∞) = +∞`; NaN propagates.
#[inline]
pub(crate) fn mish(x: f64) -> f64 {
    if !x.is_finite() {
        return nonfinite_mish(x);
    }
    let v = exp_neg_abs(x);
    // The coefficients of the x < 0 form, else of the x ≥ 0 form, as the vector code
    // blends them: numerator v·(a·v + 2) + b, denominator numerator + c.
    let (a, b, c): (f64, f64, f64) = if x < 0.0 {
        (1.0, 0.0, 2.0)
    } else {
        (0.0, 1.0, 2.0 * v * v)
    };
    let numerator = v.mul_add(a.mul_add(v, 2.0), b);
    x * numerator / (numerator + c)
}

/// `mish(x)` for NaN and ±∞: `x + x` (±∞, or NaN quieted the same way on every path,
/// where `x` itself might pass a signaling NaN through unquieted), but −0 at −∞.
#[cold]
pub(crate) fn nonfinite_mish(x: f64) -> f64 {
    if x == f64::NEG_INFINITY { -0.0 } else { x + x }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exp_is_accurate() {
        let mut worst = 0.0f64;
        let mut a = -708.0;
        while a <= 0.0 {
            let rel = ((exp_neg_abs(a) - a.exp()) / a.exp()).abs();
            worst = worst.max(rel);
            a += 0.0137;
        }
        assert!(worst < 5e-16, "worst relative error {worst:e}");
    }

    #[test]
    fn taylor_and_direct_agree_at_window_edge() {
        for x in [R_HI - ROOT_WINDOW, R_HI + ROOT_WINDOW] {
            let taylor = root_dmish(x);
            let direct = direct_dmish(x);
            assert!(
                ((taylor - direct) / direct).abs() < 4e-15,
                "{taylor} {direct}"
            );
        }
    }

    /// Both forms of `mish` against std's `exp`/`ln_1p`/`tanh` in f64 where those are
    /// accurate enough to tell a wrong coefficient (the accuracy tests use a golden).
    #[test]
    fn mish_forms_agree_with_std() {
        let mut x = -30.0f64;
        while x < 30.0 {
            let want = x * x.exp().ln_1p().tanh();
            assert!(
                ((mish(x) - want) / want).abs() < 1e-14,
                "x={x}: {} {want}",
                mish(x)
            );
            x += 0.0371;
        }
        assert_eq!(mish(0.0), 0.0);
        assert_eq!(mish(-0.0).to_bits(), (-0.0f64).to_bits());
        assert_eq!(mish(f64::NEG_INFINITY).to_bits(), (-0.0f64).to_bits());
        assert_eq!(mish(f64::INFINITY), f64::INFINITY);
        assert!(mish(f64::NAN).is_nan());
        // tiny and negative in f64, −0 once rounded to any element type
        assert!(mish(-1e30) < 0.0 && mish(-1e30) > -1e-260);
    }
}
