//! `aclnnInplaceFillScalar`: sets every element of a tensor to one value.

use crate::device::SocFamily;
use crate::element::DType;
use crate::protocol::Scalar;

crate::operator! {
    @verified
    /// `aclnnInplaceFillScalar`: `selfRef = value`. Every product but the Atlas 200I/500 A2
    /// (310B); FLOAT, FLOAT16 and the integer types everywhere, BF16 on Atlas A2/A3.
    pub struct InplaceFillScalar: aclnnInplaceFillScalar, aclnnInplaceFillScalarGetWorkspaceSize;
    products: |soc: SocFamily| soc != SocFamily::Atlas310B;
    dtypes: |soc: SocFamily, dtype: DType| dtype != DType::BF16 || soc.has_bf16();
    rule: crate::protocol::rules::same;

    /// `x = value` in place, queued on `stream` (`aclnnInplaceFillScalar`): `x` is
    /// `&mut DeviceTensor<_>` or a [`TensorViewMut`](crate::TensorViewMut) in any layout,
    /// up to 8 dims, 0-D and empty included; `value` is a plain number (`f64`, `f32`, `i64`,
    /// `i32`, `bool`), converted to `x`'s type on the device.
    ///
    /// # Errors
    /// [`Error::DeviceMismatch`](crate::Error::DeviceMismatch),
    /// [`Error::UnsupportedOperator`](crate::Error::UnsupportedOperator),
    /// [`Error::UnsupportedDtype`](crate::Error::UnsupportedDtype);
    /// [`Error::Aclnn`](crate::Error::Aclnn) from the library.
    ///
    /// ```
    /// # fn main() -> ascendcl::Result<()> {
    /// use ascendcl::{DeviceTensor, Runtime, fill_inplace};
    /// let stream = Runtime::auto()?.device(0)?.stream()?;
    /// let mut x = DeviceTensor::<f32>::zeros(&stream, &[2, 3])?;
    /// fill_inplace(&mut x, 0.5, &stream)?;
    /// assert!(x.to_array::<ndarray::IxDyn>(&stream)?.iter().all(|v| *v == 0.5));
    /// # Ok(()) }
    /// ```
    pub fn fill_inplace<T>(x: inplace<T> = "selfRef", value: attr<Scalar> = "value");

    /// A reusable [`fill_inplace`] for a fixed layout and value (a [`Plan`](crate::Plan)).
    ///
    /// ```
    /// # fn main() -> ascendcl::Result<()> {
    /// use ascendcl::{DeviceTensor, InplaceFillScalarPlan, Runtime};
    /// let stream = Runtime::auto()?.device(0)?.stream()?;
    /// let mut x = DeviceTensor::<f32>::zeros(&stream, &[3])?;
    /// let mut plan = InplaceFillScalarPlan::new(&x, -2, &stream)?;
    /// plan.launch(&mut x, &stream)?;
    /// assert_eq!(x.to_array(&stream)?, ndarray::array![-2.0f32, -2.0, -2.0].into_dyn());
    /// # Ok(()) }
    /// ```
    pub type InplaceFillScalarPlan;
}
