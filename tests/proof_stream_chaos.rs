//! Property: random interleavings of streams created, used and dropped on several
//! threads (a stream may be abandoned by one thread and dropped by another while its work
//! is queued), shared tensors written, transformed and read across them, briefly held
//! streams, one injected fault at a random call of a random runtime function, and drops
//! in random order. Checked in every case:
//! * no value is read early: every `Ok` download equals the value of the last successful
//!   update of the tensor (updates are serialised by the tensor's mutex, so that order
//!   is the program's order);
//! * the simulator's sanitizer reports nothing (no memory freed under queued work);
//! * every leak is counted: what the simulator still holds afterwards is exactly what
//!   `Device::leaks` added.
//!
//! One `#[test]`: faults are process-global. [`CASES`] cases.

mod common;

use ascendcl::{DeviceTensor, Stream, mish_inplace};
use common::chaos::{self, CHECKED, FAILED, LEAKED};
use common::*;
use ndarray::Array1;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use std::sync::Mutex;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// Cases run (bounded: each is a few tens of milliseconds on the simulator).
const CASES: u32 = 400;
const THREADS: usize = 2;
const TENSORS: usize = 3;
const N: usize = 64;

/// Runtime functions a fault is injected into (at a random call).
const FAULTS: &[&str] = &[
    "aclrtSynchronizeStream",
    "aclrtRecordEvent",
    "aclrtStreamWaitEvent",
    "aclrtCreateEvent",
    "aclrtMemcpyAsync",
    "aclrtMemcpy",
    "aclrtMalloc",
    "aclrtMallocHost",
    "aclrtFree",
    "aclrtFreeHost",
    "aclrtCreateStream",
    "aclrtDestroyStream",
    "aclrtDestroyEvent",
    "aclnnInplaceMish",
];

#[derive(Debug, Clone)]
enum Op {
    /// A new stream for this thread.
    NewStream,
    /// Uploads `value` into tensor `t` on stream `s`.
    Write { t: usize, s: usize, value: i8 },
    /// `mish_inplace` of tensor `t` on stream `s`.
    Mish { t: usize, s: usize },
    /// Downloads tensor `t` on stream `s` and checks it.
    Read { t: usize, s: usize },
    /// Holds stream `s` for a moment (released by a timer thread).
    Hold { s: usize },
    /// Hands stream `s` to the shared graveyard (another thread may drop it).
    Abandon { s: usize },
    /// Drops every stream in the graveyard on this thread.
    Reap,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        1 => Just(Op::NewStream),
        3 => (0..TENSORS, 0..4usize, -2i8..4).prop_map(|(t, s, value)| Op::Write { t, s, value }),
        3 => (0..TENSORS, 0..4usize).prop_map(|(t, s)| Op::Mish { t, s }),
        3 => (0..TENSORS, 0..4usize).prop_map(|(t, s)| Op::Read { t, s }),
        2 => (0..4usize).prop_map(|s| Op::Hold { s }),
        1 => (0..4usize).prop_map(|s| Op::Abandon { s }),
        1 => Just(Op::Reap),
    ]
}

#[derive(Debug, Clone)]
struct Case {
    threads: Vec<Vec<Op>>,
    /// `(function, call number from the start of the case)`, or none.
    fault: Option<(usize, u64)>,
    /// The order in which the tensors are dropped at the end.
    drop_order: Vec<usize>,
}

fn case() -> impl Strategy<Value = Case> {
    (
        prop::collection::vec(prop::collection::vec(op(), 4..14), THREADS),
        prop::option::weighted(0.8, (0..FAULTS.len(), 1u64..24)),
        Just((0..TENSORS).collect::<Vec<_>>()).prop_shuffle(),
    )
        .prop_map(|(threads, fault, drop_order)| Case {
            threads,
            fault,
            drop_order,
        })
}

fn mish1(x: f32) -> f32 {
    x * (1.0 + x.exp()).ln().tanh()
}

/// A shared tensor and the value all its elements have after its last successful update
/// (`None`: unknown, after a failed one).
struct Shared {
    tensor: Option<DeviceTensor<f32>>,
    value: Option<f32>,
}

/// One thread's program; returns the first wrong read, if any.
fn run_thread(
    dev: &ascendcl::Device,
    ops: &[Op],
    tensors: &[Mutex<Shared>],
    graveyard: &Mutex<Vec<Stream>>,
) -> Result<(), String> {
    let mut streams: Vec<Stream> = Vec::new();
    for op in ops {
        let stream = |s: usize, streams: &mut Vec<Stream>| -> Option<Stream> {
            if streams.is_empty() {
                streams.push(dev.stream().ok()?);
            }
            Some(streams[s % streams.len()].clone())
        };
        match *op {
            Op::NewStream => {
                if let Ok(s) = dev.stream() {
                    streams.push(s);
                }
            }
            Op::Write { t, s, value } => {
                let Some(st) = stream(s, &mut streams) else {
                    continue;
                };
                let mut sh = tensors[t].lock().unwrap();
                let v = f32::from(value);
                let Some(tensor) = sh.tensor.as_mut() else {
                    continue;
                };
                let ok = tensor
                    .copy_from_array(&st, &Array1::from_elem(N, v))
                    .is_ok();
                FAILED.fetch_add(u64::from(!ok), Ordering::Relaxed);
                sh.value = ok.then_some(v);
            }
            Op::Mish { t, s } => {
                let Some(st) = stream(s, &mut streams) else {
                    continue;
                };
                let mut sh = tensors[t].lock().unwrap();
                let Some(tensor) = sh.tensor.as_mut() else {
                    continue;
                };
                let ok = mish_inplace(tensor, &st).is_ok();
                FAILED.fetch_add(u64::from(!ok), Ordering::Relaxed);
                sh.value = sh.value.filter(|_| ok).map(mish1);
            }
            Op::Read { t, s } => {
                let Some(st) = stream(s, &mut streams) else {
                    continue;
                };
                let sh = tensors[t].lock().unwrap();
                let Some(tensor) = sh.tensor.as_ref() else {
                    continue;
                };
                let got = tensor.to_array::<ndarray::IxDyn>(&st);
                FAILED.fetch_add(u64::from(got.is_err()), Ordering::Relaxed);
                if let (Ok(got), Some(want)) = (got, sh.value) {
                    CHECKED.fetch_add(1, Ordering::Relaxed);
                    if let Some(bad) = got
                        .iter()
                        .find(|g| (**g - want).abs() > 1e-4 * (1.0 + want.abs()))
                    {
                        return Err(format!("tensor {t} read {bad}, expected {want}"));
                    }
                }
            }
            Op::Hold { s } => {
                let Some(st) = stream(s, &mut streams) else {
                    continue;
                };
                if let Some(hold) = ascend_sim::testing::hold_stream(st.as_raw()) {
                    std::thread::spawn(move || {
                        std::thread::sleep(Duration::from_millis(2));
                        drop(hold);
                    });
                }
            }
            Op::Abandon { s } => {
                if !streams.is_empty() {
                    let i = s % streams.len();
                    graveyard.lock().unwrap().push(streams.swap_remove(i));
                }
            }
            Op::Reap => {
                let dead = std::mem::take(&mut *graveyard.lock().unwrap());
                drop(dead);
            }
        }
    }
    Ok(())
}

fn run_case(case: &Case) -> Result<(), TestCaseError> {
    let dev = device(A2);
    let before = ascend_sim::counters();
    let leaks_before = dev.leaks().allocations;
    ascend_sim::clear_last_report();
    let setup = dev.stream().unwrap();
    let tensors: Vec<Mutex<Shared>> = (0..TENSORS)
        .map(|i| {
            let v = i as f32;
            Mutex::new(Shared {
                tensor: Some(DeviceTensor::from_array(&setup, &Array1::from_elem(N, v)).unwrap()),
                value: Some(v),
            })
        })
        .collect();
    setup.synchronize().unwrap();
    drop(setup);
    let graveyard = Mutex::new(Vec::new());
    chaos::arm_faults(FAULTS, case.fault.as_slice());
    let results = chaos::on_threads(&case.threads, |ops| {
        run_thread(&dev, ops, &tensors, &graveyard)
    });
    drop(graveyard);
    let mut tensors: Vec<Option<Mutex<Shared>>> = tensors.into_iter().map(Some).collect();
    for &i in &case.drop_order {
        drop(tensors[i].take());
    }
    chaos::disarm_faults(FAULTS, case.fault.as_slice());
    chaos::threads_passed(results)?;
    // The device's cache keeps dropped blocks: emptying it frees (or leaks, counted)
    // every one.
    dev.empty_cache();
    chaos::no_report()?;
    let after = ascend_sim::counters();
    let leaked = dev.leaks().allocations - leaks_before;
    LEAKED.fetch_add(leaked, Ordering::Relaxed);
    prop_assert_eq!(
        after.allocations - before.allocations,
        leaked,
        "allocations the simulator still holds vs leaks counted"
    );
    Ok(())
}

#[test]
fn random_stream_lifetimes_faults_and_drops() {
    let _serial = LeakCheckFree::start();
    let mut runner = TestRunner::new(Config {
        cases: CASES,
        failure_persistence: None,
        ..Config::default()
    });
    runner
        .run(&case(), |c| run_case(&c))
        .unwrap_or_else(|e| panic!("{e}"));
    let (checked, failed, leaked) = chaos::tallies();
    eprintln!("{CASES} cases: {checked} reads checked, {failed} failed calls, {leaked} leaks");
    assert!(
        checked > 0 && failed > 0,
        "{checked} reads checked, {failed} calls failed"
    );
}

/// This binary's only test; the leak check is the property's own (leaks are expected
/// and compared with the counters), so this only makes sure the runtime exists.
struct LeakCheckFree;

impl LeakCheckFree {
    fn start() -> LeakCheckFree {
        let _ = runtime();
        LeakCheckFree
    }
}
