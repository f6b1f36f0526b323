//! Accuracy of `ascendcl::reference` against an arbitrary-precision golden (astro-float,
//! 256-bit): correctly rounded fraction and worst ulp error, per compute dtype, over random
//! inputs in [−100, 100], the whole float range, the zero of mish' near −1.1924, huge and
//! tiny values, subnormals, specials, all f16/bf16 values exhaustively, and fixed cases.

use ascendcl::Element;
use ascendcl::reference::mish_backward;
use astro_float::{BigFloat, Consts, RoundingMode, Sign};
use half::{bf16, f16};
use ndarray::{Array1, ArrayD};
use proptest::prelude::*;

const PREC: usize = 256;
const RM: RoundingMode = RoundingMode::ToEven;

/// Exact-ish `mish'(x)` for finite |x| ≤ 1000, 256-bit.
fn golden_dmish(x: f64, cc: &mut Consts) -> BigFloat {
    let bx = BigFloat::from_f64(x, PREC);
    let e = bx.exp(PREC, RM, cc);
    let n = |v: f64| BigFloat::from_f64(v, PREC);
    let four = n(4.0);
    // w = 4(1+x) + e(6+4x) + 4e² + e³ ; d = 2 + 2e + e² ; m = e·w/d²
    let e2 = e.mul(&e, PREC, RM);
    let e3 = e2.mul(&e, PREC, RM);
    let a = four.mul(&n(1.0).add(&bx, PREC, RM), PREC, RM);
    let b = n(6.0).add(&four.mul(&bx, PREC, RM), PREC, RM);
    let w = a
        .add(&e.mul(&b, PREC, RM), PREC, RM)
        .add(&four.mul(&e2, PREC, RM), PREC, RM)
        .add(&e3, PREC, RM);
    let d = n(2.0)
        .add(&n(2.0).mul(&e, PREC, RM), PREC, RM)
        .add(&e2, PREC, RM);
    e.mul(&w, PREC, RM).div(&d.mul(&d, PREC, RM), PREC, RM)
}

/// Rounds a nonzero finite BigFloat to f64 with round-to-odd (so that one more RNE
/// rounding to ≤ 51 bits is the correct RNE rounding of the BigFloat); tiny values
/// (below 2^−200, which round to zero in every target type) become a signed zero.
fn to_f64_odd(b: &BigFloat) -> f64 {
    let (words, _bits, sign, exp, inexact) = b.as_raw_parts().expect("finite value");
    let s = if sign == Sign::Neg { -1.0 } else { 1.0 };
    if b.is_zero() || exp < -200 {
        return s * 0.0;
    }
    assert!(exp < 300, "out of range");
    let top = *words.last().unwrap();
    assert!(top >> 63 == 1, "normalized");
    let sticky = inexact || words[..words.len() - 1].iter().any(|&w| w != 0) || top & 0x7ff != 0;
    let m = (top >> 11) | u64::from(sticky);
    // value = 0.top… × 2^exp = (top >> 11) × 2^(exp − 53)
    s * (m as f64) * 2f64.powi(exp - 53)
}

/// The golden value of `grad · mish'(x)` rounded once to `P` (`round`), as f64.
struct Golden {
    cc: Consts,
}

/// mish'(x) as the golden sees it.
#[derive(Clone)]
enum M {
    /// Exactly this value for IEEE purposes: 1 for x > 1000 and +∞ (grad·m rounds to
    /// grad), −0 for x = −∞ (mish'(−∞) = −0, so ±∞·m is NaN).
    Exact(f64),
    /// A negative value of magnitude below e^−999 (finite x < −1000): any finite grad
    /// gives a signed zero, ±∞ gives ∓∞.
    NegTiny,
    /// Finite nonzero value.
    Value(BigFloat),
    Nan,
}

impl Golden {
    fn new() -> Self {
        Golden {
            cc: Consts::new().unwrap(),
        }
    }

    fn m(&mut self, x: f64) -> M {
        if x.is_nan() {
            M::Nan
        } else if x == f64::INFINITY || x > 1000.0 {
            M::Exact(1.0)
        } else if x == f64::NEG_INFINITY {
            M::Exact(-0.0)
        } else if x < -1000.0 {
            M::NegTiny
        } else {
            M::Value(golden_dmish(x, &mut self.cc))
        }
    }

    /// `grad·m` rounded once by `round` (an RNE rounding f64 → P, returned as f64).
    fn product(&self, g: f64, m: &M, round: fn(f64) -> f64) -> f64 {
        match m {
            M::Nan => f64::NAN,
            M::Exact(v) => round(g * v),
            M::NegTiny => {
                if g.is_infinite() {
                    -g
                } else {
                    g * -0.0
                }
            }
            M::Value(b) => {
                let neg = b.is_negative();
                if g.is_nan() {
                    f64::NAN
                } else if g.is_infinite() || g == 0.0 {
                    if neg { -g } else { g }
                } else {
                    let p = BigFloat::from_f64(g, PREC).mul(b, PREC, RM);
                    round(to_f64_odd(&p))
                }
            }
        }
    }
}

fn r32(v: f64) -> f64 {
    f64::from(v as f32)
}
/// Round-to-nearest-even of an f64 to a 16-bit format, independent of any library
/// conversion (half's `from_f64` goes through f32 and rounds twice): a binary search for
/// the largest finite value at or below `|v|`, then a comparison with the midpoint to the
/// next one (exact in f64). `inf_bits` are the bits of +∞, `beyond_max` the value that
/// follows the largest finite one (its midpoint with it is the overflow threshold).
fn round_to_16(v: f64, value: fn(u16) -> f64, inf_bits: u16, beyond_max: f64) -> f64 {
    if !v.is_finite() || v == 0.0 {
        return v;
    }
    let a = v.abs();
    let (mut lo, mut hi) = (0u16, inf_bits);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if value(mid) <= a {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let above = if hi == inf_bits {
        beyond_max
    } else {
        value(hi)
    };
    let midpoint = (value(lo) + above) / 2.0;
    let bits = if a < midpoint || (a == midpoint && lo % 2 == 0) {
        lo
    } else {
        hi
    };
    value(bits).copysign(v)
}
fn r16(v: f64) -> f64 {
    round_to_16(v, |b| f16::from_bits(b).to_f64(), 0x7c00, 65536.0)
}
fn rb16(v: f64) -> f64 {
    round_to_16(v, |b| bf16::from_bits(b).to_f64(), 0x7f80, 2f64.powi(128))
}

/// The independent roundings above on values where rounding through f32 first would
/// go wrong (just above a midpoint of the 16-bit format, within half an f32 ulp).
#[test]
fn sixteen_bit_oracle_rounds_once() {
    assert_eq!(
        r16(1.0 + 2f64.powi(-11) + 2f64.powi(-30)),
        1.0 + 2f64.powi(-10)
    );
    assert_eq!(r16(1.0 + 2f64.powi(-11)), 1.0);
    assert_eq!(
        r16(-(1.0 + 3.0 * 2f64.powi(-11))),
        -(1.0 + 2.0 * 2f64.powi(-10))
    );
    assert_eq!(r16(65519.99), 65504.0);
    assert_eq!(r16(65520.0), f64::INFINITY);
    assert_eq!(r16(2f64.powi(-25)), 0.0);
    assert_eq!(r16(2f64.powi(-25) + 2f64.powi(-60)), 2f64.powi(-24));
    assert_eq!(
        rb16(1.0 + 2f64.powi(-8) + 2f64.powi(-30)),
        1.0 + 2f64.powi(-7)
    );
    assert_eq!(rb16(1.0 + 2f64.powi(-8)), 1.0);
}

/// Distance in ulps of two f32 (0 for +0/−0, u64::MAX when one is NaN and the other not).
fn ulps(a: f32, b: f32) -> u64 {
    if a.is_nan() || b.is_nan() {
        return if a.is_nan() && b.is_nan() {
            0
        } else {
            u64::MAX
        };
    }
    let ord = |f: f32| {
        let b = f.to_bits();
        if b >> 31 == 1 {
            -i64::from(b & 0x7fff_ffff)
        } else {
            i64::from(b)
        }
    };
    ord(a).abs_diff(ord(b))
}

fn same(a: f64, b: f64) -> bool {
    (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits()
}

#[derive(Default, Debug)]
struct Stats {
    cases: u64,
    correct: u64,
    max_ulps: u64,
}

impl Stats {
    fn fraction(&self) -> f64 {
        self.correct as f64 / self.cases as f64
    }
}

/// Runs the reference on f32 inputs (one call, contiguous) and compares each element
/// with the golden: returns the stats (correct = bitwise equal or both NaN).
fn check_f32(golden: &mut Golden, g: &[f32], x: &[f32]) -> Stats {
    let ga = Array1::from(g.to_vec()).into_dyn();
    let xa = Array1::from(x.to_vec()).into_dyn();
    let out: ArrayD<f32> = mish_backward(ga.view(), xa.view()).unwrap();
    let mut st = Stats::default();
    for ((&g, &x), &got) in g.iter().zip(x).zip(out.iter()) {
        let m = golden.m(f64::from(x));
        let want = golden.product(f64::from(g), &m, r32) as f32;
        st.cases += 1;
        let u = ulps(got, want);
        if same(f64::from(got), f64::from(want)) {
            st.correct += 1;
        } else {
            st.max_ulps = st.max_ulps.max(u);
            assert!(
                u <= 1,
                "g={g:e} x={x:e}: got {got:e}, want {want:e} ({u} ulps)"
            );
        }
    }
    st
}

/// xorshift64* for reproducible inputs.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    /// A finite f32 with random sign and exponent (log-uniform magnitude).
    fn finite_f32(&mut self) -> f32 {
        loop {
            let v = f32::from_bits(self.next() as u32);
            if v.is_finite() {
                return v;
            }
        }
    }
}

#[test]
fn golden_conversion_roundtrips() {
    for v in [
        1.0,
        -3.5,
        1e-30,
        123_456.789,
        f64::from(f32::MAX),
        2f64.powi(-149),
    ] {
        assert_eq!(to_f64_odd(&BigFloat::from_f64(v, PREC)), v);
    }
    // golden mish'(0) = 0.6
    let mut g = Golden::new();
    let m = g.m(0.0);
    assert_eq!(g.product(1.0, &m, r32), f64::from(0.6f32));
}

#[test]
fn f32_random_in_pm100_correctly_rounded() {
    let mut golden = Golden::new();
    let mut rng = Rng(0x1234_5678_9abc_def1);
    let n = 40_000;
    let mut g = Vec::with_capacity(n);
    let mut x = Vec::with_capacity(n);
    for i in 0..n {
        x.push(((rng.unit() - 0.5) * 200.0) as f32);
        // half the grads of magnitude ~1, half anywhere in the f32 range
        g.push(if i % 2 == 0 {
            ((rng.unit() - 0.5) * 4.0) as f32
        } else {
            rng.finite_f32()
        });
    }
    let st = check_f32(&mut golden, &g, &x);
    eprintln!(
        "f32 random [-100,100]: {st:?}, correctly rounded {:.6}",
        st.fraction()
    );
    assert!(st.fraction() >= 0.9999, "{st:?}");
    assert!(st.max_ulps <= 1);
}

#[test]
fn f32_near_root_correctly_rounded() {
    let mut golden = Golden::new();
    let r = -1.192_431_214_515_495_2f64;
    let r32 = r as f32;
    let mut g = Vec::new();
    let mut x = Vec::new();
    // the 4001 f32 closest to the root, then a sweep out to ±0.3
    let mut v = r32;
    for _ in 0..2000 {
        v = f32::from_bits(v.to_bits() + 1); // more negative
    }
    for _ in 0..4001 {
        x.push(v);
        g.push(1.0);
        v = f32::from_bits(v.to_bits() - 1);
    }
    let mut rng = Rng(42);
    for _ in 0..6000 {
        x.push((r + (rng.unit() - 0.5) * 0.6) as f32);
        g.push(rng.finite_f32());
    }
    let st = check_f32(&mut golden, &g, &x);
    eprintln!(
        "f32 near root: {st:?}, correctly rounded {:.6}",
        st.fraction()
    );
    assert!(st.fraction() >= 0.9999, "{st:?}");
}

#[test]
fn f32_fixed_cases() {
    let mut golden = Golden::new();
    let xs = [
        0.0f32,
        -0.0,
        1.0,
        -1.0,
        -1.192_431_2,
        -1.192_431_3,
        -100.0,
        -103.9,
        -150.0,
        -190.0,
        -200.0,
        -700.0,
        -708.5,
        -745.2,
        -1000.0,
        -1e6,
        -f32::MAX,
        f32::MAX,
        1e6,
        750.0,
        20.0,
        12.0,
        8.5,
        1e-45,
        -1e-45,
        1.0e-38,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
    ];
    let gs = [
        1.0f32,
        -1.0,
        0.0,
        -0.0,
        f32::MAX,
        -f32::MAX,
        1e-45,
        3.0e38,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        0.333,
    ];
    let (mut g, mut x) = (Vec::new(), Vec::new());
    for &xi in &xs {
        for &gi in &gs {
            g.push(gi);
            x.push(xi);
        }
    }
    let st = check_f32(&mut golden, &g, &x);
    assert_eq!(st.correct, st.cases, "{st:?}");

    // Spot values from the issue.
    let one = |g: f32, x: f32| -> f32 {
        let out: ArrayD<f32> = mish_backward(
            ndarray::arr0(g).into_dyn().view(),
            ndarray::arr0(x).into_dyn().view(),
        )
        .unwrap();
        out.into_iter().next().unwrap()
    };
    let v = one(1.0, -100.0);
    assert!(v < 0.0 && (v / -3.683e-42 - 1.0).abs() < 1e-2, "{v:e}");
    assert_eq!(one(f32::INFINITY, -1000.0), f32::NEG_INFINITY);
    assert_eq!(one(f32::INFINITY, -1e30), f32::NEG_INFINITY);
    assert_eq!(one(1.0, -1e30).to_bits(), (-0.0f32).to_bits());
    assert_eq!(one(2.5, f32::INFINITY), 2.5);
    assert_eq!(one(2.5, f32::NEG_INFINITY).to_bits(), (-0.0f32).to_bits());
    assert!(one(f32::INFINITY, f32::NEG_INFINITY).is_nan());
    assert!(one(1.0, f32::NAN).is_nan());
    assert!(one(f32::NAN, 1.0).is_nan());
    assert_eq!(one(f32::MAX, 1.3), f32::INFINITY); // overflow of the product is real
    approx::assert_relative_eq!(one(1.0, 0.0), 0.6);
}

/// All 65536 f16 values of x (times a few gradients) in f16 compute: always correct.
#[test]
fn f16_exhaustive_x_always_correctly_rounded() {
    exhaustive_16::<f16>(r16, f16::from_bits);
}

/// All 65536 bf16 values of x (times a few gradients) in bf16 compute: always correct.
#[test]
fn bf16_exhaustive_x_always_correctly_rounded() {
    exhaustive_16::<bf16>(rb16, bf16::from_bits);
}

fn exhaustive_16<T: Element>(round: fn(f64) -> f64, from_bits: fn(u16) -> T) {
    let mut golden = Golden::new();
    let xs: Vec<T> = (0..=u16::MAX).map(from_bits).collect();
    let grads = [1.0f32, -3.0, 1e-3, 6.0e4, -2.0e-7, 1.5e30];
    let mut cases = 0u64;
    let ms: Vec<M> = xs.iter().map(|x| golden.m(x.to_f64())).collect();
    for gf in grads {
        let gt = T::from_f32(gf);
        let ga = ndarray::Array1::from_elem(xs.len(), gt).into_dyn();
        let xa = ndarray::Array1::from(xs.clone()).into_dyn();
        let out: ArrayD<T> = mish_backward(ga.view(), xa.view()).unwrap();
        for ((x, m), got) in xs.iter().zip(&ms).zip(out.iter()) {
            let want = golden.product(gt.to_f64(), m, round);
            cases += 1;
            assert!(
                same(got.to_f64(), want),
                "{:?} g={:e} x={:e}: got {:e}, want {want:e}",
                T::DTYPE,
                gt.to_f64(),
                x.to_f64(),
                got.to_f64()
            );
        }
    }
    eprintln!(
        "{:?} exhaustive: {cases} cases, all correctly rounded",
        T::DTYPE
    );
}

/// Mixed dtypes promote to f32, round once, then round again to the output type.
#[test]
fn promotion_and_output_cast() {
    let mut golden = Golden::new();
    let mut rng = Rng(7);
    let n = 2000;
    let g16: Vec<f16> = (0..n)
        .map(|_| f16::from_f64((rng.unit() - 0.5) * 8.0))
        .collect();
    let xb: Vec<bf16> = (0..n)
        .map(|_| bf16::from_f64((rng.unit() - 0.5) * 40.0))
        .collect();
    let ga = Array1::from(g16.clone()).into_dyn();
    let xa = Array1::from(xb.clone()).into_dyn();
    // f16 + bf16 -> computes in f32; output f16 (second rounding) and f32.
    let out16: ArrayD<f16> = mish_backward(ga.view(), xa.view()).unwrap();
    let out32: ArrayD<f32> = mish_backward(ga.view(), xa.view()).unwrap();
    let outb: ArrayD<bf16> = mish_backward(ga.view(), xa.view()).unwrap();
    for i in 0..n {
        let m = golden.m(xb[i].to_f64());
        let p = golden.product(g16[i].to_f64(), &m, r32) as f32;
        assert_eq!(out32[i].to_bits(), p.to_bits(), "i={i}");
        assert_eq!(out16[i].to_bits(), f16::from_f32(p).to_bits(), "i={i}");
        assert_eq!(outb[i].to_bits(), bf16::from_f32(p).to_bits(), "i={i}");
    }
    // f16 + f16 computes in f16, even when the output is f32.
    let x16: Vec<f16> = xb.iter().map(|v| f16::from_f32(v.to_f32())).collect();
    let xa = Array1::from(x16.clone()).into_dyn();
    let o32: ArrayD<f32> = mish_backward(ga.view(), xa.view()).unwrap();
    for i in 0..n {
        let m = golden.m(x16[i].to_f64());
        let p = golden.product(g16[i].to_f64(), &m, r16);
        assert_eq!(f64::from(o32[i]), p, "i={i}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Any f32 bit patterns (whole range, subnormals, infinities, NaNs).
    #[test]
    fn f32_whole_range(pairs in prop::collection::vec((any::<u32>(), any::<u32>()), 256)) {
        let mut golden = Golden::new();
        let g: Vec<f32> = pairs.iter().map(|p| f32::from_bits(p.0)).collect();
        let x: Vec<f32> = pairs.iter().map(|p| f32::from_bits(p.1)).collect();
        let st = check_f32(&mut golden, &g, &x);
        prop_assert_eq!(st.correct, st.cases);
    }

    /// x in [−100, 100] (and ±1e-30-ish subnormal-adjacent), grads of any magnitude.
    #[test]
    fn f32_pm100(pairs in prop::collection::vec((any::<u32>(), -100.0f32..100.0f32), 256)) {
        let mut golden = Golden::new();
        let g: Vec<f32> = pairs.iter().map(|p| f32::from_bits(p.0)).collect();
        let x: Vec<f32> = pairs.iter().map(|p| p.1).collect();
        let st = check_f32(&mut golden, &g, &x);
        prop_assert!(st.max_ulps <= 1);
        prop_assert!(st.correct + 1 >= st.cases);
    }

    /// Tiny x (subnormal and near zero) and huge x.
    #[test]
    fn f32_tiny_and_huge(g in any::<f32>(), e in -149i32..128, neg in any::<bool>(), frac in 1.0f32..2.0) {
        let mut golden = Golden::new();
        let mag = if e < -126 { 2f32.powi(e) } else { frac * 2f32.powi(e.min(127)) };
        let x = if neg { -mag } else { mag };
        let st = check_f32(&mut golden, &[g], &[x]);
        prop_assert_eq!(st.correct, 1);
    }
}
