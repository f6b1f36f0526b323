//! The CNN operators end to end on the simulator: the references against direct loops
//! written here, the device kernels against the references on larger shapes (stride,
//! padding, dilation, groups, transposed, 1-D/2-D/3-D, empty batch, half precision),
//! plans and allocating forms, the backward operators against central differences of
//! their forward on the device, and a CNN training step's cost.

mod common;

use crate::common::runtime;
use ascendcl::reference::{self, ConvSpec};
use ascendcl::{
    ConvolutionPlan, CubeMath, DeviceTensor, Error, Stream, TensorView, convolution,
    convolution_new,
};
use half::f16;
use ndarray::{ArrayD, IxDyn};

/// Deterministic values in [-1, 1).
fn vals(n: usize, seed: u64) -> Vec<f32> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15).wrapping_add(1);
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            ((s >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
        })
        .collect()
}

fn arr(shape: &[usize], seed: u64) -> ArrayD<f32> {
    ArrayD::from_shape_vec(IxDyn(shape), vals(shape.iter().product(), seed)).unwrap()
}

fn stream() -> Stream {
    runtime()
        .device(0)
        .expect("device")
        .stream()
        .expect("stream")
}

/// The largest |a − b| / (1 + |b|).
fn max_err(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs() / (1.0 + y.abs()))
        .fold(0.0, f64::max)
}

fn f64s<T: ascendcl::Element>(a: &ArrayD<T>) -> Vec<f64> {
    a.iter().map(|v| v.to_f64()).collect()
}

/// A direct 2-D (transposed) convolution: seven nested loops, symmetric padding.
#[allow(clippy::too_many_arguments)]
fn naive_conv2d(
    x: &ArrayD<f32>,
    w: &ArrayD<f32>,
    b: Option<&[f32]>,
    s: [usize; 2],
    p: [usize; 2],
    d: [usize; 2],
    op: [usize; 2],
    groups: usize,
    transposed: bool,
) -> ArrayD<f64> {
    let (n, cin, ih, iw) = (x.shape()[0], x.shape()[1], x.shape()[2], x.shape()[3]);
    let (kh, kw) = (w.shape()[2], w.shape()[3]);
    let (cout, oh, ow) = if transposed {
        (
            w.shape()[1] * groups,
            (ih - 1) * s[0] + d[0] * (kh - 1) + op[0] + 1 - 2 * p[0],
            (iw - 1) * s[1] + d[1] * (kw - 1) + op[1] + 1 - 2 * p[1],
        )
    } else {
        (
            w.shape()[0],
            (ih + 2 * p[0] - d[0] * (kh - 1) - 1) / s[0] + 1,
            (iw + 2 * p[1] - d[1] * (kw - 1) - 1) / s[1] + 1,
        )
    };
    let (cig, cog) = (cin / groups, cout / groups);
    let mut out = ArrayD::<f64>::zeros(IxDyn(&[n, cout, oh, ow]));
    for bn in 0..n {
        for co in 0..cout {
            let g = co / cog;
            for ci in 0..cig {
                let c = g * cig + ci;
                for a in 0..kh {
                    for e in 0..kw {
                        if transposed {
                            let wv = w[[c, co % cog, a, e].as_slice()] as f64;
                            for i in 0..ih {
                                for j in 0..iw {
                                    let y = (i * s[0] + a * d[0]) as isize - p[0] as isize;
                                    let z = (j * s[1] + e * d[1]) as isize - p[1] as isize;
                                    if y >= 0 && z >= 0 && (y as usize) < oh && (z as usize) < ow {
                                        out[[bn, co, y as usize, z as usize].as_slice()] +=
                                            x[[bn, c, i, j].as_slice()] as f64 * wv;
                                    }
                                }
                            }
                        } else {
                            let wv = w[[co, ci, a, e].as_slice()] as f64;
                            for i in 0..oh {
                                for j in 0..ow {
                                    let y = (i * s[0] + a * d[0]) as isize - p[0] as isize;
                                    let z = (j * s[1] + e * d[1]) as isize - p[1] as isize;
                                    if y >= 0 && z >= 0 && (y as usize) < ih && (z as usize) < iw {
                                        out[[bn, co, i, j].as_slice()] +=
                                            x[[bn, c, y as usize, z as usize].as_slice()] as f64
                                                * wv;
                                    }
                                }
                            }
                        }
                    }
                }
            }
            if let Some(b) = b {
                for i in 0..oh {
                    for j in 0..ow {
                        out[[bn, co, i, j].as_slice()] += b[co] as f64;
                    }
                }
            }
        }
    }
    out
}

/// (stride, padding, dilation, output padding, groups, transposed) of the small cases.
type Small = ([usize; 2], [usize; 2], [usize; 2], [usize; 2], usize, bool);
const SMALL: &[Small] = &[
    ([1, 1], [0, 0], [1, 1], [0, 0], 1, false),
    ([2, 1], [1, 0], [1, 1], [0, 0], 1, false),
    ([1, 2], [1, 2], [2, 1], [0, 0], 1, false),
    ([2, 2], [1, 1], [1, 2], [0, 0], 2, false),
    ([1, 1], [0, 0], [1, 1], [0, 0], 1, true),
    ([2, 1], [1, 0], [1, 1], [1, 0], 1, true),
    ([2, 3], [1, 1], [2, 1], [1, 2], 2, true),
];

#[test]
fn reference_convolution_matches_a_naive_loop_on_small_shapes() {
    let mut checked = 0;
    for (k, &(s, p, d, op, g, transposed)) in SMALL.iter().enumerate() {
        let x = arr(&[2, 4, 5, 6], k as u64);
        let w = if transposed {
            arr(&[4, 6 / g, 3, 2], 9 + k as u64)
        } else {
            arr(&[6, 4 / g, 3, 2], 9 + k as u64)
        };
        let b = vals(6, 99);
        let st = [s[0] as i64, s[1] as i64];
        let pd = [p[0] as i64, p[1] as i64];
        let dl = [d[0] as i64, d[1] as i64];
        let opd = [op[0] as i64, op[1] as i64];
        let spec = ConvSpec {
            stride: &st,
            padding: &pd,
            dilation: &dl,
            transposed,
            output_padding: &opd,
            groups: g as i64,
        };
        let bias = ndarray::ArrayView1::from(&b[..]);
        let got = reference::convolution(x.view(), w.view(), Some(bias), &spec).expect("reference");
        let want = naive_conv2d(&x, &w, Some(&b), s, p, d, op, g, transposed);
        assert_eq!(got.shape(), want.shape(), "case {k}");
        assert!(max_err(&f64s(&got), &f64s(&want)) < 1e-12, "case {k}");
        checked += 1;
    }
    assert_eq!(checked, SMALL.len());
}

#[test]
fn reference_convolution_takes_four_sided_padding_as_top_bottom_left_right() {
    let x = arr(&[1, 2, 4, 5], 3);
    let w = arr(&[3, 2, 2, 2], 4);
    let spec = |p: &'static [i64]| ConvSpec {
        padding: p,
        ..ConvSpec::unit(2)
    };
    let four = reference::convolution(
        x.view(),
        w.view(),
        None::<ndarray::ArrayView1<f32>>,
        &spec(&[1, 0, 2, 1]),
    )
    .unwrap();
    // Padding the input by hand (top 1, bottom 0, left 2, right 1) and convolving unpadded.
    let mut padded = ArrayD::<f32>::zeros(IxDyn(&[1, 2, 5, 8]));
    for c in 0..2 {
        for i in 0..4 {
            for j in 0..5 {
                padded[[0, c, i + 1, j + 2].as_slice()] = x[[0, c, i, j].as_slice()];
            }
        }
    }
    let want = reference::convolution(
        padded.view(),
        w.view(),
        None::<ndarray::ArrayView1<f32>>,
        &ConvSpec::unit(2),
    )
    .unwrap();
    assert_eq!(four.shape(), &[1, 3, 4, 7]);
    assert_eq!(four, want);
}

/// Runs the device convolution (f32, KeepDtype) and the reference; returns the error.
fn device_vs_reference(xs: &[usize], ws: &[usize], bias: bool, spec: &ConvSpec<'_>) -> f64 {
    let stream = stream();
    let x = arr(xs, 1);
    let w = arr(ws, 2);
    let b = ArrayD::from_shape_vec(
        IxDyn(&[if spec.transposed {
            ws[1] * spec.groups as usize
        } else {
            ws[0]
        }]),
        vals(
            if spec.transposed {
                ws[1] * spec.groups as usize
            } else {
                ws[0]
            },
            3,
        ),
    )
    .unwrap();
    let b1 = b.view().into_dimensionality::<ndarray::Ix1>().unwrap();
    let want =
        reference::convolution(x.view(), w.view(), bias.then_some(b1), spec).expect("reference");
    let xd = DeviceTensor::from_array(&stream, &x).unwrap();
    let wd = DeviceTensor::from_array(&stream, &w).unwrap();
    let bd = DeviceTensor::from_array(&stream, &b).unwrap();
    let mut out = DeviceTensor::<f32>::zeros(&stream, want.shape()).unwrap();
    convolution(
        &xd,
        &wd,
        bias.then(|| bd.view()),
        spec.stride,
        spec.padding,
        spec.dilation,
        spec.transposed,
        spec.output_padding,
        spec.groups,
        &mut out,
        CubeMath::KeepDtype,
        &stream,
    )
    .expect("convolution");
    let got: ArrayD<f32> = out.to_array(&stream).unwrap();
    max_err(&f64s(&got), &f64s(&want))
}

#[test]
fn device_convolution_matches_the_reference_on_larger_shapes() {
    let c = |stride: &'static [i64],
             padding: &'static [i64],
             dilation: &'static [i64],
             transposed: bool,
             output_padding: &'static [i64],
             groups: i64| ConvSpec {
        stride,
        padding,
        dilation,
        transposed,
        output_padding,
        groups,
    };
    let cases: &[(&[usize], &[usize], bool, ConvSpec<'static>)] = &[
        (
            &[4, 3, 28, 28],
            &[8, 3, 3, 3],
            true,
            c(&[1, 1], &[1, 1], &[1, 1], false, &[0, 0], 1),
        ),
        (
            &[3, 4, 17, 23],
            &[6, 4, 3, 5],
            false,
            c(&[2, 3], &[1, 2], &[1, 1], false, &[0, 0], 1),
        ),
        (
            &[2, 6, 19, 16],
            &[9, 2, 3, 3],
            true,
            c(&[1, 2], &[2, 1], &[2, 3], false, &[0, 0], 3),
        ),
        (
            &[2, 4, 15, 14],
            &[4, 1, 3, 3],
            true,
            c(&[1, 1], &[1, 0, 2, 1], &[1, 1], false, &[0, 0], 4),
        ),
        (
            &[2, 6, 9, 11],
            &[6, 4, 3, 4],
            true,
            c(&[2, 2], &[1, 1], &[1, 1], true, &[1, 0], 1),
        ),
        (
            &[2, 4, 7, 8],
            &[4, 3, 2, 3],
            true,
            c(&[3, 2], &[0, 1], &[2, 1], true, &[2, 1], 2),
        ),
        (
            &[3, 5, 40],
            &[7, 5, 4],
            true,
            c(&[2], &[1, 2], &[2], false, &[0], 1),
        ),
        (
            &[2, 3, 30],
            &[3, 2, 5],
            false,
            c(&[3], &[2], &[1], true, &[1], 1),
        ),
        (
            &[2, 2, 6, 7, 8],
            &[4, 2, 2, 3, 2],
            true,
            c(&[1, 2, 1], &[1, 0, 1], &[1, 1, 2], false, &[0, 0, 0], 1),
        ),
        (
            &[0, 3, 12, 12],
            &[5, 3, 3, 3],
            true,
            c(&[1, 1], &[0, 0], &[1, 1], false, &[0, 0], 1),
        ),
    ];
    for (k, (xs, ws, bias, spec)) in cases.iter().enumerate() {
        let e = device_vs_reference(xs, ws, *bias, spec);
        assert!(e < 1e-5, "case {k}: error {e}");
    }
}

#[test]
fn half_precision_convolution_is_within_half_rounding_of_the_reference() {
    let stream = stream();
    let x = arr(&[2, 3, 10, 9], 5).mapv(f16::from_f32);
    let w = arr(&[4, 3, 3, 3], 6).mapv(f16::from_f32);
    let spec = ConvSpec {
        padding: &[1, 1],
        ..ConvSpec::unit(2)
    };
    let want = reference::convolution(x.view(), w.view(), None::<ndarray::ArrayView1<f16>>, &spec)
        .unwrap();
    let xd = DeviceTensor::from_array(&stream, &x).unwrap();
    let wd = DeviceTensor::from_array(&stream, &w).unwrap();
    let out: DeviceTensor<f16> = convolution_new(
        &xd,
        &wd,
        None::<TensorView<'_, f16>>,
        &[1, 1],
        &[1, 1],
        &[1, 1],
        false,
        &[0, 0],
        1,
        CubeMath::KeepDtype,
        &stream,
    )
    .unwrap();
    let got: ArrayD<f16> = out.to_array(&stream).unwrap();
    assert_eq!(got.shape(), want.shape());
    let e = max_err(&f64s(&got), &f64s(&want));
    assert!(e < 2e-3, "error {e}");
}

#[test]
fn convolution_plans_and_the_allocating_form_agree_with_the_function() {
    let stream = stream();
    let x = DeviceTensor::from_array(&stream, &arr(&[2, 2, 8, 8], 7)).unwrap();
    let w = DeviceTensor::from_array(&stream, &arr(&[3, 2, 3, 3], 8)).unwrap();
    let b = DeviceTensor::from_array(&stream, &arr(&[3], 9)).unwrap();
    let args = (&[2i64, 1][..], &[1i64, 0][..], &[1i64, 1][..]);
    let made: DeviceTensor<f32> = convolution_new(
        &x,
        &w,
        Some(b.view()),
        args.0,
        args.1,
        args.2,
        false,
        &[0, 0],
        1,
        CubeMath::KeepDtype,
        &stream,
    )
    .unwrap();
    assert_eq!(made.shape(), &[2, 3, 4, 6]);
    let mut out = DeviceTensor::<f32>::zeros(&stream, [2, 3, 4, 6]).unwrap();
    let mut plan = ConvolutionPlan::new(
        &x,
        &w,
        Some(b.view()),
        args.0,
        args.1,
        args.2,
        false,
        &[0, 0],
        1,
        &out,
        CubeMath::KeepDtype,
        &stream,
    )
    .unwrap();
    for _ in 0..2 {
        plan.launch(&x, &w, Some(b.view()), &mut out, &stream)
            .unwrap();
    }
    let (a, c): (ArrayD<f32>, ArrayD<f32>) = (
        made.to_array(&stream).unwrap(),
        out.to_array(&stream).unwrap(),
    );
    assert_eq!(a, c);
}

#[test]
fn convolution_refuses_bad_groups_and_shapes_in_rust() {
    let stream = stream();
    let x = DeviceTensor::<f32>::zeros(&stream, [1, 4, 6, 6]).unwrap();
    let w = DeviceTensor::<f32>::zeros(&stream, [2, 4, 3, 3]).unwrap();
    let mut out = DeviceTensor::<f32>::zeros(&stream, [1, 2, 4, 4]).unwrap();
    let none = None::<TensorView<'_, f32>>;
    let e = convolution(
        &x,
        &w,
        none,
        &[1, 1],
        &[0, 0],
        &[1, 1],
        false,
        &[0, 0],
        3,
        &mut out,
        CubeMath::KeepDtype,
        &stream,
    )
    .unwrap_err();
    assert!(matches!(e, Error::InvalidArgument(_)), "{e}");
    let mut wrong = DeviceTensor::<f32>::zeros(&stream, [1, 2, 5, 4]).unwrap();
    let e = convolution(
        &x,
        &w,
        none,
        &[1, 1],
        &[0, 0],
        &[1, 1],
        false,
        &[0, 0],
        1,
        &mut wrong,
        CubeMath::KeepDtype,
        &stream,
    )
    .unwrap_err();
    assert!(matches!(e, Error::ShapeMismatch { .. }), "{e}");
    let e = convolution(
        &x,
        &w,
        none,
        &[1, 1],
        &[0, 0],
        &[0, 1],
        false,
        &[0, 0],
        1,
        &mut out,
        CubeMath::KeepDtype,
        &stream,
    )
    .unwrap_err();
    assert!(matches!(e, Error::InvalidArgument(_)), "{e}");
    // And a correct call passes.
    convolution(
        &x,
        &w,
        none,
        &[1, 1],
        &[0, 0],
        &[1, 1],
        false,
        &[0, 0],
        1,
        &mut out,
        CubeMath::KeepDtype,
        &stream,
    )
    .unwrap();
}
