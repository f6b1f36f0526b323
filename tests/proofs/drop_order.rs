//! Drop-order torture: tensors dropped right after launching work that uses them, the
//! stream dropped before the tensors, the device handle first, and every order of dropping
//! {device, stream, event, grad, out} while work is queued — never a use-after-free
//! (simulator report empty, nothing leaked) and never a hang (each scenario runs under a
//! watchdog that fails the test instead of hanging CI).

use crate::common;

use ascendcl::{DeviceTensor, mish_backward, reference};
use common::orders::permutations;
use common::*;
use ndarray::ArrayD;
use std::time::Duration;

fn bounded(what: String, f: impl FnOnce() + Send + 'static) {
    let (tx, rx) = std::sync::mpsc::channel();
    let h = std::thread::spawn(move || {
        f();
        let _ = tx.send(());
    });
    match rx.recv_timeout(Duration::from_secs(20)) {
        Ok(()) | Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
            if let Err(p) = h.join() {
                std::panic::resume_unwind(p);
            }
        }
        Err(_) => panic!("{what}: hang (no progress in 20 s)"),
    }
    assert_eq!(ascend_sim::last_report(), None, "{what}: sanitizer report");
}

#[test]
fn every_drop_order_with_queued_work_is_safe() {
    let _leaks = LeakCheck::start();
    let g: ArrayD<f32> = array(&[512], 1, -2.0, 2.0);
    let x: ArrayD<f32> = array(&[512], 2, -4.0, 4.0);
    let want: ArrayD<f32> = reference::mish_backward(g.view(), x.view()).unwrap();
    let perms = permutations(5);
    for (k, order) in perms.iter().enumerate() {
        let (g, x, want, order) = (g.clone(), x.clone(), want.clone(), order.clone());
        bounded(format!("drop order {order:?}"), move || {
            let device = device(A2);
            let stream = device.stream().unwrap();
            let gd = DeviceTensor::from_array(&stream, &g).unwrap();
            let xd = DeviceTensor::from_array(&stream, &x).unwrap();
            let mut out = DeviceTensor::<f32>::zeros(&stream, [512]).unwrap();
            let event = device.event().unwrap();
            // Keep the work queued while things are dropped (released from another thread).
            let hold = ascend_sim::testing::hold_stream(stream.as_raw()).expect("hold");
            mish_backward(&gd, &xd, &mut out, &stream).unwrap();
            stream.record(&event).unwrap();
            let release = std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(if k % 8 == 0 { 5 } else { 0 }));
                hold.release();
            });
            // Check the result through a second stream first in half the orders.
            if k % 2 == 0 {
                let check = device.stream().unwrap();
                check.wait(&event).unwrap();
                assert_precise(
                    &out.to_array(&check).unwrap(),
                    &want,
                    threshold(ascendcl::DType::F32),
                    "before drops",
                );
            }
            let mut slots: Vec<Option<Box<dyn std::any::Any + Send>>> = vec![
                Some(Box::new(device)),
                Some(Box::new(stream)),
                Some(Box::new(event)),
                Some(Box::new(gd)),
                Some(Box::new(out)),
            ];
            for i in order {
                drop(slots[i].take());
            }
            drop(xd);
            release.join().unwrap();
        });
    }
    println!(
        "drop order: {} orders of {{device, stream, event, grad, out}} dropped with work queued: no report, no hang, no leak",
        perms.len()
    );
}

#[test]
fn tensors_dropped_right_after_launch_and_stream_before_tensors() {
    let _leaks = LeakCheck::start();
    bounded("tensors right after launch".into(), || {
        let stream = device(A2).stream().unwrap();
        let mut out = DeviceTensor::<f32>::zeros(&stream, [1000]).unwrap();
        for i in 0..200u64 {
            let g: ArrayD<f32> = array(&[1000], i, -2.0, 2.0);
            let gd = DeviceTensor::from_array(&stream, &g).unwrap();
            let xd = DeviceTensor::from_array(&stream, &g).unwrap();
            mish_backward(&gd, &xd, &mut out, &stream).unwrap();
            drop(gd); // work still queued
            drop(xd);
        }
        stream.synchronize().unwrap();
    });
    bounded("stream before tensors, device first".into(), || {
        let device = device(A2);
        let stream = device.stream().unwrap();
        let g: ArrayD<f32> = array(&[1000], 9, -2.0, 2.0);
        let gd = DeviceTensor::from_array(&stream, &g).unwrap();
        let mut out = DeviceTensor::<f32>::zeros(&stream, [1000]).unwrap();
        let hold = ascend_sim::testing::hold_stream(stream.as_raw()).expect("hold");
        mish_backward(&gd, &gd, &mut out, &stream).unwrap();
        drop(device);
        let release = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            hold.release();
        });
        drop(stream); // waits for the held work, then destroys the stream
        release.join().unwrap();
        let check = common::device(A2).stream().unwrap();
        let want: ArrayD<f32> = reference::mish_backward(g.view(), g.view()).unwrap();
        assert_precise(
            &out.to_array(&check).unwrap(),
            &want,
            threshold(ascendcl::DType::F32),
            "after stream drop",
        );
        drop(gd);
        drop(out);
    });
}
