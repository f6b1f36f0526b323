//! `apply_adam_w_v2` on the device against `reference::apply_adam_w_v2`: several steps in
//! a row through one plan (the `step` tensor advanced on the device between launches, the
//! learning rate changed with `set_attr`), amsgrad on and off, maximize, weight decay,
//! f32 / f16 / bf16 and f32 moments with a 16-bit gradient, empty tensors, the products
//! without the operator, and a plan's launches allocating nothing after warm-up.

mod common;

use crate::common::counting::{Counting, allocations_during};
use crate::common::*;
use ascendcl::reference::{self, AdamW};
use ascendcl::{
    ApplyAdamWV2Plan, DeviceTensor, Element, Error, Stream, adds_inplace, apply_adam_w_v2,
};
use ndarray::{ArrayD, IxDyn};

#[global_allocator]
static GLOBAL: Counting = Counting;

const H: AdamW = AdamW {
    lr: 0.01,
    beta1: 0.9,
    beta2: 0.999,
    weight_decay: 0.1,
    eps: 1e-8,
    amsgrad: false,
    maximize: false,
};

/// The parameter, its moments (and running maximum) on the device.
struct State<T: Element> {
    var: DeviceTensor<T>,
    m: DeviceTensor<T>,
    v: DeviceTensor<T>,
    max_v: DeviceTensor<T>,
}

impl<T: Element> State<T> {
    fn new(stream: &Stream, shape: &[usize], seed: u64) -> State<T> {
        let up = |k: u64, lo: f32, hi: f32| {
            DeviceTensor::from_array(stream, &array::<T>(shape, seed + k, lo, hi)).unwrap()
        };
        State {
            var: up(0, -1.0, 1.0),
            m: up(1, -0.1, 0.1),
            v: up(2, 0.0, 0.01),
            max_v: up(3, 0.0, 0.02),
        }
    }

    fn download(&self, stream: &Stream) -> [ArrayD<T>; 4] {
        [&self.var, &self.m, &self.v, &self.max_v].map(|t| t.to_array::<IxDyn>(stream).unwrap())
    }
}

/// Each element within `t` of the reference, relative to itself plus the tensor's largest
/// magnitude (a moment crossing zero has no meaningful relative error).
#[track_caller]
fn close<T: Element>(got: &ArrayD<T>, want: &ArrayD<T>, t: f64, what: &str) {
    assert_eq!(got.shape(), want.shape(), "{what}");
    let scale = want.iter().fold(0.0f64, |a, x| a.max(x.to_f64().abs()));
    for (k, (a, e)) in got.iter().zip(want).enumerate() {
        let (a, e) = (a.to_f64(), e.to_f64());
        assert!(
            (a - e).abs() <= t * (e.abs() + scale),
            "{what}[{k}]: {a} against {e}"
        );
    }
}

/// `steps` launches of one plan from step count `first`, each checked against the
/// reference applied to the device's state before it (so that one rounding does not
/// drift through the steps); the learning rate halves after the second step.
fn run_steps<T: Element, G: Element>(h: AdamW, shape: &[usize], first: f32, steps: usize, t: f64) {
    let stream = device(A2).stream().unwrap();
    let mut s = State::<T>::new(&stream, shape, 40);
    let mut step = DeviceTensor::from_array(&stream, &ndarray::arr1(&[first])).unwrap();
    let grads: Vec<DeviceTensor<G>> = (0..steps)
        .map(|k| {
            DeviceTensor::from_array(&stream, &array::<G>(shape, 90 + k as u64, -1.0, 1.0)).unwrap()
        })
        .collect();
    let mut plan = ApplyAdamWV2Plan::new(
        &s.var,
        &s.m,
        &s.v,
        h.amsgrad.then(|| s.max_v.view()),
        &grads[0],
        &step,
        h.lr,
        h.beta1,
        h.beta2,
        h.weight_decay,
        h.eps,
        h.amsgrad,
        h.maximize,
        &stream,
    )
    .unwrap();
    let mut lr = h.lr;
    for (k, g) in grads.iter().enumerate() {
        if k == 2 {
            lr /= 2.0;
            plan.set_attr("lr", lr).unwrap();
        }
        let [mut w, mut m, mut v, mut mx] = s.download(&stream);
        let max_v = if h.amsgrad {
            Some(s.max_v.view_mut())
        } else {
            None
        };
        plan.launch(&mut s.var, &mut s.m, &mut s.v, max_v, g, &step, &stream)
            .unwrap();
        adds_inplace(&mut step, 1.0f32, 1.0f32, &stream).unwrap();
        let hk = AdamW { lr, ..h };
        let gh = g
            .to_array::<IxDyn>(&stream)
            .unwrap()
            .mapv(|x| T::from_f64(x.to_f64()));
        let mxv = h.amsgrad.then(|| mx.view_mut());
        let count = f64::from(first) + k as f64;
        reference::apply_adam_w_v2(
            w.view_mut(),
            m.view_mut(),
            v.view_mut(),
            mxv,
            gh.view(),
            count,
            &hk,
        )
        .unwrap();
        let got = s.download(&stream);
        let what = |name: &str| format!("{name} {} step {k} {h:?}", T::DTYPE.name());
        close(&got[0], &w, t, &what("var"));
        close(&got[1], &m, t, &what("m"));
        close(&got[2], &v, t, &what("v"));
        // The running maximum moves only under amsgrad.
        close(&got[3], &mx, t, &what("max_grad_norm"));
    }
    let counted: Vec<f32> = step.to_array::<ndarray::Ix1>(&stream).unwrap().to_vec();
    assert_eq!(counted, [first + steps as f32]);
}

#[test]
fn steps_in_a_row_through_one_plan_match_the_reference() {
    let _leaks = LeakCheck::start();
    let variants = [
        H,
        AdamW { amsgrad: true, ..H },
        AdamW {
            maximize: true,
            ..H
        },
        AdamW {
            weight_decay: 0.0,
            amsgrad: true,
            maximize: true,
            ..H
        },
    ];
    for h in variants {
        run_steps::<f32, f32>(h, &[3, 17], 0.0, 4, threshold(ascendcl::DType::F32));
        run_steps::<half::f16, half::f16>(h, &[33], 5.0, 3, threshold(ascendcl::DType::F16));
        run_steps::<half::bf16, half::bf16>(
            h,
            &[2, 2, 5],
            0.0,
            3,
            threshold(ascendcl::DType::BF16),
        );
    }
}

#[test]
fn f32_moments_take_a_16_bit_gradient() {
    let _leaks = LeakCheck::start();
    for h in [H, AdamW { amsgrad: true, ..H }] {
        run_steps::<f32, half::bf16>(h, &[40], 0.0, 3, threshold(ascendcl::DType::F32));
        run_steps::<f32, half::f16>(h, &[40], 1.0, 3, threshold(ascendcl::DType::F32));
    }
}

#[test]
fn an_int64_step_counts_like_a_float_one() {
    let _leaks = LeakCheck::start();
    let stream = device(A2).stream().unwrap();
    let mut out = Vec::new();
    for as_int in [false, true] {
        let mut s = State::<f32>::new(&stream, &[8], 7);
        let g = DeviceTensor::from_array(&stream, &array::<f32>(&[8], 8, -1.0, 1.0)).unwrap();
        if as_int {
            let step = DeviceTensor::from_array(&stream, &ndarray::arr1(&[3i64])).unwrap();
            apply_adam_w_v2(
                &mut s.var, &mut s.m, &mut s.v, None, &g, &step, 0.1f32, 0.9f32, 0.99f32, 0.0f32,
                1e-8f32, false, false, &stream,
            )
            .unwrap();
        } else {
            let step = DeviceTensor::from_array(&stream, &ndarray::arr1(&[3.0f32])).unwrap();
            apply_adam_w_v2(
                &mut s.var, &mut s.m, &mut s.v, None, &g, &step, 0.1f32, 0.9f32, 0.99f32, 0.0f32,
                1e-8f32, false, false, &stream,
            )
            .unwrap();
        }
        out.push(s.var.to_array::<IxDyn>(&stream).unwrap());
    }
    assert_eq!(out[0], out[1]);
}

#[test]
fn empty_tensors_compute_nothing() {
    let _leaks = LeakCheck::start();
    let stream = device(A2).stream().unwrap();
    let mut s = State::<f32>::new(&stream, &[4, 0], 1);
    let g = DeviceTensor::<f32>::zeros(&stream, [4, 0]).unwrap();
    let step = DeviceTensor::from_array(&stream, &ndarray::arr1(&[0.0f32])).unwrap();
    apply_adam_w_v2(
        &mut s.var,
        &mut s.m,
        &mut s.v,
        Some(s.max_v.view_mut()),
        &g,
        &step,
        0.1f32,
        0.9f32,
        0.99f32,
        0.0f32,
        1e-8f32,
        true,
        false,
        &stream,
    )
    .unwrap();
    assert_eq!(s.var.to_array::<IxDyn>(&stream).unwrap().shape(), &[4, 0]);
}

#[test]
fn refusals_name_the_argument() {
    let _leaks = LeakCheck::start();
    let stream = device(A2).stream().unwrap();
    let mut s = State::<f32>::new(&stream, &[6], 2);
    let g = DeviceTensor::<f32>::zeros(&stream, [5]).unwrap();
    let step = DeviceTensor::from_array(&stream, &ndarray::arr1(&[0.0f32])).unwrap();
    let e = apply_adam_w_v2(
        &mut s.var, &mut s.m, &mut s.v, None, &g, &step, 0.1f32, 0.9f32, 0.99f32, 0.0f32, 1e-8f32,
        false, false, &stream,
    )
    .unwrap_err();
    assert!(
        matches!(
            e,
            Error::ShapeMismatch {
                argument: "grad",
                ..
            }
        ),
        "{e:?}"
    );
    let g = DeviceTensor::<f32>::zeros(&stream, [6]).unwrap();
    let steps = DeviceTensor::<f32>::zeros(&stream, [2]).unwrap();
    let e = apply_adam_w_v2(
        &mut s.var, &mut s.m, &mut s.v, None, &g, &steps, 0.1f32, 0.9f32, 0.99f32, 0.0f32, 1e-8f32,
        false, false, &stream,
    )
    .unwrap_err();
    assert!(matches!(e, Error::InvalidArgument(_)), "{e:?}");
    // amsgrad without its tensor: the library's NULL check.
    let e = apply_adam_w_v2(
        &mut s.var, &mut s.m, &mut s.v, None, &g, &step, 0.1f32, 0.9f32, 0.99f32, 0.0f32, 1e-8f32,
        true, false, &stream,
    )
    .unwrap_err();
    assert!(format!("{e:?}").contains("161001"), "{e:?}");
    // The training series has no kernel.
    let train = device(A910).stream().unwrap();
    let mut t = State::<f32>::new(&train, &[6], 3);
    let g = DeviceTensor::<f32>::zeros(&train, [6]).unwrap();
    let step = DeviceTensor::from_array(&train, &ndarray::arr1(&[0.0f32])).unwrap();
    let e = apply_adam_w_v2(
        &mut t.var, &mut t.m, &mut t.v, None, &g, &step, 0.1f32, 0.9f32, 0.99f32, 0.0f32, 1e-8f32,
        false, false, &train,
    )
    .unwrap_err();
    assert!(matches!(e, Error::UnsupportedOperator { .. }), "{e:?}");
}

#[test]
fn a_plans_launches_allocate_nothing_after_warm_up() {
    let _leaks = LeakCheck::start();
    let stream = device(A2).stream().unwrap();
    let mut s = State::<f32>::new(&stream, &[128, 10], 5);
    let g = DeviceTensor::from_array(&stream, &array::<f32>(&[128, 10], 6, -1.0, 1.0)).unwrap();
    let mut step = DeviceTensor::from_array(&stream, &ndarray::arr1(&[0.0f32])).unwrap();
    let mut plan = ApplyAdamWV2Plan::new(
        &s.var,
        &s.m,
        &s.v,
        Some(s.max_v.view()),
        &g,
        &step,
        1e-3f32,
        0.9f32,
        0.999f32,
        0.01f32,
        1e-8f32,
        true,
        false,
        &stream,
    )
    .unwrap();
    let mut one = |s: &mut State<f32>, step: &mut DeviceTensor<f32>| {
        plan.launch(
            &mut s.var,
            &mut s.m,
            &mut s.v,
            Some(s.max_v.view_mut()),
            &g,
            &*step,
            &stream,
        )
        .unwrap();
        adds_inplace(&mut *step, 1.0f32, 1.0f32, &stream).unwrap();
    };
    for _ in 0..2 {
        let hold = ascend_sim::testing::hold_stream(stream.as_raw()).expect("a live stream");
        for _ in 0..50 {
            one(&mut s, &mut step);
        }
        hold.release();
        stream.synchronize().unwrap();
    }
    // The one-off `adds_inplace` of the warm-up is left out of the measured loop: only the
    // plan's launches are counted (the step tensor keeps its value between them).
    let (mine, all) = allocations_during(|| {
        for _ in 0..50 {
            plan.launch(
                &mut s.var,
                &mut s.m,
                &mut s.v,
                Some(s.max_v.view_mut()),
                &g,
                &step,
                &stream,
            )
            .unwrap();
        }
        stream.synchronize().unwrap();
    });
    assert_eq!(mine, 0, "heap allocations on the calling thread");
    assert!(
        all < 100,
        "{all} allocations in the process for 100 launches"
    );
    assert_eq!(step.to_array::<ndarray::Ix1>(&stream).unwrap()[0], 100.0);
}
