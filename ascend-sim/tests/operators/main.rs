//! The operators as the C ABI sees them: the vendor's checks in order, dtypes per
//! product, kernels against the reference, the families' tables (one process, initialised
//! once with `common::FIVE_SOCS`).
//!
//! Every test holds the binary's gate (`crate::common::Gate`): `common::serial()` if it reads
//! process-wide counters, sets faults or changes device state, `common::shared()` otherwise.
//! A new test file joins this binary as a module: move it here, make its `mod common;`
//! (and `mod opkit;`, ...) `use crate::common;`, add `mod <file>;` below, and begin each
//! test with one of the two guards. A file that sets environment variables, installs a
//! global allocator or needs other devices stays a binary of its own (`tests/<file>.rs`).

#[path = "../casekit/mod.rs"]
mod casekit;
#[path = "../common/mod.rs"]
mod common;
#[path = "../nn_cases/mod.rs"]
mod nn_cases;
#[path = "../opkit/mod.rs"]
mod opkit;

mod activation_grads;
mod add;
mod addmm;
mod arg_max_mean;
mod argument_model;
mod binary;
mod cast_one;
mod cat;
mod cnn;
mod fill_zero;
mod gather;
mod matmul;
mod mish;
mod mse_loss;
mod mul;
mod nll_loss;
mod pool;
mod random;
mod reduce_sum;
mod scalar;
mod scalar_pow;
mod shapes_props;
mod softmax;
mod unary;
