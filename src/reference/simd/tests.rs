//! The vector paths against the scalar one: bitwise identical precise values on every
//! instruction set, the AVX-512 fast path bitwise equal to the precise path, the fast
//! products within their error bounds, and the rounding test sound.

use super::{Formula, Isa, narrowable, precise_f64, rounded_f32};
use super::{fast, fast4};
use crate::reference::math::{Mish, MishGrad, R_HI};
use crate::reference::narrow::{Narrow, narrow16_scalar};

/// Half width of the root window the AVX-512 fast path leaves to the precise path.
const FAST_WINDOW: f64 = fast::DMISH_ROOT_WINDOW;

/// Deterministic xorshift for test inputs.
fn next(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

fn inputs() -> (Vec<f32>, Vec<f32>) {
    let mut s = 0x9e37_79b9_7f4a_7c15u64;
    let mut g = Vec::new();
    let mut x = Vec::new();
    let specials = [
        0.0f32,
        -0.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        f32::MAX,
        -f32::MAX,
        f32::MIN_POSITIVE,
        1e-45,
        -1e-45,
        -1.192_431_2,
        -708.0,
        -709.0,
        708.5,
        -800.0,
        1e30,
        -1e30,
    ];
    for &a in &specials {
        for &b in &specials {
            g.push(a);
            x.push(b);
        }
    }
    for i in 0..60_000u32 {
        let r = next(&mut s);
        let gi = f32::from_bits(r as u32);
        let xi = match i % 4 {
            0 => f32::from_bits((r >> 32) as u32),
            1 => ((r >> 40) as f32 / (1u64 << 24) as f32 - 0.5) * 200.0,
            2 => R_HI as f32 + ((r >> 40) as f32 / (1u64 << 24) as f32 - 0.5) * 0.2,
            _ => ((r >> 40) as f32 / (1u64 << 24) as f32 - 0.5) * 20.0,
        };
        g.push(gi);
        x.push(xi);
    }
    // around the ends of the fast f32 path's range (x ≈ 148.8 and −151.2) and the
    // clamp of exp (x = −708)
    for i in 0..12_000u32 {
        let r = next(&mut s);
        let u = (r >> 40) as f32 / (1u64 << 24) as f32;
        g.push(f32::from_bits(r as u32));
        x.push(match i % 3 {
            0 => 146.0 + 6.0 * u,
            1 => -154.0 + 6.0 * u,
            _ => -720.0 + 24.0 * u,
        });
    }
    (g, x)
}

/// Every instruction set gives the scalar code's `rounded_f32` and `precise_f64` of `K`,
/// bitwise (NaN payloads too), over `x` and over its prefixes of the lengths `tails`.
fn assert_isas_bitwise_identical<K: Formula<N>, const N: usize>(x: [&[f32]; N], tails: [usize; 4]) {
    let n = x[0].len();
    let mut want32 = vec![0.0f32; n];
    let mut want64 = vec![0.0f64; n];
    rounded_f32::<K, N>(Isa::Scalar, x, &mut want32);
    precise_f64::<K, N>(Isa::Scalar, x, &mut want64);
    for isa in Isa::available() {
        for len in tails {
            let mut got32 = vec![0.0f32; len];
            let mut got64 = vec![0.0f64; len];
            rounded_f32::<K, N>(isa, x.map(|s| &s[..len]), &mut got32);
            precise_f64::<K, N>(isa, x.map(|s| &s[..len]), &mut got64);
            for i in 0..len {
                let at = x.map(|s| s[i]);
                assert_eq!(
                    got32[i].to_bits(),
                    want32[i].to_bits(),
                    "{} f32 at {at:?}",
                    isa.name()
                );
                assert_eq!(
                    got64[i].to_bits(),
                    want64[i].to_bits(),
                    "{} f64 at {at:?}",
                    isa.name()
                );
            }
        }
    }
}

/// Every instruction set's `rounded_f32` of `K` (the fast path where it has one) equals the
/// scalar precise one over `x`, bitwise except for NaN payloads, which are not part of the
/// contract (two NaN operands may meet in either order).
fn assert_isas_round_like_scalar<K: Formula<N>, const N: usize>(x: [&[f32]; N]) {
    let n = x[0].len();
    let mut want = vec![0.0f32; n];
    rounded_f32::<K, N>(Isa::Scalar, x, &mut want);
    for isa in Isa::available() {
        let mut got = vec![0.0f32; n];
        rounded_f32::<K, N>(isa, x, &mut got);
        let same = |a: f32, b: f32| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan());
        let bad = (0..n).find(|&i| !same(got[i], want[i]));
        assert!(
            bad.is_none(),
            "{} differs at {:?}",
            isa.name(),
            x.map(|s| s[bad.unwrap_or(0)])
        );
    }
}

/// Every instruction set's `narrowable` values of `K` round to the 16-bit format `to` like
/// the scalar precise values (any NaN for NaN).
fn assert_isas_narrow_like_scalar<K: Formula<N>, const N: usize>(to: Narrow, x: [&[f32]; N]) {
    let n = x[0].len();
    let mut want = vec![0.0f64; n];
    precise_f64::<K, N>(Isa::Scalar, x, &mut want);
    let mut want16 = vec![0u16; n];
    narrow16_scalar(to, &want, &mut want16);
    for isa in Isa::available() {
        let mut got = vec![0.0f64; n];
        narrowable::<K, N>(isa, to, x, &mut got);
        let mut got16 = vec![0u16; n];
        narrow16_scalar(to, &got, &mut got16);
        let nan = |b: u16| to.value(b).is_nan();
        let bad = (0..n).find(|&i| got16[i] != want16[i] && !(nan(got16[i]) && nan(want16[i])));
        assert!(
            bad.is_none(),
            "{} {to:?} differs at {:?}",
            isa.name(),
            x.map(|s| s[bad.unwrap_or(0)])
        );
    }
}

#[test]
fn all_isas_bitwise_identical() {
    let (g, x) = inputs();
    // odd lengths exercise the tails
    let n = g.len();
    assert_isas_bitwise_identical::<MishGrad, 2>([&g, &x], [n, n - 3, 7, 1]);
}

/// The fast AVX-512 path (rounding test, lockstep loop, tails) against the scalar
/// precise path on 1M inputs aimed at its edges: the root window's border, results in
/// the f32 subnormal range, both ends of the covered range, any bit pattern, zero and
/// non-finite grads.
/// (The AVX2 path has no fast variant; it is checked along.)
#[test]
fn fast_path_matches_precise_path() {
    let mut s = 0x0123_4567_89ab_cdefu64;
    let n = 1 << 20;
    let mut g = Vec::with_capacity(n);
    let mut x = Vec::with_capacity(n);
    for i in 0..n {
        let r = next(&mut s);
        let u = (r >> 40) as f32 / (1u64 << 24) as f32 - 0.5;
        let gi = match i % 64 {
            0 => 0.0,
            1 => -0.0,
            2 => f32::INFINITY,
            3 => f32::NAN,
            _ => f32::from_bits(r as u32),
        };
        let w = FAST_WINDOW as f32;
        let xi = match (r >> 32) % 6 {
            0 => u * 200.0,
            1 => R_HI as f32 + w * (1.0 + u * 0.01),
            2 => R_HI as f32 - w * (1.0 + u * 0.01),
            3 => -85.0 + u * 20.0,
            4 => f32::from_bits((r >> 32) as u32),
            // both ends of the covered range
            _ if r & (1 << 31) == 0 => R_HI as f32 + 150.0 * (1.0 + u * 1e-5),
            _ => R_HI as f32 - 150.0 * (1.0 + u * 1e-5),
        };
        g.push(if gi.is_nan() {
            gi
        } else {
            gi.clamp(-1e30, 1e30)
        });
        x.push(xi);
    }
    assert_isas_round_like_scalar::<MishGrad, 2>([&g, &x]);
}

/// The products for 16-bit results (fast where the rounding test on the f16 or bf16
/// grid allows it) round to the same f16/bf16 as the scalar precise products, on
/// inputs that are values of the format: all of them for x near the root window and
/// the ends of the fast range, random ones elsewhere, with zero, tiny and huge grads.
#[test]
fn narrowable_products_round_like_precise_ones() {
    let mut s = 0x1234_5678_9abc_def0u64;
    for to in [Narrow::F16, Narrow::Bf16] {
        let widen = |b: u16| match to {
            Narrow::F16 => half::f16::from_bits(b).to_f32(),
            Narrow::Bf16 => half::bf16::from_bits(b).to_f32(),
        };
        let (mut g, mut x) = (Vec::new(), Vec::new());
        for i in 0..(1u32 << 18) {
            let r = next(&mut s);
            let gi = match i % 16 {
                0 => 0.0,
                1 => widen(1),
                // the largest finite value
                2 => widen(match to {
                    Narrow::F16 => 0x7bff,
                    Narrow::Bf16 => 0x7f7f,
                }),
                _ => widen((r >> 16) as u16),
            };
            let xi = match i % 5 {
                0 => R_HI as f32 + ((r >> 40) as f32 / (1u64 << 24) as f32 - 0.5) * 0.01,
                1 => 140.0 + 20.0 * ((r >> 40) as f32 / (1u64 << 24) as f32),
                2 => -160.0 + 20.0 * ((r >> 40) as f32 / (1u64 << 24) as f32),
                _ => widen(r as u16),
            };
            // the inputs are values of the format, as the 16-bit path widens them
            g.push(widen(half_bits(to, gi)));
            x.push(widen(half_bits(to, xi)));
        }
        assert_isas_narrow_like_scalar::<MishGrad, 2>(to, [&g, &x]);
    }
}

/// `v` rounded once to the 16-bit format `to` by the scalar code, as bits.
fn round16(to: Narrow, v: f64) -> u64 {
    let mut b = [0u16];
    narrow16_scalar(to, &[v], &mut b);
    u64::from(b[0])
}

/// `v` rounded to the 16-bit format `to`, as bits.
fn half_bits(to: Narrow, v: f32) -> u16 {
    match to {
        Narrow::F16 => half::f16::from_f32(v).to_bits(),
        Narrow::Bf16 => half::bf16::from_f32(v).to_bits(),
    }
}

/// Each fast path of formula `K` on this CPU (AVX2 with the first of `bounds`, AVX-512
/// with the second) on the lanes of `x`: its name, how many lanes it covered, its worst
/// relative error against the precise values there (infinite for a nonzero value where
/// the precise one is 0), and its bound.
fn fast_errors<K: super::Vectorized<N>, const N: usize>(
    x: [&[f32]; N],
    (avx2_bound, avx512_bound): (f64, f64),
) -> Vec<(&'static str, usize, f64, f64)> {
    let isas = Isa::available();
    let mut paths = Vec::new();
    if isas.contains(&Isa::Avx2) {
        // SAFETY: AVX2 and FMA are available (checked above).
        let fast = unsafe { fast4::fast_values_avx2::<K, N>(x) };
        paths.push(("avx2", fast, avx2_bound));
    }
    if isas.contains(&Isa::Avx512) {
        // SAFETY: AVX-512F is available (checked above).
        let fast = unsafe { fast::fast_values_avx512::<K, N>(x) };
        paths.push(("avx512", fast, avx512_bound));
    }
    let errors = paths.into_iter().map(|(name, fast, bound)| {
        let mut worst = 0.0f64;
        let mut covered = 0;
        for (i, fast) in fast.iter().enumerate() {
            let Some(fast) = fast else { continue };
            covered += 1;
            let precise = K::precise(std::array::from_fn(|k| f64::from(x[k][i])));
            let error = if precise != 0.0 {
                ((fast - precise) / precise).abs()
            } else if *fast != 0.0 {
                f64::INFINITY
            } else {
                0.0
            };
            worst = worst.max(error);
        }
        (name, covered, worst, bound)
    });
    errors.collect()
}

/// The stated error bounds of the fast products (AVX-512 and AVX2) on covered lanes,
/// measured against the precise product on inputs dense near the window's border, where
/// they are largest, and over the whole covered range.
#[test]
fn fast_product_within_its_error_bounds() {
    let mut s = 0xfeed_f00d_dead_beefu64;
    let n = 1 << 18;
    let (mut g, mut x) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for i in 0..n {
        let r = next(&mut s);
        let u = (r >> 40) as f32 / (1u64 << 24) as f32;
        g.push(1.0 + u);
        // partly inside the window, to check that the coverage keeps those lanes out
        let border = FAST_WINDOW as f32 * (0.25 + 8.0 * u);
        x.push(match i % 4 {
            0 => R_HI as f32 + border,
            1 => R_HI as f32 - border,
            2 => -40.0 + 70.0 * u,
            _ => -151.0 + 299.0 * u,
        });
    }
    let bounds = (fast4::DMISH_ERROR_BOUND, fast::DMISH_ERROR_BOUND);
    for (name, covered, worst, bound) in fast_errors::<MishGrad, 2>([&g, &x], bounds) {
        assert!(covered > n / 2, "{name}: {covered} of {n} lanes covered");
        assert!(worst < bound, "{name}: worst relative error {worst:e}");
        // the bound is not vacuous: the window border costs accuracy
        assert!(worst > 1e-16, "{name}: worst relative error {worst:e}");
    }
}

/// The rounding test of the fast path is sound on each grid (f32, f16, bf16): every
/// value within 2^−38 of a passing `y` rounds to the same value of the format as `y`
/// (checked at midpoints of the normal and the subnormal range nudged by up to
/// ±2^−34, and at random values); and it is not vacuous: zeros and infinities pass,
/// and nearly all random values in the normal range.
#[test]
fn rounding_test_is_sound() {
    let isas = Isa::available();
    /// A binary floating format of `fraction` stored fraction bits and `exponent` exponent
    /// bits, its grid, and the 16-bit format of the scalar code that rounds to it (`None`:
    /// f32, rounded by the `as` cast).
    struct Format {
        name: &'static str,
        grid: fast::Grid,
        narrow: Option<Narrow>,
        fraction: u32,
        exponent: u32,
    }
    impl Format {
        fn new(
            name: &'static str,
            grid: fast::Grid,
            narrow: Option<Narrow>,
            bits: (u32, u32),
        ) -> Self {
            let (fraction, exponent) = bits;
            Format {
                name,
                grid,
                narrow,
                fraction,
                exponent,
            }
        }
        fn bias(&self) -> i32 {
            (1 << (self.exponent - 1)) - 1
        }
        /// `v` rounded once, to nearest even, by the scalar code (not the vector code under
        /// test), as an encoding.
        fn round(&self, v: f64) -> u64 {
            match self.narrow {
                Some(to) => round16(to, v),
                None => u64::from((v as f32).to_bits()),
            }
        }
        /// The value of the non-negative finite encoding `b`.
        fn value(&self, b: u64) -> f64 {
            let (field, frac) = (b >> self.fraction, b & ((1 << self.fraction) - 1));
            let (scale, significand) = match field {
                0 => (1 - self.bias(), frac),
                _ => (field as i32 - self.bias(), frac | 1 << self.fraction),
            };
            significand as f64 * 2f64.powi(scale - self.fraction as i32)
        }
        /// The encoding of the largest finite value.
        fn max_bits(&self) -> u64 {
            ((1 << self.exponent) - 2) << self.fraction | ((1 << self.fraction) - 1)
        }
        /// The f64 exponent fields of the smallest normal and of the largest values.
        fn fields(&self) -> (u64, u64) {
            let bias = self.bias() as u64;
            (1023 - (bias - 1), 1023 + bias)
        }
    }
    let formats = [
        Format::new("f32", fast::F32_GRID, None, (23, 8)),
        Format::new("f16", fast::F16_GRID, Some(Narrow::F16), (10, 5)),
        Format::new("bf16", fast::BF16_GRID, Some(Narrow::Bf16), (7, 8)),
    ];
    // The derived facts are those of the types.
    assert_eq!(formats[0].max_bits(), u64::from(f32::MAX.to_bits()));
    assert_eq!(formats[1].max_bits(), u64::from(half::f16::MAX.to_bits()));
    assert_eq!(formats[2].max_bits(), u64::from(half::bf16::MAX.to_bits()));
    assert_eq!(formats[1].value(1), f64::from(half::f16::from_bits(1)));
    assert_eq!(
        formats[2].value(0x3f81),
        f64::from(half::bf16::from_bits(0x3f81))
    );
    let mut s = 0x0dd_ba11_cafe_f00du64;
    for f in &formats {
        let mut y = vec![0.0, -0.0, f64::INFINITY, -f64::INFINITY];
        let specials = y.len();
        while y.len() < 1 << 17 {
            let r = next(&mut s);
            let sign = if r & 1 == 0 { 1.0 } else { -1.0 };
            // a finite value of the format from the subnormals up, the midpoint to the
            // next one, nudged
            let b = (r >> 8) % f.max_bits();
            let mid = (f.value(b) + f.value(b + 1)) / 2.0;
            let nudge = ((r >> 40) as f64 / (1u64 << 24) as f64 - 0.5) * 2f64.powi(-33);
            y.push(sign * mid * (1.0 + nudge));
            // a random value in the normal range
            let (lo, hi) = f.fields();
            let field = lo + (r >> 20) % (hi - lo);
            y.push(sign * f64::from_bits(field << 52 | (r >> 12) & ((1 << 52) - 1)));
        }
        y.truncate(y.len() / 8 * 8);
        let mut tests: Vec<(&str, Vec<bool>)> = Vec::new();
        if isas.contains(&Isa::Avx2) {
            // SAFETY: AVX2 and FMA are available (checked above).
            tests.push(("avx2", unsafe { fast4::rounding_ok_avx2(&y, f.grid) }));
        }
        if isas.contains(&Isa::Avx512) {
            // SAFETY: AVX-512F is available (checked above).
            tests.push(("avx512", unsafe { fast::rounding_ok_avx512(&y, f.grid) }));
        }
        for (isa, ok) in tests {
            let eps = 2f64.powi(-38) * (1.0 - 2f64.powi(-10));
            for (&y, &ok) in y.iter().zip(&ok) {
                if ok && y.is_finite() {
                    for end in [y * (1.0 - eps), y * (1.0 + eps)] {
                        let (a, b) = (f.round(end), f.round(y));
                        assert_eq!(a, b, "{isa} {} y = {y:e} passed", f.name);
                    }
                }
            }
            assert!(
                ok[..specials].iter().all(|&ok| ok),
                "{isa} {}: zeros and infinities",
                f.name
            );
            let random: Vec<bool> = ok[specials..].iter().skip(1).step_by(2).copied().collect();
            let passed = random.iter().filter(|&&ok| ok).count();
            assert!(
                passed * 100 > random.len() * 99,
                "{isa} {}: {passed} of {}",
                f.name,
                random.len()
            );
        }
    }
}

/// `mish` on every instruction set against the scalar code, bitwise (NaN payloads too),
/// over the inputs above and tails of every length.
#[test]
fn mish_all_isas_bitwise_identical() {
    let (g, x) = inputs();
    let x: Vec<f32> = g.iter().chain(&x).copied().collect();
    let n = x.len();
    assert_isas_bitwise_identical::<Mish, 1>([&x], [n, n - 5, 9, 3]);
}

/// The fast AVX-512 `mish` (rounding test, lockstep loop, tails) against the scalar
/// precise path on 1M inputs aimed at its edges: both ends of the covered range, results
/// in the f32 subnormal range, tiny and zero inputs, any bit pattern.
#[test]
fn mish_fast_path_matches_precise_path() {
    let mut s = 0x7777_1234_abcd_0001u64;
    let n = 1 << 20;
    let x: Vec<f32> = (0..n)
        .map(|i| {
            let r = next(&mut s);
            let u = (r >> 40) as f32 / (1u64 << 24) as f32 - 0.5;
            match (r >> 32) % 7 {
                _ if i % 97 == 0 => 0.0,
                0 => u * 40.0,
                1 => 150.0 * (1.0 + u * 1e-5),
                2 => -150.0 * (1.0 + u * 1e-5),
                3 => -95.0 + u * 20.0,
                4 => f32::from_bits((r >> 32) as u32),
                5 => u * 1e-37,
                _ => u * 400.0,
            }
        })
        .collect();
    assert_isas_round_like_scalar::<Mish, 1>([&x]);
}

/// `mish`'s values for 16-bit results (fast where the rounding test on the f16 or bf16
/// grid allows it) round like the scalar precise ones, for every value of the format.
#[test]
fn mish_narrowable_values_round_like_precise_ones() {
    for to in [Narrow::F16, Narrow::Bf16] {
        let x: Vec<f32> = (0..=u16::MAX).map(|b| to.value(b)).collect();
        assert_isas_narrow_like_scalar::<Mish, 1>(to, [&x]);
    }
}

/// The stated error bounds of the fast `mish` (AVX-512 and AVX2) on covered lanes,
/// measured against the precise values over the whole covered range and near zero.
#[test]
fn fast_mish_within_its_error_bounds() {
    let mut s = 0xabad_cafe_f00d_0001u64;
    let n = 1 << 18;
    let x: Vec<f32> = (0..n)
        .map(|i| {
            let u = (next(&mut s) >> 40) as f32 / (1u64 << 24) as f32 - 0.5;
            match i % 3 {
                0 => u * 299.0,
                1 => u * 8.0,
                _ => u * 1e-3,
            }
        })
        .collect();
    let bounds = (fast4::MISH_ERROR_BOUND, fast::MISH_ERROR_BOUND);
    for (name, covered, worst, bound) in fast_errors::<Mish, 1>([&x], bounds) {
        assert!(
            covered > n * 9 / 10,
            "{name}: {covered} of {n} lanes covered"
        );
        assert!(worst < bound, "{name}: worst relative error {worst:e}");
        assert!(worst > 1e-16, "{name}: worst relative error {worst:e}");
    }
}
