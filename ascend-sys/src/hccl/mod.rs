//! HCCL (`libhccl.so`), CANN's collective communication library, as an optional
//! library beside the runtime: its declarations (from `include/hccl_sys.h`, the
//! bindgen output committed as `src/hccl/bindings.rs`), and [`Hccl`], its function table,
//! found next to CANN's libraries or provided by an in-process backend.
//!
//! Nothing else in this crate depends on it: a toolkit without `libhccl.so` loads as
//! before, and only [`Hccl::for_api`] reports that HCCL is missing.

bindings_module!("hccl_bindings.rs");

mod library;

/// The raw HCCL declarations (types, constants and `extern "C"` prototypes) as generated
/// by bindgen. The prototypes are never linked; calls go through [`HcclTable`].
pub use bindings::*;
pub use library::{HCCL_LIBRARY, Hccl, HcclLoadError, HcclOrigin, HcclTable};

/// Which header the HCCL declarations were generated from.
pub const HCCL_BINDINGS_SOURCE: &str = match option_env!("ASCEND_SYS_HCCL_BINDINGS_SOURCE") {
    Some(source) => source,
    None => "include/hccl_sys.h (pre-generated src/hccl/bindings.rs)",
};

/// The symbolic name of an `HcclResult` (`"HCCL_E_PARA"`, ...), or `"UNKNOWN"`.
pub fn result_name(code: HcclResult) -> &'static str {
    symbolic_name!(
        code;
        HCCL_SUCCESS,
        HCCL_E_PARA,
        HCCL_E_PTR,
        HCCL_E_MEMORY,
        HCCL_E_INTERNAL,
        HCCL_E_NOT_SUPPORT,
        HCCL_E_NOT_FOUND,
        HCCL_E_UNAVAIL,
        HCCL_E_SYSCALL,
        HCCL_E_TIMEOUT,
        HCCL_E_OPEN_FILE_FAILURE,
        HCCL_E_TCP_CONNECT,
        HCCL_E_ROCE_CONNECT,
        HCCL_E_TCP_TRANSFER,
        HCCL_E_ROCE_TRANSFER,
        HCCL_E_RUNTIME,
        HCCL_E_DRV,
        HCCL_E_PROFILING,
        HCCL_E_CCE,
        HCCL_E_NETWORK,
        HCCL_E_AGAIN,
        HCCL_E_REMOTE,
        HCCL_E_SUSPENDING,
        HCCL_E_OPRETRY_FAIL,
    )
}
