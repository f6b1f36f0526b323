//! The numeric core of the reference: `grad · mish'(x)` evaluated in f64 for f32-exact
//! inputs, with a scalar implementation and AVX2+FMA / AVX-512F implementations that give
//! bitwise identical results (same operations in the same order, FMA everywhere the
//! vector code fuses).
//!
//! # The formula
//!
//! With `e = exp(x)`, `mish'(x) = e·ω / δ²`, `ω = 4(x+1) + (4x+6)·e + 4e² + e³`,
//! `δ = e² + 2e + 2`. Evaluated in two forms that never overflow:
//!
//! - `x < 0`, `v = exp(x)`:  `v·(((v + 4)·v + (4x+6))·v + 4(x+1)) / ((v + 2)·v + 2)²`
//! - `x ≥ 0`, `v = exp(-x)`: `(((4(x+1)·v + (4x+6))·v + 4)·v + 1) / ((2v + 2)·v + 1)²`
//!
//! Both share `v = exp(-|x|)`, computed by an own f64 exp (Cody–Waite reduction with FMA,
//! degree-13 Taylor polynomial, ≲ 2 ulp) so that the scalar and vector paths agree bit for
//! bit. The argument is clamped at −708 (so `v` stays normal): for `x < −708` the clamped
//! value is still a negative number below 1e−260, which times any gradient of the three
//! element types rounds to the same signed zero (or signed infinity for an infinite
//! gradient) as the exact value; for `x > 708` it is 1, as the exact value rounds.
//!
//! Near the root `r ≈ −1.1924` of `mish'` the terms of `ω` cancel; for `|x − r| < 1/16`
//! a degree-12 Taylor expansion (vectorized too) around `r`, with `x − r` computed from
//! a double-double `r` (exact subtraction of the high part by Sterbenz' lemma).
//!
//! # Fast path (AVX-512F)
//!
//! For f32 results the AVX-512F kernel first evaluates a cheaper product: one formula for
//! all `x`, `exp` from a 16-entry table of `2^(j/16)` and a degree-5 polynomial, a
//! division for one vector in four and `rcp14` with one Newton step for the others, 8
//! vectors of 8 lanes in lockstep so that both FMA ports stay busy. Its relative error is
//! below 1.52e−12 for `x` outside a window of ±1/1024 around the root and less than 150
//! from it (measured worst: see the tests). When the low bits of the f64 result are far
//! enough from an f32 rounding boundary (a Ziv-style rounding test), its rounding is the
//! one of the precise product too, so the result is bitwise the one of the precise path
//! above. A vector with a lane outside that range, a non-finite `x`, an f32 subnormal
//! result or a value too close to a rounding boundary (≈ 2^−13 of random lanes) is
//! recomputed by the precise path. The f16 and bf16 compute types take the same fast
//! products, tested against the rounding boundaries of their own formats.

use ndarray::{ArrayView2, ArrayViewMut2};

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
const ROOT_TAYLOR: [f64; 12] = [
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

/// Whether `x` is inside the window around the root that uses the Taylor expansion.
#[inline]
pub(crate) fn in_root_window(x: f64) -> bool {
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

/// `exp(a)` for `a ∈ [−708, 0]`, the exact operation sequence of the vector code.
#[inline]
fn exp_reduced(a: f64) -> f64 {
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

/// `mish'(x)` by the direct formula for finite `x`, bitwise equal to the vector code.
#[inline]
pub(crate) fn fast_dmish(x: f64) -> f64 {
    let a = (-x.abs()).max(EXP_MIN_ARG);
    let v = exp_reduced(a);
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

/// `mish(x) = x·tanh(softplus(x))` for any f64 holding an f32 value, in the two forms that
/// never overflow: `x·v(v + 2) / ((v + 2)v + 2)` with `v = exp(x)` for `x < 0`, and
/// `x·(2v + 1) / ((2v + 2)v + 1)` with `v = exp(−x)` for `x ≥ 0`. Every term is positive,
/// so nothing cancels: the relative error is that of `exp` plus a few roundings.
/// `mish(−∞) = −0` (the sign of the limit), `mish(+∞) = +∞`, NaN propagates.
#[inline]
pub(crate) fn mish(x: f64) -> f64 {
    if !x.is_finite() {
        return if x == f64::NEG_INFINITY { -0.0 } else { x };
    }
    let v = exp_reduced((-x.abs()).max(EXP_MIN_ARG));
    if x < 0.0 {
        x * (v * (v + 2.0)) / ((v + 2.0).mul_add(v, 2.0))
    } else {
        x * 2.0f64.mul_add(v, 1.0) / 2.0f64.mul_add(v, 2.0).mul_add(v, 1.0)
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
        fast_dmish(x)
    }
}

/// The f64 product `grad · mish'(x)` (before the single rounding to the compute dtype).
#[inline]
pub(crate) fn product(grad: f32, x: f32) -> f64 {
    f64::from(grad) * dmish(f64::from(x))
}

/// Instruction set used by the vector kernels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Isa {
    Scalar,
    #[cfg(target_arch = "x86_64")]
    Avx2,
    #[cfg(target_arch = "x86_64")]
    Avx512,
}

impl Isa {
    /// The best instruction set of this CPU (cached by std's feature detection).
    #[inline]
    pub(crate) fn detect() -> Isa {
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx512f")
                && std::arch::is_x86_feature_detected!("f16c")
            {
                return Isa::Avx512;
            }
            if std::arch::is_x86_feature_detected!("avx2")
                && std::arch::is_x86_feature_detected!("fma")
            {
                return Isa::Avx2;
            }
        }
        Isa::Scalar
    }

    /// All instruction sets this CPU can run (for tests comparing them).
    #[cfg(test)]
    pub(crate) fn available() -> Vec<Isa> {
        let mut v = vec![Isa::Scalar];
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx2")
                && std::arch::is_x86_feature_detected!("fma")
            {
                v.push(Isa::Avx2);
            }
            if std::arch::is_x86_feature_detected!("avx512f")
                && std::arch::is_x86_feature_detected!("f16c")
            {
                v.push(Isa::Avx512);
            }
        }
        v
    }

    /// Human-readable name.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Isa::Scalar => "scalar",
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 => "avx2+fma",
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512 => "avx512f",
        }
    }
}

/// `out[i] = f32(grad[i] · mish'(x[i]))` with one rounding from the f64 product.
/// All three slices must have the same length.
pub(crate) fn rounded_f32(isa: Isa, grad: &[f32], x: &[f32], out: &mut [f32]) {
    assert!(grad.len() == out.len() && x.len() == out.len());
    match isa {
        Isa::Scalar => {
            for ((o, &g), &x) in out.iter_mut().zip(grad).zip(x) {
                *o = product(g, x) as f32;
            }
        }
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `Isa::Avx2` is only produced when avx2 and fma were detected.
        Isa::Avx2 => unsafe { x86::rounded_f32_avx2(grad, x, out) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `Isa::Avx512` is only produced when avx512f was detected.
        Isa::Avx512 => unsafe { x86::rounded_f32_avx512(grad, x, out) },
    }
}

/// `out[i] = grad[i] · mish'(x[i])` as f64 products (for the f16/bf16 compute dtypes).
/// All three slices must have the same length.
pub(crate) fn products_f64(isa: Isa, grad: &[f32], x: &[f32], out: &mut [f64]) {
    assert!(grad.len() == out.len() && x.len() == out.len());
    match isa {
        Isa::Scalar => {
            for ((o, &g), &x) in out.iter_mut().zip(grad).zip(x) {
                *o = product(g, x);
            }
        }
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `Isa::Avx2` is only produced when avx2 and fma were detected.
        Isa::Avx2 => unsafe { x86::products_f64_avx2(grad, x, out) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `Isa::Avx512` is only produced when avx512f was detected.
        Isa::Avx512 => unsafe { x86::products_f64_avx512(grad, x, out) },
    }
}

/// f64 products `grad[i] · mish'(x[i])` whose rounding (once, to nearest even) to `to`
/// is that of the exact products: the precise products, or on AVX-512 the fast ones where
/// a rounding test on the 16-bit grid shows they round the same. All three slices must
/// have the same length.
pub(crate) fn products_narrowable(isa: Isa, to: Narrow, grad: &[f32], x: &[f32], out: &mut [f64]) {
    assert!(grad.len() == out.len() && x.len() == out.len());
    #[cfg(target_arch = "x86_64")]
    if isa == Isa::Avx512 {
        // SAFETY: `Isa::Avx512` is only produced when avx512f was detected.
        return unsafe { x86::products_narrowable_avx512(to, grad, x, out) };
    }
    products_f64(isa, grad, x, out);
}

/// The 16-bit compute types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Narrow {
    F16,
    Bf16,
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

/// Copies the f32 view `v` into `dst` (its length) in row-major order with AVX-512
/// gathers along each row, for a view whose rows are strided (a transposed input).
/// Returns `false`, copying nothing, when the ISA or the strides do not allow it.
pub(crate) fn gather_rows_f32(isa: Isa, v: ArrayView2<'_, f32>, dst: &mut [f32]) -> bool {
    let (rows, cols) = v.dim();
    assert_eq!(dst.len(), rows * cols);
    if dst.is_empty() {
        return true;
    }
    #[cfg(target_arch = "x86_64")]
    if isa == Isa::Avx512
        && let Some(lanes) = x86::lane_offsets(v.strides()[1])
    {
        // SAFETY: AVX-512F was detected; ndarray guarantees that every (r, c) with
        // r < rows, c < cols addresses an element of `v`, and `lanes` are 16 multiples of
        // the column stride that fit in i32.
        unsafe { x86::gather_rows_avx512(v.as_ptr(), v.strides()[0], lanes, rows, cols, dst) };
        return true;
    }
    let _ = isa;
    false
}

/// Copies the row-major `src` (its length) into the f32 view `o`, 16 rows of a column at
/// a time with AVX-512 gathers from `src`, for a view whose columns are the shorter walk
/// in memory (a transposed output). Returns `false`, copying nothing, when the ISA or the
/// strides do not allow it.
pub(crate) fn scatter_columns_f32(isa: Isa, src: &[f32], mut o: ArrayViewMut2<'_, f32>) -> bool {
    let (rows, cols) = o.dim();
    assert_eq!(src.len(), rows * cols);
    #[cfg(target_arch = "x86_64")]
    if isa == Isa::Avx512
        && let (Some(from), Some(to)) = (
            x86::lane_offsets(cols as isize),
            x86::lane_offsets(o.strides()[0]),
        )
    {
        let (row_stride, col_stride) = (o.strides()[0], o.strides()[1]);
        // SAFETY: AVX-512F was detected; ndarray guarantees that every (r, c) with
        // r < rows, c < cols addresses an element of `o`, which is borrowed mutably;
        // `from` and `to` are 16 multiples of `cols` and of the row stride that fit in i32.
        unsafe {
            x86::scatter_columns_avx512(
                src,
                from,
                o.as_mut_ptr(),
                row_stride,
                col_stride,
                to,
                (rows, cols),
            )
        };
        return true;
    }
    let _ = (isa, &mut o);
    false
}

fn narrow16_scalar(to: Narrow, src: &[f64], out: &mut [u16]) {
    for (o, &v) in out.iter_mut().zip(src) {
        *o = match to {
            Narrow::F16 => <half::f16 as crate::Element>::from_f64(v).to_bits(),
            Narrow::Bf16 => <half::bf16 as crate::Element>::from_f64(v).to_bits(),
        };
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    //! AVX2+FMA (4 f64 lanes) and AVX-512F (8 f64 lanes) versions of
    //! [`super::dmish`]: the direct formula in all lanes, the root Taylor expansion blended
    //! in when a lane is in the root window, and non-finite lanes recomputed with
    //! [`super::nonfinite_dmish`]; the fast f32 path of AVX-512F; and the AVX-512F
    //! gathers that copy strided f32 tiles.
    //!
    //! The precise path is written once, in the macro `precise!`, against a table of
    //! vector operations that [`avx512`] and [`avx2`] each fill with their intrinsics
    //! (`ops!`). A macro rather than a function generic over the table: each instance
    //! carries the `#[target_feature]` of the operations it calls, so they inline into it
    //! as intrinsics written out by hand do; one generic function could not carry the
    //! attribute for both and would rely on being inlined itself first.

    use super::{
        EXP_MIN_ARG, EXP_TAYLOR, LN2_HI, LN2_LO, LOG2E, R_HI, R_LO, ROOT_TAYLOR, ROOT_WINDOW,
        SHIFTER, nonfinite_dmish,
    };
    use std::arch::x86_64::*;
    use std::array::from_fn;

    /// An instruction set's table of the operations `precise!` uses, each function made
    /// `#[inline]`, compiled with `$feature` and visible to this module. Besides the types
    /// `F` (a vector of `LANES` f64) and `M` (a lane mask), a table defines:
    ///
    /// - `splat`, `zero`, `sub`, `mul`, `div`, `fmadd` (`a·b + c`, one rounding), `abs`,
    ///   and `min`, `max` as x86 defines them (`a < b ? a : b`, `a > b ? a : b`: `b` if
    ///   either is NaN);
    /// - `pow2_from_shifted(t)`: `2^k` for `t = SHIFTER + k`, whose low mantissa bits hold
    ///   `k`, by adding the exponent bias and shifting it into the exponent field;
    /// - `lt(a, b)` (ordered, false for NaN), `blend(m, a, b)` (`b` in the lanes of `m`,
    ///   `a` elsewhere), `any(m)`, `bits(m)` (lane `i` in bit `i`);
    /// - `load` (`LANES` f32 widened), `load_f64`, `store` (`LANES` f64) and the
    ///   store functions named in `precise!`, all from or to the start of a slice that
    ///   they check is long enough.
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
                pub(super) fn $name($($arg: $ty),*) $(-> $ret)? $body
            )*
        };
    }

    /// The precise path over the table `$ops`, compiled with `$feature`: `$product` of one
    /// vector, its cold `$patch`, and for each entry `name: element => store` a kernel
    /// over slices that writes the products through `store` into an `element` slice.
    ///
    /// The functions are generated here rather than in the table's module, beside the
    /// fast path that calls `product8` too: rustc splits codegen units by module, and
    /// within one unit LLVM passes the vectors to the cold patch in registers. Passed
    /// through memory, they changed the register allocation of the loops.
    macro_rules! precise {
        (
            ops: $ops:ident, feature: $feature:literal, product: $product:ident,
            patch: $patch:ident;
            $($(#[$doc:meta])* $name:ident: $out:ty => $store:ident;)+
        ) => {
            /// Products `g · mish'(x)` of one vector.
            #[inline]
            #[target_feature(enable = $feature)]
            fn $product(g: $ops::F, x: $ops::F) -> $ops::F {
                use $ops::*;
                let finite = lt(abs(x), splat(f64::INFINITY));
                let dhi = sub(x, splat(R_HI));
                let window = lt(abs(dhi), splat(ROOT_WINDOW));

                // v = exp(max(-|x|, -708))
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
                let v = mul(p, pow2_from_shifted(t));

                let four_x1 = fmadd(splat(4.0), x, splat(4.0));
                let four_x6 = fmadd(splat(4.0), x, splat(6.0));
                // The coefficients of the x < 0 form where `neg` is set, of the x ≥ 0 form
                // elsewhere (see the module docs of `kernel`).
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
                        pa[lane] = ga[lane] * nonfinite_dmish(xa[lane]);
                    }
                }
                load_f64(&pa)
            }

            $(
                $(#[$doc])*
                ///
                /// # Safety
                #[doc = concat!("The CPU must support `", $feature, "`; slices of equal length.")]
                #[target_feature(enable = $feature)]
                pub(super) unsafe fn $name(grad: &[f32], x: &[f32], out: &mut [$out]) {
                    use $ops::*;
                    let n = out.len();
                    let body = n - n % LANES;
                    for ((o, g), x) in out[..body]
                        .chunks_exact_mut(LANES)
                        .zip(grad[..body].chunks_exact(LANES))
                        .zip(x[..body].chunks_exact(LANES))
                    {
                        $store(o, $product(load(g), load(x)));
                    }
                    if body < n {
                        let (mut gt, mut xt) = ([0.0f32; LANES], [0.0f32; LANES]);
                        let mut ot: [$out; LANES] = [0.0; LANES];
                        gt[..n - body].copy_from_slice(&grad[body..]);
                        xt[..n - body].copy_from_slice(&x[body..]);
                        $store(&mut ot, $product(load(&gt), load(&xt)));
                        out[body..].copy_from_slice(&ot[..n - body]);
                    }
                }
            )+
        };
    }

    // ---------------------------------------------------------------- AVX-512F

    /// The operations of the precise path on AVX-512F: 8 lanes, masks in mask registers.
    mod avx512 {
        use super::*;

        pub(super) type F = __m512d;
        pub(super) type M = __mmask8;
        pub(super) const LANES: usize = 8;

        ops! { "avx512f";
            fn splat(v: f64) -> F { _mm512_set1_pd(v) }
            fn zero() -> F { _mm512_setzero_pd() }
            fn sub(a: F, b: F) -> F { _mm512_sub_pd(a, b) }
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
        }
    }

    precise! {
        ops: avx512, feature: "avx512f", product: product8, patch: patch8;
        /// See [`super::products_f64`].
        products_f64_avx512: f64 => store;
    }

    // ------------------------------------------------------- AVX-512F fast path

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

    /// Lanes at this distance from the root or farther are left to the precise path: below
    /// it (x < 148.8) `g·e·q` and `d²` stay finite for every finite f32 `g`, and above
    /// −151.2 `exp` is far from underflow, so no clamp is needed.
    const FAST_FROM_ROOT_MAX: f32 = 150.0;

    /// Half width of the window around the root of `mish'` that [`rounded_fast`] leaves to
    /// the precise path (its Taylor expansion). Outside it the sensitivity of the formula
    /// to a relative error of `exp` is at most 191.7 and the summed sensitivities to the
    /// numerator's roundings at most 2380 (mpmath at 200 bits over the covered range, at
    /// distances from the root down to 1/1024 − 4e−8, the slack of the f32 check; see
    /// `scripts/fast-path-constants.py`).
    const FAST_ROOT_WINDOW: f64 = 1.0 / 1024.0;

    /// One vector in this many takes a division in [`fast_product`]; the divider runs
    /// beside the FMA ports, but a division per vector would wait on it.
    const DIV_EVERY: usize = 4;

    /// The relative error bound of [`fast_product`] on covered lanes (see
    /// [`rounded_fast`]); with the precise product's 1e−15 it must stay below the
    /// rounding test's 2^−38.
    pub(super) const FAST_ERROR_BOUND: f64 = 1.52e-12;
    const _: () = assert!(FAST_ERROR_BOUND + 1e-15 < 1.0 / (1u64 << 38) as f64);

    /// Where a rounding of f64 values to a narrower format is safe to take from the fast
    /// product (see [`rounding_ok`]).
    #[derive(Clone, Copy)]
    pub(super) struct Grid {
        /// Added to an f64 encoding: moves the window of ±2^15 units around the midpoint
        /// of the low bits that the narrower format drops to 0..2^16, and takes one from
        /// the exponent field, so that zero wraps to the top of it.
        shift: i64,
        /// The dropped bits from bit 16 up: all zero after `shift` when the value is
        /// within 2^15 units of a midpoint.
        mask: i64,
        /// Twice the shifted encoding of the narrower format's smallest normal number: a
        /// shifted and doubled encoding below it (the sign shifted out) is subnormal there.
        normal_min_x2: i64,
    }

    impl Grid {
        /// The grid of a format that keeps `52 − dropped` fraction bits and whose
        /// smallest normal number has the f64 exponent field `min_normal_field`.
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

    /// The fast product `g·mish'(x)` of `U` vectors (see [`rounded_fast`]), every step on
    /// all vectors before the next so that the independent chains keep both FMA ports
    /// busy. Finite for covered lanes ([`covered16`]); other lanes are discarded.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn fast_product<O: FastOut, const U: usize>(g: [__m512d; U], x: [__m512d; U]) -> [__m512d; U] {
        let c = _mm512_set1_pd;
        // e = 2^(k/16)·exp(r), k = round(16·x/ln 2), |r| ≤ ln2/32. Adding SHIFTER/16 rounds
        // to a multiple of 1/16, so `kq` = k/16 exactly and the low 4 bits of `t` are
        // k mod 16: they pick 2^(j/16) from the table, `scalef` applies 2^floor(k/16).
        let t: [__m512d; U] = from_fn(|i| _mm512_fmadd_pd(x[i], c(LOG2E), c(SHIFTER / 16.0)));
        let kq: [__m512d; U] = from_fn(|i| _mm512_sub_pd(t[i], c(SHIFTER / 16.0)));
        // Without ln 2's low part: r is off by |kq|·2.3e−17, a relative error of e that
        // the error bound includes.
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
        let e: [__m512d; U] = from_fn(|i| {
            let two_j16 = _mm512_permutex2var_pd(table_lo, _mm512_castpd_si512(t[i]), table_hi);
            _mm512_scalef_pd(_mm512_mul_pd(p[i], two_j16), kq[i])
        });
        // With w = e + 1: d = w² + 1 and the numerator's factor is w·(w² + w + 1 + 4x) + 1.
        let w: [__m512d; U] = from_fn(|i| _mm512_add_pd(e[i], c(1.0)));
        let d: [__m512d; U] = from_fn(|i| _mm512_fmadd_pd(w[i], w[i], c(1.0)));
        let q: [__m512d; U] = from_fn(|i| {
            let inner = _mm512_fmadd_pd(x[i], c(4.0), _mm512_add_pd(d[i], w[i]));
            _mm512_fmadd_pd(w[i], inner, c(1.0))
        });
        from_fn(|i| {
            let numerator = _mm512_mul_pd(_mm512_mul_pd(g[i], e[i]), q[i]);
            let dd = _mm512_mul_pd(d[i], d[i]);
            if i % DIV_EVERY == 0 {
                _mm512_div_pd(numerator, dd)
            } else {
                // 1/dd: rcp14 (relative error ε ≤ 2^−14), then y0·(1 + ε + ε²) (error ε³)
                let y0 = _mm512_rcp14_pd(dd);
                let eps = _mm512_fnmadd_pd(dd, y0, c(1.0));
                let inv = _mm512_fmadd_pd(y0, _mm512_fmadd_pd(eps, eps, eps), y0);
                _mm512_mul_pd(numerator, inv)
            }
        })
    }

    /// `fast_product` over slices of equal length (multiples of 64), 8 vectors at a time
    /// as in the loop (so both the division and `rcp14` are taken), `None` for the lanes
    /// that [`covered16`] leaves to the precise path; for the error test.
    ///
    /// # Safety
    /// The CPU must support AVX-512F.
    #[cfg(test)]
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn fast_products_avx512(grad: &[f32], x: &[f32]) -> Vec<Option<f64>> {
        let mut out = Vec::with_capacity(grad.len());
        for (g, x) in grad.chunks_exact(64).zip(x.chunks_exact(64)) {
            let y = fast_product::<f64, 8>(
                from_fn(|i| avx512::load(&g[8 * i..])),
                from_fn(|i| avx512::load(&x[8 * i..])),
            );
            for (i, y) in y.into_iter().enumerate() {
                let mut lanes = [0.0f64; 8];
                avx512::store(&mut lanes, y);
                // SAFETY: `x` holds 64 f32; unaligned load of 8 from 8·i.
                let x8 = unsafe { _mm256_loadu_ps(x[8 * i..].as_ptr()) };
                let covered = covered16(_mm512_zextps256_ps512(x8), 0xff);
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

    /// The fast products `g · mish'(x)` of `U` vectors of 8 lanes, when every lane is
    /// covered and passes the rounding test on `grid`, so that each rounds to the format
    /// of `grid` as `product8(g, x)` does; `None` otherwise.
    ///
    /// **Fast product** ([`fast_product`]). `e = exp(x)` from a 16-entry table of
    /// `2^(j/16)` and a degree-5 polynomial on |r| ≤ ln2/32 (relative error 4.6e−15; its
    /// and the table's roundings below 6·2^−53; reducing by ln 2's high part only adds
    /// |k/16|·2.3e−17). With `w = e + 1`,
    /// `y = g·e·(w·(w² + w + 1 + 4x) + 1) / (w² + 1)²`, the last step a division or `rcp14`
    /// with one third-order Newton step (error below 2^−42). On covered lanes
    /// ([`covered16`]) its relative error is below 1.52e−12 < 2^−39.2: mpmath at 200 bits,
    /// first-order propagation of every rounding over the covered range
    /// (`scripts/fast-path-constants.py`); the window's border dominates, where the
    /// sensitivity to `exp`'s error is 191.7 and the summed sensitivities to the
    /// numerator's five roundings at most 2380. The precise product is within 1e−15 of
    /// the exact value.
    ///
    /// **Rounding test** ([`rounding_ok`]). The rounding boundaries of a normal result are
    /// where the bits that the format drops from the f64 encoding (the low 29 for f32, 42
    /// for f16, 45 for bf16) equal their midpoint. A lane passes when they are at least
    /// 2^15 units from it: that is at least 2^−38 of |y|, more than both error bounds
    /// together, so the exact value and the precise product round the same way as `y`
    /// (rounding is monotonic). Results subnormal in the format fail; a zero `y` (from a
    /// zero `g`) is exact and passes. `y` is NaN only for a NaN `g`, whose (quieted)
    /// payload every product passes on, as in the precise path. Lanes fail the test at a
    /// rate of about 2^−13 for random inputs.
    ///
    /// Generic over the output only so that each output's loop has instances of its own
    /// to inline (an instance with two callers was left out of line), as is
    /// [`fast_product`].
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn rounded_fast<O: FastOut, const U: usize>(
        g: [__m512d; U],
        x: [__m512d; U],
        x_covered: bool,
        grid: Grid,
    ) -> Option<[__m512d; U]> {
        let y = fast_product::<O, U>(g, x);
        let all_ok = y.iter().fold(0xff, |ok, &y| rounding_ok(y, ok, grid));
        (x_covered & (all_ok == 0xff)).then_some(y)
    }

    /// Lanes of `covered` where rounding `y` on `grid` is safe (see [`rounded_fast`]):
    /// after `grid.shift`, a doubled encoding (the sign shifted out) at least
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

    /// What the fast loop writes: f32 results, or f64 products for a rounding to a 16-bit
    /// type afterwards.
    trait FastOut: Copy + Default {
        /// Stores the 8 lanes of `y` (rounded to `Self`) to `out[..8]`.
        ///
        /// # Safety
        /// The CPU must support AVX-512F.
        unsafe fn put(out: &mut [Self], y: __m512d);
    }

    impl FastOut for f32 {
        #[inline]
        #[target_feature(enable = "avx512f")]
        unsafe fn put(out: &mut [f32], y: __m512d) {
            store8(out, _mm512_cvtpd_ps(y));
        }
    }

    impl FastOut for f64 {
        #[inline]
        #[target_feature(enable = "avx512f")]
        unsafe fn put(out: &mut [f64], y: __m512d) {
            avx512::store(out, y);
        }
    }

    /// [`rounded_fast`] one vector at a time, with the precise path for the vectors it
    /// rejects; slices of equal length, a multiple of 8. Out of line: it runs for about
    /// one block of 64 elements in 100, and the loop keeps its registers.
    #[cold]
    #[inline(never)]
    #[target_feature(enable = "avx512f")]
    fn rounded_checked<O: FastOut>(grad: &[f32], x: &[f32], out: &mut [O], grid: Grid) {
        for ((o, g), x) in out
            .chunks_exact_mut(8)
            .zip(grad.chunks_exact(8))
            .zip(x.chunks_exact(8))
        {
            let (gv, xv) = (avx512::load(g), avx512::load(x));
            // SAFETY: `x` holds 8 f32; unaligned load.
            let x8 = unsafe { _mm256_loadu_ps(x.as_ptr()) };
            let x_covered = covered16(_mm512_zextps256_ps512(x8), 0xff) == 0xff;
            let y = match rounded_fast::<O, 1>([gv], [xv], x_covered, grid) {
                Some([y]) => y,
                None => product8(gv, xv),
            };
            // SAFETY: AVX-512F is enabled here.
            unsafe { O::put(o, y) };
        }
    }

    /// Lanes of `lanes` where the error bound of [`rounded_fast`] covers `x`: at least
    /// [`FAST_ROOT_WINDOW`] and less than [`FAST_FROM_ROOT_MAX`] from the root. Checked in
    /// f32, 16 lanes at a time: `x − f32(r)` is exact near the root (Sterbenz), and
    /// `f32(r)` is within 4e−8 of `r`, so covered lanes are at least 1/1024 − 4e−8 from
    /// the root, where the bounds of [`FAST_ROOT_WINDOW`] were computed. `|x − r|` is NaN
    /// or ∞ exactly when `x` is, and fails both comparisons.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn covered16(x: __m512, lanes: __mmask16) -> __mmask16 {
        let c = _mm512_set1_ps;
        let from_root = _mm512_abs_ps(_mm512_sub_ps(x, c(R_HI as f32)));
        let outside =
            _mm512_mask_cmp_ps_mask::<_CMP_GE_OQ>(lanes, from_root, c(FAST_ROOT_WINDOW as f32));
        _mm512_mask_cmp_ps_mask::<_CMP_LT_OQ>(outside, from_root, c(FAST_FROM_ROOT_MAX))
    }

    /// Load of 16 f32 from `s[..16]`.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn load16(s: &[f32]) -> __m512 {
        assert!(s.len() >= 16);
        // SAFETY: `s` has at least 16 elements (checked above); unaligned load.
        unsafe { _mm512_loadu_ps(s.as_ptr()) }
    }

    /// Store of 8 f32 to `s[..8]`.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn store8(s: &mut [f32], v: __m256) {
        assert!(s.len() >= 8);
        // SAFETY: `s` has at least 8 elements (checked above); unaligned store.
        unsafe { _mm256_storeu_ps(s.as_mut_ptr(), v) }
    }

    /// See [`super::rounded_f32`].
    ///
    /// # Safety
    /// The CPU must support AVX-512F; slices of equal length.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn rounded_f32_avx512(grad: &[f32], x: &[f32], out: &mut [f32]) {
        fast_loop(grad, x, out, F32_GRID);
    }

    /// See [`super::products_narrowable`].
    ///
    /// # Safety
    /// The CPU must support AVX-512F; slices of equal length.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn products_narrowable_avx512(
        to: super::Narrow,
        grad: &[f32],
        x: &[f32],
        out: &mut [f64],
    ) {
        let grid = match to {
            super::Narrow::F16 => F16_GRID,
            super::Narrow::Bf16 => BF16_GRID,
        };
        fast_loop(grad, x, out, grid);
    }

    /// The fast path over slices of equal length: 8 vectors in lockstep, the blocks and
    /// the tail that [`rounded_fast`] rejects through [`rounded_checked`].
    #[target_feature(enable = "avx512f")]
    fn fast_loop<O: FastOut>(grad: &[f32], x: &[f32], out: &mut [O], grid: Grid) {
        const LOCKSTEP: usize = 8;
        const STEP: usize = 8 * LOCKSTEP;
        const {
            assert!(
                LOCKSTEP.is_multiple_of(2),
                "x is checked 16 lanes at a time"
            )
        };
        /// Elements ahead of the loop that the inputs are prefetched (4 KiB).
        const PREFETCH: usize = 1024;
        let n = out.len();
        let body = n - n % STEP;
        for ((o, g), x) in out[..body]
            .chunks_exact_mut(STEP)
            .zip(grad[..body].chunks_exact(STEP))
            .zip(x[..body].chunks_exact(STEP))
        {
            // The hardware prefetchers alone leave large inputs ~10% slower than cached
            // ones. A prefetch never faults, so addresses past the end are harmless.
            for line in (0..STEP).step_by(16) {
                _mm_prefetch::<_MM_HINT_T0>(g.as_ptr().wrapping_add(PREFETCH + line).cast());
                _mm_prefetch::<_MM_HINT_T0>(x.as_ptr().wrapping_add(PREFETCH + line).cast());
            }
            // the output's lines by bytes: 4 per step for f32, 8 for f64
            for line in (0..STEP * size_of::<O>()).step_by(64) {
                let ahead = PREFETCH * size_of::<O>() + line;
                _mm_prefetch::<_MM_HINT_ET0>(o.as_ptr().cast::<i8>().wrapping_add(ahead));
            }
            let gv: [__m512d; LOCKSTEP] = from_fn(|i| avx512::load(&g[8 * i..]));
            let xv: [__m512d; LOCKSTEP] = from_fn(|i| avx512::load(&x[8 * i..]));
            let x_covered = (0..LOCKSTEP / 2)
                .fold(0xffff, |lanes, i| covered16(load16(&x[16 * i..]), lanes))
                == 0xffff;
            match rounded_fast::<O, LOCKSTEP>(gv, xv, x_covered, grid) {
                Some(y) => {
                    for (i, y) in y.into_iter().enumerate() {
                        // SAFETY: AVX-512F is enabled here.
                        unsafe { O::put(&mut o[8 * i..], y) };
                    }
                }
                None => rounded_checked(g, x, o, grid),
            }
        }
        let tail = n - body;
        if tail > 0 {
            let (mut gt, mut xt, mut ot) = ([0.0f32; 8], [0.0f32; 8], [O::default(); 8]);
            for ((o, g), x) in out[body..]
                .chunks_mut(8)
                .zip(grad[body..].chunks(8))
                .zip(x[body..].chunks(8))
            {
                let len = o.len();
                gt[..len].copy_from_slice(g);
                xt[..len].copy_from_slice(x);
                rounded_checked(&gt, &xt, &mut ot, grid);
                o.copy_from_slice(&ot[..len]);
            }
        }
    }

    /// `[0, s, 2s, …, 15s]` as i32 lanes, when `15·s` fits in i32.
    pub(super) fn lane_offsets(s: isize) -> Option<[i32; 16]> {
        let s = i32::try_from(s).ok()?;
        s.checked_mul(15)?;
        Some(from_fn(|i| s * i as i32))
    }

    /// Mask of the first `k` lanes, all 16 when `k ≥ 16`.
    fn first_lanes(k: usize) -> __mmask16 {
        ((1u32 << k.min(16)) - 1) as __mmask16
    }

    /// See [`super::gather_rows_f32`].
    ///
    /// # Safety
    /// The CPU must support AVX-512F; `base + r·row_stride + lanes[1]·c` must address a
    /// readable f32 for every r < rows, c < cols (`lanes` from [`lane_offsets`]);
    /// `dst.len() == rows·cols`.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn gather_rows_avx512(
        base: *const f32,
        row_stride: isize,
        lanes: [i32; 16],
        rows: usize,
        cols: usize,
        dst: &mut [f32],
    ) {
        // SAFETY: 16 i32 in `lanes`; unaligned load.
        let offsets = unsafe { _mm512_loadu_si512(lanes.as_ptr().cast()) };
        let col_stride = lanes[1] as isize;
        for (r, row) in dst.chunks_exact_mut(cols).enumerate().take(rows) {
            for c0 in (0..cols).step_by(16) {
                let mask = first_lanes(cols - c0);
                // SAFETY: (r, c0) is an element of the view (the caller's contract), so
                // is every unmasked lane's (r, c0 + i); masked lanes are not read; `row`
                // has room for the unmasked lanes from c0.
                unsafe {
                    let start = base.offset(r as isize * row_stride + c0 as isize * col_stride);
                    let v =
                        _mm512_mask_i32gather_ps::<4>(_mm512_setzero_ps(), mask, offsets, start);
                    _mm512_mask_storeu_ps(row.as_mut_ptr().add(c0), mask, v);
                }
            }
        }
    }

    /// See [`super::scatter_columns_f32`].
    ///
    /// # Safety
    /// The CPU must support AVX-512F; `base + r·row_stride + c·col_stride` must address a
    /// writable f32, not aliased, for every r < rows, c < cols; `from` and `to` from
    /// [`lane_offsets`] of `cols` and `row_stride`; `src.len() == rows·cols`.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn scatter_columns_avx512(
        src: &[f32],
        from: [i32; 16],
        base: *mut f32,
        row_stride: isize,
        col_stride: isize,
        to: [i32; 16],
        (rows, cols): (usize, usize),
    ) {
        // SAFETY: 16 i32 in each array; unaligned loads.
        let (from, to) = unsafe {
            (
                _mm512_loadu_si512(from.as_ptr().cast()),
                _mm512_loadu_si512(to.as_ptr().cast()),
            )
        };
        for c in 0..cols {
            for r0 in (0..rows).step_by(16) {
                let mask = first_lanes(rows - r0);
                // SAFETY: unmasked lanes read src[(r0 + i)·cols + c] with r0 + i < rows
                // (in bounds: src holds rows·cols) and write element (r0 + i, c) of the
                // view (the caller's contract); masked lanes are not accessed.
                unsafe {
                    let column = src.as_ptr().add(r0 * cols + c);
                    let v = _mm512_mask_i32gather_ps::<4>(_mm512_setzero_ps(), mask, from, column);
                    let start = base.offset(r0 as isize * row_stride + c as isize * col_stride);
                    if row_stride == 1 {
                        _mm512_mask_storeu_ps(start, mask, v);
                    } else {
                        _mm512_mask_i32scatter_ps::<4>(start, mask, to, v);
                    }
                }
            }
        }
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
    pub(super) unsafe fn narrow16_avx512(to: super::Narrow, src: &[f64], out: &mut [u16]) {
        let body = src.len() - src.len() % 16;
        for (o, s) in out[..body]
            .chunks_exact_mut(16)
            .zip(src[..body].chunks_exact(16))
        {
            let odd = [
                to_f32_odd(avx512::load_f64(s)),
                to_f32_odd(avx512::load_f64(&s[8..])),
            ];
            let bits = match to {
                super::Narrow::F16 => {
                    // vcvtps2ph with an immediate rounding mode: to nearest, ties to even
                    let half = odd.map(|v| {
                        _mm256_cvtps_ph::<_MM_FROUND_TO_NEAREST_INT>(_mm256_castsi256_ps(v))
                    });
                    _mm256_set_m128i(half[1], half[0])
                }
                super::Narrow::Bf16 => {
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
        super::narrow16_scalar(to, &src[body..], &mut out[body..]);
    }

    // ---------------------------------------------------------------- AVX2 + FMA

    /// The operations of the precise path on AVX2+FMA: 4 lanes, masks as vectors of
    /// all-ones lanes.
    mod avx2 {
        use super::*;

        pub(super) type F = __m256d;
        pub(super) type M = __m256d;
        pub(super) const LANES: usize = 4;

        ops! { "avx2,fma";
            fn splat(v: f64) -> F { _mm256_set1_pd(v) }
            fn zero() -> F { _mm256_setzero_pd() }
            fn sub(a: F, b: F) -> F { _mm256_sub_pd(a, b) }
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
        ops: avx2, feature: "avx2,fma", product: product4, patch: patch4;
        /// See [`super::rounded_f32`].
        rounded_f32_avx2: f32 => store_f32;
        /// See [`super::products_f64`].
        products_f64_avx2: f64 => store;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Half width of the root window the AVX-512 fast path leaves to the precise path.
    const FAST_WINDOW: f64 = 1.0 / 1024.0;

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

    #[test]
    fn all_isas_bitwise_identical() {
        let (g, x) = inputs();
        let mut want32 = vec![0.0f32; g.len()];
        let mut want64 = vec![0.0f64; g.len()];
        rounded_f32(Isa::Scalar, &g, &x, &mut want32);
        products_f64(Isa::Scalar, &g, &x, &mut want64);
        for isa in Isa::available() {
            // odd lengths exercise the tails
            for len in [g.len(), g.len() - 3, 7, 1] {
                let mut got32 = vec![0.0f32; len];
                let mut got64 = vec![0.0f64; len];
                rounded_f32(isa, &g[..len], &x[..len], &mut got32);
                products_f64(isa, &g[..len], &x[..len], &mut got64);
                for i in 0..len {
                    assert_eq!(
                        got32[i].to_bits(),
                        want32[i].to_bits(),
                        "{} f32 g={:e} x={:e}",
                        isa.name(),
                        g[i],
                        x[i]
                    );
                    assert_eq!(
                        got64[i].to_bits(),
                        want64[i].to_bits(),
                        "{} f64 g={:e} x={:e}",
                        isa.name(),
                        g[i],
                        x[i]
                    );
                }
            }
        }
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
        let mut want = vec![0.0f32; n];
        rounded_f32(Isa::Scalar, &g, &x, &mut want);
        for isa in Isa::available() {
            let mut got = vec![0.0f32; n];
            rounded_f32(isa, &g, &x, &mut got);
            // NaN payloads are not part of the contract (two NaN operands may meet in
            // either order); every other result must be bitwise equal.
            let same = |a: f32, b: f32| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan());
            let bad = (0..n).find(|&i| !same(got[i], want[i]));
            assert!(
                bad.is_none(),
                "{} differs at g={:e} x={:e}",
                isa.name(),
                g[bad.unwrap_or(0)],
                x[bad.unwrap_or(0)]
            );
        }
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
            let mut want = vec![0.0f64; g.len()];
            products_f64(Isa::Scalar, &g, &x, &mut want);
            let mut want16 = vec![0u16; g.len()];
            narrow16_scalar(to, &want, &mut want16);
            for isa in Isa::available() {
                let mut got = vec![0.0f64; g.len()];
                products_narrowable(isa, to, &g, &x, &mut got);
                let mut got16 = vec![0u16; g.len()];
                narrow16_scalar(to, &got, &mut got16);
                let nan = |b: u16| widen(b).is_nan();
                let bad = (0..g.len())
                    .find(|&i| got16[i] != want16[i] && !(nan(got16[i]) && nan(want16[i])));
                assert!(
                    bad.is_none(),
                    "{} {to:?} differs at g={:e} x={:e}",
                    isa.name(),
                    g[bad.unwrap_or(0)],
                    x[bad.unwrap_or(0)]
                );
            }
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

    /// The stated error bound of the fast AVX-512 product (`FAST_ERROR_BOUND` relative on
    /// covered lanes), measured against the precise product on inputs dense near the
    /// window's border, where it is largest, and over the whole covered range.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn fast_product_within_its_error_bound() {
        if !Isa::available().contains(&Isa::Avx512) {
            return;
        }
        let mut s = 0xfeed_f00d_dead_beefu64;
        let n = 1 << 18;
        let (mut g, mut x) = (Vec::with_capacity(n), Vec::with_capacity(n));
        for i in 0..n {
            let r = next(&mut s);
            let u = (r >> 40) as f32 / (1u64 << 24) as f32;
            g.push(1.0 + u);
            // partly inside the window, to check that covered16 keeps those lanes out
            let border = FAST_WINDOW as f32 * (0.25 + 8.0 * u);
            x.push(match i % 4 {
                0 => R_HI as f32 + border,
                1 => R_HI as f32 - border,
                2 => -40.0 + 70.0 * u,
                _ => -151.0 + 299.0 * u,
            });
        }
        // SAFETY: AVX-512F is available (checked above).
        let fast = unsafe { x86::fast_products_avx512(&g, &x) };
        let mut worst = 0.0f64;
        let mut covered = 0;
        for i in 0..n {
            let Some(fast) = fast[i] else { continue };
            covered += 1;
            let precise = product(g[i], x[i]);
            worst = worst.max(((fast - precise) / precise).abs());
        }
        assert!(covered > n / 2, "{covered} of {n} lanes covered");
        assert!(
            worst < x86::FAST_ERROR_BOUND,
            "worst relative error {worst:e}"
        );
        // the bound is not vacuous: the window border costs accuracy
        assert!(worst > 1e-16, "worst relative error {worst:e}");
    }

    /// The rounding test of the fast path is sound on each grid (f32, f16, bf16): every
    /// value within 2^−38 of a passing `y` rounds to the same value of the format as `y`
    /// (checked at midpoints of the normal and the subnormal range nudged by up to
    /// ±2^−34, and at random values); and it is not vacuous: zeros and infinities pass,
    /// and nearly all random values in the normal range.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn rounding_test_is_sound() {
        if !Isa::available().contains(&Isa::Avx512) {
            return;
        }
        /// A format: its grid, its rounding of f64 (once, to nearest even; from the scalar
        /// code, not the vector code under test), the value of an encoding, the encoding of
        /// its largest finite value, and the f64 exponent fields of its smallest normal
        /// and largest values.
        struct Format {
            name: &'static str,
            grid: x86::Grid,
            round: fn(f64) -> u64,
            value: fn(u64) -> f64,
            max_bits: u64,
            fields: (u64, u64),
        }
        let formats = [
            Format {
                name: "f32",
                grid: x86::F32_GRID,
                round: |v| u64::from((v as f32).to_bits()),
                value: |b| f64::from(f32::from_bits(b as u32)),
                max_bits: u64::from(f32::MAX.to_bits()),
                fields: (1023 - 126, 1023 + 127),
            },
            Format {
                name: "f16",
                grid: x86::F16_GRID,
                round: |v| round16(Narrow::F16, v),
                value: |b| f64::from(half::f16::from_bits(b as u16)),
                max_bits: 0x7bff,
                fields: (1023 - 14, 1023 + 15),
            },
            Format {
                name: "bf16",
                grid: x86::BF16_GRID,
                round: |v| round16(Narrow::Bf16, v),
                value: |b| f64::from(half::bf16::from_bits(b as u16)),
                max_bits: 0x7f7f,
                fields: (1023 - 126, 1023 + 127),
            },
        ];
        let mut s = 0x0dd_ba11_cafe_f00du64;
        for f in &formats {
            let mut y = vec![0.0, -0.0, f64::INFINITY, -f64::INFINITY];
            let specials = y.len();
            while y.len() < 1 << 17 {
                let r = next(&mut s);
                let sign = if r & 1 == 0 { 1.0 } else { -1.0 };
                // a finite value of the format from the subnormals up, the midpoint to the
                // next one, nudged
                let b = (r >> 8) % f.max_bits;
                let mid = ((f.value)(b) + (f.value)(b + 1)) / 2.0;
                let nudge = ((r >> 40) as f64 / (1u64 << 24) as f64 - 0.5) * 2f64.powi(-33);
                y.push(sign * mid * (1.0 + nudge));
                // a random value in the normal range
                let (lo, hi) = f.fields;
                let field = lo + (r >> 20) % (hi - lo);
                y.push(sign * f64::from_bits(field << 52 | (r >> 12) & ((1 << 52) - 1)));
            }
            y.truncate(y.len() / 8 * 8);
            // SAFETY: AVX-512F is available (checked above).
            let ok = unsafe { x86::rounding_ok_avx512(&y, f.grid) };
            let eps = 2f64.powi(-38) * (1.0 - 2f64.powi(-10));
            for (&y, &ok) in y.iter().zip(&ok) {
                if ok && y.is_finite() {
                    for end in [y * (1.0 - eps), y * (1.0 + eps)] {
                        assert_eq!((f.round)(end), (f.round)(y), "{} y = {y:e} passed", f.name);
                    }
                }
            }
            assert!(
                ok[..specials].iter().all(|&ok| ok),
                "{}: zeros and infinities",
                f.name
            );
            let random: Vec<bool> = ok[specials..].iter().skip(1).step_by(2).copied().collect();
            let passed = random.iter().filter(|&&ok| ok).count();
            assert!(
                passed * 100 > random.len() * 99,
                "{}: {passed} of {}",
                f.name,
                random.len()
            );
        }
    }

    #[test]
    fn exp_is_accurate() {
        let mut worst = 0.0f64;
        let mut a = -708.0;
        while a <= 0.0 {
            let rel = ((exp_reduced(a) - a.exp()) / a.exp()).abs();
            worst = worst.max(rel);
            a += 0.0137;
        }
        assert!(worst < 5e-16, "worst relative error {worst:e}");
    }

    #[test]
    fn taylor_and_direct_agree_at_window_edge() {
        for x in [R_HI - ROOT_WINDOW, R_HI + ROOT_WINDOW] {
            let taylor = root_dmish(x);
            let direct = fast_dmish(x);
            assert!(
                ((taylor - direct) / direct).abs() < 4e-15,
                "{taylor} {direct}"
            );
        }
    }
}
