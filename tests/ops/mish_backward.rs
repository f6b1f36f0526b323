//! End-to-end `mish_backward` on the simulator: every dtype combination, SoC rules,
//! broadcast, non-contiguous inputs and outputs, 0-d / 8-d / empty tensors, and every
//! invalid case with its typed error — each result checked against `ascendcl::reference`
//! with the CANN precision standard, and the simulator's counters checked for leaks.

use crate::common;

use ascendcl::{DType, DeviceTensor, Error, Stream, mish_backward, reference};
use common::*;
use half::{bf16, f16};
use ndarray::ArrayD;

/// Uploads inputs of the given shapes, runs the operator into a fresh output, and compares
/// with the reference.
fn run_case<
    G: ascendcl::element::Promote<X>,
    X: ascendcl::FloatElement,
    O: ascendcl::FloatElement,
>(
    stream: &Stream,
    gs: &[usize],
    xs: &[usize],
) {
    let g: ArrayD<G> = array(gs, 1, -2.0, 2.0);
    let x: ArrayD<X> = array(xs, 2, -5.0, 5.0);
    let expected: ArrayD<O> =
        reference::cast(&reference::mish_backward(g.view(), x.view()).expect("reference"));
    let gd = DeviceTensor::from_array(stream, &g).expect("upload grad");
    let xd = DeviceTensor::from_array(stream, &x).expect("upload x");
    let mut od = DeviceTensor::<O>::zeros(stream, expected.shape()).expect("zeros");
    mish_backward(&gd, &xd, &mut od, stream).expect("mish_backward");
    let actual = od.to_array(stream).expect("download");
    let t = threshold_for(G::DTYPE, X::DTYPE, O::DTYPE);
    assert_precise(
        &actual,
        &expected,
        t,
        &format!("{}/{}/{} {gs:?} {xs:?}", G::DTYPE, X::DTYPE, O::DTYPE),
    );
}

macro_rules! combos {
    ($stream:expr, $gs:expr, $xs:expr; $($g:ty),*) => {
        $( combos!(@x $stream, $gs, $xs, $g; f32, f16, bf16); )*
    };
    (@x $stream:expr, $gs:expr, $xs:expr, $g:ty; $($x:ty),*) => {
        $( combos!(@o $stream, $gs, $xs, $g, $x; f32, f16, bf16); )*
    };
    (@o $stream:expr, $gs:expr, $xs:expr, $g:ty, $x:ty; $($o:ty),*) => {
        $( run_case::<$g, $x, $o>($stream, $gs, $xs); )*
    };
}

#[test]
fn all_27_dtype_combinations_on_a2() {
    let _leaks = LeakCheck::start();
    let device = device(A2);
    assert_eq!(device.soc_name(), "Ascend910B4");
    let stream = device.stream().unwrap();
    combos!(&stream, &[3, 17], &[3, 17]; f32, f16, bf16);
    // and with broadcasting
    combos!(&stream, &[2, 1, 5], &[4, 1]; f32, f16, bf16);
}

#[test]
fn f16_and_f32_on_910a_and_bf16_rejected_before_any_ffi_call() {
    let _leaks = LeakCheck::start();
    let device = device(A910);
    assert_eq!(device.soc_name(), "Ascend910A");
    let stream = device.stream().unwrap();
    run_case::<f32, f32, f32>(&stream, &[8, 9], &[8, 9]);
    run_case::<f16, f16, f16>(&stream, &[8, 9], &[9]);
    run_case::<f16, f32, f32>(&stream, &[8, 9], &[8, 1]);
    run_case::<f32, f16, f16>(&stream, &[1, 9], &[8, 9]);
    run_case::<f16, f16, f32>(&stream, &[5], &[5]);
    run_case::<f32, f32, f16>(&stream, &[5], &[5]);

    let f = DeviceTensor::from_array(&stream, &array::<f32>(&[4], 3, -1.0, 1.0)).unwrap();
    let b = DeviceTensor::from_array(&stream, &array::<bf16>(&[4], 3, -1.0, 1.0)).unwrap();
    let mut out_f = DeviceTensor::<f32>::zeros(&stream, [4]).unwrap();
    let mut out_b = DeviceTensor::<bf16>::zeros(&stream, [4]).unwrap();
    stream.synchronize().unwrap();
    let symbols = [
        "aclCreateTensor",
        "aclnnMishBackwardGetWorkspaceSize",
        "aclnnMishBackward",
    ];
    let before: Vec<u64> = symbols.iter().map(|s| ascend_sim::call_count(s)).collect();
    let cases = [
        (
            mish_backward(&b, &f, &mut out_f, &stream),
            "grad (grad_output)",
        ),
        (mish_backward(&f, &b, &mut out_f, &stream), "x (self)"),
        (
            mish_backward(&f, &f, &mut out_b, &stream),
            "out (grad_input)",
        ),
    ];
    for (result, arg) in cases {
        match result {
            Err(Error::UnsupportedDtype {
                argument,
                dtype: DType::BF16,
                operator: "aclnnMishBackward",
                soc,
            }) => {
                assert_eq!(argument, arg);
                assert_eq!(soc, "Ascend910A");
            }
            other => panic!("expected UnsupportedDtype for {arg}, got {other:?}"),
        }
    }
    let after: Vec<u64> = symbols.iter().map(|s| ascend_sim::call_count(s)).collect();
    assert_eq!(before, after, "no FFI call for a rejected dtype");
}

#[test]
fn operator_unavailable_on_310b() {
    let _leaks = LeakCheck::start();
    let device = device(B310);
    let stream = device.stream().unwrap();
    let a = DeviceTensor::from_array(&stream, &array::<f32>(&[4], 3, -1.0, 1.0)).unwrap();
    let mut o = DeviceTensor::<f32>::zeros(&stream, [4]).unwrap();
    let before = ascend_sim::call_count("aclCreateTensor");
    match mish_backward(&a, &a, &mut o, &stream) {
        Err(Error::UnsupportedOperator {
            operator,
            soc,
            missing_symbol,
            ..
        }) => {
            assert_eq!(operator, "aclnnMishBackward");
            assert_eq!(soc, "Ascend310B1");
            assert_eq!(
                missing_symbol, None,
                "the product, not the toolkit, lacks it"
            );
        }
        other => panic!("expected UnsupportedOperator, got {other:?}"),
    }
    assert_eq!(before, ascend_sim::call_count("aclCreateTensor"));
}

#[test]
fn broadcast_shapes() {
    let _leaks = LeakCheck::start();
    let stream = device(A2).stream().unwrap();
    run_case::<f32, f32, f32>(&stream, &[4, 1, 3], &[2, 1]);
    run_case::<f32, f32, f32>(&stream, &[], &[5, 6]);
    run_case::<f16, f32, f32>(&stream, &[7], &[3, 1]);
    run_case::<bf16, bf16, bf16>(&stream, &[1, 1, 1], &[2, 3, 4]);
}

#[test]
fn zero_d_and_eight_d() {
    let _leaks = LeakCheck::start();
    let stream = device(A2).stream().unwrap();
    run_case::<f32, f32, f32>(&stream, &[], &[]);
    run_case::<f16, f16, f16>(&stream, &[], &[]);
    run_case::<f32, f32, f32>(
        &stream,
        &[2, 1, 2, 3, 1, 2, 2, 3],
        &[2, 1, 2, 3, 1, 2, 2, 3],
    );
    run_case::<bf16, f32, f16>(&stream, &[2, 1, 2, 3, 1, 2, 2, 3], &[1, 2, 3]);
}

#[test]
fn empty_tensors() {
    let _leaks = LeakCheck::start();
    let stream = device(A2).stream().unwrap();
    run_case::<f32, f32, f32>(&stream, &[0], &[0]);
    run_case::<f32, f16, f32>(&stream, &[3, 0], &[1, 0]);
    run_case::<f32, f32, f32>(&stream, &[0, 1], &[1, 7]);
    run_case::<bf16, bf16, bf16>(&stream, &[2, 0, 3], &[3]);
}

#[test]
fn non_contiguous_inputs_and_output() {
    let _leaks = LeakCheck::start();
    let stream = device(A2).stream().unwrap();
    let g: ArrayD<f32> = array(&[6, 8], 11, -2.0, 2.0);
    let x: ArrayD<f16> = array(&[8, 6], 12, -4.0, 4.0);
    let gd = DeviceTensor::from_array(&stream, &g).unwrap();
    let xd = DeviceTensor::from_array(&stream, &x).unwrap();

    // grad: rows 1, 3, 5 (step 2) and every other column from 1 -> [3, 4]
    let gv = gd
        .view()
        .slice(0, 1, 6, 2)
        .unwrap()
        .slice(1, 1, 8, 2)
        .unwrap();
    // x: transposed [6, 8], then the same window
    let xv = xd
        .view()
        .t()
        .slice(0, 1, 6, 2)
        .unwrap()
        .slice(1, 1, 8, 2)
        .unwrap();
    assert_eq!(gv.shape(), &[3, 4]);
    assert_eq!(xv.shape(), &[3, 4]);
    assert!(!xv.is_contiguous());

    // output: a transposed window of a larger tensor, [3, 4] with strides [1, 10]
    let mut od = DeviceTensor::<f32>::zeros(&stream, [6, 10]).unwrap();
    {
        let ov = od
            .view_mut()
            .slice(0, 2, 6, 1)
            .unwrap()
            .slice(1, 3, 6, 1)
            .unwrap()
            .t();
        assert_eq!(ov.shape(), &[3, 4]);
        mish_backward(gv, xv, ov, &stream).unwrap();
    }
    let full = od.to_array::<ndarray::IxDyn>(&stream).unwrap();

    let gs = g.slice(ndarray::s![1..6;2, 1..8;2]).into_dyn();
    let xt = x.t();
    let xs = xt.slice(ndarray::s![1..6;2, 1..8;2]).into_dyn();
    let expected: ArrayD<f32> = reference::mish_backward(gs, xs).unwrap();
    let actual = full
        .slice(ndarray::s![2..6, 3..6])
        .t()
        .to_owned()
        .into_dyn();
    assert_precise(&actual, &expected, threshold(DType::F32), "strided");
    // everything outside the output window is untouched
    let mut untouched = full.clone();
    untouched.slice_mut(ndarray::s![2..6, 3..6]).fill(0.0);
    assert!(untouched.iter().all(|v| *v == 0.0));

    // a broadcast (zero-stride) input view and a permuted 3-d input
    let x3: ArrayD<bf16> = array(&[2, 3, 4], 13, -3.0, 3.0);
    let x3d = DeviceTensor::from_array(&stream, &x3).unwrap();
    let x3p = x3d.view().permute(&[2, 0, 1]).unwrap(); // [4, 2, 3]
    let g1 = DeviceTensor::from_array(&stream, &array::<f32>(&[3], 14, -1.0, 1.0)).unwrap();
    let g1b = g1.view().broadcast_to([4, 2, 3]).unwrap();
    assert_eq!(g1b.strides(), &[0, 0, 1]);
    let mut o3 = DeviceTensor::<bf16>::zeros(&stream, [4, 2, 3]).unwrap();
    mish_backward(g1b, x3p, &mut o3, &stream).unwrap();
    let g1h = g1.to_array::<ndarray::IxDyn>(&stream).unwrap();
    let expected: ArrayD<bf16> = reference::cast(
        &reference::mish_backward(
            g1h.broadcast(ndarray::IxDyn(&[4, 2, 3])).unwrap(),
            x3.view().permuted_axes(ndarray::IxDyn(&[2, 0, 1])),
        )
        .unwrap(),
    );
    let actual = o3.to_array(&stream).unwrap();
    assert_precise(
        &actual,
        &expected,
        threshold(DType::BF16),
        "permuted/broadcast",
    );

    // downloading a view gives the view's elements
    let back = xd
        .view()
        .t()
        .slice(1, 0, 8, 3)
        .unwrap()
        .to_array(&stream)
        .unwrap();
    assert_eq!(
        back,
        x.t().slice(ndarray::s![.., 0..8;3]).to_owned().into_dyn()
    );
}

#[test]
fn invalid_cases_give_typed_errors_without_ffi_calls() {
    let _leaks = LeakCheck::start();
    let stream = device(A2).stream().unwrap();
    let other = device(A910).stream().unwrap();
    let t = |shape: &[usize]| DeviceTensor::<f32>::zeros(&stream, shape).unwrap();
    let nine = [1usize; 9];
    let a = t(&[2, 3]);
    let b = t(&[4]);
    let mut out23 = t(&[2, 3]);
    let mut out32 = t(&[3, 2]);
    let far = DeviceTensor::<f32>::zeros(&other, [2, 3]).unwrap();
    let before = ascend_sim::call_count("aclCreateTensor");

    // more than 8 dims cannot even be created
    assert!(matches!(
        DeviceTensor::<f32>::zeros(&stream, nine),
        Err(Error::TooManyDims {
            dims: 9,
            max: 8,
            ..
        })
    ));
    // a view with 9 dims neither
    assert!(matches!(
        a.view().reshape(nine),
        Err(Error::TooManyDims { dims: 9, .. })
    ));
    assert!(matches!(
        mish_backward(&a, &b, &mut out23, &stream),
        Err(Error::NotBroadcastable { .. })
    ));
    match mish_backward(&a, &a, &mut out32, &stream) {
        Err(Error::ShapeMismatch {
            argument: "out (grad_input)",
            expected,
            actual,
        }) => {
            assert_eq!(expected, vec![2, 3]);
            assert_eq!(actual, vec![3, 2]);
        }
        other => panic!("expected ShapeMismatch, got {other:?}"),
    }
    for (result, arg) in [
        (
            mish_backward(&far, &a, &mut out23, &stream),
            "grad (grad_output)",
        ),
        (mish_backward(&a, &far, &mut out23, &stream), "x (self)"),
    ] {
        assert!(
            matches!(result, Err(Error::DeviceMismatch { argument, expected: 0, found: 1 }) if argument == arg),
            "{arg}: {result:?}"
        );
    }
    assert!(matches!(
        mish_backward(&a, &a, &mut out23, &other),
        Err(Error::DeviceMismatch {
            argument: "grad (grad_output)",
            expected: 1,
            found: 0
        })
    ));
    assert!(matches!(
        far.to_array::<ndarray::IxDyn>(&stream),
        Err(Error::DeviceMismatch { .. })
    ));
    // views are bounds-checked
    assert!(matches!(
        a.view().slice(1, 0, 4, 1),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        a.view().slice(2, 0, 1, 1),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        a.view().slice(0, 0, 2, 0),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        a.view().permute(&[0, 0]),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        a.view().broadcast_to([3, 3]),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        a.view().t().reshape([6]),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        a.view().reshape([7]),
        Err(Error::InvalidArgument(_))
    ));
    // huge steps neither panic nor overflow
    assert_eq!(
        a.view().slice(0, 0, 2, usize::MAX).unwrap().shape(),
        &[1, 3]
    );
    assert_eq!(before, ascend_sim::call_count("aclCreateTensor"));
}

#[test]
fn vendor_sample_values() {
    let _leaks = LeakCheck::start();
    let stream = device(A2).stream().unwrap();
    let g = ndarray::Array::from_shape_vec((4, 2), (0..8).map(|v| v as f32).collect()).unwrap();
    let x =
        ndarray::Array::from_shape_vec((4, 2), vec![1.0f32, 1., 1., 2., 2., 2., 3., 3.]).unwrap();
    let gd = DeviceTensor::from_array(&stream, &g).unwrap();
    let xd = DeviceTensor::from_array(&stream, &x).unwrap();
    let mut od = DeviceTensor::<f32>::zeros(&stream, [4, 2]).unwrap();
    mish_backward(&gd, &xd, &mut od, &stream).unwrap();
    let out = od.to_array::<ndarray::IxDyn>(&stream).unwrap();
    let want: [f64; 8] = [
        0.0, 1.049036, 2.098072, 3.207954, 4.277272, 5.346590, 6.126641, 7.147748,
    ];
    for (o, w) in out.iter().zip(want) {
        assert!((f64::from(*o) - w).abs() < 1e-5, "{o} vs {w}");
    }
}
