//! Property: random interleavings of allocations, drops, `empty_cache`, out-of-memory
//! retries and queued work on three streams shared by three threads. Each thread owns
//! three tensor slots; the threads meet in the device's one cache, where blocks are
//! split, merged, reused on their stream at once, emptied and freed while other threads'
//! work is queued (briefly held streams keep it queued). Checked in every case:
//! * every download equals the host's computation of the slot's updates (a block is never
//!   handed out, merged away or freed while queued work still uses it, so no value is
//!   read before its kernel ran, nor overwritten after);
//! * the simulator's sanitizer reports nothing and the racecheck counts no violation;
//! * once everything is dropped and the cache emptied, nothing is allocated or reserved,
//!   the simulator holds no allocation of the case, and nothing leaked.
//!
//! An out-of-memory retry is an `aclrtMalloc` made to fail once (process-wide, so the
//! failed call may be another thread's): the allocator empties the cache and retries; a
//! call that still fails returns a typed error and its slot's value is unknown.

use super::SERIAL;
use crate::common::*;
use ascendcl::{DeviceTensor, Stream, mish_inplace, mish_new};
use ndarray::Array1;
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use std::sync::Mutex;
use std::time::Duration;

/// Cases run.
const CASES: u32 = 128;
const THREADS: usize = 3;
const SLOTS: usize = 3;
const STREAMS: usize = 3;
/// Tensor lengths: small-pool blocks of several size classes and a large-pool one, so
/// that blocks are split and merged in both pools.
const LENS: [usize; 4] = [200, 3000, 16384, 300 << 10];
/// The out-of-memory allocation's length (a 4 MiB block: always a cache miss at first).
const BIG: usize = 900 << 10;

#[derive(Debug, Clone)]
enum Op {
    Upload {
        slot: usize,
        s: usize,
        len: usize,
        seed: u64,
    },
    MishNew {
        src: usize,
        dst: usize,
        s: usize,
    },
    Inplace {
        slot: usize,
        s: usize,
    },
    /// `mish(src) -> dst` through a view of `dst` (no cached descriptor), queued behind
    /// a hold of `s` when both have the same length.
    HeldWrite {
        src: usize,
        dst: usize,
        s: usize,
    },
    Drop {
        slot: usize,
    },
    Read {
        slot: usize,
        s: usize,
    },
    Hold {
        s: usize,
    },
    Sync {
        s: usize,
    },
    EmptyCache,
    OutOfMemory {
        s: usize,
    },
}

fn op() -> impl Strategy<Value = Op> {
    let (slot, s) = (|| 0..SLOTS, || 0..STREAMS);
    prop_oneof![
        6 => (slot(), s(), 0..LENS.len(), any::<u64>())
            .prop_map(|(slot, s, len, seed)| Op::Upload { slot, s, len, seed }),
        3 => (slot(), slot(), s()).prop_map(|(src, dst, s)| Op::MishNew { src, dst, s }),
        3 => (slot(), s()).prop_map(|(slot, s)| Op::Inplace { slot, s }),
        3 => (slot(), slot(), s()).prop_map(|(src, dst, s)| Op::HeldWrite { src, dst, s }),
        6 => slot().prop_map(|slot| Op::Drop { slot }),
        5 => (slot(), s()).prop_map(|(slot, s)| Op::Read { slot, s }),
        4 => s().prop_map(|s| Op::Hold { s }),
        1 => s().prop_map(|s| Op::Sync { s }),
        3 => Just(Op::EmptyCache),
        1 => s().prop_map(|s| Op::OutOfMemory { s }),
    ]
}

fn case() -> impl Strategy<Value = Vec<Vec<Op>>> {
    prop::collection::vec(prop::collection::vec(op(), 12..30), THREADS)
}

fn mish1(x: f32) -> f32 {
    x * (1.0 + x.exp()).ln().tanh()
}

/// A tensor and its expected values (`None`: unknown, after a failed call).
struct Slot {
    tensor: DeviceTensor<f32>,
    want: Option<Vec<f32>>,
}

/// Holds `stream` for a moment: a timer thread releases it, since any thread may wait
/// for the stream meanwhile.
fn hold(stream: &Stream, timers: &Mutex<Vec<std::thread::JoinHandle<()>>>) {
    if let Some(hold) = ascend_sim::testing::hold_stream(stream.as_raw()) {
        let timer = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(4));
            drop(hold);
        });
        timers.lock().unwrap().push(timer);
    }
}

/// `Ok` for success or an out-of-memory error (an injected `aclrtMalloc` failure may hit
/// any thread's allocation); anything else fails the case.
fn allowed<T>(r: ascendcl::Result<T>, what: &str) -> Result<Option<T>, String> {
    match r {
        Ok(v) => Ok(Some(v)),
        Err(e @ ascendcl::Error::Acl { .. }) if e.to_string().contains("aclrtMalloc") => Ok(None),
        Err(e) => Err(format!("{what}: {e}")),
    }
}

fn close(got: &[f32], want: &[f32]) -> bool {
    got.len() == want.len()
        && got
            .iter()
            .zip(want)
            .all(|(g, w)| (g - w).abs() <= 1e-5 * w.abs().max(1.0))
}

fn run_thread(
    dev: &ascendcl::Device,
    ops: &[Op],
    streams: &[Stream],
    timers: &Mutex<Vec<std::thread::JoinHandle<()>>>,
) -> Result<u64, String> {
    let mut slots: Vec<Option<Slot>> = (0..SLOTS).map(|_| None).collect();
    let mut reads = 0;
    for (i, op) in ops.iter().enumerate() {
        match *op {
            Op::Upload { slot, s, len, seed } => {
                let v = values(LENS[len], seed, -3.0, 3.0);
                let t = DeviceTensor::from_array(&streams[s], &Array1::from(v.clone()));
                slots[slot] = allowed(t, "upload")?.map(|tensor| Slot {
                    tensor,
                    want: Some(v),
                });
            }
            Op::MishNew { src, dst, s } => {
                let Some(x) = &slots[src] else { continue };
                let want = x.want.clone().map(|v| v.into_iter().map(mish1).collect());
                let y = allowed(
                    mish_new::<f32, DeviceTensor<f32>>(&x.tensor, &streams[s]),
                    "mish_new",
                )?;
                slots[dst] = y.map(|tensor| Slot { tensor, want });
            }
            Op::Inplace { slot, s } => {
                let Some(x) = &mut slots[slot] else { continue };
                let r = allowed(mish_inplace(&mut x.tensor, &streams[s]), "mish_inplace")?;
                x.want = match r {
                    Some(()) => x.want.take().map(|v| v.into_iter().map(mish1).collect()),
                    None => None,
                };
            }
            Op::HeldWrite { src, dst, s } => {
                if src == dst {
                    continue;
                }
                let [Some(x), Some(y)] = slots.get_disjoint_mut([src, dst]).unwrap() else {
                    continue;
                };
                let n = x.tensor.len();
                if y.tensor.len() != n {
                    continue;
                }
                hold(&streams[s], timers);
                let out = y.tensor.view_mut().slice(0, 0, n, 1).unwrap();
                let r = allowed(ascendcl::mish(&x.tensor, out, &streams[s]), "mish")?;
                y.want = match r {
                    Some(()) => x.want.clone().map(|v| v.into_iter().map(mish1).collect()),
                    None => None,
                };
            }
            Op::Drop { slot } => slots[slot] = None,
            Op::Read { slot, s } => {
                let Some(Slot {
                    tensor,
                    want: Some(want),
                }) = &slots[slot]
                else {
                    continue;
                };
                let got = tensor.to_array::<ndarray::Ix1>(&streams[s]);
                let got = got.map_err(|e| format!("op {i}: download: {e}"))?;
                if !close(got.as_slice().unwrap(), want) {
                    return Err(format!(
                        "op {i} ({op:?}): a value read before its kernel ran, or overwritten"
                    ));
                }
                reads += 1;
            }
            Op::Hold { s } => hold(&streams[s], timers),
            Op::Sync { s } => streams[s].synchronize().map_err(|e| format!("sync: {e}"))?,
            Op::EmptyCache => dev.empty_cache(),
            Op::OutOfMemory { s } => {
                ascend_sim::set_fault("aclrtMalloc", 1).unwrap();
                let big = DeviceTensor::<f32>::zeros(&streams[s], [BIG]);
                ascend_sim::set_fault("aclrtMalloc", 0).unwrap();
                drop(allowed(big, "out-of-memory retry")?);
            }
        }
    }
    Ok(reads)
}

fn run_case(threads: &[Vec<Op>], reads: &Mutex<u64>) -> Result<(), TestCaseError> {
    let dev = device(A2);
    dev.set_caching(true);
    dev.empty_cache();
    let start = dev.memory_stats();
    prop_assert_eq!((start.allocated, start.reserved), (0, 0), "before the case");
    let before = ascend_sim::counters();
    let leaks = dev.leaks();
    let races = ascend_sim::racecheck::violations();
    ascend_sim::clear_last_report();
    let streams: Vec<Stream> = (0..STREAMS).map(|_| dev.stream().unwrap()).collect();
    let timers = Mutex::new(Vec::new());
    let results: Vec<Result<u64, String>> = std::thread::scope(|sc| {
        let handles: Vec<_> = threads
            .iter()
            .map(|ops| sc.spawn(|| run_thread(&dev, ops, &streams, &timers)))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    ascend_sim::set_fault("aclrtMalloc", 0).unwrap();
    for t in std::mem::take(&mut *timers.lock().unwrap()) {
        t.join().unwrap();
    }
    for r in results {
        *reads.lock().unwrap() += r.map_err(TestCaseError::fail)?;
    }
    drop(streams);
    dev.empty_cache();
    let report = ascend_sim::last_report();
    prop_assert!(report.is_none(), "simulator report: {report:?}");
    prop_assert_eq!(ascend_sim::racecheck::violations(), races, "races");
    let stats = dev.memory_stats();
    prop_assert_eq!((stats.allocated, stats.reserved), (0, 0), "{:?}", stats);
    prop_assert_eq!(dev.leaks(), leaks, "nothing leaked");
    let after = ascend_sim::counters();
    prop_assert_eq!(after.allocations, before.allocations, "allocations held");
    Ok(())
}

#[test]
fn random_interleavings_of_allocation_emptying_and_queued_work_on_threads() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let _ = runtime();
    assert!(ascend_sim::racecheck::enabled(), "the racecheck is on");
    let mut runner = TestRunner::new_with_rng(
        Config {
            cases: CASES,
            failure_persistence: None,
            ..Config::default()
        },
        TestRng::from_seed(RngAlgorithm::ChaCha, &[35; 32]),
    );
    let reads = Mutex::new(0);
    runner
        .run(&case(), |c| run_case(&c, &reads))
        .unwrap_or_else(|e| panic!("{e}"));
    let reads = *reads.lock().unwrap();
    eprintln!("{CASES} cases of {THREADS} threads: {reads} downloads checked");
    assert!(reads > 0, "no download checked");
}
