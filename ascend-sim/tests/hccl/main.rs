//! HCCL in one process: communicators, collectives and meetings (the
//! devices and timeout of `hccl_common::hccl_serial`).
//!
//! Every test holds the binary's gate (`crate::common::Gate`): `common::serial()` if it reads
//! process-wide counters, sets faults or changes device state, `common::shared()` otherwise.
//! A new test file joins this binary as a module: move it here, make its `mod common;`
//! (and `mod opkit;`, ...) `use crate::common;`, add `mod <file>;` below, and begin each
//! test with one of the two guards. A file that sets environment variables, installs a
//! global allocator or needs other devices stays a binary of its own (`tests/<file>.rs`).

#[path = "../common/mod.rs"]
mod common;
#[path = "../hccl_common/mod.rs"]
mod hccl_common;

mod hccl;
mod hccl_meetings;
