//! The element types of tensors, shared by the device side and the CPU reference: the
//! floating-point ones every operator computes in ([`FloatElement`]) and the integer
//! ones of labels and indices.

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
    /// Two's-complement 32-bit integer (`ACL_INT32`).
    I32,
    /// Two's-complement 64-bit integer (`ACL_INT64`).
    I64,
    /// Two's-complement 8-bit integer (`ACL_INT8`).
    I8,
    /// Unsigned 8-bit integer (`ACL_UINT8`).
    U8,
    /// Boolean, one byte per element (`ACL_BOOL`): masks and comparison results.
    Bool,
    /// IEEE binary64 (`ACL_DOUBLE`).
    F64,
}

impl DType {
    /// The `aclDataType` value of this type.
    pub const fn acl(self) -> aclDataType {
        match self {
            DType::F32 => ascend_sys::ACL_FLOAT,
            DType::F16 => ascend_sys::ACL_FLOAT16,
            DType::BF16 => ascend_sys::ACL_BF16,
            DType::I32 => ascend_sys::ACL_INT32,
            DType::I64 => ascend_sys::ACL_INT64,
            DType::I8 => ascend_sys::ACL_INT8,
            DType::U8 => ascend_sys::ACL_UINT8,
            DType::Bool => ascend_sys::ACL_BOOL,
            DType::F64 => ascend_sys::ACL_DOUBLE,
        }
    }

    /// Whether this is a floating-point type (f32, f16, bf16, f64).
    pub const fn is_float(self) -> bool {
        matches!(self, DType::F32 | DType::F16 | DType::BF16 | DType::F64)
    }

    /// Whether this is f32, f16 or bf16: the types the AI Core's matrix and vector
    /// operators (Mish, MatMul, MseLoss, ...) compute in; f64 and the integer types go
    /// through copies, casts, fills and the operator families whose rows list them.
    pub const fn is_core_float(self) -> bool {
        matches!(self, DType::F32 | DType::F16 | DType::BF16)
    }

    /// Size of one element in bytes.
    pub const fn size(self) -> usize {
        match self {
            DType::I64 | DType::F64 => 8,
            DType::F32 | DType::I32 => 4,
            DType::F16 | DType::BF16 => 2,
            DType::I8 | DType::U8 | DType::Bool => 1,
        }
    }

    /// CANN's name for the type.
    pub const fn name(self) -> &'static str {
        match self {
            DType::F32 => "FLOAT",
            DType::F16 => "FLOAT16",
            DType::BF16 => "BF16",
            DType::I32 => "INT32",
            DType::I64 => "INT64",
            DType::I8 => "INT8",
            DType::U8 => "UINT8",
            DType::Bool => "BOOL",
            DType::F64 => "DOUBLE",
        }
    }

    /// The dtype both operands are cast to before computing, CANN's `PromoteType`: the
    /// same type stays; two different floating types compute in f32 (f16+f32, bf16+f32
    /// and f16+bf16 all give f32); a floating type with an integer one gives the floating
    /// type; two integer types give the wider (i32+i64 → i64), and i8+u8 gives INT16,
    /// which no element type of this crate holds: `None` then. BOOL with any other type
    /// gives the other type; f64 with any type gives f64.
    ///
    /// ```
    /// use ascendcl::DType;
    /// assert_eq!(DType::F16.promote(DType::BF16), Some(DType::F32));
    /// assert_eq!(DType::I64.promote(DType::F16), Some(DType::F16));
    /// assert_eq!(DType::I32.promote(DType::I64), Some(DType::I64));
    /// assert_eq!(DType::U8.promote(DType::I8), None); // INT16
    /// assert_eq!(DType::Bool.promote(DType::U8), Some(DType::U8));
    /// ```
    pub const fn promote(self, other: DType) -> Option<DType> {
        use DType::*;
        const fn rank(d: DType) -> u8 {
            match d {
                U8 | I8 => 0,
                I32 => 1,
                _ => 2,
            }
        }
        Some(match (self, other) {
            (a, b) if a as u8 == b as u8 => a,
            (Bool, x) | (x, Bool) => x,
            (F64, _) | (_, F64) => F64,
            (F16 | BF16, F16 | BF16) => F32,
            (F32, _) | (_, F32) => F32,
            (a @ (F16 | BF16), _) | (_, a @ (F16 | BF16)) => a,
            (I8, U8) | (U8, I8) => return None,
            (a, b) => {
                if rank(a) >= rank(b) {
                    a
                } else {
                    b
                }
            }
        })
    }
}

/// The Rust name (`f32`, `f16`, `bf16`, `i32`, ...); [`DType::name`] gives CANN's.
impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            DType::F32 => "f32",
            DType::F16 => "f16",
            DType::BF16 => "bf16",
            DType::I32 => "i32",
            DType::I64 => "i64",
            DType::I8 => "i8",
            DType::U8 => "u8",
            DType::Bool => "bool",
            DType::F64 => "f64",
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

    /// The sealing supertrait of [`Element`](super::Element), with what a download does
    /// to device bytes before they are read as `Self`.
    pub trait Sealed: Sized {
        /// Makes `bytes` (whole elements of `Self`, as the device holds them) valid values
        /// of `Self`. Every bit pattern is valid for the numeric types (nothing to do); a
        /// BOOL tensor's bytes may be anything (uninitialised memory, a raw write), and
        /// CANN reads any nonzero byte as true, so a download normalises them to 0 and 1.
        #[inline]
        fn normalise_bytes(bytes: &mut [u8]) {
            let _ = bytes;
        }
        /// Whether [`normalise_bytes`](Sealed::normalise_bytes) can change anything.
        const NORMALISES: bool = false;
    }

    /// The sealing supertrait of [`FloatElement`](super::FloatElement), with the
    /// crate-internal methods that map a generic element type to its own type.
    pub trait Float: Sealed {
        /// `view` as the variant of its element type.
        fn typed<D: Dimension>(view: ArrayView<'_, Self, D>) -> TypedView<'_, D>;
        /// `view` as the variant of its element type.
        fn typed_mut<D: Dimension>(view: ArrayViewMut<'_, Self, D>) -> TypedViewMut<'_, D>;
    }

    macro_rules! sealed {
        ($($t:ty => $variant:ident),*) => {$(
            impl Sealed for $t {}
            impl Float for $t {
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
    impl Sealed for i32 {}
    impl Sealed for i64 {}
    impl Sealed for i8 {}
    impl Sealed for u8 {}
    impl Sealed for f64 {}
    impl Sealed for bool {
        const NORMALISES: bool = true;
        #[inline]
        fn normalise_bytes(bytes: &mut [u8]) {
            for b in bytes {
                *b = u8::from(*b != 0);
            }
        }
    }
}

/// An element type of device and host tensors: the floating-point `f32`, [`half::f16`]
/// and [`half::bf16`] ([`FloatElement`]) and `f64`, the integers `i32`, `i64`, `i8` and `u8`
/// (labels, indices), and `bool` (masks, comparison results). Sealed.
///
/// A BOOL tensor's device bytes may be any value (memory written by raw access or a
/// kernel of the user's, or never written); CANN reads every nonzero byte as true. A
/// download never makes an invalid `bool`: it normalises every nonzero byte to `true`
/// (through the stream's staging buffer, never reading the raw bytes as `bool`), and a
/// download into a [`HostTensor`](crate::HostTensor) waits for its copy to normalise them.
/// A copy from BOOL to another type reads nonzero as 1, and a copy to BOOL gives true for
/// every nonzero value (NaN included).
///
/// Every element type uploads, downloads, views, [`copy`](crate::copy)s (between element
/// types too, as `aclnnInplaceCopy` casts: float to integer truncates toward zero and
/// saturates, NaN gives 0; integer to integer wraps; integer to float rounds to nearest
/// even), [`zero_inplace`](crate::zero_inplace)s and
/// [`fill_inplace`](crate::fill_inplace)s. [`add`](crate::add), [`mul`](crate::mul) and
/// [`reduce_sum`](crate::reduce_sum) take integers too, as CANN does (results wrap to their
/// width; mixed dtypes follow [`DType::promote`]); the other operators compute in
/// floating types only and refuse an integer tensor with
/// [`Error::UnsupportedDtype`](crate::Error::UnsupportedDtype) before any C call. The CPU
/// references take [`FloatElement`]s.
///
/// ```
/// # fn main() -> ascendcl::Result<()> {
/// use ascendcl::{DeviceTensor, Runtime, copy};
/// use ndarray::array;
/// let stream = Runtime::auto()?.device(0)?.stream()?;
/// let labels = DeviceTensor::from_array(&stream, &array![3i64, -1, 7])?;
/// let mut as_float = DeviceTensor::<f32>::zeros(&stream, &[3])?;
/// copy(&labels, &mut as_float, &stream)?; // INT64 -> FLOAT on the device
/// assert_eq!(as_float.to_array(&stream)?, array![3.0f32, -1.0, 7.0].into_dyn());
/// # Ok(()) }
/// ```
pub trait Element:
    sealed::Sealed + Copy + Default + PartialEq + fmt::Debug + Send + Sync + 'static
{
    /// The CANN data type of `Self`.
    const DTYPE: DType;

    /// Widening to f32: exact for the floating types, rounded to nearest for integers
    /// beyond 2^24.
    fn to_f32(self) -> f32;
    /// Widening to f64: exact, but for i64 beyond 2^53 (rounded to nearest).
    fn to_f64(self) -> f64;
    /// Rounds to nearest, ties to even, once; an integer type truncates toward zero and
    /// saturates (NaN gives 0), as the device's cast does.
    fn from_f32(value: f32) -> Self;
    /// As [`from_f32`](Element::from_f32), from f64 (rounded once, not through f32).
    fn from_f64(value: f64) -> Self;
    /// The raw bits, widened to u32 (for bitwise comparisons); of an `i64` or `f64`, the
    /// low 32 bits ([`to_bits_u64`](Element::to_bits_u64) has them all).
    fn to_bits_u32(self) -> u32;
    /// The raw bits, widened to u64.
    fn to_bits_u64(self) -> u64 {
        u64::from(self.to_bits_u32())
    }
}

/// A floating-point element type (`f32`, [`half::f16`], [`half::bf16`]): what the
/// arithmetic operators compute in, and what their CPU references take. An integer type
/// is refused at compile time there:
///
/// ```compile_fail
/// let x = ndarray::array![1i32, 2];
/// let _ = ascendcl::reference::mish(x.view());
/// ```
pub trait FloatElement: Element + sealed::Float {}

impl FloatElement for f32 {}
impl FloatElement for f16 {}
impl FloatElement for bf16 {}

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
pub trait Promote<Rhs: Element>: FloatElement {
    /// The compute type.
    type Output: FloatElement;
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

macro_rules! integer {
    ($($t:ty => $d:ident, $bits:ty;)*) => {$(
        impl Element for $t {
            const DTYPE: DType = DType::$d;
            #[inline]
            fn to_f32(self) -> f32 {
                self as f32
            }
            #[inline]
            fn to_f64(self) -> f64 {
                self as f64
            }
            #[inline]
            fn from_f32(value: f32) -> Self {
                // `as` truncates toward zero, saturates and maps NaN to 0: the device's cast.
                value as $t
            }
            #[inline]
            fn from_f64(value: f64) -> Self {
                value as $t
            }
            #[inline]
            fn to_bits_u32(self) -> u32 {
                self as $bits as u32
            }
            #[inline]
            fn to_bits_u64(self) -> u64 {
                self as $bits as u64
            }
        }
    )*};
}
integer! {
    i32 => I32, u32;
    i64 => I64, u64;
    i8 => I8, u8;
    u8 => U8, u8;
}

impl Element for f64 {
    const DTYPE: DType = DType::F64;
    #[inline]
    fn to_f32(self) -> f32 {
        self as f32
    }
    #[inline]
    fn to_f64(self) -> f64 {
        self
    }
    #[inline]
    fn from_f32(value: f32) -> Self {
        f64::from(value)
    }
    #[inline]
    fn from_f64(value: f64) -> Self {
        value
    }
    #[inline]
    fn to_bits_u32(self) -> u32 {
        self.to_bits() as u32
    }
    #[inline]
    fn to_bits_u64(self) -> u64 {
        self.to_bits()
    }
}

/// BOOL: false is 0 and true is 1 when widened; a conversion from a number gives true for
/// any nonzero value, NaN included, as the device's cast to BOOL does.
impl Element for bool {
    const DTYPE: DType = DType::Bool;
    #[inline]
    fn to_f32(self) -> f32 {
        f32::from(u8::from(self))
    }
    #[inline]
    fn to_f64(self) -> f64 {
        f64::from(u8::from(self))
    }
    #[inline]
    fn from_f32(value: f32) -> Self {
        value != 0.0
    }
    #[inline]
    fn from_f64(value: f64) -> Self {
        value != 0.0
    }
    #[inline]
    fn to_bits_u32(self) -> u32 {
        u32::from(self)
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

    /// CANN's PromoteType table, restricted to this crate's dtypes (symmetric).
    #[test]
    fn promote_follows_cann_table() {
        use DType::*;
        let all = [F32, F16, BF16, I8, I32, I64, U8, Bool, F64];
        // rows and columns in the order of `all`; None: INT16
        let table = [
            [F32, F32, F32, F32, F32, F32, F32, F32, F64],
            [F32, F16, F32, F16, F16, F16, F16, F16, F64],
            [F32, F32, BF16, BF16, BF16, BF16, BF16, BF16, F64],
            [F32, F16, BF16, I8, I32, I64, F32, I8, F64],
            [F32, F16, BF16, I32, I32, I64, I32, I32, F64],
            [F32, F16, BF16, I64, I64, I64, I64, I64, F64],
            [F32, F16, BF16, F32, I32, I64, U8, U8, F64],
            [F32, F16, BF16, I8, I32, I64, U8, Bool, F64],
            [F64, F64, F64, F64, F64, F64, F64, F64, F64],
        ];
        for (i, a) in all.iter().enumerate() {
            for (j, b) in all.iter().enumerate() {
                let want = if matches!((a, b), (I8, U8) | (U8, I8)) {
                    None
                } else {
                    Some(table[i][j])
                };
                assert_eq!(a.promote(*b), want, "{a} {b}");
            }
        }
    }

    #[test]
    fn promote_types_match_promote_dtypes() {
        fn check<A: Promote<B>, B: Element>() {
            assert_eq!(
                Some(<A::Output as Element>::DTYPE),
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
        // integers: truncation toward zero, saturation, NaN to 0
        assert_eq!(<i32 as Element>::from_f64(-2.9), -2);
        assert_eq!(<u8 as Element>::from_f32(300.0), 255);
        assert_eq!(<i8 as Element>::from_f32(f32::NAN), 0);
        assert_eq!(<i64 as Element>::from_f64(f64::NEG_INFINITY), i64::MIN);
        assert_eq!((-1i64).to_bits_u64(), u64::MAX);
        assert_eq!((-1i8).to_bits_u32(), 0xff);
        assert_eq!(f64_to_f32_odd(-0.0).to_bits(), (-0.0f32).to_bits());
    }

    #[test]
    fn bool_converts_as_the_device_casts() {
        assert!(<bool as Element>::from_f32(f32::NAN));
        assert!(<bool as Element>::from_f64(-0.5));
        assert!(!<bool as Element>::from_f64(-0.0));
        assert_eq!(
            (true.to_f64(), false.to_f32(), true.to_bits_u64()),
            (1.0, 0.0, 1)
        );
        let mut bytes = [0u8, 1, 2, 255, 0x80];
        <bool as sealed::Sealed>::normalise_bytes(&mut bytes);
        assert_eq!(bytes, [0, 1, 1, 1, 1]);
        let mut same = [7u8, 0];
        <u8 as sealed::Sealed>::normalise_bytes(&mut same);
        assert_eq!(same, [7, 0]);
    }
}
