//! HCCL through the safe API on four Atlas A2 devices (`hccl_common::FOUR_A2`, no timeout):
//! communicator lifetimes and collective properties.
//!
//! Every test holds the binary's gate: exclusive through `hccl_common::LeakCheck::start`,
//! shared through `hccl_common::shared()`. A new file joins as `tests/ops/main.rs` says
//! (with `hccl_common` for `common`) if it uses the same devices and timeout.

#[path = "../hccl_common/mod.rs"]
mod hccl_common;

mod lifetimes;
mod properties;
