//! `aclnnInplaceMaskedFillScalar` (torch.Tensor.masked_fill_): a value written where a
//! broadcast mask holds.

use crate::device::SocFamily;
use crate::element::DType;
use crate::protocol::{Arg, Scalar, rules};

/// `selfRef` FLOAT, FLOAT16, INT32, INT64, INT8 or BOOL, BF16 on Atlas A2/A3; `mask`
/// BOOL only.
fn dtypes(soc: SocFamily, arg: &Arg, dtype: DType) -> bool {
    match arg.name {
        "mask" => dtype == DType::Bool,
        _ => match dtype {
            DType::F32 | DType::F16 | DType::I32 | DType::I64 | DType::I8 | DType::Bool => true,
            DType::BF16 => soc.has_bf16(),
            _ => false,
        },
    }
}

crate::operator! {
    @verified
    /// `aclnnInplaceMaskedFillScalar`: `selfRef[i] = value` where `mask[i]`, mask
    /// broadcast to selfRef. Every product but the Atlas 200I/500 A2 (310B), as the vendor
    /// documents; BF16 on Atlas A2/A3.
    pub struct InplaceMaskedFillScalar: aclnnInplaceMaskedFillScalar,
        aclnnInplaceMaskedFillScalarGetWorkspaceSize;
    products: |soc: SocFamily| soc != SocFamily::Atlas310B;
    arg_dtypes: dtypes;
    rule: rules::broadcast;

    /// Writes `value` into the elements of `x` where `mask` is true, in place, queued on
    /// `stream` (`aclnnInplaceMaskedFillScalar`).
    ///
    /// * `x` (selfRef): `&mut DeviceTensor<_>` or a [`TensorViewMut`](crate::TensorViewMut)
    ///   in any layout of `f32`, `f16`, `i32`, `i64`, `i8`, `bool`, or `bf16` on Atlas
    ///   A2/A3; up to 8 dims, 0-D and empty included.
    /// * `mask`: `bool`, broadcast to `x`'s shape (numpy rules; it may not grow `x`).
    /// * `value`: a plain number (`f64`, `f32`, `i64`, `i32`, `bool`), converted once to
    ///   `x`'s type by the device (floating to integer truncates toward zero, nonzero to
    ///   `bool` is true). Its type is not checked against `x`'s.
    ///
    /// ```
    /// # fn main() -> ascendcl::Result<()> {
    /// use ascendcl::{DeviceTensor, Runtime, masked_fill_scalar_inplace};
    /// use ndarray::array;
    /// let stream = Runtime::auto()?.device(0)?.stream()?;
    /// let mut x = DeviceTensor::from_array(&stream, &array![[1.0f32, 2.0], [3.0, 4.0]])?;
    /// let mask = DeviceTensor::from_array(&stream, &array![false, true])?;
    /// masked_fill_scalar_inplace(&mut x, &mask, -1.5, &stream)?;
    /// assert_eq!(x.to_array(&stream)?, array![[1.0f32, -1.5], [3.0, -1.5]].into_dyn());
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// [`Error::DeviceMismatch`](crate::Error::DeviceMismatch),
    /// [`Error::UnsupportedOperator`](crate::Error::UnsupportedOperator),
    /// [`Error::UnsupportedDtype`](crate::Error::UnsupportedDtype),
    /// [`Error::TooManyDims`](crate::Error::TooManyDims),
    /// [`Error::NotBroadcastable`](crate::Error::NotBroadcastable),
    /// [`Error::ShapeMismatch`](crate::Error::ShapeMismatch) (a mask that would grow `x`);
    /// [`Error::Aclnn`](crate::Error::Aclnn) from the library.
    pub fn masked_fill_scalar_inplace<T, M>(
        x: inplace<T> = "selfRef",
        mask: input<M> = "mask",
        value: attr<Scalar> = "value",
    );

    /// A reusable [`masked_fill_scalar_inplace`] for fixed layouts and value (a
    /// [`Plan`](crate::Plan)).
    ///
    /// ```
    /// # fn main() -> ascendcl::Result<()> {
    /// use ascendcl::{DeviceTensor, InplaceMaskedFillScalarPlan, Runtime};
    /// use ndarray::array;
    /// let stream = Runtime::auto()?.device(0)?.stream()?;
    /// let mut x = DeviceTensor::from_array(&stream, &array![1i32, 2, 3])?;
    /// let mask = DeviceTensor::from_array(&stream, &array![true, false, true])?;
    /// let mut plan = InplaceMaskedFillScalarPlan::new(&x, &mask, 9.9, &stream)?;
    /// plan.launch(&mut x, &mask, &stream)?;
    /// assert_eq!(x.to_array(&stream)?, array![9i32, 2, 9].into_dyn());
    /// # Ok(()) }
    /// ```
    pub type InplaceMaskedFillScalarPlan;
}
