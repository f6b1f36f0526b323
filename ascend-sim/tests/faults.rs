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
            "aclrtDeviceCanAccessPeer" => {
                let mut can = 0;
                api::aclrtDeviceCanAccessPeer(&mut can, 0, 0) as i64
            }
            "aclrtDeviceEnablePeerAccess" => api::aclrtDeviceEnablePeerAccess(0, 0) as i64,
            "aclrtDeviceDisablePeerAccess" => api::aclrtDeviceDisablePeerAccess(0) as i64,
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
            s if s.starts_with("aclCreate") => {
                let v = [1i64, 2];
                let f = [1.0f32];
                let b = [true];
                let one = [t.cast_const()];
                let p: *mut c_void = match s {
                    "aclCreateScalar" => {
                        api::aclCreateScalar(v.as_ptr().cast_mut().cast(), ACL_INT64).cast()
                    }
                    "aclCreateIntArray" => api::aclCreateIntArray(v.as_ptr(), 2).cast(),
                    "aclCreateFloatArray" => api::aclCreateFloatArray(f.as_ptr(), 1).cast(),
                    "aclCreateBoolArray" => api::aclCreateBoolArray(b.as_ptr(), 1).cast(),
                    // An empty list: destroying it must not destroy `t`.
                    "aclCreateTensorList" => api::aclCreateTensorList(one.as_ptr(), 0).cast(),
                    "aclCreateScalarList" => api::aclCreateScalarList(null(), 0).cast(),
                    other => panic!("no call for {other}"),
                };
                match s {
                    "aclCreateScalar" => api::aclDestroyScalar(p.cast()),
                    "aclCreateIntArray" => api::aclDestroyIntArray(p.cast()),
                    "aclCreateFloatArray" => api::aclDestroyFloatArray(p.cast()),
                    "aclCreateBoolArray" => api::aclDestroyBoolArray(p.cast()),
                    "aclCreateTensorList" => api::aclDestroyTensorList(p.cast()),
                    _ => api::aclDestroyScalarList(p.cast()),
                };
                !p.is_null() as i64
            }
            "aclDestroyScalar" => api::aclDestroyScalar(null()) as i64,
            "aclDestroyIntArray" => api::aclDestroyIntArray(null()) as i64,
            "aclDestroyFloatArray" => api::aclDestroyFloatArray(null()) as i64,
            "aclDestroyBoolArray" => api::aclDestroyBoolArray(null()) as i64,
            "aclDestroyTensorList" => api::aclDestroyTensorList(null()) as i64,
            "aclDestroyScalarList" => api::aclDestroyScalarList(null()) as i64,
            s if s.starts_with("aclGet") && s.ends_with("Size") => {
                let ia = api::aclCreateIntArray(null(), 0);
                let mut n = 7u64;
                let rc = match s {
                    "aclGetIntArraySize" => api::aclGetIntArraySize(ia, &mut n),
                    "aclGetFloatArraySize" => {
                        let a = api::aclCreateFloatArray(null(), 0);
                        let rc = api::aclGetFloatArraySize(a, &mut n);
                        api::aclDestroyFloatArray(a);
                        rc
                    }
                    "aclGetBoolArraySize" => {
                        let a = api::aclCreateBoolArray(null(), 0);
                        let rc = api::aclGetBoolArraySize(a, &mut n);
                        api::aclDestroyBoolArray(a);
                        rc
                    }
                    "aclGetTensorListSize" => {
                        let a = api::aclCreateTensorList(null(), 0);
                        let rc = api::aclGetTensorListSize(a, &mut n);
                        api::aclDestroyTensorList(a);
                        rc
                    }
                    _ => {
                        let a = api::aclCreateScalarList(null(), 0);
                        let rc = api::aclGetScalarListSize(a, &mut n);
                        api::aclDestroyScalarList(a);
                        rc
                    }
                };
                api::aclDestroyIntArray(ia);
                rc as i64
            }
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
            s if s.starts_with("aclnn") && s.ends_with("GetWorkspaceSize") => {
                let rc = training_phase1(s, t, &mut ws, &mut ex);
                if rc == 0 {
                    api::aclDestroyAclOpExecutor(ex);
                }
                rc as i64
            }
            s if s.starts_with("aclnn") => {
                let f = ascend_sim::symbol(s).expect("a simulated operator");
                // SAFETY: `symbol` gives the phase-2 entry point of that name, whose
                // prototype every phase 2 shares.
                let f: Phase2 = std::mem::transmute(f);
                f(null_mut(), 0, null_mut(), stream) as i64
            }
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

type Phase2 = unsafe extern "C" fn(*mut c_void, u64, *mut aclOpExecutor, aclrtStream) -> i32;

/// A valid phase 1 of a training operator on the float tensor `t` of shape [2].
///
/// # Safety
/// `t` is a live tensor; the out-pointers are valid.
unsafe fn training_phase1(
    sym: &str,
    t: *mut aclTensor,
    ws: &mut u64,
    ex: &mut *mut aclOpExecutor,
) -> i32 {
    let one = 1.0f64;
    // SAFETY: the scalar copies `one`; every handle is live for the calls.
    unsafe {
        let s = api::aclCreateScalar((&raw const one).cast_mut().cast(), ACL_DOUBLE);
        let rc = match sym {
            "aclnnInplaceZeroGetWorkspaceSize" => api::aclnnInplaceZeroGetWorkspaceSize(t, ws, ex),
            "aclnnInplaceFillScalarGetWorkspaceSize" => {
                api::aclnnInplaceFillScalarGetWorkspaceSize(t, s, ws, ex)
            }
            "aclnnAddGetWorkspaceSize" => api::aclnnAddGetWorkspaceSize(t, t, s, t, ws, ex),
            "aclnnInplaceAddGetWorkspaceSize" => {
                api::aclnnInplaceAddGetWorkspaceSize(t, t, s, ws, ex)
            }
            "aclnnMulGetWorkspaceSize" => api::aclnnMulGetWorkspaceSize(t, t, t, ws, ex),
            "aclnnInplaceMulGetWorkspaceSize" => api::aclnnInplaceMulGetWorkspaceSize(t, t, ws, ex),
            "aclnnMatmulGetWorkspaceSize" => {
                let o = aclnn_tensor(&[1], t);
                let rc = api::aclnnMatmulGetWorkspaceSize(t, t, o, 0, ws, ex);
                api::aclDestroyTensor(o);
                rc
            }
            "aclnnAddmmGetWorkspaceSize" => {
                let (m, o) = (aclnn_tensor(&[2, 1], t), aclnn_tensor(&[1, 1], t));
                let rc = api::aclnnAddmmGetWorkspaceSize(t, o, m, s, s, o, 0, ws, ex);
                api::aclDestroyTensor(m);
                api::aclDestroyTensor(o);
                rc
            }
            "aclnnReduceSumGetWorkspaceSize" => {
                let (o, d) = (aclnn_tensor(&[], t), api::aclCreateIntArray(null(), 0));
                let rc = api::aclnnReduceSumGetWorkspaceSize(t, d, false, ACL_FLOAT, o, ws, ex);
                api::aclDestroyTensor(o);
                api::aclDestroyIntArray(d);
                rc
            }
            "aclnnMseLossGetWorkspaceSize" => {
                let o = aclnn_tensor(&[], t);
                let rc = api::aclnnMseLossGetWorkspaceSize(t, t, 1, o, ws, ex);
                api::aclDestroyTensor(o);
                rc
            }
            "aclnnMseLossBackwardGetWorkspaceSize" => {
                api::aclnnMseLossBackwardGetWorkspaceSize(t, t, t, 1, t, ws, ex)
            }
            other => panic!("no call for {other}"),
        };
        api::aclDestroyScalar(s);
        rc
    }
}

/// A float tensor of `dims` over the data of `like` (metadata for phase 1 only).
fn aclnn_tensor(dims: &[i64], like: *mut aclTensor) -> *mut aclTensor {
    let _ = like;
    tensor(dims, ACL_FLOAT, null_mut())
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
        "aclrtGetSocName" | "aclGetRecentErrMsg" => 0,
        s if s.starts_with("aclCreate") => 0,
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
    assert_eq!(acl().count(), 90);
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
