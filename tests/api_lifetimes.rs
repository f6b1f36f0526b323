//! Lifetimes, threads, events, workspace caching, plans, and error paths that must not
//! leak, on the simulator.

mod common;

use ascendcl::{DeviceTensor, Error, MishBackwardPlan, mish_backward, reference};
use common::*;
use half::f16;
use ndarray::{Array1, ArrayD};
use std::time::Duration;

fn release_later(hold: ascend_sim::testing::StreamHold) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(50));
        hold.release();
    })
}

fn expected(g: &ArrayD<f32>, x: &ArrayD<f32>) -> ArrayD<f32> {
    reference::mish_backward(g.view(), x.view()).unwrap()
}

#[test]
fn dropping_inputs_while_queued_waits_for_the_work() {
    let _leaks = LeakCheck::start();
    let stream = device(A2).stream().unwrap();
    let g: ArrayD<f32> = array(&[64], 1, -2.0, 2.0);
    let x: ArrayD<f32> = array(&[64], 2, -4.0, 4.0);
    let mut out = DeviceTensor::<f32>::zeros(&stream, [64]).unwrap();
    {
        let gd = DeviceTensor::from_array(&stream, &g).unwrap();
        let xd = DeviceTensor::from_array(&stream, &x).unwrap();
        let hold = ascend_sim::testing::hold_stream(stream.as_raw()).expect("hold");
        mish_backward(&gd, &xd, &mut out, &stream).unwrap();
        let t = release_later(hold);
        drop(gd); // must wait for the queued kernel, not free under it
        drop(xd);
        t.join().unwrap();
    }
    assert_eq!(ascend_sim::last_report(), None);
    assert_precise(
        &out.to_array(&stream).unwrap(),
        &expected(&g, &x),
        threshold(ascendcl::DType::F32),
        "after drop",
    );
}

#[test]
fn dropping_the_stream_and_device_handles_first_is_fine() {
    let _leaks = LeakCheck::start();
    let g: ArrayD<f32> = array(&[3, 5], 3, -2.0, 2.0);
    let x: ArrayD<f32> = array(&[3, 5], 4, -4.0, 4.0);
    let (gd, xd, mut out) = {
        let device = device(A2);
        let stream = device.stream().unwrap();
        let gd = DeviceTensor::from_array(&stream, &g).unwrap();
        let xd = DeviceTensor::from_array(&stream, &x).unwrap();
        let mut out = DeviceTensor::<f32>::zeros(&stream, [3, 5]).unwrap();
        mish_backward(&gd, &xd, &mut out, &stream).unwrap();
        (gd, xd, out) // stream (drained) and device handle dropped here
    };
    let stream = device(A2).stream().unwrap();
    assert_precise(
        &out.to_array(&stream).unwrap(),
        &expected(&g, &x),
        threshold(ascendcl::DType::F32),
        "new stream",
    );
    mish_backward(&gd, &xd, &mut out, &stream).unwrap();
    drop(stream); // drains
    drop((gd, xd));
    assert_eq!(ascend_sim::last_report(), None);
}

#[test]
fn upload_never_reads_the_caller_memory_after_returning() {
    let _leaks = LeakCheck::start();
    let stream = device(A2).stream().unwrap();
    let hold = ascend_sim::testing::hold_stream(stream.as_raw()).expect("hold");
    let mut host = Array1::from_vec((0..1000).map(|v| v as f32).collect());
    let t = DeviceTensor::from_array(&stream, &host).unwrap(); // copy still queued
    host.fill(-1.0);
    drop(host);
    hold.release();
    let back = t.to_array::<ndarray::IxDyn>(&stream).unwrap();
    assert!(back.iter().enumerate().all(|(i, v)| *v == i as f32));
}

#[test]
fn tensors_and_streams_work_from_other_threads() {
    let _leaks = LeakCheck::start();
    let device = device(A2);
    let stream = device.stream().unwrap();
    let g: ArrayD<f16> = array(&[4, 4], 5, -2.0, 2.0);
    let x: ArrayD<f16> = array(&[4], 6, -3.0, 3.0);
    let gd = DeviceTensor::from_array(&stream, &g).unwrap();
    let xd = DeviceTensor::from_array(&stream, &x).unwrap();
    let mut out = DeviceTensor::<f16>::zeros(&stream, [4, 4]).unwrap();
    // A fresh thread has no current context: the crate binds it.
    std::thread::scope(|s| {
        s.spawn(|| mish_backward(&gd, &xd, &mut out, &stream).unwrap());
    });
    let result = std::thread::scope(|s| s.spawn(|| out.to_array(&stream).unwrap()).join().unwrap());
    let want: ArrayD<f16> = reference::mish_backward(g.view(), x.view()).unwrap();
    assert_precise(&result, &want, threshold(ascendcl::DType::F16), "threads");
    // Many threads sharing one stream and reading the same inputs.
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                let mut o = DeviceTensor::<f32>::zeros(&stream, [4, 4]).unwrap();
                for _ in 0..10 {
                    mish_backward(&gd, &xd, &mut o, &stream).unwrap();
                }
                drop(o);
            });
        }
    });
    stream.synchronize().unwrap();
    assert_eq!(ascend_sim::last_report(), None);
}

#[test]
fn events_order_two_streams() {
    let _leaks = LeakCheck::start();
    let device = device(A2);
    let producer = device.stream().unwrap();
    let consumer = device.stream().unwrap();
    let event = device.event().unwrap();
    let g: ArrayD<f32> = array(&[256], 7, -2.0, 2.0);
    let x: ArrayD<f32> = array(&[256], 8, -4.0, 4.0);
    let hold = ascend_sim::testing::hold_stream(producer.as_raw()).expect("hold");
    let gd = DeviceTensor::from_array(&producer, &g).unwrap();
    let xd = DeviceTensor::from_array(&producer, &x).unwrap();
    let mut out = DeviceTensor::<f32>::zeros(&producer, [256]).unwrap();
    mish_backward(&gd, &xd, &mut out, &producer).unwrap();
    producer.record(&event).unwrap();
    consumer.wait(&event).unwrap();
    let t = release_later(hold);
    // The download on `consumer` is ordered after the kernel on `producer`.
    let result = out.to_array(&consumer).unwrap();
    t.join().unwrap();
    assert_precise(
        &result,
        &expected(&g, &x),
        threshold(ascendcl::DType::F32),
        "events",
    );
    event.synchronize().unwrap();
    let other = super_device_event_mismatch();
    assert!(matches!(
        consumer.record(&other),
        Err(Error::DeviceMismatch {
            argument: "event",
            ..
        })
    ));
}

fn super_device_event_mismatch() -> ascendcl::Event {
    device(A910).event().unwrap()
}

#[test]
fn workspace_is_cached_per_stream() {
    let _leaks = LeakCheck::start();
    let stream = device(A2).stream().unwrap();
    // Mixed dtypes and a broadcast need a workspace.
    let g = DeviceTensor::from_array(&stream, &array::<f16>(&[32, 32], 9, -2.0, 2.0)).unwrap();
    let x = DeviceTensor::from_array(&stream, &array::<f32>(&[32], 10, -2.0, 2.0)).unwrap();
    let mut out = DeviceTensor::<f32>::zeros(&stream, [32, 32]).unwrap();
    mish_backward(&g, &x, &mut out, &stream).unwrap();
    let mallocs = ascend_sim::call_count("aclrtMalloc");
    for _ in 0..100 {
        mish_backward(&g, &x, &mut out, &stream).unwrap();
    }
    assert_eq!(
        ascend_sim::call_count("aclrtMalloc"),
        mallocs,
        "no allocation per call"
    );
    stream.synchronize().unwrap();
}

#[test]
fn every_failure_mid_protocol_releases_everything() {
    let _leaks = LeakCheck::start();
    let stream = device(A2).stream().unwrap();
    stream.synchronize().unwrap();
    let before = ascend_sim::counters();
    // Fresh tensors per case: a whole tensor caches its aclTensor descriptor from its first
    // call until its block leaves the device's cache (emptied after each case), so every
    // case starts without cached descriptors (the aclCreateTensor faults hit the same
    // calls as without a cache) and the check below, made after the tensors are dropped
    // and the cache emptied, also covers the cached descriptors' release.
    let tensors = || {
        let g = DeviceTensor::from_array(&stream, &array::<f16>(&[8, 8], 9, -2.0, 2.0)).unwrap();
        let x = DeviceTensor::from_array(&stream, &array::<f32>(&[8], 10, -2.0, 2.0)).unwrap();
        let out = DeviceTensor::<f32>::zeros(&stream, [8, 8]).unwrap();
        stream.synchronize().unwrap();
        (g, x, out)
    };
    type Check = fn(&Error) -> bool;
    let cases: [(&str, u64, Check); 6] = [
        ("aclCreateTensor", 1, |e| {
            matches!(
                e,
                Error::Aclnn {
                    api: "aclCreateTensor",
                    ..
                }
            )
        }),
        ("aclCreateTensor", 3, |e| {
            matches!(
                e,
                Error::Aclnn {
                    api: "aclCreateTensor",
                    ..
                }
            )
        }),
        ("aclnnMishBackwardGetWorkspaceSize", 1, |e| {
            matches!(
                e,
                Error::Aclnn {
                    api: "aclnnMishBackwardGetWorkspaceSize",
                    status: 561101,
                    ..
                }
            )
        }),
        ("aclrtMalloc", 1, |e| {
            matches!(
                e,
                Error::Acl {
                    api: "aclrtMalloc",
                    code: 207001,
                    ..
                }
            )
        }),
        ("aclnnMishBackward", 1, |e| {
            matches!(
                e,
                Error::Aclnn {
                    api: "aclnnMishBackward",
                    status: 361001,
                    name: "ACLNN_ERR_RUNTIME_ERROR",
                    ..
                }
            )
        }),
        ("aclrtSetCurrentContext", 1, |_| true),
    ];
    for (symbol, nth, check) in cases {
        // A fresh stream each time, so the workspace must be allocated (aclrtMalloc case).
        let s_before = ascend_sim::counters();
        let (g, x, mut out) = tensors();
        let s = stream.device().stream().unwrap();
        ascend_sim::set_fault(symbol, nth).unwrap();
        // A new thread has no bound context, so aclrtSetCurrentContext is called there.
        let result = std::thread::scope(|sc| {
            sc.spawn(|| mish_backward(&g, &x, &mut out, &s))
                .join()
                .unwrap()
        });
        ascend_sim::set_fault(symbol, 0).unwrap();
        drop(s); // its workspace cache (if any) goes with it
        drop((g, x, out)); // and their cached descriptors (if any) with them
        // The device's cache keeps the blocks: everything is released once it is emptied.
        stream.device().empty_cache();
        let after = ascend_sim::counters();
        match result {
            Err(e) => {
                assert!(check(&e), "{symbol}: unexpected error {e}");
                if let Error::Aclnn { message, .. } | Error::Acl { message, .. } = &e {
                    assert!(!message.is_empty(), "{symbol}: error text carried");
                }
            }
            Ok(()) => panic!("{symbol}: expected an error"),
        }
        assert_eq!(
            (after.tensors, after.executors, after.allocations),
            (s_before.tensors, s_before.executors, s_before.allocations),
            "{symbol}: released everything"
        );
    }
    ascend_sim::clear_last_report();
    let (g, x, mut out) = tensors();
    mish_backward(&g, &x, &mut out, &stream).unwrap();
    stream.synchronize().unwrap();
    drop((g, x, out));
    stream.device().empty_cache();
    let after = ascend_sim::counters();
    assert_eq!(
        (after.tensors, after.executors),
        (before.tensors, before.executors)
    );
}

#[test]
fn plan_reuses_one_executor() {
    let _leaks = LeakCheck::start();
    let stream = device(A2).stream().unwrap();
    let g1: ArrayD<f32> = array(&[6, 4], 21, -2.0, 2.0);
    let g2: ArrayD<f32> = array(&[6, 4], 22, -2.0, 2.0);
    let x: ArrayD<f16> = array(&[4, 6], 23, -3.0, 3.0);
    let gd1 = DeviceTensor::from_array(&stream, &g1).unwrap();
    let gd2 = DeviceTensor::from_array(&stream, &g2).unwrap();
    let xd = DeviceTensor::from_array(&stream, &x).unwrap();
    let mut o1 = DeviceTensor::<f32>::zeros(&stream, [6, 4]).unwrap();
    let mut o2 = DeviceTensor::<f32>::zeros(&stream, [6, 4]).unwrap();
    let mut plan = MishBackwardPlan::new(&gd1, xd.view().t(), &o1, &stream).unwrap();
    assert!(plan.is_reusable());
    let phase1 = ascend_sim::call_count("aclnnMishBackwardGetWorkspaceSize");
    for _ in 0..5 {
        plan.launch(&gd1, xd.view().t(), &mut o1, &stream).unwrap();
        plan.launch(&gd2, xd.view().t(), &mut o2, &stream).unwrap();
    }
    assert_eq!(
        phase1,
        ascend_sim::call_count("aclnnMishBackwardGetWorkspaceSize")
    );
    let xt = x.t().into_owned().into_dyn();
    let want1: ArrayD<f32> = reference::mish_backward(g1.view(), xt.view()).unwrap();
    let want2: ArrayD<f32> = reference::mish_backward(g2.view(), xt.view()).unwrap();
    assert_precise(
        &o1.to_array(&stream).unwrap(),
        &want1,
        threshold(ascendcl::DType::F32),
        "plan 1",
    );
    assert_precise(
        &o2.to_array(&stream).unwrap(),
        &want2,
        threshold(ascendcl::DType::F32),
        "plan 2",
    );
    // a tensor with another layout is rejected
    let xc = DeviceTensor::from_array(&stream, &x.t().to_owned()).unwrap();
    assert!(matches!(
        plan.launch(&gd1, &xc, &mut o1, &stream),
        Err(Error::PlanMismatch {
            argument: "x (self)",
            ..
        })
    ));
    let executors = ascend_sim::counters().executors;
    drop(plan);
    assert_eq!(ascend_sim::counters().executors, executors - 1);
}

#[test]
fn a_new_tensor_on_a_reused_block_does_not_inherit_an_old_failure() {
    let _check = LeakCheck::start();
    let dev = device(A2);
    let (s, b) = (dev.stream().unwrap(), dev.stream().unwrap());
    let x = DeviceTensor::from_array(&s, &Array1::from_elem(1234, 1.0f32)).unwrap();
    let mut y = DeviceTensor::<f32>::zeros(&s, [1234]).unwrap();
    ascendcl::mish(&x, &mut y, &s).unwrap();
    // The synchronisation covering y's write fails: that failure is y's and s's, and it
    // was reported to s's caller.
    ascend_sim::set_fault("aclrtSynchronizeStream", 1).unwrap();
    let synced = s.synchronize();
    ascend_sim::set_fault("aclrtSynchronizeStream", 0).unwrap();
    assert!(synced.is_err());
    s.synchronize().unwrap(); // the work has finished now
    drop(y);
    // New tensors of the same size take y's block from the cache; another stream reads
    // them.
    let zeros = DeviceTensor::<f32>::zeros(&s, [1234]).unwrap();
    let got: Array1<f32> = zeros.to_array(&b).unwrap();
    assert!(got.iter().all(|&v| v == 0.0));
    drop(zeros);
    let upload = DeviceTensor::from_array(&s, &Array1::from_elem(1234, 3.0f32)).unwrap();
    let got: Array1<f32> = upload.to_array(&b).unwrap();
    assert!(got.iter().all(|&v| v == 3.0));
}
