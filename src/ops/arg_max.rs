//! `aclnnArgMax`: the position of the maximum along one dim.

use crate::device::SocFamily;
use crate::element::DType;
use crate::protocol::{Arg, rules};

/// `self`: FLOAT, FLOAT16, DOUBLE and the signed integers and UINT8 everywhere, BF16 on
/// Atlas A2/A3 and 310B; `out`: any dtype (the operator casts the indices to it).
fn arg_dtypes(soc: SocFamily, arg: &Arg, dtype: DType) -> bool {
    match (arg.name, dtype) {
        ("out", _) => true,
        (_, DType::BF16) => !matches!(soc, SocFamily::Training910 | SocFamily::Inference310P),
        (_, d) => matches!(
            d,
            DType::F32 | DType::F16 | DType::F64 | DType::I8 | DType::I32 | DType::I64 | DType::U8
        ),
    }
}

crate::operator! {
    @verified
    /// `aclnnArgMax`: `out = argmax(self, dim, keepdim)`. Every product.
    pub struct ArgMax: aclnnArgMax, aclnnArgMaxGetWorkspaceSize;
    products: |_soc: SocFamily| true;
    arg_dtypes: arg_dtypes;
    rule: |c: &crate::protocol::Call<'_>| rules::reduce_dim(c, 0, 1, 2, &[3]);

    /// The position of the maximum of `x` along `dim` into `out`, queued on `stream`
    /// (`aclnnArgMax`).
    ///
    /// * `x` (self): any [`AsTensorView`](crate::AsTensorView) of `f32`, `f16`, `f64`,
    ///   `i8`, `i16`, `i32`, `i64`, `u8` or `bf16` (not on the training series and 310P),
    ///   up to 8 dims, 0-D and empty included.
    /// * `dim`: in `-rank..rank` (a 0-D `x` takes -1 and 0); `keep_dim` keeps it as size 1.
    /// * `out`: `i64` as torch (or `i32`), of the reduced shape; a 0-D and a one-element
    ///   `[1]` count as the same shape. An empty `x` computes nothing.
    ///
    /// The first maximum wins a tie and a NaN is the maximum (the first NaN), as torch.
    ///
    /// # Errors
    /// [`Error::DeviceMismatch`](crate::Error::DeviceMismatch),
    /// [`Error::UnsupportedDtype`](crate::Error::UnsupportedDtype),
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) (`dim`),
    /// [`Error::TooManyDims`](crate::Error::TooManyDims),
    /// [`Error::ShapeMismatch`](crate::Error::ShapeMismatch);
    /// [`Error::Aclnn`](crate::Error::Aclnn) from the library.
    ///
    /// ```
    /// # fn main() -> ascendcl::Result<()> {
    /// use ascendcl::{DeviceTensor, Runtime, arg_max_new};
    /// use ndarray::array;
    /// let stream = Runtime::auto()?.device(0)?.stream()?;
    /// let logits = DeviceTensor::from_array(&stream, &array![[0.1f32, 2.0, -1.0], [3.0, 0.0, 3.0]])?;
    /// let class: DeviceTensor<i64> = arg_max_new(&logits, -1, false, &stream)?;
    /// assert_eq!(class.to_array(&stream)?, array![1i64, 0].into_dyn());
    /// # Ok(()) }
    /// ```
    pub fn arg_max<T, I>(
        x: input<T> = "self",
        dim: attr<i64> = "dim",
        keep_dim: attr<bool> = "keepdim",
        out: output<I> = "out",
    );

    /// A reusable [`arg_max`] for fixed layouts, element types, `dim` and `keep_dim` (a
    /// [`Plan`](crate::Plan)).
    pub type ArgMaxPlan;
    allocating: arg_max_new;
}
