//! `aclnnSoftplus`, declared and simulated by this crate, run through `ascendcl` on the
//! simulator: values against the formula in f64, a plan, the vendor's dtype lists per
//! product, and faults injected on the crate's own symbols.

use ascendcl::{DeviceTensor, Error, Runtime, SimConfig, Stream};
use ascendcl_user_crate::{Softplus, SoftplusPlan, simulate, softplus};
use half::{bf16, f16};
use ndarray::{Array, ArrayD, Ix1, IxDyn};
use std::sync::{Mutex, MutexGuard};

/// Device 0 is an Atlas A2, device 1 an inference card without BF16 in its list.
fn runtime() -> Runtime {
    simulate().expect("aclnnSoftplus registers");
    let config = SimConfig::new().devices(["Ascend910B4", "Ascend310P3"]);
    Runtime::simulator_with(&config).unwrap()
}

fn stream(device: i32) -> Stream {
    runtime().device(device).unwrap().stream().unwrap()
}

/// Faults are process-wide: every test runs alone, so that one's fault hits no other.
fn serial() -> MutexGuard<'static, ()> {
    static SERIAL: Mutex<()> = Mutex::new(());
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

/// The formula in f64: `ln(1 + exp(beta·x)) / beta`, or `x` past the threshold.
fn softplus_f64(x: f64, beta: f64, threshold: f64) -> f64 {
    if beta * x > threshold {
        x
    } else {
        (beta * x).exp().ln_1p() / beta
    }
}

fn inputs(n: usize) -> Vec<f32> {
    (0..n).map(|k| (k as f32 - n as f32 / 2.0) * 0.37).collect()
}

#[test]
fn values_match_the_formula_in_f32() {
    let _serial = serial();
    let s = stream(0);
    let x = inputs(64);
    let dx = DeviceTensor::from_array(&s, &Array::from(x.clone()).into_dyn()).unwrap();
    let mut out = DeviceTensor::<f32>::zeros(&s, [64]).unwrap();
    for (beta, threshold) in [(1.0, 20.0), (2.0, 3.0), (0.5, 1.0)] {
        softplus(&dx, beta, threshold, &mut out, &s).unwrap();
        let got = out.to_array::<Ix1>(&s).unwrap();
        for (&g, &x) in got.iter().zip(&x) {
            let want = softplus_f64(f64::from(x), beta, threshold);
            let err = (f64::from(g) - want).abs();
            assert!(
                err <= 4.0 * f64::from(f32::EPSILON) * want.abs().max(1.0),
                "x {x} beta {beta} threshold {threshold}: {g} vs {want}"
            );
        }
        // Past the threshold the input passes through unchanged.
        let last = x[63];
        if f64::from(last) * beta > threshold {
            assert_eq!(got[63], last);
        }
    }
}

#[test]
fn half_precision_is_computed_in_f32_and_rounded_once() {
    let _serial = serial();
    let s = stream(0);
    let x: Vec<f16> = inputs(16).into_iter().map(f16::from_f32).collect();
    let dx = DeviceTensor::from_array(&s, &Array::from(x.clone()).into_dyn()).unwrap();
    let mut out = DeviceTensor::<f16>::zeros(&s, [16]).unwrap();
    softplus(&dx, 1.0, 20.0, &mut out, &s).unwrap();
    let got = out.to_array::<Ix1>(&s).unwrap();
    for (g, x) in got.iter().zip(&x) {
        let want = f16::from_f32(ascendcl_user_crate::softplus_f32(x.to_f32(), 1.0, 20.0));
        assert_eq!(*g, want, "x {x}");
    }
}

#[test]
fn a_plan_launches_the_simulated_operator_again_and_again() {
    let _serial = serial();
    let s = stream(0);
    let x = Array::from(inputs(12))
        .into_shape_with_order((3, 4))
        .unwrap()
        .into_dyn();
    let dx = DeviceTensor::from_array(&s, &x).unwrap();
    let out = DeviceTensor::<f32>::zeros(&s, [3, 4]).unwrap();
    let mut plan: SoftplusPlan<f32> = SoftplusPlan::new(&dx, 1.5, 2.0, &out, &s).unwrap();
    let want: ArrayD<f32> = x.mapv(|v| softplus_f64(f64::from(v), 1.5, 2.0) as f32);
    // Each launch into a fresh output: the executor's addresses are rebound.
    for _ in 0..3 {
        let mut out = DeviceTensor::<f32>::zeros(&s, [3, 4]).unwrap();
        plan.launch(&dx, &mut out, &s).unwrap();
        let got: ArrayD<f32> = out.to_array::<IxDyn>(&s).unwrap();
        assert!(
            got.iter()
                .zip(&want)
                .all(|(g, w)| (g - w).abs() <= 1e-6 * w.abs().max(1.0)),
            "{got} vs {want}"
        );
    }
    drop(plan);
    s.synchronize().unwrap();
}

#[test]
fn a_dtype_the_vendor_does_not_list_is_the_simulators_typed_error() {
    let _serial = serial();
    // BF16 is in the list of the Atlas A2 ...
    let a2 = stream(0);
    let x: Vec<bf16> = inputs(8).into_iter().map(bf16::from_f32).collect();
    let dx = DeviceTensor::from_array(&a2, &Array::from(x.clone()).into_dyn()).unwrap();
    let mut out = DeviceTensor::<bf16>::zeros(&a2, [8]).unwrap();
    softplus(&dx, 1.0, 20.0, &mut out, &a2).unwrap();
    // ... not in that of an inference card: phase 1 refuses it, with the vendor's code.
    let p = stream(1);
    let dx = DeviceTensor::from_array(&p, &Array::from(x).into_dyn()).unwrap();
    let mut out = DeviceTensor::<bf16>::zeros(&p, [8]).unwrap();
    match softplus(&dx, 1.0, 20.0, &mut out, &p) {
        Err(Error::Aclnn {
            api,
            status,
            message,
            ..
        }) => {
            assert_eq!(api, "aclnnSoftplusGetWorkspaceSize");
            assert_eq!(status, 161002);
            assert!(
                message.contains("self dtype BF16 is not supported on Ascend310P3"),
                "{message}"
            );
        }
        other => panic!("{other:?}"),
    }
    // Integers are in no list.
    let ints = DeviceTensor::from_array(&a2, &Array::from(vec![1i32, 2]).into_dyn()).unwrap();
    let mut iout = DeviceTensor::<i32>::zeros(&a2, [2]).unwrap();
    let e = softplus(&ints, 1.0, 20.0, &mut iout, &a2).unwrap_err();
    assert!(matches!(e, Error::Aclnn { status: 161002, .. }), "{e}");
    // A shape the simulator refuses never reaches it: ascendcl's own rule refuses first.
    let mut wrong = DeviceTensor::<bf16>::zeros(&a2, [2, 4]).unwrap();
    let dx = DeviceTensor::from_array(&a2, &Array::from(vec![bf16::ONE; 8]).into_dyn()).unwrap();
    assert!(matches!(
        softplus(&dx, 1.0, 20.0, &mut wrong, &a2),
        Err(Error::ShapeMismatch { .. })
    ));
}

#[test]
fn a_fault_on_the_crates_own_symbols_is_the_typed_error() {
    let _serial = serial();
    let s = stream(0);
    let dx = DeviceTensor::from_array(&s, &Array::from(inputs(4)).into_dyn()).unwrap();
    let mut out = DeviceTensor::<f32>::zeros(&s, [4]).unwrap();
    let calls = ascend_sim::call_count("aclnnSoftplusGetWorkspaceSize");
    ascend_sim::set_fault("aclnnSoftplusGetWorkspaceSize", 1).unwrap();
    let e = softplus(&dx, 1.0, 20.0, &mut out, &s).unwrap_err();
    assert!(
        matches!(
            e,
            Error::Aclnn {
                status: 561101,
                api: "aclnnSoftplusGetWorkspaceSize",
                ..
            }
        ),
        "{e}"
    );
    ascend_sim::set_fault("aclnnSoftplus", 1).unwrap();
    let e = softplus(&dx, 1.0, 20.0, &mut out, &s).unwrap_err();
    assert!(
        matches!(
            e,
            Error::Aclnn {
                status: 361001,
                api: "aclnnSoftplus",
                ..
            }
        ),
        "{e}"
    );
    // Both fired once: the next call runs.
    softplus(&dx, 1.0, 20.0, &mut out, &s).unwrap();
    assert_eq!(
        ascend_sim::call_count("aclnnSoftplusGetWorkspaceSize"),
        calls + 3
    );
    let got = out.to_array::<Ix1>(&s).unwrap();
    assert!((f64::from(got[0]) - softplus_f64(f64::from(inputs(4)[0]), 1.0, 20.0)).abs() < 1e-6);
    assert_eq!(Softplus::NAME, "aclnnSoftplus");
}
