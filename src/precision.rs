//! The precision standard: judging device results as CANN's operator tests do
//! ([`judge`], by the community precision standard's statistics and [`threshold`]s).
//!
//! Device kernels do not round like a correctly rounded CPU reference: they evaluate
//! their formula step by step in f32 (see `docs/accuracy.md`), so
//! comparing bit for bit is the wrong test. The standard compares against a
//! high-precision golden with two relative-error statistics and a threshold per dtype.

use crate::element::DType;
use crate::error::{Error, Result};
use ndarray::{ArrayBase, Data, Dimension};

/// The standard's verdict on one result ([`judge`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Verdict {
    /// Mean relative error, `mean(|a − g| / (|g| + 1e−7))`.
    pub mere: f64,
    /// Maximum relative error, `max(|a − g| / (|g| + 1e−7))`.
    pub mare: f64,
    /// The dtype's threshold T ([`threshold`]).
    pub threshold: f64,
    /// `MERE < T` and `MARE < 10·T`.
    pub passed: bool,
}

/// T of the standard: 2^−13 for f32 (and f64), 2^−10 for f16, 2^−7 for bf16; 0 for the integer
/// types, whose results must be exact.
pub const fn threshold(dtype: DType) -> f64 {
    match dtype {
        // No stricter standard is documented for DOUBLE than for FLOAT.
        DType::F32 | DType::F64 => 1.0 / 8192.0,
        DType::F16 => 1.0 / 1024.0,
        DType::BF16 => 1.0 / 128.0,
        DType::I32 | DType::I64 | DType::I8 | DType::U8 | DType::Bool => 0.0,
    }
}

/// MERE, MARE and the verdict of `actual` against a high-precision `golden` (f64, or any
/// type that widens to it) under the threshold of `dtype`, the dtype the result was
/// computed and stored in. Equal values (infinities, NaN against NaN) count as exact;
/// an empty result passes. For an integer dtype (T = 0) it passes only when every value
/// is exact.
///
/// # Errors
/// [`Error::ShapeMismatch`] when the shapes differ.
///
/// ```
/// use ascendcl::{DType, precision};
/// use ndarray::array;
/// let golden = array![1.0f64, 2.0, 3.0];
/// let good = precision::judge(&array![1.0f32, 2.0001, 3.0], &golden, DType::F32)?;
/// assert!(good.passed);
/// let bad = precision::judge(&array![1.0f32, 2.1, 3.0], &golden, DType::F32)?;
/// assert!(!bad.passed && bad.mare > 0.04);
/// # Ok::<(), ascendcl::Error>(())
/// ```
pub fn judge<A, G, SA, SG, D>(
    actual: &ArrayBase<SA, D>,
    golden: &ArrayBase<SG, D>,
    dtype: DType,
) -> Result<Verdict>
where
    A: Copy + Into<f64>,
    G: Copy + Into<f64>,
    SA: Data<Elem = A>,
    SG: Data<Elem = G>,
    D: Dimension,
{
    if actual.shape() != golden.shape() {
        return Err(Error::ShapeMismatch {
            argument: "actual",
            expected: golden.shape().to_vec(),
            actual: actual.shape().to_vec(),
        });
    }
    let (mut sum, mut mare) = (0.0f64, 0.0f64);
    for (a, g) in actual.iter().zip(golden.iter()) {
        let (a, g): (f64, f64) = ((*a).into(), (*g).into());
        let rel = if a == g || (a.is_nan() && g.is_nan()) {
            0.0
        } else {
            (a - g).abs() / (g.abs() + 1e-7)
        };
        sum += rel;
        // NaN (a NaN result against a number) must fail: `max` would drop it.
        if rel.is_nan() || rel > mare {
            mare = rel;
        }
    }
    let n = actual.len();
    let mere = if n == 0 { 0.0 } else { sum / n as f64 };
    let t = threshold(dtype);
    Ok(Verdict {
        mere,
        mare,
        threshold: t,
        passed: if t == 0.0 {
            mare == 0.0
        } else {
            mere < t && mare < 10.0 * t
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use half::{bf16, f16};
    use ndarray::{Array1, array};

    #[test]
    fn thresholds_and_statistics() {
        assert_eq!(threshold(DType::F32), 2f64.powi(-13));
        assert_eq!(threshold(DType::F16), 2f64.powi(-10));
        assert_eq!(threshold(DType::BF16), 2f64.powi(-7));
        let golden = array![1.0f64, -2.0, 0.0, f64::INFINITY];
        let p = judge(
            &array![1.5f32, -2.0, 0.0, f32::INFINITY],
            &golden,
            DType::F32,
        )
        .unwrap();
        assert!((p.mare - 0.5 / (1.0 + 1e-7)).abs() < 1e-12);
        assert!((p.mere - p.mare / 4.0).abs() < 1e-12);
        assert!(!p.passed);
        let empty = Array1::<f32>::zeros(0);
        assert!(judge(&empty, &empty, DType::F32).unwrap().passed);
    }

    #[test]
    fn half_types_nan_and_shapes() {
        let golden = array![1.0f64, 2.0];
        let h = array![f16::from_f64(1.0), f16::from_f64(2.001)];
        assert!(judge(&h, &golden, DType::F16).unwrap().passed);
        let b = array![bf16::from_f64(1.0), bf16::NAN];
        assert!(!judge(&b, &golden, DType::BF16).unwrap().passed);
        let nan = array![f64::NAN];
        assert!(judge(&array![f32::NAN], &nan, DType::F32).unwrap().passed);
        assert!(matches!(
            judge(&array![1.0f32], &golden, DType::F32),
            Err(Error::ShapeMismatch { .. })
        ));
    }
}
