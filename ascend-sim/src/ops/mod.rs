//! The operators of `libopapi.so`, one module each: its phase-1 checks in the vendor's
//! order and its kernel. Everything they share lives in nnopbase. Each module's
//! documentation is what the simulator models of that operator.

pub mod add;
pub mod addmm;
pub(crate) mod alpha_chain;
pub(crate) mod binary;
mod checks;
pub(crate) mod clamp;
pub mod inplace_copy;
pub mod inplace_fill_scalar;
pub mod inplace_zero;
pub mod matmul;
pub(crate) mod max_dim;
pub mod mish;
pub mod mish_backward;
pub mod mse_loss;
pub mod mse_loss_backward;
pub mod mul;
pub mod reduce_sum;
pub(crate) mod scalar;
pub(crate) mod unary;

/// The families' entry points, one slice per family (see `catalog`).
pub(crate) static FAMILIES: &[&[crate::catalog::Entry]] = &[
    unary::ENTRIES,
    binary::ENTRIES,
    scalar::ENTRIES,
    clamp::ENTRIES,
    max_dim::ENTRIES,
];

/// The rank limit of the operators' tensors (their "above 8 dims" checks).
const MAX_DIMS: usize = 8;

/// The operators' scalar kernels, exactly as the simulated device evaluates them.
pub mod kernel {
    pub use super::mish::mish_f32;
    pub use super::mish_backward::mish_grad_f32;
}
