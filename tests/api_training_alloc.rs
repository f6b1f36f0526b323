//! 200 training steps on preallocated tensors — each uploads
//! `x` and the incoming gradient with `copy_from_array`, runs `mish` and `mish_backward`
//! on the device, and downloads the gradient with `copy_to_array` —
//! make 0 heap allocations (counted process-wide, the simulator's stream worker included)
//! and 0 device or pinned-host allocations (the simulator's call counters) after warm-up.
//! The same again with pinned `HostTensor`s instead of arrays.

mod common;

use ascendcl::{DeviceTensor, HostTensor, Stream, mish, mish_backward};
use common::counting::{Counting, SimCalls, allocations_during};
use common::*;
use ndarray::{Array2, ArrayD};

#[global_allocator]
static GLOBAL: Counting = Counting;

const STEPS: usize = 200;
/// More steps than fill the simulator's slab quarantine (`ascend_sim`'s slab reuses a freed
/// executor slot only after 256 newer ones were freed, so its slabs grow until about 256
/// executors have been made; two launches per step).
const WARM_UP: usize = 150;

/// Runs `step` [`WARM_UP`] times, then [`STEPS`] times more while counting, and asserts
/// that those made no heap, device or pinned allocation; returns the simulator's counts of
/// `launches` since the warm-up and the steps' checksum.
fn steps_after_warm_up(
    mut step: impl FnMut(usize, &mut f64),
    launches: &[&'static str],
) -> (SimCalls, f64) {
    let mut checksum = 0.0f64;
    for i in 0..WARM_UP {
        step(i, &mut checksum);
    }
    let calls = SimCalls::now(launches);
    let (_, heap) = allocations_during(|| {
        for i in WARM_UP..WARM_UP + STEPS {
            step(i, &mut checksum);
        }
    });
    assert_eq!(heap, 0, "heap allocations over {STEPS} steps");
    calls.assert_no_memory_allocated();
    (calls, checksum)
}

/// One step's device work: mish forward, then its backward into `dx`.
fn forward_backward(
    x: &DeviceTensor<f32>,
    g: &DeviceTensor<f32>,
    y: &mut DeviceTensor<f32>,
    dx: &mut DeviceTensor<f32>,
    stream: &Stream,
) {
    mish(x, y, stream).unwrap();
    mish_backward(g, x, dx, stream).unwrap();
}

/// The last step's download is the device's result for the last uploaded data; the
/// checksum of every step's is finite; the simulator reported nothing.
#[track_caller]
fn assert_last_step(got: &ArrayD<f32>, want: &ArrayD<f32>, checksum: f64) {
    let (mere, _) = mere_mare(got, want);
    assert!(mere < threshold(ascendcl::DType::F32), "{mere}");
    assert!(checksum.is_finite());
    assert_eq!(ascend_sim::last_report(), None);
}

#[test]
fn two_hundred_training_steps_allocate_nothing_after_warm_up() {
    let _leaks = LeakCheck::start();
    ascend_sim::clear_last_report();
    let stream = device(A2).stream().unwrap();
    let (batch, width) = (32, 64);
    let mut x_host = Array2::<f32>::zeros((batch, width));
    let mut g_host = Array2::<f32>::zeros((batch, width));
    let mut grad_in = Array2::<f32>::zeros((batch, width));
    let mut x = DeviceTensor::<f32>::zeros(&stream, [batch, width]).unwrap();
    let mut g = DeviceTensor::<f32>::zeros(&stream, [batch, width]).unwrap();
    let mut y = DeviceTensor::<f32>::zeros(&stream, [batch, width]).unwrap();
    let mut dx = DeviceTensor::<f32>::zeros(&stream, [batch, width]).unwrap();
    let step = |i: usize, checksum: &mut f64| {
        // New host data every step, written into the same arrays.
        x_host.mapv_inplace(|v| (v + 0.37 + i as f32 * 1e-3).sin() * 3.0);
        g_host.mapv_inplace(|v| (v + 0.11).cos());
        x.copy_from_array(&stream, &x_host).unwrap();
        g.copy_from_array(&stream, &g_host).unwrap();
        forward_backward(&x, &g, &mut y, &mut dx, &stream);
        dx.copy_to_array(&stream, &mut grad_in).unwrap();
        *checksum += f64::from(grad_in[[i % batch, i % width]]);
    };
    let (calls, checksum) = steps_after_warm_up(step, &["aclnnMishBackward", "aclnnMish"]);
    assert_eq!(
        calls.since("aclnnMishBackward"),
        STEPS as u64,
        "every step ran the backward on the device"
    );
    assert_eq!(
        calls.since("aclnnMish"),
        STEPS as u64,
        "every step ran the forward on the device"
    );
    let expected = ascendcl::reference::mish_backward(g_host.view(), x_host.view()).unwrap();
    assert_last_step(&grad_in.into_dyn(), &expected.into_dyn(), checksum);
}

/// The same training step through pinned `HostTensor`s (queued copies, no staging): 0 heap,
/// device or pinned allocations after warm-up either.
#[test]
fn pinned_training_steps_allocate_nothing_after_warm_up() {
    let _leaks = LeakCheck::start();
    ascend_sim::clear_last_report();
    let dev = device(A2);
    let stream = dev.stream().unwrap();
    let shape = [32, 64];
    let mut x_host = HostTensor::<f32>::zeros(&dev, shape).unwrap();
    let mut g_host = HostTensor::<f32>::zeros(&dev, shape).unwrap();
    let mut dx_host = HostTensor::<f32>::zeros(&dev, shape).unwrap();
    let zeros = || DeviceTensor::<f32>::zeros(&stream, shape).unwrap();
    let (mut x, mut g, mut y, mut dx) = (zeros(), zeros(), zeros(), zeros());
    let step = |i: usize, checksum: &mut f64| {
        x_host
            .view_mut::<ndarray::IxDyn>()
            .unwrap()
            .mapv_inplace(|v| (v + 0.37 + i as f32 * 1e-3).sin() * 3.0);
        g_host
            .view_mut::<ndarray::IxDyn>()
            .unwrap()
            .mapv_inplace(|v| (v + 0.11).cos());
        x.copy_from_host(&stream, &x_host).unwrap();
        g.copy_from_host(&stream, &g_host).unwrap();
        forward_backward(&x, &g, &mut y, &mut dx, &stream);
        dx.copy_to_host(&stream, &mut dx_host).unwrap();
        *checksum += f64::from(dx_host.as_slice().unwrap()[i % 2048]);
    };
    let (calls, checksum) = steps_after_warm_up(step, &["aclrtMemcpyAsync"]);
    assert_eq!(
        calls.since("aclrtMemcpyAsync"),
        3 * STEPS as u64,
        "three queued copies a step, none staged"
    );
    let expected = ascendcl::reference::mish_backward(
        g_host.view::<ndarray::IxDyn>().unwrap(),
        x_host.view::<ndarray::IxDyn>().unwrap(),
    )
    .unwrap();
    assert_last_step(&dx_host.view().unwrap().to_owned(), &expected, checksum);
}
