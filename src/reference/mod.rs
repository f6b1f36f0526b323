//! CPU reference of the operators on [`ndarray`] views: exact operator semantics,
//! results rounded once from a (nearly) exact value.
//!
//! - [`mish`] / [`mish_into`]: `aclnnMish`, `mish(x) = x·tanh(softplus(x))`.
//! - [`mish_backward`] / [`mish_backward_into`]:
//!   `aclnnMishBackward`, `grad_input = grad_output · mish'(x)` with
//!   `mish'(x) = tanh(softplus(x)) + x·sigmoid(x)·(1 − tanh²(softplus(x)))`.
//! - [`matmul`] / [`matmul_as`]: `aclnnMatmul` with batch broadcasting, and [`addmm`] /
//!   [`addmm_as`]: `aclnnAddmm`, `beta·self + alpha·(mat1 @ mat2)`; the
//!   [`CubeMath`](crate::CubeMath) decides the compute format ([`cube_format`]) as on
//!   Atlas A2/A3.
//! - [`add`]: `aclnnAdd`, `self + alpha·other`; [`mul`]: `aclnnMul`.
//! - [`reduce_sum`] / [`reduce_sum_as`]: `aclnnReduceSum` over `dims`, with `keep_dims`.
//! - [`mse_loss`]: `aclnnMseLoss` under a [`Reduction`](crate::Reduction);
//!   [`mse_loss_backward`]: `aclnnMseLossBackward`.
//! - [`cast`]: `aclnnCast`, the cast that ends a compute chain, to the output tensor's dtype.
//! - [`max_dim`]: `aclnnMaxDim`, the maximum along one dim and its position.
//! - [`clamp_as`]: `aclnnClamp`, `min(max(self, min), max)` with optional bounds, in the
//!   output's type.
//! - [`s_where`]: `aclnnSWhere`, `condition ? self : other` with broadcast;
//!   [`masked_fill_scalar`]: `aclnnInplaceMaskedFillScalar`, a value where a mask holds.
//! - The unary family, one function per row of `ascend_ops::unary` ([`exp`], [`expm1`],
//!   [`log`], ...).
//!
//! Each function takes the operator's inputs and attributes in the operator's C order
//! (without the output) and returns a new array in the compute type. Where the output
//! tensor's dtype changes what the device computes (what a cube kernel writes, the dtype
//! a sum accumulates in), an `_as` form takes the output's element type; elsewhere the
//! device computes in the compute type and casts to the output's dtype at the end, which
//! [`cast`] of the result gives. Each documents its
//! compute chain and its own error bound. The training operators' references are plain
//! ndarray code: f64 evaluation and accumulation (compensated for sums), one rounding to
//! the dtype the device computes in, then the cast to the output type. The sections
//! below describe the Mish references.
//!
//! Inputs are [`ArrayView`](ndarray::ArrayView)s of any dimensionality (`a.view()`); the
//! new arrays have the inputs' dimension type (for two inputs, the larger, as ndarray's
//! arithmetic does) and the compute type (an `_as` form: the output type it is given).
//!
//! # Semantics
//! - Shapes follow the operators: at most 8 dims per argument; `mish` keeps the shape of
//!   `x` (no broadcasting); `mish_backward` broadcasts `grad` against `x` (numpy rules,
//!   [`crate::shape::check_broadcast`]). An `_into` output must have the result's
//!   shape. Violations are typed [`crate::Error`] values; nothing panics. Empty shapes
//!   succeed without computing anything.
//! - The compute dtype is the input's for `mish` and `P = promote(G, X)`
//!   ([`crate::DType::promote`], [`crate::element::Promote`]) for `mish_backward`. The
//!   value is the exact real result for the inputs (widened exactly to it), rounded
//!   **once** to it (round to nearest, ties to even), and then converted to the output
//!   type (a second rounding when that is narrower, as the device's final cast does).
//! - `mish(±∞) = ±∞` but `mish(−∞) = −0`; `mish'(+∞) = 1`, `mish'(−∞) = −0` (the signs of
//!   the limits); NaN propagates; signed zeros, subnormals and results at the edges of the
//!   exponent range come out as the exact value rounds (e.g. `mish'` at `x = −100` gives
//!   ≈ `−3.7e−42·grad`, at `x = −1000` with `grad = +∞` it gives `−∞`).
//!
//! # Accuracy
//! Both formulas are evaluated in f64 with relative error of a few 1e−16 everywhere,
//! including next to the zero of `mish'` at `x ≈ −1.19243` (a Taylor expansion around the
//! double-double root), so the once-rounded result is the correctly rounded one except
//! when the exact value lies within ~1e−15 (relative) of a rounding boundary: never for
//! f16 and bf16 (checked exhaustively), and for f32 in fewer than 1 in 10^6 inputs (then
//! 1 ulp off).
//!
//! # Speed
//! One strided elementwise engine serves both operators: flat slices when all views share
//! a contiguous layout, else tiles of 1024 elements through stack buffers (16 × 64 tiles
//! when a view is transposed against the others, so that cache lines are reused), in the
//! memory order of most views; inputs of at least [`PARALLEL_THRESHOLD`] elements are
//! split across the rayon thread pool. A formula is its scalar f64 evaluation, which the
//! engine runs on every CPU; `mish` and `mish'` also have vector versions (AVX-512F or
//! AVX2+FMA chosen at run time, bitwise identical to the scalar evaluation): a cheaper
//! first pass with a proven error bound is kept wherever a rounding test shows it rounds
//! like the precise evaluation, which recomputes the rest (bitwise the same results). No buffer beyond the output is allocated: the tiles live on the
//! stack.

mod activation_grad;
mod adam_w;
mod addmm;
mod arith;
mod binary;
mod cast;
mod clamp;
pub(crate) mod convolution;
mod cube;
mod engine;
mod exact;
mod gather;
pub mod index;
mod math;
mod matmul;
mod max_dim;
pub(crate) mod max_pool;
mod mish;
mod mish_backward;
mod mse_loss;
mod narrow;
mod nll_loss;
pub mod random;
mod reduce_mean;
mod reduce_sum;
mod scalar;
#[cfg(test)]
mod scalar_formula;
mod select;
mod simd;
mod softmax;
mod tile;
mod unary;

pub use activation_grad::{gelu_backward, threshold_backward};
pub use adam_w::{AdamW, apply_adam_w_v2};
pub use addmm::{addmm, addmm_as};
pub use arith::{add, mul};
pub use binary::*;
pub use cast::cast;
pub use clamp::clamp_as;
pub use convolution::{ConvSpec, convolution, convolution_backward};
pub use cube::{CubeFormat, cube_format};
pub use matmul::{matmul, matmul_as};
pub use max_dim::max_dim;
pub use max_pool::{max_pool2d_with_indices, max_pool2d_with_indices_backward};
pub use mish::{mish, mish_into};
pub use mish_backward::{Broadcast, mish_backward, mish_backward_into};
pub use mse_loss::{mse_loss, mse_loss_backward};
pub use nll_loss::{nll_loss, nll_loss_backward};
pub use reduce_mean::{arg_max, mean};
pub use reduce_sum::{reduce_sum, reduce_sum_as};
// One function per row of the family table, so the list follows the table.
pub use scalar::*;
pub use select::{masked_fill_scalar, s_where};
pub use softmax::{log_softmax, log_softmax_backward, softmax, softmax_backward};
// One function per row of the family table, so the list follows the table.
pub use unary::*;

use crate::element::Element;
use crate::error::{Error, Result};
use ndarray::{Array, Dimension, IxDyn};

/// Number of output elements from which the work is split across rayon's thread pool;
/// smaller inputs run on the calling thread only.
pub const PARALLEL_THRESHOLD: usize = 1 << 15;

/// The SIMD level the reference's vectorized formulas (`mish`, `mish_backward`) use on
/// this CPU: `"avx512f"`, `"avx2+fma"` or `"scalar"` (all give bitwise identical results).
///
/// # Examples
/// ```
/// let isa = ascendcl::reference::simd_level();
/// assert!(["avx512f", "avx2+fma", "scalar"].contains(&isa));
/// ```
pub fn simd_level() -> &'static str {
    simd::Isa::detect().name()
}

/// A new array of `shape` (standard layout) filled with `T::default()`, or an error when
/// it would not fit in memory.
fn zeros<T: Element, D: Dimension>(shape: &[usize]) -> Result<Array<T, D>> {
    let too_large = || {
        Error::InvalidArgument(format!(
            "an output of shape {shape:?} does not fit in memory"
        ))
    };
    let len = shape
        .iter()
        .try_fold(1usize, |n, &d| n.checked_mul(d))
        .filter(|&n| {
            n.checked_mul(size_of::<T>())
                .is_some_and(|b| b <= isize::MAX as usize)
        })
        .ok_or_else(too_large)?;
    let mut data = Vec::new();
    data.try_reserve_exact(len).map_err(|_| too_large())?;
    data.resize(len, T::default());
    let dim = D::from_dimension(&IxDyn(shape)).ok_or_else(|| {
        Error::InvalidArgument(format!("shape {shape:?} does not fit the dimension type"))
    })?;
    Array::from_shape_vec(dim, data).map_err(|e| Error::InvalidArgument(e.to_string()))
}

// Tensor lists.
mod cat;
pub use cat::cat;
