//! Fault injection for every simulated symbol (own process: faults are process-wide).

mod common;
use ascend_sim::{SYMBOLS, api, call_count, set_fault};
use ascend_sys::*;
use common::*;
use std::ffi::c_void;
use std::ptr::{null, null_mut};

/// Calls `sym` once with harmless arguments; returns its code (pointers: 0 = NULL, 1 = not).
fn call(
    sym: &str,
    stream: aclrtStream,
    ev: aclrtEvent,
    dev: *mut c_void,
    t: *mut aclTensor,
) -> i64 {
    let mut p = null_mut();
    let mut u = 0usize;
    let mut u2 = 0usize;
    let mut n = 0u32;
    let mut d = 0i32;
    let mut ws = 0u64;
    let mut ex = null_mut();
    let host = [0u8; 8];
    let dims = [1i64];
    // SAFETY: all pointers are valid out-pointers or simulator handles.
    unsafe {
        match sym {
            "aclInit" => api::aclInit(null()) as i64,
            "aclFinalize" => api::aclFinalize() as i64,
            "aclrtSetDevice" => api::aclrtSetDevice(0) as i64,
            "aclrtResetDevice" => api::aclrtResetDevice(0) as i64,
            "aclrtGetDevice" => api::aclrtGetDevice(&mut d) as i64,
            "aclrtGetDeviceCount" => api::aclrtGetDeviceCount(&mut n) as i64,
            "aclrtCreateContext" => api::aclrtCreateContext(&mut p, 0) as i64,
            "aclrtDestroyContext" => api::aclrtDestroyContext(null_mut()) as i64,
            "aclrtSetCurrentContext" => api::aclrtSetCurrentContext(null_mut()) as i64,
            "aclrtGetCurrentContext" => api::aclrtGetCurrentContext(&mut p) as i64,
            "aclrtCreateStream" => api::aclrtCreateStream(&mut p) as i64,
            "aclrtDestroyStream" => api::aclrtDestroyStream(null_mut()) as i64,
            "aclrtSynchronizeStream" => api::aclrtSynchronizeStream(stream) as i64,
            "aclrtCreateEvent" => api::aclrtCreateEvent(&mut p) as i64,
            "aclrtDestroyEvent" => api::aclrtDestroyEvent(null_mut()) as i64,
            "aclrtRecordEvent" => api::aclrtRecordEvent(ev, stream) as i64,
            "aclrtStreamWaitEvent" => api::aclrtStreamWaitEvent(stream, ev) as i64,
            "aclrtSynchronizeEvent" => api::aclrtSynchronizeEvent(ev) as i64,
            "aclrtMalloc" => api::aclrtMalloc(&mut p, 8, 0) as i64,
            "aclrtFree" => api::aclrtFree(null_mut()) as i64,
            "aclrtMallocHost" => api::aclrtMallocHost(&mut p, 8) as i64,
            "aclrtFreeHost" => api::aclrtFreeHost(null_mut()) as i64,
            "aclrtMemcpy" => api::aclrtMemcpy(dev, 8, host.as_ptr().cast(), 8, 1) as i64,
            "aclrtMemcpyAsync" => {
                let rc = api::aclrtMemcpyAsync(dev, 8, host.as_ptr().cast(), 8, 1, stream);
                // `host` lives on this frame: the copy must have run before it returns.
                api::aclrtSynchronizeStream(stream);
                rc as i64
            }
            "aclrtMemset" => api::aclrtMemset(dev, 8, 0, 8) as i64,
            "aclrtMemPoolCreate" => api::aclrtMemPoolCreate(&mut p, null()) as i64,
            "aclrtMemPoolDestroy" => api::aclrtMemPoolDestroy(null_mut()) as i64,
            "aclrtMemPoolMallocAsync" => {
                api::aclrtMemPoolMallocAsync(&mut p, 8, null_mut(), stream) as i64
            }
            "aclrtMemPoolFreeAsync" => api::aclrtMemPoolFreeAsync(null_mut(), stream) as i64,
            "aclrtMemPoolTrimTo" => api::aclrtMemPoolTrimTo(null_mut(), 0) as i64,
            "aclrtLaunchCallback" => api::aclrtLaunchCallback(None, null_mut(), 0, stream) as i64,
            "aclrtGetMemInfo" => api::aclrtGetMemInfo(0, &mut u, &mut u2) as i64,
            "aclrtGetSocName" => !api::aclrtGetSocName().is_null() as i64,
            "aclGetRecentErrMsg" => {
                // A failure first, so that there is a text to fetch.
                api::aclrtFree(null_mut());
                !api::aclGetRecentErrMsg().is_null() as i64
            }
            "aclCreateTensor" => {
                let t = api::aclCreateTensor(
                    dims.as_ptr(),
                    1,
                    ACL_FLOAT,
                    dims.as_ptr(),
                    0,
                    2,
                    dims.as_ptr(),
                    1,
                    dev,
                );
                if !t.is_null() {
                    api::aclDestroyTensor(t);
                }
                !t.is_null() as i64
            }
            "aclDestroyTensor" => api::aclDestroyTensor(null()) as i64,
            "aclnnMishBackwardGetWorkspaceSize" => {
                let rc = api::aclnnMishBackwardGetWorkspaceSize(t, t, t, &mut ws, &mut ex);
                if rc == 0 {
                    api::aclDestroyAclOpExecutor(ex);
                }
                rc as i64
            }
            "aclnnMishBackward" => api::aclnnMishBackward(null_mut(), 0, null_mut(), stream) as i64,
            "aclnnMishGetWorkspaceSize" | "aclnnInplaceMishGetWorkspaceSize" => {
                let rc = if sym == "aclnnMishGetWorkspaceSize" {
                    api::aclnnMishGetWorkspaceSize(t, t, &mut ws, &mut ex)
                } else {
                    api::aclnnInplaceMishGetWorkspaceSize(t, &mut ws, &mut ex)
                };
                if rc == 0 {
                    api::aclDestroyAclOpExecutor(ex);
                }
                rc as i64
            }
            "aclnnMish" => api::aclnnMish(null_mut(), 0, null_mut(), stream) as i64,
            "aclnnInplaceCopyGetWorkspaceSize" => {
                let rc = api::aclnnInplaceCopyGetWorkspaceSize(t, t, &mut ws, &mut ex);
                if rc == 0 {
                    api::aclDestroyAclOpExecutor(ex);
                }
                rc as i64
            }
            "aclnnInplaceCopy" => api::aclnnInplaceCopy(null_mut(), 0, null_mut(), stream) as i64,
            "aclnnInplaceMish" => api::aclnnInplaceMish(null_mut(), 0, null_mut(), stream) as i64,
            "aclSetAclOpExecutorRepeatable" => {
                api::aclSetAclOpExecutorRepeatable(null_mut()) as i64
            }
            "aclDestroyAclOpExecutor" => api::aclDestroyAclOpExecutor(null_mut()) as i64,
            "aclSetInputTensorAddr" => api::aclSetInputTensorAddr(null_mut(), 0, t, dev) as i64,
            "aclSetOutputTensorAddr" => api::aclSetOutputTensorAddr(null_mut(), 0, t, dev) as i64,
            other => panic!("no call for {other}"),
        }
    }
}

fn expected_failure(sym: &str) -> i64 {
    match sym {
        "aclInit" | "aclFinalize" => ACL_ERROR_INTERNAL_ERROR as i64,
        "aclrtSetDevice" => ACL_ERROR_RT_DEV_SETUP_ERROR as i64,
        "aclrtGetDeviceCount" => ACL_ERROR_RT_NO_DEVICE as i64,
        "aclrtGetDevice" | "aclrtGetCurrentContext" => ACL_ERROR_RT_CONTEXT_NULL as i64,
        "aclrtMalloc" | "aclrtMallocHost" | "aclrtMemPoolMallocAsync" => {
            ACL_ERROR_RT_MEMORY_ALLOCATION as i64
        }
        "aclrtSynchronizeStream" | "aclrtSynchronizeEvent" => {
            ACL_ERROR_RT_STREAM_SYNC_TIMEOUT as i64
        }
        "aclrtGetSocName" | "aclGetRecentErrMsg" | "aclCreateTensor" => 0,
        s if s.starts_with("aclnn") && s.ends_with("GetWorkspaceSize") => {
            ACLNN_ERR_INNER_CREATE_EXECUTOR as i64
        }
        s if s.starts_with("aclnn") => ACLNN_ERR_RUNTIME_ERROR as i64,
        s if s.starts_with("acl") && !s.starts_with("aclrt") => ACLNN_ERR_INNER as i64,
        _ => ACL_ERROR_RT_INTERNAL_ERROR as i64,
    }
}

#[test]
fn every_symbol_fails_on_its_nth_call() {
    setup();
    let s = create_stream();
    let ev = create_event();
    let dev = malloc(8);
    let t = tensor(&[2], ACL_FLOAT, dev);
    // HCCL's symbols have their own sweep (tests/hccl_faults.rs).
    let acl = || SYMBOLS.iter().filter(|s| !s.starts_with("Hccl"));
    assert_eq!(acl().count(), 48);
    let late = ["aclrtResetDevice", "aclFinalize"];
    for &sym in acl().filter(|s| !late.contains(s)) {
        // Armed for the 2nd call from now: the 1st behaves normally, the 2nd fails.
        set_fault(sym, 2).unwrap();
        let before = call_count(sym);
        let first = call(sym, s, ev, dev, t);
        let second = call(sym, s, ev, dev, t);
        assert_eq!(call_count(sym), before + 2, "{sym}");
        let want = expected_failure(sym);
        assert_eq!(second, want, "{sym}: injected failure");
        assert_ne!(
            first, want,
            "{sym}: first call must not fail like the fault"
        );
        if !matches!(sym, "aclGetRecentErrMsg" | "aclrtGetSocName") {
            assert!(err_msg().contains("injected fault"), "{sym}: {}", err_msg());
        }
        // The fault fired once.
        let third = call(sym, s, ev, dev, t);
        if sym != "aclInit" {
            assert_ne!(third, want, "{sym}: fault must fire once");
        }
        // Clearing works.
        set_fault(sym, 1).unwrap();
        set_fault(sym, 0).unwrap();
        assert_ne!(call(sym, s, ev, dev, t), want, "{sym}: cleared");
        if sym == "aclrtSetDevice" {
            // Keep the reference count balanced: three successful sets above.
            for _ in 0..3 {
                reset_device(0);
            }
        }
        if sym == "aclrtCreateContext" {
            set_device(0);
        }
    }
    assert!(set_fault("notASymbol", 1).is_err());
    // The two that end the session.
    set_device(0);
    set_fault("aclrtResetDevice", 1).unwrap();
    assert_eq!(
        call("aclrtResetDevice", s, ev, dev, t),
        ACL_ERROR_RT_INTERNAL_ERROR as i64
    );
    set_fault("aclFinalize", 1).unwrap();
    assert_eq!(
        call("aclFinalize", s, ev, dev, t),
        ACL_ERROR_INTERNAL_ERROR as i64
    );
    assert_eq!(call("aclFinalize", s, ev, dev, t), ACL_SUCCESS as i64);
    assert_eq!(
        call("aclFinalize", s, ev, dev, t),
        ACL_ERROR_UNINITIALIZE as i64
    );
}
