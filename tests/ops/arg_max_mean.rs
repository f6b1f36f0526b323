//! `arg_max` and `mean` on the simulator against `ascendcl::reference`: every dtype the
//! vendor lists that the crate has, every dim (the last one, inner ones, several), keepdim,
//! transposed and stepped views, 0-D and empty tensors, plans and allocating forms.

use crate::common;

use ascendcl::{
    ArgMaxPlan, DeviceTensor, Element, MeanPlan, Stream, arg_max, arg_max_new, mean, mean_new,
    reference,
};
use common::*;
use half::{bf16, f16};
use ndarray::{ArrayD, IxDyn};

const SHAPES: &[&[usize]] = &[
    &[7],
    &[4, 9],
    &[3, 5, 6],
    &[2, 3, 1, 4],
    &[],
    &[0, 3],
    &[3, 0, 2],
];

/// Values with ties: integers in a small range (exact in every dtype).
fn ties<T: Element>(shape: &[usize], seed: u64) -> ArrayD<T> {
    array::<f32>(shape, seed, 0.0, 6.0).mapv(|v| T::from_f64(f64::from(v.floor())))
}

fn arg_max_cases<T: Element>(stream: &Stream, seed: u64) -> usize {
    let mut n = 0;
    for shape in SHAPES {
        let x: ArrayD<T> = ties(shape, seed + n as u64);
        let xd = DeviceTensor::from_array(stream, &x).unwrap();
        let r = shape.len() as i64;
        for dim in (-r.max(1))..r.max(1) {
            for keep in [false, true] {
                let want = reference::arg_max(x.view(), dim, keep).unwrap();
                let got: DeviceTensor<i64> = arg_max_new(&xd, dim, keep, stream).unwrap();
                let got = got.to_array::<IxDyn>(stream).unwrap();
                if !x.is_empty() {
                    assert_eq!(got, want, "{} {shape:?} dim {dim} keep {keep}", T::DTYPE);
                } else {
                    assert_eq!(got.shape(), want.shape());
                }
                n += 1;
            }
        }
    }
    n
}

#[test]
fn arg_max_matches_the_reference_over_every_dim_and_dtype() {
    let _leaks = LeakCheck::start();
    let stream = device(A2).stream().unwrap();
    let n = arg_max_cases::<f32>(&stream, 1)
        + arg_max_cases::<f16>(&stream, 2)
        + arg_max_cases::<bf16>(&stream, 3)
        + arg_max_cases::<f64>(&stream, 4)
        + arg_max_cases::<i8>(&stream, 5)
        + arg_max_cases::<i32>(&stream, 6)
        + arg_max_cases::<i64>(&stream, 7)
        + arg_max_cases::<u8>(&stream, 8);
    assert_eq!(n, 8 * 64);
    // A transposed, stepped view into an i32 out through a plan; a NaN is the maximum.
    let mut x: ArrayD<f32> = array(&[6, 10], 9, -5.0, 5.0);
    x[[3, 4]] = f32::NAN;
    let xd = DeviceTensor::from_array(&stream, &x).unwrap();
    let view = || xd.view().t().slice(0, 0, 10, 2).unwrap(); // [5, 6]
    let mut out = DeviceTensor::<i32>::zeros(&stream, [5]).unwrap();
    let mut plan = ArgMaxPlan::new(view(), -1, false, &out, &stream).unwrap();
    plan.launch(view(), &mut out, &stream).unwrap();
    let xs = x.t().slice(ndarray::s![..;2, ..]).to_owned();
    let want = reference::arg_max(xs.view(), -1, false).unwrap();
    assert_eq!(
        out.to_array::<IxDyn>(&stream).unwrap(),
        want.mapv(|v| v as i32)
    );
    assert_eq!(want[[2]], 3, "the NaN at [3, 4] is row 2's maximum");
    // The one-off form with an explicit out gives the same.
    let mut again = DeviceTensor::<i64>::zeros(&stream, [5, 1]).unwrap();
    arg_max(view(), 1, true, &mut again, &stream).unwrap();
    assert_eq!(
        again
            .to_array::<IxDyn>(&stream)
            .unwrap()
            .into_shape_with_order(5)
            .unwrap(),
        want.into_shape_with_order(5).unwrap()
    );
}

#[test]
fn arg_max_refuses_what_the_vendor_refuses() {
    let _leaks = LeakCheck::start();
    let stream = device(A910).stream().unwrap();
    let b = DeviceTensor::from_array(&stream, &array::<bf16>(&[3, 2], 1, -1.0, 1.0)).unwrap();
    let r: ascendcl::Result<DeviceTensor<i64>> = arg_max_new(&b, 0, false, &stream);
    assert!(
        matches!(r, Err(ascendcl::Error::UnsupportedDtype { .. })),
        "{r:?}"
    );
    let f = DeviceTensor::from_array(&stream, &array::<f32>(&[3, 2], 1, -1.0, 1.0)).unwrap();
    let r: ascendcl::Result<DeviceTensor<i64>> = arg_max_new(&f, 2, false, &stream);
    assert!(
        matches!(r, Err(ascendcl::Error::InvalidArgument(_))),
        "{r:?}"
    );
    let mut wrong = DeviceTensor::<i64>::zeros(&stream, [3]).unwrap();
    assert!(matches!(
        arg_max(&f, 0, false, &mut wrong, &stream),
        Err(ascendcl::Error::ShapeMismatch { .. })
    ));
}

/// Every dims list of a rank: singletons (positive and negative), pairs, empty (all).
fn dims_lists(rank: usize) -> Vec<Vec<i64>> {
    let r = rank as i64;
    let mut v: Vec<Vec<i64>> = vec![vec![]];
    for d in 0..r {
        v.push(vec![d]);
        v.push(vec![d - r]);
        for e in d + 1..r {
            v.push(vec![e, d]);
        }
    }
    if rank == 0 {
        v.push(vec![0]);
    }
    v
}

fn mean_cases<T: Element, O: Element>(stream: &Stream, seed: u64, t: f64) -> usize {
    let mut n = 0;
    for shape in SHAPES {
        let x: ArrayD<T> = array(shape, seed + n as u64, -4.0, 4.0);
        let xd = DeviceTensor::from_array(stream, &x).unwrap();
        for dims in dims_lists(shape.len()) {
            for keep in [false, true] {
                let want: ArrayD<O> = reference::mean(x.view(), &dims, keep).unwrap();
                let got: DeviceTensor<O> = mean_new(&xd, &dims, keep, stream).unwrap();
                let got = got.to_array::<IxDyn>(stream).unwrap();
                let what = format!(
                    "{}->{} {shape:?} dims {dims:?} keep {keep}",
                    T::DTYPE,
                    O::DTYPE
                );
                if x.is_empty() {
                    assert_eq!(got.shape(), want.shape(), "{what}");
                    if O::DTYPE.is_float() {
                        assert!(got.iter().all(|v| v.to_f64().is_nan()), "{what}: NaN");
                    }
                } else if t == 0.0 {
                    assert_eq!(got, want, "{what}");
                } else {
                    assert_precise(&got, &want, t, &what);
                }
                n += 1;
            }
        }
    }
    n
}

#[test]
fn mean_matches_the_reference_over_dims_keepdim_and_dtypes() {
    let _leaks = LeakCheck::start();
    let stream = device(A2).stream().unwrap();
    let f = |d| threshold(d);
    let n = mean_cases::<f32, f32>(&stream, 1, f(ascendcl::DType::F32))
        + mean_cases::<f16, f16>(&stream, 2, f(ascendcl::DType::F16))
        + mean_cases::<bf16, bf16>(&stream, 3, f(ascendcl::DType::BF16))
        + mean_cases::<f16, f32>(&stream, 4, f(ascendcl::DType::F32))
        + mean_cases::<f64, f64>(&stream, 5, 1e-12)
        + mean_cases::<i32, i32>(&stream, 6, 0.0)
        + mean_cases::<i8, f32>(&stream, 7, f(ascendcl::DType::F32));
    assert_eq!(n, 7 * 104);
    // A transposed view into a stepped out through a plan.
    let x: ArrayD<f32> = array(&[8, 6], 9, -3.0, 3.0);
    let xd = DeviceTensor::from_array(&stream, &x).unwrap();
    let mut out = DeviceTensor::<f32>::zeros(&stream, [12]).unwrap();
    let mut plan = MeanPlan::new(
        xd.view().t(),
        &[1],
        false,
        out.view_mut().slice(0, 0, 12, 2).unwrap(),
        &stream,
    )
    .unwrap();
    plan.launch(
        xd.view().t(),
        out.view_mut().slice(0, 0, 12, 2).unwrap(),
        &stream,
    )
    .unwrap();
    let want: ArrayD<f32> = reference::mean(x.t(), &[1], false).unwrap();
    let got = out.to_array::<IxDyn>(&stream).unwrap();
    let got = got.slice(ndarray::s![..;2]).to_owned().into_dyn();
    assert_precise(&got, &want, threshold(ascendcl::DType::F32), "plan");
    // The one-off form into an f64 out computes in f64.
    let mut wide = DeviceTensor::<f64>::zeros(&stream, [6]).unwrap();
    mean(&xd, &[0], false, &mut wide, &stream).unwrap();
    let want: ArrayD<f64> = reference::mean(x.view(), &[0], false).unwrap();
    assert_precise(
        &wide.to_array::<IxDyn>(&stream).unwrap(),
        &want,
        1e-12,
        "f64 out",
    );
}
