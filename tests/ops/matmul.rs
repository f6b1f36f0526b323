//! matmul and addmm against their CPU references, on the simulator: every operand rank
//! (1-D to 3-D), batch broadcasting, empty products, transposed and strided views, the
//! dtypes and cube math types; the cube-math rule per product family.

use crate::common;

use ascendcl::reference;
use ascendcl::{CubeMath, DeviceTensor, Element, Error, SocFamily};
use common::held::{Lay, hold, lay};
use common::*;
use half::{bf16, f16};
use ndarray::{ArrayD, Ix2};
use proptest::prelude::*;

/// Operand shapes `(a, b)` of a valid matmul: ranks 1 to 3, sizes 0 to 4 (0 rarely), batch
/// dims that broadcast.
fn matmul_shapes() -> impl Strategy<Value = (Vec<usize>, Vec<usize>)> {
    let size = || prop_oneof![1 => Just(0usize), 8 => 1usize..=4];
    (
        1usize..=3,
        1usize..=3,
        size(),
        size(),
        size(),
        size(),
        any::<bool>(),
    )
        .prop_map(|(ra, rb, m, k, n, batch, ones)| {
            let a = match ra {
                1 => vec![k],
                2 => vec![m, k],
                _ => vec![if ones { 1 } else { batch }, m, k],
            };
            let b = match rb {
                1 => vec![k],
                2 => vec![k, n],
                _ => vec![batch, k, n],
            };
            (a, b)
        })
}

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 32,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

fn judge<O: Element>(got: &ArrayD<O>, want: &ArrayD<O>, t: f64) -> Result<(), TestCaseError> {
    prop_assert_eq!(got.shape(), want.shape());
    let (mere, mare) = mere_mare(got, want);
    prop_assert!(
        mere < t && mare < 10.0 * t,
        "MERE {mere:e} MARE {mare:e} (T {t:e})"
    );
    Ok(())
}

fn check_matmul<A: Element, B: Element, O: Element>(
    (sa, sb): (Vec<usize>, Vec<usize>),
    lays: (Lay, Lay),
    math: CubeMath,
    seed: u64,
) -> Result<(), TestCaseError> {
    let _check = LeakCheck::start();
    let s = device(A2).stream().unwrap();
    let a = array::<A>(&sa, seed, -1.0, 1.0);
    let b = array::<B>(&sb, seed + 1, -1.0, 1.0);
    let want: ArrayD<O> = reference::matmul_as(a.view(), b.view(), math).unwrap();
    let (da, db) = (hold(&s, &a, lays.0), hold(&s, &b, lays.1));
    let mut out = DeviceTensor::<O>::zeros(&s, want.shape()).unwrap();
    ascendcl::matmul(da.view(), db.view(), &mut out, math, &s).unwrap();
    // Sums of up to 4 products: the storage dtype's threshold.
    let t = threshold_for(A::DTYPE, B::DTYPE, O::DTYPE);
    judge(&out.to_array(&s).unwrap(), &want, t)
}

fn check_addmm<T: Element>(
    (m, k, n): (usize, usize, usize),
    bias_shape: usize,
    (beta, alpha): (f64, f64),
    lays: (Lay, Lay),
    seed: u64,
) -> Result<(), TestCaseError> {
    let _check = LeakCheck::start();
    let s = device(A2).stream().unwrap();
    // Mixed signs: sums that cancel. The reference models the device's roundings (the
    // product, beta·self, their sum), so the standard holds for halves too.
    let lo = -1.0;
    let bias_dims: Vec<usize> = match bias_shape {
        0 => vec![n],
        1 => vec![1, n],
        2 => vec![m, n],
        3 => vec![m, 1],
        _ => vec![],
    };
    let bias = array::<T>(&bias_dims, seed, lo, 1.0);
    let a = array::<T>(&[m, k], seed + 1, lo, 1.0);
    let b = array::<T>(&[k, n], seed + 2, lo, 1.0);
    let math = CubeMath::KeepDtype;
    let want: ArrayD<T> = reference::addmm_as(
        bias.view(),
        a.view().into_dimensionality::<Ix2>().unwrap(),
        b.view().into_dimensionality::<Ix2>().unwrap(),
        beta,
        alpha,
        math,
    )
    .unwrap()
    .into_dyn();
    let (db, da, dw) = (
        hold(&s, &bias, Lay::Whole),
        hold(&s, &a, lays.0),
        hold(&s, &b, lays.1),
    );
    let mut out = DeviceTensor::<T>::zeros(&s, [m, n]).unwrap();
    ascendcl::addmm(
        db.view(),
        da.view(),
        dw.view(),
        beta,
        alpha,
        &mut out,
        math,
        &s,
    )
    .unwrap();
    judge(&out.to_array(&s).unwrap(), &want, threshold(T::DTYPE))
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn matmul_matches_the_reference(
        shapes in matmul_shapes(),
        lays in (lay(), lay()),
        types in 0usize..5,
        seed in 0u64..1000,
    ) {
        match types {
            0 => check_matmul::<f32, f32, f32>(shapes, lays, CubeMath::KeepDtype, seed)?,
            1 => check_matmul::<f32, f32, f32>(shapes, lays, CubeMath::UseFp16, seed)?,
            2 => check_matmul::<f16, f16, f16>(shapes, lays, CubeMath::KeepDtype, seed)?,
            3 => check_matmul::<bf16, bf16, f32>(shapes, lays, CubeMath::KeepDtype, seed)?,
            _ => check_matmul::<f16, f16, f32>(shapes, lays, CubeMath::UseFp32Add, seed)?,
        }
    }

    #[test]
    fn addmm_matches_the_reference(
        mkn in (0usize..=4, 0usize..=4, 0usize..=4),
        bias_shape in 0usize..5,
        scales in prop_oneof![Just((1.0, 1.0)), Just((0.5, -2.0)), Just((0.0, 1.0)), Just((1.0, 0.0))],
        lays in (lay(), lay()),
        half in any::<bool>(),
        seed in 0u64..1000,
    ) {
        if half {
            check_addmm::<f16>(mkn, bias_shape, scales, lays, seed)?;
        } else {
            check_addmm::<f32>(mkn, bias_shape, scales, lays, seed)?;
        }
    }
}

/// A sum that cancels exactly on the device: in f16 the matmul kernel writes its product
/// rounded to f16, so a bias equal to that rounded product minus it is 0, not the exact
/// product's rounding error. The reference follows the same chain.
#[test]
fn f16_addmm_cancels_as_the_device_rounds() {
    let _check = LeakCheck::start();
    let s = device(A2).stream().unwrap();
    let (x, y) = (f16::from_f32(0.1), f16::from_f32(0.3));
    let exact = x.to_f64() * y.to_f64();
    let product = f16::from_f64(exact);
    assert_ne!(product.to_f64(), exact, "the product must not be an f16");
    let a = ndarray::arr2(&[[x]]);
    let b = ndarray::arr2(&[[y]]);
    let bias = ndarray::arr1(&[product]);
    let math = CubeMath::KeepDtype;
    let want = reference::addmm(bias.view(), a.view(), b.view(), 1.0, -1.0, math).unwrap();
    assert_eq!(want[[0, 0]], f16::ZERO);
    let (da, db, dbias) = (
        DeviceTensor::from_array(&s, &a).unwrap(),
        DeviceTensor::from_array(&s, &b).unwrap(),
        DeviceTensor::from_array(&s, &bias).unwrap(),
    );
    let mut out = DeviceTensor::<f16>::zeros(&s, [1, 1]).unwrap();
    ascendcl::addmm(&dbias, &da, &db, 1.0, -1.0, &mut out, math, &s).unwrap();
    assert_eq!(out.to_array::<Ix2>(&s).unwrap(), want);
}

/// Wrong ranks, contracted sizes, batch dims, outputs and cube math types are typed errors
/// naming the argument, before any C call.
#[test]
fn bad_matmul_input_is_refused_before_any_c_call() {
    let _check = LeakCheck::start();
    let s = device(A2).stream().unwrap();
    let z = |shape: &[usize]| DeviceTensor::<f32>::zeros(&s, shape).unwrap();
    let (a23, a34, a24, a0) = (z(&[2, 3]), z(&[3, 4]), z(&[2, 4]), z(&[]));
    let (b234, b334) = (z(&[2, 3, 4]), z(&[3, 3, 4]));
    let mut o24 = z(&[2, 4]);
    let before = (
        ascend_sim::call_count("aclnnMatmulGetWorkspaceSize"),
        ascend_sim::call_count("aclnnAddmmGetWorkspaceSize"),
    );
    let keep = CubeMath::KeepDtype;
    let text = |r: ascendcl::Result<()>| r.unwrap_err().to_string();
    assert_eq!(
        text(ascendcl::matmul(&a0, &a34, &mut o24, keep, &s)),
        "invalid argument: a (self) must have 1 to 6 dims"
    );
    assert_eq!(
        text(ascendcl::matmul(&a23, &a24, &mut o24, keep, &s)),
        "invalid argument: b (mat2) [2, 4] has contracted size 2, but the other operand's is 3"
    );
    let mut o = z(&[2, 2, 4]);
    assert!(matches!(
        ascendcl::matmul(z(&[2, 2, 3]), &b334, &mut o, keep, &s),
        Err(Error::NotBroadcastable { .. })
    ));
    assert!(matches!(
        ascendcl::matmul(&a23, &b234, &mut o24, keep, &s),
        Err(Error::ShapeMismatch {
            argument: "out",
            ..
        })
    ));
    assert!(matches!(
        ascendcl::addmm(z(&[3]), &a23, &a34, 1.0, 1.0, &mut o24, keep, &s),
        Err(Error::NotBroadcastable {
            argument: "bias (self)",
            ..
        })
    ));
    assert_eq!(
        text(ascendcl::addmm(
            z(&[4]),
            &b234,
            &a34,
            1.0,
            1.0,
            &mut o24,
            keep,
            &s
        )),
        "invalid argument: a (mat1) must have 2 dims"
    );
    assert_eq!(
        (
            ascend_sim::call_count("aclnnMatmulGetWorkspaceSize"),
            ascend_sim::call_count("aclnnAddmmGetWorkspaceSize"),
        ),
        before
    );
    s.synchronize().unwrap();
}

/// The training series computes an f32 product only in f16: KeepDtype and UseHf32 are
/// refused with f32 inputs, UseFp32Add always; the per-family default passes.
#[test]
fn cube_math_follows_the_product_family() {
    let _check = LeakCheck::start();
    let s = device(A910).stream().unwrap();
    let a = DeviceTensor::from_array(&s, &ndarray::array![[1.0f32, 2.0]]).unwrap();
    let b = DeviceTensor::from_array(&s, &ndarray::array![[3.0f32], [4.0]]).unwrap();
    let mut o = DeviceTensor::<f32>::zeros(&s, [1, 1]).unwrap();
    for math in [CubeMath::KeepDtype, CubeMath::UseHf32, CubeMath::UseFp32Add] {
        let e = ascendcl::matmul(&a, &b, &mut o, math, &s).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("invalid argument: math (cubeMathType) "),
            "{e}"
        );
    }
    let math = CubeMath::default_for(SocFamily::Training910);
    assert_eq!(math, CubeMath::default_for_device(&device(A910)));
    ascendcl::matmul(&a, &b, &mut o, math, &s).unwrap();
    assert_eq!(o.to_array::<ndarray::Ix2>(&s).unwrap()[[0, 0]], 11.0);
    let s = device(A2).stream().unwrap();
    let a = DeviceTensor::from_array(&s, &ndarray::array![[1.0f32, 2.0]]).unwrap();
    let b = DeviceTensor::from_array(&s, &ndarray::array![[3.0f32], [4.0]]).unwrap();
    let mut o = DeviceTensor::<f32>::zeros(&s, [1, 1]).unwrap();
    for math in CubeMath::ALL {
        ascendcl::matmul(&a, &b, &mut o, math, &s).unwrap();
    }
}
