//! `aclnnAddmm`: `beta·self + alpha·(mat1 @ mat2)`, a linear layer with its bias.

use crate::device::SocFamily;
use crate::element::DType;
use crate::protocol::{Scalar, rules};
use crate::CubeMath;

crate::operator! {
    @verified
    /// `aclnnAddmm`: `out = beta·self + alpha·(mat1 @ mat2)`. Every product but the Atlas
    /// 200I/500 A2 (310B); FLOAT and FLOAT16 everywhere, BF16 on Atlas A2/A3.
    pub struct Addmm: aclnnAddmm, aclnnAddmmGetWorkspaceSize;
    products: |soc: SocFamily| soc != SocFamily::Atlas310B;
    dtypes: |soc: SocFamily, dtype: DType| dtype.is_core_float() && (dtype != DType::BF16 || soc.has_bf16());
    rule: |c: &crate::protocol::Call<'_>| {
        rules::bias_matmul(c, 0, 1, 2, 5)?;
        rules::cube_math(c, 6, &[1, 2])
    };

    /// `out = beta·bias + alpha·(a @ b)`, queued on `stream` (`aclnnAddmm`; beta comes
    /// before alpha, as in C).
    ///
    /// * `a` (mat1) is (m, k), `b` (mat2) is (k, n): 2-D views of `f32`, `f16` or `bf16`
    ///   (bf16 on Atlas A2/A3 only), transposed views included.
    /// * `bias` (self): at most 2 dims, broadcastable to (m, n): a bias row `[n]` for a
    ///   linear layer.
    /// * `beta`, `alpha`: plain numbers; a zero one skips its term (NaN or Inf in the
    ///   skipped operand does not reach `out`).
    /// * `out`: (m, n), any of the three dtypes, in any layout.
    /// * `math`: the `cubeMathType`, as for [`matmul`](crate::matmul).
    ///
    /// # Errors
    /// As [`matmul`](crate::matmul); [`Error::NotBroadcastable`](crate::Error::NotBroadcastable)
    /// for a bias that does not broadcast to (m, n).
    ///
    /// ```
    /// # fn main() -> ascendcl::Result<()> {
    /// use ascendcl::{CubeMath, DeviceTensor, Runtime, addmm};
    /// use ndarray::array;
    /// let stream = Runtime::auto()?.device(0)?.stream()?;
    /// let x = DeviceTensor::from_array(&stream, &array![[1.0f32, 2.0], [3.0, 4.0]])?;
    /// let w = DeviceTensor::from_array(&stream, &array![[1.0f32, 0.0], [0.0, 1.0]])?;
    /// let bias = DeviceTensor::from_array(&stream, &array![0.5f32, -0.5])?;
    /// let mut y = DeviceTensor::<f32>::zeros(&stream, &[2, 2])?;
    /// addmm(&bias, &x, &w, 1.0, 1.0, &mut y, CubeMath::KeepDtype, &stream)?;
    /// assert_eq!(y.to_array(&stream)?, array![[1.5f32, 1.5], [3.5, 3.5]].into_dyn());
    /// # Ok(()) }
    /// ```
    pub fn addmm<S, A, B, O>(
        bias: input<S> = "self",
        a: input<A> = "mat1",
        b: input<B> = "mat2",
        beta: attr<Scalar> = "beta",
        alpha: attr<Scalar> = "alpha",
        out: output<O> = "out",
        math: attr<CubeMath> = "cubeMathType",
    );

    /// A reusable [`addmm`] for fixed layouts, element types, `beta`, `alpha` and `math` (a
    /// [`Plan`](crate::Plan)): the forward pass of a linear layer.
    ///
    /// ```
    /// # fn main() -> ascendcl::Result<()> {
    /// use ascendcl::{AddmmPlan, CubeMath, DeviceTensor, Runtime};
    /// let stream = Runtime::auto()?.device(0)?.stream()?;
    /// let x = DeviceTensor::from_array(&stream, &ndarray::array![[2.0f32]])?;
    /// let bias = DeviceTensor::from_array(&stream, &ndarray::array![1.0f32])?;
    /// let mut y = DeviceTensor::<f32>::zeros(&stream, &[1, 1])?;
    /// let mut plan = AddmmPlan::new(&bias, &x, &x, 1.0, 1.0, &y, CubeMath::KeepDtype, &stream)?;
    /// plan.launch(&bias, &x, &x, &mut y, &stream)?;
    /// assert_eq!(y.to_array(&stream)?, ndarray::array![[5.0f32]].into_dyn());
    /// # Ok(()) }
    /// ```
    pub type AddmmPlan;
    allocating: addmm_new;
}
