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

/// The simulator's call counts of some C functions at one moment, to compare a measured
/// loop against (process-wide: the test holds the binary's serial guard).
pub struct SimCalls(Vec<(&'static str, u64)>);

impl SimCalls {
    /// The counts now of `aclrtMalloc`, `aclrtMallocHost` and `others`.
    pub fn now(others: &[&'static str]) -> SimCalls {
        let symbols = ["aclrtMalloc", "aclrtMallocHost"].iter().chain(others);
        SimCalls(symbols.map(|s| (*s, ascend_sim::call_count(s))).collect())
    }

    /// Calls of `symbol` since [`now`](Self::now) (which must have counted it).
    pub fn since(&self, symbol: &str) -> u64 {
        let (_, before) = self
            .0
            .iter()
            .find(|(s, _)| *s == symbol)
            .unwrap_or_else(|| panic!("{symbol} was not counted"));
        ascend_sim::call_count(symbol) - before
    }

    /// Asserts that no device (`aclrtMalloc`) or pinned (`aclrtMallocHost`) memory was
    /// allocated since [`now`](Self::now).
    pub fn assert_no_memory_allocated(&self) {
        assert_eq!(self.since("aclrtMalloc"), 0, "device allocations");
        assert_eq!(self.since("aclrtMallocHost"), 0, "pinned allocations");
    }
}
