//! The racecheck's switch: `ASCEND_SIM_RACECHECK=0` at `aclInit` turns it off (for
//! benchmarks), a malformed value is refused, and `ascend_sim::racecheck::set_enabled` turns it
//! back on. One test: the switch is process-wide.

mod common;

use ascend_sim::api;
use ascend_sim::testing::hold_stream;
use ascend_sys::*;
use common::*;
use std::ptr::null_mut;

/// Two unordered writes of one buffer from two streams (the second one enqueued first,
/// on a held stream; `between` runs after it); the status of the second.
fn unordered_writes() -> i32 {
    unordered_writes_with(|| {})
}

fn unordered_writes_with(mut between: impl FnMut()) -> i32 {
    let (x, y) = (malloc(16), malloc(16));
    let (tx, ty) = (tensor(&[4], ACL_FLOAT, x), tensor(&[4], ACL_FLOAT, y));
    let (a, b) = (create_stream(), create_stream());
    let hold = hold_stream(b).expect("a live stream");
    for s in [b, a] {
        let (mut ws, mut ex) = (0u64, null_mut());
        // SAFETY: live tensors and stream, valid out-pointers, no workspace needed.
        unsafe {
            assert_eq!(
                api::aclnnMishGetWorkspaceSize(tx, ty, &mut ws, &mut ex),
                ACLNN_SUCCESS
            );
            assert_eq!(api::aclnnMish(null_mut(), 0, ex, s), ACLNN_SUCCESS);
        }
        between();
    }
    assert_eq!(sync(a), ACL_SUCCESS, "{}", err_msg());
    hold.release();
    let rc = sync(b);
    destroy_stream(a);
    destroy_stream(b);
    destroy_tensor(tx);
    destroy_tensor(ty);
    free(x);
    free(y);
    rc
}

#[test]
fn the_switch_turns_the_racecheck_off_and_on() {
    // SAFETY: this file has one test, so no other thread reads the environment meanwhile.
    unsafe { std::env::set_var("ASCEND_SIM_RACECHECK", "sometimes") };
    // SAFETY: NULL config path.
    let rc = unsafe { api::aclInit(std::ptr::null()) };
    assert_fails_with(
        rc,
        ACL_ERROR_INVALID_PARAM,
        &["ASCEND_SIM_RACECHECK=\"sometimes\" is not a switch"],
    );
    // SAFETY: as above.
    unsafe { std::env::set_var("ASCEND_SIM_RACECHECK", "0") };
    setup();
    assert!(!ascend_sim::racecheck::enabled());
    assert_eq!(unordered_writes(), ACL_SUCCESS, "off: not checked");
    assert_eq!(ascend_sim::racecheck::violations(), 0);

    ascend_sim::racecheck::set_enabled(true);
    assert!(ascend_sim::racecheck::enabled());
    assert_eq!(unordered_writes(), ACL_ERROR_RT_INTERNAL_ERROR);
    assert_err_msg_contains(&["racecheck: aclnnMish on stream", "(out)"]);
    assert_eq!(ascend_sim::racecheck::violations(), 1);

    // Work enqueued while it is off is not checked, even when it runs after it is turned
    // back on.
    ascend_sim::racecheck::set_enabled(false);
    assert_eq!(
        unordered_writes_with(|| ascend_sim::racecheck::set_enabled(true)),
        ACL_SUCCESS
    );
    assert!(ascend_sim::racecheck::enabled());
    assert_eq!(ascend_sim::racecheck::violations(), 1);
    assert_eq!(unordered_writes(), ACL_ERROR_RT_INTERNAL_ERROR);
    assert_eq!(ascend_sim::racecheck::violations(), 2);
}
