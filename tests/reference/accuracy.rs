//! Accuracy of `ascendcl::reference::{mish_backward, mish}` against an arbitrary-precision
//! golden (astro-float, 256-bit): correctly rounded fraction and worst ulp error, per
//! compute dtype, over random inputs in [−100, 100], the whole float range, the zero of
//! mish' near −1.1924, huge and tiny values, subnormals, specials, all f16/bf16 values
//! exhaustively, and fixed cases.

use crate::reference_golden;

use ascendcl::reference::{mish, mish_backward, mish_backward_into};
use astro_float::BigFloat;
use half::{bf16, f16};
use ndarray::{Array1, ArrayD, ArrayView1};
use proptest::prelude::*;
use reference_golden::*;

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

/// Runs the reference on f32 inputs (one call, contiguous) and compares each element
/// with the golden: returns the stats (correct = bitwise equal or both NaN).
fn check_f32(golden: &mut Golden, g: &[f32], x: &[f32]) -> Stats {
    let out = mish_backward(ArrayView1::from(g), ArrayView1::from(x)).unwrap();
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
        mish_backward(ndarray::arr0(g).view(), ndarray::arr0(x).view()).unwrap()[()]
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

fn exhaustive_16<T: ascendcl::FloatElement>(round: fn(f64) -> f64, from_bits: fn(u16) -> T) {
    let mut golden = Golden::new();
    let xs: Vec<T> = (0..=u16::MAX).map(from_bits).collect();
    let grads = [1.0f32, -3.0, 1e-3, 6.0e4, -2.0e-7, 1.5e30];
    let mut cases = 0u64;
    let ms: Vec<M> = xs.iter().map(|x| golden.m(x.to_f64())).collect();
    for gf in grads {
        let gt = T::from_f32(gf);
        let ga = ndarray::Array1::from_elem(xs.len(), gt).into_dyn();
        let xa = ndarray::Array1::from(xs.clone()).into_dyn();
        let mut out = xa.clone();
        mish_backward_into(ga.view(), xa.view(), out.view_mut()).unwrap();
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
    let out32 = mish_backward(ga.view(), xa.view()).unwrap(); // promoted: f32
    let (mut out16, mut outb) = (ga.clone(), xa.clone()); // f16 and bf16
    mish_backward_into(ga.view(), xa.view(), out16.view_mut()).unwrap();
    mish_backward_into(ga.view(), xa.view(), outb.view_mut()).unwrap();
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
    let mut o32 = ArrayD::<f32>::zeros(ga.raw_dim());
    mish_backward_into(ga.view(), xa.view(), o32.view_mut()).unwrap();
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

// ------------------------------------------------------------------------ mish (forward)

/// Runs `mish` on f32 inputs (one call, contiguous) and compares each element with the
/// golden: the stats (correct = bitwise equal or both NaN), asserting at most 1 ulp.
fn check_mish_f32(golden: &mut Golden, x: &[f32]) -> Stats {
    let out = mish(ArrayView1::from(x)).unwrap();
    let mut st = Stats::default();
    for (&x, &got) in x.iter().zip(out.iter()) {
        let want = golden.mish(f64::from(x), r32) as f32;
        st.cases += 1;
        if same(f64::from(got), f64::from(want)) {
            st.correct += 1;
        } else {
            let u = ulps(got, want);
            st.max_ulps = st.max_ulps.max(u);
            assert!(u <= 1, "x={x:e}: got {got:e}, want {want:e} ({u} ulps)");
        }
    }
    st
}

/// The golden's rational form of `tanh(ln(1 + e^x))` against astro-float's own `tanh`
/// and `ln` at twice the precision.
#[test]
fn mish_golden_matches_tanh_form() {
    let mut golden = Golden::new();
    let mut rng = Rng(0xabcd_ef01);
    let mut xs = vec![1.0, -1.0, 1e-30, -1e-30, 40.0, -40.0, 0.5, -3.75];
    xs.extend((0..300).map(|_| (rng.unit() - 0.5) * 80.0));
    for x in xs {
        let a = golden_mish(x, &mut golden.cc);
        let b = golden_mish_by_tanh(x, &mut golden.cc);
        let rel = a.sub(&b, PREC, RM).div(&b, PREC, RM).abs();
        let tiny = BigFloat::from_f64(2f64.powi(-240), PREC);
        assert!(rel.cmp(&tiny) == Some(-1), "x={x:e}: {rel}");
    }
}

#[test]
fn mish_f32_random_correctly_rounded() {
    let mut golden = Golden::new();
    let mut rng = Rng(0x5eed_0ff0);
    let x: Vec<f32> = (0..100_000)
        .map(|i| match i % 5 {
            0 | 1 => ((rng.unit() - 0.5) * 200.0) as f32,
            2 => ((rng.unit() - 0.5) * 20.0) as f32,
            3 => rng.finite_f32(),
            // near zero and into the subnormals
            _ => ((rng.unit() - 0.5) * 2f64.powi(-((rng.next() % 150) as i32))) as f32,
        })
        .collect();
    let st = check_mish_f32(&mut golden, &x);
    eprintln!(
        "mish f32 random: {st:?}, correctly rounded {:.6}",
        st.fraction()
    );
    assert!(st.fraction() >= 0.9999, "{st:?}");
    assert!(st.max_ulps <= 1);
}

#[test]
fn mish_f32_fixed_cases() {
    let mut golden = Golden::new();
    let x = [
        0.0f32,
        -0.0,
        1.0,
        -1.0,
        -1.192_431_2,
        -100.0,
        -103.9,
        -150.0,
        -200.0,
        -708.5,
        -745.2,
        -1000.0,
        -1e6,
        -1e30,
        -f32::MAX,
        f32::MAX,
        1e30,
        1000.0,
        20.0,
        8.5,
        1e-45,
        -1e-45,
        f32::MIN_POSITIVE,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
    ];
    let st = check_mish_f32(&mut golden, &x);
    assert_eq!(st.correct, st.cases, "{st:?}");
    let one = |x: f32| mish(ndarray::arr0(x).view()).unwrap()[()];
    assert_eq!(one(f32::NEG_INFINITY).to_bits(), (-0.0f32).to_bits());
    assert_eq!(one(-0.0).to_bits(), (-0.0f32).to_bits());
    assert_eq!(one(-1e30).to_bits(), (-0.0f32).to_bits());
    assert_eq!(one(f32::INFINITY), f32::INFINITY);
    assert!(one(f32::NAN).is_nan());
    assert_eq!(one(1e-45), 1e-45); // 0.6 of the smallest subnormal rounds up to it
    assert_eq!(one(f32::MAX), f32::MAX);
    let v = one(-100.0); // −100·e^−100, subnormal
    assert!(v < 0.0 && (v / -3.72e-42 - 1.0).abs() < 1e-2, "{v:e}");
}

/// Every f16 value of x: always correctly rounded.
#[test]
fn mish_f16_exhaustive_always_correctly_rounded() {
    mish_exhaustive_16::<f16>(r16, f16::from_bits);
}

/// Every bf16 value of x: always correctly rounded.
#[test]
fn mish_bf16_exhaustive_always_correctly_rounded() {
    mish_exhaustive_16::<bf16>(rb16, bf16::from_bits);
}

fn mish_exhaustive_16<T: ascendcl::FloatElement>(round: fn(f64) -> f64, from_bits: fn(u16) -> T) {
    let mut golden = Golden::new();
    let xs: Vec<T> = (0..=u16::MAX).map(from_bits).collect();
    let out = mish(ArrayView1::from(&xs)).unwrap();
    for (x, got) in xs.iter().zip(out.iter()) {
        let want = golden.mish(x.to_f64(), round);
        assert!(
            same(got.to_f64(), want),
            "{:?} x={:e}: got {:e}, want {want:e}",
            T::DTYPE,
            x.to_f64(),
            got.to_f64()
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Any f32 bit pattern (whole range, subnormals, infinities, NaNs).
    #[test]
    fn mish_f32_whole_range(bits in prop::collection::vec(any::<u32>(), 256)) {
        let mut golden = Golden::new();
        let x: Vec<f32> = bits.iter().map(|&b| f32::from_bits(b)).collect();
        let st = check_mish_f32(&mut golden, &x);
        prop_assert!(st.max_ulps <= 1);
        prop_assert!(st.correct + 1 >= st.cases, "{:?}", st);
    }
}
