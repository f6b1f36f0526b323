//! `aclnnSWhere` (torch.where): `out = condition ? self : other` elementwise, the three
//! inputs broadcast together.

use crate::device::SocFamily;
use crate::element::DType;
use crate::error::Result;
use crate::protocol::{Arg, Call, rules};

/// `condition` BOOL or UINT8; `self`, `other` and `out` any type this crate has, BF16 on
/// Atlas A2/A3 (the vendor's list also has INT16, the wide unsigned and the complex
/// types, which it has not).
fn dtypes(soc: SocFamily, arg: &Arg, dtype: DType) -> bool {
    match arg.name {
        "condition" => matches!(dtype, DType::Bool | DType::U8),
        _ => dtype != DType::BF16 || soc.has_bf16(),
    }
}

/// The three inputs broadcast to out's shape. A run-time-dtype result takes the promote
/// of self and other: the library selects in it, whatever condition's dtype.
fn rule(c: &Call<'_>) -> Result<()> {
    const SELF: usize = 1;
    const OTHER: usize = 2;
    const OUT: usize = 3;
    if let Some(p) = c
        .dtype(SELF)
        .zip(c.dtype(OTHER))
        .and_then(|(x, y)| x.promote(y))
    {
        c.infer_dtype(OUT, p);
    }
    rules::broadcast(c)
}

crate::operator! {
    @verified
    /// `aclnnSWhere`: `out = condition ? self : other`, broadcast. Every product but the
    /// Atlas 200I/500 A2 (310B), as the vendor documents; BF16 on Atlas A2/A3.
    pub struct SWhere: aclnnSWhere, aclnnSWhereGetWorkspaceSize;
    products: |soc: SocFamily| soc != SocFamily::Atlas310B;
    arg_dtypes: dtypes;
    rule: rule;

    /// Selects `x` where `condition` holds and `other` elsewhere into `out`, queued on
    /// `stream` (`aclnnSWhere`): `out[i] = if condition[i] { x[i] } else { other[i] }`.
    ///
    /// * `condition`: `bool`, or `u8` (nonzero is true).
    /// * `x` (self), `other`: any element types, `bf16` on Atlas A2/A3 only; the library
    ///   converts both to their promoted type ([`DType::promote`]) and selects in it,
    ///   bit for bit.
    /// * `out`: any element type (the selection is cast to it: the library checks no
    ///   cast, so an `f64` selection into an `i8` out truncates), of the broadcast shape
    ///   of the three inputs (numpy rules), in any layout; up to 8 dims, 0-D and empty
    ///   included.
    ///
    /// ```
    /// # fn main() -> ascendcl::Result<()> {
    /// use ascendcl::{DeviceTensor, Runtime, s_where, s_where_new};
    /// use ndarray::array;
    /// let stream = Runtime::auto()?.device(0)?.stream()?;
    /// let cond = DeviceTensor::from_array(&stream, &array![[true], [false]])?;
    /// let x = DeviceTensor::from_array(&stream, &array![1.0f32, 2.0, 3.0])?;
    /// let other = DeviceTensor::from_array(&stream, &array![[-1.0f32, -2.0, -3.0], [-1.0, -2.0, -3.0]])?;
    /// let mut out = DeviceTensor::<f32>::zeros(&stream, [2, 3])?;
    /// s_where(&cond, &x, &other, &mut out, &stream)?;
    /// assert_eq!(out.to_array(&stream)?, array![[1.0f32, 2.0, 3.0], [-1.0, -2.0, -3.0]].into_dyn());
    /// let same: DeviceTensor<f32> = s_where_new(&cond, &x, &other, &stream)?;
    /// assert_eq!(same.to_array::<ndarray::IxDyn>(&stream)?, out.to_array(&stream)?);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// [`Error::DeviceMismatch`](crate::Error::DeviceMismatch),
    /// [`Error::UnsupportedOperator`](crate::Error::UnsupportedOperator),
    /// [`Error::UnsupportedDtype`](crate::Error::UnsupportedDtype),
    /// [`Error::TooManyDims`](crate::Error::TooManyDims),
    /// [`Error::NotBroadcastable`](crate::Error::NotBroadcastable),
    /// [`Error::ShapeMismatch`](crate::Error::ShapeMismatch) (`out`);
    /// [`Error::Aclnn`](crate::Error::Aclnn) from the library.
    pub fn s_where<C, A, B, O>(
        condition: input<C> = "condition",
        x: input<A> = "self",
        other: input<B> = "other",
        out: output<O> = "out",
    );

    /// A reusable [`s_where`] for fixed layouts and element types (a
    /// [`Plan`](crate::Plan)).
    ///
    /// ```
    /// # fn main() -> ascendcl::Result<()> {
    /// use ascendcl::{DeviceTensor, Runtime, SWherePlan};
    /// use ndarray::array;
    /// let stream = Runtime::auto()?.device(0)?.stream()?;
    /// let cond = DeviceTensor::from_array(&stream, &array![1u8, 0, 2])?;
    /// let x = DeviceTensor::from_array(&stream, &array![1i32, 2, 3])?;
    /// let other = DeviceTensor::from_array(&stream, &array![0i32])?;
    /// let mut out = DeviceTensor::<i32>::zeros(&stream, [3])?;
    /// let mut plan = SWherePlan::new(&cond, &x, &other, &out, &stream)?;
    /// plan.launch(&cond, &x, &other, &mut out, &stream)?;
    /// assert_eq!(out.to_array(&stream)?, array![1i32, 0, 3].into_dyn());
    /// # Ok(()) }
    /// ```
    pub type SWherePlan;
    allocating: s_where_new;
}
