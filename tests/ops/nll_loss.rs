//! NLLLoss and NLLLossBackward on the simulator against `ascendcl::reference`, judged by
//! the precision standard: f32, f16 and bf16, i64, i32 and u8 labels with class weights
//! and an ignored label, every reduction, 1-D and empty inputs, the allocating forms and
//! the plans; the gradient against central differences of the forward on the device.

use crate::common::{A2, device, mere_mare};
use ascendcl::{DeviceTensor, Element, Reduction, Stream, reference};
use half::{bf16, f16};
use ndarray::{ArrayD, Dimension, IxDyn, arr0};

const REDUCTIONS: [Reduction; 3] = [Reduction::None, Reduction::Mean, Reduction::Sum];

fn close<T: Element>(got: &ArrayD<T>, want: &ArrayD<T>, what: &str) {
    let t = ascendcl::precision::threshold(T::DTYPE);
    let (mere, mare) = mere_mare(got, want);
    assert!(
        mere < t && mare < 10.0 * t,
        "{what} {:?}: MERE {mere:e} MARE {mare:e}: {got:?} against {want:?}",
        T::DTYPE
    );
}

/// Log-probabilities `[n, c]` (or `[c]`), labels with one ignored (−100) and weights.
fn inputs<T: Element, I: Element>(
    n: usize,
    c: usize,
    one_d: bool,
) -> (ArrayD<T>, ArrayD<I>, ArrayD<T>) {
    let shape: Vec<usize> = if one_d { vec![c] } else { vec![n, c] };
    let rows = if one_d { 1 } else { n };
    let x = ArrayD::from_shape_fn(IxDyn(&shape), |i| {
        let k = i.slice().iter().fold(0, |a, &b| a * 7 + b);
        T::from_f64(-((k * 13 % 17) as f64) / 4.0 - 0.125)
    });
    let labels: Vec<I> = (0..rows)
        .map(|k| {
            // u8 has no −100: it labels every sample.
            let ignored = k % 4 == 3 && I::DTYPE != ascendcl::DType::U8;
            I::from_f64(if ignored {
                -100.0
            } else {
                ((k * 5) % c) as f64
            })
        })
        .collect();
    let t = if one_d {
        ArrayD::from_elem(IxDyn(&[]), labels[0])
    } else {
        ArrayD::from_shape_vec(IxDyn(&[n]), labels).unwrap()
    };
    let w = ArrayD::from_shape_fn(IxDyn(&[c]), |i| T::from_f64(0.5 + (i[0] % 3) as f64 * 0.75));
    (x, t, w)
}

fn case<T: Element, I: Element>(s: &Stream, n: usize, c: usize, one_d: bool) {
    let (x, t, w) = inputs::<T, I>(n, c, one_d);
    let (xd, td, wd) = (
        DeviceTensor::from_array(s, &x).unwrap(),
        DeviceTensor::from_array(s, &t).unwrap(),
        DeviceTensor::from_array(s, &w).unwrap(),
    );
    for r in REDUCTIONS {
        let what = format!("{:?}/{:?} [{n}, {c}] 1-D {one_d} {r:?}", T::DTYPE, I::DTYPE);
        let (want, want_total) =
            reference::nll_loss(x.view(), t.view(), w.view(), r, -100).unwrap();
        let (got, total): (DeviceTensor<T>, DeviceTensor<T>) =
            ascendcl::nll_loss_new(&xd, &td, &wd, r, -100, s).unwrap();
        let got = got.to_array::<IxDyn>(s).unwrap();
        if x.is_empty() && r == Reduction::Mean {
            assert!(got.iter().all(|v| v.to_f64().is_nan()), "{what}");
        } else {
            close(
                &got.into_shape_with_order(want.shape()).unwrap(),
                &want,
                &what,
            );
        }
        if r != Reduction::None {
            close(&total.to_array(s).unwrap(), &want_total, &what);
        }
        // Through a plan, into the shapes the vendor also takes: [1] for a reduced loss.
        let shape = if r == Reduction::None {
            want.shape().to_vec()
        } else {
            vec![1]
        };
        let mut out = DeviceTensor::<T>::zeros(s, &shape[..]).unwrap();
        let mut tw = DeviceTensor::<T>::zeros(s, [1]).unwrap();
        let mut plan = ascendcl::NllLossPlan::new(&xd, &td, &wd, r, -100, &out, &tw, s).unwrap();
        plan.launch(&xd, &td, &wd, &mut out, &mut tw, s).unwrap();
        if !(x.is_empty() && r == Reduction::Mean) {
            let planned = out
                .to_array::<IxDyn>(s)
                .unwrap()
                .into_shape_with_order(want.shape())
                .unwrap();
            close(&planned, &want, &format!("{what} plan"));
        }
        if x.is_empty() {
            continue;
        }
        // The gradient of the loss at an upstream gradient of 1.5 (per sample for none).
        let g = if r == Reduction::None && !one_d {
            ArrayD::from_elem(IxDyn(&[n]), T::from_f64(1.5))
        } else {
            arr0(T::from_f64(1.5)).into_dyn()
        };
        let gd = DeviceTensor::from_array(s, &g).unwrap();
        let totd = DeviceTensor::from_array(s, &want_total).unwrap();
        let want_dx = reference::nll_loss_backward(
            g.view(),
            x.view(),
            t.view(),
            w.view(),
            r,
            -100,
            want_total.view(),
        )
        .unwrap();
        let dx: DeviceTensor<T> =
            ascendcl::nll_loss_backward_new(&gd, &xd, &td, &wd, r, -100, &totd, s).unwrap();
        close(
            &dx.to_array(s).unwrap(),
            &want_dx,
            &format!("{what} backward"),
        );
    }
}

#[test]
fn nll_loss_and_its_gradient_match_the_reference() {
    let _gate = crate::common::shared();
    let s = device(A2).stream().unwrap();
    let mut cases = 0;
    for (n, c, one_d) in [
        (8usize, 5usize, false),
        (3, 4, true),
        (0, 4, false),
        (33, 10, false),
    ] {
        case::<f32, i64>(&s, n, c, one_d);
        case::<f32, i32>(&s, n, c, one_d);
        case::<f32, u8>(&s, n, c, one_d);
        case::<f16, i64>(&s, n, c, one_d);
        case::<bf16, i32>(&s, n, c, one_d);
        cases += 5 * REDUCTIONS.len();
    }
    assert_eq!(cases, 60);
}

#[test]
fn the_gradient_is_the_central_difference_of_the_loss_on_the_device() {
    let _gate = crate::common::shared();
    let s = device(A2).stream().unwrap();
    let (x, t, w) = inputs::<f32, i64>(6, 4, false);
    let (td, wd) = (
        DeviceTensor::from_array(&s, &t).unwrap(),
        DeviceTensor::from_array(&s, &w).unwrap(),
    );
    // The loss is linear in x: a step of 0.5 is exact in f32.
    let h = 0.5f32;
    for r in [Reduction::Mean, Reduction::Sum] {
        let loss = |x: &ArrayD<f32>| -> (f64, ArrayD<f32>) {
            let xd = DeviceTensor::from_array(&s, x).unwrap();
            let (l, tw): (DeviceTensor<f32>, DeviceTensor<f32>) =
                ascendcl::nll_loss_new(&xd, &td, &wd, r, -100, &s).unwrap();
            (
                f64::from(l.to_array::<IxDyn>(&s).unwrap().sum()),
                tw.to_array(&s).unwrap(),
            )
        };
        let (_, total) = loss(&x);
        let xd = DeviceTensor::from_array(&s, &x).unwrap();
        let one = DeviceTensor::from_array(&s, &arr0(1.0f32).into_dyn()).unwrap();
        let totd = DeviceTensor::from_array(&s, &total).unwrap();
        let dx: DeviceTensor<f32> =
            ascendcl::nll_loss_backward_new(&one, &xd, &td, &wd, r, -100, &totd, &s).unwrap();
        let dx = dx.to_array::<IxDyn>(&s).unwrap();
        for i in 0..x.len() {
            let (mut up, mut down) = (x.clone(), x.clone());
            up.as_slice_mut().unwrap()[i] += h;
            down.as_slice_mut().unwrap()[i] -= h;
            let numeric = (loss(&up).0 - loss(&down).0) / (2.0 * f64::from(h));
            let analytic = f64::from(dx.as_slice().unwrap()[i]);
            assert!(
                (analytic - numeric).abs() < 1e-6,
                "{r:?} at {i}: {analytic} against {numeric}"
            );
        }
    }
}
