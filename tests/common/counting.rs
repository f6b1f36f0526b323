//! A counting global allocator for the zero-allocation tests. A test binary installs it
//! with `#[global_allocator] static GLOBAL: Counting = Counting;` and measures with
//! [`allocations_during`] or [`host_and_device_during`].
//!
//! The simulator's device threads (its stream workers and their kernel helpers,
//! `ascend_sim::testing::on_device_thread`) stand for the device: what they allocate is the
//! device's working memory on hardware (a GEMM's packing buffer), not the host program's.
//! [`host_and_device_during`] counts the two apart.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

pub struct Counting;

thread_local! {
    static THREAD_ALLOCS: Cell<u64> = const { Cell::new(0) };
}
static HOST_ALLOCS: AtomicU64 = AtomicU64::new(0);
static DEVICE_ALLOCS: AtomicU64 = AtomicU64::new(0);
static COUNTING: AtomicBool = AtomicBool::new(false);

fn note() {
    let _ = THREAD_ALLOCS.try_with(|n| n.set(n.get() + 1));
    if COUNTING.load(Ordering::Relaxed) {
        if ascend_sim::testing::on_device_thread() {
            DEVICE_ALLOCS.fetch_add(1, Ordering::Relaxed);
        } else {
            HOST_ALLOCS.fetch_add(1, Ordering::Relaxed);
        }
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
    // Rayon's global pool (the CPU reference's) starts its threads lazily and does not wait
    // for them: a thread that starts late would make its start-up allocations inside the
    // window. A broadcast returns once every thread of the pool has run it.
    rayon::broadcast(|_| ());
    let mine = THREAD_ALLOCS.with(Cell::get);
    HOST_ALLOCS.store(0, Ordering::SeqCst);
    DEVICE_ALLOCS.store(0, Ordering::SeqCst);
    COUNTING.store(true, Ordering::SeqCst);
    f();
    COUNTING.store(false, Ordering::SeqCst);
    (
        THREAD_ALLOCS.with(Cell::get) - mine,
        HOST_ALLOCS.load(Ordering::SeqCst) + DEVICE_ALLOCS.load(Ordering::SeqCst),
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

/// Heap allocations while `f` runs, split by who made them.
#[allow(dead_code)]
#[derive(Debug, Clone, Copy)]
pub struct Split {
    /// On the calling thread.
    pub mine: u64,
    /// On every host thread (every thread but the simulator's device threads).
    pub host: u64,
    /// On the simulator's device threads.
    pub device: u64,
}

/// [`allocations_during`], with the host's allocations counted apart from the simulated
/// device's.
#[allow(dead_code)]
pub fn host_and_device_during(f: impl FnOnce()) -> Split {
    let (mine, _) = allocations_during(f);
    Split {
        mine,
        host: HOST_ALLOCS.load(Ordering::SeqCst),
        device: DEVICE_ALLOCS.load(Ordering::SeqCst),
    }
}

/// Matrix products one step of the two-layer MLP makes (two addmm, three matmul): the
/// simulator's device thread allocates a packing buffer for each (`matrixmultiply` takes
/// no buffer).
#[allow(dead_code)]
pub const MLP_GEMMS_PER_STEP: u64 = 5;

/// Asserts that `steps` steps of the two-layer MLP, measured as `heap`, allocated nothing
/// on a host thread. The simulator's device thread stands for the device: its heap use is
/// the device's working memory (a GEMM's packing buffer, one per matrix product), so it is
/// not a host allocation; it is bounded so that a leak there shows too.
#[allow(dead_code)]
#[track_caller]
pub fn assert_mlp_steps_allocate_on_no_host_thread(heap: Split, steps: usize) {
    assert_eq!(
        heap.host, 0,
        "host heap allocations over {steps} steps: {heap:?}"
    );
    assert!(
        heap.device <= MLP_GEMMS_PER_STEP * steps as u64,
        "device-thread heap allocations over {steps} steps: {heap:?}"
    );
}
