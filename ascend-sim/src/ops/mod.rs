//! The operators of `libopapi.so`, one module each: its phase-1 checks in the vendor's
//! order and its kernel. Everything they share lives in [`crate::nnopbase`].

pub(crate) mod mish_backward;
