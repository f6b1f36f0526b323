//! `mish` and `mish_inplace` (aclnnMish, aclnnInplaceMish) on the simulator: property
//! tests against `reference::mish` over every dtype, random views (permuted, offset,
//! stepped, padded storages) of 0–8 dims including 0-D and empty tensors; the products and
//! dtypes; typed errors without FFI calls; plans; and the consistency of the forward pass
//! with `mish_backward` (central differences).

mod common;

use ascendcl::{
    DType, DeviceTensor, Error, InplaceMish, InplaceMishPlan, Mish, MishPlan, SocFamily, mish,
    mish_backward, mish_inplace, reference,
};
use common::props::{self, Elementwise};
use common::props_mish::{MishInplaceOp, MishOp};
use common::{LeakCheck, assert_precise, threshold};
use half::{bf16, f16};
use ndarray::{ArrayD, IxDyn};

/// This binary's simulated devices: every product family.
const DEVICES: &str = "Ascend910B4,Ascend910A,Ascend310B1,Ascend310P3,Ascend910_9391";
const A2: i32 = 0;
const A910: i32 = 1;
const B310: i32 = 2;
const P310: i32 = 3;
const A3: i32 = 4;
const REGRESSIONS: &str = "tests/api_mish.proptest-regressions";

fn device(id: i32) -> ascendcl::Device {
    common::use_devices(DEVICES);
    common::device(id)
}

/// The leak check of every test, with this binary's devices.
fn leak_check() -> LeakCheck {
    common::use_devices(DEVICES);
    LeakCheck::start()
}

/// NaN where the reference is NaN, the same infinities, finite where it is finite, and
/// the CANN precision standard over the finite elements.
fn judge<T: ascendcl::FloatElement>(
    got: &ArrayD<T>,
    want: &ArrayD<T>,
    what: &str,
) -> Result<(), String> {
    for (a, e) in got.iter().zip(want) {
        let (a, e) = (a.to_f64(), e.to_f64());
        let same_kind = if e.is_nan() {
            a.is_nan()
        } else if e.is_infinite() {
            a == e
        } else {
            a.is_finite()
        };
        if !same_kind {
            return Err(format!("{what}: got {a:e}, reference {e:e}"));
        }
    }
    let finite = |a: &ArrayD<T>| {
        a.mapv(|v| {
            if v.to_f64().is_finite() {
                v
            } else {
                T::default()
            }
        })
    };
    let (mere, mare) = common::mere_mare(&finite(got), &finite(want));
    let t = threshold(T::DTYPE);
    if mere < t && mare < 10.0 * t {
        Ok(())
    } else {
        Err(format!(
            "{what}: MERE {mere:.3e} MARE {mare:.3e} (T {t:.3e})"
        ))
    }
}

/// `Op` on random views of every dtype against the reference (`props::property_suite`).
fn property<Op: Elementwise>() {
    let _leaks = leak_check();
    let device = device(A2);
    let stream = device.stream().unwrap();
    let sizes = props::Sizes {
        cases: 96,
        max_out: 4096,
        max_storage: Some(8 * 4096),
    };
    let tally =
        props::property_suite::<Op>(&stream, device.soc_name(), sizes, REGRESSIONS, Op::NAME)
            .unwrap_or_else(|e| panic!("{e}"));
    assert!(tally.per_out.iter().all(|n| *n > 0), "{:?}", tally.per_out);
}

#[test]
fn mish_matches_the_reference_on_random_views() {
    property::<MishOp>();
}

#[test]
fn mish_inplace_matches_the_reference_on_random_views() {
    property::<MishInplaceOp>();
}

#[test]
fn zero_d_empty_and_eight_d() {
    let _leaks = leak_check();
    let stream = device(A2).stream().unwrap();
    for shape in [vec![], vec![0], vec![3, 0, 2], vec![2; 8]] {
        let x: ArrayD<f32> = common::array(&shape, 9, -6.0, 6.0);
        let want = reference::mish(x.view()).unwrap();
        let xd = DeviceTensor::from_array(&stream, &x).unwrap();
        let mut out = DeviceTensor::<f32>::zeros(&stream, &shape).unwrap();
        mish(&xd, &mut out, &stream).unwrap();
        judge(&out.to_array(&stream).unwrap(), &want, "mish").unwrap();
        let mut y = DeviceTensor::from_array(&stream, &x).unwrap();
        mish_inplace(&mut y, &stream).unwrap();
        judge(&y.to_array(&stream).unwrap(), &want, "mish_inplace").unwrap();
    }
}

/// Available on A3, A2 and the training series only; bf16 on A2/A3 only; rejections are
/// typed and make no FFI call.
#[test]
fn products_and_dtypes() {
    let _leaks = leak_check();
    assert!(Mish::available_on(SocFamily::Training910));
    assert!(!InplaceMish::available_on(SocFamily::Inference310P));
    assert!(!Mish::supports(SocFamily::Training910, DType::BF16));
    for (id, ok, bf16_ok) in [
        (A2, true, true),
        (A3, true, true),
        (A910, true, false),
        (B310, false, false),
        (P310, false, false),
    ] {
        let device = device(id);
        let soc = device.soc_name().to_owned();
        let stream = device.stream().unwrap();
        let x =
            DeviceTensor::from_array(&stream, &common::array::<f16>(&[5], 1, -2.0, 2.0)).unwrap();
        let mut o = DeviceTensor::<f16>::zeros(&stream, [5]).unwrap();
        let b =
            DeviceTensor::from_array(&stream, &common::array::<bf16>(&[5], 2, -2.0, 2.0)).unwrap();
        let mut ob = DeviceTensor::<bf16>::zeros(&stream, [5]).unwrap();
        let before = ascend_sim::call_count("aclCreateTensor");
        let results = [
            mish(&x, &mut o, &stream),
            mish(&b, &mut ob, &stream),
            mish_inplace(&mut ob, &stream),
        ];
        for (i, r) in results.into_iter().enumerate() {
            let allowed = ok && (i == 0 || bf16_ok);
            match r {
                Ok(()) if allowed => {}
                Err(Error::UnsupportedOperator {
                    operator,
                    missing_symbol: None,
                    ..
                }) if !ok => assert!(operator == "aclnnMish" || operator == "aclnnInplaceMish"),
                Err(Error::UnsupportedDtype {
                    argument, dtype, ..
                }) if ok && !allowed => {
                    assert_eq!(dtype, DType::BF16);
                    assert!(
                        argument == "x (self)" || argument == "x (selfRef)",
                        "{argument}"
                    );
                }
                other => panic!("{soc} call {i}: {other:?}"),
            }
        }
        if !ok {
            assert_eq!(before, ascend_sim::call_count("aclCreateTensor"), "{soc}");
        }
        stream.synchronize().unwrap();
    }
}

#[test]
fn shape_and_device_mismatches_are_typed() {
    let _leaks = leak_check();
    let stream = device(A2).stream().unwrap();
    let x =
        DeviceTensor::from_array(&stream, &common::array::<f32>(&[2, 3], 1, -2.0, 2.0)).unwrap();
    let mut o = DeviceTensor::<f32>::zeros(&stream, [3, 2]).unwrap();
    match mish(&x, &mut o, &stream) {
        Err(Error::ShapeMismatch {
            argument: "out",
            expected,
            actual,
        }) => assert_eq!((expected, actual), (vec![2, 3], vec![3, 2])),
        other => panic!("{other:?}"),
    }
    // A broadcast output shape is refused too: there is no broadcasting.
    let row = DeviceTensor::from_array(&stream, &common::array::<f32>(&[3], 1, -2.0, 2.0)).unwrap();
    let mut full = DeviceTensor::<f32>::zeros(&stream, [2, 3]).unwrap();
    assert!(matches!(
        mish(&row, &mut full, &stream),
        Err(Error::ShapeMismatch {
            argument: "out",
            ..
        })
    ));
    // ... but a broadcast input view of the output's shape is fine.
    mish(row.view().broadcast_to([2, 3]).unwrap(), &mut full, &stream).unwrap();
    let other = device(A910).stream().unwrap();
    assert!(matches!(
        mish(&x, o.view_mut().reshape([2, 3]).unwrap(), &other),
        Err(Error::DeviceMismatch {
            argument: "x (self)",
            ..
        })
    ));
    let want = reference::mish(common::array::<f32>(&[3], 1, -2.0, 2.0).view()).unwrap();
    let got = full.to_array::<ndarray::IxDyn>(&stream).unwrap();
    for r in got.outer_iter() {
        judge(&r.to_owned(), &want, "broadcast input").unwrap();
    }
}

/// Plans run phase 1 once and rebind addresses between tensors of the same layout.
#[test]
fn plans_reuse_one_executor() {
    let _leaks = leak_check();
    let stream = device(A2).stream().unwrap();
    let a: ArrayD<f16> = common::array(&[6, 4], 1, -5.0, 5.0);
    let b: ArrayD<f16> = common::array(&[6, 4], 2, -5.0, 5.0);
    let (ad, bd) = (
        DeviceTensor::from_array(&stream, &a).unwrap(),
        DeviceTensor::from_array(&stream, &b).unwrap(),
    );
    let mut oa = DeviceTensor::<f16>::zeros(&stream, [4, 6]).unwrap();
    let mut ob = DeviceTensor::<f16>::zeros(&stream, [4, 6]).unwrap();
    let mut plan = MishPlan::new(&ad, oa.view().t(), &stream).unwrap();
    let mut ia = DeviceTensor::from_array(&stream, &a).unwrap();
    let mut ib = DeviceTensor::from_array(&stream, &b).unwrap();
    let mut inplace = InplaceMishPlan::new(&ia, &stream).unwrap();
    assert!(plan.is_reusable() && inplace.is_reusable());
    let phase1 = (
        ascend_sim::call_count("aclnnMishGetWorkspaceSize"),
        ascend_sim::call_count("aclnnInplaceMishGetWorkspaceSize"),
    );
    for _ in 0..3 {
        plan.launch(&ad, oa.view_mut().t(), &stream).unwrap();
        plan.launch(&bd, ob.view_mut().t(), &stream).unwrap();
    }
    inplace.launch(&mut ia, &stream).unwrap();
    inplace.launch(&mut ib, &stream).unwrap();
    assert_eq!(
        phase1,
        (
            ascend_sim::call_count("aclnnMishGetWorkspaceSize"),
            ascend_sim::call_count("aclnnInplaceMishGetWorkspaceSize"),
        )
    );
    let t = threshold(DType::F16);
    for (x, o, i) in [(&a, &oa, &ia), (&b, &ob, &ib)] {
        let want = reference::mish(x.view()).unwrap();
        let got_t = o.to_array(&stream).unwrap().t().to_owned();
        assert_precise(&got_t, &want, t, "plan");
        assert_precise(&i.to_array(&stream).unwrap(), &want, t, "in-place plan");
    }
    assert!(matches!(
        plan.launch(&ad, &mut oa, &stream),
        Err(Error::PlanMismatch {
            argument: "out",
            ..
        })
    ));
}

/// The forward and backward operators agree: central differences of `mish` on the device
/// match `mish_backward` with a unit gradient.
#[test]
fn central_differences_of_mish_match_mish_backward() {
    let _leaks = leak_check();
    let stream = device(A2).stream().unwrap();
    // A grid of exact binary values, and x ± h exact too.
    let h = 2f32.powi(-7);
    let xs: Vec<f32> = (-640..=640).map(|i| i as f32 / 64.0).collect();
    let n = xs.len();
    let up: Vec<f32> = xs.iter().map(|x| x + h).collect();
    let down: Vec<f32> = xs.iter().map(|x| x - h).collect();
    let on_device = |v: &[f32]| -> ArrayD<f32> {
        let x = ArrayD::from_shape_vec(IxDyn(&[n]), v.to_vec()).unwrap();
        let xd = DeviceTensor::from_array(&stream, &x).unwrap();
        let mut o = DeviceTensor::<f32>::zeros(&stream, [n]).unwrap();
        mish(&xd, &mut o, &stream).unwrap();
        o.to_array(&stream).unwrap()
    };
    let (m_up, m_down) = (on_device(&up), on_device(&down));
    let x = DeviceTensor::from_array(
        &stream,
        &ArrayD::from_shape_vec(IxDyn(&[n]), xs.clone()).unwrap(),
    )
    .unwrap();
    let ones = DeviceTensor::from_array(&stream, &ArrayD::<f32>::ones(IxDyn(&[n]))).unwrap();
    let mut grad = DeviceTensor::<f32>::zeros(&stream, [n]).unwrap();
    mish_backward(&ones, &x, &mut grad, &stream).unwrap();
    let grad = grad.to_array::<ndarray::IxDyn>(&stream).unwrap();
    let mut worst = (0.0f64, 0.0f32);
    for i in 0..n {
        let fd = (f64::from(m_up[i]) - f64::from(m_down[i])) / (2.0 * f64::from(h));
        let err = (fd - f64::from(grad[i])).abs();
        // Truncation h²/6·|mish'''| (≤ 1e-5 here) plus the f32 rounding of two values of
        // mish (≤ 2·2^-23·|mish| / 2h).
        let bound =
            2e-5 + 2.0 * 2f64.powi(-23) * (f64::from(xs[i]).abs() + 1.0) / (2.0 * f64::from(h));
        assert!(
            err <= bound,
            "x = {}: central difference {fd} vs mish_backward {} (error {err:e} > {bound:e})",
            xs[i],
            grad[i]
        );
        if err > worst.0 {
            worst = (err, xs[i]);
        }
    }
    println!(
        "central differences: {n} points in [-10, 10], worst error {:.2e} at x = {}",
        worst.0, worst.1
    );
}
