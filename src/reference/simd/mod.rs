//! Formulas over slices, on the best instruction set of the CPU: a portable scalar loop,
//! AVX2+FMA (4 f64 lanes) and AVX-512F (8 lanes) versions of the precise evaluation that
//! give bitwise identical results ([`precise`]), and on both a fast first pass kept
//! where a rounding test proves it rounds like the precise one ([`fast`], [`fast4`]).

#[cfg(target_arch = "x86_64")]
mod fast;
#[cfg(target_arch = "x86_64")]
mod fast4;
#[cfg(target_arch = "x86_64")]
mod precise;
#[cfg(all(test, target_arch = "x86_64"))]
mod tests;

use super::narrow::Narrow;
use std::array::from_fn;

#[cfg(target_arch = "x86_64")]
pub(crate) use x86::Vectorized;

/// A formula's vector versions (none off x86).
#[cfg(not(target_arch = "x86_64"))]
pub(crate) trait Vectorized<const N: usize>: Formula<N> {}
#[cfg(not(target_arch = "x86_64"))]
impl<K: Formula<N>, const N: usize> Vectorized<N> for K {}

#[cfg(target_arch = "x86_64")]
mod x86 {
    /// The vector versions of a formula of `N` inputs. Each method's implementation
    /// carries the `#[target_feature]` it names.
    pub(crate) trait Vectorized<const N: usize>:
        super::Formula<N> + super::fast::Fast<N> + super::fast4::Fast4<N>
    {
        /// The precise value of 4 lanes.
        ///
        /// # Safety
        /// The CPU must support AVX2 and FMA.
        unsafe fn precise4(x: [std::arch::x86_64::__m256d; N]) -> std::arch::x86_64::__m256d;
    }
}

/// An elementwise formula of `N` inputs that are f32 values, evaluated in f64 so that one
/// rounding to the compute type gives the correctly rounded result (see
/// [`super::math`]).
///
/// [`Formula::precise`] alone is a complete formula: the engine runs it on every CPU. A
/// formula that also implements [`Vectorized`] (hand-written SIMD with proven error
/// bounds) names it in [`Formula::VECTOR`], and then runs vectorized where the CPU allows.
pub(crate) trait Formula<const N: usize>: Sync {
    /// The value at `x`, each element an f32 value.
    fn precise(x: [f64; N]) -> f64;

    /// The vector versions, `Some(Vector::of::<Self>())` for a formula that has them.
    const VECTOR: Option<Vector<N>> = None;
}

/// The vector loops of one formula, as function pointers: the engine stays generic over
/// formulas without requiring every formula to have vector code.
#[derive(Clone, Copy)]
pub(crate) struct Vector<const N: usize> {
    #[cfg(target_arch = "x86_64")]
    avx2_fast: Loop<f32, N>,
    #[cfg(target_arch = "x86_64")]
    avx2_fast_f64: Loop<f64, N>,
    #[cfg(target_arch = "x86_64")]
    avx2_precise: unsafe fn([&[f32]; N], &mut [f64]),
    #[cfg(target_arch = "x86_64")]
    avx512_fast: Loop<f32, N>,
    #[cfg(target_arch = "x86_64")]
    avx512_fast_f64: Loop<f64, N>,
    #[cfg(target_arch = "x86_64")]
    avx512_precise: unsafe fn([&[f32]; N], &mut [f64]),
}

/// A fast-path loop writing `O` values, kept where the rounding test on the grid passes.
#[cfg(target_arch = "x86_64")]
type Loop<O, const N: usize> = unsafe fn([&[f32]; N], &mut [O], fast::Grid);

impl<const N: usize> Vector<N> {
    /// The vector loops of `K`.
    pub(crate) const fn of<K: Vectorized<N>>() -> Self {
        Vector {
            #[cfg(target_arch = "x86_64")]
            avx2_fast: fast4::loop_avx2::<K, f32, N>,
            #[cfg(target_arch = "x86_64")]
            avx2_fast_f64: fast4::loop_avx2::<K, f64, N>,
            #[cfg(target_arch = "x86_64")]
            avx2_precise: precise::loop_avx2::<K, f64, N>,
            #[cfg(target_arch = "x86_64")]
            avx512_fast: fast::loop_avx512::<K, f32, N>,
            #[cfg(target_arch = "x86_64")]
            avx512_fast_f64: fast::loop_avx512::<K, f64, N>,
            #[cfg(target_arch = "x86_64")]
            avx512_precise: fast::precise_loop_avx512::<K, N>,
        }
    }
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

/// Asserts that every input has the output's length (the vector loops rely on it).
fn check_lengths<const N: usize>(x: &[&[f32]; N], n: usize) {
    assert!(x.iter().all(|s| s.len() == n), "slices of unequal length");
}

/// `out[i] = f32(K(x[·][i]))`, the precise f64 value rounded once (on AVX-512 and AVX2,
/// for a formula with vector versions, through the fast path, which rounds the same).
pub(crate) fn rounded_f32<K: Formula<N>, const N: usize>(
    isa: Isa,
    x: [&[f32]; N],
    out: &mut [f32],
) {
    check_lengths(&x, out.len());
    match (isa, K::VECTOR) {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `Isa::Avx2` is only produced when avx2 and fma were detected; the
        // lengths are checked above.
        (Isa::Avx2, Some(v)) => unsafe { (v.avx2_fast)(x, out, fast::F32_GRID) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `Isa::Avx512` is only produced when avx512f was detected; the lengths
        // are checked above.
        (Isa::Avx512, Some(v)) => unsafe { (v.avx512_fast)(x, out, fast::F32_GRID) },
        _ => {
            for (i, o) in out.iter_mut().enumerate() {
                *o = K::precise(from_fn(|k| f64::from(x[k][i]))) as f32;
            }
        }
    }
}

/// `out[i] = K(x[·][i])`: the precise f64 values.
pub(crate) fn precise_f64<K: Formula<N>, const N: usize>(
    isa: Isa,
    x: [&[f32]; N],
    out: &mut [f64],
) {
    check_lengths(&x, out.len());
    match (isa, K::VECTOR) {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `Isa::Avx2` is only produced when avx2 and fma were detected; the
        // lengths are checked above.
        (Isa::Avx2, Some(v)) => unsafe { (v.avx2_precise)(x, out) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `Isa::Avx512` is only produced when avx512f was detected; the lengths
        // are checked above.
        (Isa::Avx512, Some(v)) => unsafe { (v.avx512_precise)(x, out) },
        _ => {
            for (i, o) in out.iter_mut().enumerate() {
                *o = K::precise(from_fn(|k| f64::from(x[k][i])));
            }
        }
    }
}

/// f64 values `K(x[·][i])` whose rounding (once, to nearest even) to `to` is that of the
/// exact values: the precise values, or on AVX-512 and AVX2 (for a formula with vector
/// versions) the fast ones where a rounding test on the 16-bit grid shows they round the
/// same.
pub(crate) fn narrowable<K: Formula<N>, const N: usize>(
    isa: Isa,
    to: Narrow,
    x: [&[f32]; N],
    out: &mut [f64],
) {
    check_lengths(&x, out.len());
    match (isa, K::VECTOR) {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `Isa::Avx2` is only produced when avx2 and fma were detected; the
        // lengths are checked above.
        (Isa::Avx2, Some(v)) => unsafe { (v.avx2_fast_f64)(x, out, fast::grid(to)) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `Isa::Avx512` is only produced when avx512f was detected; the lengths
        // are checked above.
        (Isa::Avx512, Some(v)) => unsafe { (v.avx512_fast_f64)(x, out, fast::grid(to)) },
        _ => {
            let _ = to;
            precise_f64::<K, N>(isa, x, out);
        }
    }
}
