//! The device's executor cache: a one-off call like a recent one (operator, dtypes, dims,
//! strides, offsets, optional arguments, attribute values) reuses that call's repeatable
//! executor; anything else misses. Bounded (least recently used out), off at capacity 0,
//! invalidated by a failed launch, allocation-free on a hit, bit-identical to plain calls,
//! and released with the device.

mod common;
#[path = "../examples/mlp_training/device.rs"]
mod mlp;
#[path = "../examples/mlp_training/model.rs"]
mod model;

use ascendcl::{
    AddPlan, CubeMath, Device, DeviceTensor, Error, ExecutorCacheStats, Stream, TensorView, add,
    clamp, matmul,
};
use common::counting::{Counting, allocations_during};
use common::*;
use ndarray::ArrayD;

#[global_allocator]
static GLOBAL: Counting = Counting;

fn cached(capacity: usize) -> Device {
    let d = device(A2);
    d.set_executor_cache_capacity(capacity);
    d
}

fn upload(s: &Stream, shape: &[usize], seed: u64) -> DeviceTensor<f32> {
    DeviceTensor::from_array(s, &array::<f32>(shape, seed, -4.0, 4.0)).unwrap()
}

fn counts(d: &Device) -> (u64, u64) {
    let s = d.executor_cache_stats();
    (s.misses, s.hits)
}

/// Rows `r..r + 2`.
fn rows(t: &DeviceTensor<f32>, r: usize) -> TensorView<'_, f32> {
    t.view().slice(0, r, r + 2, 1).unwrap()
}

fn bits(a: &ArrayD<f32>) -> Vec<u32> {
    a.iter().map(|v| v.to_bits()).collect()
}

#[test]
fn repeated_calls_hit_after_the_first() {
    let _leaks = LeakCheck::start();
    let d = cached(8);
    let s = d.stream().unwrap();
    let (a, b) = (upload(&s, &[3, 5], 1), upload(&s, &[3, 5], 2));
    let mut out = DeviceTensor::<f32>::zeros(&s, [3, 5]).unwrap();
    for _ in 0..5 {
        add(&a, &b, 0.5, &mut out, &s).unwrap();
    }
    let stats = d.executor_cache_stats();
    assert_eq!(
        stats,
        ExecutorCacheStats {
            hits: 4,
            misses: 1,
            evictions: 0,
            invalidations: 0,
            entries: 1,
            capacity: 8,
        }
    );
    // Other tensors of the same layout hit too (addresses rebound).
    let (c, e) = (upload(&s, &[3, 5], 3), upload(&s, &[3, 5], 4));
    add(&c, &e, 0.5, &mut out, &s).unwrap();
    assert_eq!(counts(&d), (1, 5));
    let want = &c.to_array::<ndarray::IxDyn>(&s).unwrap()
        + &(e.to_array::<ndarray::IxDyn>(&s).unwrap() * 0.5);
    assert_eq!(bits(&out.to_array(&s).unwrap()), bits(&want));
}

#[test]
fn any_change_of_the_key_misses() {
    let _leaks = LeakCheck::start();
    let d = cached(64);
    let s = d.stream().unwrap();
    let a = upload(&s, &[4, 4], 1);
    let b = upload(&s, &[4, 4], 2);
    let mut out = DeviceTensor::<f32>::zeros(&s, [4, 4]).unwrap();
    let mut small = DeviceTensor::<f32>::zeros(&s, [2, 4]).unwrap();
    add(&a, &b, 1.0, &mut out, &s).unwrap();
    let mut expect = (1, 0);
    assert_eq!(counts(&d), expect);
    let mut step = |d: &Device, what: &str, hit: bool| {
        if hit {
            expect.1 += 1
        } else {
            expect.0 += 1
        }
        assert_eq!(counts(d), expect, "{what}");
    };
    // The same call again hits.
    add(&a, &b, 1.0, &mut out, &s).unwrap();
    step(&d, "same call", true);
    // Attribute value, and its sign bit.
    add(&a, &b, 2.0, &mut out, &s).unwrap();
    step(&d, "alpha 2.0", false);
    add(&a, &b, 0.0, &mut out, &s).unwrap();
    step(&d, "alpha 0.0", false);
    add(&a, &b, -0.0, &mut out, &s).unwrap();
    step(&d, "alpha -0.0", false);
    // Scalar type (f64 vs i64) is a different attribute.
    add(&a, &b, 1, &mut out, &s).unwrap();
    step(&d, "alpha as an integer", false);
    // Dims: rows 0..2 of each.
    add(rows(&a, 0), rows(&b, 0), 1.0, &mut small, &s).unwrap();
    step(&d, "dims [2, 4]", false);
    add(rows(&a, 0), rows(&b, 0), 1.0, &mut small, &s).unwrap();
    step(&d, "dims [2, 4] again", true);
    // Offset: rows 2..4 (same dims and strides).
    add(rows(&a, 2), rows(&b, 0), 1.0, &mut small, &s).unwrap();
    step(&d, "offset of self", false);
    // Strides: a transposed view (same dims).
    add(a.view().t(), &b, 1.0, &mut out, &s).unwrap();
    step(&d, "strides of self", false);
    // Dtype.
    let ai = DeviceTensor::from_array(&s, &array::<i32>(&[4, 4], 5, -9.0, 9.0)).unwrap();
    let bi = DeviceTensor::from_array(&s, &array::<i32>(&[4, 4], 6, -9.0, 9.0)).unwrap();
    let mut oi = DeviceTensor::<i32>::zeros(&s, [4, 4]).unwrap();
    add(&ai, &bi, 1, &mut oi, &s).unwrap();
    step(&d, "dtype INT32", false);
    add(&ai, &bi, 1, &mut oi, &s).unwrap();
    step(&d, "dtype INT32 again", true);
    // Optional attributes given or absent.
    clamp(&a, Some(0.0.into()), None, &mut out, &s).unwrap();
    step(&d, "clamp min", false);
    clamp(&a, None, Some(0.0.into()), &mut out, &s).unwrap();
    step(&d, "clamp max", false);
    clamp(&a, Some(0.0.into()), Some(1.0.into()), &mut out, &s).unwrap();
    step(&d, "clamp both", false);
    clamp(&a, None, Some(0.0.into()), &mut out, &s).unwrap();
    step(&d, "clamp max again", true);
    // Another operator of the same arguments' shapes.
    matmul(&a, &b, &mut out, CubeMath::KeepDtype, &s).unwrap();
    step(&d, "matmul", false);
    matmul(&a, &b, &mut out, CubeMath::AllowFp32DownPrecision, &s).unwrap();
    step(&d, "matmul math", false);
    s.synchronize().unwrap();
}

#[test]
fn the_least_recently_used_entry_is_evicted_at_capacity() {
    let _leaks = LeakCheck::start();
    let d = cached(2);
    let s = d.stream().unwrap();
    let (a, b) = (upload(&s, &[8], 1), upload(&s, &[8], 2));
    let mut out = DeviceTensor::<f32>::zeros(&s, [8]).unwrap();
    let call = |alpha: f64, out: &mut DeviceTensor<f32>| add(&a, &b, alpha, out, &s).unwrap();
    call(1.0, &mut out); // miss: [1]
    call(2.0, &mut out); // miss: [1, 2]
    call(1.0, &mut out); // hit: 2 is now the least recently used
    call(3.0, &mut out); // miss, evicts 2
    let st = d.executor_cache_stats();
    assert_eq!((st.misses, st.hits, st.evictions, st.entries), (3, 1, 1, 2));
    call(1.0, &mut out); // still cached
    call(3.0, &mut out);
    assert_eq!(counts(&d), (3, 3));
    call(2.0, &mut out); // evicted: misses again
    assert_eq!(counts(&d), (4, 3));
    // A smaller capacity evicts down to it.
    d.set_executor_cache_capacity(1);
    let st = d.executor_cache_stats();
    assert_eq!((st.entries, st.evictions, st.capacity), (1, 3, 1));
    call(2.0, &mut out); // the most recently used one stayed
    assert_eq!(counts(&d), (4, 4));
    s.synchronize().unwrap();
}

#[test]
fn capacity_zero_turns_the_cache_off() {
    let _leaks = LeakCheck::start();
    let d = cached(0);
    let s = d.stream().unwrap();
    let (a, b) = (upload(&s, &[8], 1), upload(&s, &[8], 2));
    let mut out = DeviceTensor::<f32>::zeros(&s, [8]).unwrap();
    let before = ascend_sim::call_count("aclSetAclOpExecutorRepeatable");
    for _ in 0..3 {
        add(&a, &b, 1.0, &mut out, &s).unwrap();
    }
    assert_eq!(d.executor_cache_stats(), ExecutorCacheStats::default());
    assert_eq!(
        ascend_sim::call_count("aclSetAclOpExecutorRepeatable"),
        before,
        "plain calls make no repeatable executor"
    );
    // Turned on, then off again: the entries go.
    d.set_executor_cache_capacity(4);
    add(&a, &b, 1.0, &mut out, &s).unwrap();
    add(&a, &b, 1.0, &mut out, &s).unwrap();
    assert_eq!(counts(&d), (1, 1));
    d.set_executor_cache_capacity(0);
    let st = d.executor_cache_stats();
    assert_eq!((st.entries, st.evictions), (0, 1));
    add(&a, &b, 1.0, &mut out, &s).unwrap();
    assert_eq!(counts(&d), (1, 1));
    s.synchronize().unwrap();
}

#[test]
fn a_failed_launch_drops_its_entry_and_a_failed_phase_1_caches_nothing() {
    let _leaks = LeakCheck::start();
    let d = cached(8);
    let s = d.stream().unwrap();
    let (a, b) = (upload(&s, &[8], 1), upload(&s, &[8], 2));
    let mut out = DeviceTensor::<f32>::zeros(&s, [8]).unwrap();
    add(&a, &b, 1.0, &mut out, &s).unwrap();
    ascend_sim::set_fault("aclnnAdd", 1).unwrap();
    let err = add(&a, &b, 1.0, &mut out, &s).unwrap_err();
    ascend_sim::set_fault("aclnnAdd", 0).unwrap();
    assert!(matches!(err, Error::Aclnn { .. }), "{err:?}");
    let st = d.executor_cache_stats();
    assert_eq!((st.hits, st.invalidations, st.entries), (1, 1, 0));
    // The next alike call runs phase 1 again, and works.
    add(&a, &b, 1.0, &mut out, &s).unwrap();
    assert_eq!(counts(&d), (2, 1));
    // A phase 1 that fails leaves no entry.
    ascend_sim::set_fault("aclnnAddGetWorkspaceSize", 1).unwrap();
    let err = add(&a, &b, 5.0, &mut out, &s).unwrap_err();
    ascend_sim::set_fault("aclnnAddGetWorkspaceSize", 0).unwrap();
    assert!(matches!(err, Error::Aclnn { .. }), "{err:?}");
    assert_eq!(d.executor_cache_stats().entries, 1);
    add(&a, &b, 5.0, &mut out, &s).unwrap();
    assert_eq!(counts(&d), (4, 1));
    s.synchronize().unwrap();
}

#[test]
fn misuse_is_still_reported_after_a_hit() {
    let _leaks = LeakCheck::start();
    let d = cached(8);
    let s = d.stream().unwrap();
    let (a, b) = (upload(&s, &[4, 4], 1), upload(&s, &[4, 4], 2));
    let mut out = DeviceTensor::<f32>::zeros(&s, [4, 4]).unwrap();
    add(&a, &b, 1.0, &mut out, &s).unwrap();
    add(&a, &b, 1.0, &mut out, &s).unwrap();
    // A wrong output shape: refused in Rust before the cache is consulted.
    let mut wrong = DeviceTensor::<f32>::zeros(&s, [4, 3]).unwrap();
    assert!(matches!(
        add(&a, &b, 1.0, &mut wrong, &s),
        Err(Error::ShapeMismatch { .. } | Error::NotBroadcastable { .. })
    ));
    // A floating alpha with integer tensors: CANN's phase 1 refuses it, on every call.
    let ai = DeviceTensor::from_array(&s, &array::<i32>(&[4, 4], 5, -9.0, 9.0)).unwrap();
    let mut oi = DeviceTensor::<i32>::zeros(&s, [4, 4]).unwrap();
    for _ in 0..2 {
        assert!(matches!(
            add(&ai, &ai, 1.5, &mut oi, &s),
            Err(Error::Aclnn { .. })
        ));
    }
    assert_eq!(
        counts(&d),
        (3, 1),
        "the refused calls ran phase 1 each time"
    );
    assert_eq!(d.executor_cache_stats().entries, 1);
    s.synchronize().unwrap();
}

/// Add, clamp and matmul, through the cache (first call and hits, on other tensors of the
/// same layouts) and as plain calls: the same bits.
#[test]
fn cached_results_equal_plain_calls_bit_for_bit() {
    let _leaks = LeakCheck::start();
    let run = |capacity: usize| -> Vec<Vec<u32>> {
        let d = cached(capacity);
        let s = d.stream().unwrap();
        let mut got = Vec::new();
        let mut out = DeviceTensor::<f32>::zeros(&s, [6, 6]).unwrap();
        for seed in 0..3u64 {
            let (a, b) = (
                upload(&s, &[6, 6], 10 + seed),
                upload(&s, &[6, 6], 20 + seed),
            );
            add(&a, &b, -0.75, &mut out, &s).unwrap();
            got.push(bits(&out.to_array(&s).unwrap()));
            clamp(&a, Some((-1.0).into()), Some(0.5.into()), &mut out, &s).unwrap();
            got.push(bits(&out.to_array(&s).unwrap()));
            matmul(&a, b.view().t(), &mut out, CubeMath::KeepDtype, &s).unwrap();
            got.push(bits(&out.to_array(&s).unwrap()));
        }
        if capacity > 0 {
            assert_eq!(counts(&d), (3, 6));
        }
        got
    };
    assert_eq!(run(8), run(0));
}

#[test]
fn a_hit_does_not_allocate() {
    let _leaks = LeakCheck::start();
    let d = cached(8);
    let s = d.stream().unwrap();
    let (a, b) = (upload(&s, &[16, 16], 1), upload(&s, &[16, 16], 2));
    let (c, e) = (upload(&s, &[16, 16], 3), upload(&s, &[16, 16], 4));
    let mut out = DeviceTensor::<f32>::zeros(&s, [16, 16]).unwrap();
    let mut out2 = DeviceTensor::<f32>::zeros(&s, [16, 16]).unwrap();
    let mut batch = || {
        for _ in 0..10 {
            add(&a, &b, 1.0, &mut out, &s).unwrap();
            // Same key, other addresses: rebinding does not allocate either.
            add(&c, &e, 1.0, &mut out2, &s).unwrap();
            clamp(&a, Some(0.0.into()), None, &mut out, &s).unwrap();
            matmul(&a, &b, &mut out2, CubeMath::KeepDtype, &s).unwrap();
        }
    };
    // Warm up the entries and every grow-only buffer on the path (the simulator's launch
    // queue included: the stream is held so that a whole batch is in flight at once).
    for _ in 0..3 {
        let hold = ascend_sim::testing::hold_stream(s.as_raw()).expect("a live stream");
        batch();
        hold.release();
        s.synchronize().unwrap();
    }
    let before = counts(&d);
    let (mine, _) = allocations_during(|| {
        for _ in 0..5 {
            batch();
            s.synchronize().unwrap();
        }
    });
    assert_eq!(mine, 0, "heap allocations on the calling thread");
    assert_eq!(counts(&d), (before.0, before.1 + 200));
    s.synchronize().unwrap();
}

#[test]
fn concurrent_calls_from_two_threads_and_streams_are_correct() {
    let _leaks = LeakCheck::start();
    let d = cached(4);
    let per_thread = 40;
    std::thread::scope(|scope| {
        for t in 0..2u64 {
            let d = &d;
            scope.spawn(move || {
                let s = d.stream().unwrap();
                let a = upload(&s, &[32], 100 + t);
                let b = upload(&s, &[32], 200 + t);
                let mut out = DeviceTensor::<f32>::zeros(&s, [32]).unwrap();
                let want = {
                    let a = a.to_array::<ndarray::IxDyn>(&s).unwrap();
                    let b = b.to_array::<ndarray::IxDyn>(&s).unwrap();
                    bits(&(&a + &(b * 2.0)))
                };
                for _ in 0..per_thread {
                    add(&a, &b, 2.0, &mut out, &s).unwrap();
                    assert_eq!(bits(&out.to_array(&s).unwrap()), want);
                }
            });
        }
    });
    let (misses, hits) = counts(&d);
    assert_eq!(misses + hits, 2 * per_thread);
    assert!((1..=2).contains(&misses), "misses {misses}");
}

/// One key launched on two streams, the second reading what the first wrote: ordered like
/// a plan used from two streams.
#[test]
fn a_cached_executor_used_from_two_streams_is_ordered() {
    let _leaks = LeakCheck::start();
    let d = cached(4);
    let (s1, s2) = (d.stream().unwrap(), d.stream().unwrap());
    let a = upload(&s1, &[64], 1);
    let mut x = DeviceTensor::<f32>::zeros(&s1, [64]).unwrap();
    let mut y = DeviceTensor::<f32>::zeros(&s1, [64]).unwrap();
    s1.synchronize().unwrap();
    // x = a + a on s1, then y = x + x on s2 (same key), then x = y + y on s1.
    add(&a, &a, 1.0, &mut x, &s1).unwrap();
    add(&x, &x, 1.0, &mut y, &s2).unwrap();
    add(&y, &y, 1.0, &mut x, &s1).unwrap();
    assert_eq!(counts(&d), (1, 2));
    let a = a.to_array::<ndarray::IxDyn>(&s1).unwrap();
    let want = a.mapv(|v| ((v + v) + (v + v)) * 2.0);
    assert_eq!(bits(&x.to_array(&s1).unwrap()), bits(&want));
    s2.synchronize().unwrap();
}

#[test]
fn dropping_the_device_releases_cached_executors() {
    let _leaks = LeakCheck::start();
    {
        let d = cached(8);
        let s = d.stream().unwrap();
        let (a, b) = (upload(&s, &[8], 1), upload(&s, &[8], 2));
        let mut out = DeviceTensor::<f32>::zeros(&s, [8]).unwrap();
        for alpha in [1.0, 2.0, 3.0] {
            add(&a, &b, alpha, &mut out, &s).unwrap();
        }
        // Queued work still uses them when everything is dropped.
        let mut plan = AddPlan::new(&a, &b, 1.0, &out, &s).unwrap();
        plan.launch(&a, &b, &mut out, &s).unwrap();
        assert_eq!(d.executor_cache_stats().entries, 3);
        assert_eq!(d.leaks(), ascendcl::Leaks::default());
    }
    // LeakCheck: every executor, descriptor and scalar was destroyed.
}

/// The training example's step through one-off calls only: after the first step every
/// call hits, and a step makes no heap allocation on the calling thread and no device
/// allocation; the loss falls as with plans.
#[test]
fn one_off_training_steps_hit_the_cache_and_allocate_nothing() {
    let _leaks = LeakCheck::start();
    let d = cached(32);
    let stream = d.stream().unwrap();
    let cfg = model::Config {
        samples: 64,
        inputs: 4,
        hidden: 16,
        ..model::Config::EXAMPLE
    };
    let (data, params) = model::setup(&cfg, 42);
    let mut net = mlp::DeviceMlp::new(&stream, &cfg, &data, &params).unwrap();
    const CALLS_PER_STEP: u64 = 15;
    net.step_one_off(&stream, &cfg).unwrap();
    let first = d.executor_cache_stats();
    assert_eq!(first.hits + first.misses, CALLS_PER_STEP);
    let first_loss = net.read_loss(&stream).unwrap();
    // Warm up every grow-only buffer on the path.
    for _ in 0..5 {
        net.step_one_off(&stream, &cfg).unwrap();
        stream.synchronize().unwrap();
    }
    let before = d.executor_cache_stats();
    assert_eq!(
        before.misses, first.misses,
        "every call after the first step hits"
    );
    let mallocs = ascend_sim::call_count("aclrtMalloc");
    let steps = 50;
    let (mine, _) = allocations_during(|| {
        for _ in 0..steps {
            net.step_one_off(&stream, &cfg).unwrap();
            stream.synchronize().unwrap();
        }
    });
    assert_eq!(mine, 0, "heap allocations on the calling thread");
    assert_eq!(
        ascend_sim::call_count("aclrtMalloc"),
        mallocs,
        "device allocations"
    );
    let after = d.executor_cache_stats();
    assert_eq!(after.misses, first.misses);
    assert_eq!(after.hits, before.hits + CALLS_PER_STEP * steps);
    let last_loss = net.read_loss(&stream).unwrap();
    assert!(
        last_loss.is_finite() && last_loss < first_loss,
        "the loss did not fall: {first_loss} then {last_loss}"
    );
}
