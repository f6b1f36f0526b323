//! Runtime behaviour: init, contexts, memory and memcpy misuse, streams, events, handles.

use crate::common;
use ascend_sim::{api, testing};
use ascend_sys::*;
use common::*;
use std::ffi::c_void;
use std::ptr::null_mut;

/// Held by a test with more streams alive than the racecheck tracks (127) and by a test
/// that needs the racecheck on its own streams: the racecheck's streams are process-wide,
/// and the `runtime` binary's other modules (the racecheck's own tests among them) create
/// streams too, so this is the binary's exclusive gate.
fn stream_slots() -> Gate {
    serial()
}

#[test]
fn init_twice_is_repeat_initialize() {
    let _gate = crate::common::shared();
    setup();
    // SAFETY: NULL config path.
    assert_eq!(
        unsafe { api::aclInit(std::ptr::null()) },
        ACL_ERROR_REPEAT_INITIALIZE
    );
    assert!(err_msg().contains("only once"), "{}", err_msg());
}

#[test]
fn calls_without_context_fail_with_context_null() {
    let _gate = crate::common::shared();
    init_with(&[]);
    std::thread::spawn(|| {
        let mut p = null_mut();
        // SAFETY: valid out-pointers throughout.
        unsafe {
            assert_eq!(api::aclrtMalloc(&mut p, 64, 0), ACL_ERROR_RT_CONTEXT_NULL);
            assert!(err_msg().contains("no current context"), "{}", err_msg());
            let mut s = null_mut();
            assert_eq!(api::aclrtCreateStream(&mut s), ACL_ERROR_RT_CONTEXT_NULL);
            let mut d = -1;
            assert_eq!(api::aclrtGetDevice(&mut d), ACL_ERROR_RT_CONTEXT_NULL);
            let mut c = null_mut();
            assert_eq!(
                api::aclrtGetCurrentContext(&mut c),
                ACL_ERROR_RT_CONTEXT_NULL
            );
            assert_eq!(
                api::aclrtSynchronizeStream(null_mut()),
                ACL_ERROR_RT_CONTEXT_NULL
            );
            let mut e = null_mut();
            assert_eq!(api::aclrtCreateEvent(&mut e), ACL_ERROR_RT_CONTEXT_NULL);
        }
    })
    .join()
    .unwrap();
}

#[test]
fn explicit_context_and_stale_handles() {
    let _gate = crate::common::shared();
    setup();
    std::thread::spawn(|| {
        let mut ctx = null_mut();
        // SAFETY: valid out-pointers; handles from the simulator or deliberately stale.
        unsafe {
            assert_eq!(api::aclrtCreateContext(&mut ctx, 0), ACL_SUCCESS);
            let mut cur = null_mut();
            assert_eq!(api::aclrtGetCurrentContext(&mut cur), ACL_SUCCESS);
            assert_eq!(cur, ctx);
            let s = create_stream();
            destroy_stream(s);
            assert_eq!(api::aclrtDestroyStream(s), ACL_ERROR_RT_INVALID_HANDLE);
            assert!(err_msg().contains("stale"), "{}", err_msg());
            assert_eq!(sync(s), ACL_ERROR_RT_INVALID_HANDLE);
            // A foreign pointer is not a handle.
            let mut x = 0u64;
            assert_eq!(
                api::aclrtSynchronizeStream((&mut x as *mut u64).cast()),
                ACL_ERROR_RT_INVALID_HANDLE
            );
            assert_eq!(api::aclrtDestroyContext(ctx), ACL_SUCCESS);
            assert_eq!(
                api::aclrtSetCurrentContext(ctx),
                ACL_ERROR_RT_INVALID_HANDLE
            );
            // The destroyed context was current: no context any more.
            let mut p = null_mut();
            assert_eq!(api::aclrtMalloc(&mut p, 64, 0), ACL_ERROR_RT_CONTEXT_NULL);
            assert!(err_msg().contains("destroyed"), "{}", err_msg());
        }
    })
    .join()
    .unwrap();
}

#[test]
fn device_ids_and_soc() {
    let _gate = crate::common::shared();
    setup();
    let mut n = 0u32;
    // SAFETY: valid out-pointers.
    unsafe {
        assert_eq!(api::aclrtGetDeviceCount(&mut n), ACL_SUCCESS);
        assert_eq!(n, 1);
        assert_eq!(api::aclrtSetDevice(1), ACL_ERROR_RT_INVALID_DEVICEID);
        assert_eq!(api::aclrtSetDevice(-1), ACL_ERROR_RT_INVALID_DEVICEID);
        let soc = std::ffi::CStr::from_ptr(api::aclrtGetSocName());
        assert_eq!(soc.to_str().unwrap(), "Ascend910B4");
        let (mut free, mut total) = (0usize, 0usize);
        assert_eq!(
            api::aclrtGetMemInfo(ACL_HBM_MEM, &mut free, &mut total),
            ACL_SUCCESS
        );
        assert_eq!(total, 1 << 30);
        assert!(free <= total);
    }
}

#[test]
fn malloc_rules() {
    let _gate = crate::common::shared();
    setup();
    let mut p = null_mut();
    // SAFETY: valid out-pointers; freed pointers are only passed back to the simulator.
    unsafe {
        assert_eq!(api::aclrtMalloc(&mut p, 0, 0), ACL_ERROR_INVALID_PARAM);
        assert_eq!(api::aclrtMalloc(null_mut(), 8, 0), ACL_ERROR_INVALID_PARAM);
        for bad in [8, 0x200, 0x1100, 0x1001 | 0x100, 0x20_0000] {
            assert_eq!(
                api::aclrtMalloc(&mut p, 8, bad),
                ACL_ERROR_INVALID_PARAM,
                "{bad:#x}"
            );
            assert!(
                err_msg().contains("not an aclrtMemMallocPolicy"),
                "{}",
                err_msg()
            );
        }
        let ps: Vec<*mut c_void> = (1..20).map(|n| malloc(n * 7)).collect();
        for &q in &ps {
            assert_eq!(q as usize % 32, 0);
        }
        for &q in &ps {
            free(q);
        }
        let q = malloc(100);
        free(q);
        assert_eq!(api::aclrtFree(q), ACL_ERROR_INVALID_PARAM);
        assert!(err_msg().contains("double free"), "{}", err_msg());
        let mut host = 0u8;
        assert_eq!(
            api::aclrtFree((&mut host as *mut u8).cast()),
            ACL_ERROR_INVALID_PARAM
        );
        assert!(err_msg().contains("not device memory"), "{}", err_msg());
        let q = malloc(64);
        assert_eq!(
            api::aclrtFree(q.cast::<u8>().add(32).cast()),
            ACL_ERROR_INVALID_PARAM
        );
        free(q);
        // Host memory.
        let mut h = null_mut();
        assert_eq!(api::aclrtMallocHost(&mut h, 256), ACL_SUCCESS);
        std::ptr::write_bytes(h.cast::<u8>(), 7, 256);
        assert_eq!(api::aclrtFreeHost(h), ACL_SUCCESS);
        assert_eq!(api::aclrtFreeHost(h), ACL_ERROR_INVALID_PARAM);
        // Exceeding device memory.
        assert_eq!(
            api::aclrtMalloc(&mut p, 2 << 30, 0),
            ACL_ERROR_RT_MEMORY_ALLOCATION
        );
    }
}

/// Asserts that `aclrtMemcpy(dst, dest_max, src, count, kind)` is rejected with
/// `ACL_ERROR_INVALID_PARAM` and a message containing every one of `fragments`.
#[track_caller]
fn assert_memcpy_rejected(
    dst: *mut c_void,
    dest_max: usize,
    src: *const c_void,
    count: usize,
    kind: u32,
    fragments: &[&str],
) {
    assert_fails_with(
        memcpy(dst, dest_max, src, count, kind),
        ACL_ERROR_INVALID_PARAM,
        fragments,
    );
}

#[test]
fn memcpy_misuse_is_caught() {
    let _gate = crate::common::shared();
    setup();
    let d = malloc(64);
    let host = [1u8; 128];
    let mut back = [0u8; 128];
    let hp = host.as_ptr().cast::<c_void>();
    let bp = back.as_mut_ptr().cast::<c_void>();
    // Wrong kinds.
    let h2d_kind = ACL_MEMCPY_HOST_TO_DEVICE;
    assert_memcpy_rejected(bp, 64, hp, 64, h2d_kind, &["dst", "host memory"]);
    assert_memcpy_rejected(d, 64, hp, 64, ACL_MEMCPY_DEVICE_TO_HOST, &[]);
    assert_memcpy_rejected(d, 64, hp, 64, ACL_MEMCPY_DEVICE_TO_DEVICE, &[]);
    assert_memcpy_rejected(bp, 64, hp, 64, 9, &[]);
    // count > destMax.
    assert_memcpy_rejected(d, 32, hp, 64, h2d_kind, &["exceeds destMax"]);
    // Outside the allocation (64 bytes; padding is not usable).
    assert_memcpy_rejected(d, 128, hp, 65, h2d_kind, &["overruns"]);
    // SAFETY: pointer arithmetic only; the simulator checks the address.
    let inner = unsafe { d.cast::<u8>().add(60) }.cast::<c_void>();
    assert_memcpy_rejected(inner, 8, hp, 8, h2d_kind, &[]);
    // Correct uses, including DEFAULT inference and an interior pointer.
    assert_eq!(
        memcpy(d, 64, hp, 64, ACL_MEMCPY_HOST_TO_DEVICE),
        ACL_SUCCESS
    );
    assert_eq!(memcpy(inner, 4, hp, 4, ACL_MEMCPY_DEFAULT), ACL_SUCCESS);
    assert_eq!(memcpy(bp, 64, d, 64, ACL_MEMCPY_DEFAULT), ACL_SUCCESS);
    assert_eq!(&back[..64], &host[..64]);
    // Memset.
    // SAFETY: device address checked by the simulator.
    unsafe {
        assert_eq!(api::aclrtMemset(d, 64, 3, 64), ACL_SUCCESS);
        assert_eq!(api::aclrtMemset(d, 64, 3, 65), ACL_ERROR_INVALID_PARAM);
        assert_eq!(api::aclrtMemset(d, 128, 3, 65), ACL_ERROR_INVALID_PARAM);
        assert_eq!(api::aclrtMemset(bp, 64, 3, 8), ACL_ERROR_INVALID_PARAM);
    }
    assert_eq!(d2h::<u8>(d, 64), vec![3u8; 64]);
    // Freed pointer.
    free(d);
    let freed = ["not inside any live device allocation"];
    assert_memcpy_rejected(bp, 64, d, 64, ACL_MEMCPY_DEVICE_TO_HOST, &freed);
    let s = create_stream();
    assert_eq!(
        memcpy_async(bp, 64, d, 64, ACL_MEMCPY_DEVICE_TO_HOST, s),
        ACL_ERROR_INVALID_PARAM
    );
    destroy_stream(s);
}

/// Enqueues on `s` an `aclrtMemcpyAsync` of the host slice `src` to the device address
/// `dst` and asserts that it was accepted.
#[track_caller]
fn enqueue_upload<T>(dst: *mut c_void, src: &[T], s: aclrtStream) {
    let n = size_of_val(src);
    let kind = ACL_MEMCPY_HOST_TO_DEVICE;
    let rc = memcpy_async(dst, n, src.as_ptr().cast(), n, kind, s);
    assert_eq!(rc, ACL_SUCCESS, "{}", err_msg());
}

/// Enqueues on `s` an `aclrtMemcpyAsync` of the device address `src` into the host slice
/// `dst` and asserts that it was accepted (the caller keeps `dst` alive until `s` is
/// synchronized).
#[track_caller]
fn enqueue_download<T>(dst: &mut [T], src: *const c_void, s: aclrtStream) {
    let n = size_of_val(dst);
    let kind = ACL_MEMCPY_DEVICE_TO_HOST;
    let rc = memcpy_async(dst.as_mut_ptr().cast(), n, src, n, kind, s);
    assert_eq!(rc, ACL_SUCCESS, "{}", err_msg());
}

#[test]
fn missing_event_wait_is_observable_and_events_order_streams() {
    setup();
    let _slots = stream_slots();
    let (a, b) = (create_stream(), create_stream());
    let buf = malloc(16);
    let newer = [9u32; 4];
    let mut seen = [0u32; 4];
    // Without a wait, b's read runs before a's (held) write.
    let hold = testing::hold_stream(a).unwrap();
    enqueue_upload(buf, &newer, a);
    enqueue_download(&mut seen, buf, b);
    assert_eq!(sync(b), ACL_SUCCESS);
    assert_eq!(seen, [0; 4], "the read raced ahead of the unordered write");
    hold.release();
    // The racecheck fails the write that runs after the unordered read.
    assert_fails_with(
        sync(a),
        ACL_ERROR_RT_INTERNAL_ERROR,
        &[
            "racecheck: aclrtMemcpyAsync on stream",
            "writes bytes",
            "which aclrtMemcpyAsync on stream",
            "read at",
        ],
    );
    // With record/wait, b's read waits for a's write.
    let ev = create_event();
    let newest = [5u32; 4];
    let hold = testing::hold_stream(a).unwrap();
    enqueue_upload(buf, &newest, a);
    // SAFETY: live handles.
    unsafe {
        assert_eq!(api::aclrtRecordEvent(ev, a), ACL_SUCCESS);
        assert_eq!(api::aclrtStreamWaitEvent(b, ev), ACL_SUCCESS);
    }
    enqueue_download(&mut seen, buf, b);
    std::thread::sleep(std::time::Duration::from_millis(20));
    assert_eq!(seen, [0; 4], "b must still be waiting");
    hold.release();
    assert_eq!(sync(b), ACL_SUCCESS);
    assert_eq!(seen, [5; 4]);
    // SAFETY: live handles.
    unsafe {
        assert_eq!(api::aclrtSynchronizeEvent(ev), ACL_SUCCESS);
        assert_eq!(api::aclrtDestroyEvent(ev), ACL_SUCCESS);
        assert_eq!(api::aclrtDestroyEvent(ev), ACL_ERROR_RT_INVALID_HANDLE);
        assert_eq!(api::aclrtRecordEvent(ev, a), ACL_ERROR_RT_INVALID_HANDLE);
    }
    destroy_stream(a);
    destroy_stream(b);
    free(buf);
}

#[test]
fn buffer_freed_while_queued_work_uses_it_is_reported() {
    let _gate = crate::common::shared();
    setup();
    let s = create_stream();
    let buf = malloc(64);
    let mut back = [0u8; 64];
    let hold = testing::hold_stream(s).unwrap();
    enqueue_download(&mut back, buf, s);
    assert_freed_while_queued_is_reported(buf, hold, s, &[]);
    // The error was consumed by that synchronize.
    assert_eq!(sync(s), ACL_SUCCESS);
    destroy_stream(s);
}

#[test]
fn default_stream_and_async_copies() {
    let _gate = crate::common::shared();
    setup();
    let buf = malloc(8);
    let v = [1u32, 2];
    let mut back = [0u32; 2];
    enqueue_upload(buf, &v, null_mut());
    enqueue_download(&mut back, buf, null_mut());
    assert_eq!(sync(null_mut()), ACL_SUCCESS);
    assert_eq!(back, v);
    free(buf);
}

#[test]
fn many_streams_are_cheap() {
    setup();
    let _slots = stream_slots();
    let streams: Vec<_> = (0..300).map(|_| create_stream()).collect();
    for &s in &streams {
        assert_eq!(sync(s), ACL_SUCCESS);
    }
    for s in streams {
        destroy_stream(s);
    }
}

fn malloc_host(size: usize) -> *mut c_void {
    let mut p = null_mut();
    // SAFETY: &mut p is a valid out-pointer.
    let rc = unsafe { api::aclrtMallocHost(&mut p, size) };
    assert_eq!(rc, ACL_SUCCESS, "{}", err_msg());
    p
}

fn free_host(p: *mut c_void) -> aclError {
    // SAFETY: p came from aclrtMallocHost (or is deliberately stale).
    unsafe { api::aclrtFreeHost(p) }
}

#[test]
fn pinned_buffer_freed_under_a_queued_copy_is_reported() {
    let _gate = crate::common::shared();
    setup();
    let s = create_stream();
    let dev = malloc(64);
    // Both directions: the queued copy reads (upload) or writes (download) the buffer.
    for kind in [ACL_MEMCPY_HOST_TO_DEVICE, ACL_MEMCPY_DEVICE_TO_HOST] {
        let pinned = malloc_host(64);
        let hold = testing::hold_stream(s).unwrap();
        let (dst, src) = if kind == ACL_MEMCPY_HOST_TO_DEVICE {
            (dev, pinned.cast_const())
        } else {
            (pinned, dev.cast_const())
        };
        assert_eq!(memcpy_async(dst, 64, src, 64, kind, s), ACL_SUCCESS);
        // Freed while the copy is still queued: the free itself succeeds (the runtime
        // cannot refuse it), the copy then fails loudly instead of touching the memory.
        assert_eq!(free_host(pinned), ACL_SUCCESS, "{}", err_msg());
        hold.release();
        assert_fails_with(
            sync(s),
            ACL_ERROR_RT_INTERNAL_ERROR,
            &[
                "aclrtMallocHost buffer",
                "freed with aclrtFreeHost while a queued copy still used it",
            ],
        );
        // A second free of the same pointer is a double free.
        assert_fails_with(
            free_host(pinned),
            ACL_ERROR_INVALID_PARAM,
            &["not returned by aclrtMallocHost or was already freed"],
        );
    }
    // A pinned buffer that outlives its copy is fine, and its bytes arrive.
    let pinned = malloc_host(64);
    // SAFETY: a live 64-byte host buffer.
    unsafe { std::ptr::write_bytes(pinned.cast::<u8>(), 7, 64) };
    assert_eq!(
        memcpy_async(dev, 64, pinned, 64, ACL_MEMCPY_HOST_TO_DEVICE, s),
        ACL_SUCCESS
    );
    assert_eq!(sync(s), ACL_SUCCESS, "{}", err_msg());
    assert_eq!(d2h::<u8>(dev, 64), vec![7u8; 64]);
    assert_eq!(free_host(pinned), ACL_SUCCESS);
    free(dev);
    destroy_stream(s);
}

#[test]
fn a_copy_overrunning_its_pinned_buffer_is_refused() {
    let _gate = crate::common::shared();
    setup();
    let s = create_stream();
    let dev = malloc(128);
    let pinned = malloc_host(64);
    let inside = pinned.cast::<u8>().wrapping_add(32).cast::<c_void>();
    assert_fails_with(
        memcpy_async(dev, 128, inside, 64, ACL_MEMCPY_HOST_TO_DEVICE, s),
        ACL_ERROR_INVALID_PARAM,
        &["overruns the aclrtMallocHost buffer", "by 32 bytes"],
    );
    assert_eq!(free_host(pinned), ACL_SUCCESS);
    free(dev);
    destroy_stream(s);
}
