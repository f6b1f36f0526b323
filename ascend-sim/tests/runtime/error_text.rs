//! The text of `aclGetRecentErrMsg` belongs to the failing call. Every failure
//! leaves exactly one text naming its API and status, a success leaves none, a fetch
//! clears, and texts nobody fetched come after the newest one (as CANN keeps them).

use crate::common;
use ascend_sim::api;
use ascend_sys::*;
use common::*;
use std::ptr::null_mut;

/// The one text of the failure just seen: names `api` and `status`, nothing else pending.
#[track_caller]
fn only_text_of(api_name: &str, status: i32) -> String {
    let text = fetch_err_msg().unwrap_or_else(|| panic!("{api_name} left no text"));
    let head = format!(
        "{api_name} failed with {} ({status}): ",
        ascend_sys::status_name(status)
    );
    assert!(text.starts_with(&head), "{head:?} vs {text:?}");
    assert_eq!(text.lines().count(), 1, "{text}");
    assert_eq!(fetch_err_msg(), None, "a fetch clears");
    text
}

#[test]
fn a_561103_never_carries_the_text_of_an_earlier_161002() {
    let _gate = crate::common::shared();
    setup();
    let _ = fetch_err_msg();
    let f = tensor(&[4], ACL_FLOAT, null_mut());
    let i = tensor(&[4], ACL_INT32, null_mut());
    // A 161002 nobody fetches, then successes, then a 561103.
    let (rc, _, _) = phase1(f, i, f);
    assert_eq!(rc, ACLNN_ERR_PARAM_INVALID);
    let (rc, _, ex) = phase1(f, f, f);
    assert_eq!(rc, ACLNN_SUCCESS);
    // SAFETY: NULL is deliberate; `ex` is a live executor.
    unsafe {
        assert_eq!(api::aclDestroyAclOpExecutor(ex), ACLNN_SUCCESS);
        assert_eq!(
            api::aclDestroyAclOpExecutor(null_mut()),
            ACLNN_ERR_INNER_NULLPTR
        );
    }
    let text = fetch_err_msg().unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert!(
        lines[0]
            .starts_with("aclDestroyAclOpExecutor failed with ACLNN_ERR_INNER_NULLPTR (561103)"),
        "the newest first: {text}"
    );
    assert!(
        lines[1].starts_with(
            "aclnnMishBackwardGetWorkspaceSize failed with ACLNN_ERR_PARAM_INVALID (161002)"
        ),
        "{text}"
    );
    assert_eq!(fetch_err_msg(), None);
    // Fetched after each failure, each text is that failure's alone.
    let (rc, _, _) = phase1(f, i, f);
    assert_eq!(rc, ACLNN_ERR_PARAM_INVALID);
    only_text_of("aclnnMishBackwardGetWorkspaceSize", ACLNN_ERR_PARAM_INVALID);
    // SAFETY: NULL is deliberate.
    let rc = unsafe { api::aclSetAclOpExecutorRepeatable(null_mut()) };
    assert_eq!(rc, ACLNN_ERR_INNER_NULLPTR);
    only_text_of("aclSetAclOpExecutorRepeatable", ACLNN_ERR_INNER_NULLPTR);
    destroy_tensor(f);
    destroy_tensor(i);
    assert_eq!(fetch_err_msg(), None, "successes leave no text");
}

#[test]
fn every_failure_leaves_its_own_text() {
    let _gate = crate::common::shared();
    setup();
    let _ = fetch_err_msg();
    let mut p = null_mut();
    let mut n = 0u32;
    let d = [2i64];
    let dp = d.as_ptr().cast();
    // SAFETY (every closure): NULLs and bad values are deliberate; out-pointers are valid.
    let cases: [(&str, &mut dyn FnMut() -> i32); 12] = [
        ("aclInit", &mut || unsafe { api::aclInit(std::ptr::null()) }),
        ("aclrtSetDevice", &mut || unsafe { api::aclrtSetDevice(99) }),
        ("aclrtGetDeviceCount", &mut || unsafe {
            api::aclrtGetDeviceCount(null_mut())
        }),
        ("aclrtMalloc", &mut || unsafe {
            api::aclrtMalloc(&mut p, 0, 0)
        }),
        ("aclrtFree", &mut || unsafe { api::aclrtFree(null_mut()) }),
        ("aclrtDestroyStream", &mut || unsafe {
            api::aclrtDestroyStream(null_mut())
        }),
        ("aclrtMemcpy", &mut || memcpy(null_mut(), 4, dp, 4, 1)),
        ("aclrtMemset", &mut || unsafe {
            api::aclrtMemset(null_mut(), 4, 0, 4)
        }),
        ("aclrtGetMemInfo", &mut || unsafe {
            api::aclrtGetMemInfo(99, null_mut(), null_mut())
        }),
        ("aclnnMishBackward", &mut || {
            phase2(null_mut(), 0, null_mut(), null_mut())
        }),
        ("aclSetInputTensorAddr", &mut || unsafe {
            api::aclSetInputTensorAddr(null_mut(), 0, null_mut(), null_mut())
        }),
        ("aclrtGetDeviceCount", &mut || unsafe {
            api::aclrtGetDeviceCount(&mut n)
        }),
    ];
    for (name, call) in cases {
        let rc = call();
        if rc == ACL_SUCCESS {
            assert_eq!(fetch_err_msg(), None, "{name} succeeded");
        } else {
            only_text_of(name, rc);
        }
    }
    // NULL from a pointer-returning function also leaves a text.
    // SAFETY: the NULL array with a nonzero length is deliberate.
    let t = unsafe {
        api::aclCreateTensor(
            std::ptr::null(),
            1,
            ACL_FLOAT,
            d.as_ptr(),
            0,
            2,
            d.as_ptr(),
            1,
            null_mut(),
        )
    };
    assert!(t.is_null());
    let text = fetch_err_msg().unwrap();
    assert!(text.starts_with("aclCreateTensor failed with"), "{text}");
    assert!(text.contains("viewDims is NULL"), "{text}");
}

#[test]
fn an_outer_status_quotes_the_inner_reason_in_one_text() {
    let _gate = crate::common::shared();
    setup();
    let _ = fetch_err_msg();
    // Phase 2 on no current context: 361001, and the runtime's reason in the same line.
    let d = malloc(16);
    let t = tensor(&[4], ACL_FLOAT, d);
    let (rc, _, ex) = phase1(t, t, t);
    assert_eq!(rc, ACLNN_SUCCESS);
    let ex_addr = ex as usize;
    std::thread::spawn(move || {
        let rc = phase2(null_mut(), 0, ex_addr as *mut aclOpExecutor, null_mut());
        assert_eq!(rc, ACLNN_ERR_RUNTIME_ERROR);
        let text = only_text_of("aclnnMishBackward", ACLNN_ERR_RUNTIME_ERROR);
        assert!(
            text.contains(
                "(from: aclnnMishBackward failed with ACL_ERROR_RT_CONTEXT_NULL (107002)"
            ),
            "{text}"
        );
    })
    .join()
    .unwrap();
    assert_eq!(fetch_err_msg(), None, "texts are per thread");
    // The failed phase 2 released the executor: destroying it is a double release.
    assert_released_by_failed_phase2(ex);
    destroy_tensor(t);
    free(d);
}
