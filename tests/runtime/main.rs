//! Tensors, transfers, host memory, the descriptor cache and error texts through the safe
//! API.
//!
//! Every test that reaches the simulator holds the binary's gate (`common::gate::Gate`):
//! exclusive through `common::LeakCheck::start()` or `common::serial()`, shared through
//! `common::shared()`. A new test file joins this binary as a module: move it here
//! (`git mv tests/api_<op>.rs tests/ops/<op>.rs`), delete its `mod common;` line (or make it
//! `use crate::common;`), add `mod <op>;` below, and begin each of its tests with
//! `let _leaks = common::LeakCheck::start();` or `let _gate = crate::common::shared();`.
//! A file that injects faults, installs a global allocator, sets environment variables,
//! chooses other devices (`use_devices`) or spawns processes stays a binary of its own
//! (`tests/<file>.rs`); see `tests/README.md`.

#[path = "../common/mod.rs"]
mod common;

mod descriptor_cache;
mod error_text;
mod host;
mod tensor;
mod transfers;
