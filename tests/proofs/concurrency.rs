//! Concurrency on one device: 8 threads with their own streams, 4 threads sharing one
//! stream through `&Stream` (random `mish_backward`, `mish` and `mish_inplace` calls), tensors moved between threads, and cross-stream ordering with
//! events (right with the wait; observably wrong without it, since the simulator's stream
//! workers really run asynchronously). Results checked against the reference; no error,
//! no leak, no sanitizer report; bounded by a watchdog.

use crate::common;

use ascendcl::element::Promote;
use ascendcl::{DType, DeviceTensor, Stream, mish, mish_backward, mish_inplace, reference};
use common::*;
use half::{bf16, f16};
use ndarray::ArrayD;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

const OWN_THREADS: usize = 8;
const OWN_CALLS: usize = 300;
const SHARED_THREADS: usize = 4;
const SHARED_CALLS: usize = 200;

/// One random call (`mish_backward` with a shape, broadcast and dtype mix, or `mish` /
/// `mish_inplace` on a view, chosen by `seed`) on `stream`, checked against the reference.
fn one_call(stream: &Stream, seed: u64) {
    let mut rng = common::props::Rng(seed);
    let a = 1 + (rng.next() % 17) as usize;
    let b = 1 + (rng.next() % 9) as usize;
    let (gs, xs) = match rng.next() % 3 {
        0 => (vec![a, b], vec![a, b]),
        1 => (vec![a, b], vec![b]),
        _ => (vec![a, 1], vec![1, b]),
    };
    match rng.next() % 5 {
        0 => check::<f32, f32, f32>(stream, &gs, &xs, seed),
        1 => check::<f16, f32, f16>(stream, &gs, &xs, seed),
        2 => check::<bf16, bf16, f32>(stream, &gs, &xs, seed),
        3 => check_forward::<f32>(stream, &gs, seed),
        _ => check_forward::<bf16>(stream, &gs, seed),
    }
}

/// `mish` into the transpose of an output, then `mish_inplace` on its first column.
fn check_forward<T: ascendcl::FloatElement>(stream: &Stream, shape: &[usize], seed: u64) {
    let x: ArrayD<T> = array(shape, seed, -6.0, 6.0);
    let once = reference::mish(x.view()).unwrap();
    let mut want = once.clone();
    want.index_axis_mut(ndarray::Axis(1), 0)
        .assign(&reference::mish(once.index_axis(ndarray::Axis(1), 0)).unwrap());
    let xd = DeviceTensor::from_array(stream, &x).unwrap();
    let mut od = DeviceTensor::<T>::zeros(stream, [shape[1], shape[0]]).unwrap();
    let mut ov = od.view_mut().t();
    mish(&xd, ov.reborrow(), stream).unwrap();
    mish_inplace(ov.slice(1, 0, 1, 1).unwrap(), stream).unwrap();
    let got = od.to_array(stream).unwrap().t().to_owned();
    assert_precise(&got, &want, threshold(T::DTYPE), "concurrent mish");
}

fn check<G: Promote<X>, X: ascendcl::FloatElement, O: ascendcl::FloatElement>(
    stream: &Stream,
    gs: &[usize],
    xs: &[usize],
    seed: u64,
) {
    let g: ArrayD<G> = array(gs, seed, -3.0, 3.0);
    let x: ArrayD<X> = array(xs, seed ^ 1, -6.0, 6.0);
    let want: ArrayD<O> = reference::cast(&reference::mish_backward(g.view(), x.view()).unwrap());
    let gd = DeviceTensor::from_array(stream, &g).unwrap();
    let xd = DeviceTensor::from_array(stream, &x).unwrap();
    let mut od = DeviceTensor::<O>::zeros(stream, want.shape()).unwrap();
    mish_backward(&gd, &xd, &mut od, stream).unwrap();
    let got = od.to_array(stream).unwrap();
    assert_precise(
        &got,
        &want,
        threshold_for(G::DTYPE, X::DTYPE, O::DTYPE),
        "concurrent call",
    );
}

fn watchdog<T: Send + 'static>(
    secs: u64,
    what: &'static str,
    f: impl FnOnce() -> T + Send + 'static,
) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    let h = std::thread::spawn(move || {
        let r = f();
        let _ = tx.send(());
        r
    });
    match rx.recv_timeout(Duration::from_secs(secs)) {
        Ok(()) => h.join().unwrap(),
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => match h.join() {
            Ok(r) => r,
            Err(p) => std::panic::resume_unwind(p),
        },
        Err(_) => panic!("{what}: still running after {secs} s (hang)"),
    }
}

#[test]
fn threads_with_own_and_shared_streams_and_moved_tensors() {
    let _leaks = LeakCheck::start();
    let calls = watchdog(60, "concurrency", || {
        let device = device(A2);
        let count = AtomicUsize::new(0);
        let shared = device.stream().unwrap();
        std::thread::scope(|s| {
            for t in 0..OWN_THREADS {
                let device = device.clone();
                let count = &count;
                s.spawn(move || {
                    let stream = device.stream().unwrap();
                    for i in 0..OWN_CALLS {
                        one_call(&stream, (t * 100_000 + i) as u64);
                        count.fetch_add(1, Ordering::Relaxed);
                    }
                });
            }
            for t in 0..SHARED_THREADS {
                let (shared, count) = (&shared, &count);
                s.spawn(move || {
                    for i in 0..SHARED_CALLS {
                        one_call(shared, (1_000_000 + t * 100_000 + i) as u64);
                        count.fetch_add(1, Ordering::Relaxed);
                    }
                });
            }
        });
        // Tensors made on one thread, moved into others, computed there, moved back.
        let stream = device.stream().unwrap();
        let g: ArrayD<f32> = array(&[64, 32], 5, -2.0, 2.0);
        let x: ArrayD<f32> = array(&[32], 6, -5.0, 5.0);
        let want: ArrayD<f32> = reference::mish_backward(g.view(), x.view()).unwrap();
        let mut handles = Vec::new();
        for _ in 0..8 {
            let gd = DeviceTensor::from_array(&stream, &g).unwrap();
            let xd = DeviceTensor::from_array(&stream, &x).unwrap();
            let od = DeviceTensor::<f32>::zeros(&stream, [64, 32]).unwrap();
            let stream = stream.clone();
            handles.push(std::thread::spawn(move || {
                let mut od = od;
                mish_backward(&gd, &xd, &mut od, &stream).unwrap();
                (od, gd) // moved back, work possibly still queued
            }));
        }
        for h in handles {
            let (od, gd) = h.join().unwrap();
            drop(gd);
            assert_precise(
                &od.to_array(&stream).unwrap(),
                &want,
                threshold(DType::F32),
                "moved tensors",
            );
            count.fetch_add(1, Ordering::Relaxed);
        }
        count.load(Ordering::Relaxed)
    });
    println!(
        "concurrency: {OWN_THREADS} threads x {OWN_CALLS} calls on own streams + {SHARED_THREADS} threads x {SHARED_CALLS} calls on one shared stream + 8 moved-tensor calls = {calls} calls (mish_backward, mish then mish_inplace), all checked against the reference"
    );
    assert_eq!(
        calls,
        OWN_THREADS * OWN_CALLS + SHARED_THREADS * SHARED_CALLS + 8
    );
}

#[test]
fn a_tensor_is_ordered_between_streams_with_or_without_an_explicit_event() {
    let _leaks = LeakCheck::start();
    watchdog(30, "events", || {
        let device = device(A2);
        let producer = device.stream().unwrap();
        let consumer = device.stream().unwrap();
        let g: ArrayD<f32> = array(&[4096], 1, -2.0, 2.0);
        let x: ArrayD<f32> = array(&[4096], 2, -4.0, 4.0);
        let ones = ArrayD::<f32>::ones(ndarray::IxDyn(&[4096]));
        let mid: ArrayD<f32> = reference::mish_backward(g.view(), x.view()).unwrap();
        // consumer computes ones * mish'(mid)
        let want: ArrayD<f32> = reference::mish_backward(ones.view(), mid.view()).unwrap();
        for with_wait in [true, false] {
            let gd = DeviceTensor::from_array(&producer, &g).unwrap();
            let xd = DeviceTensor::from_array(&producer, &x).unwrap();
            let od = DeviceTensor::from_array(&consumer, &ones).unwrap();
            let mut middle = DeviceTensor::<f32>::zeros(&producer, [4096]).unwrap();
            let mut out = DeviceTensor::<f32>::zeros(&consumer, [4096]).unwrap();
            producer.synchronize().unwrap();
            consumer.synchronize().unwrap();
            let event = device.event().unwrap();
            // The producer's kernel is held back until the consumer has queued its work.
            let hold = ascend_sim::testing::hold_stream(producer.as_raw()).expect("hold");
            mish_backward(&gd, &xd, &mut middle, &producer).unwrap();
            producer.record(&event).unwrap();
            if with_wait {
                consumer.wait(&event).unwrap();
            }
            mish_backward(&od, &middle, &mut out, &consumer).unwrap();
            let release = std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(30));
                hold.release();
            });
            // Without the explicit wait the crate orders the read of `middle` after the
            // producer's write itself.
            let got = out.to_array(&consumer).unwrap();
            release.join().unwrap();
            producer.synchronize().unwrap();
            let how = if with_wait {
                "by the event"
            } else {
                "by the crate"
            };
            assert_precise(&got, &want, threshold(DType::F32), how);
        }
        println!("events: the consumer read the producer's write, with or without an event");
    });
}
