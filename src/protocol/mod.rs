//! The protocol layer: the two-phase aclnn protocol, written once for every operator, and
//! what a declaration ([`operator!`](crate::operator)) is made of.
//!
//! * An operator is declared with [`operator!`](crate::operator): its arguments in C order,
//!   tensors and attributes, each with a role ([`Arg`]); its product and dtype rules; its
//!   rule on the whole call (one of [`rules`], a function of a [`Call`]); its two C entry
//!   points. The declaration implements [`Operator`], whose typed phase-1 call passes each
//!   argument as its C type, and generates the public function and the [`Plan`] methods.
//! * A call is validated against the declaration (typed errors, no FFI call), then runs:
//!   the handles (`aclTensor` descriptors, `aclScalar`s, `aclIntArray`s), phase 1, the
//!   workspace from the stream's cache, phase 2 on the stream.
//! * A [`Plan`] runs phase 1 once, and launches phase 2 many times, on tensors of its
//!   dims and strides at any offset (a moving batch window); [`Plan::set_attr`] changes an
//!   attribute, which costs one phase 1 at the next launch (CANN fixes attributes there).
//! * With the device's executor cache on
//!   ([`Device::set_executor_cache_capacity`](crate::Device::set_executor_cache_capacity)),
//!   a one-off call like a recent one launches that call's repeatable executor as a plan
//!   does (`cache`). A call with a tensor list bypasses it.
//! * Entry points are looked up by name the first time a runtime uses the operator; a
//!   toolkit that lacks one reports
//!   [`Error::UnsupportedOperator`](crate::Error::UnsupportedOperator).
//!
//! An argument that is a whole [`DeviceTensor`](crate::DeviceTensor) uses the descriptor
//! cached on the tensor (made on its first use, destroyed with the tensor after its queued
//! work); any other view gets a descriptor for this call only. Scalars and int arrays are
//! made per call, and released once phase 2 has returned (CANN reads them in phase 1, and
//! torch_npu keeps them until phase 2 returns; so does this layer). Guards release
//! everything made so far on every error path, and an executor that never reached phase 2
//! (`aclDestroyAclOpExecutor`). Once phase 2 is called on a non-repeatable executor it is
//! CANN's, released by phase 2 whether it succeeds or fails, so no error path destroys it.
//! Nothing here allocates unless an error is reported.

mod args;
mod attr;
pub(crate) mod cache;
mod declare;
mod entry;
pub(crate) mod handles;
mod launch;
mod plan;
mod reusable;
pub mod rules;

pub use args::{Arg, ArgKind, Call, Role, Value, label};
pub use attr::{
    Attr, Attribute, BOOL_LIST_CAPACITY, BoolList, CArg, CValue, INT_LIST_CAPACITY, IntList, Kind,
    Scalar,
};
pub use cache::ExecutorCacheStats;
pub use declare::Promise;
pub use entry::EntryPoints;
pub use launch::{call, call_new, call_new2};
pub use plan::Plan;
pub use rules::Operator;

/// Proof that an [`operator!`](crate::operator) declaration is one of this crate's own
/// (its `@verified` form): private, so a user crate cannot name it.
pub(crate) struct Verified;

/// The [`ArgKind`] of an attribute whose C type has `kind` (a declaration whose attribute
/// type maps to a tensor is refused when called).
#[doc(hidden)]
pub const fn attr_kind(kind: Option<Kind>) -> ArgKind {
    match kind {
        Some(k) => ArgKind::Attr(k),
        None => ArgKind::Tensor(Role::Input),
    }
}
