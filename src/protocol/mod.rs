//! The protocol layer: the two-phase aclnn protocol, written once for every operator.
//!
//! * An operator is declared with `operator!` (in `declare`): its arguments (names and
//!   roles), its product and dtype rules, its shape rule and its two C entry points. The
//!   declaration implements `Operator` and generates the public function and the
//!   [`Plan`] methods.
//! * `call` validates a call against the declaration (`validate`: typed errors, no FFI
//!   call) and runs `launch`: the descriptors, phase 1, the workspace from the stream's
//!   cache, phase 2 on the stream.
//! * A [`Plan`] runs phase 1 once and launches phase 2 many times, through the same
//!   `prepare` (phase 1) and `enqueue` (phase 2).
//! * Entry points are looked up by name the first time a runtime uses the operator
//!   (`EntryPoints`); a toolkit that lacks one reports
//!   [`Error::UnsupportedOperator`](crate::Error::UnsupportedOperator).
//!
//! An argument that is a whole [`DeviceTensor`](crate::DeviceTensor) uses the descriptor
//! cached on the tensor (made on its first use, destroyed with the tensor after its queued
//! work); any other view gets a descriptor for this call only. Guards release everything
//! made so far on every error path: per-call descriptors (`aclDestroyTensor`) and an
//! executor that never reached phase 2 (`aclDestroyAclOpExecutor`). Once phase 2 is called
//! on a non-repeatable executor it is CANN's, released by phase 2 whether it succeeds or
//! fails, so no error path destroys it. Nothing here allocates unless an error is
//! reported.

mod declare;
mod descriptors;
mod entry;
mod launch;
mod plan;
mod rules;

pub(crate) use declare::operator;
pub(crate) use entry::EntryPoints;
pub(crate) use launch::call;
pub use plan::Plan;
pub(crate) use rules::Operator;
pub use rules::{Arg, Role, ShapeRule};
