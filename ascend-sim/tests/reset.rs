//! `aclrtResetDevice` releases the device's streams and contexts once
//! their queued work has finished and invalidates its memory and events; what the caller
//! left alive stays counted as leaked, and later use of any of it is reported as use after
//! reset (own process: it resets device 0 and finalizes).

mod common;
use ascend_sim::{Counters, api, counters};
use ascend_sys::*;
use common::*;
use std::ptr::null_mut;

#[test]
fn reset_releases_the_device_and_later_use_is_use_after_reset() {
    init_with(&[]);
    set_device(0);
    let n = 1 << 16;
    let (g, x, o) = (malloc(n * 4), malloc(n * 4), malloc(n * 4));
    h2d(g, &vec![1.0f32; n]);
    h2d(x, &vec![0.5f32; n]);
    let (tg, tx, to) = (
        tensor(&[n as i64], ACL_FLOAT, g),
        tensor(&[n as i64], ACL_FLOAT, x),
        tensor(&[n as i64], ACL_FLOAT, o),
    );
    let s = create_stream();
    let e = create_event();
    let (rc, _, ex) = phase1(tg, tx, to);
    assert_eq!(rc, ACLNN_SUCCESS);
    assert_eq!(phase2(null_mut(), 0, ex, s), ACLNN_SUCCESS);
    let mut host = vec![0f32; n];
    assert_eq!(
        memcpy_async(
            host.as_mut_ptr().cast(),
            n * 4,
            o,
            n * 4,
            ACL_MEMCPY_DEVICE_TO_HOST,
            s
        ),
        ACL_SUCCESS
    );
    let before = counters();
    assert_eq!(
        (before.allocations, before.events, before.streams),
        (3, 1, 1)
    );
    reset_device(0);
    // The queued launch and copy ran to the end before the memory went.
    assert_eq!(host[n - 1], ascend_sim::kernel::mish_grad_f32(1.0, 0.5));
    // The stream went with the device; the memory and the event stay counted as leaked.
    assert_eq!(
        counters(),
        Counters {
            tensors: 3,
            streams: 0,
            ..before
        }
    );
    // Without a context nothing runs; with a new one the old objects are dead.
    assert_eq!(sync(s), ACL_ERROR_RT_CONTEXT_NULL);
    set_device(0);
    assert_fails_with(
        sync(s),
        ACL_ERROR_RT_INVALID_HANDLE,
        &["released by aclrtResetDevice"],
    );
    let mut back = [0f32; 4];
    assert_fails_with(
        memcpy(
            back.as_mut_ptr().cast(),
            16,
            g,
            16,
            ACL_MEMCPY_DEVICE_TO_HOST,
        ),
        ACL_ERROR_INVALID_PARAM,
        &["was released by aclrtResetDevice(0)", "(use after reset)"],
    );
    // SAFETY: stale handles and pointers are checked, never dereferenced.
    unsafe {
        assert_fails_with(
            api::aclrtRecordEvent(e, null_mut()),
            ACL_ERROR_RT_INVALID_HANDLE,
            &["released by aclrtResetDevice of its device"],
        );
        assert_eq!(api::aclrtDestroyEvent(e), ACL_ERROR_RT_INVALID_HANDLE);
        assert_fails_with(
            api::aclrtFree(x),
            ACL_ERROR_INVALID_PARAM,
            &["use after reset"],
        );
    }
    // A launch over the released memory is refused in phase 2.
    let (rc, _, ex) = phase1(tg, tx, to);
    assert_eq!(rc, ACLNN_SUCCESS);
    assert_fails_with(
        phase2(null_mut(), 0, ex, null_mut()),
        ACLNN_ERR_PARAM_INVALID,
        &["gradOutput data", "use after reset"],
    );
    assert_released_by_failed_phase2(ex);
    // The old ranges are never handed out again, so later use stays recognised.
    let again: Vec<_> = (0..3).map(|_| malloc(n * 4)).collect();
    assert!(again.iter().all(|p| ![g, x, o].contains(p)));
    for p in again {
        free(p);
    }
    for t in [tg, tx, to] {
        destroy_tensor(t);
    }
    reset_device(0);
    // SAFETY: plain value.
    assert_eq!(
        unsafe { api::aclrtResetDevice(0) },
        ACL_ERROR_RT_PARAM_INVALID,
        "the count is 0"
    );
    assert_eq!(
        counters().objects(),
        [3, 0, 0, 0, 1],
        "the reset's leak stays counted"
    );
    // aclFinalize reports the leak.
    // SAFETY: no arguments.
    assert_eq!(unsafe { api::aclFinalize() }, ACL_SUCCESS);
    let report = ascend_sim::last_report().unwrap_or_default();
    assert!(report.contains("aclFinalize with live objects"), "{report}");
}
