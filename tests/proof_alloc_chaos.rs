//! Property: the caching allocator under churn. Two threads share six tensor slots and
//! three streams; each runs a random program of allocations (uploads, zeros, the
//! allocating variants `mish_new` and `add_new`), drops, launches (`mish`,
//! `mish_inplace`, `add`, device-to-device `copy`), downloads, briefly held streams (so
//! blocks are dropped while queued work still uses them), streams replaced (a dropped
//! stream's blocks stay cached with its uses) and `empty_cache` calls racing the other
//! thread, while up to two faults are injected at random calls of runtime and operator
//! functions. Checked in every case:
//! * every `Ok` download equals the host computation of the slot's last successful
//!   updates (a block handed to a new tensor is never still written by old work, and a
//!   reused block's old contents never show through a later upload or kernel);
//! * the simulator's sanitizer reports nothing and the racecheck counts no violation (no
//!   block is reused, split or freed while queued work on another stream may touch it);
//! * every byte is accounted for: once everything is dropped and the cache emptied (in
//!   half the cases first with work queued behind held streams on every tensor, and with
//!   a fault in the teardown in most), `memory_stats` shows nothing allocated or
//!   reserved, the allocations the simulator still holds and their bytes are exactly
//!   what `Device::leaks` added, and so are its descriptors, executors and events, up to
//!   the release errors counted.
//!
//! One `#[test]`: faults, counters and reports are process-global. [`CASES`] cases from a
//! fixed seed.

mod common;

use ascendcl::{DeviceTensor, Stream, add, add_new, copy, mish, mish_inplace, mish_new};
use common::chaos::{self, CHECKED, FAILED, LEAKED};
use common::*;
use ndarray::Array1;
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

/// Cases run (each takes milliseconds on the simulator).
const CASES: u32 = 32;
const THREADS: usize = 2;
const SLOTS: usize = 6;
const STREAMS: usize = 3;
/// Tensor lengths: three size classes of the small pool, so that blocks are split
/// (a 2048-element block serves the smaller ones) and merged back.
const LENS: [usize; 4] = [64, 100, 700, 2048];

/// Cache hits and splits over all cases (asserted non-zero, as are the tallies of
/// [`chaos`]).
static HITS: AtomicU64 = AtomicU64::new(0);
static SPLITS: AtomicU64 = AtomicU64::new(0);

/// Functions a fault is injected into (at a random call).
const FAULTS: &[&str] = &[
    "aclrtMalloc",
    "aclrtFree",
    "aclrtSynchronizeStream",
    "aclrtSynchronizeEvent",
    "aclrtRecordEvent",
    "aclrtStreamWaitEvent",
    "aclrtCreateEvent",
    "aclrtDestroyEvent",
    "aclrtMemset",
    "aclrtMallocHost",
    "aclCreateScalar",
    "aclrtMemcpyAsync",
    "aclrtMemcpy",
    "aclrtCreateStream",
    "aclrtDestroyStream",
    "aclCreateTensor",
    "aclDestroyTensor",
    "aclnnMish",
    "aclnnMishGetWorkspaceSize",
    "aclnnInplaceMish",
    "aclnnAdd",
    "aclnnAddGetWorkspaceSize",
];

#[derive(Debug, Clone)]
enum Op {
    /// Uploads `LENS[len]` values from `seed` into a new tensor in `slot`.
    Upload {
        slot: usize,
        s: usize,
        len: usize,
        seed: u64,
    },
    /// A new zero tensor in `slot`.
    Zeros { slot: usize, s: usize, len: usize },
    /// Drops the tensor in `slot`.
    Drop { slot: usize },
    /// `mish(src) -> dst` (in place when they are the same slot), on the first half of
    /// each when `half`.
    Mish {
        src: usize,
        dst: usize,
        s: usize,
        half: bool,
    },
    /// `dst = mish_new(src)`.
    MishNew { src: usize, dst: usize, s: usize },
    /// `add(a, b, alpha) -> dst` into the existing tensor, or `dst = add_new(..)`.
    Add {
        a: usize,
        b: usize,
        dst: usize,
        s: usize,
        alloc: bool,
    },
    /// Device-to-device `copy(src) -> dst`.
    Copy { src: usize, dst: usize, s: usize },
    /// Downloads `slot` and checks it.
    Read { slot: usize, s: usize },
    /// Holds stream `s` for a moment (released by a timer thread).
    Hold { s: usize },
    /// Replaces this thread's stream `s` with a new one (the old one is dropped once the
    /// other thread lets go of it too).
    Renew { s: usize },
    /// `Device::empty_cache`.
    EmptyCache,
}

fn op() -> impl Strategy<Value = Op> {
    let slot = || 0..SLOTS;
    let s = || 0..STREAMS;
    prop_oneof![
        3 => (slot(), s(), 0..LENS.len(), any::<u64>())
            .prop_map(|(slot, s, len, seed)| Op::Upload { slot, s, len, seed }),
        1 => (slot(), s(), 0..LENS.len()).prop_map(|(slot, s, len)| Op::Zeros { slot, s, len }),
        3 => slot().prop_map(|slot| Op::Drop { slot }),
        3 => (slot(), slot(), s(), any::<bool>())
            .prop_map(|(src, dst, s, half)| Op::Mish { src, dst, s, half }),
        3 => (slot(), slot(), s()).prop_map(|(src, dst, s)| Op::MishNew { src, dst, s }),
        3 => (slot(), slot(), slot(), s(), any::<bool>())
            .prop_map(|(a, b, dst, s, alloc)| Op::Add { a, b, dst, s, alloc }),
        2 => (slot(), slot(), s()).prop_map(|(src, dst, s)| Op::Copy { src, dst, s }),
        4 => (slot(), s()).prop_map(|(slot, s)| Op::Read { slot, s }),
        2 => s().prop_map(|s| Op::Hold { s }),
        1 => s().prop_map(|s| Op::Renew { s }),
        1 => Just(Op::EmptyCache),
    ]
}

#[derive(Debug, Clone)]
struct Case {
    /// The slots' first tensors (`LENS` index, seed), uploaded before the faults are armed.
    initial: Vec<(usize, u64)>,
    threads: Vec<Vec<Op>>,
    /// `(function, call number from the start of the case)`: up to two faults.
    faults: Vec<(usize, u64)>,
    /// A fault in the teardown (`END_FAULTS` index, call number): the final drops and
    /// `empty_cache`, where a failed drain or free leaks memory.
    end_fault: Option<(usize, u64)>,
    /// Whether the teardown empties the cache once while the streams are still alive (a
    /// failed drain there leaks blocks whose work cannot be proved finished).
    empty_first: bool,
}

/// Functions of the teardown a fault is injected into.
const END_FAULTS: &[&str] = &[
    "aclrtSynchronizeStream",
    "aclrtFree",
    "aclDestroyTensor",
    "aclrtDestroyStream",
    "aclrtRecordEvent",
];

fn case() -> impl Strategy<Value = Case> {
    (
        prop::collection::vec((0..LENS.len(), any::<u64>()), SLOTS),
        prop::collection::vec(prop::collection::vec(op(), 12..30), THREADS),
        prop::collection::vec((0..FAULTS.len(), 1u64..24), 0..=2),
        prop::option::weighted(
            0.75,
            (
                // Mostly a failed drain: the leak paths of the teardown.
                prop_oneof![3 => Just(0usize), 1 => 1..END_FAULTS.len()],
                1u64..5,
            ),
        ),
        any::<bool>(),
    )
        .prop_map(|(initial, threads, mut faults, end_fault, empty_first)| {
            // One fault per function: arming it twice would keep only the second.
            faults.dedup_by_key(|f| f.0);
            Case {
                initial,
                threads,
                faults,
                end_fault,
                empty_first,
            }
        })
}

const ALPHA: f32 = 0.5;

fn mish1(x: f32) -> f32 {
    x * (1.0 + x.exp()).ln().tanh()
}

/// A tensor and the values it holds after its last successful update (`None`: unknown,
/// after a failed one).
struct Slot {
    tensor: DeviceTensor<f32>,
    want: Option<Vec<f32>>,
}

type Slots = [Mutex<Option<Slot>>];

/// Locks the distinct slots of `ids` in index order (no lock-order inversion between the
/// threads).
fn lock<'a>(slots: &'a Slots, ids: &[usize]) -> Vec<(usize, MutexGuard<'a, Option<Slot>>)> {
    let mut ids = ids.to_vec();
    ids.sort_unstable();
    ids.dedup();
    ids.into_iter()
        .map(|i| (i, slots[i].lock().unwrap_or_else(|e| e.into_inner())))
        .collect()
}

fn get<'g, 'a>(
    held: &'g mut [(usize, MutexGuard<'a, Option<Slot>>)],
    i: usize,
) -> &'g mut Option<Slot> {
    let (_, g) = held.iter_mut().find(|(j, _)| *j == i).expect("locked");
    g
}

fn count<T>(r: &ascendcl::Result<T>) {
    FAILED.fetch_add(u64::from(r.is_err()), Ordering::Relaxed);
}

/// One thread's program; returns the first wrong download, if any.
fn run_thread(
    dev: &ascendcl::Device,
    ops: &[Op],
    slots: &Slots,
    mut streams: Vec<Stream>,
    timers: &Mutex<Vec<std::thread::JoinHandle<()>>>,
) -> Result<(), String> {
    for op in ops {
        match *op {
            Op::Upload { slot, s, len, seed } => {
                let v = values(LENS[len], seed, -3.0, 3.0);
                let mut g = lock(slots, &[slot]);
                let t = get(&mut g, slot);
                // The old tensor is dropped first: its block may serve the new one.
                *t = None;
                let r = DeviceTensor::from_array(&streams[s], &Array1::from(v.clone()));
                count(&r);
                *t = r.ok().map(|tensor| Slot {
                    tensor,
                    want: Some(v),
                });
            }
            Op::Zeros { slot, s, len } => {
                let mut g = lock(slots, &[slot]);
                let t = get(&mut g, slot);
                *t = None;
                let r = DeviceTensor::<f32>::zeros(&streams[s], [LENS[len]]);
                count(&r);
                *t = r.ok().map(|tensor| Slot {
                    tensor,
                    want: Some(vec![0.0; LENS[len]]),
                });
            }
            Op::Drop { slot } => {
                let mut g = lock(slots, &[slot]);
                *get(&mut g, slot) = None;
            }
            Op::Mish { src, dst, s, half } => {
                let mut g = lock(slots, &[src, dst]);
                let st = &streams[s];
                if src == dst {
                    let Some(d) = get(&mut g, dst) else { continue };
                    let m = d.tensor.len() / if half { 2 } else { 1 };
                    let r = if half {
                        let v = d.tensor.view_mut().slice(0, 0, m, 1);
                        v.and_then(|v| mish_inplace(v, st))
                    } else {
                        mish_inplace(&mut d.tensor, st)
                    };
                    count(&r);
                    let src_want = d.want.clone();
                    d.want = updated(d.want.take(), &r, || mish_prefix(src_want.as_deref(), m));
                    continue;
                }
                let Some(x) = get(&mut g, src).take() else {
                    continue;
                };
                if let Some(d) = get(&mut g, dst) {
                    let m = x.tensor.len() / if half { 2 } else { 1 };
                    // A prefix of each is a view without a cached descriptor, so its block
                    // may be split and reused while the kernel is queued.
                    let r = if half {
                        x.tensor
                            .view()
                            .slice(0, 0, m, 1)
                            .and_then(|xv| mish(xv, d.tensor.view_mut().slice(0, 0, m, 1)?, st))
                    } else {
                        mish(&x.tensor, &mut d.tensor, st)
                    };
                    count(&r);
                    let old = d.want.take();
                    d.want = updated(old.clone(), &r, || {
                        let mut w = old?;
                        let head = mish_prefix(x.want.as_deref(), m)?;
                        w[..m].copy_from_slice(&head[..m]);
                        Some(w)
                    });
                }
                *get(&mut g, src) = Some(x);
            }
            Op::MishNew { src, dst, s } => {
                let mut g = lock(slots, &[src, dst]);
                let Some(x) = get(&mut g, src) else { continue };
                let r = mish_new(&x.tensor, &streams[s]);
                count(&r);
                let want = x.want.clone().map(mish_all);
                if let Ok(tensor) = r {
                    *get(&mut g, dst) = Some(Slot { tensor, want });
                }
            }
            Op::Add {
                a,
                b,
                dst,
                s,
                alloc,
            } => {
                let mut g = lock(slots, &[a, b, dst]);
                // The inputs leave their slots for the launch (`a == b`: one tensor).
                let xa = get(&mut g, a).take();
                let xb = if a == b { None } else { get(&mut g, b).take() };
                let inputs = match (&xa, if a == b { &xa } else { &xb }) {
                    (Some(p), Some(q)) => Some((p, q)),
                    _ => None,
                };
                if let Some((p, q)) = inputs {
                    let sum = match (&p.want, &q.want) {
                        (Some(p), Some(q)) if p.len() == q.len() => {
                            Some(p.iter().zip(q).map(|(p, q)| p + ALPHA * q).collect())
                        }
                        _ => None,
                    };
                    let st = &streams[s];
                    if alloc {
                        let r: ascendcl::Result<DeviceTensor<f32>> =
                            add_new(&p.tensor, &q.tensor, ALPHA, st);
                        count(&r);
                        if let Ok(tensor) = r {
                            *get(&mut g, dst) = Some(Slot { tensor, want: sum });
                        }
                    } else if dst != a
                        && dst != b
                        && let Some(d) = get(&mut g, dst)
                    {
                        let r = add(&p.tensor, &q.tensor, ALPHA, &mut d.tensor, st);
                        count(&r);
                        d.want = updated(d.want.take(), &r, || sum);
                    }
                }
                // Back in their slots, unless `add_new`'s result replaced one of them.
                let back = |g: &mut Vec<_>, i: usize, x: Option<Slot>| {
                    let t = get(g, i);
                    if t.is_none() {
                        *t = x;
                    }
                };
                back(&mut g, a, xa);
                back(&mut g, b, xb);
            }
            Op::Copy { src, dst, s } => {
                if src == dst {
                    continue;
                }
                let mut g = lock(slots, &[src, dst]);
                let Some(x) = get(&mut g, src).take() else {
                    continue;
                };
                if let Some(d) = get(&mut g, dst) {
                    let r = copy(&x.tensor, &mut d.tensor, &streams[s]);
                    count(&r);
                    d.want = updated(d.want.take(), &r, || x.want.clone());
                }
                *get(&mut g, src) = Some(x);
            }
            Op::Read { slot, s } => {
                let mut g = lock(slots, &[slot]);
                let Some(x) = get(&mut g, slot) else { continue };
                let got = x.tensor.to_array::<ndarray::Ix1>(&streams[s]);
                count(&got);
                if let (Ok(got), Some(want)) = (got, &x.want) {
                    CHECKED.fetch_add(1, Ordering::Relaxed);
                    if let Some((i, (g, w))) = got
                        .iter()
                        .zip(want)
                        .enumerate()
                        .find(|(_, (g, w))| (**g - **w).abs() > 1e-4 * (1.0 + w.abs()))
                    {
                        return Err(format!("slot {slot} [{i}] read {g}, expected {w}"));
                    }
                    if got.len() != want.len() {
                        return Err(format!("slot {slot}: {} elements", got.len()));
                    }
                }
            }
            Op::Hold { s } => {
                hold(&streams[s], timers);
            }
            Op::Renew { s } => {
                let r = dev.stream();
                count(&r);
                if let Ok(new) = r {
                    streams[s] = new;
                }
            }
            Op::EmptyCache => dev.empty_cache(),
        }
    }
    Ok(())
}

/// Holds `stream` for a moment: a timer thread (joined at the end of the case) releases
/// it, since this thread may itself wait for the stream.
fn hold(stream: &Stream, timers: &Mutex<Vec<std::thread::JoinHandle<()>>>) {
    if let Some(hold) = ascend_sim::testing::hold_stream(stream.as_raw()) {
        timers.lock().unwrap().push(std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(2));
            drop(hold);
        }));
    }
}

/// The values after a call that updates a slot: `ok()` on success, unchanged after a
/// rejected call (a shape error: nothing was launched), unknown after a failed launch.
fn updated<T>(
    old: Option<Vec<f32>>,
    r: &ascendcl::Result<T>,
    ok: impl FnOnce() -> Option<Vec<f32>>,
) -> Option<Vec<f32>> {
    use ascendcl::Error::*;
    match r {
        Ok(_) => ok(),
        Err(
            ShapeMismatch { .. }
            | NotBroadcastable { .. }
            | RankMismatch { .. }
            | LengthMismatch { .. }
            | InvalidArgument(_),
        ) => old,
        Err(_) => None,
    }
}

/// The mish of the first `m` values; the rest unchanged.
fn mish_prefix(want: Option<&[f32]>, m: usize) -> Option<Vec<f32>> {
    let mut w = want?.to_vec();
    w[..m].iter_mut().for_each(|x| *x = mish1(*x));
    Some(w)
}

fn mish_all(mut v: Vec<f32>) -> Vec<f32> {
    v.iter_mut().for_each(|x| *x = mish1(*x));
    v
}

fn run_case(case: &Case) -> Result<(), TestCaseError> {
    let dev = device(A2);
    dev.empty_cache();
    let start = dev.memory_stats();
    prop_assert_eq!((start.allocated, start.reserved), (0, 0), "before the case");
    let before = ascend_sim::counters();
    let leaks_before = dev.leaks();
    let errors_before = dev.release_errors();
    let races_before = ascend_sim::racecheck::violations();
    ascend_sim::clear_last_report();
    let streams: Vec<Stream> = (0..STREAMS).map(|_| dev.stream().unwrap()).collect();
    let slots: Vec<Mutex<Option<Slot>>> = case
        .initial
        .iter()
        .zip(streams.iter().cycle())
        .map(|(&(len, seed), s)| {
            let v = values(LENS[len], seed, -3.0, 3.0);
            let tensor = DeviceTensor::from_array(s, &Array1::from(v.clone())).unwrap();
            Mutex::new(Some(Slot {
                tensor,
                want: Some(v),
            }))
        })
        .collect();
    let timers = Mutex::new(Vec::new());
    chaos::arm_faults(FAULTS, &case.faults);
    let results = chaos::on_threads(&case.threads, |ops| {
        run_thread(&dev, ops, &slots, streams.clone(), &timers)
    });
    chaos::disarm_faults(FAULTS, &case.faults);
    chaos::arm_faults(END_FAULTS, case.end_fault.as_slice());
    if case.empty_first {
        // Work queued behind held streams on every live tensor, which is then dropped:
        // emptying the cache must wait for it (or leak the blocks when a drain fails).
        for (i, slot) in slots.iter().enumerate() {
            let st = &streams[i % STREAMS];
            if i < STREAMS {
                hold(st, &timers);
            }
            if let Some(x) = slot.lock().unwrap().as_mut() {
                count(&mish_inplace(&mut x.tensor, st));
            }
        }
        drop(slots);
        dev.empty_cache();
    } else {
        drop(slots);
    }
    drop(streams);
    for t in std::mem::take(&mut *timers.lock().unwrap()) {
        t.join().unwrap();
    }
    // Emptying the cache frees (or leaks, counted) every block.
    dev.empty_cache();
    chaos::disarm_faults(END_FAULTS, case.end_fault.as_slice());
    chaos::threads_passed(results)?;
    chaos::no_report()?;
    prop_assert_eq!(ascend_sim::racecheck::violations(), races_before, "races");
    let stats = dev.memory_stats();
    prop_assert_eq!(
        (stats.allocated, stats.reserved),
        (0, 0),
        "allocated and reserved bytes after emptying: {:?}",
        stats
    );
    HITS.fetch_add(stats.cache_hits - start.cache_hits, Ordering::Relaxed);
    SPLITS.fetch_add(stats.splits - start.splits, Ordering::Relaxed);
    let after = ascend_sim::counters();
    let leaks = dev.leaks();
    let leaked = leaks.allocations - leaks_before.allocations;
    LEAKED.fetch_add(leaked, Ordering::Relaxed);
    prop_assert_eq!(
        after.allocations - before.allocations,
        leaked,
        "allocations the simulator still holds vs leaks counted"
    );
    prop_assert_eq!(
        after.allocated_bytes - before.allocated_bytes,
        leaks.bytes - leaks_before.bytes,
        "bytes the simulator still holds vs leaked bytes counted"
    );
    // A descriptor, executor or event whose destroy failed stays alive in the simulator.
    // Some release paths count it as a leaked handle and a release error, others as a
    // release error only: the live handles lie between the leaks counted and the leaks
    // plus the release errors.
    let handles = |c: &ascend_sim::Counters| c.tensors + c.executors + c.events;
    let live = handles(&after) - handles(&before);
    let leaked_handles = leaks.handles - leaks_before.handles;
    let errors = dev.release_errors() - errors_before;
    prop_assert!(
        leaked_handles <= live && live <= leaked_handles + errors,
        "{live} descriptors, executors and events the simulator still holds, \
         {leaked_handles} leaked handles and {errors} release errors counted"
    );
    Ok(())
}

#[test]
fn allocations_drops_and_launches_on_streams_and_threads_with_faults() {
    let _ = runtime();
    assert!(ascend_sim::racecheck::enabled(), "the racecheck is on");
    let mut runner = TestRunner::new_with_rng(
        Config {
            cases: CASES,
            failure_persistence: None,
            ..Config::default()
        },
        TestRng::from_seed(RngAlgorithm::ChaCha, &[25; 32]),
    );
    runner
        .run(&case(), |c| run_case(&c))
        .unwrap_or_else(|e| panic!("{e}"));
    let (checked, failed, leaked) = chaos::tallies();
    let (hits, splits) = (HITS.load(Ordering::Relaxed), SPLITS.load(Ordering::Relaxed));
    eprintln!(
        "{CASES} cases: {checked} downloads checked, {failed} failed calls, {leaked} leaks, \
         {hits} cache hits, {splits} splits"
    );
    assert!(
        checked > 0 && failed > 0 && hits > 0 && splits > 0,
        "{checked} downloads checked, {failed} calls failed, {hits} cache hits, {splits} splits"
    );
}
