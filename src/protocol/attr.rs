//! Attribute arguments: the non-tensor values an aclnn phase 1 takes, as plain Rust values
//! and as the C arguments they become.
//!
//! An operator declares an attribute argument as `name: attr<T> = "cName"`, where `T`
//! implements [`Attribute`]: `T` is what the user passes (anything `Into<T>`), and
//! [`Attribute::C`] is the C type of the parameter, checked against the header with the
//! rest of the prototype. The value travels as an [`Attr`] (plain data, no heap); the
//! protocol turns it into the C argument: `aclCreateScalar` / `aclCreateIntArray` /
//! `aclCreateBoolArray` for [`Scalar`], [`IntList`] and [`BoolList`] (owned by the call or
//! the plan and destroyed by it), the value
//! itself for `bool`, `i8`, `i64`, `f64` (C `double`) and a dtype.

use crate::element::DType;
use ascend_sys::{aclBoolArray, aclDataType, aclIntArray, aclScalar, aclTensor, aclTensorList};
use std::ffi::c_void;
use std::fmt;

/// A scalar attribute (`aclScalar`), from a plain Rust number: `f64` and `f32` become
/// `ACL_DOUBLE` / `ACL_FLOAT`, `i64` and `i32` `ACL_INT64`, `bool` `ACL_BOOL` (as
/// torch_npu passes Python numbers). The operator converts it to its compute type.
///
/// ```
/// use ascendcl::protocol::Scalar;
/// assert_eq!(Scalar::from(-0.5), Scalar::F64(-0.5));
/// assert_eq!(Scalar::from(3), Scalar::I64(3));
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scalar {
    /// `ACL_DOUBLE`.
    F64(f64),
    /// `ACL_FLOAT`.
    F32(f32),
    /// `ACL_INT64`.
    I64(i64),
    /// `ACL_BOOL`.
    Bool(bool),
}

impl Scalar {
    /// Its value as an `f64` (booleans as 0 and 1), as the operators read it.
    pub fn to_f64(self) -> f64 {
        match self {
            Scalar::F64(v) => v,
            Scalar::F32(v) => f64::from(v),
            // Exact up to 2^53; beyond, the nearest double, as CANN's ToDouble.
            Scalar::I64(v) => v as f64,
            Scalar::Bool(v) => f64::from(u8::from(v)),
        }
    }
}

impl From<f64> for Scalar {
    fn from(v: f64) -> Self {
        Scalar::F64(v)
    }
}
impl From<f32> for Scalar {
    fn from(v: f32) -> Self {
        Scalar::F32(v)
    }
}
impl From<i64> for Scalar {
    fn from(v: i64) -> Self {
        Scalar::I64(v)
    }
}
impl From<i32> for Scalar {
    fn from(v: i32) -> Self {
        Scalar::I64(i64::from(v))
    }
}
impl From<bool> for Scalar {
    fn from(v: bool) -> Self {
        Scalar::Bool(v)
    }
}

/// The most elements an [`IntList`] holds (the most dims a tensor has).
pub const INT_LIST_CAPACITY: usize = crate::shape::MAX_DIMS;

/// An integer-list attribute (`aclIntArray`), stored inline (no heap) up to
/// [`INT_LIST_CAPACITY`] elements. A longer list converts, and is refused with a typed
/// error naming the argument when the call is validated.
///
/// ```
/// use ascendcl::protocol::IntList;
/// let dims = IntList::from(&[0i64, -1][..]);
/// assert_eq!(dims.get(), Some(&[0i64, -1][..]));
/// assert_eq!(IntList::from(&[0i64; 9][..]).get(), None);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct IntList {
    values: [i64; INT_LIST_CAPACITY],
    /// The length asked for, possibly above the capacity.
    len: usize,
}

impl IntList {
    /// The elements, or `None` for a list longer than [`INT_LIST_CAPACITY`].
    pub fn get(&self) -> Option<&[i64]> {
        self.values.get(..self.len)
    }

    /// The length asked for (possibly above the capacity).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the list is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl From<&[i64]> for IntList {
    fn from(v: &[i64]) -> Self {
        let mut values = [0i64; INT_LIST_CAPACITY];
        for (slot, x) in values.iter_mut().zip(v) {
            *slot = *x;
        }
        IntList {
            values,
            len: v.len(),
        }
    }
}
impl<const N: usize> From<&[i64; N]> for IntList {
    fn from(v: &[i64; N]) -> Self {
        IntList::from(&v[..])
    }
}
impl From<&Vec<i64>> for IntList {
    fn from(v: &Vec<i64>) -> Self {
        IntList::from(v.as_slice())
    }
}

impl fmt::Debug for IntList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.get() {
            Some(v) => v.fmt(f),
            None => write!(f, "[{} elements]", self.len),
        }
    }
}

/// The most elements a [`BoolList`] holds.
pub const BOOL_LIST_CAPACITY: usize = crate::shape::MAX_DIMS;

/// A bool-list attribute (`aclBoolArray`: an output mask, a flag per dim), stored inline
/// (no heap) up to [`BOOL_LIST_CAPACITY`] elements. A longer list converts, and is refused
/// with a typed error naming the argument when the call is validated.
///
/// ```
/// use ascendcl::protocol::BoolList;
/// let mask = BoolList::from(&[true, false, true][..]);
/// assert_eq!(mask.get(), Some(&[true, false, true][..]));
/// assert_eq!(BoolList::from(&[false; 9][..]).get(), None);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct BoolList {
    values: [bool; BOOL_LIST_CAPACITY],
    /// The length asked for, possibly above the capacity.
    len: usize,
}

impl BoolList {
    /// The elements, or `None` for a list longer than [`BOOL_LIST_CAPACITY`].
    pub fn get(&self) -> Option<&[bool]> {
        self.values.get(..self.len)
    }

    /// The length asked for (possibly above the capacity).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the list is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl From<&[bool]> for BoolList {
    fn from(v: &[bool]) -> Self {
        let mut values = [false; BOOL_LIST_CAPACITY];
        for (slot, x) in values.iter_mut().zip(v) {
            *slot = *x;
        }
        BoolList {
            values,
            len: v.len(),
        }
    }
}
impl<const N: usize> From<&[bool; N]> for BoolList {
    fn from(v: &[bool; N]) -> Self {
        BoolList::from(&v[..])
    }
}

impl fmt::Debug for BoolList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.get() {
            Some(v) => v.fmt(f),
            None => write!(f, "[{} elements]", self.len),
        }
    }
}

/// One attribute value, as the protocol carries it (plain data, no heap).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Attr {
    /// A C `bool`.
    Bool(bool),
    /// A C `int8_t`.
    I8(i8),
    /// A C `int64_t`.
    I64(i64),
    /// A C `double`.
    F64(f64),
    /// A C `float` (the optimizers' hyper-parameters: `aclnnApplyAdamWV2`'s `lr`, ...).
    F32(f32),
    /// A C `uint64_t`.
    U64(u64),
    /// An `aclDataType`.
    DType(DType),
    /// An `aclScalar *`.
    Scalar(Scalar),
    /// An `aclIntArray *`.
    Ints(IntList),
    /// An `aclBoolArray *`.
    Bools(BoolList),
}

impl Attr {
    /// The kind of C argument it becomes.
    pub const fn kind(&self) -> Kind {
        match self {
            Attr::Bool(_) => Kind::Bool,
            Attr::I8(_) => Kind::I8,
            Attr::I64(_) => Kind::I64,
            Attr::F64(_) => Kind::F64,
            Attr::F32(_) => Kind::F32,
            Attr::U64(_) => Kind::U64,
            Attr::DType(_) => Kind::DType,
            Attr::Scalar(_) => Kind::Scalar,
            Attr::Ints(_) => Kind::Ints,
            Attr::Bools(_) => Kind::Bools,
        }
    }
}

/// The kind of C argument an attribute is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// `bool`.
    Bool,
    /// `int8_t`.
    I8,
    /// `int64_t`.
    I64,
    /// `double`.
    F64,
    /// `float`.
    F32,
    /// `uint64_t`.
    U64,
    /// `aclDataType`.
    DType,
    /// `const aclScalar *`.
    Scalar,
    /// `const aclIntArray *`.
    Ints,
    /// `const aclBoolArray *`.
    Bools,
}

/// A Rust type an operator takes as an attribute argument (`name: attr<T> = "cName"` in
/// `operator!`): its value as an [`Attr`] and the C type of the parameter.
///
/// Implemented for [`Scalar`], [`IntList`], [`BoolList`], `bool`, `i8`, `i64`,
/// `u64` (C `uint64_t`), `f32` (C `float`), `f64` (C `double`), [`DType`] and the crate's
/// attribute enums ([`CubeMath`](crate::CubeMath), [`Reduction`](crate::Reduction)). A
/// user's enum implements it the same way:
///
/// ```
/// use ascendcl::protocol::{Attr, Attribute};
/// #[derive(Clone, Copy)]
/// enum Mode { Fast = 0, Exact = 1 }
/// impl Attribute for Mode {
///     type C = i64;
///     fn to_attr(self) -> Attr {
///         Attr::I64(self as i64)
///     }
/// }
/// ```
///
/// `to_attr` must give the variant of [`Attr`] that matches `C` (`I64` for `i64`, ...);
/// the protocol refuses a mismatch with [`Error::InvalidArgument`](crate::Error) before
/// any C call.
pub trait Attribute: Copy {
    /// The C type of the parameter.
    type C: CValue;
    /// The value as the protocol carries it.
    fn to_attr(self) -> Attr;
}

macro_rules! attribute {
    ($($t:ty => $c:ty, $variant:ident;)+) => {$(
        impl Attribute for $t {
            type C = $c;
            fn to_attr(self) -> Attr {
                Attr::$variant(self)
            }
        }
    )+};
}
attribute! {
    bool => bool, Bool;
    i8 => i8, I8;
    i64 => i64, I64;
    f64 => f64, F64;
    f32 => f32, F32;
    u64 => u64, U64;
    DType => aclDataType, DType;
    Scalar => *const aclScalar, Scalar;
    IntList => *const aclIntArray, Ints;
    BoolList => *const aclBoolArray, Bools;
}

impl Attribute for crate::CubeMath {
    type C = i8;
    fn to_attr(self) -> Attr {
        Attr::I8(self.as_i8())
    }
}

impl Attribute for crate::Reduction {
    type C = i64;
    fn to_attr(self) -> Attr {
        Attr::I64(self.as_i64())
    }
}

/// One C argument of phase 1, as the protocol passes it: a handle (tensor, scalar, int
/// array) or a plain value. Plain data; what it points to is owned elsewhere.
#[derive(Debug, Clone, Copy)]
pub struct CArg {
    pub(crate) ptr: *mut c_void,
    pub(crate) value: i64,
}

impl CArg {
    pub(crate) const NONE: CArg = CArg {
        ptr: std::ptr::null_mut(),
        value: 0,
    };

    pub(crate) fn handle<T>(p: *mut T) -> CArg {
        CArg {
            ptr: p.cast(),
            value: 0,
        }
    }

    pub(crate) fn value(v: i64) -> CArg {
        CArg {
            ptr: std::ptr::null_mut(),
            value: v,
        }
    }
}

/// A C parameter type of phase 1, read from a [`CArg`]: tensor, scalar, int-array and
/// bool-array pointers, `bool`, `int8_t`, `int64_t`, `uint64_t`, `float`, `double`,
/// `aclDataType`. Sealed.
pub trait CValue: Copy + sealed::Sealed {
    /// The attribute kind of the parameter (`None` for a tensor).
    const KIND: Option<Kind>;
    /// The argument as this C type.
    fn from_arg(arg: CArg) -> Self;
}

mod sealed {
    pub trait Sealed {}
}

macro_rules! c_value {
    (ptr $($t:ty => $kind:expr;)+) => {$(
        impl sealed::Sealed for $t {}
        impl CValue for $t {
            const KIND: Option<Kind> = $kind;
            fn from_arg(arg: CArg) -> Self {
                arg.ptr.cast()
            }
        }
    )+};
    (int $($t:ty => $kind:expr;)+) => {$(
        impl sealed::Sealed for $t {}
        impl CValue for $t {
            const KIND: Option<Kind> = $kind;
            fn from_arg(arg: CArg) -> Self {
                // Made from a value of this type (the kinds are checked to match).
                arg.value as $t
            }
        }
    )+};
}
c_value! { ptr
    *const aclTensor => None;
    *mut aclTensor => None;
    *const aclTensorList => None;
    *const aclScalar => Some(Kind::Scalar);
    *const aclIntArray => Some(Kind::Ints);
    *const aclBoolArray => Some(Kind::Bools);
}
c_value! { int
    i8 => Some(Kind::I8);
    i64 => Some(Kind::I64);
    // Carried as its bits in the i64 (see `plain`).
    u64 => Some(Kind::U64);
    aclDataType => Some(Kind::DType);
}
impl sealed::Sealed for f64 {}
impl CValue for f64 {
    const KIND: Option<Kind> = Some(Kind::F64);
    fn from_arg(arg: CArg) -> Self {
        // Carried as its bits (see `plain`).
        f64::from_bits(arg.value as u64)
    }
}
impl sealed::Sealed for f32 {}
impl CValue for f32 {
    const KIND: Option<Kind> = Some(Kind::F32);
    fn from_arg(arg: CArg) -> Self {
        // Carried as its 32 bits (see `plain`).
        f32::from_bits(arg.value as u32)
    }
}
impl sealed::Sealed for bool {}
impl CValue for bool {
    const KIND: Option<Kind> = Some(Kind::Bool);
    fn from_arg(arg: CArg) -> Self {
        arg.value != 0
    }
}

/// The C argument of a plain-valued attribute (scalars and int arrays are made by the
/// handles).
pub(crate) fn plain(attr: &Attr) -> Option<CArg> {
    match *attr {
        Attr::Bool(v) => Some(CArg::value(i64::from(v))),
        Attr::I8(v) => Some(CArg::value(i64::from(v))),
        Attr::I64(v) => Some(CArg::value(v)),
        Attr::F64(v) => Some(CArg::value(v.to_bits() as i64)),
        Attr::F32(v) => Some(CArg::value(i64::from(v.to_bits()))),
        Attr::U64(v) => Some(CArg::value(v as i64)),
        Attr::DType(d) => Some(CArg::value(i64::from(d.acl()))),
        Attr::Scalar(_) | Attr::Ints(_) | Attr::Bools(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_double_attribute_reaches_c_bit_for_bit() {
        for v in [
            0.5,
            -0.0,
            f64::MAX,
            f64::MIN_POSITIVE / 2.0,
            f64::NEG_INFINITY,
            f64::NAN,
        ] {
            let arg = plain(&f64::to_attr(v)).expect("a plain value");
            let back = <f64 as CValue>::from_arg(arg);
            assert_eq!(back.to_bits(), v.to_bits(), "{v}");
        }
        assert_eq!(<f64 as CValue>::KIND, Some(Attr::F64(1.0).kind()));
    }

    #[test]
    fn a_float_attribute_reaches_c_bit_for_bit() {
        for v in [
            1e-3f32,
            -0.0,
            f32::MAX,
            f32::MIN_POSITIVE / 2.0,
            f32::INFINITY,
            f32::NAN,
        ] {
            let arg = plain(&f32::to_attr(v)).expect("a plain value");
            let back = <f32 as CValue>::from_arg(arg);
            assert_eq!(back.to_bits(), v.to_bits(), "{v}");
        }
        assert_eq!(<f32 as CValue>::KIND, Some(Attr::F32(1.0).kind()));
    }

    #[test]
    fn uint64_attributes_keep_their_extremes() {
        for v in [0u64, 1, u64::MAX, 1 << 63] {
            let back = <u64 as CValue>::from_arg(plain(&v.to_attr()).expect("plain"));
            assert_eq!(back, v);
        }
        assert_eq!(<u64 as CValue>::KIND, Some(Kind::U64));
    }
}
