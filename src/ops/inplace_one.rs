//! `aclnnInplaceOne`: sets every element of a tensor to one.

use crate::device::SocFamily;
use crate::element::DType;

crate::operator! {
    @verified
    /// `aclnnInplaceOne`: `selfRef = 1`. Every product but the Atlas 200I/500 A2 (310B);
    /// every dtype of this crate, BF16 on Atlas A2/A3 only.
    pub struct InplaceOne: aclnnInplaceOne, aclnnInplaceOneGetWorkspaceSize;
    products: |soc: SocFamily| soc != SocFamily::Atlas310B;
    dtypes: |soc: SocFamily, dtype: DType| dtype != DType::BF16 || soc.has_bf16();
    rule: crate::protocol::rules::same;

    /// `x = 1` in place, queued on `stream` (`aclnnInplaceOne`): `x` is
    /// `&mut DeviceTensor<_>` or a [`TensorViewMut`](crate::TensorViewMut) of any element
    /// type of this crate (`bf16` on Atlas A2/A3 only; `true` for `bool`) in any layout (a
    /// strided view sets only its elements), up to 8 dims, 0-D and empty included.
    ///
    /// # Errors
    /// [`Error::DeviceMismatch`](crate::Error::DeviceMismatch),
    /// [`Error::UnsupportedOperator`](crate::Error::UnsupportedOperator) (310B),
    /// [`Error::UnsupportedDtype`](crate::Error::UnsupportedDtype) (`bf16` off Atlas
    /// A2/A3), [`Error::TooManyDims`](crate::Error::TooManyDims);
    /// [`Error::Aclnn`](crate::Error::Aclnn) from the library.
    ///
    /// ```
    /// # fn main() -> ascendcl::Result<()> {
    /// use ascendcl::{DeviceTensor, Runtime, one_inplace};
    /// use ndarray::array;
    /// let stream = Runtime::auto()?.device(0)?.stream()?;
    /// let mut x = DeviceTensor::<i32>::zeros(&stream, &[2, 2])?;
    /// one_inplace(x.view_mut().slice(1, 0, 1, 1)?, &stream)?; // the first column
    /// assert_eq!(x.to_array(&stream)?, array![[1, 0], [1, 0]].into_dyn());
    /// # Ok(()) }
    /// ```
    pub fn one_inplace<T>(x: inplace_const<T> = "selfRef");

    /// A reusable [`one_inplace`] for a fixed layout (a [`Plan`](crate::Plan)).
    ///
    /// ```
    /// # fn main() -> ascendcl::Result<()> {
    /// use ascendcl::{DeviceTensor, InplaceOnePlan, Runtime};
    /// let stream = Runtime::auto()?.device(0)?.stream()?;
    /// let mut m = DeviceTensor::<f32>::zeros(&stream, &[3])?;
    /// let mut plan = InplaceOnePlan::new(&m, &stream)?;
    /// plan.launch(&mut m, &stream)?;
    /// assert_eq!(m.to_array(&stream)?, ndarray::array![1.0f32, 1.0, 1.0].into_dyn());
    /// # Ok(()) }
    /// ```
    pub type InplaceOnePlan;
}
