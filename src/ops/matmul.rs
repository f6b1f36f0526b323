//! `aclnnMatmul`: the matrix product with numpy `matmul` semantics.

use crate::device::SocFamily;
use crate::element::DType;
use crate::protocol::rules;
use crate::CubeMath;

crate::operator! {
    @verified
    /// `aclnnMatmul`: `out = self @ mat2`. Every product but the Atlas 200I/500 A2 (310B);
    /// FLOAT and FLOAT16 everywhere, BF16 on Atlas A2/A3.
    pub struct Matmul: aclnnMatmul, aclnnMatmulGetWorkspaceSize;
    products: |soc: SocFamily| soc != SocFamily::Atlas310B;
    dtypes: |soc: SocFamily, dtype: DType| dtype.is_core_float() && (dtype != DType::BF16 || soc.has_bf16());
    rule: |c: &crate::protocol::Call<'_>| {
        rules::matmul(c, 0, 1, 2)?;
        rules::cube_math(c, 3, &[0, 1])
    };

    /// `out = a @ b`, queued on `stream` (`aclnnMatmul`), as numpy's `matmul`.
    ///
    /// * `a` (self), `b` (mat2): any [`AsTensorView`](crate::AsTensorView)s of 1 to 6 dims
    ///   of `f32`, `f16` or `bf16` (bf16 on Atlas A2/A3 only): (K)·(K) is a dot product,
    ///   (M,K)·(K,N) a matrix product, a 1-D operand gains a dim that the result drops, and
    ///   the batch dims of operands of 3 or more dims broadcast. Transposed views
    ///   (`w.view().t()`) are passed as they are.
    /// * `out`: of the product's shape ((B..,M,N), (M), (N) or 0-D), any of the three
    ///   dtypes, in any layout.
    /// * `math`: the `cubeMathType`; [`CubeMath::default_for`] gives what torch_npu passes
    ///   (`KeepDtype` on Atlas A2/A3, `UseFp16` on the training series and 310P, which
    ///   refuse `KeepDtype` and `UseHf32` with f32 inputs and lack `UseFp32Add`).
    ///
    /// An empty product (K = 0) writes zeros.
    ///
    /// # Errors
    /// [`Error::DeviceMismatch`](crate::Error::DeviceMismatch),
    /// [`Error::UnsupportedOperator`](crate::Error::UnsupportedOperator),
    /// [`Error::UnsupportedDtype`](crate::Error::UnsupportedDtype),
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) (ranks, contracted sizes,
    /// `math`), [`Error::NotBroadcastable`](crate::Error::NotBroadcastable) (batch dims),
    /// [`Error::ShapeMismatch`](crate::Error::ShapeMismatch) (`out`);
    /// [`Error::Aclnn`](crate::Error::Aclnn) from the library.
    ///
    /// ```
    /// # fn main() -> ascendcl::Result<()> {
    /// use ascendcl::{CubeMath, DeviceTensor, Runtime, matmul};
    /// use ndarray::array;
    /// let device = Runtime::auto()?.device(0)?;
    /// let stream = device.stream()?;
    /// let a = DeviceTensor::from_array(&stream, &array![[1.0f32, 2.0], [3.0, 4.0]])?;
    /// let w = DeviceTensor::from_array(&stream, &array![[1.0f32, 0.0], [1.0, 1.0]])?;
    /// let mut out = DeviceTensor::<f32>::zeros(&stream, &[2, 2])?;
    /// let math = CubeMath::default_for_device(&device);
    /// matmul(&a, w.view().t(), &mut out, math, &stream)?; // a @ wᵀ
    /// assert_eq!(out.to_array(&stream)?, array![[1.0f32, 3.0], [3.0, 7.0]].into_dyn());
    /// # Ok(()) }
    /// ```
    pub fn matmul<A, B, O>(
        a: input<A> = "self",
        b: input<B> = "mat2",
        out: output<O> = "out",
        math: attr<CubeMath> = "cubeMathType",
    );

    /// A reusable [`matmul`] for fixed layouts, element types and `math` (a
    /// [`Plan`](crate::Plan)).
    ///
    /// ```
    /// # fn main() -> ascendcl::Result<()> {
    /// use ascendcl::{CubeMath, DeviceTensor, MatmulPlan, Runtime};
    /// let stream = Runtime::auto()?.device(0)?.stream()?;
    /// let a = DeviceTensor::from_array(&stream, &ndarray::array![[1.0f32, 2.0]])?;
    /// let b = DeviceTensor::from_array(&stream, &ndarray::array![3.0f32, 4.0])?;
    /// let mut out = DeviceTensor::<f32>::zeros(&stream, &[1])?;
    /// let mut plan = MatmulPlan::new(&a, &b, &out, CubeMath::KeepDtype, &stream)?;
    /// plan.launch(&a, &b, &mut out, &stream)?;
    /// assert_eq!(out.to_array(&stream)?, ndarray::array![11.0f32].into_dyn());
    /// # Ok(()) }
    /// ```
    pub type MatmulPlan;
    allocating: matmul_new;
}
