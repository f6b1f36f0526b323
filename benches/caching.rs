//! The caching allocator on the simulator, all in one run (report the ratios, not the
//! times). Like is compared with like: every loop launches `mish` into an output and
//! differs only in where the output's memory comes from.
//!
//! * `preallocated`: one output tensor, made before the loop.
//! * `cached allocate-launch-drop`: the allocating variant `mish_new`, whose output comes
//!   from the device's caching allocator and goes back to it when dropped.
//! * `raw aclrtMalloc-launch-aclrtFree`: the preallocated launch plus an `aclrtMalloc` and
//!   `aclrtFree` of the output's size, the cost the cache saves.
//! * `cached zeros-launch-drop` (informative): a cached output filled with zeros first,
//!   which adds a host memset that the other loops do not make.
//!
//! Two groups: `sync each step` synchronises after every step (its times are mostly the
//! wake-up of the simulator's stream thread, which varies more than the allocator costs);
//! `16 steps per sync` queues 16 steps and then synchronises, as a training step does.

use ascendcl::{DeviceTensor, Runtime, mish, mish_new};
use criterion::{Criterion, criterion_group, criterion_main};
use ndarray::Array2;
use std::ffi::c_void;

const SHAPE: [usize; 2] = [16, 64];

/// Steps queued per synchronisation in the `queued` group: ML code does not wait for each
/// operator, and a dropped output's block is then taken again by the next step while the
/// previous one may still be queued.
const QUEUED_STEPS: usize = 16;

fn bench(c: &mut Criterion) {
    let rt = Runtime::simulator().unwrap();
    let dev = rt.device(0).unwrap();
    let s = dev.stream().unwrap();
    let x = DeviceTensor::from_array(&s, &Array2::<f32>::ones((SHAPE[0], SHAPE[1]))).unwrap();
    let mut pre = DeviceTensor::<f32>::zeros(&s, SHAPE).unwrap();
    let t = rt.api();
    let bytes = SHAPE[0] * SHAPE[1] * 4;
    let malloc = || {
        let mut p: *mut c_void = std::ptr::null_mut();
        // SAFETY: a valid out-pointer; the device's context is current on this thread.
        assert_eq!(unsafe { (t.aclrtMalloc)(&mut p, bytes, 0) }, 0);
        p
    };
    let free = |p: *mut c_void| {
        // SAFETY: allocated by `malloc`, unused by queued work (synchronised), freed once.
        assert_eq!(unsafe { (t.aclrtFree)(p) }, 0);
    };

    let mut g = c.benchmark_group("caching/sync each step");
    g.bench_function("preallocated", |b| {
        b.iter(|| {
            mish(&x, &mut pre, &s).unwrap();
            s.synchronize().unwrap();
        })
    });
    dev.set_caching(true);
    g.bench_function("cached allocate-launch-drop", |b| {
        b.iter(|| {
            let y: DeviceTensor<f32> = mish_new(&x, &s).unwrap();
            s.synchronize().unwrap();
            drop(y);
        })
    });
    g.bench_function("cached zeros-launch-drop", |b| {
        b.iter(|| {
            let mut y = DeviceTensor::<f32>::zeros(&s, SHAPE).unwrap();
            mish(&x, &mut y, &s).unwrap();
            s.synchronize().unwrap();
        })
    });
    g.bench_function("raw aclrtMalloc-launch-aclrtFree", |b| {
        b.iter(|| {
            let p = malloc();
            mish(&x, &mut pre, &s).unwrap();
            s.synchronize().unwrap();
            free(p);
        })
    });
    g.finish();

    let mut g = c.benchmark_group(format!("caching/{QUEUED_STEPS} steps per sync"));
    g.bench_function("preallocated", |b| {
        b.iter(|| {
            for _ in 0..QUEUED_STEPS {
                mish(&x, &mut pre, &s).unwrap();
            }
            s.synchronize().unwrap();
        })
    });
    g.bench_function("cached allocate-launch-drop", |b| {
        b.iter(|| {
            for _ in 0..QUEUED_STEPS {
                let y: DeviceTensor<f32> = mish_new(&x, &s).unwrap();
                drop(y);
            }
            s.synchronize().unwrap();
        })
    });
    let mut held = Vec::with_capacity(QUEUED_STEPS);
    g.bench_function("raw aclrtMalloc-launch-aclrtFree", |b| {
        b.iter(|| {
            // Raw memory may be freed only once its work has run: after the sync.
            for _ in 0..QUEUED_STEPS {
                held.push(malloc());
                mish(&x, &mut pre, &s).unwrap();
            }
            s.synchronize().unwrap();
            held.drain(..).for_each(free);
        })
    });
    g.finish();
    dev.set_caching(false);
}

criterion_group!(benches, bench);
criterion_main!(benches);
