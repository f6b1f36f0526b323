//! A synchronisation that fails inside a `Drop` has no caller: its error is parked on the
//! stream and returned by the stream's next call, once, and the resource it could not
//! release is leaked and counted.
//!
//! One `#[test]`: faults are process-global.

mod common;

use ascendcl::{DeviceTensor, Error, mish_backward};
use common::*;
use ndarray::array;

fn sync_timeout(e: &Error) -> bool {
    matches!(
        e,
        Error::Acl {
            api: "aclrtSynchronizeStream",
            code: ascend_sys::ACL_ERROR_RT_STREAM_SYNC_TIMEOUT,
            ..
        }
    )
}

#[test]
fn release_path_failures_are_parked_counted_and_returned_once() {
    let dev = device(A2);
    // The synchronisations a drop makes when it frees at once (caching off): with the
    // cache on, a drop makes none (`empty_cache` makes them, tests/api_caching.rs).
    dev.set_caching(false);
    let s = dev.stream().unwrap();
    let g = DeviceTensor::from_array(&s, &array![1.0f32, 2.0, 3.0, 4.0]).unwrap();
    let x = DeviceTensor::from_array(&s, &array![0.0f32, 1.0, 2.0, 3.0]).unwrap();
    let mut out = DeviceTensor::<f32>::zeros(&s, [4]).unwrap();
    let before = ascend_sim::counters().allocations;

    // The next synchronisation, the one `drop(x)` makes for the queued launch, fails.
    mish_backward(&g, &x, &mut out, &s).unwrap();
    ascend_sim::set_fault("aclrtSynchronizeStream", 1).unwrap();
    drop(x);
    let leaks = dev.leaks();
    assert_eq!(leaks.allocations, 1, "{leaks:?}");
    assert!(leaks.bytes >= 16, "{leaks:?}");
    assert_eq!(
        ascend_sim::counters().allocations,
        before,
        "x was leaked, not freed"
    );
    let e = s.synchronize().unwrap_err();
    assert!(sync_timeout(&e), "{e}");
    s.synchronize().unwrap(); // returned once

    // A parked error is also returned by the stream's next enqueue.
    mish_backward(&g, &g, &mut out, &s).unwrap();
    ascend_sim::set_fault("aclrtSynchronizeStream", 1).unwrap();
    drop(g);
    let mut fresh = DeviceTensor::<f32>::zeros(&s, [4]).unwrap();
    let e = mish_backward(&out, &out, &mut fresh, &s);
    assert!(e.as_ref().is_err_and(sync_timeout), "{e:?}");
    assert_eq!(dev.leaks().allocations, 2);
    s.synchronize().unwrap();
    assert_eq!(ascend_sim::last_report(), None);
}
