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

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for half::f16 {}
    impl Sealed for half::bf16 {}
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
        f16::from_f64(value)
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
        bf16::from_f64(value)
    }
    #[inline]
    fn to_bits_u32(self) -> u32 {
        u32::from(self.to_bits())
    }
}
