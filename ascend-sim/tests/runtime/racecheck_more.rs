//! The racecheck on pinned host memory, workspaces and HCCL collectives, and on the
//! sequences of a use slot evicted after a failed settle and of a half-failed plan rebind,
//! through the C ABI.

use crate::common;
use crate::racecheck_common;

use ascend_sim::api;
use ascend_sim::testing::hold_stream;
use ascend_sys::hccl::*;
use ascend_sys::*;
use common::*;
use racecheck_common::*;
use std::ptr::null_mut;

#[test]
fn pinned_host_memory_is_checked_for_copies() {
    let _gate = crate::common::serial();
    setup();
    let x = Buf::new(1.0);
    let mut h = null_mut();
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { api::aclrtMallocHost(&mut h, BYTES) }, ACL_SUCCESS);
    // Two uploads from one pinned buffer on two streams: reads only.
    let (a, b) = (create_stream(), create_stream());
    let up = |s| {
        copy_async(x.ptr, h, ACL_MEMCPY_HOST_TO_DEVICE, s);
    };
    let down = |s| {
        copy_async(h, x.ptr, ACL_MEMCPY_DEVICE_TO_HOST, s);
    };
    up(a);
    ok(a);
    let y = Buf::new(0.0);
    copy_async(y.ptr, h, ACL_MEMCPY_HOST_TO_DEVICE, b);
    ok(b);
    // A download into it on one stream while an upload from it is queued on another.
    let hold = hold_stream(b).unwrap();
    copy_async(y.ptr, h, ACL_MEMCPY_HOST_TO_DEVICE, b);
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
    let _gate = crate::common::serial();
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
    let _gate = crate::common::serial();
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
    // The collective running second fails its stream's synchronisation, and still moves
    // the data (the other ranks must not time out for it).
    let (a, b) = s;
    let hold = hold_stream(a).unwrap();
    all_reduce(a);
    mish(&y, &x, b);
    ok(b);
    hold.release();
    race_on(
        a,
        &[
            "HcclAllReduce on",
            &stream_name(a),
            "reads bytes",
            "(sendBuf)",
            "which aclnnMish on",
            &stream_name(b),
            "wrote at",
            "(out)",
        ],
    );
    let moved: Vec<f32> = d2h(y.ptr, N);
    let sent: Vec<f32> = d2h(x.ptr, N);
    assert_eq!(moved, sent, "a one-rank sum copies sendBuf");
    // Ordered through an event: silent.
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

/// A queued copy on S0 reads a pinned buffer and a kernel
/// reads a tensor while S1 overwrites both without waiting for S0.
#[test]
fn r14_overwrite_under_a_queued_read_on_another_stream_is_reported() {
    let _gate = crate::common::serial();
    setup();
    let (x, y) = (Buf::new(5.0), Buf::new(0.0));
    let mut h = null_mut();
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { api::aclrtMallocHost(&mut h, BYTES) }, ACL_SUCCESS);
    let (s0, s1) = (create_stream(), create_stream());
    let hold = hold_stream(s0).unwrap();
    copy_async(y.ptr, h, ACL_MEMCPY_HOST_TO_DEVICE, s0);
    mish(&x, &y, s0);
    // S1 overwrites the pinned buffer (a download into it) and x (an upload).
    copy_async(h, x.ptr, ACL_MEMCPY_DEVICE_TO_HOST, s1);
    let src = [-100.0f32; N];
    copy_async(x.ptr, src.as_ptr().cast(), ACL_MEMCPY_HOST_TO_DEVICE, s1);
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
    copy_async(x.ptr, src.as_ptr().cast(), ACL_MEMCPY_HOST_TO_DEVICE, s1);
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

/// An in-place kernel queued on S writes a tensor that
/// another stream reads meanwhile (the crate thought nobody borrowed it).
#[test]
fn r15_in_place_kernel_writing_a_tensor_another_stream_reads_is_reported() {
    let _gate = crate::common::serial();
    setup();
    let t2 = Buf::new(-1.0);
    let (s, other) = (create_stream(), create_stream());
    let hold = hold_stream(s).unwrap();
    inplace_mish(&t2, s);
    let mut out = [0f32; N];
    copy_async(
        out.as_mut_ptr().cast(),
        t2.ptr,
        ACL_MEMCPY_DEVICE_TO_HOST,
        other,
    );
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
