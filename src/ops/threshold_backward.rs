//! `aclnnThresholdBackward`: ReLU's gradient.

use crate::device::SocFamily;
use crate::element::DType;
use crate::protocol::{Call, Scalar, rules};

/// In the vendor's order: gradOutput's and out's dtypes are self's, then the shapes.
fn rule(c: &Call<'_>) -> crate::Result<()> {
    rules::same_dtype(c, 1, &[0, 3])?;
    rules::broadcast(c)
}

crate::operator! {
    @verified
    /// `aclnnThresholdBackward`: `out = self <= threshold ? 0 : grad_output` (ReLU's
    /// gradient at threshold 0). Every product; FLOAT, FLOAT16, INT32, INT8 and UINT8
    /// everywhere, BF16 on Atlas A2/A3.
    pub struct ThresholdBackward: aclnnThresholdBackward, aclnnThresholdBackwardGetWorkspaceSize;
    products: |_soc: SocFamily| true;
    dtypes: |soc: SocFamily, dtype: DType| matches!(dtype, DType::F32 | DType::F16 | DType::I32 | DType::I8 | DType::U8)
        || dtype == DType::BF16 && soc.has_bf16();
    rule: rule;

    /// `out = grad` where `x > threshold`, else 0, queued on `stream`
    /// (`aclnnThresholdBackward`): the gradient of `relu` at threshold 0.
    ///
    /// * `grad` (gradOutput) and `x` (self): any [`AsTensorView`](crate::AsTensorView)s of
    ///   one element type (`f32`, `f16`, `i32`, `i8`, `u8`, `bf16` on Atlas A2/A3),
    ///   broadcastable together, up to 8 dims.
    /// * `threshold`: read as an `f32`; within `f32::EPSILON` of 0 it is 0.
    /// * `out`: of the same element type and the broadcast shape, in any layout.
    ///
    /// A NaN `x` passes its gradient. Empty inputs compute nothing.
    ///
    /// # Errors
    /// [`Error::DeviceMismatch`](crate::Error::DeviceMismatch),
    /// [`Error::UnsupportedDtype`](crate::Error::UnsupportedDtype),
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) (dtypes that differ),
    /// [`Error::NotBroadcastable`](crate::Error::NotBroadcastable),
    /// [`Error::ShapeMismatch`](crate::Error::ShapeMismatch);
    /// [`Error::Aclnn`](crate::Error::Aclnn) from the library.
    ///
    /// ```
    /// # fn main() -> ascendcl::Result<()> {
    /// use ascendcl::{DeviceTensor, Runtime, threshold_backward};
    /// use ndarray::array;
    /// let stream = Runtime::auto()?.device(0)?.stream()?;
    /// let g = DeviceTensor::from_array(&stream, &array![1.0f32, 2.0, 3.0])?;
    /// let x = DeviceTensor::from_array(&stream, &array![-1.0f32, 0.0, 4.0])?;
    /// let mut dx = DeviceTensor::<f32>::zeros(&stream, [3])?;
    /// threshold_backward(&g, &x, 0.0, &mut dx, &stream)?;
    /// assert_eq!(dx.to_array(&stream)?, array![0.0f32, 0.0, 3.0].into_dyn());
    /// # Ok(()) }
    /// ```
    pub fn threshold_backward<T>(
        grad: input<T> = "gradOutput",
        x: input<T> = "self",
        threshold: attr<Scalar> = "threshold",
        out: output<T> = "out",
    );

    /// A reusable [`threshold_backward`] for fixed layouts, element type and threshold (a
    /// [`Plan`](crate::Plan)).
    pub type ThresholdBackwardPlan;
    allocating: threshold_backward_new;
}
