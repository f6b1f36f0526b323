//! HCCL as an optional library: `libhccl.so` next to the loaded runtime (here links to
//! the simulator's cdylib), or an in-process backend's functions; each way it can be
//! missing gives its own `HcclLoadError`, and the runtime loads regardless.

use ascend_sys::hccl::{
    HCCL_E_PARA, HCCL_E_PTR, HCCL_LIBRARY, Hccl, HcclLoadError, HcclOrigin, HcclTable,
};
use ascend_sys::{Api, LIBRARIES, LoadOptions};
use std::ffi::{CStr, c_void};
use std::path::{Path, PathBuf};

mod common;
use common::{simulator_cdylib, unrelated_library};

/// A directory holding CANN's three libraries and, when `hccl` is given, `libhccl.so`,
/// all links.
fn toolkit(tag: &str, runtime: &Path, hccl: Option<&Path>) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ascendcl-hccl-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create dir");
    for name in LIBRARIES {
        std::os::unix::fs::symlink(runtime, dir.join(name)).expect("symlink");
    }
    if let Some(h) = hccl {
        std::os::unix::fs::symlink(h, dir.join(HCCL_LIBRARY)).expect("symlink");
    }
    dir
}

/// Calls that need no initialised runtime, through a loaded table.
fn smoke(table: &HcclTable) {
    // SAFETY: HcclGetErrorString returns a static string; HcclGetRankSize with a NULL
    // communicator only reports it.
    unsafe {
        let text = CStr::from_ptr((table.HcclGetErrorString)(HCCL_E_PARA));
        assert_eq!(text.to_str(), Ok("parameter error"));
        let mut n = 0u32;
        assert_eq!(
            (table.HcclGetRankSize)(std::ptr::null_mut(), &mut n),
            HCCL_E_PTR
        );
    }
}

#[test]
fn hccl_is_found_next_to_the_runtime_or_reported_missing() {
    let sim = simulator_cdylib();

    let with = toolkit("with", &sim, Some(&sim));
    let api = Api::load(&LoadOptions::from_dir(&with)).expect("runtime");
    let hccl = Hccl::for_api(&api).expect("libhccl.so beside it");
    assert_eq!(
        hccl.origin(),
        &HcclOrigin::Loaded {
            path: with.join(HCCL_LIBRARY)
        }
    );
    smoke(&hccl);

    // A toolkit without HCCL still loads; HCCL alone is missing.
    let without = toolkit("without", &sim, None);
    let api = Api::load(&LoadOptions::from_dir(&without)).expect("runtime without HCCL");
    let err = Hccl::for_api(&api).unwrap_err();
    let HcclLoadError::NotFound { path, .. } = &err else {
        panic!("expected NotFound, got {err:?}");
    };
    assert_eq!(path, &without.join(HCCL_LIBRARY).display().to_string());
    assert!(
        err.to_string().contains("libhccl.so could not be opened"),
        "{err}"
    );

    // A library that is not HCCL.
    let err = Hccl::load_from(&unrelated_library()).unwrap_err();
    assert!(
        matches!(
            err,
            HcclLoadError::MissingSymbol {
                symbol: "HcclCommInitAll",
                ..
            }
        ),
        "{err:?}"
    );

    for dir in [with, without] {
        let _ = std::fs::remove_dir_all(dir);
    }
}

#[test]
fn an_in_process_backend_provides_hccl_through_its_resolver() {
    let with = Api::from_table_with_resolver(ascend_sim::fn_table(), "sim", ascend_sim::symbol);
    let hccl = Hccl::for_api(&with).expect("the simulator's HCCL");
    assert_eq!(hccl.origin(), &HcclOrigin::InProcess { name: "sim" });
    smoke(&hccl);

    let without = Api::from_table(ascend_sim::fn_table(), "sim without HCCL");
    assert_eq!(
        Hccl::for_api(&without).unwrap_err(),
        HcclLoadError::NotProvided {
            backend: "sim without HCCL",
            symbol: "HcclCommInitAll"
        }
    );

    fn partial(name: &str) -> Option<*const c_void> {
        (name != "HcclBarrier")
            .then(|| ascend_sim::symbol(name))
            .flatten()
    }
    let err = Hccl::from_resolver(partial, "partial").unwrap_err();
    assert_eq!(
        err,
        HcclLoadError::NotProvided {
            backend: "partial",
            symbol: "HcclBarrier"
        }
    );
    assert_eq!(HcclTable::SYMBOLS.len(), 15);
}
