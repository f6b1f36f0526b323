//! The real `dlopen` path: a toolkit directory whose `lib64/` holds `libascendcl.so`,
//! `libnnopbase.so` and `libopapi.so` as links to the simulator's cdylib, found through
//! `ASCEND_HOME_PATH` exactly as on an Atlas machine after `source set_env.sh`.

use ascend_sys::{Api, LIBRARIES, LoadError, LoadOptions, Origin};
use std::ffi::{CStr, c_void};
use std::path::PathBuf;

mod common;
use common::{simulator_cdylib, unrelated_library};

/// A fresh toolkit root whose `lib64/` links each CANN library name to `target_of(name)`.
fn fake_toolkit(tag: &str, target_of: impl Fn(&str) -> PathBuf) -> PathBuf {
    let root = std::env::temp_dir().join(format!("ascendcl-toolkit-{tag}-{}", std::process::id()));
    let lib64 = root.join("lib64");
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&lib64).expect("create lib64");
    for name in LIBRARIES {
        std::os::unix::fs::symlink(target_of(name), lib64.join(name)).expect("symlink");
    }
    root
}

// One test function: it sets ASCEND_HOME_PATH, which must not race with other tests.
#[test]
fn loads_through_dlopen_and_reports_missing_symbols() {
    let sim = simulator_cdylib();
    let root = fake_toolkit("sim", |_| sim.clone());

    // SAFETY: this test binary runs this single test, so no other thread reads the
    // environment concurrently.
    unsafe { std::env::set_var("ASCEND_HOME_PATH", &root) };
    let api = Api::load(&LoadOptions::default()).expect("load via ASCEND_HOME_PATH");
    assert_eq!(
        api.origin(),
        &Origin::Loaded {
            dir: Some(root.join("lib64"))
        }
    );
    assert!(api.supports_executor_reuse());

    // SAFETY: calls follow the C contracts: aclInit with a null config, out-pointers to
    // live locals, and the returned SoC name is a NUL-terminated static string.
    unsafe {
        assert_eq!((api.aclInit)(std::ptr::null()), ascend_sys::ACL_SUCCESS);
        let mut count = 0u32;
        assert_eq!(
            (api.aclrtGetDeviceCount)(&mut count),
            ascend_sys::ACL_SUCCESS
        );
        assert_eq!(count, 1);
        assert_eq!((api.aclrtSetDevice)(0), ascend_sys::ACL_SUCCESS);
        let soc = CStr::from_ptr((api.aclrtGetSocName)());
        assert_eq!(soc.to_str(), Ok("Ascend910B4"));
        let mut dev: *mut c_void = std::ptr::null_mut();
        assert_eq!(
            (api.aclrtMalloc)(&mut dev, 64, ascend_sys::ACL_MEM_MALLOC_HUGE_FIRST),
            ascend_sys::ACL_SUCCESS
        );
        assert_eq!((api.aclrtFree)(dev), ascend_sys::ACL_SUCCESS);
        assert_eq!((api.aclrtResetDevice)(0), ascend_sys::ACL_SUCCESS);
    }

    // Operators are found by name in libopapi.so.
    assert!(
        api.operator_symbol("aclnnMishBackwardGetWorkspaceSize")
            .is_some()
    );
    assert!(api.operator_symbol("aclnnMishBackward").is_some());
    assert!(api.operator_symbol("aclnnNoSuchOperator").is_none());

    // An older CANN whose libopapi.so lacks the operator still loads; the operator is
    // just not there.
    let libm = unrelated_library();
    let old = fake_toolkit("old", |name| {
        if name == "libopapi.so" {
            libm.clone()
        } else {
            sim.clone()
        }
    });
    let old_api = Api::load(&LoadOptions::from_dir(&old)).expect("loads without the operator");
    assert!(old_api.operator_symbol("aclnnMishBackward").is_none());
    assert!(
        old_api
            .operator_symbol("aclnnMishBackwardGetWorkspaceSize")
            .is_none()
    );
    drop(old_api);

    // A directory where the runtime library itself is not CANN.
    let bogus = fake_toolkit("bogus", |_| libm.clone());
    let err = Api::load(&LoadOptions::from_dir(&bogus)).unwrap_err();
    assert!(
        matches!(
            err,
            LoadError::MissingSymbol {
                library: "libascendcl.so",
                symbol: "aclInit",
                ..
            }
        ),
        "{err:?}"
    );

    for dir in [root, old, bogus] {
        let _ = std::fs::remove_dir_all(dir);
    }
}
