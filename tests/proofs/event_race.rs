//! An event synchronised on one thread while another thread records it again on a busy
//! stream: the crate must credit only the record the runtime waited for, so a tensor the
//! second stream still reads is not freed early.

use crate::common;

use ascendcl::{DeviceTensor, mish_backward};
use common::*;
use ndarray::array;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

#[test]
fn event_synchronize_credits_only_the_record_it_waited_for() {
    let _check = LeakCheck::start();
    let dev = device(A2);
    let (sa, sb) = (dev.stream().unwrap(), dev.stream().unwrap());
    let g = DeviceTensor::from_array(&sb, &array![1.0f32, 2.0, 3.0, 4.0]).unwrap();
    let victim = DeviceTensor::from_array(&sb, &array![0.0f32, 1.0, 2.0, 3.0]).unwrap();
    let mut out = DeviceTensor::<f32>::zeros(&sb, [4]).unwrap();
    sb.synchronize().unwrap();
    let ev = dev.event().unwrap();

    // A "slow kernel" on A, then record #1 on A; M waits for it.
    let hold_a = ascend_sim::testing::hold_stream(sa.as_raw()).unwrap();
    sa.record(&ev).unwrap();
    let ev_m = ev.clone();
    let m = std::thread::spawn(move || ev_m.synchronize());
    std::thread::sleep(Duration::from_millis(50));

    // A launch reading `victim` queued on B behind a "slow kernel", then record #2 on B.
    let hold_b = ascend_sim::testing::hold_stream(sb.as_raw()).unwrap();
    mish_backward(&g, &victim, &mut out, &sb).unwrap();
    sb.record(&ev).unwrap();
    drop(hold_a);
    m.join().unwrap().unwrap();

    // B is still held: dropping `victim` must wait for B's launch.
    let released = Arc::new(AtomicBool::new(false));
    let releaser = {
        let released = Arc::clone(&released);
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(200));
            released.store(true, Ordering::SeqCst);
            drop(hold_b);
        })
    };
    // The drop returns at once (the cache keeps the block); freeing it waits.
    drop(victim);
    dev.empty_cache();
    assert!(
        released.load(Ordering::SeqCst),
        "victim was freed while stream B's queued launch still read it"
    );
    releaser.join().unwrap();
    sb.synchronize().unwrap();
    assert_eq!(ascend_sim::last_report(), None);
    assert_eq!(dev.leaks(), ascendcl::Leaks::default());
}

/// When nobody records in between, the wait does vouch for the recording stream: a tensor
/// used before the record is released without another synchronisation.
#[test]
fn event_synchronize_credits_its_own_record() {
    let _check = LeakCheck::start();
    let dev = device(A2);
    let s = dev.stream().unwrap();
    let x = DeviceTensor::from_array(&s, &array![0.5f32, 1.5]).unwrap();
    let mut out = DeviceTensor::<f32>::zeros(&s, [2]).unwrap();
    mish_backward(&x, &x, &mut out, &s).unwrap();
    let ev = dev.event().unwrap();
    s.record(&ev).unwrap();
    ev.synchronize().unwrap();
    let syncs = ascend_sim::call_count("aclrtSynchronizeStream");
    drop(x);
    assert_eq!(
        ascend_sim::call_count("aclrtSynchronizeStream"),
        syncs,
        "the event's wait already covered the launch"
    );
}
