//! A counting global allocator for the zero-allocation tests. A test binary installs it
//! with `#[global_allocator] static GLOBAL: Counting = Counting;` and measures with
//! [`allocations_during`].

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

pub struct Counting;

thread_local! {
    static THREAD_ALLOCS: Cell<u64> = const { Cell::new(0) };
}
static ALL_ALLOCS: AtomicU64 = AtomicU64::new(0);
static COUNTING: AtomicBool = AtomicBool::new(false);

fn note() {
    let _ = THREAD_ALLOCS.try_with(|n| n.set(n.get() + 1));
    if COUNTING.load(Ordering::Relaxed) {
        ALL_ALLOCS.fetch_add(1, Ordering::Relaxed);
    }
}

// SAFETY: forwards to the system allocator; the counters are a const-initialised
// thread-local and atomics (no allocation, no re-entrancy).
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

/// Heap allocations `(on this thread, in the whole process)` while `f` runs (only
/// meaningful in a binary that installed [`Counting`]).
pub fn allocations_during(f: impl FnOnce()) -> (u64, u64) {
    let mine = THREAD_ALLOCS.with(Cell::get);
    ALL_ALLOCS.store(0, Ordering::SeqCst);
    COUNTING.store(true, Ordering::SeqCst);
    f();
    COUNTING.store(false, Ordering::SeqCst);
    (
        THREAD_ALLOCS.with(Cell::get) - mine,
        ALL_ALLOCS.load(Ordering::SeqCst),
    )
}
