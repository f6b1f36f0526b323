//! The element types the operators accept, shared by the device side and the CPU reference.

use ascend_sys::aclDataType;
use half::{bf16, f16};
use std::fmt;

/// A data type an operator can compute in, as CANN names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DType {
    /// IEEE binary32 (`ACL_FLOAT`).
    F32,
    /// IEEE binary16 (`ACL_FLOAT16`).
    F16,
    /// bfloat16 (`ACL_BF16`), on Atlas A2/A3 only.
    BF16,
}

impl DType {
    /// The `aclDataType` value of this type.
    pub const fn acl(self) -> aclDataType {
        match self {
            DType::F32 => ascend_sys::ACL_FLOAT,
            DType::F16 => ascend_sys::ACL_FLOAT16,
            DType::BF16 => ascend_sys::ACL_BF16,
        }
    }

    /// Size of one element in bytes.
    pub const fn size(self) -> usize {
        match self {
            DType::F32 => 4,
            DType::F16 | DType::BF16 => 2,
        }
    }

    /// CANN's name for the type.
    pub const fn name(self) -> &'static str {
        match self {
            DType::F32 => "FLOAT",
            DType::F16 => "FLOAT16",
            DType::BF16 => "BF16",
        }
    }

    /// The dtype both operands are cast to before computing: the same type stays, any mix
    /// of different types computes in f32 (f16+f32, bf16+f32 and f16+bf16 all give f32).
    pub const fn promote(self, other: DType) -> DType {
        match (self, other) {
            (DType::F16, DType::F16) => DType::F16,
            (DType::BF16, DType::BF16) => DType::BF16,
            _ => DType::F32,
        }
    }
}

/// The Rust name (`f32`, `f16`, `bf16`); [`DType::name`] gives CANN's.
impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            DType::F32 => "f32",
            DType::F16 => "f16",
            DType::BF16 => "bf16",
        })
    }
}

pub(crate) mod sealed {
    use half::{bf16, f16};
    use ndarray::{ArrayView, ArrayViewMut, Dimension};

    /// A view of one of the element types, named by its type, so that code generic over
    /// [`Element`](super::Element) can take a path per type (the CPU reference widens,
    /// narrows and copies each type its own way) without casts.
    #[derive(Clone, Copy)]
    pub enum TypedView<'a, D> {
        F32(ArrayView<'a, f32, D>),
        F16(ArrayView<'a, f16, D>),
        Bf16(ArrayView<'a, bf16, D>),
    }

    /// A mutable view of one of the element types, named by its type.
    pub enum TypedViewMut<'a, D> {
        F32(ArrayViewMut<'a, f32, D>),
        F16(ArrayViewMut<'a, f16, D>),
        Bf16(ArrayViewMut<'a, bf16, D>),
    }

    /// The sealing supertrait of [`Element`](super::Element), with the crate-internal
    /// methods that map a generic element type to its own type.
    pub trait Sealed: Sized {
        /// `view` as the variant of its element type.
        fn typed<D: Dimension>(view: ArrayView<'_, Self, D>) -> TypedView<'_, D>;
        /// `view` as the variant of its element type.
        fn typed_mut<D: Dimension>(view: ArrayViewMut<'_, Self, D>) -> TypedViewMut<'_, D>;
    }

    macro_rules! sealed {
        ($($t:ty => $variant:ident),*) => {$(
            impl Sealed for $t {
                #[inline]
                fn typed<D: Dimension>(view: ArrayView<'_, Self, D>) -> TypedView<'_, D> {
                    TypedView::$variant(view)
                }
                #[inline]
                fn typed_mut<D: Dimension>(
                    view: ArrayViewMut<'_, Self, D>,
                ) -> TypedViewMut<'_, D> {
                    TypedViewMut::$variant(view)
                }
            }
        )*};
    }
    sealed!(f32 => F32, f16 => F16, bf16 => Bf16);
}

/// An element type of device tensors and of the CPU reference: `f32`, [`half::f16`] or
/// [`half::bf16`]. Sealed: the operators are defined for exactly these.
pub trait Element:
    sealed::Sealed + Copy + Default + PartialEq + fmt::Debug + Send + Sync + 'static
{
    /// The CANN data type of `Self`.
    const DTYPE: DType;

    /// Exact widening to f32.
    fn to_f32(self) -> f32;
    /// Exact widening to f64.
    fn to_f64(self) -> f64;
    /// Rounds to nearest, ties to even, once.
    fn from_f32(value: f32) -> Self;
    /// Rounds to nearest, ties to even, once (not through f32).
    fn from_f64(value: f64) -> Self;
    /// The raw bits, widened to u32 (for bitwise comparisons).
    fn to_bits_u32(self) -> u32;
}

/// The element type that operands of types `Self` and `Rhs` compute in: [`DType::promote`]
/// at the type level (`f16`+`f16` → `f16`, `bf16`+`bf16` → `bf16`, any other pair → `f32`).
///
/// # Examples
/// ```
/// use ascendcl::element::Promote;
/// use half::{bf16, f16};
///
/// fn compute_type<A: Promote<B>, B: ascendcl::Element>() -> ascendcl::DType {
///     <A::Output as ascendcl::Element>::DTYPE
/// }
/// assert_eq!(compute_type::<f16, f16>(), ascendcl::DType::F16);
/// assert_eq!(compute_type::<f16, bf16>(), ascendcl::DType::F32);
/// ```
pub trait Promote<Rhs: Element>: Element {
    /// The compute type.
    type Output: Element;
}

macro_rules! promote {
    ($($a:ty, $b:ty => $o:ty;)*) => {$(
        impl Promote<$b> for $a {
            type Output = $o;
        }
    )*};
}
promote! {
    f32, f32 => f32; f32, f16 => f32; f32, bf16 => f32;
    f16, f32 => f32; f16, f16 => f16; f16, bf16 => f32;
    bf16, f32 => f32; bf16, f16 => f32; bf16, bf16 => bf16;
}

/// `value` rounded to f32 toward zero, with the last significand bit set when that was
/// inexact ("round to odd"). A following round-to-nearest-even to a format of at most 22
/// significant bits (f16, bf16; also in their subnormal ranges, where f32 keeps more bits
/// still) is then the correctly rounded `value`, whereas rounding to the nearest f32
/// first can land on a midpoint of the narrow format and round twice.
pub(crate) fn f64_to_f32_odd(value: f64) -> f32 {
    let nearest = value as f32;
    if value.is_nan() || f64::from(nearest) == value {
        return nearest;
    }
    // Inexact: the f32 toward zero is `nearest` itself or its neighbour toward zero
    // (for an overflow to ±∞, ±MAX); stepping the bits down moves toward zero.
    let toward_zero = if nearest.is_infinite() || f64::from(nearest).abs() > value.abs() {
        f32::from_bits(nearest.to_bits() - 1)
    } else {
        nearest
    };
    f32::from_bits(toward_zero.to_bits() | 1)
}

impl Element for f32 {
    const DTYPE: DType = DType::F32;
    #[inline]
    fn to_f32(self) -> f32 {
        self
    }
    #[inline]
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
    #[inline]
    fn from_f32(value: f32) -> Self {
        value
    }
    #[inline]
    fn from_f64(value: f64) -> Self {
        value as f32
    }
    #[inline]
    fn to_bits_u32(self) -> u32 {
        self.to_bits()
    }
}

impl Element for f16 {
    const DTYPE: DType = DType::F16;
    #[inline]
    fn to_f32(self) -> f32 {
        f16::to_f32(self)
    }
    #[inline]
    fn to_f64(self) -> f64 {
        f16::to_f64(self)
    }
    #[inline]
    fn from_f32(value: f32) -> Self {
        f16::from_f32(value)
    }
    #[inline]
    fn from_f64(value: f64) -> Self {
        // half's own `from_f64` rounds to f32 first (twice rounded)
        f16::from_f32(f64_to_f32_odd(value))
    }
    #[inline]
    fn to_bits_u32(self) -> u32 {
        u32::from(self.to_bits())
    }
}

impl Element for bf16 {
    const DTYPE: DType = DType::BF16;
    #[inline]
    fn to_f32(self) -> f32 {
        bf16::to_f32(self)
    }
    #[inline]
    fn to_f64(self) -> f64 {
        bf16::to_f64(self)
    }
    #[inline]
    fn from_f32(value: f32) -> Self {
        bf16::from_f32(value)
    }
    #[inline]
    fn from_f64(value: f64) -> Self {
        // half's own `from_f64` rounds to f32 first (twice rounded)
        bf16::from_f32(f64_to_f32_odd(value))
    }
    #[inline]
    fn to_bits_u32(self) -> u32 {
        u32::from(self.to_bits())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f16_of(v: f64) -> f64 {
        <f16 as Element>::from_f64(v).to_f64()
    }
    fn bf16_of(v: f64) -> f64 {
        <bf16 as Element>::from_f64(v).to_f64()
    }

    /// Values just off a midpoint of the narrow format by less than half an f32 ulp: the
    /// nearest f32 is the midpoint itself, so rounding through it would tie to even.
    #[test]
    fn from_f64_rounds_once() {
        let p = |e: i32| 2f64.powi(e);
        assert_eq!(f16_of(1.0 + p(-11) + p(-30)), 1.0 + p(-10));
        assert_eq!(f16_of(-(1.0 + p(-11) + p(-30))), -(1.0 + p(-10)));
        assert_eq!(f16_of(1.0 + 3.0 * p(-11) - p(-30)), 1.0 + p(-10));
        assert_eq!(bf16_of(1.0 + p(-8) + p(-30)), 1.0 + p(-7));
        assert_eq!(bf16_of(1.0 + 3.0 * p(-8) - p(-30)), 1.0 + p(-7));
        // subnormal f16: the midpoint between 0 and the smallest subnormal
        assert_eq!(f16_of(p(-25) + p(-60)), p(-24));
        assert_eq!(f16_of(p(-25)), 0.0);
    }

    #[test]
    fn promote_types_match_promote_dtypes() {
        fn check<A: Promote<B>, B: Element>() {
            assert_eq!(
                <A::Output as Element>::DTYPE,
                A::DTYPE.promote(B::DTYPE),
                "{:?} {:?}",
                A::DTYPE,
                B::DTYPE
            );
        }
        fn with<A: Promote<f32> + Promote<f16> + Promote<bf16>>() {
            check::<A, f32>();
            check::<A, f16>();
            check::<A, bf16>();
        }
        with::<f32>();
        with::<f16>();
        with::<bf16>();
    }

    #[test]
    fn from_f64_ties_edges_and_specials() {
        let p = |e: i32| 2f64.powi(e);
        assert_eq!(f16_of(1.0 + p(-11)), 1.0); // tie to even
        assert_eq!(f16_of(1.0 + 3.0 * p(-11)), 1.0 + 2.0 * p(-10));
        assert_eq!(f16_of(65519.99), 65504.0);
        assert_eq!(f16_of(65520.0), f64::INFINITY);
        assert_eq!(f16_of(-f64::MAX), f64::NEG_INFINITY);
        let bf16_max = (2.0 - p(-7)) * p(127);
        let overflow_at = (2.0 - p(-8)) * p(127);
        assert_eq!(bf16_of(overflow_at * (1.0 - p(-40))), bf16_max);
        assert_eq!(bf16_of(overflow_at), f64::INFINITY);
        assert_eq!(bf16_of(f64::MAX), f64::INFINITY);
        let neg_tiny = f16_of(-1e-50);
        assert!(neg_tiny == 0.0 && neg_tiny.is_sign_negative());
        assert!(f16_of(f64::NAN).is_nan() && bf16_of(f64::NAN).is_nan());
        assert_eq!(f64_to_f32_odd(0.5), 0.5);
        assert_eq!(f64_to_f32_odd(-0.0).to_bits(), (-0.0f32).to_bits());
    }
}
