//! The racecheck through the C ABI: every pair of conflicting accesses (write-write,
//! read-write, write-read) of two streams, or of a stream and the host, without a
//! happens-before order fails the work that runs second, with both accesses, their
//! streams, the ranges and the allocation in the message; none that is ordered by stream
//! order, an event record and wait, a stream or event synchronisation, a stream's
//! destruction or a synchronous host copy is. (Pinned memory, workspaces, collectives and
//! failures of a settle or a rebind: `racecheck_more.rs`.)
//!
//! Which work runs second is forced with `hold_stream`, so every test is deterministic.

use crate::common;
use crate::racecheck_common;

use ascend_sim::api;
use ascend_sim::testing::hold_stream;
use ascend_sys::*;
use common::*;
use racecheck_common::*;
use std::ptr::null_mut;

#[test]
fn kernel_write_then_unordered_kernel_write_is_reported() {
    let _gate = crate::common::serial();
    setup();
    let (x, y) = (Buf::new(1.0), Buf::new(0.0));
    let s = unordered(
        |a| mish(&x, &y, a),
        |b| mish(&x, &y, b),
        &[
            "aclnnMish on",
            "writes bytes",
            &hex(y.ptr),
            &format!("{:#x})", y.end()),
            "(out) of the device allocation",
            "which aclnnMish on",
            "wrote at",
            "no happens-before order",
        ],
    );
    done(s);
}

#[test]
fn kernel_read_then_unordered_copy_write_is_reported() {
    let _gate = crate::common::serial();
    setup();
    let (x, y, z) = (Buf::new(1.0), Buf::new(0.0), Buf::new(3.0));
    let s = unordered(
        |a| mish(&x, &y, a),
        |b| d2d_async(&x, &z, b),
        &[
            "aclrtMemcpyAsync on",
            "writes bytes",
            "(dst)",
            "which aclnnMish on",
            "read at",
            "(self)",
        ],
    );
    done(s);
}

#[test]
fn copy_write_then_unordered_kernel_read_is_reported() {
    let _gate = crate::common::serial();
    setup();
    let (x, y, z) = (Buf::new(1.0), Buf::new(0.0), Buf::new(3.0));
    let s = unordered(
        |a| d2d_async(&x, &z, a),
        |b| mish(&x, &y, b),
        &[
            "aclnnMish on",
            "reads bytes",
            "(self)",
            "which aclrtMemcpyAsync on",
            "wrote at",
            "(dst)",
        ],
    );
    done(s);
}

#[test]
fn reads_on_two_streams_and_disjoint_writes_are_not_races() {
    let _gate = crate::common::serial();
    setup();
    let (x, y, z) = (Buf::new(1.0), Buf::new(0.0), Buf::new(0.0));
    let (a, b) = (create_stream(), create_stream());
    let hold = hold_stream(b).unwrap();
    mish(&x, &z, b);
    mish(&x, &y, a);
    ok(a);
    hold.release();
    ok(b);
    // The two halves of one allocation, written from two streams.
    let (lo, hi) = (
        y.half(),
        tensor_view(
            &[N as i64 / 2],
            &[1],
            N as i64 / 2,
            &[N as i64],
            ACL_FLOAT,
            y.ptr,
        ),
    );
    let (xl, xh) = (x.half(), x.half());
    let hold = hold_stream(b).unwrap();
    mish_t(xh, hi, b);
    mish_t(xl, lo, a);
    ok(a);
    hold.release();
    ok(b);
    // ... but the halves overlap the whole.
    let hold = hold_stream(b).unwrap();
    mish_t(x.t, y.t, b);
    mish_t(xl, lo, a);
    ok(a);
    hold.release();
    race_on(
        b,
        &["(out)", &format!("{:#x})", y.ptr as usize + BYTES / 2)],
    );
    for t in [lo, hi, xl, xh] {
        destroy_tensor(t);
    }
    done((a, b));
}

#[test]
fn stream_order_orders() {
    let _gate = crate::common::serial();
    setup();
    let (x, y) = (Buf::new(1.0), Buf::new(0.0));
    let a = create_stream();
    mish(&x, &y, a);
    d2d_async(&x, &y, a);
    inplace_mish(&x, a);
    mish(&x, &y, a);
    ok(a);
    destroy_stream(a);
}

#[test]
fn an_event_recorded_and_waited_for_orders() {
    let _gate = crate::common::serial();
    setup();
    let (x, y) = (Buf::new(1.0), Buf::new(0.0));
    let (a, b) = (create_stream(), create_stream());
    let mut ev = null_mut();
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { api::aclrtCreateEvent(&mut ev) }, ACL_SUCCESS);
    let hold = hold_stream(a).unwrap();
    mish(&x, &y, a);
    // SAFETY: live event and streams.
    unsafe {
        assert_eq!(api::aclrtRecordEvent(ev, a), ACL_SUCCESS);
        assert_eq!(api::aclrtStreamWaitEvent(b, ev), ACL_SUCCESS);
    }
    inplace_mish(&y, b);
    hold.release();
    ok(b);
    ok(a);
    // A wait enqueued before the record does not wait, and orders nothing.
    let hold = hold_stream(a).unwrap();
    mish(&x, &y, a);
    let mut ev2 = null_mut();
    // SAFETY: valid out-pointer, then live handles.
    unsafe {
        assert_eq!(api::aclrtCreateEvent(&mut ev2), ACL_SUCCESS);
        assert_eq!(api::aclrtStreamWaitEvent(b, ev2), ACL_SUCCESS);
    }
    mish(&x, &y, b);
    ok(b);
    // SAFETY: live event and stream.
    assert_eq!(unsafe { api::aclrtRecordEvent(ev2, a) }, ACL_SUCCESS);
    hold.release();
    race_on(a, &["(out)", &stream_name(b)]);
    // SAFETY: live events.
    unsafe {
        assert_eq!(api::aclrtDestroyEvent(ev), ACL_SUCCESS);
        assert_eq!(api::aclrtDestroyEvent(ev2), ACL_SUCCESS);
    }
    done((a, b));
}

#[test]
fn host_synchronisation_orders() {
    let _gate = crate::common::serial();
    setup();
    let (x, y) = (Buf::new(1.0), Buf::new(0.0));
    let (a, b) = (create_stream(), create_stream());
    // aclrtSynchronizeStream.
    mish(&x, &y, a);
    ok(a);
    inplace_mish(&y, b);
    ok(b);
    // aclrtSynchronizeEvent.
    let mut ev = null_mut();
    // SAFETY: valid out-pointer, then live handles.
    unsafe {
        assert_eq!(api::aclrtCreateEvent(&mut ev), ACL_SUCCESS);
        mish(&x, &y, a);
        assert_eq!(api::aclrtRecordEvent(ev, a), ACL_SUCCESS);
        assert_eq!(api::aclrtSynchronizeEvent(ev), ACL_SUCCESS);
    }
    inplace_mish(&y, b);
    ok(b);
    ok(a);
    // aclrtDestroyStream drains: a new stream's work follows it.
    let c = create_stream();
    mish(&x, &y, c);
    destroy_stream(c);
    inplace_mish(&y, b);
    ok(b);
    // SAFETY: live event.
    assert_eq!(unsafe { api::aclrtDestroyEvent(ev) }, ACL_SUCCESS);
    done((a, b));
}

#[test]
fn synchronous_copies_order_and_are_checked() {
    let _gate = crate::common::serial();
    setup();
    let (x, y) = (Buf::new(1.0), Buf::new(0.0));
    let a = create_stream();
    // A synchronous upload is done before the kernel enqueued after it.
    h2d(x.ptr, &[2.0f32; N]);
    mish(&x, &y, a);
    ok(a);
    // ... and a download after a synchronisation follows the kernel.
    let got: Vec<f32> = d2h(y.ptr, N);
    assert!((got[0] - 1.943_959).abs() < 1e-4, "{got:?}");
    // A synchronous copy does not wait for streams: one reading y while a queued kernel
    // writes it is a race.
    let hold = hold_stream(a).unwrap();
    mish(&x, &y, a);
    let mut out = [0f32; N];
    let rc = memcpy(
        out.as_mut_ptr().cast(),
        BYTES,
        y.ptr,
        BYTES,
        ACL_MEMCPY_DEVICE_TO_HOST,
    );
    assert_eq!(
        rc,
        ACL_SUCCESS,
        "the copy runs before the kernel: {}",
        err_msg()
    );
    hold.release();
    race_on(
        a,
        &[
            "aclnnMish on",
            &stream_name(a),
            "writes bytes",
            "which aclrtMemcpy on the host (a synchronous call) read",
            "(src)",
        ],
    );
    // A synchronous upload while a queued kernel still reads the buffer: the upload runs
    // first, and the kernel finds it.
    let hold = hold_stream(a).unwrap();
    mish(&x, &y, a);
    h2d(x.ptr, &[3.0f32; N]);
    hold.release();
    race_on(
        a,
        &[
            "aclnnMish on",
            "reads bytes",
            "(self)",
            "which aclrtMemcpy on the host (a synchronous call) wrote",
            "(dst)",
        ],
    );
    // The other way round: the kernel has run (unknown to the host), and a memset
    // overwrites what it read.
    mish(&x, &y, a);
    ascend_sim::testing::wait_unordered(a);
    // SAFETY: a live device allocation of BYTES bytes.
    let rc = unsafe { api::aclrtMemset(x.ptr, BYTES, 0, BYTES) };
    assert_fails_with(
        rc,
        ACL_ERROR_RT_INTERNAL_ERROR,
        &[
            "racecheck: aclrtMemset on the host (a synchronous call) writes bytes",
            "(devPtr)",
            "which aclnnMish on",
            &stream_name(a),
            "read at",
        ],
    );
    ok(a);
    // Ordered by the synchronisation: accepted.
    // SAFETY: as above.
    assert_eq!(
        unsafe { api::aclrtMemset(x.ptr, BYTES, 0, BYTES) },
        ACL_SUCCESS
    );
    destroy_stream(a);
}
