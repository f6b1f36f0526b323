//! The operators of `libopapi.so`, one module each: its phase-1 checks in the vendor's
//! order and its kernel. Everything they share lives in [`crate::nnopbase`].

pub(crate) mod inplace_copy;
pub(crate) mod mish;
pub(crate) mod mish_backward;

/// The operators' scalar kernels, exactly as the simulated device evaluates them.
pub mod kernel {
    pub use super::mish::mish_f32;
    pub use super::mish_backward::mish_grad_f32;
}
