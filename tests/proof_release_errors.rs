//! Failures the crate cannot return and must not hide: failed releases inside `Drop` and
//! parked errors of dropped streams are counted.
//!
//! One `#[test]` and no leak check: faults are process-global, and the simulator keeps
//! the objects whose release failed.

mod common;

use ascendcl::{DeviceTensor, HostTensor, MishPlan, mish};
use common::*;
use ndarray::array;

/// A failed `aclrtFreeHost` / `aclrtFree` in a `Drop` is counted as a release error
/// and the memory the runtime still holds as a leak; so is an error parked on a stream
/// dropped before any call returned it; so is a failed destroy of a launch's own
/// descriptor, and of an executor that phase 1 made and no phase 2 took.
#[test]
fn failed_releases_in_drop_are_counted() {
    let dev = device(A2);
    // The releases a drop makes at once (caching off): with the cache on, a drop
    // releases nothing (`empty_cache` does, tests/api_caching.rs).
    dev.set_caching(false);
    let s = dev.stream().unwrap();
    let (errors, leaks) = (dev.release_errors(), dev.leaks());

    let h = HostTensor::from_array(&dev, &array![1.0f32]).unwrap();
    ascend_sim::set_fault("aclrtFreeHost", 1).unwrap();
    drop(h);
    ascend_sim::set_fault("aclrtFreeHost", 0).unwrap();
    assert_eq!(dev.release_errors(), errors + 1);
    assert_eq!(dev.leaks().allocations, leaks.allocations + 1);

    let t = DeviceTensor::from_array(&s, &array![1.0f32]).unwrap();
    s.synchronize().unwrap();
    ascend_sim::set_fault("aclrtFree", 1).unwrap();
    drop(t);
    ascend_sim::set_fault("aclrtFree", 0).unwrap();
    assert_eq!(dev.release_errors(), errors + 2);
    assert_eq!(dev.leaks().allocations, leaks.allocations + 2);

    let s2 = dev.stream().unwrap();
    let x = DeviceTensor::from_array(&s2, &array![1.0f32]).unwrap();
    let mut y = DeviceTensor::<f32>::zeros(&s2, [1]).unwrap();
    mish(&x, &mut y, &s2).unwrap();
    ascend_sim::set_fault("aclrtSynchronizeStream", 1).unwrap();
    drop(x); // its settle fails: parked on s2, x leaked
    ascend_sim::set_fault("aclrtSynchronizeStream", 0).unwrap();
    assert_eq!(dev.leaks().allocations, leaks.allocations + 3);
    drop(y);
    drop(s2); // the parked error has no caller any more
    assert_eq!(dev.release_errors(), errors + 3);

    // A one-off launch on a view makes its own descriptors and destroys them after phase
    // 2: a failed destroy leaves the descriptor alive in CANN, a leaked handle.
    let x = DeviceTensor::from_array(&s, &array![1.0f32, 2.0]).unwrap();
    let mut y = DeviceTensor::<f32>::zeros(&s, [1]).unwrap();
    let (live, handles) = (ascend_sim::counters().tensors, dev.leaks().handles);
    ascend_sim::set_fault("aclDestroyTensor", 1).unwrap();
    mish(x.view().slice(0, 0, 1, 1).unwrap(), &mut y, &s).unwrap();
    ascend_sim::set_fault("aclDestroyTensor", 0).unwrap();
    assert_eq!(dev.release_errors(), errors + 4);
    assert_eq!(dev.leaks().handles, handles + 1);
    assert!(
        ascend_sim::counters().tensors > live,
        "the descriptor is still alive"
    );

    // A plan whose executor cannot be made repeatable destroys that executor: a failed
    // destroy leaves it alive in CANN, a release error and a leaked handle.
    let executors = ascend_sim::counters().executors;
    let handles = dev.leaks().handles;
    ascend_sim::set_fault("aclSetAclOpExecutorRepeatable", 1).unwrap();
    ascend_sim::set_fault("aclDestroyAclOpExecutor", 1).unwrap();
    let plan = MishPlan::new(x.view().slice(0, 0, 1, 1).unwrap(), &y, &s);
    ascend_sim::set_fault("aclSetAclOpExecutorRepeatable", 0).unwrap();
    ascend_sim::set_fault("aclDestroyAclOpExecutor", 0).unwrap();
    assert!(
        matches!(
            plan,
            Err(ascendcl::Error::Aclnn {
                api: "aclSetAclOpExecutorRepeatable",
                ..
            })
        ),
        "the repeatable fault fails the plan"
    );
    assert_eq!(dev.release_errors(), errors + 5);
    assert_eq!(dev.leaks().handles, handles + 1);
    assert_eq!(
        ascend_sim::counters().executors,
        executors + 1,
        "the executor is still alive"
    );
}
