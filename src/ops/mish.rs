//! `aclnnMish` and `aclnnInplaceMish`: the Mish activation, `x·tanh(softplus(x))`.

use crate::device::SocFamily;
use crate::element::DType;

/// Atlas A3, A2 and the training series (910) have both; the inference series (310P)
/// and the 200I/500 A2 (310B) have neither.
fn products(soc: SocFamily) -> bool {
    !matches!(soc, SocFamily::Inference310P | SocFamily::Atlas310B)
}

/// FLOAT and FLOAT16 everywhere, BF16 on Atlas A2/A3.
fn dtypes(soc: SocFamily, dtype: DType) -> bool {
    dtype.is_core_float() && (dtype != DType::BF16 || soc.has_bf16())
}

crate::operator! {
    @verified
    /// `aclnnMish`: `out = self·tanh(softplus(self))`, elementwise.
    pub struct Mish: aclnnMish, aclnnMishGetWorkspaceSize;
    products: products;
    dtypes: dtypes;
    rule: crate::protocol::rules::same;

    /// `out = mish(x) = x·tanh(ln(1 + eˣ))`, queued on `stream` (`aclnnMish`).
    ///
    /// * `x` (self): any [`AsTensorView`](crate::AsTensorView) of `f32`, `f16` or `bf16`
    ///   (bf16 on Atlas A2/A3 only), up to 8 dims, 0-D and empty included.
    /// * `out`: `&mut DeviceTensor<_>` or a [`TensorViewMut`](crate::TensorViewMut) of the
    ///   same element type and shape (no broadcasting), in any layout.
    ///
    /// Available on Atlas A3, A2 and the training series; not on the inference series
    /// (310P) nor the 200I/500 A2 (310B). Validated in Rust first, with typed errors and no
    /// FFI call; the call returns once the work is queued, both tensors staying alive
    /// until it has run. In steady state it does not allocate.
    ///
    /// # Errors
    /// [`Error::DeviceMismatch`](crate::Error::DeviceMismatch),
    /// [`Error::UnsupportedOperator`](crate::Error::UnsupportedOperator),
    /// [`Error::UnsupportedDtype`](crate::Error::UnsupportedDtype),
    /// [`Error::ShapeMismatch`](crate::Error::ShapeMismatch);
    /// [`Error::Aclnn`](crate::Error::Aclnn) / [`Error::Acl`](crate::Error::Acl) from the
    /// library.
    ///
    /// ```
    /// # fn main() -> ascendcl::Result<()> {
    /// use ascendcl::{DeviceTensor, Runtime, mish};
    /// use ndarray::array;
    /// let stream = Runtime::auto()?.device(0)?.stream()?;
    /// let x = DeviceTensor::from_array(&stream, &array![[-1.0f32, 0.0], [1.0, 2.0]])?;
    /// let mut out = DeviceTensor::<f32>::zeros(&stream, &[2, 2])?;
    /// mish(&x, &mut out, &stream)?;
    /// let y: ndarray::Array2<f32> = out.to_array(&stream)?;
    /// assert!((y[[1, 0]] - 0.865_098).abs() < 1e-5);
    /// # Ok(()) }
    /// ```
    pub fn mish<T>(x: input<T> = "self", out: output<T> = "out");

    /// A reusable [`mish`] for fixed layouts and an element type (a [`Plan`](crate::Plan)):
    /// `new(&x, &out, &stream)` runs phase 1 once, each `launch(&x, &mut out, &stream)`
    /// rebinds the addresses that changed and runs phase 2. A plan is fixed to the layouts
    /// it was made for; another batch shape needs a plan of its own.
    ///
    /// ```
    /// # fn main() -> ascendcl::Result<()> {
    /// use ascendcl::{DeviceTensor, MishPlan, Runtime};
    /// use ndarray::{Array2, array};
    /// let stream = Runtime::auto()?.device(0)?.stream()?;
    /// let mut x = DeviceTensor::from_array(&stream, &array![[1.0f32, 2.0], [3.0, 4.0]])?;
    /// let mut y = DeviceTensor::<f32>::zeros(&stream, (2, 2))?;
    /// let mut plan = MishPlan::new(&x, &y, &stream)?;
    /// for step in 0..3 {
    ///     x.copy_from_array(&stream, &Array2::from_elem((2, 2), step as f32))?;
    ///     plan.launch(&x, &mut y, &stream)?;
    /// }
    /// let y: Array2<f32> = y.to_array(&stream)?;
    /// assert!((y[[0, 0]] - 1.943_959).abs() < 1e-5); // mish(2)
    /// # Ok(()) }
    /// ```
    pub type MishPlan;
    allocating: mish_new;
}

crate::operator! {
    @verified
    /// `aclnnInplaceMish`: `selfRef = mish(selfRef)`.
    pub struct InplaceMish: aclnnInplaceMish, aclnnInplaceMishGetWorkspaceSize;
    products: products;
    dtypes: dtypes;
    rule: crate::protocol::rules::same;

    /// `x = mish(x)` in place, queued on `stream` (`aclnnInplaceMish`): as [`mish`] with
    /// `out` = `x`. `x` is `&mut DeviceTensor<_>` or a
    /// [`TensorViewMut`](crate::TensorViewMut) in any layout.
    ///
    /// # Errors
    /// As [`mish`] (its argument is named `"x (selfRef)"`).
    ///
    /// ```
    /// # fn main() -> ascendcl::Result<()> {
    /// use ascendcl::{DeviceTensor, Runtime, mish_inplace};
    /// use ndarray::array;
    /// let stream = Runtime::auto()?.device(0)?.stream()?;
    /// let mut x = DeviceTensor::from_array(&stream, &array![[1.0f32, 2.0], [3.0, 4.0]])?;
    /// mish_inplace(x.view_mut().t(), &stream)?; // a transposed view
    /// assert!((x.to_array::<ndarray::Ix2>(&stream)?[[0, 0]] - 0.865_098).abs() < 1e-5);
    /// # Ok(()) }
    /// ```
    pub fn mish_inplace<T>(x: inplace<T> = "selfRef");

    /// A reusable [`mish_inplace`] (a [`Plan`](crate::Plan)): `new(&x, &stream)` runs
    /// phase 1 once, each `launch(&mut x, &stream)` runs phase 2 on a tensor of the
    /// planned layout.
    ///
    /// ```
    /// # fn main() -> ascendcl::Result<()> {
    /// use ascendcl::{DeviceTensor, InplaceMishPlan, Runtime};
    /// use ndarray::{Array1, array};
    /// let stream = Runtime::auto()?.device(0)?.stream()?;
    /// let mut x = DeviceTensor::from_array(&stream, &array![1.0f32, -1.0])?;
    /// let mut plan = InplaceMishPlan::new(&x, &stream)?;
    /// plan.launch(&mut x, &stream)?; // x = mish(x)
    /// plan.launch(&mut x, &stream)?; // x = mish(mish(x))
    /// let x: Array1<f32> = x.to_array(&stream)?;
    /// assert!((x[0] - 0.725_479).abs() < 1e-5);
    /// # Ok(()) }
    /// ```
    pub type InplaceMishPlan;
}
