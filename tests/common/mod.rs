//! Shared helpers of the `api_*` tests: the simulator set-up, leak checks, input data and
//! the CANN precision standard.
#![allow(dead_code)]

pub mod cases;
pub mod chaos;
pub mod counting;
pub mod gate;
pub mod held;
pub mod logs;
pub mod orders;
pub mod props;
pub mod props_mish;
pub mod raw_entry;
pub mod typed;
pub mod views;

use ascendcl::{DType, Device, Element, Runtime};
use ndarray::{ArrayD, IxDyn};
use std::sync::{Once, OnceLock};

// Only the gathered binaries (`tests/<binary>/main.rs`) take `shared`: a binary of its
// own has its process to itself.
#[allow(unused_imports)]
pub use gate::{Gate, serial, shared};

/// The simulated devices of every `api_*` test binary: an Atlas A2 (bf16), an Atlas
/// training 910 (no bf16) and an Atlas 200I/500 A2 (no MishBackward).
pub const SIM_DEVICES: &str = "Ascend910B4,Ascend910A,Ascend310B1";
pub const A2: i32 = 0;
pub const A910: i32 = 1;
pub const B310: i32 = 2;

static ENV: Once = Once::new();
static DEVICES: OnceLock<&'static str> = OnceLock::new();

/// Chooses the simulated devices of this test binary instead of [`SIM_DEVICES`]; every
/// test of the binary calls it before anything reaches the simulator.
pub fn use_devices(devices: &'static str) {
    assert_eq!(
        *DEVICES.get_or_init(|| devices),
        devices,
        "devices chosen twice"
    );
}

/// The simulator runtime, configured with [`SIM_DEVICES`] (or [`use_devices`]) before its
/// `aclInit`.
pub fn runtime() -> Runtime {
    ENV.call_once(|| {
        let devices = *DEVICES.get_or_init(|| SIM_DEVICES);
        // SAFETY: runs once, before the simulator (the only reader of this variable) is
        // initialised; every test reaches the simulator through this function.
        unsafe { std::env::set_var("ASCEND_SIM_DEVICES", devices) };
    });
    Runtime::simulator().expect("simulator runtime")
}

pub fn device(id: i32) -> Device {
    runtime().device(id).expect("device")
}

/// Compares the simulator's live-object counters before and after a test. The counters
/// are process-wide: it holds the binary's [`Gate`] exclusive, and every other test of the
/// binary holds it shared ([`shared`]), so no concurrent test's objects are counted.
pub struct LeakCheck {
    before: ascend_sim::Counters,
    _guard: Gate,
}

impl LeakCheck {
    pub fn start() -> LeakCheck {
        let guard = serial();
        let _ = runtime();
        LeakCheck {
            before: ascend_sim::counters(),
            _guard: guard,
        }
    }
}

impl Drop for LeakCheck {
    fn drop(&mut self) {
        if std::thread::panicking() {
            return;
        }
        let after = ascend_sim::counters();
        assert_eq!(
            after.objects(),
            self.before.objects(),
            "simulator objects leaked: before {:?}, after {:?}",
            self.before,
            after
        );
        if let Some(report) = ascend_sim::last_report() {
            panic!("simulator report: {report}");
        }
    }
}

/// The C functions that one `mish_backward` on fresh tensors calls, in the order the fault
/// tests walk them: device and pinned allocations, the upload, a descriptor and the two
/// phases.
pub const MISH_BACKWARD_CALLS: [&str; 6] = [
    "aclrtMalloc",
    "aclrtMallocHost",
    "aclrtMemcpyAsync",
    "aclCreateTensor",
    "aclnnMishBackwardGetWorkspaceSize",
    "aclnnMishBackward",
];

/// Deterministic inputs: `n` values in `[lo, hi)`, staying away from the zero of mish'
/// (x ≈ -1.19) where relative errors are meaningless.
pub fn values(n: usize, seed: u64, lo: f32, hi: f32) -> Vec<f32> {
    let mut s = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let u = (s >> 40) as f32 / (1u64 << 24) as f32;
            let v = lo + (hi - lo) * u;
            if (-1.35..-1.05).contains(&v) {
                v + 0.5
            } else {
                v
            }
        })
        .collect()
}

pub fn array<T: Element>(shape: &[usize], seed: u64, lo: f32, hi: f32) -> ArrayD<T> {
    let n = shape.iter().product();
    ArrayD::from_shape_vec(
        IxDyn(shape),
        values(n, seed, lo, hi)
            .into_iter()
            .map(T::from_f32)
            .collect(),
    )
    .expect("shape")
}

/// T of the CANN precision standard for a dtype.
pub fn threshold(dtype: DType) -> f64 {
    match dtype {
        DType::F32 => 2f64.powi(-13),
        DType::F16 => 2f64.powi(-10),
        DType::BF16 => 2f64.powi(-7),
        // integers: exact
        _ => 0.0,
    }
}

/// The threshold for a result computed in `promote(g, x)` and stored as `o`: the looser
/// of the two.
pub fn threshold_for(g: DType, x: DType, o: DType) -> f64 {
    threshold(g.promote(x).unwrap_or(DType::F32)).max(threshold(o))
}

/// `(MERE, MARE)` of `actual` against the golden `expected`, by the crate's own
/// [`ascendcl::precision::judge`].
pub fn mere_mare<T: Element>(actual: &ArrayD<T>, expected: &ArrayD<T>) -> (f64, f64) {
    let p = ascendcl::precision::judge(
        &actual.mapv(|v| v.to_f64()),
        &expected.mapv(|v| v.to_f64()),
        T::DTYPE,
    )
    .expect("same shapes");
    (p.mere, p.mare)
}

/// Asserts the precision standard: MERE < T and MARE < 10 T.
pub fn assert_precise<T: Element>(actual: &ArrayD<T>, expected: &ArrayD<T>, t: f64, what: &str) {
    let (mere, mare) = mere_mare(actual, expected);
    assert!(
        mere < t && mare < 10.0 * t,
        "{what}: MERE {mere:.3e} (T {t:.3e}), MARE {mare:.3e} (10T {:.3e})",
        10.0 * t
    );
}
