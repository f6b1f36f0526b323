//! The steady state of `mish_backward` allocates nothing in the crate: over 10,000 calls,
//! the calling thread performs exactly as many heap allocations as a hand-written raw
//! sequence of the same C calls (create descriptors → phase 1 → phase 2 → destroy), i.e.
//! only the simulator's own bookkeeping.

mod common;

use ascendcl::{DeviceTensor, mish_backward};
use common::*;
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::ffi::c_void;

struct Counting;

thread_local! {
    static ALLOCS: Cell<u64> = const { Cell::new(0) };
}

// SAFETY: forwards to the system allocator; the counter is a const-initialised
// thread-local (no allocation, no re-entrancy).
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = ALLOCS.try_with(|n| n.set(n.get() + 1));
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let _ = ALLOCS.try_with(|n| n.set(n.get() + 1));
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocs() -> u64 {
    ALLOCS.with(Cell::get)
}

const CALLS: usize = 10_000;

#[test]
fn steady_state_adds_no_allocation_to_the_c_calls() {
    let _leaks = LeakCheck::start();
    let rt = runtime();
    let stream = rt.device(A2).unwrap().stream().unwrap();
    let shape = [2usize, 4];
    let g = DeviceTensor::from_array(&stream, &array::<f32>(&shape, 1, -2.0, 2.0)).unwrap();
    let x = DeviceTensor::from_array(&stream, &array::<f32>(&shape, 2, -2.0, 2.0)).unwrap();
    let mut out = DeviceTensor::<f32>::zeros(&stream, &shape).unwrap();

    // Raw buffers for the hand-written sequence.
    let t = rt.api();
    let bytes = 8 * 4;
    let mut raw = [std::ptr::null_mut::<c_void>(); 3];
    for p in &mut raw {
        // SAFETY: valid out-pointer; the device's context is current on this thread.
        assert_eq!(unsafe { (t.aclrtMalloc)(p, bytes, 0) }, 0);
    }
    let dims = [2i64, 4];
    let strides = [4i64, 1];
    let storage = [8i64];
    let raw_call = || {
        let mut d = [std::ptr::null_mut(); 3];
        for (slot, p) in d.iter_mut().zip(raw) {
            // SAFETY: valid arrays and a live device allocation of 8 f32.
            *slot = unsafe {
                (t.aclCreateTensor)(
                    dims.as_ptr(),
                    2,
                    0,
                    strides.as_ptr(),
                    0,
                    2,
                    storage.as_ptr(),
                    1,
                    p,
                )
            };
        }
        let mut ws = 0u64;
        let mut ex = std::ptr::null_mut();
        // SAFETY: live descriptors, valid out-pointers.
        let s1 =
            unsafe { (t.aclnnMishBackwardGetWorkspaceSize)(d[0], d[1], d[2], &mut ws, &mut ex) };
        assert_eq!((s1, ws), (0, 0));
        // SAFETY: fresh executor, no workspace needed, live stream.
        let s2 = unsafe { (t.aclnnMishBackward)(std::ptr::null_mut(), 0, ex, stream.as_raw()) };
        assert_eq!(s2, 0);
        for p in d {
            // SAFETY: descriptors made above, destroyed once.
            unsafe { (t.aclDestroyTensor)(p) };
        }
    };

    // Warm-up: the workspace cache, use slots, the simulator's maps.
    for _ in 0..200 {
        mish_backward(&g, &x, &mut out, &stream).unwrap();
        raw_call();
    }
    stream.synchronize().unwrap();

    let start = allocs();
    for _ in 0..CALLS {
        raw_call();
    }
    let raw_allocs = allocs() - start;
    stream.synchronize().unwrap();

    let start = allocs();
    for _ in 0..CALLS {
        mish_backward(&g, &x, &mut out, &stream).unwrap();
    }
    let safe_allocs = allocs() - start;
    stream.synchronize().unwrap();

    println!(
        "allocations per call: raw {}, safe {}",
        raw_allocs as f64 / CALLS as f64,
        safe_allocs as f64 / CALLS as f64
    );
    assert!(
        safe_allocs <= raw_allocs,
        "the safe path allocated {safe_allocs} times over {CALLS} calls, the raw C sequence {raw_allocs}"
    );
    for p in raw {
        // SAFETY: allocated above; the stream is synchronised.
        unsafe { (t.aclrtFree)(p) };
    }
}
