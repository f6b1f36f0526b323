//! Stream-ordered memory pools (`aclrtMemPool*`) and `aclrtLaunchCallback`.

use crate::common;

use ascend_sim::{api, set_fault, testing};
use ascend_sys::*;
use common::*;
use std::ffi::c_void;
use std::ptr::null_mut;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

/// Device memory figures are process-wide: the tests of this file run one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

fn props(device: u32, max: usize) -> aclrtMemPoolProps {
    aclrtMemPoolProps {
        allocType: ACL_MEM_ALLOCATION_TYPE_PINNED,
        handleType: ACL_MEM_HANDLE_TYPE_NONE,
        location: aclrtMemLocation {
            id: device,
            type_: ACL_MEM_LOCATION_TYPE_DEVICE,
        },
        maxSize: max,
        reserved: [0; 32],
    }
}

fn create_pool(max: usize) -> aclrtMemPool {
    let mut pool = null_mut();
    // SAFETY: valid out-pointer and props.
    let rc = unsafe { api::aclrtMemPoolCreate(&mut pool, &props(0, max)) };
    assert_eq!(rc, ACL_SUCCESS, "{}", err_msg());
    pool
}

fn pool_malloc(pool: aclrtMemPool, size: usize, s: aclrtStream) -> *mut c_void {
    let mut p = null_mut();
    // SAFETY: valid out-pointer; handles from the simulator.
    let rc = unsafe { api::aclrtMemPoolMallocAsync(&mut p, size, pool, s) };
    assert_eq!(rc, ACL_SUCCESS, "{}", err_msg());
    p
}

fn pool_free(p: *mut c_void, s: aclrtStream) -> i32 {
    // SAFETY: simulator address and handle (or garbage the simulator checks).
    unsafe { api::aclrtMemPoolFreeAsync(p, s) }
}

fn free_bytes() -> usize {
    let (mut free, mut total) = (0, 0);
    // SAFETY: valid out-pointers.
    let rc = unsafe { api::aclrtGetMemInfo(ACL_HBM_MEM, &mut free, &mut total) };
    assert_eq!(rc, ACL_SUCCESS);
    free
}

#[test]
fn props_are_checked_in_order() {
    let _gate = crate::common::shared();
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    setup();
    let mut pool = null_mut();
    // SAFETY: valid or NULL pointers, as each case says.
    unsafe {
        assert_eq!(
            api::aclrtMemPoolCreate(&mut pool, std::ptr::null()),
            ACL_ERROR_INVALID_PARAM
        );
        assert_err_msg_contains(&["poolProps is NULL"]);
        let mut p = props(0, 0);
        p.location.type_ = ACL_MEM_LOCATION_TYPE_HOST;
        assert_eq!(
            api::aclrtMemPoolCreate(&mut pool, &p),
            ACL_ERROR_INVALID_PARAM
        );
        assert_err_msg_contains(&["location.type 0"]);
        assert_eq!(
            api::aclrtMemPoolCreate(&mut pool, &props(99, 0)),
            ACL_ERROR_INVALID_PARAM
        );
        assert_err_msg_contains(&["location.id 99"]);
    }
}

#[test]
fn a_freed_block_is_reused_only_after_its_free_ran() {
    let _gate = crate::common::shared();
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    setup();
    let pool = create_pool(0);
    let (a, b) = (create_stream(), create_stream());
    let p = pool_malloc(pool, 256, a);
    let hold = testing::hold_stream(a).unwrap();
    assert_eq!(pool_free(p, a), ACL_SUCCESS);
    // The free waits behind the hold: another stream gets other memory.
    let q = pool_malloc(pool, 256, b);
    assert_ne!(p, q);
    hold.release();
    assert_eq!(sync(a), ACL_SUCCESS);
    // Now the range is free in stream order and may be handed out again.
    let r = pool_malloc(pool, 200, b);
    assert_eq!(r, p);
    let hold = testing::hold_stream(b).unwrap();
    assert_eq!(pool_free(r, b), ACL_SUCCESS);
    assert_eq!(pool_free(r, b), ACL_ERROR_INVALID_PARAM);
    assert_err_msg_contains(&["double free"]);
    hold.release();
    assert_eq!(pool_free(q, b), ACL_SUCCESS);
    assert_eq!(sync(b), ACL_SUCCESS);
    // SAFETY: a live pool handle.
    assert_eq!(unsafe { api::aclrtMemPoolDestroy(pool) }, ACL_SUCCESS);
    // SAFETY: a stale pool handle, checked.
    assert_eq!(
        unsafe { api::aclrtMemPoolDestroy(pool) },
        ACL_ERROR_RT_INVALID_HANDLE
    );
    destroy_stream(a);
    destroy_stream(b);
}

#[test]
fn use_after_a_stream_ordered_free_is_reported() {
    let _gate = crate::common::shared();
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    setup();
    let pool = create_pool(0);
    let s = create_stream();
    let p = pool_malloc(pool, 64, s);
    let mut host = [0u8; 64];
    assert_eq!(pool_free(p, s), ACL_SUCCESS);
    // Queued after the free on the same stream: it runs on dead memory.
    let rc = memcpy_async(
        host.as_mut_ptr().cast(),
        64,
        p,
        64,
        ACL_MEMCPY_DEVICE_TO_HOST,
        s,
    );
    assert_eq!(rc, ACL_SUCCESS, "{}", err_msg());
    assert_fails_with(
        sync(s),
        ACL_ERROR_RT_INTERNAL_ERROR,
        &["freed while queued work"],
    );
    // A pool block is not released with aclrtFree.
    let q = pool_malloc(pool, 64, s);
    // SAFETY: a pool block, checked.
    assert_eq!(unsafe { api::aclrtFree(q) }, ACL_ERROR_INVALID_PARAM);
    assert_err_msg_contains(&["aclrtMemPoolFreeAsync"]);
    assert_eq!(pool_free(q, s), ACL_SUCCESS);
    assert_eq!(sync(s), ACL_SUCCESS);
    // SAFETY: a live pool handle.
    assert_eq!(unsafe { api::aclrtMemPoolDestroy(pool) }, ACL_SUCCESS);
    destroy_stream(s);
}

#[test]
fn trim_and_max_size_and_faults() {
    let _gate = crate::common::serial();
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    setup();
    let pool = create_pool(4096);
    let s = create_stream();
    let before = free_bytes();
    let p = pool_malloc(pool, 1024, s);
    let mut q = null_mut();
    // SAFETY: valid out-pointer and handles.
    let rc = unsafe { api::aclrtMemPoolMallocAsync(&mut q, 4000, pool, s) };
    assert_eq!(rc, ACL_ERROR_RT_MEMORY_ALLOCATION);
    assert_err_msg_contains(&["maxSize 4096"]);
    assert_eq!(pool_free(p, s), ACL_SUCCESS);
    assert_eq!(sync(s), ACL_SUCCESS);
    // Freed into the pool, still reserved.
    assert!(free_bytes() < before);
    // SAFETY: a live pool handle.
    assert_eq!(unsafe { api::aclrtMemPoolTrimTo(pool, 0) }, ACL_SUCCESS);
    assert_eq!(free_bytes(), before);
    set_fault("aclrtMemPoolMallocAsync", 1).unwrap();
    // SAFETY: valid out-pointer and handles.
    let rc = unsafe { api::aclrtMemPoolMallocAsync(&mut q, 64, pool, s) };
    assert_eq!(rc, ACL_ERROR_RT_MEMORY_ALLOCATION);
    // SAFETY: a live pool handle.
    assert_eq!(unsafe { api::aclrtMemPoolDestroy(pool) }, ACL_SUCCESS);
    destroy_stream(s);
}

static CALLED: AtomicBool = AtomicBool::new(false);
static ON_DEVICE: AtomicBool = AtomicBool::new(true);

extern "C" fn note(user_data: *mut c_void) {
    ON_DEVICE.store(testing::on_device_thread(), Ordering::SeqCst);
    CALLED.store(user_data as usize == 7, Ordering::SeqCst);
}

#[test]
fn callbacks_run_in_stream_order() {
    let _gate = crate::common::shared();
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    setup();
    let s = create_stream();
    let hold = testing::hold_stream(s).unwrap();
    // SAFETY: a function that never unwinds, an integer as user data.
    let rc =
        unsafe { api::aclrtLaunchCallback(Some(note), 7 as *mut c_void, ACL_CALLBACK_BLOCK, s) };
    assert_eq!(rc, ACL_SUCCESS, "{}", err_msg());
    assert!(!CALLED.load(Ordering::SeqCst));
    hold.release();
    assert_eq!(sync(s), ACL_SUCCESS);
    assert!(CALLED.load(Ordering::SeqCst));
    // A callback is host code, though the stream's worker (a device thread) runs it.
    assert!(!ON_DEVICE.load(Ordering::SeqCst));
    // SAFETY: checked arguments.
    unsafe {
        assert_eq!(
            api::aclrtLaunchCallback(None, null_mut(), 0, s),
            ACL_ERROR_INVALID_PARAM
        );
        assert_eq!(
            api::aclrtLaunchCallback(Some(note), null_mut(), 2, s),
            ACL_ERROR_INVALID_PARAM
        );
    }
    assert_err_msg_contains(&["blockType 2"]);
    destroy_stream(s);
}
