//! `aclnnClamp`: every element bounded by optional scalars, `min(max(self, min), max)`.

use crate::device::SocFamily;
use crate::element::DType;
use crate::error::Result;
use crate::protocol::{Call, Scalar, rules};

/// FLOAT, FLOAT16 and the integer types everywhere, BF16 on Atlas A2/A3.
fn dtypes(soc: SocFamily, dtype: DType) -> bool {
    dtype != DType::BF16 || soc.has_bf16()
}

/// At least one bound; `out` of self's shape (no broadcasting); self castable to out (a
/// floating self into an integer out is refused).
fn rule(c: &Call<'_>) -> Result<()> {
    const SELF: usize = 0;
    const OUT: usize = 3;
    if c.is_absent(1) && c.is_absent(2) {
        return Err(crate::Error::InvalidArgument(format!(
            "{} and {} are both None: clamp needs at least one bound",
            c.label(1),
            c.label(2)
        )));
    }
    rules::same(c)?;
    match (c.dtype(SELF), c.dtype(OUT)) {
        (Some(x), Some(o)) if x.is_float() && !o.is_float() => Err(crate::Error::InvalidArgument(
            format!(
                "{} ({}) cannot be cast to {} ({})",
                c.label(SELF),
                x.name(),
                c.label(OUT),
                o.name()
            ),
        )),
        _ => Ok(()),
    }
}

crate::operator! {
    @verified
    /// `aclnnClamp`: `out = min(max(self, clipValueMin), clipValueMax)`, either bound
    /// optional (NULL). Every product; FLOAT, FLOAT16 and the integer types, BF16 on Atlas
    /// A2/A3.
    pub struct Clamp: aclnnClamp, aclnnClampGetWorkspaceSize;
    products: |_soc: SocFamily| true;
    dtypes: dtypes;
    rule: rule;

    /// `out = x` bounded below by `min` and above by `max`, queued on `stream`
    /// (`aclnnClamp`).
    ///
    /// * `x` (self): any [`AsTensorView`](crate::AsTensorView) of `f32`, `f16`, `bf16`
    ///   (on Atlas A2/A3 only) or an integer type, up to 8 dims, 0-D and empty included.
    /// * `min` (clipValueMin), `max` (clipValueMax): `Some(bound)` (any
    ///   [`Scalar`], `Some(0.0.into())`) or `None` for no bound on that side (NULL); not
    ///   both `None`.
    /// * `out`: of `x`'s shape, in any layout. The device computes in out's type: `x`
    ///   cast to it, each bound converted to it (to an integer type truncated), then
    ///   `min(max(x, min), max)`: `max` wins when `min > max`. A floating `x` into an
    ///   integer `out` is refused.
    ///
    /// NaN elements stay NaN on the simulator (CANN does not document it).
    ///
    /// # Errors
    /// [`Error::DeviceMismatch`](crate::Error::DeviceMismatch),
    /// [`Error::UnsupportedDtype`](crate::Error::UnsupportedDtype),
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) (both bounds `None`, a
    /// floating `x` into an integer `out`),
    /// [`Error::ShapeMismatch`](crate::Error::ShapeMismatch) (`out`),
    /// [`Error::TooManyDims`](crate::Error::TooManyDims);
    /// [`Error::Aclnn`](crate::Error::Aclnn) from the library.
    ///
    /// ```
    /// # fn main() -> ascendcl::Result<()> {
    /// use ascendcl::{DeviceTensor, Runtime, clamp};
    /// use ndarray::array;
    /// let stream = Runtime::auto()?.device(0)?.stream()?;
    /// let x = DeviceTensor::from_array(&stream, &array![-2.0f32, 0.5, 3.0])?;
    /// let mut out = DeviceTensor::<f32>::zeros(&stream, [3])?;
    /// clamp(&x, Some(0.0.into()), None, &mut out, &stream)?; // relu
    /// assert_eq!(out.to_array(&stream)?, array![0.0f32, 0.5, 3.0].into_dyn());
    /// clamp(&x, Some((-1).into()), Some(1.into()), &mut out, &stream)?;
    /// assert_eq!(out.to_array(&stream)?, array![-1.0f32, 0.5, 1.0].into_dyn());
    /// # Ok(()) }
    /// ```
    pub fn clamp<T, O>(
        x: input<T> = "self",
        min: opt_attr<Scalar> = "clipValueMin",
        max: opt_attr<Scalar> = "clipValueMax",
        out: output<O> = "out",
    );

    /// A reusable [`clamp`] for fixed layouts, element types and bounds (a
    /// [`Plan`](crate::Plan)).
    ///
    /// ```
    /// # fn main() -> ascendcl::Result<()> {
    /// use ascendcl::{ClampPlan, DeviceTensor, Runtime};
    /// let stream = Runtime::auto()?.device(0)?.stream()?;
    /// let x = DeviceTensor::from_array(&stream, &ndarray::array![1i32, 7, -4])?;
    /// let mut out = DeviceTensor::<i32>::zeros(&stream, [3])?;
    /// let mut plan = ClampPlan::new(&x, None, Some(5.into()), &out, &stream)?;
    /// plan.launch(&x, &mut out, &stream)?;
    /// assert_eq!(out.to_array(&stream)?, ndarray::array![1i32, 5, -4].into_dyn());
    /// # Ok(()) }
    /// ```
    pub type ClampPlan;
    allocating: clamp_new;
}
