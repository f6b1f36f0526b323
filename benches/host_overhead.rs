//! Host overhead per `aclnnMishBackward` call on the simulator: the safe
//! [`ascendcl::mish_backward`], [`ascendcl::MishBackwardPlan::launch`], and a hand-written
//! raw sequence over the `ascend-sys` function table, side by side in one criterion group
//! so that the ratios come from the same run.
//!
//! * `host_overhead_1elem`: 1-element f32 tensors, enqueue cost of `raw`, `safe` (whole
//!   tensors: their cached descriptors), `plan` (the same tensors every launch: no address
//!   rebinding) and `plan-alt` (two sets of tensors alternately: three rebinds per launch);
//!   each variant runs its calls back to back with a stream synchronisation every [`SYNC_EVERY`] calls (the same
//!   for all three; the time of those synchronisations is included in all three).
//! * `host_overhead_sizes`: the same three for 1 … 10^7 elements with a synchronisation
//!   after every call, to show where the simulator turns from host-bound to compute-bound.
//!
//! The raw sequence per call: `aclCreateTensor` ×3 → `aclnnMishBackwardGetWorkspaceSize`
//! → workspace (a grow-only cache, like the safe path's per-stream cache; with
//! contiguous same-dtype inputs the operator asks for 0 bytes, so neither allocates) →
//! `aclnnMishBackward` → `aclDestroyTensor` ×3, checking every status.
//!
//! ```sh
//! cargo bench --bench host_overhead
//! ```

use ascend_sys::{FnTable, aclOpExecutor, aclTensor};
use ascendcl::{DeviceTensor, MishBackwardPlan, Runtime, Stream, mish_backward};
use criterion::{BenchmarkId, Criterion, SamplingMode, criterion_group, criterion_main};
use std::ffi::c_void;

#[path = "../tests/common/raw_entry.rs"]
mod raw_entry;
use raw_entry::{MishBackwardPhase1, mish_backward_fns};
use std::hint::black_box;
use std::time::{Duration, Instant};

/// Calls between two stream synchronisations in the enqueue-cost group.
const SYNC_EVERY: u64 = 64;

/// The hand-written C sequence on its own device buffers.
struct Raw {
    t: &'static FnTable,
    phase1: MishBackwardPhase1,
    phase2: ascend_sys::OperatorLaunchFn,
    stream: ascend_sys::aclrtStream,
    bufs: [*mut c_void; 3],
    dims: [i64; 1],
    strides: [i64; 1],
    workspace: *mut c_void,
    workspace_size: u64,
}

impl Raw {
    fn new(rt: &Runtime, stream: &Stream, n: usize) -> Raw {
        let t: &'static FnTable = rt.api();
        let bytes = (n * 4).max(32);
        let mut bufs = [std::ptr::null_mut(); 3];
        for p in &mut bufs {
            // SAFETY: valid out-pointer; the device's context is current on this thread
            // (bound by the safe crate when the stream was created).
            unsafe {
                assert_eq!((t.aclrtMalloc)(p, bytes, 0), 0);
                assert_eq!((t.aclrtMemset)(*p, bytes, 0, bytes), 0);
            }
        }
        let (phase1, phase2) = mish_backward_fns(rt.api());
        Raw {
            t,
            phase1,
            phase2,
            stream: stream.as_raw(),
            bufs,
            dims: [n as i64],
            strides: [1],
            workspace: std::ptr::null_mut(),
            workspace_size: 0,
        }
    }

    #[inline(never)]
    fn call(&mut self) {
        let t = self.t;
        let mut d: [*mut aclTensor; 3] = [std::ptr::null_mut(); 3];
        for (slot, p) in d.iter_mut().zip(self.bufs) {
            // SAFETY: valid 1-element arrays; `p` is a live allocation of `dims[0]` f32.
            *slot = unsafe {
                (t.aclCreateTensor)(
                    self.dims.as_ptr(),
                    1,
                    ascend_sys::ACL_FLOAT,
                    self.strides.as_ptr(),
                    0,
                    ascend_sys::ACL_FORMAT_ND,
                    self.dims.as_ptr(),
                    1,
                    p,
                )
            };
            assert!(!slot.is_null());
        }
        let mut ws = 0u64;
        let mut ex: *mut aclOpExecutor = std::ptr::null_mut();
        // SAFETY: live descriptors, valid out-pointers.
        let s1 = unsafe { (self.phase1)(d[0], d[1], d[2], &mut ws, &mut ex) };
        assert_eq!(s1, 0);
        if ws > self.workspace_size {
            // Grow-only cache. (Never taken here: contiguous f32 needs no workspace.)
            // SAFETY: valid out-pointer, context current; the old workspace is freed
            // only after the stream has finished with it.
            unsafe {
                if !self.workspace.is_null() {
                    assert_eq!((t.aclrtSynchronizeStream)(self.stream), 0);
                    assert_eq!((t.aclrtFree)(self.workspace), 0);
                }
                assert_eq!((t.aclrtMalloc)(&mut self.workspace, ws as usize, 0), 0);
            }
            self.workspace_size = ws;
        }
        // SAFETY: fresh executor, a workspace of at least `ws` bytes, live stream.
        let s2 = unsafe { (self.phase2)(self.workspace, ws, ex, self.stream) };
        assert_eq!(s2, 0);
        for p in d {
            // SAFETY: descriptors made above, destroyed once.
            assert_eq!(unsafe { (t.aclDestroyTensor)(p) }, 0);
        }
    }
}

impl Drop for Raw {
    fn drop(&mut self) {
        // SAFETY: the stream is drained before the buffers are freed.
        unsafe {
            assert_eq!((self.t.aclrtSynchronizeStream)(self.stream), 0);
            for p in self.bufs {
                (self.t.aclrtFree)(p);
            }
            if !self.workspace.is_null() {
                (self.t.aclrtFree)(self.workspace);
            }
        }
    }
}

/// The variants on `n`-element f32 tensors.
struct Setup {
    stream: Stream,
    g: DeviceTensor<f32>,
    x: DeviceTensor<f32>,
    out: DeviceTensor<f32>,
    /// A second set for `plan-alt`, which alternates between the two.
    g2: DeviceTensor<f32>,
    x2: DeviceTensor<f32>,
    out2: DeviceTensor<f32>,
    flip: bool,
    plan: MishBackwardPlan<f32, f32, f32>,
    raw: Raw,
}

impl Setup {
    fn new(rt: &Runtime, stream: &Stream, n: usize) -> Setup {
        let g = DeviceTensor::<f32>::zeros(stream, [n]).unwrap();
        let x = DeviceTensor::<f32>::zeros(stream, [n]).unwrap();
        let out = DeviceTensor::<f32>::zeros(stream, [n]).unwrap();
        let g2 = DeviceTensor::<f32>::zeros(stream, [n]).unwrap();
        let x2 = DeviceTensor::<f32>::zeros(stream, [n]).unwrap();
        let out2 = DeviceTensor::<f32>::zeros(stream, [n]).unwrap();
        let plan = MishBackwardPlan::new(&g, &x, &out, stream).unwrap();
        assert!(plan.is_reusable());
        let raw = Raw::new(rt, stream, n);
        Setup {
            stream: stream.clone(),
            g,
            x,
            out,
            g2,
            x2,
            out2,
            flip: false,
            plan,
            raw,
        }
    }

    #[inline]
    fn run(&mut self, variant: &str) {
        match variant {
            "raw" => self.raw.call(),
            "safe" => mish_backward(&self.g, &self.x, &mut self.out, &self.stream).unwrap(),
            "plan" => self
                .plan
                .launch(&self.g, &self.x, &mut self.out, &self.stream)
                .unwrap(),
            _ => {
                self.flip = !self.flip;
                if self.flip {
                    self.plan
                        .launch(&self.g2, &self.x2, &mut self.out2, &self.stream)
                } else {
                    self.plan
                        .launch(&self.g, &self.x, &mut self.out, &self.stream)
                }
                .unwrap()
            }
        }
    }
}

/// `plan` relaunches on the same tensors (no address rebinding); `plan-alt` alternates
/// between two sets, so all three addresses are rebound on every launch.
const VARIANTS: [&str; 4] = ["raw", "safe", "plan", "plan-alt"];

fn enqueue_cost(c: &mut Criterion) {
    let rt = Runtime::simulator().unwrap();
    let stream = rt.device(0).unwrap().stream().unwrap();
    let mut s = Setup::new(&rt, &stream, 1);
    let mut group = c.benchmark_group("host_overhead_1elem");
    group
        .sample_size(40)
        .warm_up_time(Duration::from_millis(700))
        .measurement_time(Duration::from_secs(3));
    for variant in VARIANTS {
        group.bench_function(variant, |b| {
            b.iter_custom(|iters| {
                s.stream.synchronize().unwrap();
                let start = Instant::now();
                for i in 0..iters {
                    s.run(black_box(variant));
                    if (i + 1).is_multiple_of(SYNC_EVERY) {
                        s.stream.synchronize().unwrap();
                    }
                }
                s.stream.synchronize().unwrap();
                start.elapsed()
            })
        });
    }
    group.finish();
}

fn sizes(c: &mut Criterion) {
    let rt = Runtime::simulator().unwrap();
    let stream = rt.device(0).unwrap().stream().unwrap();
    let mut group = c.benchmark_group("host_overhead_sizes");
    for exp in 0..=7u32 {
        let n = 10usize.pow(exp);
        let mut s = Setup::new(&rt, &stream, n);
        if n >= 100_000 {
            group
                .sample_size(10)
                .sampling_mode(SamplingMode::Flat)
                .warm_up_time(Duration::from_millis(300))
                .measurement_time(Duration::from_secs(2));
        } else {
            group
                .sample_size(20)
                .sampling_mode(SamplingMode::Auto)
                .warm_up_time(Duration::from_millis(300))
                .measurement_time(Duration::from_millis(1200));
        }
        for &variant in &VARIANTS[..3] {
            group.bench_with_input(BenchmarkId::new(variant, n), &n, |b, _| {
                b.iter(|| {
                    s.run(black_box(variant));
                    s.stream.synchronize().unwrap();
                })
            });
        }
    }
    group.finish();
}

criterion_group!(benches, enqueue_cost, sizes);
criterion_main!(benches);
