//! The CNN operators end to end on the simulator: the references against direct loops
//! written here, the device kernels against the references on larger shapes (stride,
//! padding, dilation, groups, transposed, 1-D/2-D/3-D, empty batch, half precision),
//! plans and allocating forms, the backward operators against central differences of
//! their forward on the device, and a CNN training step's cost.

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
    let _gate = crate::common::shared();
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
    let _gate = crate::common::shared();
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
    let _gate = crate::common::shared();
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
    let _gate = crate::common::shared();
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
    let _gate = crate::common::shared();
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
    let _gate = crate::common::shared();
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

/// Σ conv(x, w, b) ⊙ r computed on the device (the loss whose gradients the backward
/// gives with gradOutput r).
fn device_loss(
    stream: &Stream,
    x: &ArrayD<f32>,
    w: &ArrayD<f32>,
    b: &ArrayD<f32>,
    r: &ArrayD<f32>,
    spec: &ConvSpec<'_>,
) -> f64 {
    let xd = DeviceTensor::from_array(stream, x).unwrap();
    let wd = DeviceTensor::from_array(stream, w).unwrap();
    let bd = DeviceTensor::from_array(stream, b).unwrap();
    let y: DeviceTensor<f32> = convolution_new(
        &xd,
        &wd,
        Some(bd.view()),
        spec.stride,
        spec.padding,
        spec.dilation,
        spec.transposed,
        spec.output_padding,
        spec.groups,
        CubeMath::KeepDtype,
        stream,
    )
    .unwrap();
    let y: ArrayD<f32> = y.to_array(stream).unwrap();
    y.iter()
        .zip(r.iter())
        .map(|(a, b)| f64::from(*a) * f64::from(*b))
        .sum()
}

/// Central differences of [`device_loss`] in every element of `which` (0 x, 1 w, 2 b).
fn central(
    stream: &Stream,
    t: [&ArrayD<f32>; 3],
    r: &ArrayD<f32>,
    spec: &ConvSpec<'_>,
    which: usize,
) -> Vec<f64> {
    const H: f32 = 0.125;
    let n = t[which].len();
    (0..n)
        .map(|i| {
            let mut v = [t[0].clone(), t[1].clone(), t[2].clone()];
            let e = v[which].as_slice_mut().unwrap();
            let orig = e[i];
            e[i] = orig + H;
            let up = device_loss(stream, &v[0], &v[1], &v[2], r, spec);
            v[which].as_slice_mut().unwrap()[i] = orig - H;
            let down = device_loss(stream, &v[0], &v[1], &v[2], r, spec);
            (up - down) / (2.0 * f64::from(H))
        })
        .collect()
}

#[test]
fn convolution_backward_matches_central_differences_of_the_forward_on_the_device() {
    let _gate = crate::common::shared();
    let stream = stream();
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
    let cases: &[(&[usize], &[usize], ConvSpec<'static>)] = &[
        (
            &[2, 2, 5, 5],
            &[4, 1, 3, 3],
            c(&[2, 1], &[1, 0], &[1, 1], false, &[0, 0], 2),
        ),
        (
            &[1, 2, 6, 5],
            &[3, 2, 2, 2],
            c(&[1, 1], &[0, 1], &[2, 1], false, &[0, 0], 1),
        ),
        (
            &[2, 2, 3, 3],
            &[2, 3, 2, 3],
            c(&[2, 1], &[0, 1], &[1, 1], true, &[1, 0], 1),
        ),
        (&[1, 2, 7], &[2, 2, 3], c(&[2], &[1], &[1], false, &[0], 1)),
    ];
    for (k, (xs, ws, spec)) in cases.iter().enumerate() {
        let x = arr(xs, 10 + k as u64);
        let w = arr(ws, 20 + k as u64);
        let cout = if spec.transposed {
            ws[1] * spec.groups as usize
        } else {
            ws[0]
        };
        let b = arr(&[cout], 30 + k as u64);
        let geo_out =
            reference::convolution(x.view(), w.view(), None::<ndarray::ArrayView1<f32>>, spec)
                .unwrap();
        let r = arr(geo_out.shape(), 40 + k as u64);
        let (xd, wd, rd) = (
            DeviceTensor::from_array(&stream, &x).unwrap(),
            DeviceTensor::from_array(&stream, &w).unwrap(),
            DeviceTensor::from_array(&stream, &r).unwrap(),
        );
        let (gi, gw, gb) = ascendcl::convolution_backward_new(
            &rd,
            &xd,
            &wd,
            spec,
            [true, true, true],
            CubeMath::KeepDtype,
            &stream,
        )
        .unwrap();
        let got: [Vec<f64>; 3] = [
            f64s(&gi.unwrap().to_array::<IxDyn>(&stream).unwrap()),
            f64s(&gw.unwrap().to_array::<IxDyn>(&stream).unwrap()),
            f64s(&gb.unwrap().to_array::<IxDyn>(&stream).unwrap()),
        ];
        for (which, got) in got.iter().enumerate() {
            let want = central(&stream, [&x, &w, &b], &r, spec, which);
            let e = max_err(got, &want);
            assert!(e < 2e-3, "case {k}, gradient {which}: error {e}");
        }
        // And the reference agrees with the device.
        let (rx, rw, rb) =
            reference::convolution_backward(r.view(), x.view(), w.view(), spec).unwrap();
        assert!(max_err(&got[0], &f64s(&rx)) < 1e-5, "case {k}");
        assert!(max_err(&got[1], &f64s(&rw)) < 1e-5, "case {k}");
        assert!(max_err(&got[2], &f64s(&rb)) < 1e-5, "case {k}");
    }
}

#[test]
fn convolution_backward_writes_only_what_the_mask_asks_and_plans_repeat_it() {
    let _gate = crate::common::shared();
    let stream = stream();
    let spec = ConvSpec {
        padding: &[1, 1],
        ..ConvSpec::unit(2)
    };
    let x = DeviceTensor::from_array(&stream, &arr(&[2, 3, 6, 6], 1)).unwrap();
    let w = DeviceTensor::from_array(&stream, &arr(&[4, 3, 3, 3], 2)).unwrap();
    let g = DeviceTensor::from_array(&stream, &arr(&[2, 4, 6, 6], 3)).unwrap();
    let (gi, gw, gb) = ascendcl::convolution_backward_new(
        &g,
        &x,
        &w,
        &spec,
        [false, true, false],
        CubeMath::KeepDtype,
        &stream,
    )
    .unwrap();
    assert!(gi.is_none() && gb.is_none());
    let gw: ArrayD<f32> = gw.unwrap().to_array(&stream).unwrap();
    // A given output the mask does not ask for keeps its contents.
    let mut keep =
        DeviceTensor::from_array(&stream, &ArrayD::<f32>::from_elem(IxDyn(&[4]), 7.0)).unwrap();
    let mut dw = DeviceTensor::<f32>::zeros(&stream, [4, 3, 3, 3]).unwrap();
    let mut plan = ascendcl::ConvolutionBackwardPlan::new(
        &g,
        &x,
        &w,
        Some(&[4][..]),
        &spec,
        [false, true, false],
        CubeMath::KeepDtype,
        None::<ascendcl::TensorViewMut<'_, f32>>,
        Some(dw.view_mut()),
        Some(keep.view_mut()),
        &stream,
    )
    .unwrap();
    for _ in 0..2 {
        plan.launch(
            &g,
            &x,
            &w,
            None::<ascendcl::TensorViewMut<'_, f32>>,
            Some(dw.view_mut()),
            Some(keep.view_mut()),
            &stream,
        )
        .unwrap();
    }
    assert_eq!(dw.to_array::<IxDyn>(&stream).unwrap(), gw);
    assert!(
        keep.to_array::<IxDyn>(&stream)
            .unwrap()
            .iter()
            .all(|&v| v == 7.0)
    );
    // Asking for an output that is absent is refused in Rust.
    let e = ascendcl::convolution_backward(
        &g,
        &x,
        &w,
        None,
        &spec,
        [true, false, false],
        CubeMath::KeepDtype,
        None::<ascendcl::TensorViewMut<'_, f32>>,
        None::<ascendcl::TensorViewMut<'_, f32>>,
        None::<ascendcl::TensorViewMut<'_, f32>>,
        &stream,
    )
    .unwrap_err();
    assert!(matches!(e, Error::InvalidArgument(_)), "{e}");
}

#[test]
fn convolution_backward_of_an_empty_batch_gives_zero_weight_and_bias_gradients() {
    let _gate = crate::common::shared();
    let stream = stream();
    let spec = ConvSpec::unit(2);
    let x = DeviceTensor::<f32>::zeros(&stream, [0, 2, 5, 5]).unwrap();
    let w = DeviceTensor::from_array(&stream, &arr(&[3, 2, 3, 3], 4)).unwrap();
    let g = DeviceTensor::<f32>::zeros(&stream, [0, 3, 3, 3]).unwrap();
    let mut dw = DeviceTensor::from_array(
        &stream,
        &ArrayD::<f32>::from_elem(IxDyn(&[3, 2, 3, 3]), 5.0),
    )
    .unwrap();
    let mut db =
        DeviceTensor::from_array(&stream, &ArrayD::<f32>::from_elem(IxDyn(&[3]), 5.0)).unwrap();
    ascendcl::convolution_backward(
        &g,
        &x,
        &w,
        Some(&[3][..]),
        &spec,
        [false, true, true],
        CubeMath::KeepDtype,
        None::<ascendcl::TensorViewMut<'_, f32>>,
        Some(dw.view_mut()),
        Some(db.view_mut()),
        &stream,
    )
    .unwrap();
    assert!(
        dw.to_array::<IxDyn>(&stream)
            .unwrap()
            .iter()
            .all(|&v| v == 0.0)
    );
    assert!(
        db.to_array::<IxDyn>(&stream)
            .unwrap()
            .iter()
            .all(|&v| v == 0.0)
    );
}

/// A direct max pooling with indices of an (N, C, H, W) array, symmetric padding.
fn naive_pool(
    x: &ArrayD<f32>,
    k: [usize; 2],
    s: [usize; 2],
    p: [usize; 2],
    ceil: bool,
) -> (ArrayD<f32>, ArrayD<i64>) {
    let (n, c, h, w) = (x.shape()[0], x.shape()[1], x.shape()[2], x.shape()[3]);
    let size = |len: usize, i: usize| {
        let num = len + 2 * p[i] - k[i];
        let mut o = if ceil { num.div_ceil(s[i]) } else { num / s[i] } + 1;
        if ceil && (o - 1) * s[i] >= len + p[i] {
            o -= 1;
        }
        o
    };
    let (oh, ow) = (size(h, 0), size(w, 1));
    let mut m = ArrayD::<f32>::zeros(IxDyn(&[n, c, oh, ow]));
    let mut at = ArrayD::<i64>::zeros(IxDyn(&[n, c, oh, ow]));
    for a in 0..n {
        for b in 0..c {
            for i in 0..oh {
                for j in 0..ow {
                    let mut best = (f32::NEG_INFINITY, -1i64);
                    for u in 0..k[0] {
                        for v in 0..k[1] {
                            let y = (i * s[0] + u) as isize - p[0] as isize;
                            let z = (j * s[1] + v) as isize - p[1] as isize;
                            if y < 0 || z < 0 || y as usize >= h || z as usize >= w {
                                continue;
                            }
                            let e = x[[a, b, y as usize, z as usize].as_slice()];
                            if best.1 < 0 || e > best.0 {
                                best = (e, (y as usize * w + z as usize) as i64);
                            }
                        }
                    }
                    m[[a, b, i, j].as_slice()] = best.0;
                    at[[a, b, i, j].as_slice()] = best.1;
                }
            }
        }
    }
    (m, at)
}

/// (kernel, stride, padding, ceil) of the pooling cases.
type PoolCase = ([usize; 2], [usize; 2], [usize; 2], bool);
const POOLS: &[PoolCase] = &[
    ([2, 2], [2, 2], [0, 0], false),
    ([3, 3], [2, 2], [1, 1], false),
    ([3, 2], [2, 1], [1, 0], true),
    ([2, 3], [3, 2], [0, 1], true),
    ([3, 3], [1, 1], [1, 1], false),
];

fn i64s(v: [usize; 2]) -> [i64; 2] {
    [v[0] as i64, v[1] as i64]
}

#[test]
fn reference_max_pool_matches_a_naive_loop_on_small_shapes() {
    let _gate = crate::common::shared();
    for (c, &(k, s, p, ceil)) in POOLS.iter().enumerate() {
        let x = arr(&[2, 3, 7, 8], 50 + c as u64);
        let (m, at) = reference::max_pool2d_with_indices(
            x.view(),
            &i64s(k),
            &i64s(s),
            &i64s(p),
            &[1, 1],
            ceil,
        )
        .unwrap();
        let (wm, wat) = naive_pool(&x, k, s, p, ceil);
        assert_eq!(m, wm, "case {c}");
        assert_eq!(at, wat, "case {c}");
    }
}

#[test]
fn device_max_pool_matches_the_reference_with_either_index_type() {
    let _gate = crate::common::shared();
    let stream = stream();
    for (c, &(k, s, p, ceil)) in POOLS.iter().enumerate() {
        for shape in [&[4usize, 5, 28, 27][..], &[6, 13, 14], &[0, 3, 9, 9]] {
            let x = arr(shape, 60 + c as u64);
            let (m, at) = reference::max_pool2d_with_indices(
                x.view(),
                &i64s(k),
                &i64s(s),
                &i64s(p),
                &[1, 1],
                ceil,
            )
            .unwrap();
            let xd = DeviceTensor::from_array(&stream, &x).unwrap();
            let (dm, di): (DeviceTensor<f32>, DeviceTensor<i32>) =
                ascendcl::max_pool2d_with_indices_new(
                    &xd,
                    &i64s(k),
                    &i64s(s),
                    &i64s(p),
                    &[1, 1],
                    ceil,
                    &stream,
                )
                .unwrap();
            assert_eq!(
                dm.to_array::<IxDyn>(&stream).unwrap(),
                m,
                "case {c} {shape:?}"
            );
            assert_eq!(
                di.to_array::<IxDyn>(&stream).unwrap(),
                at.mapv(|v| v as i32),
                "case {c} {shape:?}"
            );
            let mut dm64 = DeviceTensor::<f32>::zeros(&stream, m.shape()).unwrap();
            let mut di64 = DeviceTensor::<i64>::zeros(&stream, m.shape()).unwrap();
            ascendcl::max_pool2d_with_indices(
                &xd,
                &i64s(k),
                &i64s(s),
                &i64s(p),
                &[1, 1],
                ceil,
                &mut dm64,
                &mut di64,
                &stream,
            )
            .unwrap();
            assert_eq!(
                di64.to_array::<IxDyn>(&stream).unwrap(),
                at,
                "case {c} {shape:?}"
            );
        }
    }
    // The stride defaults to the kernel when empty.
    let x = DeviceTensor::from_array(&stream, &arr(&[1, 1, 4, 4], 5)).unwrap();
    let (m, _): (DeviceTensor<f32>, DeviceTensor<i32>) =
        ascendcl::max_pool2d_with_indices_new(&x, &[2], &[], &[0], &[1], false, &stream).unwrap();
    assert_eq!(m.shape(), &[1, 1, 2, 2]);
}

#[test]
fn max_pool_refuses_a_dilation_and_an_oversized_padding_in_rust() {
    let _gate = crate::common::shared();
    let stream = stream();
    let x = DeviceTensor::from_array(&stream, &arr(&[1, 1, 6, 6], 5)).unwrap();
    let r: ascendcl::Result<(DeviceTensor<f32>, DeviceTensor<i32>)> =
        ascendcl::max_pool2d_with_indices_new(
            &x,
            &[2, 2],
            &[2, 2],
            &[0, 0],
            &[2, 2],
            false,
            &stream,
        );
    assert!(matches!(r, Err(Error::InvalidArgument(_))));
    let r: ascendcl::Result<(DeviceTensor<f32>, DeviceTensor<i32>)> =
        ascendcl::max_pool2d_with_indices_new(
            &x,
            &[2, 2],
            &[2, 2],
            &[2, 0],
            &[1, 1],
            false,
            &stream,
        );
    assert!(matches!(r, Err(Error::InvalidArgument(_))));
}

/// Values whose gaps (≥ 1/64 after shuffling) keep every window's maximum unique.
fn distinct(shape: &[usize], seed: u64) -> ArrayD<f32> {
    let n: usize = shape.iter().product();
    let mut order: Vec<usize> = (0..n).collect();
    let key = vals(n, seed);
    order.sort_by(|a, b| key[*a].total_cmp(&key[*b]));
    let mut v = vec![0f32; n];
    for (rank, &i) in order.iter().enumerate() {
        v[i] = rank as f32 / 64.0 - 1.0;
    }
    ArrayD::from_shape_vec(IxDyn(shape), v).unwrap()
}

#[test]
fn max_pool_backward_matches_central_differences_of_the_forward_on_the_device() {
    let _gate = crate::common::shared();
    let stream = stream();
    for (c, &(k, s, p, ceil)) in POOLS.iter().enumerate() {
        let x = distinct(&[1, 2, 6, 5], 70 + c as u64);
        let xd = DeviceTensor::from_array(&stream, &x).unwrap();
        let (m, at): (DeviceTensor<f32>, DeviceTensor<i32>) =
            ascendcl::max_pool2d_with_indices_new(
                &xd,
                &i64s(k),
                &i64s(s),
                &i64s(p),
                &[1, 1],
                ceil,
                &stream,
            )
            .unwrap();
        let r = arr(m.shape(), 80 + c as u64);
        let rd = DeviceTensor::from_array(&stream, &r).unwrap();
        let gi: DeviceTensor<f32> = ascendcl::max_pool2d_with_indices_backward_new(
            &rd,
            &xd,
            &at,
            &i64s(k),
            &i64s(s),
            &i64s(p),
            &[1, 1],
            ceil,
            &stream,
        )
        .unwrap();
        let got = f64s(&gi.to_array::<IxDyn>(&stream).unwrap());
        let loss = |x: &ArrayD<f32>| -> f64 {
            let xd = DeviceTensor::from_array(&stream, x).unwrap();
            let (m, _): (DeviceTensor<f32>, DeviceTensor<i32>) =
                ascendcl::max_pool2d_with_indices_new(
                    &xd,
                    &i64s(k),
                    &i64s(s),
                    &i64s(p),
                    &[1, 1],
                    ceil,
                    &stream,
                )
                .unwrap();
            let m: ArrayD<f32> = m.to_array(&stream).unwrap();
            m.iter()
                .zip(r.iter())
                .map(|(a, b)| f64::from(*a) * f64::from(*b))
                .sum()
        };
        const H: f32 = 1.0 / 256.0;
        let want: Vec<f64> = (0..x.len())
            .map(|i| {
                let mut v = x.clone();
                v.as_slice_mut().unwrap()[i] += H;
                let up = loss(&v);
                v.as_slice_mut().unwrap()[i] -= 2.0 * H;
                (up - loss(&v)) / (2.0 * f64::from(H))
            })
            .collect();
        let e = max_err(&got, &want);
        assert!(e < 1e-4, "case {c}: error {e}");
        let at_host: ArrayD<i32> = at.to_array(&stream).unwrap();
        let refd = reference::max_pool2d_with_indices_backward(r.view(), x.shape(), at_host.view())
            .unwrap();
        assert!(max_err(&got, &f64s(&refd)) < 1e-6, "case {c}");
    }
}

/// One training step of the CNN on the device: batch 16 of 1×28×28, conv 8 3×3,
/// max-pool 2, conv 16 3×3, max-pool 2; forward and the backward of every layer. Prints
/// its cost (no timed assertion) and checks the first layer's gradients against the
/// reference.
#[test]
fn a_cnn_step_runs_forward_and_backward_on_the_device() {
    let _gate = crate::common::shared();
    let stream = stream();
    let m = CubeMath::KeepDtype;
    let unit = ConvSpec::unit(2);
    let x = DeviceTensor::from_array(&stream, &arr(&[16, 1, 28, 28], 1)).unwrap();
    let w1 = DeviceTensor::from_array(&stream, &arr(&[8, 1, 3, 3], 2)).unwrap();
    let b1 = DeviceTensor::from_array(&stream, &arr(&[8], 3)).unwrap();
    let w2 = DeviceTensor::from_array(&stream, &arr(&[16, 8, 3, 3], 4)).unwrap();
    let b2 = DeviceTensor::from_array(&stream, &arr(&[16], 5)).unwrap();
    let step = || {
        let y1: DeviceTensor<f32> = convolution_new(
            &x,
            &w1,
            Some(b1.view()),
            &[1, 1],
            &[0, 0],
            &[1, 1],
            false,
            &[0, 0],
            1,
            m,
            &stream,
        )
        .unwrap();
        let (p1, i1): (DeviceTensor<f32>, DeviceTensor<i32>) =
            ascendcl::max_pool2d_with_indices_new(
                &y1,
                &[2, 2],
                &[2, 2],
                &[0, 0],
                &[1, 1],
                false,
                &stream,
            )
            .unwrap();
        let y2: DeviceTensor<f32> = convolution_new(
            &p1,
            &w2,
            Some(b2.view()),
            &[1, 1],
            &[0, 0],
            &[1, 1],
            false,
            &[0, 0],
            1,
            m,
            &stream,
        )
        .unwrap();
        let (p2, i2): (DeviceTensor<f32>, DeviceTensor<i32>) =
            ascendcl::max_pool2d_with_indices_new(
                &y2,
                &[2, 2],
                &[2, 2],
                &[0, 0],
                &[1, 1],
                false,
                &stream,
            )
            .unwrap();
        // The loss's gradient at the top: ones.
        let g =
            DeviceTensor::from_array(&stream, &ArrayD::<f32>::from_elem(IxDyn(p2.shape()), 1.0))
                .unwrap();
        let gy2: DeviceTensor<f32> = ascendcl::max_pool2d_with_indices_backward_new(
            &g,
            &y2,
            &i2,
            &[2, 2],
            &[2, 2],
            &[0, 0],
            &[1, 1],
            false,
            &stream,
        )
        .unwrap();
        let (gp1, gw2, gb2) = ascendcl::convolution_backward_new(
            &gy2,
            &p1,
            &w2,
            &unit,
            [true, true, true],
            m,
            &stream,
        )
        .unwrap();
        let gy1: DeviceTensor<f32> = ascendcl::max_pool2d_with_indices_backward_new(
            gp1.unwrap(),
            &y1,
            &i1,
            &[2, 2],
            &[2, 2],
            &[0, 0],
            &[1, 1],
            false,
            &stream,
        )
        .unwrap();
        let (_, gw1, gb1) = ascendcl::convolution_backward_new(
            &gy1,
            &x,
            &w1,
            &unit,
            [false, true, true],
            m,
            &stream,
        )
        .unwrap();
        stream.synchronize().unwrap();
        (gy1, gw1.unwrap(), gb1.unwrap(), gw2.unwrap(), gb2.unwrap())
    };
    let (gy1, gw1, gb1, _, _) = step();
    let steps = 5;
    let t0 = std::time::Instant::now();
    for _ in 0..steps {
        step();
    }
    let per = t0.elapsed().as_secs_f64() * 1e3 / f64::from(steps);
    println!(
        "CNN step (batch 16, 1x28x28, conv8 3x3, pool2, conv16 3x3, pool2; forward + backward): {per:.1} ms"
    );
    let xa: ArrayD<f32> = x.to_array(&stream).unwrap();
    let wa: ArrayD<f32> = w1.to_array(&stream).unwrap();
    let ga: ArrayD<f32> = gy1.to_array(&stream).unwrap();
    let (_, rw, rb) =
        reference::convolution_backward(ga.view(), xa.view(), wa.view(), &unit).unwrap();
    assert!(max_err(&f64s(&gw1.to_array::<IxDyn>(&stream).unwrap()), &f64s(&rw)) < 1e-4);
    assert!(max_err(&f64s(&gb1.to_array::<IxDyn>(&stream).unwrap()), &f64s(&rb)) < 1e-4);
}
