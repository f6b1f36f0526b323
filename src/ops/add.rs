//! `aclnnAdd` and `aclnnInplaceAdd`: `self + alpha·other`, broadcasting.

use crate::device::SocFamily;
use crate::element::DType;
use crate::protocol::{Scalar, rules};

/// Atlas A3, A2 and the training series (910); not the inference series (310P) nor the
/// 200I/500 A2 (310B).
fn products(soc: SocFamily) -> bool {
    !matches!(soc, SocFamily::Inference310P | SocFamily::Atlas310B)
}

/// FLOAT, FLOAT16 and the integer types everywhere, BF16 on Atlas A2/A3.
fn dtypes(soc: SocFamily, dtype: DType) -> bool {
    dtype != DType::BF16 || soc.has_bf16()
}

crate::operator! {
    @verified
    /// `aclnnAdd`: `out = self + alpha·other`.
    pub struct Add: aclnnAdd, aclnnAddGetWorkspaceSize;
    products: products;
    dtypes: dtypes;
    rule: rules::broadcast;

    /// `out = a + alpha·b`, queued on `stream` (`aclnnAdd`).
    ///
    /// * `a` (self), `b` (other): any [`AsTensorView`](crate::AsTensorView)s of `f32`,
    ///   `f16`, `bf16` (on Atlas A2/A3 only) or an integer type, broadcastable together
    ///   (numpy rules, up to 8 dims); computed in their promoted type
    ///   ([`DType::promote`](crate::DType::promote): same → same, two floating types → f32,
    ///   integer with floating → the floating type, two integers → the wider). Integer
    ///   results wrap to their width; the simulator computes them exactly below 2^53.
    /// * `alpha`: a plain number (`1.0`, `-0.01`, `2`). With integer tensors it must be an
    ///   integer (`2`, not `2.0`): CANN refuses a floating alpha it cannot cast to the
    ///   integer promote ([`Error::Aclnn`](crate::Error::Aclnn)).
    /// * `out`: of the broadcast shape, any dtype the promote casts to (not a floating promote to an integer out), in any
    ///   layout.
    ///
    /// Atlas A3, A2 and the training series; not 310P nor 310B. Empty inputs succeed
    /// without computing anything.
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
    /// use ascendcl::{DeviceTensor, Runtime, add};
    /// use ndarray::array;
    /// let stream = Runtime::auto()?.device(0)?.stream()?;
    /// let a = DeviceTensor::from_array(&stream, &array![[1.0f32, 2.0], [3.0, 4.0]])?;
    /// let b = DeviceTensor::from_array(&stream, &array![10.0f32, 20.0])?; // broadcast
    /// let mut out = DeviceTensor::<f32>::zeros(&stream, &[2, 2])?;
    /// add(&a, &b, 0.5, &mut out, &stream)?;
    /// assert_eq!(out.to_array(&stream)?, array![[6.0f32, 12.0], [8.0, 14.0]].into_dyn());
    /// # Ok(()) }
    /// ```
    pub fn add<A, B, O>(
        a: input<A> = "self",
        b: input<B> = "other",
        alpha: attr<Scalar> = "alpha",
        out: output<O> = "out",
    );

    /// A reusable [`add`] for fixed layouts, element types and `alpha` (a
    /// [`Plan`](crate::Plan)).
    ///
    /// ```
    /// # fn main() -> ascendcl::Result<()> {
    /// use ascendcl::{AddPlan, DeviceTensor, Runtime};
    /// let stream = Runtime::auto()?.device(0)?.stream()?;
    /// let a = DeviceTensor::from_array(&stream, &ndarray::array![1.0f32, 2.0])?;
    /// let mut out = DeviceTensor::<f32>::zeros(&stream, &[2])?;
    /// let mut plan = AddPlan::new(&a, &a, 2.0, &out, &stream)?;
    /// plan.launch(&a, &a, &mut out, &stream)?;
    /// assert_eq!(out.to_array(&stream)?, ndarray::array![3.0f32, 6.0].into_dyn());
    /// # Ok(()) }
    /// ```
    pub type AddPlan;
    allocating: add_new;
}

crate::operator! {
    @verified
    /// `aclnnInplaceAdd`: `selfRef = selfRef + alpha·other`.
    pub struct InplaceAdd: aclnnInplaceAdd, aclnnInplaceAddGetWorkspaceSize;
    products: products;
    dtypes: dtypes;
    // selfRef is read and written: "both broadcast to selfRef's shape".
    rule: rules::broadcast;

    /// `a = a + alpha·b` in place, queued on `stream` (`aclnnInplaceAdd`): as [`add`] with
    /// `out` = `a`, and `b` broadcast to `a`'s shape. With `alpha = -lr` this is the SGD
    /// update `w -= lr·g`.
    ///
    /// # Errors
    /// As [`add`].
    ///
    /// ```
    /// # fn main() -> ascendcl::Result<()> {
    /// use ascendcl::{DeviceTensor, Runtime, add_inplace};
    /// let stream = Runtime::auto()?.device(0)?.stream()?;
    /// let mut w = DeviceTensor::from_array(&stream, &ndarray::array![1.0f32, 2.0])?;
    /// let g = DeviceTensor::from_array(&stream, &ndarray::array![10.0f32, 10.0])?;
    /// add_inplace(&mut w, &g, -0.1, &stream)?;
    /// assert_eq!(w.to_array(&stream)?, ndarray::array![0.0f32, 1.0].into_dyn());
    /// # Ok(()) }
    /// ```
    pub fn add_inplace<A, B>(
        a: inplace_const<A> = "selfRef",
        b: input<B> = "other",
        alpha: attr<Scalar> = "alpha",
    );

    /// A reusable [`add_inplace`] for fixed layouts, element types and `alpha` (a
    /// [`Plan`](crate::Plan)).
    pub type InplaceAddPlan;
}
