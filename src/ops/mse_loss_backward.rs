//! `aclnnMseLossBackward`: the gradient of the mean squared error.

use crate::device::SocFamily;
use crate::element::DType;
use crate::protocol::rules;
use crate::Reduction;

/// Atlas A3, A2 and the inference series (310P); not the training series (910) nor the
/// 200I/500 A2 (310B).
fn products(soc: SocFamily) -> bool {
    !matches!(soc, SocFamily::Training910 | SocFamily::Atlas310B)
}

crate::operator! {
    @verified
    /// `aclnnMseLossBackward`: `out = 2·gradOutput·(self − target)`, divided by
    /// `numel(self)` for the mean. FLOAT and FLOAT16 everywhere, BF16 on Atlas A2/A3.
    pub struct MseLossBackward: aclnnMseLossBackward, aclnnMseLossBackwardGetWorkspaceSize;
    products: products;
    dtypes: |soc: SocFamily, dtype: DType| dtype.is_core_float() && (dtype != DType::BF16 || soc.has_bf16());
    rule: |c: &crate::protocol::Call<'_>| {
        rules::same_dtype(c, 1, &[0, 2])?;
        rules::broadcast(c)
    };

    /// `out = 2·grad·(x − target)` (÷ `numel(x)` for [`Reduction::Mean`]), queued on
    /// `stream` (`aclnnMseLossBackward`).
    ///
    /// * `grad` (gradOutput): the loss's gradient, 0-D after a mean or sum;
    /// * `x` (self), `target`: as for [`mse_loss`](crate::mse_loss); `grad` and `target`
    ///   have `x`'s element type (the vendor's rule, enforced by the types);
    /// * `out`: of the broadcast shape of the three, any of the three dtypes.
    ///
    /// Atlas A3, A2 and 310P; not the training series (910) nor 310B.
    ///
    /// # Errors
    /// As [`mse_loss`](crate::mse_loss).
    ///
    /// ```
    /// # fn main() -> ascendcl::Result<()> {
    /// use ascendcl::{DeviceTensor, Reduction, Runtime, mse_loss_backward};
    /// use ndarray::array;
    /// let stream = Runtime::auto()?.device(0)?.stream()?;
    /// let one = DeviceTensor::from_array(&stream, &ndarray::arr0(1.0f32).into_dyn())?;
    /// let y = DeviceTensor::from_array(&stream, &array![1.0f32, 2.0])?;
    /// let t = DeviceTensor::from_array(&stream, &array![0.0f32, 0.0])?;
    /// let mut dy = DeviceTensor::<f32>::zeros(&stream, &[2])?;
    /// mse_loss_backward(&one, &y, &t, Reduction::Mean, &mut dy, &stream)?;
    /// assert_eq!(dy.to_array(&stream)?, array![1.0f32, 2.0].into_dyn());
    /// # Ok(()) }
    /// ```
    pub fn mse_loss_backward<X, O>(
        grad: input<X> = "gradOutput",
        x: input<X> = "self",
        target: input<X> = "target",
        reduction: attr<Reduction> = "reduction",
        out: output<O> = "out",
    );

    /// A reusable [`mse_loss_backward`] for fixed layouts, element types and `reduction`
    /// (a [`Plan`](crate::Plan)).
    pub type MseLossBackwardPlan;
    allocating: mse_loss_backward_new;
}
