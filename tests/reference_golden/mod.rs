//! The high-precision golden of the reference's accuracy tests (astro-float, 256 bits) and
//! roundings of f64 to f32, f16 and bf16 that rely on no library conversion.
#![allow(dead_code)] // each accuracy test binary uses part of it

use astro_float::{BigFloat, Consts, RoundingMode, Sign};
use half::{bf16, f16};

pub const PREC: usize = 256;
pub const RM: RoundingMode = RoundingMode::ToEven;

/// Exact-ish `mish'(x)` for finite |x| ≤ 1000, 256-bit.
pub fn golden_dmish(x: f64, cc: &mut Consts) -> BigFloat {
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

/// Exact-ish `mish(x) = x·e(e + 2)/(e² + 2e + 2)` (`= x·tanh(ln(1 + e))`, `e = exp(x)`)
/// for finite |x| ≤ 1000, 256-bit.
pub fn golden_mish(x: f64, cc: &mut Consts) -> BigFloat {
    let bx = BigFloat::from_f64(x, PREC);
    let e = bx.exp(PREC, RM, cc);
    let e_plus_2 = e.add(&BigFloat::from_f64(2.0, PREC), PREC, RM);
    let num = e.mul(&e_plus_2, PREC, RM);
    let den = num.add(&BigFloat::from_f64(2.0, PREC), PREC, RM);
    bx.mul(&num, PREC, RM).div(&den, PREC, RM)
}

/// `x·tanh(ln(1 + exp(x)))` by astro-float's own functions at 512 bits, for |x| ≤ 40 (an
/// independent check of [`golden_mish`]'s algebra; `1 + exp(x)` keeps `exp(x)` there).
pub fn golden_mish_by_tanh(x: f64, cc: &mut Consts) -> BigFloat {
    let p = 2 * PREC;
    let bx = BigFloat::from_f64(x, p);
    let one = BigFloat::from_f64(1.0, p);
    let softplus = one.add(&bx.exp(p, RM, cc), p, RM).ln(p, RM, cc);
    bx.mul(&softplus.tanh(p, RM, cc), p, RM)
}

/// Rounds a nonzero finite BigFloat to f64 with round-to-odd (so that one more RNE
/// rounding to ≤ 51 bits is the correct RNE rounding of the BigFloat); tiny values
/// (below 2^−200, which round to zero in every target type) become a signed zero.
pub fn to_f64_odd(b: &BigFloat) -> f64 {
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
pub struct Golden {
    pub cc: Consts,
}

/// mish'(x) as the golden sees it.
#[derive(Clone)]
pub enum M {
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
    pub fn new() -> Self {
        Golden {
            cc: Consts::new().unwrap(),
        }
    }

    pub fn m(&mut self, x: f64) -> M {
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

    /// `mish(x)` rounded once by `round` (an RNE rounding f64 → T, returned as f64):
    /// `x` itself at ±0, beyond 1000 (it differs from it by a relative 2e^−2x) and at ±∞ and NaN
    /// but −0 at −∞, a signed zero below −1000 (|mish| < e^−990 there).
    pub fn mish(&mut self, x: f64, round: fn(f64) -> f64) -> f64 {
        if x.is_nan() || x == 0.0 || x > 1000.0 {
            x
        } else if x < -1000.0 {
            -0.0
        } else {
            round(to_f64_odd(&golden_mish(x, &mut self.cc)))
        }
    }

    /// `grad·m` rounded once by `round` (an RNE rounding f64 → P, returned as f64).
    pub fn product(&self, g: f64, m: &M, round: fn(f64) -> f64) -> f64 {
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

pub fn r32(v: f64) -> f64 {
    f64::from(v as f32)
}
/// Round-to-nearest-even of an f64 to a 16-bit format, independent of any library
/// conversion (half's `from_f64` goes through f32 and rounds twice): a binary search for
/// the largest finite value at or below `|v|`, then a comparison with the midpoint to the
/// next one (exact in f64). `inf_bits` are the bits of +∞, `beyond_max` the value that
/// follows the largest finite one (its midpoint with it is the overflow threshold).
pub fn round_to_16(v: f64, value: fn(u16) -> f64, inf_bits: u16, beyond_max: f64) -> f64 {
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
pub fn r16(v: f64) -> f64 {
    round_to_16(v, |b| f16::from_bits(b).to_f64(), 0x7c00, 65536.0)
}
pub fn rb16(v: f64) -> f64 {
    round_to_16(v, |b| bf16::from_bits(b).to_f64(), 0x7f80, 2f64.powi(128))
}

/// Distance in ulps of two f32 (0 for +0/−0, u64::MAX when one is NaN and the other not).
pub fn ulps(a: f32, b: f32) -> u64 {
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

pub fn same(a: f64, b: f64) -> bool {
    (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits()
}

#[derive(Default, Debug)]
pub struct Stats {
    pub cases: u64,
    pub correct: u64,
    pub max_ulps: u64,
}

impl Stats {
    pub fn fraction(&self) -> f64 {
        self.correct as f64 / self.cases as f64
    }
}

/// xorshift64* for reproducible inputs.
pub struct Rng(pub u64);
impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    pub fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    /// A finite f32 with random sign and exponent (log-uniform magnitude).
    pub fn finite_f32(&mut self) -> f32 {
        loop {
            let v = f32::from_bits(self.next() as u32);
            if v.is_finite() {
                return v;
            }
        }
    }
}
