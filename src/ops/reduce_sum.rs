//! `aclnnReduceSum`: sums over dims.

use crate::device::SocFamily;
use crate::element::DType;
use crate::protocol::{IntList, rules};

crate::operator! {
    @verified
    /// `aclnnReduceSum`: `out = sum(self, dims, keepDims)`, computed in `dtype` (out's).
    /// Every product but the Atlas 200I/500 A2 (310B); FLOAT, FLOAT16 and the integer types
    /// everywhere, BF16 on Atlas A2/A3.
    pub struct ReduceSum: aclnnReduceSum, aclnnReduceSumGetWorkspaceSize;
    products: |soc: SocFamily| soc != SocFamily::Atlas310B;
    dtypes: |soc: SocFamily, dtype: DType| dtype != DType::BF16 || soc.has_bf16();
    rule: |c: &crate::protocol::Call<'_>| rules::reduce(c, 0, 1, 2, 4);

    /// `out = x` summed over `dims`, queued on `stream` (`aclnnReduceSum`).
    ///
    /// * `x` (self): any [`AsTensorView`](crate::AsTensorView) of `f32`, `f16`, `bf16`
    ///   (on Atlas A2/A3 only) or an integer type, up to 8 dims, 0-D and empty included.
    ///   Integer sums wrap to out's width (exact below 2^53 on the simulator).
    /// * `dims`: the dims to sum (`&[0]`, `&[-1]`); each in `-rank..rank`, none twice;
    ///   empty sums over every dim.
    /// * `keep_dims`: keep the summed dims as size 1.
    /// * `out`: of the reduced shape, in any layout; its element type is the C `dtype`
    ///   argument, the type the sum is computed in. An empty `x` gives zeros.
    ///
    /// # Errors
    /// [`Error::DeviceMismatch`](crate::Error::DeviceMismatch),
    /// [`Error::UnsupportedOperator`](crate::Error::UnsupportedOperator),
    /// [`Error::UnsupportedDtype`](crate::Error::UnsupportedDtype),
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) (`dims`),
    /// [`Error::ShapeMismatch`](crate::Error::ShapeMismatch) (`out`);
    /// [`Error::Aclnn`](crate::Error::Aclnn) from the library.
    ///
    /// ```
    /// # fn main() -> ascendcl::Result<()> {
    /// use ascendcl::{DeviceTensor, Runtime, reduce_sum};
    /// use ndarray::array;
    /// let stream = Runtime::auto()?.device(0)?.stream()?;
    /// let g = DeviceTensor::from_array(&stream, &array![[1.0f32, 2.0], [3.0, 4.0]])?;
    /// let mut db = DeviceTensor::<f32>::zeros(&stream, &[2])?;
    /// reduce_sum(&g, &[0], false, &mut db, &stream)?; // a bias gradient
    /// assert_eq!(db.to_array(&stream)?, array![4.0f32, 6.0].into_dyn());
    /// # Ok(()) }
    /// ```
    pub fn reduce_sum<T, O>(
        x: input<T> = "self",
        dims: attr<IntList> = "dims",
        keep_dims: attr<bool> = "keepDims",
        dtype: dtype_of<O> = "dtype",
        out: output<O> = "out",
    );

    /// A reusable [`reduce_sum`] for fixed layouts, element types, `dims` and `keep_dims`
    /// (a [`Plan`](crate::Plan)).
    ///
    /// ```
    /// # fn main() -> ascendcl::Result<()> {
    /// use ascendcl::{DeviceTensor, ReduceSumPlan, Runtime};
    /// let stream = Runtime::auto()?.device(0)?.stream()?;
    /// let x = DeviceTensor::from_array(&stream, &ndarray::array![[1.0f32, 2.0], [3.0, 4.0]])?;
    /// let mut out = DeviceTensor::<f32>::zeros(&stream, &[2, 1])?;
    /// let mut plan = ReduceSumPlan::new(&x, &[-1], true, &out, &stream)?;
    /// plan.launch(&x, &mut out, &stream)?;
    /// assert_eq!(out.to_array(&stream)?, ndarray::array![[3.0f32], [7.0]].into_dyn());
    /// # Ok(()) }
    /// ```
    pub type ReduceSumPlan;
    allocating: reduce_sum_new;
}
