//! Plans accept any tensors whose views have the planned layout (dims, strides, offset),
//! whatever the size of their storage, and report only real layout differences.

use crate::common;

use ascendcl::{DeviceTensor, Error, MishBackwardPlan, TensorView, reference};
use common::*;
use ndarray::{ArrayD, s};

/// Rows `start..end` of a view.
fn rows(v: TensorView<'_, f32>, start: usize, end: usize) -> TensorView<'_, f32> {
    v.slice(0, start, end, 1).unwrap()
}

fn expected(g: &ArrayD<f32>, x: &ArrayD<f32>) -> ArrayD<f32> {
    reference::mish_backward(g.view(), x.view()).unwrap()
}

/// Planned on whole `[2, 4]` tensors (storage 8), launched on the first two rows of `[4, 4]`
/// tensors (same dims, strides and offset, storage 16), then on the whole tensors again.
#[test]
fn a_plan_accepts_a_same_shaped_view_of_a_larger_tensor() {
    let _leaks = LeakCheck::start();
    let stream = device(A2).stream().unwrap();
    let g: ArrayD<f32> = array(&[2, 4], 1, -2.0, 2.0);
    let x: ArrayD<f32> = array(&[2, 4], 2, -4.0, 4.0);
    let gd = DeviceTensor::from_array(&stream, &g).unwrap();
    let xd = DeviceTensor::from_array(&stream, &x).unwrap();
    let mut out = DeviceTensor::<f32>::zeros(&stream, [2, 4]).unwrap();
    let mut plan = MishBackwardPlan::new(&gd, &xd, &out, &stream).unwrap();
    assert!(plan.is_reusable());

    let big_g: ArrayD<f32> = array(&[4, 4], 3, -2.0, 2.0);
    let big_x: ArrayD<f32> = array(&[4, 4], 4, -4.0, 4.0);
    let big_gd = DeviceTensor::from_array(&stream, &big_g).unwrap();
    let big_xd = DeviceTensor::from_array(&stream, &big_x).unwrap();
    let mut big_out =
        DeviceTensor::<f32>::from_array(&stream, &ArrayD::from_elem(vec![4, 4], 7.0f32)).unwrap();
    plan.launch(
        rows(big_gd.view(), 0, 2),
        rows(big_xd.view(), 0, 2),
        big_out.view_mut().slice(0, 0, 2, 1).unwrap(),
        &stream,
    )
    .unwrap();
    plan.launch(&gd, &xd, &mut out, &stream).unwrap();

    let top = |a: &ArrayD<f32>| a.slice(s![0..2, ..]).to_owned().into_dyn();
    let got = big_out.to_array(&stream).unwrap();
    let t = threshold(ascendcl::DType::F32);
    assert_precise(
        &top(&got),
        &expected(&top(&big_g), &top(&big_x)),
        t,
        "rows of [4, 4]",
    );
    assert!(
        got.slice(s![2.., ..]).iter().all(|v| *v == 7.0),
        "rows 2.. untouched"
    );
    assert_precise(
        &out.to_array(&stream).unwrap(),
        &expected(&g, &x),
        t,
        "whole [2, 4]",
    );
}

/// A plan built on a view with an offset accepts another tensor's view at the same offset
/// or at another one (a moving window), and rejects real differences (strides, dims),
/// naming the argument.
#[test]
fn a_plan_rejects_only_real_layout_differences() {
    let _leaks = LeakCheck::start();
    let stream = device(A2).stream().unwrap();
    let g: ArrayD<f32> = array(&[3, 4], 5, -2.0, 2.0);
    let x: ArrayD<f32> = array(&[3, 4], 6, -4.0, 4.0);
    let gd = DeviceTensor::from_array(&stream, &g).unwrap();
    let xd = DeviceTensor::from_array(&stream, &x).unwrap();
    let mut out = DeviceTensor::<f32>::zeros(&stream, [2, 4]).unwrap();
    let mut plan =
        MishBackwardPlan::new(rows(gd.view(), 1, 3), rows(xd.view(), 1, 3), &out, &stream).unwrap();

    let g2: ArrayD<f32> = array(&[5, 4], 7, -2.0, 2.0);
    let g2d = DeviceTensor::from_array(&stream, &g2).unwrap();
    plan.launch(
        rows(g2d.view(), 1, 3),
        rows(xd.view(), 1, 3),
        &mut out,
        &stream,
    )
    .unwrap();
    let want = expected(
        &g2.slice(s![1..3, ..]).to_owned().into_dyn(),
        &x.slice(s![1..3, ..]).to_owned().into_dyn(),
    );
    let t = threshold(ascendcl::DType::F32);
    assert_precise(
        &out.to_array(&stream).unwrap(),
        &want,
        t,
        "offset 4 in storage 20",
    );

    let mismatch = |r: ascendcl::Result<()>, argument: &str| match r {
        Err(Error::PlanMismatch {
            argument: a,
            detail,
        }) => {
            assert_eq!(a, argument, "{detail}");
            assert!(!detail.contains("storage"), "{detail}");
        }
        other => panic!("expected PlanMismatch of {argument}, got {other:?}"),
    };
    let first_rows = g2d.view().slice(0, 0, 2, 1).unwrap(); // offset 0
    plan.launch(first_rows, rows(xd.view(), 1, 3), &mut out, &stream)
        .unwrap();
    let want = expected(
        &g2.slice(s![0..2, ..]).to_owned().into_dyn(),
        &x.slice(s![1..3, ..]).to_owned().into_dyn(),
    );
    assert_precise(
        &out.to_array(&stream).unwrap(),
        &want,
        t,
        "offset 0 in storage 20",
    );
    let stepped = g2d.view().slice(0, 1, 5, 2).unwrap(); // rows 1, 3: stride 8
    mismatch(
        plan.launch(rows(gd.view(), 1, 3), stepped, &mut out, &stream),
        "x (self)",
    );
    let mut wide = DeviceTensor::<f32>::zeros(&stream, [2, 5]).unwrap();
    mismatch(
        plan.launch(
            rows(gd.view(), 1, 3),
            rows(xd.view(), 1, 3),
            &mut wide,
            &stream,
        ),
        "out (grad_input)",
    );
}
