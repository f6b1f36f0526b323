//! `aclnnMul` and `aclnnInplaceMul`: elementwise product, broadcasting.

use crate::device::SocFamily;
use crate::element::DType;
use crate::protocol::rules;

/// Every product but the Atlas 200I/500 A2 (310B).
fn products(soc: SocFamily) -> bool {
    soc != SocFamily::Atlas310B
}

/// FLOAT, FLOAT16 and the integer types everywhere, BF16 on Atlas A2/A3.
fn dtypes(soc: SocFamily, dtype: DType) -> bool {
    dtype != DType::BF16 || soc.has_bf16()
}

crate::operator! {
    @verified
    /// `aclnnMul`: `out = self · other`.
    pub struct Mul: aclnnMul, aclnnMulGetWorkspaceSize;
    products: products;
    dtypes: dtypes;
    rule: rules::broadcast;

    /// `out = a · b` elementwise, queued on `stream` (`aclnnMul`).
    ///
    /// * `a` (self), `b` (other): any [`AsTensorView`](crate::AsTensorView)s of `f32`,
    ///   `f16`, `bf16` (on Atlas A2/A3 only) or an integer type, broadcastable together
    ///   (numpy rules, up to 8 dims); computed in their promoted type
    ///   ([`DType::promote`](crate::DType::promote): same → same, two floating types → f32,
    ///   integer with floating → the floating type, two integers → the wider). Integer
    ///   results wrap to their width; the simulator computes them exactly below 2^53.
    /// * `out`: of the broadcast shape, any dtype the promote casts to (not a floating
    ///   promote to an integer out), in any layout.
    ///
    /// Every product but 310B. Empty inputs succeed without computing anything.
    ///
    /// # Errors
    /// [`Error::DeviceMismatch`](crate::Error::DeviceMismatch),
    /// [`Error::UnsupportedOperator`](crate::Error::UnsupportedOperator),
    /// [`Error::UnsupportedDtype`](crate::Error::UnsupportedDtype),
    /// [`Error::NotBroadcastable`](crate::Error::NotBroadcastable),
    /// [`Error::ShapeMismatch`](crate::Error::ShapeMismatch);
    /// [`Error::Aclnn`](crate::Error::Aclnn) from the library.
    ///
    /// ```
    /// # fn main() -> ascendcl::Result<()> {
    /// use ascendcl::{DeviceTensor, Runtime, mul};
    /// use ndarray::array;
    /// let stream = Runtime::auto()?.device(0)?.stream()?;
    /// let a = DeviceTensor::from_array(&stream, &array![[1.0f32, 2.0], [3.0, 4.0]])?;
    /// let b = DeviceTensor::from_array(&stream, &array![[10.0f32], [-1.0]])?; // broadcast
    /// let mut out = DeviceTensor::<f32>::zeros(&stream, &[2, 2])?;
    /// mul(&a, &b, &mut out, &stream)?;
    /// assert_eq!(out.to_array(&stream)?, array![[10.0f32, 20.0], [-3.0, -4.0]].into_dyn());
    /// # Ok(()) }
    /// ```
    pub fn mul<A, B, O>(a: input<A> = "self", b: input<B> = "other", out: output<O> = "out");

    /// A reusable [`mul`] for fixed layouts and element types (a [`Plan`](crate::Plan)).
    ///
    /// ```
    /// # fn main() -> ascendcl::Result<()> {
    /// use ascendcl::{DeviceTensor, MulPlan, Runtime};
    /// let stream = Runtime::auto()?.device(0)?.stream()?;
    /// let a = DeviceTensor::from_array(&stream, &ndarray::array![1.5f32, 2.0])?;
    /// let mut out = DeviceTensor::<f32>::zeros(&stream, &[2])?;
    /// let mut plan = MulPlan::new(&a, &a, &out, &stream)?;
    /// plan.launch(&a, &a, &mut out, &stream)?;
    /// assert_eq!(out.to_array(&stream)?, ndarray::array![2.25f32, 4.0].into_dyn());
    /// # Ok(()) }
    /// ```
    pub type MulPlan;
    allocating: mul_new;
}

crate::operator! {
    @verified
    /// `aclnnInplaceMul`: `selfRef = selfRef · other`.
    pub struct InplaceMul: aclnnInplaceMul, aclnnInplaceMulGetWorkspaceSize;
    products: products;
    dtypes: dtypes;
    rule: rules::broadcast;

    /// `a = a · b` in place, queued on `stream` (`aclnnInplaceMul`): as [`mul`] with `out`
    /// = `a`, and `b` broadcast to `a`'s shape.
    ///
    /// # Errors
    /// As [`mul`].
    ///
    /// ```
    /// # fn main() -> ascendcl::Result<()> {
    /// use ascendcl::{DeviceTensor, Runtime, mul_inplace};
    /// let stream = Runtime::auto()?.device(0)?.stream()?;
    /// let mut a = DeviceTensor::from_array(&stream, &ndarray::array![1.0f32, 2.0])?;
    /// let b = DeviceTensor::from_array(&stream, &ndarray::array![3.0f32])?;
    /// mul_inplace(&mut a, &b, &stream)?;
    /// assert_eq!(a.to_array(&stream)?, ndarray::array![3.0f32, 6.0].into_dyn());
    /// # Ok(()) }
    /// ```
    pub fn mul_inplace<A, B>(a: inplace<A> = "selfRef", b: input<B> = "other");

    /// A reusable [`mul_inplace`] (a [`Plan`](crate::Plan)).
    pub type InplaceMulPlan;
}
