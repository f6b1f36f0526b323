//! Who releases the executor when a launch fails. CANN's phase 2 releases a non-repeatable
//! executor whether it succeeds or fails, so once phase 2 has been called the crate must
//! not destroy it (that would be a double free on hardware, a finding on the simulator);
//! an executor that never reached phase 2 (the workspace could not be allocated) is the
//! crate's to destroy; a plan's repeatable executor stays the plan's. Checked with the
//! simulator's fault injection, its live-executor counter, its per-symbol call counts and
//! its sanitizer report.
//!
//! One `#[test]`: faults and counters are process-global.

mod common;

use ascend_sim::{call_count, counters, last_report, set_fault};
use ascend_sys::{ACL_ERROR_RT_MEMORY_ALLOCATION, ACLNN_ERR_RUNTIME_ERROR};
use ascendcl::{DeviceTensor, Error, MishBackwardPlan, mish_backward, reference};
use common::*;
use half::f16;
use ndarray::ArrayD;

/// `f`'s result and the calls of each of `symbols` it made.
fn calls_during<R>(symbols: &[&str], f: impl FnOnce() -> R) -> (R, Vec<u64>) {
    let before: Vec<u64> = symbols.iter().map(|s| call_count(s)).collect();
    let r = f();
    let made = symbols
        .iter()
        .zip(before)
        .map(|(s, b)| call_count(s) - b)
        .collect();
    (r, made)
}

const PHASE1: &str = "aclnnMishBackwardGetWorkspaceSize";
const PHASE2: &str = "aclnnMishBackward";
const DESTROY: &str = "aclDestroyAclOpExecutor";

#[test]
fn a_failed_phase_2_is_never_followed_by_a_destroy() {
    let _leaks = LeakCheck::start();
    let device = device(A2);
    let stream = device.stream().unwrap();
    // Broadcast and cast: phase 1 asks for a workspace.
    let g: ArrayD<f16> = array(&[4, 1, 8], 1, -3.0, 3.0);
    let x: ArrayD<f32> = array(&[3, 1], 2, -4.0, 4.0);
    let want: ArrayD<f32> = reference::mish_backward(g.view(), x.view()).unwrap();
    let gd = DeviceTensor::from_array(&stream, &g).unwrap();
    let xd = DeviceTensor::from_array(&stream, &x).unwrap();
    let mut out = DeviceTensor::<f32>::zeros(&stream, [4, 3, 8]).unwrap();
    // A clean call first: the tensors' cached descriptors and the stream's workspace exist.
    mish_backward(&gd, &xd, &mut out, &stream).unwrap();
    let threshold = threshold_for(
        ascendcl::DType::F16,
        ascendcl::DType::F32,
        ascendcl::DType::F32,
    );
    assert_precise(&out.to_array(&stream).unwrap(), &want, threshold, "clean");
    assert_eq!(counters().executors, 0);
    let objects = counters().objects();

    // 1. Phase 2 fails: the executor is the library's; the crate does not destroy it.
    set_fault(PHASE2, 1).unwrap();
    let (result, made) = calls_during(&[PHASE1, PHASE2, DESTROY], || {
        mish_backward(&gd, &xd, &mut out, &stream)
    });
    match result {
        Err(Error::Aclnn { api, status, .. }) => {
            assert_eq!((api, status), (PHASE2, ACLNN_ERR_RUNTIME_ERROR));
        }
        other => panic!("expected the injected phase-2 failure, got {other:?}"),
    }
    assert_eq!(made, [1, 1, 0], "phase 1, phase 2, and no destroy");
    assert_eq!(counters().executors, 0, "phase 2 released the executor");
    assert_eq!(counters().objects(), objects);
    assert_eq!(last_report(), None, "no double release reported");
    // The stream is still usable.
    let mut again = DeviceTensor::<f32>::zeros(&stream, [4, 3, 8]).unwrap();
    mish_backward(&gd, &xd, &mut again, &stream).unwrap();
    assert_precise(&again.to_array(&stream).unwrap(), &want, threshold, "after");
    drop(again);

    // 2. The workspace cannot be allocated (a fresh stream has none): phase 2 is never
    //    called, and the crate destroys the executor of phase 1.
    let fresh = device.stream().unwrap();
    // Nothing cached to take: the workspace must come from aclrtMalloc.
    device.empty_cache();
    set_fault("aclrtMalloc", 1).unwrap();
    let (result, made) = calls_during(&[PHASE1, PHASE2, DESTROY], || {
        mish_backward(&gd, &xd, &mut out, &fresh)
    });
    match result {
        Err(Error::Acl { api, code, .. }) => {
            assert_eq!((api, code), ("aclrtMalloc", ACL_ERROR_RT_MEMORY_ALLOCATION));
        }
        other => panic!("expected the workspace allocation to fail, got {other:?}"),
    }
    assert_eq!(made, [1, 0, 1], "phase 1, no phase 2, one destroy");
    assert_eq!(counters().executors, 0);
    assert_eq!(last_report(), None);
    drop(fresh);
    assert_eq!(counters().objects(), objects);

    // 3. A plan's repeatable executor survives a failed launch and stays the plan's.
    let mut plan = MishBackwardPlan::new(&gd, &xd, &out, &stream).unwrap();
    assert!(plan.is_reusable());
    assert_eq!(counters().executors, 1);
    set_fault(PHASE2, 1).unwrap();
    let (result, made) = calls_during(&[PHASE2, DESTROY], || {
        plan.launch(&gd, &xd, &mut out, &stream)
    });
    assert!(
        matches!(result, Err(Error::Aclnn { api: PHASE2, .. })),
        "{result:?}"
    );
    assert_eq!(made, [1, 0]);
    assert_eq!(counters().executors, 1, "the plan still holds its executor");
    let mut planned = DeviceTensor::<f32>::zeros(&stream, [4, 3, 8]).unwrap();
    plan.launch(&gd, &xd, &mut planned, &stream).unwrap();
    assert_precise(
        &planned.to_array(&stream).unwrap(),
        &want,
        threshold,
        "plan",
    );
    let ((), made) = calls_during(&[DESTROY], || drop(plan));
    assert_eq!(made, [1], "the plan destroys its executor once");
    assert_eq!(counters().executors, 0);
    assert_eq!(last_report(), None);
}
