//! Stream-ordered lifetimes when streams die and runtime calls fail: a stream dropped on
//! another thread stays busy until drained, enqueueing never waits for
//! another stream's work whatever the number of streams, a staged download whose
//! drain fails still records its read, and host waits never skip queued work of a
//! stream whose synchronisation failed, a plan rebind that fails half-way is redone
//!, and work ordered after failed work fails too (on one device).
//!
//! Faults and the simulator's counters are process-global: each test holds `LeakCheck`.

mod common;

use ascendcl::{DeviceTensor, Error, HostTensor, InplaceMishPlan, mish, mish_inplace};
use common::*;
use ndarray::{Array1, Array2, ShapeBuilder, array};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Duration;

fn mish1(x: f32) -> f32 {
    x * (1.0 + x.exp()).ln().tanh()
}

/// Releases `hold` on another thread once `done` is sent, or after a generous deadline
/// (so that a regression that makes the sender wait for the hold fails instead of
/// hanging). Returns whether the deadline, not the message, released it.
fn release_when_told(
    hold: ascend_sim::testing::StreamHold,
) -> (mpsc::Sender<()>, std::thread::JoinHandle<bool>) {
    let (tx, rx) = mpsc::channel::<()>();
    let releaser = std::thread::spawn(move || {
        let timed_out = rx.recv_timeout(Duration::from_secs(20)).is_err();
        drop(hold);
        timed_out
    });
    (tx, releaser)
}

/// Releases `hold` on another thread shortly, setting the returned flag first.
fn release_soon(
    hold: ascend_sim::testing::StreamHold,
) -> (Arc<AtomicBool>, std::thread::JoinHandle<()>) {
    let released = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&released);
    let releaser = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(50));
        flag.store(true, Ordering::SeqCst);
        drop(hold);
    });
    (released, releaser)
}

/// Stream A has queued in-place writes on `w` and is dropped on another thread. A
/// write on stream B waits for them on the device (the enqueue itself returns while A is
/// still held), and dropping `w` while A drains waits for the drain.
#[test]
fn a_stream_dropped_on_another_thread_is_busy_until_drained() {
    let _leaks = LeakCheck::start();
    let dev = device(A2);
    let n = 256;
    let mut w = DeviceTensor::<f32>::zeros(&dev.stream().unwrap(), [n]).unwrap();
    let sa = dev.stream().unwrap();
    w.copy_from_array(&sa, &Array1::from_elem(n, 1.0f32))
        .unwrap();
    sa.synchronize().unwrap();
    let hold = ascend_sim::testing::hold_stream(sa.as_raw()).unwrap();
    for _ in 0..3 {
        mish_inplace(&mut w, &sa).unwrap();
    }
    let syncs = ascend_sim::call_count("aclrtSynchronizeStream");
    let dropper = std::thread::spawn(move || drop(sa));
    // The dropping thread has begun its drain (after the bookkeeping under test).
    while ascend_sim::call_count("aclrtSynchronizeStream") == syncs {
        std::thread::yield_now();
    }
    let sb = dev.stream().unwrap();
    let (done, releaser) = release_when_told(hold);
    w.copy_from_array(&sb, &Array1::from_elem(n, 2.0f32))
        .unwrap();
    done.send(()).unwrap();
    assert!(
        !releaser.join().unwrap(),
        "the enqueue on B waited for A's held work"
    );
    dropper.join().unwrap();
    let v = w.to_array::<ndarray::IxDyn>(&sb).unwrap();
    assert!(
        v.iter().all(|&x| x == 2.0),
        "B's write ran before A's: {v:?}"
    );

    // Dropping the tensor while its stream drains on another thread waits for the drain.
    let sa = dev.stream().unwrap();
    sb.synchronize().unwrap();
    let hold = ascend_sim::testing::hold_stream(sa.as_raw()).unwrap();
    mish_inplace(&mut w, &sa).unwrap();
    let syncs = ascend_sim::call_count("aclrtSynchronizeStream");
    let dropper = std::thread::spawn(move || drop(sa));
    while ascend_sim::call_count("aclrtSynchronizeStream") == syncs {
        std::thread::yield_now();
    }
    let (released, releaser) = release_soon(hold);
    // The drop returns at once (the cache keeps the block); freeing it waits.
    drop(w);
    dev.empty_cache();
    assert!(
        released.load(Ordering::SeqCst),
        "w was freed under A's queued kernel"
    );
    releaser.join().unwrap();
    dropper.join().unwrap();
    assert_eq!(dev.leaks().allocations, 0);
}

/// Per-thread streams that end with their threads, all updating one tensor behind a
/// mutex: every update is seen by the next one.
#[test]
fn per_thread_streams_dropped_with_their_threads_keep_updates_in_order() {
    let _leaks = LeakCheck::start();
    let dev = device(A2);
    let s = dev.stream().unwrap();
    let w = std::sync::Mutex::new(DeviceTensor::from_array(&s, &array![2.0f32, -1.0]).unwrap());
    std::thread::scope(|sc| {
        for _ in 0..3 {
            sc.spawn(|| {
                let mine = dev.stream().unwrap();
                mish_inplace(&mut *w.lock().unwrap(), &mine).unwrap();
                // `mine` drops here, its work perhaps still queued, while the next thread
                // already holds the lock.
            });
        }
    });
    let got = w.lock().unwrap().to_array::<ndarray::IxDyn>(&s).unwrap();
    let want = [2.0f32, -1.0].map(|x| mish1(mish1(mish1(x))));
    for (g, e) in got.iter().zip(want) {
        assert!((g - e).abs() < 1e-5, "{got:?} vs {want:?}");
    }
}

/// One producer, five consumer streams; each consumer's enqueue returns at once
/// (no synchronisation) while the producer is held, and every consumer sees its write.
#[test]
fn enqueueing_on_many_consumer_streams_never_waits() {
    let _leaks = LeakCheck::start();
    let dev = device(A2);
    let producer = dev.stream().unwrap();
    let consumers: Vec<_> = (0..6).map(|_| dev.stream().unwrap()).collect();
    let mut xs: Vec<_> = (0..6)
        .map(|i| DeviceTensor::from_array(&producer, &array![1.0f32, i as f32]).unwrap())
        .collect();
    producer.synchronize().unwrap();
    let hold = ascend_sim::testing::hold_stream(producer.as_raw()).unwrap();
    for x in xs.iter_mut() {
        mish_inplace(x, &producer).unwrap();
    }
    let mut ys: Vec<_> = consumers
        .iter()
        .map(|c| DeviceTensor::<f32>::zeros(c, [2]).unwrap())
        .collect();
    let syncs = ascend_sim::call_count("aclrtSynchronizeStream");
    let (done, releaser) = release_when_told(hold);
    for ((x, y), c) in xs.iter().zip(ys.iter_mut()).zip(&consumers) {
        mish(x, y, c).unwrap();
    }
    let waited = ascend_sim::call_count("aclrtSynchronizeStream") - syncs;
    done.send(()).unwrap();
    assert!(
        !releaser.join().unwrap(),
        "an enqueue waited for the producer"
    );
    assert_eq!(waited, 0, "enqueues synchronised a stream");
    for (i, (y, c)) in ys.iter().zip(&consumers).enumerate() {
        let got = y.to_array::<ndarray::IxDyn>(c).unwrap();
        let want = [1.0f32, i as f32].map(|x| mish1(mish1(x)));
        for (g, e) in got.iter().zip(want) {
            assert!((g - e).abs() < 1e-5, "consumer {i}: {got:?} vs {want:?}");
        }
    }
}

/// A staged `copy_to_array` whose drain fails has still queued its copy: dropping
/// the tensor waits for that copy instead of freeing the memory under it.
#[test]
fn a_staged_download_whose_drain_fails_still_records_its_read() {
    let _leaks = LeakCheck::start();
    let dev = device(A2);
    let s = dev.stream().unwrap();
    let t = DeviceTensor::from_array(&s, &array![[1.0f32, 2.0], [3.0, 4.0]]).unwrap();
    s.synchronize().unwrap();
    let hold = ascend_sim::testing::hold_stream(s.as_raw()).unwrap();
    ascend_sim::set_fault("aclrtSynchronizeStream", 1).unwrap();
    let mut out = Array2::<f32>::zeros((2, 2).f()); // column-major: the staged path
    let r = t.copy_to_array(&s, &mut out);
    ascend_sim::set_fault("aclrtSynchronizeStream", 0).unwrap();
    assert!(r.is_err(), "{r:?}");
    let (released, releaser) = release_soon(hold);
    // The drop returns at once (the cache keeps the block); freeing it waits.
    drop(t);
    dev.empty_cache();
    assert!(
        released.load(Ordering::SeqCst),
        "the tensor was freed under the queued copy"
    );
    releaser.join().unwrap();
    s.synchronize().unwrap();
    assert_eq!(ascend_sim::last_report(), None);
    assert_eq!(dev.leaks().allocations, 0);
}

/// More streams use a pinned host tensor and a device tensor than the inline
/// records hold, and a synchronisation fails meanwhile; the host accessor and the
/// upload's fast path still wait for (or order after) the held stream's queued work.
#[test]
fn host_waits_and_fast_paths_never_skip_queued_work_of_any_stream() {
    let _leaks = LeakCheck::start();
    let dev = device(A2);
    let s: Vec<_> = (0..6).map(|_| dev.stream().unwrap()).collect();

    let mut host = HostTensor::from_array(&dev, &array![1.0f32, 2.0, 3.0]).unwrap();
    let mut t: Vec<_> = s
        .iter()
        .map(|st| DeviceTensor::<f32>::zeros(st, [3]).unwrap())
        .collect();
    let hold = ascend_sim::testing::hold_stream(s[0].as_raw()).unwrap();
    for (ti, st) in t.iter_mut().zip(&s).take(5) {
        ti.copy_from_host(st, &host).unwrap();
    }
    ascend_sim::set_fault("aclrtSynchronizeStream", 1).unwrap();
    t[5].copy_from_host(&s[5], &host).unwrap();
    // The armed fault hits the first synchronisation of a stream other than S0.
    assert!(s[5].synchronize().is_err());
    ascend_sim::set_fault("aclrtSynchronizeStream", 0).unwrap();
    for st in &s[1..] {
        st.synchronize().unwrap();
    }
    let (released, releaser) = release_soon(hold);
    host.as_slice_mut().unwrap().fill(-1.0);
    assert!(
        released.load(Ordering::SeqCst),
        "as_slice_mut returned under S0's copy"
    );
    releaser.join().unwrap();
    assert_eq!(
        t[0].to_array::<ndarray::IxDyn>(&s[0])
            .unwrap()
            .as_slice()
            .unwrap(),
        &[1.0, 2.0, 3.0]
    );

    let mut x = DeviceTensor::from_array(&s[0], &array![5.0f32, 6.0]).unwrap();
    s[0].synchronize().unwrap();
    let mut y: Vec<_> = s
        .iter()
        .map(|st| DeviceTensor::<f32>::zeros(st, [2]).unwrap())
        .collect();
    let hold = ascend_sim::testing::hold_stream(s[0].as_raw()).unwrap();
    for (yi, st) in y.iter_mut().zip(&s) {
        mish(&x, yi, st).unwrap();
    }
    for st in &s[1..] {
        st.synchronize().unwrap();
    }
    let (done, releaser) = release_when_told(hold);
    x.copy_from_array(&s[1], &array![-100.0f32, -100.0])
        .unwrap();
    done.send(()).unwrap();
    assert!(
        !releaser.join().unwrap(),
        "the upload waited on the host for S0"
    );
    let got = y[0].to_array::<ndarray::IxDyn>(&s[0]).unwrap();
    let want = [5.0f32, 6.0].map(mish1);
    for (g, e) in got.iter().zip(want) {
        assert!((g - e).abs() < 1e-4, "{got:?} vs {want:?}");
    }
    assert_eq!(
        x.to_array::<ndarray::IxDyn>(&s[1])
            .unwrap()
            .as_slice()
            .unwrap(),
        &[-100.0, -100.0]
    );
    assert_eq!(dev.leaks().allocations, 0);
}

/// `aclSetOutputTensorAddr` fails after `aclSetInputTensorAddr` succeeded for an
/// in-place argument; the next launch on the original tensor rebinds it again and acts
/// on it, not on the tensor of the failed launch.
#[test]
fn a_half_done_plan_rebind_is_redone() {
    let _leaks = LeakCheck::start();
    let dev = device(A2);
    let s = dev.stream().unwrap();
    let mut t1 = DeviceTensor::from_array(&s, &array![1.0f32, 2.0]).unwrap();
    let mut t2 = DeviceTensor::from_array(&s, &array![-1.0f32, 0.5]).unwrap();
    let mut plan = InplaceMishPlan::<f32>::new(&t1, &s).unwrap();
    if !plan.is_reusable() {
        return;
    }
    plan.launch(&mut t1, &s).unwrap();
    ascend_sim::set_fault("aclSetOutputTensorAddr", 1).unwrap();
    let r = plan.launch(&mut t2, &s);
    ascend_sim::set_fault("aclSetOutputTensorAddr", 0).unwrap();
    assert!(
        matches!(
            &r,
            Err(Error::Aclnn {
                api: "aclSetOutputTensorAddr",
                ..
            })
        ),
        "{r:?}"
    );
    plan.launch(&mut t1, &s).unwrap();
    let got = t1.to_array::<ndarray::IxDyn>(&s).unwrap();
    let want = [1.0f32, 2.0].map(|x| mish1(mish1(x)));
    for (g, e) in got.iter().zip(want) {
        assert!((g - e).abs() < 1e-5, "{got:?} vs {want:?}");
    }
    assert_eq!(
        t2.to_array::<ndarray::IxDyn>(&s)
            .unwrap()
            .as_slice()
            .unwrap(),
        &[-1.0, 0.5]
    );
}

/// On one device, work on stream B ordered (by the crate) after work on stream A
/// whose synchronisation fails gets an error naming A's work from B's download, never
/// `Ok` values that may not have been computed; A's own next call reports the failure.
#[test]
fn work_ordered_after_failed_work_fails_too() {
    let _leaks = LeakCheck::start();
    let dev = device(A2);
    let (a, b) = (dev.stream().unwrap(), dev.stream().unwrap());
    let mut x = DeviceTensor::from_array(&a, &array![1.0f32, 2.0]).unwrap();
    a.synchronize().unwrap();
    mish_inplace(&mut x, &a).unwrap();
    let mut y = DeviceTensor::<f32>::zeros(&b, [2]).unwrap();
    mish(&x, &mut y, &b).unwrap(); // ordered after A's write
    // B's drain is the first synchronisation, A's (made to learn its outcome) the second.
    ascend_sim::set_fault("aclrtSynchronizeStream", 2).unwrap();
    let r = y.to_array::<ndarray::IxDyn>(&b);
    ascend_sim::set_fault("aclrtSynchronizeStream", 0).unwrap();
    match &r {
        Err(Error::DependencyFailed { source, .. }) => assert!(
            matches!(
                **source,
                Error::Acl {
                    api: "aclrtSynchronizeStream",
                    ..
                }
            ),
            "{source:?}"
        ),
        other => panic!("{other:?}"),
    }
    // Reported once, to each side.
    assert!(a.synchronize().is_err());
    a.synchronize().unwrap();
    b.synchronize().unwrap();
    // A later read on B of the same failed write fails at once, at the call.
    let mut z = DeviceTensor::<f32>::zeros(&b, [2]).unwrap();
    let r = mish(&x, &mut z, &b);
    assert!(matches!(r, Err(Error::DependencyFailed { .. })), "{r:?}");
    // A new write on A replaces the failed values: readers are fine again.
    x.copy_from_array(&a, &array![1.0f32, 2.0]).unwrap();
    mish(&x, &mut z, &b).unwrap();
    let got = z.to_array::<ndarray::Ix1>(&b).unwrap();
    assert!((got[0] - mish1(1.0)).abs() < 1e-5, "{got:?}");
}
