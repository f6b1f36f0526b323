//! The operators through the safe API: the families' tables against the reference,
//! dtypes, views, plans, user-declared operators, and the accuracy contract.
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

mod accuracy_contract;
mod adam_w;
mod arg_max_mean;
mod argument_model;
mod binary_family;
mod bool_f64;
mod cast_one;
mod clone;
mod cnn;
mod copy;
mod families;
mod gather;
mod integers;
mod matmul;
mod mish_backward;
mod nll_loss;
mod plans;
mod pow_tensor_scalar;
mod scalar_family;
mod softmax;
mod tensor_ops;
mod training_ops;
mod user_operator;
