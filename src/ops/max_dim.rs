//! `aclnnMaxDim`: the maximum along one dim and where it is, two outputs.

use crate::device::SocFamily;
use crate::element::DType;
use crate::error::Result;
use crate::protocol::{Arg, Call, rules};

/// `self` and `out`: FLOAT, FLOAT16 and INT64 everywhere, BF16 on Atlas A2/A3;
/// `indices`: any dtype (the operator casts its int32 indices to it).
fn arg_dtypes(soc: SocFamily, arg: &Arg, dtype: DType) -> bool {
    match arg.name {
        "indices" => true,
        _ => matches!(dtype, DType::F32 | DType::F16 | DType::I64) || dtype == DType::BF16 && soc.has_bf16(),
    }
}

/// In the vendor's order: out of self's dtype, then the reduction's shapes.
fn rule(c: &Call<'_>) -> Result<()> {
    rules::same_dtype(c, 0, &[3])?;
    rules::reduce_dim(c, 0, 1, 2, &[4, 3])
}

crate::operator! {
    @verified
    /// `aclnnMaxDim`: `out, indices = max(self, dim, keepdim)`. Every product.
    pub struct MaxDim: aclnnMaxDim, aclnnMaxDimGetWorkspaceSize;
    products: |_soc: SocFamily| true;
    arg_dtypes: arg_dtypes;
    rule: rule;

    /// The maxima of `x` along `dim` into `out` and their positions along it into
    /// `indices`, queued on `stream` (`aclnnMaxDim`).
    ///
    /// * `x` (self): any [`AsTensorView`](crate::AsTensorView) of `f32`, `f16`, `i64` or
    ///   `bf16` (on Atlas A2/A3 only), up to 8 dims, 0-D and empty included.
    /// * `dim`: in `-rank..rank` (a 0-D `x` takes -1 and 0).
    /// * `keep_dim`: keep the reduced dim as size 1.
    /// * `out`: of `x`'s element type and the reduced shape; `indices`: of any element
    ///   type (`i64` as torch), the same shape. A 0-D and a one-element `[1]` count as the
    ///   same shape. An empty `x` computes nothing (the outputs' shapes are not checked).
    ///
    /// The first maximum wins a tie. On the simulator a NaN is the maximum (the first
    /// NaN's position); CANN does not document it. `i64` is compared in f32 on the
    /// inference series (310P) and 310B, as the vendor casts it there.
    ///
    /// # Errors
    /// [`Error::DeviceMismatch`](crate::Error::DeviceMismatch),
    /// [`Error::UnsupportedDtype`](crate::Error::UnsupportedDtype),
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) (`out`'s dtype, `dim`),
    /// [`Error::TooManyDims`](crate::Error::TooManyDims),
    /// [`Error::ShapeMismatch`](crate::Error::ShapeMismatch) (`indices`, then `out`);
    /// [`Error::Aclnn`](crate::Error::Aclnn) from the library.
    ///
    /// ```
    /// # fn main() -> ascendcl::Result<()> {
    /// use ascendcl::{DeviceTensor, Runtime, max_dim, max_dim_new};
    /// use ndarray::array;
    /// let stream = Runtime::auto()?.device(0)?.stream()?;
    /// let x = DeviceTensor::from_array(&stream, &array![[1.0f32, 5.0, 2.0], [7.0, 0.0, 7.0]])?;
    /// let mut out = DeviceTensor::<f32>::zeros(&stream, [2])?;
    /// let mut at = DeviceTensor::<i64>::zeros(&stream, [2])?;
    /// max_dim(&x, -1, false, &mut out, &mut at, &stream)?;
    /// assert_eq!(out.to_array(&stream)?, array![5.0f32, 7.0].into_dyn());
    /// assert_eq!(at.to_array(&stream)?, array![1i64, 0].into_dyn());
    /// // The allocating form returns both.
    /// let (m, i): (DeviceTensor<f32>, DeviceTensor<i64>) = max_dim_new(&x, 0, true, &stream)?;
    /// assert_eq!(m.to_array(&stream)?, array![[7.0f32, 5.0, 7.0]].into_dyn());
    /// assert_eq!(i.to_array(&stream)?, array![[1i64, 0, 1]].into_dyn());
    /// # Ok(()) }
    /// ```
    pub fn max_dim<T, I>(
        x: input<T> = "self",
        dim: attr<i64> = "dim",
        keep_dim: attr<bool> = "keepdim",
        out: output<T> = "out",
        indices: output<I> = "indices",
    );

    /// A reusable [`max_dim`] for fixed layouts, element types, `dim` and `keep_dim` (a
    /// [`Plan`](crate::Plan)).
    pub type MaxDimPlan;
    allocating: max_dim_new;
}
