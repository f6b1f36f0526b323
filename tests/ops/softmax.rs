//! Softmax, LogSoftmax and their gradients on the simulator against `ascendcl::reference`,
//! judged by the precision standard: every dtype the vendor lists on Atlas A2, whole,
//! transposed and stepped views, empty and 0-D tensors, every dim, the allocating forms
//! and the plans; the gradients against central differences of the forward on the
//! device; and the typed errors.

use crate::common::held::{Lay, hold, lay};
use crate::common::{A2, B310, device, mere_mare};
use ascendcl::{DeviceTensor, Element, Error, Stream, reference};
use half::{bf16, f16};
use ndarray::{ArrayD, IxDyn};
use proptest::prelude::*;
use proptest::test_runner::{RngAlgorithm, TestRng, TestRunner};

/// A fixed-seed runner: the cases are the same on every run.
fn runner() -> TestRunner {
    let config = ProptestConfig {
        cases: 16,
        failure_persistence: None,
        ..ProptestConfig::default()
    };
    TestRunner::new_with_rng(config, TestRng::deterministic_rng(RngAlgorithm::ChaCha))
}

/// A shape of up to 3 dims of sizes 0..=5 (0 rarely), a dim in range, values for it.
fn shaped() -> impl Strategy<Value = (Vec<usize>, i64, Vec<f64>)> {
    prop::collection::vec(prop_oneof![1 => Just(0usize), 8 => 1usize..=5], 0..=3).prop_flat_map(
        |shape| {
            let n = shape.iter().product::<usize>();
            let r = shape.len().max(1) as i64;
            (Just(shape), -r..r, prop::collection::vec(-3.0f64..3.0, n))
        },
    )
}

fn judge<T: Element>(got: &ArrayD<T>, want: &ArrayD<T>, what: &str) -> Result<(), TestCaseError> {
    let t = ascendcl::precision::threshold(T::DTYPE);
    let (mere, mare) = mere_mare(got, want);
    prop_assert!(
        mere < t && mare < 10.0 * t,
        "{what} {:?}: MERE {mere:e} MARE {mare:e}",
        T::DTYPE
    );
    Ok(())
}

/// Per element, the magnitude of the terms whose difference the gradient is:
/// `y·(|g| + |Σ g·y|)` (softmax) or `|g| + exp(y)·|Σ g|` (log-softmax).
fn term_scale<T: Element>(g: &ArrayD<T>, y: &ArrayD<T>, dim: i64, log: bool) -> ArrayD<f64> {
    let (g, y) = (g.mapv(|v| v.to_f64()), y.mapv(|v| v.to_f64()));
    if g.ndim() == 0 {
        return (&g.mapv(f64::abs) + &y.mapv(f64::abs)) * 2.0;
    }
    let axis = ndarray::Axis(dim.rem_euclid(g.ndim() as i64) as usize);
    let mut out = g.clone();
    for ((mut o, g), y) in out
        .lanes_mut(axis)
        .into_iter()
        .zip(g.lanes(axis))
        .zip(y.lanes(axis))
    {
        let s: f64 = if log {
            g.sum()
        } else {
            g.iter().zip(&y).map(|(g, y)| g * y).sum()
        };
        for ((o, g), y) in o.iter_mut().zip(&g).zip(&y) {
            *o = if log {
                g.abs() + y.exp() * s.abs()
            } else {
                y.abs() * (g.abs() + s.abs())
            };
        }
    }
    out
}

/// A gradient is a difference of terms: the precision standard on the elements at least
/// 2⁻⁶ of their terms' scale, and on the others (where the difference cancels) an
/// absolute error of at most 2⁻⁶·T of the scale (T the dtype's threshold; a few units
/// in the last place of the terms).
fn judge_difference<T: Element>(
    got: &ArrayD<T>,
    want: &ArrayD<T>,
    scale: &ArrayD<f64>,
    what: &str,
) -> Result<(), TestCaseError> {
    let t = ascendcl::precision::threshold(T::DTYPE);
    let (mut a, mut w) = (Vec::new(), Vec::new());
    for ((&x, &y), &m) in got.iter().zip(want).zip(scale) {
        let (xf, yf) = (x.to_f64(), y.to_f64());
        if yf.abs() >= m / 64.0 {
            a.push(x);
            w.push(y);
        } else {
            prop_assert!(
                (xf - yf).abs() <= m * t / 64.0,
                "{what} {:?}: {xf} against {yf} (cancelling terms of scale {m})",
                T::DTYPE
            );
        }
    }
    judge(
        &ArrayD::from_shape_vec(IxDyn(&[a.len()]), a).unwrap(),
        &ArrayD::from_shape_vec(IxDyn(&[w.len()]), w).unwrap(),
        what,
    )
}

fn from(shape: &[usize], v: impl Iterator<Item = f64>) -> ArrayD<f64> {
    ArrayD::from_shape_vec(IxDyn(shape), v.collect()).unwrap()
}

/// Softmax and LogSoftmax of `T` into `T`: out of place, allocated and planned.
fn forward_case<T: Element>(
    s: &Stream,
    shape: &[usize],
    dim: i64,
    values: &[f64],
    lay: Lay,
) -> Result<(), TestCaseError> {
    let x = from(shape, values.iter().copied()).mapv(T::from_f64);
    let zeros = ArrayD::from_elem(IxDyn(shape), T::from_f64(0.0));
    let held = hold(s, &x, lay);
    for log in [false, true] {
        let (name, want) = if log {
            (
                "log_softmax",
                reference::log_softmax(x.view(), dim).unwrap(),
            )
        } else {
            ("softmax", reference::softmax(x.view(), dim).unwrap())
        };
        let mut out = hold(s, &zeros, lay);
        let mut planned = hold(s, &zeros, lay);
        let new: DeviceTensor<T> = if log {
            ascendcl::log_softmax(held.view(), dim, out.view_mut(), s).unwrap();
            let (xv, mut ov) = (held.view(), planned.view_mut());
            let mut plan = ascendcl::LogSoftmaxPlan::new(&xv, dim, &ov, s).unwrap();
            plan.launch(&xv, &mut ov, s).unwrap();
            ascendcl::log_softmax_new(held.view(), dim, s).unwrap()
        } else {
            ascendcl::softmax(held.view(), dim, out.view_mut(), s).unwrap();
            let (xv, mut ov) = (held.view(), planned.view_mut());
            let mut plan = ascendcl::SoftmaxPlan::new(&xv, dim, &ov, s).unwrap();
            plan.launch(&xv, &mut ov, s).unwrap();
            ascendcl::softmax_new(held.view(), dim, s).unwrap()
        };
        if x.is_empty() {
            // Nothing is computed: the outputs keep what they held.
            prop_assert_eq!(out.get(s), zeros.clone());
            continue;
        }
        judge(
            &out.get(s),
            &want,
            &format!("{name} {shape:?} dim {dim} {lay:?}"),
        )?;
        judge(
            &new.to_array(s).unwrap(),
            &want,
            &format!("{name}_new {shape:?}"),
        )?;
        judge(&planned.get(s), &want, &format!("{name} plan {shape:?}"))?;
    }
    Ok(())
}

/// SoftmaxBackward and LogSoftmaxBackward of `T`: `output` the reference's forward.
fn backward_case<T: Element>(
    s: &Stream,
    shape: &[usize],
    dim: i64,
    values: &[f64],
    lay: Lay,
) -> Result<(), TestCaseError> {
    let x = from(shape, values.iter().copied()).mapv(T::from_f64);
    let g = from(shape, values.iter().rev().map(|v| v / 2.0 + 0.25)).mapv(T::from_f64);
    let zeros = ArrayD::from_elem(IxDyn(shape), T::from_f64(0.0));
    let gd = hold(s, &g, lay);
    for log in [false, true] {
        let y = if log {
            reference::log_softmax(x.view(), dim).unwrap()
        } else {
            reference::softmax(x.view(), dim).unwrap()
        };
        let yd = hold(s, &y, lay);
        let mut out = hold(s, &zeros, lay);
        let mut planned = hold(s, &zeros, lay);
        let (want, new): (ArrayD<T>, DeviceTensor<T>) = if log {
            ascendcl::log_softmax_backward(gd.view(), yd.view(), dim, out.view_mut(), s).unwrap();
            let (gv, yv, mut ov) = (gd.view(), yd.view(), planned.view_mut());
            let mut plan = ascendcl::LogSoftmaxBackwardPlan::new(&gv, &yv, dim, &ov, s).unwrap();
            plan.launch(&gv, &yv, &mut ov, s).unwrap();
            (
                reference::log_softmax_backward(g.view(), y.view(), dim).unwrap(),
                ascendcl::log_softmax_backward_new(gd.view(), yd.view(), dim, s).unwrap(),
            )
        } else {
            ascendcl::softmax_backward(gd.view(), yd.view(), dim, out.view_mut(), s).unwrap();
            let (gv, yv, mut ov) = (gd.view(), yd.view(), planned.view_mut());
            let mut plan = ascendcl::SoftmaxBackwardPlan::new(&gv, &yv, dim, &ov, s).unwrap();
            plan.launch(&gv, &yv, &mut ov, s).unwrap();
            (
                reference::softmax_backward(g.view(), y.view(), dim).unwrap(),
                ascendcl::softmax_backward_new(gd.view(), yd.view(), dim, s).unwrap(),
            )
        };
        if x.is_empty() {
            prop_assert_eq!(out.get(s), zeros.clone());
            continue;
        }
        let what = format!("backward (log {log}) {shape:?} dim {dim} {lay:?}");
        let scale = term_scale(&g, &y, dim, log);
        judge_difference(&out.get(s), &want, &scale, &what)?;
        judge_difference(&new.to_array(s).unwrap(), &want, &scale, &what)?;
        judge_difference(&planned.get(s), &want, &scale, &what)?;
    }
    Ok(())
}

fn run_all(f: impl Fn(&Stream, &[usize], i64, &[f64], Lay) -> Result<(), TestCaseError>) -> usize {
    let s = device(A2).stream().unwrap();
    let cases = std::cell::Cell::new(0);
    runner()
        .run(&(shaped(), lay()), |((shape, dim, values), lay)| {
            cases.set(cases.get() + 1);
            f(&s, &shape, dim, &values, lay)
        })
        .unwrap();
    cases.get()
}

#[test]
fn softmax_and_log_softmax_match_the_reference_in_every_listed_dtype() {
    let _gate = crate::common::shared();
    let n = run_all(forward_case::<f32>)
        + run_all(forward_case::<f16>)
        + run_all(forward_case::<bf16>)
        + run_all(forward_case::<f64>);
    assert_eq!(n, 64);
}

#[test]
fn the_gradients_match_the_reference_in_every_listed_dtype() {
    let _gate = crate::common::shared();
    let n = run_all(backward_case::<f32>)
        + run_all(backward_case::<f16>)
        + run_all(backward_case::<bf16>);
    assert_eq!(n, 48);
}

#[test]
fn log_softmax_of_f16_into_f32_computes_in_f32() {
    let _gate = crate::common::shared();
    let s = device(A2).stream().unwrap();
    let x = from(&[2, 7], (0..14).map(|i| f64::from(i) * 0.37 - 2.0)).mapv(f16::from_f64);
    let xd = DeviceTensor::from_array(&s, &x).unwrap();
    let got: DeviceTensor<f32> = ascendcl::log_softmax_new(&xd, 1, &s).unwrap();
    let want = reference::log_softmax(x.mapv(f16::to_f32).view(), 1).unwrap();
    let (mere, mare) = mere_mare(&got.to_array(&s).unwrap(), &want);
    // Far below f16's threshold: the result was never rounded to f16.
    assert!(mere < 1e-6 && mare < 1e-6, "MERE {mere:e} MARE {mare:e}");
}

/// `Σ g·softmax(x)` (or log-softmax) on the device in f64.
fn objective(s: &Stream, x: &ArrayD<f64>, g: &ArrayD<f64>, dim: i64, log: bool) -> f64 {
    let xd = DeviceTensor::from_array(s, x).unwrap();
    let y: DeviceTensor<f64> = if log {
        ascendcl::log_softmax_new(&xd, dim, s).unwrap()
    } else {
        ascendcl::softmax_new(&xd, dim, s).unwrap()
    };
    (&y.to_array::<IxDyn>(s).unwrap() * g).sum()
}

#[test]
fn the_gradients_are_the_central_differences_of_the_forward_on_the_device() {
    let _gate = crate::common::shared();
    let s = device(A2).stream().unwrap();
    let h = 1e-5;
    for (shape, dim) in [(vec![3usize, 5], 1i64), (vec![3, 5], 0), (vec![2, 3, 4], 1)] {
        let n: usize = shape.iter().product();
        let x = from(&shape, (0..n).map(|i| ((i * 7 % 11) as f64 - 5.0) / 3.0));
        let g = from(&shape, (0..n).map(|i| ((i * 5 % 7) as f64 - 3.0) / 2.0));
        for log in [false, true] {
            let xd = DeviceTensor::from_array(&s, &x.mapv(|v| v as f32)).unwrap();
            let gd = DeviceTensor::from_array(&s, &g.mapv(|v| v as f32)).unwrap();
            let grad: DeviceTensor<f32> = if log {
                let y: DeviceTensor<f32> = ascendcl::log_softmax_new(&xd, dim, &s).unwrap();
                ascendcl::log_softmax_backward_new(&gd, &y, dim, &s)
            } else {
                let y: DeviceTensor<f32> = ascendcl::softmax_new(&xd, dim, &s).unwrap();
                ascendcl::softmax_backward_new(&gd, &y, dim, &s)
            }
            .unwrap();
            let grad: ArrayD<f32> = grad.to_array(&s).unwrap();
            for (i, &analytic) in grad.iter().enumerate() {
                let (mut up, mut down) = (x.clone(), x.clone());
                up.as_slice_mut().unwrap()[i] += h;
                down.as_slice_mut().unwrap()[i] -= h;
                let numeric = (objective(&s, &up, &g, dim, log)
                    - objective(&s, &down, &g, dim, log))
                    / (2.0 * h);
                assert!(
                    (f64::from(analytic) - numeric).abs() < 2e-5 * (1.0 + numeric.abs()),
                    "{shape:?} dim {dim} log {log} at {i}: {analytic} against {numeric}"
                );
            }
        }
    }
}

#[test]
fn invalid_calls_fail_with_typed_errors_before_any_ffi_call() {
    let _gate = crate::common::shared();
    let s = device(A2).stream().unwrap();
    let x = DeviceTensor::<f32>::zeros(&s, [2, 3]).unwrap();
    let mut wrong = DeviceTensor::<f32>::zeros(&s, [3, 2]).unwrap();
    assert!(matches!(
        ascendcl::softmax(&x, 2, &mut wrong, &s),
        Err(Error::InvalidArgument(m)) if m.contains("dim")
    ));
    assert!(matches!(
        ascendcl::log_softmax(&x, 1, &mut wrong, &s),
        Err(Error::ShapeMismatch { .. })
    ));
    let x64 = DeviceTensor::<f64>::zeros(&s, [2, 3]).unwrap();
    let mut o64 = DeviceTensor::<f64>::zeros(&s, [2, 3]).unwrap();
    assert!(matches!(
        ascendcl::softmax_backward(&x64, &x64, 0, &mut o64, &s),
        Err(Error::UnsupportedDtype { .. })
    ));
    // An empty softmax input returns before its output is looked at, as on the device.
    let empty = DeviceTensor::<f32>::zeros(&s, [2, 0]).unwrap();
    ascendcl::softmax(&empty, 7, &mut wrong, &s).unwrap();
    // 310B has Softmax but not LogSoftmax.
    let s310 = device(B310).stream().unwrap();
    let x = DeviceTensor::<f32>::zeros(&s310, [4]).unwrap();
    let p: DeviceTensor<f32> = ascendcl::softmax_new(&x, 0, &s310).unwrap();
    assert_eq!(
        p.to_array(&s310).unwrap(),
        ndarray::arr1(&[0.25f32; 4]).into_dyn()
    );
    let refused: ascendcl::Result<DeviceTensor<f32>> = ascendcl::log_softmax_new(&x, 0, &s310);
    assert!(matches!(refused, Err(Error::UnsupportedOperator { .. })));
}
