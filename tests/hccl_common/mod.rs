//! Shared helpers of the `hccl_*` test binaries: the simulator with several devices, one
//! thread per rank, host computations of the collectives, and leak checks that include
//! HCCL's communicators.
#![allow(dead_code)]

use ascendcl::hccl::{Communicator, ReduceOp};
use ascendcl::{Device, DeviceTensor, Element, Error, Runtime, Stream};
use ndarray::Array1;
use std::sync::Once;

#[path = "../common/gate.rs"]
mod gate;
// Only the gathered binaries (`tests/<binary>/main.rs`) take `shared`: a binary of its
// own has its process to itself.
#[allow(unused_imports)]
pub use gate::{Gate, serial, shared};
use std::time::Duration;

static ENV: Once = Once::new();

/// The simulator runtime with `devices` (SoC names, comma-separated) and, when given, the
/// HCCL timeout; the environment is set once, before the simulator's `aclInit`.
pub fn runtime_with(devices: &str, timeout_ms: Option<u64>) -> Runtime {
    ENV.call_once(|| {
        // SAFETY: runs once, before the simulator (the only reader of these variables) is
        // initialised; every test of the binary reaches the simulator through here.
        unsafe {
            std::env::set_var("ASCEND_SIM_DEVICES", devices);
            if let Some(ms) = timeout_ms {
                std::env::set_var("ASCEND_SIM_HCCL_TIMEOUT_MS", ms.to_string());
            }
        }
    });
    Runtime::simulator().expect("simulator runtime")
}

/// Four Atlas A2 devices.
pub const FOUR_A2: &str = "Ascend910B4,Ascend910B4,Ascend910B4,Ascend910B4";

pub fn devices(rt: Runtime, ids: &[i32]) -> Vec<Device> {
    ids.iter().map(|&i| rt.device(i).expect("device")).collect()
}

/// Runs `f(comm, stream)` on one thread per rank (each with a stream of its device) and
/// returns the results in rank order.
pub fn on_ranks<R: Send>(
    comms: &[Communicator],
    f: impl Fn(&Communicator, &Stream) -> R + Sync,
) -> Vec<R> {
    std::thread::scope(|s| {
        let f = &f;
        let handles: Vec<_> = comms
            .iter()
            .map(|comm| {
                s.spawn(move || {
                    let stream = comm.device().stream().expect("stream");
                    f(comm, &stream)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("rank thread"))
            .collect()
    })
}

/// Every rank's barrier, each stream synchronised after it: a group that is still usable
/// gives `Ok` on every rank.
pub fn barrier_on_ranks(comms: &[Communicator]) -> Vec<Result<(), Error>> {
    on_ranks(comms, |comm, stream| {
        comm.barrier(stream).and_then(|()| stream.synchronize())
    })
}

/// On one rank's thread: an all-reduce (sum) of four zeros, queued while rank 1's stream
/// is held for `hold`, so that rank 1 reaches the collective that long after the others.
/// Returns the send and receive buffers.
pub fn all_reduce_with_rank_1_held(
    comm: &Communicator,
    stream: &Stream,
    hold: Duration,
) -> (DeviceTensor<f32>, DeviceTensor<f32>) {
    let held =
        (comm.rank() == 1).then(|| ascend_sim::testing::hold_stream(stream.as_raw()).unwrap());
    let (send, mut recv) = (zeros(stream, 4), zeros(stream, 4));
    comm.all_reduce(&send, &mut recv, ReduceOp::Sum, stream)
        .unwrap();
    if let Some(held) = held {
        std::thread::sleep(hold);
        held.release();
    }
    (send, recv)
}

/// An all-reduce (sum) of `n` zeros into `n` zeros, on one rank's thread.
pub fn all_reduce_zeros(comm: &Communicator, stream: &Stream, n: usize) -> Result<(), Error> {
    comm.all_reduce(
        &zeros(stream, n),
        &mut zeros(stream, n),
        ReduceOp::Sum,
        stream,
    )
}

/// `n` zeros (f32) on `stream`'s device.
pub fn zeros(stream: &Stream, n: usize) -> DeviceTensor<f32> {
    DeviceTensor::zeros(stream, [n]).unwrap()
}

pub fn upload<T: Element>(stream: &Stream, v: &[T]) -> DeviceTensor<T> {
    DeviceTensor::from_array(stream, &Array1::from_vec(v.to_vec())).expect("upload")
}

pub fn download<T: Element>(stream: &Stream, t: &DeviceTensor<T>) -> Vec<T> {
    t.to_array::<ndarray::IxDyn>(stream)
        .expect("download")
        .into_iter()
        .collect()
}

/// `e` is HCCL's `code` from `api`.
pub fn is_hccl(e: &Error, api: &str, code: u32) -> bool {
    matches!(e, Error::Hccl { api: a, code: c, .. } if *a == api && *c == code)
}

/// The simulator reported the failure a test provoked (a finding); it is then forgotten so
/// that the leak check sees no other.
#[track_caller]
pub fn expected_report(fragment: &str) {
    let report = ascend_sim::last_report().unwrap_or_default();
    assert!(report.contains(fragment), "{report}");
    ascend_sim::clear_last_report();
}

/// `a op b` as the simulated HCCL computes it: in f32, rounded to the element type.
pub fn combine<T: Element>(a: T, b: T, op: ReduceOp) -> T {
    let (a, b) = (a.to_f32(), b.to_f32());
    T::from_f32(match op {
        ReduceOp::Sum => a + b,
        ReduceOp::Prod => a * b,
        ReduceOp::Max => a.max(b),
        ReduceOp::Min => a.min(b),
    })
}

/// Element `i` of every rank's `inputs`, combined in rank order.
pub fn reduce<T: Element>(inputs: &[Vec<T>], i: usize, op: ReduceOp) -> T {
    inputs[1..]
        .iter()
        .fold(inputs[0][i], |acc, x| combine(acc, x[i], op))
}

/// The first difference of `got` from `want`, bit for bit (NaN equals itself).
pub fn difference<T: Element>(got: &[T], want: &[T]) -> Option<String> {
    if got.len() != want.len() {
        return Some(format!("{} elements, want {}", got.len(), want.len()));
    }
    (0..got.len())
        .find(|&i| got[i].to_bits_u32() != want[i].to_bits_u32())
        .map(|i| format!("element {i}: got {:?}, want {:?}", got[i], want[i]))
}

/// Bitwise equality, with the first difference in the message.
#[track_caller]
pub fn assert_bits<T: Element>(got: &[T], want: &[T], what: &str) {
    if let Some(d) = difference(got, want) {
        panic!("{what}: {d}");
    }
}

/// Deterministic values in `[lo, hi)`.
pub fn values<T: Element>(n: usize, seed: u64, lo: f32, hi: f32) -> Vec<T> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            T::from_f32(lo + (hi - lo) * ((s >> 40) as f32 / (1u64 << 24) as f32))
        })
        .collect()
}

/// Checks that the simulator's objects and HCCL's communicators and queued collectives are
/// back where they were, and that the simulator reported nothing. It holds the binary's
/// [`Gate`] exclusive (every other test holds it shared: [`shared`]).
pub struct LeakCheck {
    before: [u64; 5],
    _guard: Gate,
}

impl LeakCheck {
    pub fn start(rt: Runtime) -> LeakCheck {
        let guard = serial();
        let _ = rt;
        ascend_sim::clear_last_report();
        LeakCheck {
            before: ascend_sim::counters().objects(),
            _guard: guard,
        }
    }
}

impl Drop for LeakCheck {
    fn drop(&mut self) {
        if std::thread::panicking() {
            return;
        }
        assert_eq!(
            ascend_sim::counters().objects(),
            self.before,
            "simulator objects leaked"
        );
        assert_eq!(
            ascend_sim::hccl::counters(),
            ascend_sim::hccl::HcclCounters::default(),
            "HCCL objects leaked"
        );
        if let Some(report) = ascend_sim::last_report() {
            panic!("simulator report: {report}");
        }
    }
}
