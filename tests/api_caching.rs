//! The caching allocator (issue 25): drops that do not wait, reuse ordered after the old
//! work, and a loop of allocated-and-dropped intermediates that allocates nothing after
//! warm-up.

mod common;

use ascendcl::{DeviceTensor, mish};
use common::counting::{Counting, allocations_during};
use common::*;
use ndarray::Array2;

#[global_allocator]
static GLOBAL: Counting = Counting;

/// The device's memory figures are shared: the tests of this file run one at a time.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// A held stream keeps `mish(x)` queued; dropping `x` returns while the hold is still in
/// this thread's hand (a waiting drop could never return), and another stream's tensor
/// that takes `x`'s block writes it only after the held kernel has read it.
#[test]
fn a_drop_does_not_wait_and_reuse_follows_the_old_work() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dev = device(A2);
    dev.set_caching(true);
    let (a, b) = (dev.stream().unwrap(), dev.stream().unwrap());
    let xs = Array2::from_shape_fn((8, 16), |(i, j)| (i as f32 - j as f32) * 0.25);
    let x = DeviceTensor::from_array(&a, &xs).unwrap();
    let mut y = DeviceTensor::<f32>::zeros(&a, &[8, 16]).unwrap();
    a.synchronize().unwrap();
    let hold = ascend_sim::testing::hold_stream(a.as_raw()).unwrap();
    mish(&x, &mut y, &a).unwrap();
    drop(x);
    // Still held here: the drop returned without waiting for `a`. `x`'s block still has
    // queued work, so another stream's new tensor gets other memory.
    let hits = dev.memory_stats().cache_hits;
    let other = Array2::<f32>::from_elem((8, 16), 100.0);
    let z = DeviceTensor::from_array(&b, &other).unwrap();
    assert_eq!(
        dev.memory_stats().cache_hits,
        hits,
        "not reused under held work"
    );
    hold.release();
    a.synchronize().unwrap();
    // The held work ran: now the block may serve another stream.
    let w = DeviceTensor::from_array(&b, &other).unwrap();
    assert_eq!(
        dev.memory_stats().cache_hits,
        hits + 1,
        "reused after the work ran"
    );
    assert_eq!(w.to_array(&b).unwrap(), other.clone().into_dyn());
    assert_eq!(z.to_array(&b).unwrap(), other.into_dyn());
    drop(w);
    let want = ascendcl::reference::mish(xs.view()).unwrap();
    let (mere, _) = mere_mare(&y.to_array(&a).unwrap(), &want.into_dyn());
    assert!(mere < threshold(ascendcl::DType::F32), "{mere}");
    assert_eq!(ascend_sim::last_report(), None);
    drop(z);
    dev.empty_cache();
    let stats = dev.memory_stats();
    assert_eq!(stats.reserved, stats.allocated);
    dev.set_caching(false);
}

/// 200 steps, each allocating its output and dropping it: after warm-up 0 `aclrtMalloc`
/// calls, 0 heap allocations, and the results of the preallocated form.
#[test]
fn two_hundred_allocating_steps_make_no_device_allocation() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dev = device(A2);
    dev.set_caching(true);
    let s = dev.stream().unwrap();
    let xs = Array2::from_shape_fn((16, 32), |(i, j)| ((i * 32 + j) as f32 * 0.01).sin());
    let x = DeviceTensor::from_array(&s, &xs).unwrap();
    let mut pre = DeviceTensor::<f32>::zeros(&s, &[16, 32]).unwrap();
    mish(&x, &mut pre, &s).unwrap();
    let mut host = Array2::<f32>::zeros((16, 32));
    let mut got = Array2::<f32>::zeros((16, 32));
    let step = |out: &mut Array2<f32>| {
        let mut y = DeviceTensor::<f32>::zeros(&s, &[16, 32]).unwrap();
        mish(&x, &mut y, &s).unwrap();
        y.copy_to_array(&s, out).unwrap();
    };
    for _ in 0..300 {
        step(&mut host);
    }
    let mallocs = ascend_sim::call_count("aclrtMalloc");
    let before = dev.memory_stats();
    let (_, heap) = allocations_during(|| {
        for _ in 0..200 {
            step(&mut got);
        }
    });
    assert_eq!(
        ascend_sim::call_count("aclrtMalloc"),
        mallocs,
        "aclrtMalloc calls"
    );
    let after = dev.memory_stats();
    assert_eq!(after.device_allocations, before.device_allocations);
    assert_eq!(after.cache_hits, before.cache_hits + 200);
    assert_eq!(heap, 0, "heap allocations over 200 steps");
    pre.copy_to_array(&s, &mut host).unwrap();
    assert_eq!(
        got, host,
        "the allocating loop computes what the preallocated one does"
    );
    assert_eq!(ascend_sim::last_report(), None);
    dev.set_caching(false);
}
