//! The reference of the device's cast (`aclnnCast`, and the cast that ends an operator's
//! compute chain): an array converted element by element to another element type.

use crate::element::{DType, Element};
use ndarray::{Array, ArrayBase, Data, Dimension};
use std::any::Any;

/// `x` converted element by element to `O`, as the device's cast converts (`aclnnCast`,
/// the conversion of [`copy`](crate::copy), and the cast that ends an operator's compute
/// chain from its compute type to the output's dtype):
///
/// - to a floating type: exact when `O` holds the value, else rounded once from the exact
///   value (to nearest, ties to even; an `i64` beyond 2^53 too, not through f64);
/// - from a floating type to an integer type: truncated toward zero and saturated at the
///   integer's range, NaN to 0;
/// - between integer types: the low bits, two's complement (wrapped to the width);
/// - to `bool`: true for any nonzero value, NaN included; from `bool`: 0 or 1.
///
/// A reference whose operator's kernel writes the compute type returns that type; `cast`
/// of its result is what the device gives for another output dtype. Where the output's
/// type changes what the kernel computes, the reference's `_as` form takes it instead
/// (see the [module docs](super)).
///
/// # Examples
/// ```
/// use ascendcl::reference::{add, cast};
/// use half::{bf16, f16};
/// use ndarray::{Array1, array};
///
/// // computed in f32 (1 + 2⁻¹¹ + 2⁻²³ exactly), then one rounding to f16: up, not a tie
/// let p = |e: i32| 2f32.powi(e);
/// let sum = add(array![1.0f32].view(), array![p(-11) + p(-23)].view(), 1)?;
/// let out: Array1<f16> = cast(&sum);
/// assert_eq!(out[0], f16::from_f32(1.0 + p(-10)));
///
/// let wide: Array1<f32> = cast(&array![bf16::from_f32(0.1)]); // exact
/// assert_eq!(wide[0], bf16::from_f32(0.1).to_f32());
///
/// let narrow: Array1<i8> = cast(&array![300i32, -129, 7]); // wrapped
/// assert_eq!(narrow, array![44i8, 127, 7]);
/// let truncated: Array1<u8> = cast(&array![-1.5f64, 2.9, 1e9, f64::NAN]); // saturated
/// assert_eq!(truncated, array![0u8, 2, 255, 0]);
/// # Ok::<(), ascendcl::Error>(())
/// ```
pub fn cast<O, T, S, D>(x: &ArrayBase<S, D>) -> Array<O, D>
where
    O: Element,
    T: Element,
    S: Data<Elem = T>,
    D: Dimension,
{
    x.mapv(convert::<T, O>)
}

/// One element as the device's cast converts it.
fn convert<T: Element, O: Element>(v: T) -> O {
    if T::DTYPE.is_float() || T::DTYPE == DType::Bool {
        // Every floating value widens exactly to f64, so `from_f64` rounds only once.
        return O::from_f64(v.to_f64());
    }
    let i = integer_value(v);
    match O::DTYPE {
        // The wrapped values fit f64 exactly.
        DType::I8 => O::from_f64(f64::from(i as i8)),
        DType::U8 => O::from_f64(f64::from(i as u8)),
        DType::I32 => O::from_f64(f64::from(i as i32)),
        DType::I64 => same_type(i),
        DType::Bool => O::from_f64(f64::from(u8::from(i != 0))),
        DType::F64 => O::from_f64(i as f64),
        DType::F32 => O::from_f32(i as f32),
        DType::F16 | DType::BF16 => O::from_f32(f32_odd(i)),
    }
}

/// The exact value of an integer element (`to_f64` rounds an `i64` beyond 2^53).
fn integer_value<T: Element>(v: T) -> i64 {
    if T::DTYPE == DType::I64 {
        v.to_bits_u64() as i64
    } else {
        v.to_f64() as i64
    }
}

/// `i` as `O` when `O` is `i64` (the default otherwise, which the callers never ask for).
fn same_type<O: Element>(i: i64) -> O {
    (&i as &dyn Any)
        .downcast_ref::<O>()
        .copied()
        .unwrap_or_default()
}

/// `i` as f32 rounded to odd: f16 or bf16 rounded from it (to nearest even) is `i` rounded
/// once, f32's 13 or 16 extra bits keeping the second rounding exact.
fn f32_odd(i: i64) -> f32 {
    let nearest = i as f32;
    // An inexact `nearest` is at least 2^24 in magnitude, so an integer (2^63 included,
    // hence i128): `back` is exact.
    let (back, i) = (nearest as i128, i128::from(i));
    if back == i {
        return nearest;
    }
    let toward_zero = if back.abs() > i.abs() {
        f32::from_bits(nearest.to_bits() - 1)
    } else {
        nearest
    };
    f32::from_bits(toward_zero.to_bits() | 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use half::bf16;
    use ndarray::array;

    #[test]
    fn an_i64_beyond_2_pow_53_rounds_once() {
        // 2^60 + 2^52 + 1 is just above a bf16 tie: up. Through f64 it would be the tie
        // itself, then rounded to even (down).
        let i = (1i64 << 60) + (1 << 52) + 1;
        let got: ndarray::Array1<bf16> = cast(&array![i, -i]);
        let up = bf16::from_f64(((1u64 << 60) + (1 << 53)) as f64);
        assert_eq!(got, array![up, -up]);
        let exact: ndarray::Array1<i64> = cast(&array![i64::MIN, i64::MAX]);
        assert_eq!(exact, array![i64::MIN, i64::MAX]);
        let back: ndarray::Array1<i32> = cast(&array![i64::MAX, 1 << 32]);
        assert_eq!(back, array![-1, 0]);
    }
}
