//! Issue 13's done-when test: 200 training steps on preallocated tensors — each uploads
//! `x` and the incoming gradient with `copy_from_array`, runs `mish` and `mish_backward`
//! on the device, and downloads the gradient with `copy_to_array` —
//! make 0 heap allocations (counted process-wide, the simulator's stream worker included)
//! and 0 device or pinned-host allocations (the simulator's call counters) after warm-up.

mod common;

use ascendcl::{DeviceTensor, mish, mish_backward};
use common::*;
use ndarray::Array2;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

struct Counting;

static ALLOCS: AtomicU64 = AtomicU64::new(0);
static COUNTING: AtomicBool = AtomicBool::new(false);

fn note() {
    if COUNTING.load(Ordering::Relaxed) {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
    }
}

// SAFETY: forwards to the system allocator; the counters are atomics (no allocation, no
// re-entrancy).
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note();
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note();
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note();
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

const STEPS: usize = 200;
/// More steps than fill the simulator's slab quarantine (`ascend_sim`'s slab reuses a freed
/// executor slot only after 256 newer ones were freed, so its slabs grow until about 256
/// executors have been made; two launches per step).
const WARM_UP: usize = 150;

#[test]
fn two_hundred_training_steps_allocate_nothing_after_warm_up() {
    let _leaks = LeakCheck::start();
    ascend_sim::clear_last_report();
    let stream = device(A2).stream().unwrap();
    let (batch, width) = (32, 64);
    let mut x_host = Array2::<f32>::zeros((batch, width));
    let mut g_host = Array2::<f32>::zeros((batch, width));
    let mut grad_in = Array2::<f32>::zeros((batch, width));
    let mut x = DeviceTensor::<f32>::zeros(&stream, &[batch, width]).unwrap();
    let mut g = DeviceTensor::<f32>::zeros(&stream, &[batch, width]).unwrap();
    let mut y = DeviceTensor::<f32>::zeros(&stream, &[batch, width]).unwrap();
    let mut dx = DeviceTensor::<f32>::zeros(&stream, &[batch, width]).unwrap();
    let ones = DeviceTensor::from_array(&stream, &Array2::<f32>::ones((batch, width))).unwrap();

    let mut spare = DeviceTensor::<f32>::zeros(&stream, &[batch, width]).unwrap();
    let mut checksum = 0.0f64;
    let mut step = |i: usize, checksum: &mut f64| {
        // New host data every step, written into the same arrays.
        x_host.mapv_inplace(|v| (v + 0.37 + i as f32 * 1e-3).sin() * 3.0);
        g_host.mapv_inplace(|v| (v + 0.11).cos());
        x.copy_from_array(&stream, &x_host).unwrap();
        g.copy_from_array(&stream, &g_host).unwrap();
        mish(&x, &mut y, &stream).unwrap();
        mish_backward(&g, &x, &mut dx, &stream).unwrap();
        dx.copy_to_array(&stream, &mut grad_in).unwrap();
        *checksum += f64::from(grad_in[[i % batch, i % width]]);
    };
    for i in 0..WARM_UP {
        step(i, &mut checksum);
    }
    // Grow the simulator's queue to more launches in flight than a step ever has, as
    // `api_alloc` does, so scheduling of its worker cannot make the queue grow later.
    for _ in 0..3 {
        let hold = ascend_sim::testing::hold_stream(stream.as_raw()).unwrap();
        for _ in 0..16 {
            mish_backward(&ones, &ones, &mut spare, &stream).unwrap();
        }
        hold.release();
        stream.synchronize().unwrap();
    }
    let mallocs = ascend_sim::call_count("aclrtMalloc");
    let host_mallocs = ascend_sim::call_count("aclrtMallocHost");
    let launches = ascend_sim::call_count("aclnnMishBackward");
    let forwards = ascend_sim::call_count("aclnnMish");
    ALLOCS.store(0, Ordering::SeqCst);
    COUNTING.store(true, Ordering::SeqCst);
    for i in WARM_UP..WARM_UP + STEPS {
        step(i, &mut checksum);
    }
    COUNTING.store(false, Ordering::SeqCst);
    let heap = ALLOCS.load(Ordering::SeqCst);
    assert_eq!(heap, 0, "heap allocations over {STEPS} steps");
    assert_eq!(
        ascend_sim::call_count("aclrtMalloc"),
        mallocs,
        "device allocations"
    );
    assert_eq!(
        ascend_sim::call_count("aclrtMallocHost"),
        host_mallocs,
        "pinned allocations"
    );
    assert_eq!(
        ascend_sim::call_count("aclnnMishBackward"),
        launches + STEPS as u64,
        "every step ran the backward on the device"
    );
    assert_eq!(
        ascend_sim::call_count("aclnnMish"),
        forwards + STEPS as u64,
        "every step ran the forward on the device"
    );
    // The last step's download is the device's result for the last uploaded data.
    let expected = ascendcl::reference::mish_backward(g_host.view(), x_host.view()).unwrap();
    let (mere, _) = mere_mare(&grad_in.into_dyn(), &expected.into_dyn());
    assert!(mere < threshold(ascendcl::DType::F32), "{mere}");
    assert!(checksum.is_finite());
    assert_eq!(ascend_sim::last_report(), None);
}
