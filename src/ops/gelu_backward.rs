//! `aclnnGeluBackward`: the gradient of Gelu.

use crate::device::SocFamily;
use crate::element::DType;

crate::operator! {
    @verified
    /// `aclnnGeluBackward`: `grad_input = grad_output · gelu'(self)`, the derivative of the
    /// tanh approximation [`gelu`](crate::gelu) computes. Every product; FLOAT and FLOAT16
    /// everywhere, BF16 on Atlas A2/A3.
    pub struct GeluBackward: aclnnGeluBackward, aclnnGeluBackwardGetWorkspaceSize;
    products: |_soc: SocFamily| true;
    dtypes: |soc: SocFamily, dtype: DType| dtype.is_core_float() && (dtype != DType::BF16 || soc.has_bf16());
    rule: crate::protocol::rules::broadcast;

    /// `grad_input = grad · gelu'(x)`, queued on `stream` (`aclnnGeluBackward`), where
    /// `gelu(x) = x / (1 + e^(−1.5957691·(x + 0.044715·x³)))` (the tanh approximation,
    /// as the vendor's kernel computes it).
    ///
    /// * `grad` (gradOutput) and `x` (self): any [`AsTensorView`](crate::AsTensorView)s of
    ///   `f32`, `f16` or `bf16` (Atlas A2/A3), broadcastable together, up to 8 dims.
    /// * `out` (gradInput): of the broadcast shape, in any layout; the inputs are computed
    ///   in their promoted type (mixed → `f32`) and cast to `out`'s.
    ///
    /// Empty inputs compute nothing.
    ///
    /// # Errors
    /// [`Error::DeviceMismatch`](crate::Error::DeviceMismatch),
    /// [`Error::UnsupportedDtype`](crate::Error::UnsupportedDtype),
    /// [`Error::NotBroadcastable`](crate::Error::NotBroadcastable),
    /// [`Error::ShapeMismatch`](crate::Error::ShapeMismatch);
    /// [`Error::Aclnn`](crate::Error::Aclnn) from the library.
    ///
    /// ```
    /// # fn main() -> ascendcl::Result<()> {
    /// use ascendcl::{DeviceTensor, Runtime, gelu_backward_new};
    /// use ndarray::array;
    /// let stream = Runtime::auto()?.device(0)?.stream()?;
    /// let g = DeviceTensor::from_array(&stream, &array![1.0f32, 2.0])?;
    /// let x = DeviceTensor::from_array(&stream, &array![0.0f32, 0.0])?;
    /// let d: DeviceTensor<f32> = gelu_backward_new(&g, &x, &stream)?;
    /// assert_eq!(d.to_array(&stream)?, array![0.5f32, 1.0].into_dyn());
    /// # Ok(()) }
    /// ```
    pub fn gelu_backward<G, X, O>(
        grad: input<G> = "gradOutput",
        x: input<X> = "self",
        out: output_const<O> = "gradInput",
    );

    /// A reusable [`gelu_backward`] for fixed layouts and element types (a
    /// [`Plan`](crate::Plan)).
    pub type GeluBackwardPlan;
    allocating: gelu_backward_new;
}
