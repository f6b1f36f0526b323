//! What phase 2 does to the executor it is given, failing or not, as nnopbase's common
//! phase 2 does: a non-repeatable executor is released whatever phase 2 returns; a
//! repeatable one survives a failed run; a NULL workspace with a non-zero size releases
//! even a repeatable one. Any later use of a released executor is a finding naming how it
//! was released. One `#[test]`: executor counters and faults are process-wide.

mod common;
use ascend_sim::kernel::mish_grad_f32;
use ascend_sim::{api, counters, set_fault};
use ascend_sys::*;
use common::*;
use std::ptr::null_mut;

fn live_executors() -> u64 {
    counters().executors
}

/// The latest sanitizer finding, cleared.
fn take_report() -> String {
    let r = ascend_sim::last_report().unwrap_or_default();
    ascend_sim::clear_last_report();
    r
}

#[test]
fn phase_two_releases_what_nnopbase_releases() {
    setup();
    // Broadcast self: phase 1 asks for a workspace.
    let (dg, dx, dout) = (malloc(32), malloc(8), malloc(32));
    h2d(dg, &[1.0f32; 8]);
    h2d(dx, &[0.5f32, -0.5]);
    let (tg, tx, to) = (
        tensor(&[4, 2], ACL_FLOAT, dg),
        tensor(&[2], ACL_FLOAT, dx),
        tensor(&[4, 2], ACL_FLOAT, dout),
    );
    let fresh = || {
        let (rc, ws, ex) = phase1(tg, tx, to);
        assert_eq!(rc, ACLNN_SUCCESS, "{}", err_msg());
        assert!(ws > 0);
        (ws, ex)
    };
    // An executor that never reached phase 2 is the caller's to destroy.
    let (ws, ex) = fresh();
    // SAFETY: a live executor that never reached phase 2.
    assert_eq!(unsafe { api::aclDestroyAclOpExecutor(ex) }, ACLNN_SUCCESS);
    let w = malloc(ws as usize);
    let base = live_executors();
    let fresh_repeatable = || {
        let (_, ex) = fresh();
        // SAFETY: a fresh executor from phase 1.
        let rc = unsafe { api::aclSetAclOpExecutorRepeatable(ex) };
        assert_eq!(rc, ACLNN_SUCCESS, "{}", err_msg());
        ex
    };
    // A phase 2 that succeeds, and the work it queued.
    let runs = |ex| {
        let rc = phase2(w, ws, ex, null_mut());
        assert_eq!(rc, ACLNN_SUCCESS, "{}", err_msg());
        assert_eq!(sync(null_mut()), ACL_SUCCESS);
    };
    // A failed phase 2 of a non-repeatable executor: refused with `want` and `fragments`,
    // and the executor released.
    let fails_and_releases = |rc, want, fragments: &[&str], ex| {
        assert_fails_with(rc, want, fragments);
        assert_eq!(live_executors(), base, "{fragments:?}");
        assert_released_by_failed_phase2(ex);
    };

    // 1. A non-repeatable executor and a phase 2 refused for a too-small workspace size.
    let (_, ex) = fresh();
    assert_eq!(live_executors(), base + 1);
    assert_fails_with(
        phase2(w, ws - 1, ex, null_mut()),
        ACLNN_ERR_PARAM_INVALID,
        &["smaller than"],
    );
    assert_eq!(live_executors(), base, "the failed phase 2 released it");
    take_report();
    // A second phase 2 on it is a use after release, reported as a finding.
    assert_fails_with(
        phase2(w, ws, ex, null_mut()),
        ACLNN_ERR_PARAM_INVALID,
        &[
            "use of a released executor",
            "consumed by its phase-2 call, which failed",
        ],
    );
    assert!(
        take_report().contains("use of a released executor"),
        "a finding"
    );
    // Destroying it is a double release, reported as a finding.
    assert_released_by_failed_phase2(ex);
    assert!(
        take_report().contains("double release of an executor (CANN would free it a second time)"),
        "a finding"
    );
    // So are the executor API's other calls.
    // SAFETY: a released executor's handle is checked, never dereferenced.
    let rc = unsafe { api::aclSetAclOpExecutorRepeatable(ex) };
    assert_fails_with(rc, ACLNN_ERR_PARAM_INVALID, &["use of a released executor"]);
    assert_eq!(live_executors(), base);

    // 2. A phase 2 of another operator (refused) also releases it.
    let (_, ex) = fresh();
    // SAFETY: a live executor, a workspace of its size, the default stream.
    let rc = unsafe { api::aclnnMish(w, ws, ex, null_mut()) };
    let launch_msg = "launch it with aclnnMishBackward";
    fails_and_releases(rc, ACLNN_ERR_PARAM_INVALID, &[launch_msg], ex);

    // 3. A successful phase 2 releases it too; a later destroy says so.
    let (_, ex) = fresh();
    runs(ex);
    assert_eq!(live_executors(), base);
    assert_double_release(ex, &["consumed by its phase-2 call (not made repeatable"]);

    // 4. A repeatable executor survives a failed phase 2, runs, and is destroyed once.
    let ex = fresh_repeatable();
    assert_fails_with(
        phase2(w, ws - 1, ex, null_mut()),
        ACLNN_ERR_PARAM_INVALID,
        &["smaller than"],
    );
    assert_eq!(live_executors(), base + 1, "a repeatable executor stays");
    runs(ex);
    assert_eq!(d2h::<f32>(dout, 8)[1], mish_grad_f32(1.0, -0.5));
    // SAFETY: a live repeatable executor with no queued work.
    assert_eq!(unsafe { api::aclDestroyAclOpExecutor(ex) }, ACLNN_SUCCESS);
    assert_eq!(live_executors(), base);

    // 5. A NULL workspace with a non-zero size: nnopbase releases even a repeatable one.
    let ex = fresh_repeatable();
    assert_fails_with(
        phase2(null_mut(), ws, ex, null_mut()),
        ACLNN_ERR_PARAM_NULLPTR,
        &["workspace is nullptr but workspaceSize is"],
    );
    assert_eq!(live_executors(), base);
    assert_double_release(
        ex,
        &[
            "NULL workspace with a non-zero workspaceSize",
            "even a repeatable one",
        ],
    );

    // 6. An injected fault of phase 2 has the effect of a failed phase 2.
    let (_, ex) = fresh();
    set_fault("aclnnMishBackward", 1).unwrap();
    let rc = phase2(w, ws, ex, null_mut());
    fails_and_releases(rc, ACLNN_ERR_RUNTIME_ERROR, &["injected fault"], ex);
    let ex = fresh_repeatable();
    set_fault("aclnnMishBackward", 1).unwrap();
    assert_eq!(phase2(w, ws, ex, null_mut()), ACLNN_ERR_RUNTIME_ERROR);
    assert_eq!(live_executors(), base + 1, "a repeatable executor stays");
    // SAFETY: a live repeatable executor that never ran.
    assert_eq!(unsafe { api::aclDestroyAclOpExecutor(ex) }, ACLNN_SUCCESS);
    // A fault with a NULL or stale executor has nothing to release.
    take_report();
    set_fault("aclnnMishBackward", 1).unwrap();
    assert_eq!(
        phase2(null_mut(), 0, null_mut(), null_mut()),
        ACLNN_ERR_RUNTIME_ERROR
    );
    set_fault("aclnnMishBackward", 1).unwrap();
    assert_eq!(phase2(w, ws, ex, null_mut()), ACLNN_ERR_RUNTIME_ERROR);
    assert_eq!(live_executors(), base);
    assert_eq!(take_report(), "", "a fault is not a finding");

    free(w);
    for t in [tg, tx, to] {
        destroy_tensor(t);
    }
    for p in [dg, dx, dout] {
        free(p);
    }
}
