//! The f64 arithmetic shared by the references of the linear-algebra, elementwise,
//! reduction and loss operators: rounding to a dtype, compensated sums, and broadcast
//! elementwise evaluation.

use crate::element::{DType, Element};
use crate::error::{Error, Result};
use half::{bf16, f16};
use ndarray::{ArrayView, ArrayViewMut, Dimension, IxDyn, Zip};

/// `v` rounded once (to nearest, ties to even) to `dtype`, widened back exactly (to an
/// integer dtype: truncated toward zero and saturated, as the device casts).
pub(crate) fn round_to(dtype: DType, v: f64) -> f64 {
    match dtype {
        DType::F32 => f64::from(v as f32),
        DType::F64 => v,
        DType::F16 => <f16 as Element>::from_f64(v).to_f64(),
        DType::BF16 => <bf16 as Element>::from_f64(v).to_f64(),
        DType::I32 => <i32 as Element>::from_f64(v).to_f64(),
        DType::I64 => <i64 as Element>::from_f64(v).to_f64(),
        DType::I8 => <i8 as Element>::from_f64(v).to_f64(),
        DType::U8 => <u8 as Element>::from_f64(v).to_f64(),
        DType::Bool => <bool as Element>::from_f64(v).to_f64(),
    }
}

/// `v` rounded once to the compute dtype and then converted to `O`, as a device kernel
/// writing `compute` followed by a cast to the output's dtype does (the cast of a value of
/// `compute` is exact or one more rounding).
pub(crate) fn finish<O: Element>(compute: DType, v: f64) -> O {
    O::from_f64(round_to(compute, v))
}

/// A Neumaier (improved Kahan–Babuška) sum: the result is within 2⁻⁵²·|S| plus
/// n·2⁻¹⁰⁶·Σ|xᵢ| of the exact sum S of n terms, in any order.
#[derive(Default, Clone, Copy)]
pub(crate) struct Sum {
    sum: f64,
    carry: f64,
}

impl Sum {
    pub(crate) fn add(&mut self, x: f64) {
        let t = self.sum + x;
        if !t.is_finite() {
            // Infinities and NaN propagate as in a plain sum; the carry would turn them
            // into NaN (∞ − ∞).
            self.sum = t;
            self.carry = 0.0;
            return;
        }
        self.carry += if self.sum.abs() >= x.abs() {
            (self.sum - t) + x
        } else {
            (x - t) + self.sum
        };
        self.sum = t;
    }

    pub(crate) fn value(self) -> f64 {
        if self.sum.is_finite() {
            self.sum + self.carry
        } else {
            self.sum
        }
    }
}

/// `view` broadcast to `shape` as a dynamic-dimensional view, or the broadcast error
/// naming `argument` and the shape it failed against.
pub(crate) fn broadcast_to<'a, T, D: Dimension>(
    argument: &'static str,
    view: &'a ArrayView<'_, T, D>,
    shape: &[usize],
) -> Result<ArrayView<'a, T, IxDyn>> {
    view.broadcast(IxDyn(shape))
        .ok_or_else(|| Error::NotBroadcastable {
            argument,
            shape: view.shape().to_vec(),
            other: "the broadcast shape",
            other_shape: shape.to_vec(),
        })
}

/// Writes `f(a, b)` of every element pair of `a` and `b` (both already of `out`'s shape)
/// into `out`, each value rounded once to `O`.
pub(crate) fn zip2<A: Element, B: Element, O: Element>(
    a: ArrayView<'_, A, IxDyn>,
    b: ArrayView<'_, B, IxDyn>,
    out: ArrayViewMut<'_, O, IxDyn>,
    f: impl Fn(f64, f64) -> f64,
) {
    Zip::from(out)
        .and(a)
        .and(b)
        .for_each(|o, &a, &b| *o = O::from_f64(f(a.to_f64(), b.to_f64())));
}

/// [`zip2`] over three inputs.
pub(crate) fn zip3<A: Element, B: Element, C: Element, O: Element>(
    a: ArrayView<'_, A, IxDyn>,
    b: ArrayView<'_, B, IxDyn>,
    c: ArrayView<'_, C, IxDyn>,
    out: ArrayViewMut<'_, O, IxDyn>,
    f: impl Fn(f64, f64, f64) -> f64,
) {
    Zip::from(out)
        .and(a)
        .and(b)
        .and(c)
        .for_each(|o, &a, &b, &c| *o = O::from_f64(f(a.to_f64(), b.to_f64(), c.to_f64())));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compensated_sum_recovers_cancelled_terms() {
        let mut s = Sum::default();
        for x in [1e16, 1.0, -1e16, 1.0] {
            s.add(x);
        }
        assert_eq!(s.value(), 2.0);
        let naive: f64 = [1e16, 1.0, -1e16, 1.0].iter().sum();
        assert_ne!(naive, 2.0);
        let mut inf = Sum::default();
        inf.add(f64::INFINITY);
        inf.add(1.0);
        assert_eq!(inf.value(), f64::INFINITY);
        let mut nan = Sum::default();
        nan.add(f64::INFINITY);
        nan.add(f64::NEG_INFINITY);
        assert!(nan.value().is_nan());
    }

    #[test]
    fn rounds_once_per_dtype() {
        let v = 1.0 + 2f64.powi(-11) + 2f64.powi(-30);
        assert_eq!(round_to(DType::F16, v), 1.0 + 2f64.powi(-10));
        assert_eq!(round_to(DType::BF16, 1.0 + 2f64.powi(-9)), 1.0);
        assert_eq!(round_to(DType::F32, 0.1), f64::from(0.1f32));
        let h: f32 = finish(DType::F16, 1.0 / 3.0);
        assert_eq!(h, f16::from_f64(1.0 / 3.0).to_f32());
    }
}
