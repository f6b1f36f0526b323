//! The runtime as the C ABI sees it: init, devices, memory, streams, events, handles,
//! error texts, hostile callers and the racecheck (one process, the default device set).
//! The racecheck's modules and `hostile` take the exclusive gate: the latest sanitizer
//! finding (`ascend_sim::last_report`) is process-wide, and they read or clear it.
//!
//! Every test holds the binary's gate (`crate::common::Gate`): `common::serial()` if it reads
//! process-wide counters, sets faults or changes device state, `common::shared()` otherwise.
//! A new test file joins this binary as a module: move it here, make its `mod common;`
//! (and `mod opkit;`, ...) `use crate::common;`, add `mod <file>;` below, and begin each
//! test with one of the two guards. A file that sets environment variables, installs a
//! global allocator or needs other devices stays a binary of its own (`tests/<file>.rs`).

#[path = "../common/mod.rs"]
mod common;
#[path = "../racecheck_common/mod.rs"]
mod racecheck_common;

mod attrs;
mod end_to_end;
mod error_text;
mod fidelity;
mod hostile;
mod inplace_copy;
mod ops;
mod racecheck;
mod racecheck_more;
mod runtime;
