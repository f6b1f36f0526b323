//! A release that cannot wait for the device reports what it leaked, and only what it
//! leaked: a stream that held no memory reports the failed wait, not a leak of nothing.
//! One `#[test]`: faults are process-global.

mod common;

use ascendcl::DeviceTensor;
use common::logs::Collect;
use common::*;

#[test]
fn a_leak_warning_names_only_what_was_leaked() {
    let (logs, _guard) = Collect::install();
    let dev = device(A2);
    // The warnings of drops that free at once (caching off); with the cache on, a drop
    // never waits and `empty_cache` reports the same way.
    dev.set_caching(false);
    let lines = || logs.lines();

    // A stream without memory of its own: its drop cannot wait, but leaks nothing.
    let s = dev.stream().unwrap();
    ascend_sim::set_fault("aclrtSynchronizeStream", 1).unwrap();
    drop(s);
    let seen = lines();
    assert!(
        seen.iter()
            .any(|l| l.contains("releasing a device resource failed")),
        "the failed wait is reported: {seen:?}"
    );
    assert!(
        !seen
            .iter()
            .any(|l| l.contains("leaked rather than released")),
        "no leak of nothing: {seen:?}"
    );
    assert_eq!(dev.leaks().allocations, 0);

    // A tensor whose drop cannot wait for its queued use: one allocation leaked, said so.
    let s = dev.stream().unwrap();
    let t = DeviceTensor::<f32>::zeros(&s, 4).unwrap();
    let _copy: ndarray::Array1<f32> = t.to_array(&s).unwrap();
    let mut out = DeviceTensor::<f32>::zeros(&s, 4).unwrap();
    ascendcl::mish(&t, &mut out, &s).unwrap();
    ascend_sim::set_fault("aclrtSynchronizeStream", 1).unwrap();
    drop(t);
    let seen = lines();
    assert!(
        seen.iter()
            .any(|l| l.contains("leaked rather than released")
                && l.contains("what=\"tensor\"")
                && l.contains("allocations=1")),
        "{seen:?}"
    );
    assert_eq!(dev.leaks().allocations, 1);
    let _ = s.synchronize(); // the parked error, once
    s.synchronize().unwrap();
}
