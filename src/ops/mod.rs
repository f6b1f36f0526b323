//! The operators, one module each. Each is a declaration (`operator!`): its arguments and
//! their roles, its product and dtype rules, its shape rule and its two C entry points,
//! from which the protocol layer validates calls and runs the two-phase protocol.
//!
//! [`Arg`], [`Role`] and [`ShapeRule`] describe a declared operator (its marker type's
//! `ARGS` and `SHAPE`).

pub use crate::protocol::{Arg, Role, ShapeRule};

pub mod copy;
pub mod mish;
pub mod mish_backward;
