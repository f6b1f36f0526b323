//! The synchronisation primitives of the stream bookkeeping: `std`'s, or loom's when the
//! crate is built with `--cfg loom` for model checking (`scripts/loom.sh`).

#[cfg(loom)]
pub(crate) use loom::sync::{Mutex, MutexGuard};
#[cfg(not(loom))]
pub(crate) use std::sync::{Mutex, MutexGuard};

pub(crate) use std::sync::PoisonError;
