//! Failures of HCCL that must stay bounded and visible, on the simulator with a 300 ms
//! timeout: a group size nobody can fill (`u32::MAX` ranks) gives a typed timeout, a short
//! text and no allocation sized by it; error texts name the failing call once; a
//! communicator that timed out or reports an asynchronous error refuses every later
//! collective at once, quoting its first failure.

mod hccl_common;

use ascend_sys::hccl::{HCCL_E_PARA, HCCL_E_TIMEOUT};
use ascendcl::hccl::{Communicator, ReduceOp, RootInfo};
use ascendcl::{Error, Runtime};
use hccl_common::*;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

/// Tracks the largest single allocation while [`largest_allocation_during`] runs.
struct Largest;

static TRACKING: AtomicBool = AtomicBool::new(false);
static LARGEST: AtomicUsize = AtomicUsize::new(0);

fn note(size: usize) {
    if TRACKING.load(Ordering::Relaxed) {
        LARGEST.fetch_max(size, Ordering::Relaxed);
    }
}

// SAFETY: forwards to the system allocator; the bookkeeping is two atomics (no
// allocation, no re-entrancy).
unsafe impl GlobalAlloc for Largest {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note(new_size);
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Largest = Largest;

/// The result of `f` and the largest allocation (bytes, any thread) while it ran.
fn largest_allocation_during<R>(f: impl FnOnce() -> R) -> (R, usize) {
    LARGEST.store(0, Ordering::SeqCst);
    TRACKING.store(true, Ordering::SeqCst);
    let r = f();
    TRACKING.store(false, Ordering::SeqCst);
    (r, LARGEST.load(Ordering::SeqCst))
}

const TIMEOUT: Duration = Duration::from_millis(300);

fn rt() -> Runtime {
    runtime_with(FOUR_A2, Some(TIMEOUT.as_millis() as u64))
}

#[test]
fn a_group_nobody_can_fill_times_out_with_a_short_text_and_small_allocations() {
    let _leaks = LeakCheck::start(rt());
    let dev = rt().device(0).unwrap();
    for (nranks, count) in [(u32::MAX, "4294967294"), (10_000_000, "9999999")] {
        let root = RootInfo::new(&dev).unwrap();
        let (r, largest) =
            largest_allocation_during(|| Communicator::from_root_info(&dev, &root, nranks, 0));
        let e = r.unwrap_err();
        assert!(is_hccl(&e, "HcclCommInitRootInfo", HCCL_E_TIMEOUT), "{e}");
        let text = e.to_string();
        assert!(
            text.contains(&format!(
                "rank(s) [1, 2, 3, 4, ... 4 of {count}] did not join"
            )),
            "{text}"
        );
        assert!(text.len() < 600, "{} bytes: {text}", text.len());
        // Before the fix, the meeting was sized by nranks (16 bytes a rank).
        assert!(largest < 64 * 1024, "an allocation of {largest} bytes");
        expected_report("did not join");
    }
}

#[test]
fn an_error_text_names_the_failing_call_once() {
    let _leaks = LeakCheck::start(rt());
    let comms = Communicator::init_all(&devices(rt(), &[0, 1])).unwrap();
    let results = on_ranks(&comms, |comm, stream| {
        all_reduce_zeros(comm, stream, 4 + comm.rank() as usize)
    });
    for r in &results {
        let e = r.as_ref().unwrap_err();
        assert!(is_hccl(e, "HcclAllReduce", HCCL_E_PARA), "{e}");
        let text = e.to_string();
        assert_eq!(text.matches("failed with").count(), 1, "{text}");
        assert_eq!(text.matches("HCCL_E_PARA").count(), 1, "{text}");
        assert!(
            text.starts_with(
                "HcclAllReduce failed with HCCL_E_PARA (1): parameter error; collective #0"
            ),
            "{text}"
        );
    }
    // A disagreement all ranks saw leaves the communicators usable.
    assert!(comms.iter().all(|c| c.failure().is_none()));
    expected_report("the ranks disagree");
}

#[test]
fn a_timed_out_communicator_refuses_later_collectives_at_once() {
    let _leaks = LeakCheck::start(rt());
    let comms = Communicator::init_all(&devices(rt(), &[0, 1])).unwrap();
    // Rank 1 does not come to the first collective.
    let first = on_ranks(&comms[..1], |comm, stream| {
        all_reduce_zeros(comm, stream, 4)
    });
    let e = first[0].as_ref().unwrap_err();
    assert!(is_hccl(e, "HcclAllReduce", HCCL_E_TIMEOUT), "{e}");
    assert_eq!(comms[0].failure(), Some(e));
    expected_report("did not call it");
    // Both ranks now call: rank 0 refuses without calling HCCL (no wait for a timeout
    // again); rank 1 meets the collective rank 0 gave up on and fails at once too.
    let calls = |api| ascend_sim::call_count(api);
    let (reduces, barriers) = (calls("HcclAllReduce"), calls("HcclBarrier"));
    let later = on_ranks(&comms, |comm, stream| {
        let r = all_reduce_zeros(comm, stream, 4);
        (r, comm.barrier(stream))
    });
    assert_eq!(
        calls("HcclAllReduce"),
        reduces + 1,
        "only rank 1 called HCCL"
    );
    assert_eq!(calls("HcclBarrier"), barriers, "neither rank called HCCL");
    match &later[0].0 {
        Err(Error::CommunicatorFailed { rank: 0, first }) => {
            assert!(is_hccl(first, "HcclAllReduce", HCCL_E_TIMEOUT), "{first}")
        }
        other => panic!("{other:?}"),
    }
    let text = later[0].0.as_ref().unwrap_err().to_string();
    assert!(
        text.contains("drop it and create a new one") && text.contains("did not call it"),
        "{text}"
    );
    let e = later[1].0.as_ref().unwrap_err();
    assert!(is_hccl(e, "HcclAllReduce", HCCL_E_TIMEOUT), "{e}");
    for (rank, (_, barrier)) in later.iter().enumerate() {
        assert!(
            matches!(barrier, Err(Error::CommunicatorFailed { .. })),
            "rank {rank}: {barrier:?}"
        );
    }
    expected_report("did not call it");
    // Recovery: new communicators work.
    drop(comms);
    let comms = Communicator::init_all(&devices(rt(), &[0, 1])).unwrap();
    let ok = barrier_on_ranks(&comms);
    assert!(ok.iter().all(Result::is_ok), "{ok:?}");
}

#[test]
fn an_asynchronous_error_fails_the_next_collective_at_once() {
    let _leaks = LeakCheck::start(rt());
    let comms = Communicator::init_all(&devices(rt(), &[0, 1])).unwrap();
    let results = on_ranks(&comms, |comm, stream| {
        let (send, mut recv) = all_reduce_with_rank_1_held(comm, stream, 2 * TIMEOUT);
        let synced = stream.synchronize();
        let next = comm.all_reduce(&send, &mut recv, ReduceOp::Sum, stream);
        (synced, next)
    });
    for (rank, (synced, next)) in results.iter().enumerate() {
        assert!(synced.is_err(), "rank {rank}");
        match next {
            Err(Error::CommunicatorFailed { first, .. }) => assert!(
                is_hccl(first, "HcclGetCommAsyncError", HCCL_E_TIMEOUT),
                "rank {rank}: {first}"
            ),
            other => panic!("rank {rank}: {other:?}"),
        }
    }
    assert!(comms.iter().all(|c| c.failure().is_some()));
    expected_report("did not reach it");
}
