//! `aclnnInplaceZero`: sets every element of a tensor to zero.

use crate::device::SocFamily;
use crate::element::DType;

crate::operator! {
    @verified
    /// `aclnnInplaceZero`: `selfRef = 0`. Every product but the Atlas 200I/500 A2 (310B);
    /// FLOAT, FLOAT16 and BF16 on every one of them (BF16 is not gated).
    pub struct InplaceZero: aclnnInplaceZero, aclnnInplaceZeroGetWorkspaceSize;
    products: |soc: SocFamily| soc != SocFamily::Atlas310B;
    dtypes: |_soc: SocFamily, _dtype: DType| true;
    rule: crate::protocol::rules::same;

    /// `x = 0` in place, queued on `stream` (`aclnnInplaceZero`): `x` is
    /// `&mut DeviceTensor<_>` or a [`TensorViewMut`](crate::TensorViewMut) in any layout (a
    /// strided view zeroes only its elements), of any rank, 0-D and empty included.
    ///
    /// # Errors
    /// [`Error::DeviceMismatch`](crate::Error::DeviceMismatch),
    /// [`Error::UnsupportedOperator`](crate::Error::UnsupportedOperator) (310B);
    /// [`Error::Aclnn`](crate::Error::Aclnn) from the library.
    ///
    /// ```
    /// # fn main() -> ascendcl::Result<()> {
    /// use ascendcl::{DeviceTensor, Runtime, zero_inplace};
    /// use ndarray::array;
    /// let stream = Runtime::auto()?.device(0)?.stream()?;
    /// let mut x = DeviceTensor::from_array(&stream, &array![[1.0f32, 2.0], [3.0, 4.0]])?;
    /// zero_inplace(x.view_mut().slice(1, 1, 2, 1)?, &stream)?; // the second column
    /// assert_eq!(x.to_array(&stream)?, array![[1.0f32, 0.0], [3.0, 0.0]].into_dyn());
    /// # Ok(()) }
    /// ```
    pub fn zero_inplace<T>(x: inplace<T> = "selfRef");

    /// A reusable [`zero_inplace`] for a fixed layout (a [`Plan`](crate::Plan)), for
    /// gradient buffers zeroed every step.
    ///
    /// ```
    /// # fn main() -> ascendcl::Result<()> {
    /// use ascendcl::{DeviceTensor, InplaceZeroPlan, Runtime};
    /// let stream = Runtime::auto()?.device(0)?.stream()?;
    /// let mut g = DeviceTensor::from_array(&stream, &ndarray::array![5.0f32, 6.0])?;
    /// let mut plan = InplaceZeroPlan::new(&g, &stream)?;
    /// plan.launch(&mut g, &stream)?;
    /// assert_eq!(g.to_array(&stream)?, ndarray::array![0.0f32, 0.0].into_dyn());
    /// # Ok(()) }
    /// ```
    pub type InplaceZeroPlan;
}
