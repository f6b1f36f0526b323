//! Fault injection for every catalogued operator (the families' rows and the other
//! operators outside the one symbol list), found through `simulated_symbols`, so that a new
//! row is swept without a list kept here (own process: faults are process-wide).

mod common;
use ascend_sim::{SYMBOLS, call_count, set_fault, simulated_symbols, symbol};
use ascend_sys::*;
use common::*;
use std::ffi::c_void;

/// Every aclnn operator's phase 2 has this prototype.
type Phase2 =
    unsafe extern "C" fn(*mut c_void, u64, *mut aclOpExecutor, aclrtStream) -> aclnnStatus;

fn catalogued() -> Vec<&'static str> {
    simulated_symbols()
        .into_iter()
        .filter(|s| !SYMBOLS.contains(s))
        .collect()
}

#[test]
fn every_catalogued_operator_has_both_phases() {
    let names = catalogued();
    let launches: Vec<_> = names
        .iter()
        .filter(|s| !s.ends_with("GetWorkspaceSize"))
        .collect();
    assert!(
        launches.len() >= 40,
        "{} catalogued launches",
        launches.len()
    );
    for name in &names {
        let twin = match name.strip_suffix("GetWorkspaceSize") {
            Some(launch) => launch.to_owned(),
            None => format!("{name}GetWorkspaceSize"),
        };
        assert!(names.contains(&twin.as_str()), "{name} without {twin}");
        assert!(symbol(name).is_some(), "{name} has no address");
    }
}

#[test]
fn every_catalogued_launch_fails_on_its_nth_call() {
    setup();
    let stream = create_stream();
    for name in catalogued()
        .into_iter()
        .filter(|s| !s.ends_with("GetWorkspaceSize"))
    {
        let address = symbol(name).expect("catalogued");
        // SAFETY: a catalogued aclnn launch has the common phase-2 prototype.
        let launch = unsafe { std::mem::transmute::<*const c_void, Phase2>(address) };
        // SAFETY: a NULL workspace and executor are refused before anything is read.
        let call = || unsafe { launch(std::ptr::null_mut(), 0, std::ptr::null_mut(), stream) };
        set_fault(name, 2).unwrap();
        let before = call_count(name);
        let first = call();
        let second = call();
        assert_eq!(call_count(name), before + 2, "{name}");
        assert_eq!(second, ACLNN_ERR_RUNTIME_ERROR, "{name}: injected failure");
        assert_ne!(
            first, second,
            "{name}: the first call must not fail like the fault"
        );
        assert_ne!(call(), second, "{name}: the fault fires once");
    }
}
