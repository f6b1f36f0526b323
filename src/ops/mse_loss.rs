//! `aclnnMseLoss`: the mean squared error.

use crate::device::SocFamily;
use crate::element::DType;
use crate::protocol::rules;
use crate::Reduction;

crate::operator! {
    @verified
    /// `aclnnMseLoss`: `out = reduce((self − target)²)`. Every product but the Atlas
    /// 200I/500 A2 (310B); FLOAT and FLOAT16 everywhere, BF16 on Atlas A2/A3.
    pub struct MseLoss: aclnnMseLoss, aclnnMseLossGetWorkspaceSize;
    products: |soc: SocFamily| soc != SocFamily::Atlas310B;
    dtypes: |soc: SocFamily, dtype: DType| dtype.is_core_float() && (dtype != DType::BF16 || soc.has_bf16());
    rule: |c: &crate::protocol::Call<'_>| rules::loss(c, 0, 1, 2, 3);

    /// `out = reduction((x − target)²)`, queued on `stream` (`aclnnMseLoss`).
    ///
    /// * `x` (self), `target`: any [`AsTensorView`](crate::AsTensorView)s of `f32`, `f16` or
    ///   `bf16` (bf16 on Atlas A2/A3 only; they may differ), broadcastable together.
    /// * `reduction`: [`Reduction::None`] (elementwise, `out` of the broadcast shape),
    ///   [`Reduction::Mean`] or [`Reduction::Sum`] (`out` 0-D). The mean of empty inputs is
    ///   NaN, their sum 0.
    ///
    /// # Errors
    /// [`Error::DeviceMismatch`](crate::Error::DeviceMismatch),
    /// [`Error::UnsupportedOperator`](crate::Error::UnsupportedOperator),
    /// [`Error::UnsupportedDtype`](crate::Error::UnsupportedDtype),
    /// [`Error::NotBroadcastable`](crate::Error::NotBroadcastable),
    /// [`Error::ShapeMismatch`](crate::Error::ShapeMismatch) (`out`);
    /// [`Error::Aclnn`](crate::Error::Aclnn) from the library.
    ///
    /// ```
    /// # fn main() -> ascendcl::Result<()> {
    /// use ascendcl::{DeviceTensor, Reduction, Runtime, mse_loss};
    /// use ndarray::array;
    /// let stream = Runtime::auto()?.device(0)?.stream()?;
    /// let y = DeviceTensor::from_array(&stream, &array![1.0f32, 2.0, 3.0])?;
    /// let t = DeviceTensor::from_array(&stream, &array![1.0f32, 0.0, 0.0])?;
    /// let mut loss = DeviceTensor::<f32>::zeros(&stream, &[])?;
    /// mse_loss(&y, &t, Reduction::Mean, &mut loss, &stream)?;
    /// assert!((loss.to_array::<ndarray::Ix0>(&stream)?[[]] - 13.0 / 3.0).abs() < 1e-6);
    /// # Ok(()) }
    /// ```
    pub fn mse_loss<X, T, O>(
        x: input<X> = "self",
        target: input<T> = "target",
        reduction: attr<Reduction> = "reduction",
        out: output<O> = "out",
    );

    /// A reusable [`mse_loss`] for fixed layouts, element types and `reduction` (a
    /// [`Plan`](crate::Plan)).
    ///
    /// ```
    /// # fn main() -> ascendcl::Result<()> {
    /// use ascendcl::{DeviceTensor, MseLossPlan, Reduction, Runtime};
    /// let stream = Runtime::auto()?.device(0)?.stream()?;
    /// let y = DeviceTensor::from_array(&stream, &ndarray::array![3.0f32])?;
    /// let mut loss = DeviceTensor::<f32>::zeros(&stream, &[])?;
    /// let mut plan = MseLossPlan::new(&y, &y, Reduction::Sum, &loss, &stream)?;
    /// plan.launch(&y, &y, &mut loss, &stream)?;
    /// assert_eq!(loss.to_array::<ndarray::Ix0>(&stream)?[[]], 0.0);
    /// # Ok(()) }
    /// ```
    pub type MseLossPlan;
    allocating: mse_loss_new;
}
