//! Safe code cannot race between streams: a tensor written on one stream and read or
//! overwritten on another is ordered by the crate with events, and work
//! that stays on one stream creates none.

use crate::common;

use ascendcl::{DeviceTensor, Stream, mish_backward};
use common::*;
use ndarray::Array1;
use std::time::Duration;

const N: usize = 4096;

/// Holds `stream` for a while on a helper thread, so its queued work runs late.
fn hold_briefly(stream: &Stream) -> std::thread::JoinHandle<()> {
    let hold = ascend_sim::testing::hold_stream(stream.as_raw()).expect("a created stream");
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(150));
        hold.release();
    })
}

fn filled(stream: &Stream, v: f32) -> DeviceTensor<f32> {
    DeviceTensor::from_array(stream, &Array1::from_elem(N, v)).unwrap()
}

#[test]
fn read_after_write_on_another_stream_sees_the_write() {
    let _check = LeakCheck::start();
    let dev = device(A2);
    let (a, b) = (dev.stream().unwrap(), dev.stream().unwrap());
    let (g, x) = (filled(&a, 1.0), filled(&a, 0.0));
    let mut out = DeviceTensor::<f32>::zeros(&a, [N]).unwrap();
    a.synchronize().unwrap();

    let release = hold_briefly(&a);
    mish_backward(&g, &x, &mut out, &a).unwrap(); // written on A, late
    let seen = out.to_array::<ndarray::IxDyn>(&b).unwrap(); // read on B
    release.join().unwrap();
    let want = 0.6f32; // mish'(0) * 1
    assert!(
        seen.iter().all(|v| (v - want).abs() < 1e-6),
        "B read stale data: {:?}",
        &seen.as_slice().unwrap()[..4]
    );
}

#[test]
fn write_after_read_on_another_stream_waits_for_the_read() {
    let _check = LeakCheck::start();
    let dev = device(A2);
    let (a, b) = (dev.stream().unwrap(), dev.stream().unwrap());
    let g = filled(&a, 1.0);
    let mut x = filled(&a, 0.0);
    let mut out = DeviceTensor::<f32>::zeros(&a, [N]).unwrap();
    let big = filled(&b, 50.0);
    a.synchronize().unwrap();
    b.synchronize().unwrap();

    let release = hold_briefly(&a);
    mish_backward(&g, &x, &mut out, &a).unwrap(); // reads x on A, late
    mish_backward(&g, &big, &mut x, &b).unwrap(); // overwrites x on B
    release.join().unwrap();
    let got = out.to_array::<ndarray::IxDyn>(&a).unwrap();
    assert!(
        got.iter().all(|v| (v - 0.6).abs() < 1e-6),
        "A read x after B overwrote it: {:?}",
        &got.as_slice().unwrap()[..4]
    );
    let x_now = x.to_array::<ndarray::IxDyn>(&a).unwrap(); // and A sees B's write
    assert!(x_now.iter().all(|v| (v - 1.0).abs() < 1e-6));
}

#[test]
fn one_stream_creates_no_events_and_a_second_read_no_new_wait() {
    let _check = LeakCheck::start();
    let dev = device(A2);
    let (a, b) = (dev.stream().unwrap(), dev.stream().unwrap());
    let (g, x) = (filled(&a, 1.0), filled(&a, 0.5));
    let mut out = DeviceTensor::<f32>::zeros(&a, [N]).unwrap();
    let calls = || {
        (
            ascend_sim::call_count("aclrtCreateEvent"),
            ascend_sim::call_count("aclrtRecordEvent"),
            ascend_sim::call_count("aclrtStreamWaitEvent"),
        )
    };
    let before = calls();
    for _ in 0..5 {
        mish_backward(&g, &x, &mut out, &a).unwrap();
    }
    let _ = out.to_array::<ndarray::IxDyn>(&a).unwrap();
    assert_eq!(calls(), before, "same-stream work must not create events");

    mish_backward(&g, &x, &mut out, &a).unwrap();
    let _ = out.to_array::<ndarray::IxDyn>(&b).unwrap(); // one fence: record on A, wait on B
    let after_first = calls();
    assert_eq!(after_first.1 - before.1, 1);
    assert_eq!(after_first.2 - before.2, 1);
    let _ = out.to_array::<ndarray::IxDyn>(&b).unwrap(); // B already waited for that write
    assert_eq!(calls(), after_first);
}
