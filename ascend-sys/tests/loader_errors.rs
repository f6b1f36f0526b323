//! What the loader says when CANN cannot be used: missing directories, missing symbols.

use ascend_sys::{Api, FnTable, LoadError, LoadOptions, Origin};
use std::ffi::c_void;

#[test]
fn missing_directory_lists_every_place_searched() {
    let dir = std::env::temp_dir().join("ascendcl-no-such-toolkit");
    let err = Api::load(&LoadOptions::from_dir(&dir)).unwrap_err();
    let LoadError::NotFound { searched } = &err else {
        panic!("expected NotFound, got {err:?}");
    };
    let places: Vec<&str> = searched.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(
        places,
        [
            dir.display().to_string(),
            dir.join("lib64").display().to_string()
        ]
    );
    let text = err.to_string();
    assert!(
        text.contains("libascendcl.so, libnnopbase.so, libopapi.so"),
        "{text}"
    );
    assert!(
        text.contains(&format!("{}: no libascendcl.so", dir.display())),
        "{text}"
    );
    assert!(text.contains("ASCEND_HOME_PATH"), "{text}");
}

#[test]
fn an_explicit_directory_disables_the_system_search() {
    let options = LoadOptions::from_dir("/opt/x");
    assert!(options.candidate_dirs().iter().all(Option::is_some));
    let default = LoadOptions::default();
    assert_eq!(default.candidate_dirs().last(), Some(&None));
}

extern "C" fn placeholder() {}

#[test]
fn resolving_stops_at_the_first_missing_required_symbol() {
    let mut asked = Vec::new();
    // SAFETY: the table is never called; only which symbols are requested is observed.
    let result = unsafe {
        FnTable::resolve_with(|library, symbol| {
            asked.push((library, symbol));
            (symbol != "aclrtMemset").then_some(placeholder as *const c_void)
        })
    };
    assert_eq!(result.err(), Some(("libascendcl.so", "aclrtMemset")));
    assert_eq!(asked.last(), Some(&("libascendcl.so", "aclrtMemset")));
    assert_eq!(FnTable::REQUIRED_SYMBOLS.len(), 26);
    assert_eq!(FnTable::OPTIONAL_SYMBOLS.len(), 17);
}

#[test]
fn the_table_asks_for_no_operator_and_no_uncalled_runtime_function() {
    let mut asked = Vec::new();
    // SAFETY: the table is never called.
    let table = unsafe {
        FnTable::resolve_with(|library, symbol| {
            asked.push((library, symbol));
            let optional = FnTable::OPTIONAL_SYMBOLS.contains(&(library, symbol));
            (!optional).then_some(placeholder as *const c_void)
        })
    }
    .expect("every required symbol resolves");
    assert!(asked.iter().all(|(library, _)| *library != "libopapi.so"));
    assert!(table.aclFinalize.is_none() && table.aclrtGetDevice.is_none());
    for symbol in [
        "aclFinalize",
        "aclrtGetDevice",
        "aclrtCreateContext",
        "aclrtDestroyContext",
    ] {
        assert!(
            FnTable::OPTIONAL_SYMBOLS.contains(&("libascendcl.so", symbol)),
            "{symbol}"
        );
    }
}

#[test]
fn optional_symbols_may_be_absent() {
    // SAFETY: as above, the table is never called.
    let table = unsafe {
        FnTable::resolve_with(|_, symbol| {
            (!symbol.starts_with("aclSet") && symbol != "aclDestroyAclOpExecutor")
                .then_some(placeholder as *const c_void)
        })
    }
    .expect("every required symbol resolves");
    let api = Api::from_table(table, "placeholder");
    assert!(!api.supports_executor_reuse());
    assert_eq!(
        api.origin(),
        &Origin::InProcess {
            name: "placeholder"
        }
    );
    assert!(format!("{api:?}").contains("executor_reuse: false"));
    assert_eq!(api.operator_symbol("aclnnMishBackward"), None);
}

fn resolver(name: &str) -> Option<*const c_void> {
    (name == "aclnnMishBackward").then_some(placeholder as *const c_void)
}

#[test]
fn operators_resolve_by_name_through_the_backend() {
    // SAFETY: the table is never called.
    let table = unsafe { FnTable::resolve_with(|_, _| Some(placeholder as *const c_void)) }
        .expect("every symbol resolves");
    let api = Api::from_table_with_resolver(table, "resolver", resolver);
    assert_eq!(
        api.operator_symbol("aclnnMishBackward")
            .map(|p| p.as_ptr().cast_const()),
        Some(placeholder as *const c_void)
    );
    assert_eq!(api.operator_symbol("aclnnMish"), None);
}

#[test]
fn missing_symbol_message_names_library_path_and_symbol() {
    let err = LoadError::MissingSymbol {
        library: "libascendcl.so",
        path: "/x/lib64/libascendcl.so".into(),
        symbol: "aclrtMemset",
    };
    let text = err.to_string();
    assert!(
        text.starts_with("libascendcl.so at /x/lib64/libascendcl.so has no symbol `aclrtMemset`"),
        "{text}"
    );
    assert!(text.contains("incomplete install"), "{text}");
}

#[test]
fn status_names_cover_runtime_and_aclnn_codes() {
    assert_eq!(ascend_sys::status_name(107002), "ACL_ERROR_RT_CONTEXT_NULL");
    assert_eq!(ascend_sys::status_name(161002), "ACLNN_ERR_PARAM_INVALID");
    assert_eq!(
        ascend_sys::status_name(561003),
        "ACLNN_ERR_INNER_FIND_KERNEL_ERROR"
    );
    assert_eq!(ascend_sys::status_name(-5), "UNKNOWN");
}
