//! The simulator's environment variables are checked at aclInit (own process: aclInit
//! succeeds once, after every malformed setting has been refused with its message).

mod common;
use ascend_sim::api;
use ascend_sys::*;
use common::*;
use std::ffi::CStr;

fn set(name: &str, value: Option<&str>) {
    // SAFETY: this file has one test, so no other thread reads the environment meanwhile.
    unsafe {
        match value {
            Some(v) => std::env::set_var(name, v),
            None => std::env::remove_var(name),
        }
    }
}

/// Asserts that aclInit refuses the current environment with 100000 and a message
/// containing every fragment.
#[track_caller]
fn refused(fragments: &[&str]) {
    // SAFETY: NULL config path.
    let rc = unsafe { api::aclInit(std::ptr::null()) };
    assert_fails_with(rc, ACL_ERROR_INVALID_PARAM, fragments);
}

#[test]
fn malformed_variables_fail_acl_init_with_what_is_accepted() {
    set("ASCEND_SIM_DEVICES", Some("Foo123"));
    refused(&[
        "ASCEND_SIM_DEVICES",
        "\"Foo123\" is not a SoC the simulator knows",
        "Ascend910B4",
        "Ascend310P3",
        "Ascend910_9391",
    ]);
    set("ASCEND_SIM_DEVICES", Some("Ascend910B4,,Ascend310P3"));
    refused(&["\"\" is not a SoC"]);
    set("ASCEND_SIM_DEVICES", Some("ascend910b4"));
    refused(&["\"ascend910b4\""]);
    set("ASCEND_SIM_DEVICES", Some(" Ascend910B4 , Ascend310P3"));

    for bad in ["12x", "0", "-5", "", "9999999999999999999G"] {
        set("ASCEND_SIM_MEM_BYTES", Some(bad));
        refused(&["ASCEND_SIM_MEM_BYTES", "optional K, M or G suffix"]);
    }
    set("ASCEND_SIM_MEM_BYTES", Some("64M"));

    set("ASCEND_SIM_FAULT", Some("aclrtMalloc"));
    refused(&["is not `symbol:n`"]);
    set("ASCEND_SIM_FAULT", Some("aclrtMallocc:1"));
    refused(&["\"aclrtMallocc\" is not a simulated symbol"]);
    set("ASCEND_SIM_FAULT", Some("aclrtMalloc:first"));
    refused(&["\"first\" is not a call number"]);
    set("ASCEND_SIM_FAULT", Some("aclrtMalloc:1000000"));

    set("ASCEND_SIM_VERBOSE", Some("maybe"));
    refused(&["ASCEND_SIM_VERBOSE=\"maybe\" is not a switch"]);
    set("ASCEND_SIM_VERBOSE", Some("0"));

    for bad in ["0", "soon", "-1"] {
        set("ASCEND_SIM_HCCL_TIMEOUT_MS", Some(bad));
        refused(&[
            "ASCEND_SIM_HCCL_TIMEOUT_MS",
            "positive number of milliseconds",
        ]);
    }
    set("ASCEND_SIM_HCCL_TIMEOUT_MS", Some("1500"));

    set("ASCEND_SIM_DEVICE", Some("Ascend910B4"));
    refused(&[
        "ASCEND_SIM_DEVICE is not a simulator variable",
        "ASCEND_SIM_DEVICES, ASCEND_SIM_MEM_BYTES, ASCEND_SIM_FAULT, ASCEND_SIM_VERBOSE",
    ]);
    set("ASCEND_SIM_DEVICE", None);

    // Refusals left nothing behind: the corrected environment initializes.
    // SAFETY: NULL config path; valid out-pointers.
    unsafe {
        assert_eq!(api::aclInit(std::ptr::null()), ACL_SUCCESS, "{}", err_msg());
        let mut n = 0u32;
        assert_eq!(api::aclrtGetDeviceCount(&mut n), ACL_SUCCESS);
        assert_eq!(n, 2);
        set_device(1);
        let soc = CStr::from_ptr(api::aclrtGetSocName());
        assert_eq!(soc.to_str().unwrap(), "Ascend310P3");
        let (mut free, mut total) = (0usize, 0usize);
        assert_eq!(
            api::aclrtGetMemInfo(ACL_HBM_MEM, &mut free, &mut total),
            ACL_SUCCESS
        );
        assert_eq!(total, 64 << 20);
        reset_device(1);
    }
}
