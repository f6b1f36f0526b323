//! The racecheck through the C ABI: every pair of conflicting accesses (write-write,
//! read-write, write-read) from two actors without a happens-before order fails the work
//! that runs second, with both accesses, their streams, the ranges and the allocation in
//! the message; none that is ordered by stream order, an event record and wait, a stream
//! or event synchronisation, a stream's destruction or a synchronous host copy is.
//!
//! Which work runs second is forced with [`hold_stream`], so every test is deterministic.

mod common;

use ascend_sim::api;
use ascend_sim::testing::hold_stream;
use ascend_sys::hccl::*;
use ascend_sys::*;
use common::*;
use std::ffi::c_void;
use std::ptr::null_mut;

const N: usize = 8;
const BYTES: usize = N * 4;

/// A device buffer of `N` f32 with an `aclTensor` over it.
struct Buf {
    ptr: *mut c_void,
    t: *mut aclTensor,
}

impl Buf {
    fn new(v: f32) -> Buf {
        let ptr = malloc(BYTES);
        h2d(ptr, &[v; N]);
        Buf {
            ptr,
            t: tensor(&[N as i64], ACL_FLOAT, ptr),
        }
    }

    /// The first half of the buffer as its own tensor.
    fn half(&self) -> *mut aclTensor {
        tensor(&[N as i64 / 2], ACL_FLOAT, self.ptr)
    }

    fn end(&self) -> usize {
        self.ptr as usize + BYTES
    }
}

impl Drop for Buf {
    fn drop(&mut self) {
        destroy_tensor(self.t);
        free(self.ptr);
    }
}

fn mish_t(x: *mut aclTensor, y: *mut aclTensor, s: aclrtStream) {
    let (mut ws, mut ex) = (0u64, null_mut());
    // SAFETY: live tensors, valid out-pointers.
    let rc = unsafe { api::aclnnMishGetWorkspaceSize(x, y, &mut ws, &mut ex) };
    assert_eq!(rc, ACLNN_SUCCESS, "{}", err_msg());
    assert_eq!(ws, 0);
    // SAFETY: executor of phase 1, no workspace needed, a live stream.
    let rc = unsafe { api::aclnnMish(null_mut(), 0, ex, s) };
    assert_eq!(rc, ACLNN_SUCCESS, "{}", err_msg());
}

/// `y = mish(x)` on `s`: reads `x`, writes `y`.
fn mish(x: &Buf, y: &Buf, s: aclrtStream) {
    mish_t(x.t, y.t, s);
}

/// In-place mish of `x` on `s`: reads and writes it.
fn inplace_mish(x: &Buf, s: aclrtStream) {
    let (mut ws, mut ex) = (0u64, null_mut());
    // SAFETY: live tensor, valid out-pointers.
    let rc = unsafe { api::aclnnInplaceMishGetWorkspaceSize(x.t, &mut ws, &mut ex) };
    assert_eq!(rc, ACLNN_SUCCESS, "{}", err_msg());
    // SAFETY: executor of phase 1, no workspace needed, a live stream.
    let rc = unsafe { api::aclnnInplaceMish(null_mut(), 0, ex, s) };
    assert_eq!(rc, ACLNN_SUCCESS, "{}", err_msg());
}

fn d2d_async(dst: &Buf, src: &Buf, s: aclrtStream) {
    let rc = memcpy_async(
        dst.ptr,
        BYTES,
        src.ptr,
        BYTES,
        ACL_MEMCPY_DEVICE_TO_DEVICE,
        s,
    );
    assert_eq!(rc, ACL_SUCCESS, "{}", err_msg());
}

fn ok(s: aclrtStream) {
    assert_eq!(sync(s), ACL_SUCCESS, "{}", err_msg());
}

/// Asserts that synchronising `s` reports a race containing every one of `fragments`.
#[track_caller]
fn race_on(s: aclrtStream, fragments: &[&str]) {
    assert_fails_with(sync(s), ACL_ERROR_RT_INTERNAL_ERROR, &["racecheck: "]);
    assert_err_msg_contains(fragments);
    assert!(
        ascend_sim::last_report().is_some_and(|r| r.contains("racecheck: ")),
        "the race is also a sanitizer finding"
    );
}

fn hex(p: *mut c_void) -> String {
    format!("{:#x}", p as usize)
}

fn stream_name(s: aclrtStream) -> String {
    format!("stream {:#x}", s as usize)
}

/// The first access runs on `a` while `b` is held, then the second one on `b`: the second
/// must be reported, naming both.
fn unordered(
    first: impl FnOnce(aclrtStream),
    second: impl FnOnce(aclrtStream),
    fragments: &[&str],
) -> (aclrtStream, aclrtStream) {
    let (a, b) = (create_stream(), create_stream());
    let hold = hold_stream(b).expect("a live stream");
    second(b);
    first(a);
    ok(a);
    hold.release();
    let mut all = vec![stream_name(a), stream_name(b)];
    all.extend(fragments.iter().map(|f| f.to_string()));
    race_on(b, &all.iter().map(String::as_str).collect::<Vec<_>>());
    (a, b)
}

fn done(streams: (aclrtStream, aclrtStream)) {
    destroy_stream(streams.0);
    destroy_stream(streams.1);
}

#[test]
fn kernel_write_then_unordered_kernel_write_is_reported() {
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

#[test]
fn pinned_host_memory_is_checked_for_copies() {
    setup();
    let x = Buf::new(1.0);
    let mut h = null_mut();
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { api::aclrtMallocHost(&mut h, BYTES) }, ACL_SUCCESS);
    // Two uploads from one pinned buffer on two streams: reads only.
    let (a, b) = (create_stream(), create_stream());
    let up = |s| {
        let rc = memcpy_async(x.ptr, BYTES, h, BYTES, ACL_MEMCPY_HOST_TO_DEVICE, s);
        assert_eq!(rc, ACL_SUCCESS, "{}", err_msg());
    };
    let down = |s| {
        let rc = memcpy_async(h, BYTES, x.ptr, BYTES, ACL_MEMCPY_DEVICE_TO_HOST, s);
        assert_eq!(rc, ACL_SUCCESS, "{}", err_msg());
    };
    up(a);
    ok(a);
    let y = Buf::new(0.0);
    let rc = memcpy_async(y.ptr, BYTES, h, BYTES, ACL_MEMCPY_HOST_TO_DEVICE, b);
    assert_eq!(rc, ACL_SUCCESS);
    ok(b);
    // A download into it on one stream while an upload from it is queued on another.
    let hold = hold_stream(b).unwrap();
    let rc = memcpy_async(y.ptr, BYTES, h, BYTES, ACL_MEMCPY_HOST_TO_DEVICE, b);
    assert_eq!(rc, ACL_SUCCESS);
    down(a);
    ok(a);
    hold.release();
    race_on(
        b,
        &[
            "aclrtMemcpyAsync on",
            "reads bytes",
            &format!("[{}, {:#x})", hex(h), h as usize + BYTES),
            "(src) of the aclrtMallocHost buffer",
            "(dst)",
        ],
    );
    // SAFETY: from aclrtMallocHost; nothing queued uses it.
    assert_eq!(unsafe { api::aclrtFreeHost(h) }, ACL_SUCCESS);
    done((a, b));
}

#[test]
fn workspaces_are_accesses_too() {
    setup();
    // A non-contiguous self needs a workspace region.
    let x = Buf::new(1.0);
    let y = Buf::new(0.0);
    let view = tensor_view(&[N as i64 / 2], &[2], 0, &[N as i64], ACL_FLOAT, x.ptr);
    let out = y.half();
    let other = Buf::new(0.0);
    let out2 = other.half();
    let ws_of = |out| {
        let (mut ws, mut ex) = (0u64, null_mut());
        // SAFETY: live tensors, valid out-pointers.
        let rc = unsafe { api::aclnnMishGetWorkspaceSize(view, out, &mut ws, &mut ex) };
        assert_eq!(rc, ACLNN_SUCCESS, "{}", err_msg());
        (ws, ex)
    };
    let (size, ex1) = ws_of(out);
    assert!(size > 0);
    let w = malloc(size as usize);
    let (a, b) = (create_stream(), create_stream());
    let hold = hold_stream(b).unwrap();
    let (_, ex2) = ws_of(out2);
    // SAFETY: executors of phase 1, a workspace of their size, live streams.
    unsafe {
        assert_eq!(api::aclnnMish(w, size, ex2, b), ACLNN_SUCCESS);
        assert_eq!(api::aclnnMish(w, size, ex1, a), ACLNN_SUCCESS);
    }
    ok(a);
    hold.release();
    race_on(b, &["(workspace)", &hex(w)]);
    free(w);
    for t in [view, out, out2] {
        destroy_tensor(t);
    }
    done((a, b));
}

#[test]
fn collectives_are_checked() {
    setup();
    let mut comm = null_mut();
    let mut dev = [0i32];
    // SAFETY: one device and one out-slot.
    let rc = unsafe { api::HcclCommInitAll(1, dev.as_mut_ptr(), &mut comm) };
    assert_eq!(rc, HCCL_SUCCESS, "{}", err_msg());
    let (x, y) = (Buf::new(1.0), Buf::new(0.0));
    let all_reduce = |s| {
        // SAFETY: live buffers of N f32, a live communicator and stream.
        let rc = unsafe {
            api::HcclAllReduce(
                x.ptr,
                y.ptr,
                N as u64,
                HCCL_DATA_TYPE_FP32,
                HCCL_REDUCE_SUM,
                comm,
                s,
            )
        };
        assert_eq!(rc, HCCL_SUCCESS, "{}", err_msg());
    };
    let s = unordered(
        all_reduce,
        |b| mish(&y, &x, b),
        &[
            "aclnnMish on",
            "reads bytes",
            "(self)",
            "which HcclAllReduce on",
            "(recvBuf)",
        ],
    );
    // Ordered through an event: silent.
    let (a, b) = s;
    let mut ev = null_mut();
    // SAFETY: valid out-pointer, then live handles.
    unsafe {
        assert_eq!(api::aclrtCreateEvent(&mut ev), ACL_SUCCESS);
        all_reduce(a);
        assert_eq!(api::aclrtRecordEvent(ev, a), ACL_SUCCESS);
        assert_eq!(api::aclrtStreamWaitEvent(b, ev), ACL_SUCCESS);
    }
    mish(&y, &x, b);
    ok(b);
    ok(a);
    // SAFETY: live handles.
    unsafe {
        assert_eq!(api::aclrtDestroyEvent(ev), ACL_SUCCESS);
        assert_eq!(api::HcclCommDestroy(comm), HCCL_SUCCESS);
    }
    done(s);
}

/// Modelled on reproducer r14: a queued copy on S0 reads a pinned buffer and a kernel
/// reads a tensor while S1 overwrites both without waiting for S0.
#[test]
fn r14_overwrite_under_a_queued_read_on_another_stream_is_reported() {
    setup();
    let (x, y) = (Buf::new(5.0), Buf::new(0.0));
    let mut h = null_mut();
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { api::aclrtMallocHost(&mut h, BYTES) }, ACL_SUCCESS);
    let (s0, s1) = (create_stream(), create_stream());
    let hold = hold_stream(s0).unwrap();
    let rc = memcpy_async(y.ptr, BYTES, h, BYTES, ACL_MEMCPY_HOST_TO_DEVICE, s0);
    assert_eq!(rc, ACL_SUCCESS);
    mish(&x, &y, s0);
    // S1 overwrites the pinned buffer (a download into it) and x (an upload).
    let rc = memcpy_async(h, BYTES, x.ptr, BYTES, ACL_MEMCPY_DEVICE_TO_HOST, s1);
    assert_eq!(rc, ACL_SUCCESS);
    let src = [-100.0f32; N];
    let rc = memcpy_async(
        x.ptr,
        BYTES,
        src.as_ptr().cast(),
        BYTES,
        ACL_MEMCPY_HOST_TO_DEVICE,
        s1,
    );
    assert_eq!(rc, ACL_SUCCESS);
    ok(s1);
    hold.release();
    race_on(
        s0,
        &[
            "aclrtMemcpyAsync on",
            &stream_name(s0),
            "reads bytes",
            "aclrtMallocHost buffer",
            &stream_name(s1),
        ],
    );
    // The first race failed the stream's work; the kernel's own race is the next finding.
    let hold = hold_stream(s0).unwrap();
    mish(&x, &y, s0);
    let rc = memcpy_async(
        x.ptr,
        BYTES,
        src.as_ptr().cast(),
        BYTES,
        ACL_MEMCPY_HOST_TO_DEVICE,
        s1,
    );
    assert_eq!(rc, ACL_SUCCESS);
    ok(s1);
    hold.release();
    race_on(
        s0,
        &[
            "aclnnMish on",
            "reads bytes",
            "(self)",
            "which aclrtMemcpyAsync on",
            "wrote",
        ],
    );
    // SAFETY: from aclrtMallocHost; the streams are drained.
    assert_eq!(unsafe { api::aclrtFreeHost(h) }, ACL_SUCCESS);
    done((s0, s1));
}

/// Modelled on reproducer r15: an in-place kernel queued on S writes a tensor that
/// another stream reads meanwhile (the crate thought nobody borrowed it).
#[test]
fn r15_in_place_kernel_writing_a_tensor_another_stream_reads_is_reported() {
    setup();
    let t2 = Buf::new(-1.0);
    let (s, other) = (create_stream(), create_stream());
    let hold = hold_stream(s).unwrap();
    inplace_mish(&t2, s);
    let mut out = [0f32; N];
    let rc = memcpy_async(
        out.as_mut_ptr().cast(),
        BYTES,
        t2.ptr,
        BYTES,
        ACL_MEMCPY_DEVICE_TO_HOST,
        other,
    );
    assert_eq!(rc, ACL_SUCCESS);
    ok(other);
    assert_eq!(out, [-1.0; N], "the read ran before the queued kernel");
    hold.release();
    race_on(
        s,
        &[
            "aclnnInplaceMish on",
            &stream_name(s),
            "writes bytes",
            &hex(t2.ptr),
            "(selfRef)",
            "which aclrtMemcpyAsync on",
            &stream_name(other),
            "read at",
            "(src)",
        ],
    );
    done((s, other));
}
