//! The operators, one module each. Every operator validates its arguments in Rust (typed
//! errors, no FFI call) and then runs the shared two-phase protocol.

pub mod mish_backward;
