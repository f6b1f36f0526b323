//! MishBackward's two C entry points looked up by name, as a C program would with `dlsym`:
//! the one home of the hand-written raw sequence's lookup, shared by the tests (through
//! `common`), `benches/host_overhead.rs` and `examples/overhead_probe.rs` (by path).

use std::ffi::c_void;

/// `aclnnMishBackwardGetWorkspaceSize`'s prototype.
pub type MishBackwardPhase1 = unsafe extern "C" fn(
    *const ascend_sys::aclTensor,
    *const ascend_sys::aclTensor,
    *mut ascend_sys::aclTensor,
    *mut u64,
    *mut *mut ascend_sys::aclOpExecutor,
) -> ascend_sys::aclnnStatus;

/// MishBackward's phase 1 and phase 2 in `api`.
///
/// # Panics
/// When `api` has no symbol of either name (a test or benchmark setup failure).
pub fn mish_backward_fns(
    api: &ascend_sys::Api,
) -> (MishBackwardPhase1, ascend_sys::OperatorLaunchFn) {
    let find = |name: &str| {
        api.operator_symbol(name)
            .unwrap_or_else(|| panic!("no {name}"))
            .as_ptr()
    };
    // SAFETY: the symbols of these names have exactly these prototypes.
    unsafe {
        (
            std::mem::transmute::<*mut c_void, MishBackwardPhase1>(find(
                "aclnnMishBackwardGetWorkspaceSize",
            )),
            std::mem::transmute::<*mut c_void, ascend_sys::OperatorLaunchFn>(find(
                "aclnnMishBackward",
            )),
        )
    }
}
