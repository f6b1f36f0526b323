//! `HostTensor`: pinned host memory copied to and from device tensors without staging and
//! without waiting, kept alive and unread until the stream has passed the copy; typed
//! errors; and the pageable paths' direct copies keeping their ordering.

use crate::common;

use ascendcl::{DeviceTensor, Error, HostTensor, Stream, mish, mish_inplace, reference};
use common::*;
use half::{bf16, f16};
use ndarray::{Array1, ArrayD, IxDyn};
use proptest::prelude::*;
use std::time::Duration;

fn assert_silent() {
    assert_eq!(ascend_sim::last_report(), None, "sanitizer report");
}

/// Holds `stream`'s queue for `ms` milliseconds from another thread, so that work queued
/// meanwhile is still pending when the test looks.
fn hold_for(stream: &Stream, ms: u64) -> std::thread::JoinHandle<()> {
    let hold = ascend_sim::testing::hold_stream(stream.as_raw()).unwrap();
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(ms));
        hold.release();
    })
}

fn round_trip<T: ascendcl::FloatElement>(shape: &[usize], seed: u64) {
    let dev = device(A2);
    let stream = dev.stream().unwrap();
    let a = array::<T>(shape, seed, -4.0, 4.0);
    let host = HostTensor::from_array(&dev, &a).unwrap();
    assert_eq!(host.view().unwrap(), a.view());
    let mut t = DeviceTensor::<T>::zeros(&stream, shape).unwrap();
    t.copy_from_host(&stream, &host).unwrap();
    mish_inplace(&mut t, &stream).unwrap();
    let mut back = HostTensor::<T>::zeros(&dev, shape).unwrap();
    t.copy_to_host(&stream, &mut back).unwrap();
    let expected = reference::mish(a.view()).unwrap();
    assert_precise(
        &back.view().unwrap().to_owned(),
        &expected,
        threshold(T::DTYPE),
        "mish through pinned copies",
    );
}

#[test]
fn round_trip_every_dtype_through_an_operator() {
    let _leaks = LeakCheck::start();
    ascend_sim::clear_last_report();
    round_trip::<f32>(&[3, 5, 7], 1);
    round_trip::<f16>(&[64], 2);
    round_trip::<bf16>(&[2, 2, 2, 9], 3);
    assert_silent();
}

#[test]
fn view_waits_for_the_queued_copy_into_the_host_tensor() {
    let _leaks = LeakCheck::start();
    ascend_sim::clear_last_report();
    let dev = device(A2);
    let stream = dev.stream().unwrap();
    let a = array::<f32>(&[4096], 7, -1.0, 1.0);
    let t = DeviceTensor::from_array(&stream, &a).unwrap();
    let mut host = HostTensor::<f32>::zeros(&dev, [4096]).unwrap();
    let releaser = hold_for(&stream, 50);
    // Queued behind the hold: returns at once, the copy has not run.
    t.copy_to_host(&stream, &mut host).unwrap();
    // Without the wait this would read the zeros still in `host`.
    assert_eq!(host.view().unwrap(), a.view());
    releaser.join().unwrap();
    assert_silent();
}

#[test]
fn writing_or_dropping_the_host_tensor_waits_for_the_copy_that_reads_it() {
    let _leaks = LeakCheck::start();
    ascend_sim::clear_last_report();
    let dev = device(A2);
    let stream = dev.stream().unwrap();
    let a = array::<f32>(&[1000], 8, -1.0, 1.0);
    let mut host = HostTensor::from_array(&dev, &a).unwrap();
    let mut t = DeviceTensor::<f32>::zeros(&stream, [1000]).unwrap();
    let releaser = hold_for(&stream, 50);
    t.copy_from_host(&stream, &host).unwrap();
    // Overwriting the source must wait until the queued copy has read it.
    host.as_slice_mut().unwrap().fill(9.0);
    releaser.join().unwrap();
    assert_eq!(t.to_array(&stream).unwrap(), a);

    // Dropping it under a queued copy waits too: the simulator reports an aclrtFreeHost
    // under a queued copy (the fault this prevents) otherwise.
    let releaser = hold_for(&stream, 50);
    t.copy_from_host(&stream, &host).unwrap();
    drop(host);
    releaser.join().unwrap();
    stream.synchronize().unwrap();
    assert_eq!(
        t.to_array(&stream).unwrap(),
        ArrayD::from_elem(IxDyn(&[1000]), 9.0)
    );
    assert_silent();
}

#[test]
fn a_host_tensor_orders_copies_on_two_streams() {
    let _leaks = LeakCheck::start();
    ascend_sim::clear_last_report();
    let dev = device(A2);
    let (sa, sb) = (dev.stream().unwrap(), dev.stream().unwrap());
    let a = array::<f32>(&[2048], 11, -1.0, 1.0);
    let src = DeviceTensor::from_array(&sa, &a).unwrap();
    let mut host = HostTensor::<f32>::zeros(&dev, [2048]).unwrap();
    let mut dst = DeviceTensor::<f32>::zeros(&sb, [2048]).unwrap();
    let releaser = hold_for(&sa, 50);
    // Written on A (held), then read on B: B must wait for A's copy.
    src.copy_to_host(&sa, &mut host).unwrap();
    dst.copy_from_host(&sb, &host).unwrap();
    sb.synchronize().unwrap();
    releaser.join().unwrap();
    assert_eq!(dst.to_array(&sb).unwrap(), a);
    assert_silent();
}

#[test]
fn windows_copy_to_and_from_host_tensors() {
    let _leaks = LeakCheck::start();
    ascend_sim::clear_last_report();
    let dev = device(A2);
    let stream = dev.stream().unwrap();
    let a = array::<f32>(&[4, 3], 5, -1.0, 1.0);
    let mut t = DeviceTensor::from_array(&stream, &a).unwrap();
    let mut rows = HostTensor::<f32>::zeros(&dev, [2, 3]).unwrap();
    t.view()
        .slice(0, 1, 3, 1)
        .unwrap()
        .copy_to_host(&stream, &mut rows)
        .unwrap();
    assert_eq!(
        rows.view().unwrap(),
        a.slice(ndarray::s![1..3, ..]).into_dyn()
    );
    t.view_mut()
        .slice(0, 0, 2, 1)
        .unwrap()
        .copy_from_host(&stream, &rows)
        .unwrap();
    let mut expected = a.clone();
    let moved = a.slice(ndarray::s![1..3, ..]).to_owned();
    expected.slice_mut(ndarray::s![0..2, ..]).assign(&moved);
    assert_eq!(t.to_array(&stream).unwrap(), expected);
    // A strided window is not one contiguous range: refused with a pointer to `copy`.
    let err = t
        .view()
        .t()
        .slice(0, 0, 2, 1)
        .unwrap()
        .copy_to_host(&stream, &mut HostTensor::zeros(&dev, [2, 4]).unwrap())
        .unwrap_err();
    assert!(
        matches!(&err, Error::InvalidArgument(m) if m.contains("ascendcl::copy")),
        "{err}"
    );
    assert_silent();
}

#[test]
fn wrong_shapes_and_other_devices_are_typed_errors() {
    let _leaks = LeakCheck::start();
    let (d0, d1) = (device(A2), device(A910));
    let (s0, s1) = (d0.stream().unwrap(), d1.stream().unwrap());
    let mut t = DeviceTensor::<f16>::zeros(&s0, [2, 3]).unwrap();
    let mut wrong = HostTensor::<f16>::zeros(&d0, [3, 2]).unwrap();
    assert_eq!(
        t.copy_from_host(&s0, &wrong).unwrap_err(),
        Error::ShapeMismatch {
            argument: "host tensor",
            expected: vec![2, 3],
            actual: vec![3, 2]
        }
    );
    assert!(matches!(
        t.copy_to_host(&s0, &mut wrong),
        Err(Error::ShapeMismatch { .. })
    ));
    // A host tensor of device 1's context with a device-0 stream and tensor.
    let mut other = HostTensor::<f16>::zeros(&d1, [2, 3]).unwrap();
    assert_eq!(
        t.copy_from_host(&s0, &other).unwrap_err(),
        Error::DeviceMismatch {
            argument: "host tensor",
            expected: A2,
            found: A910
        }
    );
    assert_eq!(
        t.copy_to_host(&s0, &mut other).unwrap_err(),
        Error::DeviceMismatch {
            argument: "host tensor",
            expected: A2,
            found: A910
        }
    );
    // A device-0 tensor with a device-1 stream.
    assert_eq!(
        t.copy_from_host(&s1, &other).unwrap_err(),
        Error::DeviceMismatch {
            argument: "tensor",
            expected: A910,
            found: A2
        }
    );
    let mut host = HostTensor::<f16>::zeros(&d0, [3]).unwrap();
    assert!(matches!(
        host.copy_from_array(&ndarray::arr1(&[f16::ONE; 4])),
        Err(Error::ShapeMismatch { .. })
    ));
}

#[test]
fn empty_and_zero_d_host_tensors() {
    let _leaks = LeakCheck::start();
    ascend_sim::clear_last_report();
    let dev = device(A2);
    let stream = dev.stream().unwrap();
    let mut e = DeviceTensor::<f32>::zeros(&stream, [0, 3]).unwrap();
    let mut he = HostTensor::<f32>::zeros(&dev, [0, 3]).unwrap();
    assert!(he.is_empty());
    e.copy_from_host(&stream, &he).unwrap();
    e.copy_to_host(&stream, &mut he).unwrap();
    assert_eq!(he.view::<ndarray::IxDyn>().unwrap().shape(), &[0, 3]);
    let mut z = DeviceTensor::<f32>::zeros(&stream, []).unwrap();
    let mut hz = HostTensor::from_array(&dev, &ndarray::arr0(2.5f32)).unwrap();
    z.copy_from_host(&stream, &hz).unwrap();
    mish_inplace(&mut z, &stream).unwrap();
    z.copy_to_host(&stream, &mut hz).unwrap();
    let expected = reference::mish(ndarray::arr0(2.5f32).into_dyn().view()).unwrap();
    assert_eq!(hz.view().unwrap(), expected);
    assert_silent();
}

#[test]
fn pageable_uploads_into_a_tensor_that_queued_work_reads_stay_behind_it() {
    let _leaks = LeakCheck::start();
    ascend_sim::clear_last_report();
    let dev = device(A2);
    let (sa, sb) = (dev.stream().unwrap(), dev.stream().unwrap());
    let first = array::<f32>(&[512], 21, -3.0, 3.0);
    let second = array::<f32>(&[512], 22, -3.0, 3.0);
    let mut x = DeviceTensor::from_array(&sa, &first).unwrap();
    let mut y = DeviceTensor::<f32>::zeros(&sa, [512]).unwrap();
    // Same stream: `mish` is queued behind a hold and reads `x`; the upload must not be
    // copied at once (it would overwrite `x` before `mish` read it).
    let releaser = hold_for(&sa, 50);
    mish(&x, &mut y, &sa).unwrap();
    x.copy_from_array(&sa, &second).unwrap();
    releaser.join().unwrap();
    let expected = reference::mish(first.view()).unwrap();
    assert_precise(&y.to_array(&sa).unwrap(), &expected, 1e-4, "same stream");
    assert_eq!(x.to_array(&sa).unwrap(), second);
    // Another stream: the upload on B waits for A's queued read.
    let releaser = hold_for(&sa, 50);
    mish(&x, &mut y, &sa).unwrap();
    x.copy_from_array(&sb, &first).unwrap();
    sb.synchronize().unwrap();
    releaser.join().unwrap();
    let expected = reference::mish(second.view()).unwrap();
    assert_precise(&y.to_array(&sa).unwrap(), &expected, 1e-4, "two streams");
    assert_eq!(x.to_array(&sb).unwrap(), first);
    assert_silent();
}

#[test]
fn steady_state_pinned_copies_allocate_no_device_or_pinned_memory() {
    let _leaks = LeakCheck::start();
    let dev = device(A2);
    let stream = dev.stream().unwrap();
    let mut host = HostTensor::from_array(&dev, &Array1::from_elem(10_000, 0.5f32)).unwrap();
    let mut t = DeviceTensor::<f32>::zeros(&stream, [10_000]).unwrap();
    t.copy_from_host(&stream, &host).unwrap();
    t.copy_to_host(&stream, &mut host).unwrap();
    stream.synchronize().unwrap();
    let before = ascend_sim::counters();
    for _ in 0..50 {
        t.copy_from_host(&stream, &host).unwrap();
        mish_inplace(&mut t, &stream).unwrap();
        t.copy_to_host(&stream, &mut host).unwrap();
        host.as_slice().unwrap();
    }
    let after = ascend_sim::counters();
    assert_eq!(after.allocations, before.allocations);
    assert_eq!(after.allocated_bytes, before.allocated_bytes);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Random shapes (0-D to 4-D, empty dims included) and dtypes, through a pinned
    /// upload, a device-to-device copy with a cast, and a pinned download into a window
    /// of rows: exact, and the sanitizer silent.
    #[test]
    fn pinned_copies_property(
        dims in proptest::collection::vec(0usize..6, 0..5),
        seed in any::<u64>(),
        wide in any::<bool>(),
    ) {
        let _leaks = LeakCheck::start();
        ascend_sim::clear_last_report();
        let dev = device(A2);
        let stream = dev.stream().unwrap();
        let a = array::<bf16>(&dims, seed, -8.0, 8.0);
        let host = HostTensor::from_array(&dev, &a).unwrap();
        let mut t = DeviceTensor::<bf16>::zeros(&stream, &dims).unwrap();
        t.copy_from_host(&stream, &host).unwrap();
        let back: ArrayD<bf16> = if wide {
            // bf16 → f32 is exact, so the values come back unchanged.
            let mut w = DeviceTensor::<f32>::zeros(&stream, &dims).unwrap();
            ascendcl::copy(&t, &mut w, &stream).unwrap();
            let mut h = HostTensor::<f32>::zeros(&dev, &dims).unwrap();
            w.copy_to_host(&stream, &mut h).unwrap();
            h.view().unwrap().mapv(bf16::from_f32)
        } else {
            let mut h = HostTensor::<bf16>::zeros(&dev, &dims).unwrap();
            t.copy_to_host(&stream, &mut h).unwrap();
            h.view().unwrap().to_owned()
        };
        prop_assert_eq!(&back, &a);
        if let Some(&rows) = dims.first().filter(|&&r| r >= 2) {
            let mut tail_shape = dims.clone();
            tail_shape[0] = rows - 1;
            let mut h = HostTensor::<bf16>::zeros(&dev, &tail_shape).unwrap();
            t.view().slice(0, 1, rows, 1).unwrap().copy_to_host(&stream, &mut h).unwrap();
            prop_assert_eq!(h.view().unwrap(), a.slice_axis(ndarray::Axis(0), (1..).into()));
        }
        prop_assert_eq!(ascend_sim::last_report(), None);
    }
}
