//! The operators, one module each. Each is a declaration (`operator!`): its arguments and
//! their roles, its product and dtype rules, its shape rule and its two C entry points,
//! from which the protocol layer validates calls and runs the two-phase protocol.
//! Each module is `operator!` declarations and nothing else: what an operator needs that
//! is generic lives in [`protocol`](crate::protocol) once.

pub mod copy;
pub mod mish;
pub mod mish_backward;
