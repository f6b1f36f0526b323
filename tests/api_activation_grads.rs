//! `gelu`, `gelu_backward` and `threshold_backward` on the simulator against
//! `ascendcl::reference`: every dtype the vendor lists, broadcast, transposed and stepped
//! views, 0-D and empty tensors, plans and allocating forms; both gradients against
//! central differences of their forward (`gelu`, `relu`) computed on the device.

mod common;

use ascendcl::{
    DeviceTensor, Element, FloatElement, GeluBackwardPlan, Stream, ThresholdBackwardPlan, gelu,
    gelu_backward, gelu_backward_new, gelu_new, reference, relu_new, threshold_backward,
    threshold_backward_new,
};
use common::counting::{Counting, allocations_during};
use common::*;
use half::{bf16, f16};
use ndarray::{ArrayD, IxDyn};

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Input shapes `(grad, x)`: equal, broadcast either way, 0-D, empty.
const SHAPES: &[(&[usize], &[usize])] = &[
    (&[7], &[7]),
    (&[3, 17], &[3, 17]),
    (&[4, 1, 5], &[3, 1]),
    (&[5], &[2, 3, 5]),
    (&[], &[]),
    (&[0, 3], &[0, 3]),
    (&[2, 1], &[2, 0]),
];

fn gelu_case<T: FloatElement>(stream: &Stream, shape: &[usize], seed: u64) -> usize {
    let x: ArrayD<T> = array(shape, seed, -6.0, 6.0);
    let want = reference::gelu(x.view()).unwrap();
    let xd = DeviceTensor::from_array(stream, &x).unwrap();
    let got: DeviceTensor<T> = gelu_new(&xd, stream).unwrap();
    let got = got.to_array(stream).unwrap();
    assert_precise(
        &got,
        &want,
        threshold(T::DTYPE),
        &format!("gelu {} {shape:?}", T::DTYPE),
    );
    1
}

fn gelu_backward_case<T: FloatElement>(
    stream: &Stream,
    gs: &[usize],
    xs: &[usize],
    seed: u64,
) -> usize {
    let g: ArrayD<T> = array(gs, seed, -2.0, 2.0);
    let x: ArrayD<T> = array(xs, seed + 1, -6.0, 6.0);
    let want = reference::gelu_backward(g.view(), x.view()).unwrap();
    let (gd, xd) = (
        DeviceTensor::from_array(stream, &g).unwrap(),
        DeviceTensor::from_array(stream, &x).unwrap(),
    );
    let got: DeviceTensor<T> = gelu_backward_new(&gd, &xd, stream).unwrap();
    let got = got.to_array(stream).unwrap();
    // The device evaluates in f32 (rounded once to T), the reference in f64.
    let t = threshold(T::DTYPE).max(2f64.powi(-12));
    assert_precise(
        &got,
        &want,
        t,
        &format!("gelu_backward {} {gs:?} {xs:?}", T::DTYPE),
    );
    1
}

fn threshold_case<T: Element>(
    stream: &Stream,
    gs: &[usize],
    xs: &[usize],
    t: f64,
    seed: u64,
) -> usize {
    let (lo, hi) = if T::DTYPE == ascendcl::DType::U8 {
        (0.0, 4.0)
    } else {
        (-4.0, 4.0)
    };
    let g: ArrayD<T> = array(gs, seed, lo, 9.0);
    let x: ArrayD<T> = array(xs, seed + 1, lo, hi);
    let want = reference::threshold_backward(g.view(), x.view(), t).unwrap();
    let (gd, xd) = (
        DeviceTensor::from_array(stream, &g).unwrap(),
        DeviceTensor::from_array(stream, &x).unwrap(),
    );
    let got: DeviceTensor<T> = threshold_backward_new(&gd, &xd, t, stream).unwrap();
    assert_eq!(
        got.to_array(stream).unwrap(),
        want,
        "{} {gs:?} {xs:?} t={t}",
        T::DTYPE
    );
    1
}

#[test]
fn gelu_matches_the_reference_in_every_vendor_dtype() {
    let _leaks = LeakCheck::start();
    let stream = device(A2).stream().unwrap();
    let mut n = 0;
    for (k, (_, xs)) in SHAPES.iter().enumerate() {
        n += gelu_case::<f32>(&stream, xs, k as u64);
        n += gelu_case::<f16>(&stream, xs, k as u64);
        n += gelu_case::<bf16>(&stream, xs, k as u64);
    }
    // A transposed, stepped input and a transposed output.
    let x: ArrayD<f32> = array(&[6, 8], 9, -5.0, 5.0);
    let xd = DeviceTensor::from_array(&stream, &x).unwrap();
    let mut out = DeviceTensor::<f32>::zeros(&stream, [4, 6]).unwrap();
    let view = xd.view().t().slice(0, 0, 8, 2).unwrap();
    gelu(view, out.view_mut(), &stream).unwrap();
    let xs = x.t().slice(ndarray::s![..;2, ..]).to_owned().into_dyn();
    let want = reference::gelu(xs.view()).unwrap();
    assert_precise(
        &out.to_array(&stream).unwrap(),
        &want,
        threshold(ascendcl::DType::F32),
        "view",
    );
    assert_eq!(n, 21);
}

#[test]
fn gelu_backward_matches_the_reference_with_broadcast_views_and_plans() {
    let _leaks = LeakCheck::start();
    let stream = device(A2).stream().unwrap();
    let mut n = 0;
    for (k, (gs, xs)) in SHAPES.iter().enumerate() {
        n += gelu_backward_case::<f32>(&stream, gs, xs, 10 + k as u64);
        n += gelu_backward_case::<f16>(&stream, gs, xs, 10 + k as u64);
        n += gelu_backward_case::<bf16>(&stream, gs, xs, 10 + k as u64);
    }
    assert_eq!(n, 21);
    // Mixed f16 gradient and f32 input compute in f32 into an f32 output through a
    // transposed view; a plan gives the one-off's values.
    let g: ArrayD<f16> = array(&[5, 3], 40, -2.0, 2.0);
    let x: ArrayD<f32> = array(&[3, 5], 41, -4.0, 4.0);
    let (gd, xd) = (
        DeviceTensor::from_array(&stream, &g).unwrap(),
        DeviceTensor::from_array(&stream, &x).unwrap(),
    );
    let mut out = DeviceTensor::<f32>::zeros(&stream, [3, 5]).unwrap();
    gelu_backward(gd.view().t(), &xd, &mut out, &stream).unwrap();
    let gt = g.t().mapv(|v| v.to_f32()).into_dyn();
    let want = reference::gelu_backward(gt.view(), x.view()).unwrap();
    assert_precise(
        &out.to_array(&stream).unwrap(),
        &want,
        2f64.powi(-12),
        "mixed",
    );
    let mut again = DeviceTensor::<f32>::zeros(&stream, [3, 5]).unwrap();
    let mut plan = GeluBackwardPlan::new(gd.view().t(), &xd, &again, &stream).unwrap();
    plan.launch(gd.view().t(), &xd, &mut again, &stream)
        .unwrap();
    assert_eq!(
        again.to_array::<IxDyn>(&stream).unwrap(),
        out.to_array::<IxDyn>(&stream).unwrap()
    );
}

#[test]
fn threshold_backward_matches_the_reference_in_every_vendor_dtype() {
    let _leaks = LeakCheck::start();
    let stream = device(A2).stream().unwrap();
    let mut n = 0;
    for (k, (gs, xs)) in SHAPES.iter().enumerate() {
        for t in [0.0, 1.0e-9, 0.5, -1.0] {
            let s = 20 + k as u64;
            n += threshold_case::<f32>(&stream, gs, xs, t, s);
            n += threshold_case::<f16>(&stream, gs, xs, t, s);
            n += threshold_case::<bf16>(&stream, gs, xs, t, s);
            n += threshold_case::<i32>(&stream, gs, xs, t, s);
            n += threshold_case::<i8>(&stream, gs, xs, t, s);
            n += threshold_case::<u8>(&stream, gs, xs, t, s);
        }
    }
    assert_eq!(n, 168);
    // A stepped input into a transposed output.
    let g: ArrayD<f32> = array(&[4, 6], 50, -3.0, 3.0);
    let x: ArrayD<f32> = array(&[4, 12], 51, -3.0, 3.0);
    let (gd, xd) = (
        DeviceTensor::from_array(&stream, &g).unwrap(),
        DeviceTensor::from_array(&stream, &x).unwrap(),
    );
    let mut out = DeviceTensor::<f32>::zeros(&stream, [6, 4]).unwrap();
    let stepped = xd.view().slice(1, 0, 12, 2).unwrap();
    threshold_backward(&gd, stepped, 0.25, out.view_mut().t(), &stream).unwrap();
    let xs = x.slice(ndarray::s![.., ..;2]).to_owned().into_dyn();
    let want = reference::threshold_backward(g.view(), xs.view(), 0.25).unwrap();
    assert_eq!(out.to_array::<IxDyn>(&stream).unwrap().t().to_owned(), want);
}

#[test]
fn bf16_and_i64_are_refused_where_the_vendor_refuses_them() {
    let _leaks = LeakCheck::start();
    let stream = device(A910).stream().unwrap();
    let b = DeviceTensor::from_array(&stream, &array::<bf16>(&[3], 1, -1.0, 1.0)).unwrap();
    let r: ascendcl::Result<DeviceTensor<bf16>> = gelu_backward_new(&b, &b, &stream);
    assert!(matches!(r, Err(ascendcl::Error::UnsupportedDtype { .. })));
    let r: ascendcl::Result<DeviceTensor<bf16>> = threshold_backward_new(&b, &b, 0.0, &stream);
    assert!(matches!(r, Err(ascendcl::Error::UnsupportedDtype { .. })));
    let a2 = device(A2).stream().unwrap();
    let i = DeviceTensor::from_array(&a2, &array::<i64>(&[3], 1, -5.0, 5.0)).unwrap();
    let r: ascendcl::Result<DeviceTensor<i64>> = threshold_backward_new(&i, &i, 0.0, &a2);
    assert!(matches!(r, Err(ascendcl::Error::UnsupportedDtype { .. })));
}

/// Points of `[-4, 4)` at least `gap` away from `kink` (where a difference quotient
/// straddles a kink).
fn points(n: usize, seed: u64, kink: f32, gap: f32) -> Vec<f32> {
    values(n, seed, -4.0, 4.0)
        .into_iter()
        .map(|v| {
            if (v - kink).abs() < gap {
                v + 2.0 * gap
            } else {
                v
            }
        })
        .collect()
}

/// `f` on the device at `x + h` and `x − h`: the central difference `(f(x+h) − f(x−h))/2h`.
fn central_difference(
    stream: &Stream,
    x: &[f32],
    h: f32,
    f: impl Fn(&DeviceTensor<f32>) -> DeviceTensor<f32>,
) -> Vec<f32> {
    let at = |d: f32| {
        let v: Vec<f32> = x.iter().map(|&v| v + d).collect();
        let t = DeviceTensor::from_array(stream, &ndarray::Array1::from(v)).unwrap();
        f(&t).to_array::<ndarray::Ix1>(stream).unwrap().to_vec()
    };
    let (p, m) = (at(h), at(-h));
    p.iter().zip(&m).map(|(a, b)| (a - b) / (2.0 * h)).collect()
}

#[test]
fn gelu_backward_is_the_central_difference_of_gelu_on_the_device() {
    let _leaks = LeakCheck::start();
    let stream = device(A2).stream().unwrap();
    let x = points(256, 60, 100.0, 0.0);
    let h = 1.0 / 256.0;
    let fd = central_difference(&stream, &x, h, |t| gelu_new(t, &stream).unwrap());
    let xd = DeviceTensor::from_array(&stream, &ndarray::Array1::from(x.clone())).unwrap();
    let ones =
        DeviceTensor::from_array(&stream, &ndarray::Array1::from(vec![1.0f32; 256])).unwrap();
    let d: DeviceTensor<f32> = gelu_backward_new(&ones, &xd, &stream).unwrap();
    let d = d.to_array::<ndarray::Ix1>(&stream).unwrap();
    for k in 0..x.len() {
        assert!(
            (d[k] - fd[k]).abs() < 2e-3,
            "x={}: gelu' {} vs central difference {}",
            x[k],
            d[k],
            fd[k]
        );
    }
}

#[test]
fn threshold_backward_at_zero_is_the_central_difference_of_relu_on_the_device() {
    let _leaks = LeakCheck::start();
    let stream = device(A2).stream().unwrap();
    let x = points(256, 61, 0.0, 0.05);
    let h = 1.0 / 64.0;
    let fd = central_difference(&stream, &x, h, |t| relu_new(t, &stream).unwrap());
    let xd = DeviceTensor::from_array(&stream, &ndarray::Array1::from(x.clone())).unwrap();
    let g: ArrayD<f32> = array(&[256], 62, -3.0, 3.0);
    let gd = DeviceTensor::from_array(&stream, &g).unwrap();
    let d: DeviceTensor<f32> = threshold_backward_new(&gd, &xd, 0.0, &stream).unwrap();
    let d = d.to_array::<ndarray::Ix1>(&stream).unwrap();
    for k in 0..x.len() {
        // The chain rule: grad · relu'(x), the difference quotient being 0 or 1 up to the
        // rounding of `x ± h`.
        let slope = fd[k].round();
        assert!(
            (fd[k] - slope).abs() < 1e-4 && (slope == 0.0) == (x[k] < 0.0),
            "x={}: {}",
            x[k],
            fd[k]
        );
        assert_eq!(d[k], g[[k]] * slope, "x={}", x[k]);
    }
}

#[test]
fn plans_launch_without_allocating() {
    let _leaks = LeakCheck::start();
    let stream = device(A2).stream().unwrap();
    let g = DeviceTensor::from_array(&stream, &array::<f32>(&[64, 32], 70, -1.0, 1.0)).unwrap();
    let x = DeviceTensor::from_array(&stream, &array::<f32>(&[64, 32], 71, -3.0, 3.0)).unwrap();
    let mut out = DeviceTensor::<f32>::zeros(&stream, [64, 32]).unwrap();
    let mut gp = GeluBackwardPlan::new(&g, &x, &out, &stream).unwrap();
    let mut tp = ThresholdBackwardPlan::new(&g, &x, 0.0, &out, &stream).unwrap();
    // Warm-up with the measured loop itself, the stream held so that all its launches
    // are in flight at once: the stream's task ring and kernel-call pool grow to the most
    // the measured loop can queue, however the worker thread is scheduled.
    for _ in 0..2 {
        let hold = ascend_sim::testing::hold_stream(stream.as_raw()).expect("a live stream");
        for _ in 0..50 {
            gp.launch(&g, &x, &mut out, &stream).unwrap();
            tp.launch(&g, &x, &mut out, &stream).unwrap();
        }
        hold.release();
        stream.synchronize().unwrap();
    }
    let (mine, all) = allocations_during(|| {
        for _ in 0..50 {
            gp.launch(&g, &x, &mut out, &stream).unwrap();
            tp.launch(&g, &x, &mut out, &stream).unwrap();
        }
        stream.synchronize().unwrap();
    });
    // None on the calling thread, as the crate's other plan tests require; the stream
    // worker may still grow a buffer once, never once per launch.
    assert_eq!(mine, 0, "heap allocations on the calling thread");
    assert!(
        all < 100,
        "{all} allocations in the process for 100 launches"
    );
    let want = reference::threshold_backward(
        g.to_array::<IxDyn>(&stream).unwrap().view(),
        x.to_array::<IxDyn>(&stream).unwrap().view(),
        0.0,
    )
    .unwrap();
    assert_eq!(out.to_array(&stream).unwrap(), want);
}
