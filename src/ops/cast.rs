//! `aclnnCast`: a tensor converted to another dtype, and [`cast_to`], its allocating form
//! for a dtype known at run time only.

use crate::device::SocFamily;
use crate::element::DType;
use crate::error::Result;
use crate::operand::Dyn;
use crate::protocol::{Value, rules};
use crate::stream::Stream;
use crate::tensor::{AsTensorView, Tensor};

crate::operator! {
    @verified
    /// `aclnnCast`: `out = self` converted to `dtype` (out's). Every product but the Atlas
    /// 200I/500 A2 (310B); every dtype of this crate in either place, BF16 on Atlas A2/A3
    /// only.
    pub struct Cast: aclnnCast, aclnnCastGetWorkspaceSize;
    products: |soc: SocFamily| soc != SocFamily::Atlas310B;
    dtypes: |soc: SocFamily, dtype: DType| dtype != DType::BF16 || soc.has_bf16();
    rule: rules::same;

    /// `out = x` converted to out's element type, queued on `stream` (`aclnnCast`).
    ///
    /// * `x` (self): any [`AsTensorView`] of any element type of this
    ///   crate (`bf16` on Atlas A2/A3 only), up to 8 dims, 0-D and empty included, in any
    ///   layout.
    /// * `out`: of `x`'s shape, in any layout (a strided view writes only its elements);
    ///   its element type is the C `dtype` argument.
    ///
    /// The conversion is the device's cast, the one [`copy`](crate::copy) makes between
    /// dtypes: to a floating type rounded once to nearest, ties to even; from a floating
    /// type to an integer truncated toward zero and saturated at the integer's range (NaN
    /// gives 0); between integers wrapped to the target's width; to `bool` true for any
    /// nonzero value (NaN included); from `bool` 0 or 1. An empty `x` writes nothing.
    /// [`reference::cast`](crate::reference::cast) computes the same on the host.
    ///
    /// # Errors
    /// [`Error::DeviceMismatch`](crate::Error::DeviceMismatch),
    /// [`Error::UnsupportedOperator`](crate::Error::UnsupportedOperator) (310B),
    /// [`Error::UnsupportedDtype`](crate::Error::UnsupportedDtype) (`bf16` off Atlas
    /// A2/A3), [`Error::ShapeMismatch`](crate::Error::ShapeMismatch) (`out`);
    /// [`Error::Aclnn`](crate::Error::Aclnn) from the library.
    ///
    /// ```
    /// # fn main() -> ascendcl::Result<()> {
    /// use ascendcl::{DeviceTensor, Runtime, cast};
    /// use ndarray::array;
    /// let stream = Runtime::auto()?.device(0)?.stream()?;
    /// let x = DeviceTensor::from_array(&stream, &array![[2.7f32, -2.7], [300.0, f32::NAN]])?;
    /// let mut out = DeviceTensor::<i8>::zeros(&stream, &[2, 2])?;
    /// cast(x.view().t(), &mut out, &stream)?; // transposed, truncated, saturated
    /// assert_eq!(out.to_array(&stream)?, array![[2i8, 127], [-2, 0]].into_dyn());
    /// # Ok(()) }
    /// ```
    pub fn cast<T, O>(
        x: input<T> = "self",
        dtype: dtype_of<O> = "dtype",
        out: output<O> = "out",
    );

    /// A reusable [`cast`] for fixed layouts and element types (a [`Plan`](crate::Plan)).
    ///
    /// ```
    /// # fn main() -> ascendcl::Result<()> {
    /// use ascendcl::{CastPlan, DeviceTensor, Runtime};
    /// let stream = Runtime::auto()?.device(0)?.stream()?;
    /// let x = DeviceTensor::from_array(&stream, &ndarray::array![1i64, -3])?;
    /// let mut out = DeviceTensor::<f32>::zeros(&stream, &[2])?;
    /// let mut plan = CastPlan::new(&x, &out, &stream)?;
    /// plan.launch(&x, &mut out, &stream)?;
    /// assert_eq!(out.to_array(&stream)?, ndarray::array![1.0f32, -3.0].into_dyn());
    /// # Ok(()) }
    /// ```
    pub type CastPlan;
    allocating: cast_new;
}

/// [`cast`] into a new [`Tensor`] of dtype `dtype`, which it returns: of `x`'s shape,
/// contiguous, from the device's caching allocator without a fill. The allocating form for
/// a dtype known at run time only ([`cast_new`] takes the result's dtype from its type:
/// a `DeviceTensor<T>` result is of `T`, a `Tensor` result of `x`'s dtype).
///
/// ```
/// # fn main() -> ascendcl::Result<()> {
/// use ascendcl::{DType, Runtime, Tensor, cast_to};
/// let stream = Runtime::auto()?.device(0)?.stream()?;
/// let labels = Tensor::from_slice(&stream, &[3i64, 0, 7], 3)?;
/// let as_float = cast_to(&labels, DType::F32, &stream)?;
/// assert_eq!(as_float.dtype(), DType::F32);
/// assert_eq!(as_float.to_vec::<f32>(&stream)?, [3.0, 0.0, 7.0]);
/// # Ok(()) }
/// ```
///
/// # Errors
/// As [`cast`] (less the output's shape); the allocation's
/// [`Error::Acl`](crate::Error::Acl).
pub fn cast_to<T: crate::Operand>(
    x: impl AsTensorView<Elem = T>,
    dtype: DType,
    stream: &Stream,
) -> Result<Tensor> {
    crate::protocol::call_new::<Cast, Tensor, 3>(
        stream,
        [
            Value::input(x.as_tensor_view()),
            Value::dtype_of::<Dyn>(),
            Value::pending_as(dtype),
        ],
    )
}
