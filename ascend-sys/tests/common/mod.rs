//! Libraries the loader tests open: the simulator's cdylib, and one that is not CANN.

use std::path::PathBuf;

/// `libascend_sim.so` with its C exports (found next to the test executable, or built).
pub fn simulator_cdylib() -> PathBuf {
    ascend_sim::testing::cdylib_path().expect("the simulator's cdylib")
}

/// A shared library that exists on every Linux machine but defines no CANN or HCCL
/// symbol.
pub fn unrelated_library() -> PathBuf {
    [
        "/lib/x86_64-linux-gnu/libm.so.6",
        "/usr/lib/x86_64-linux-gnu/libm.so.6",
        "/lib64/libm.so.6",
        "/usr/lib64/libm.so.6",
    ]
    .iter()
    .map(PathBuf::from)
    .find(|p| p.is_file())
    .expect("libm.so.6 in a standard place")
}
