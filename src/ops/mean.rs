//! `aclnnMean`: the mean over dims.

use crate::device::SocFamily;
use crate::element::DType;
use crate::protocol::{IntList, rules};

crate::operator! {
    @verified
    /// `aclnnMean`: `out = mean(self, dim, keepDim)`, computed in `dtype` (out's). Every
    /// product; FLOAT, FLOAT16, DOUBLE and the integer types everywhere, BF16 on Atlas
    /// A2/A3.
    pub struct Mean: aclnnMean, aclnnMeanGetWorkspaceSize;
    products: |_soc: SocFamily| true;
    dtypes: |soc: SocFamily, dtype: DType| dtype != DType::Bool && (dtype != DType::BF16 || soc.has_bf16());
    rule: |c: &crate::protocol::Call<'_>| rules::reduce(c, 0, 1, 2, 4);

    /// `out = x` averaged over `dims`, queued on `stream` (`aclnnMean`).
    ///
    /// * `x` (self): any [`AsTensorView`](crate::AsTensorView) of `f32`, `f16`, `bf16` (on
    ///   Atlas A2/A3 only), `f64` or an integer type, up to 8 dims, 0-D included.
    /// * `dims`: the dims to average (`&[-1]`); each in `-rank..rank`, none twice; empty
    ///   averages over every dim.
    /// * `keep_dims`: keep the averaged dims as size 1.
    /// * `out`: of the reduced shape, in any layout; its element type is the C `dtype`
    ///   argument, the type the mean is computed in (`x` is cast to it first; an integer
    ///   mean truncates toward zero). An empty `x` fills `out` with NaN.
    ///
    /// # Errors
    /// [`Error::DeviceMismatch`](crate::Error::DeviceMismatch),
    /// [`Error::UnsupportedDtype`](crate::Error::UnsupportedDtype),
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) (`dims`),
    /// [`Error::ShapeMismatch`](crate::Error::ShapeMismatch) (`out`);
    /// [`Error::Aclnn`](crate::Error::Aclnn) from the library (an `x` that does not cast
    /// to `out`'s type).
    ///
    /// ```
    /// # fn main() -> ascendcl::Result<()> {
    /// use ascendcl::{DeviceTensor, Runtime, mean_new};
    /// use ndarray::array;
    /// let stream = Runtime::auto()?.device(0)?.stream()?;
    /// let x = DeviceTensor::from_array(&stream, &array![[1.0f32, 2.0], [3.0, 6.0]])?;
    /// let m: DeviceTensor<f32> = mean_new(&x, &[-1], false, &stream)?;
    /// assert_eq!(m.to_array(&stream)?, array![1.5f32, 4.5].into_dyn());
    /// # Ok(()) }
    /// ```
    pub fn mean<T, O>(
        x: input<T> = "self",
        dims: attr<IntList> = "dim",
        keep_dims: attr<bool> = "keepDim",
        dtype: dtype_of<O> = "dtype",
        out: output<O> = "out",
    );

    /// A reusable [`mean`] for fixed layouts, element types, `dims` and `keep_dims` (a
    /// [`Plan`](crate::Plan)).
    pub type MeanPlan;
    allocating: mean_new;
}
