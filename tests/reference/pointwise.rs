//! The references of `aclnnAdd`, `aclnnMul`, `aclnnReduceSum`, `aclnnMseLoss` and
//! `aclnnMseLossBackward`: hand-checked values, broadcasting, 0-D and empty inputs,
//! `keep_dims`, the reduction modes, f16/bf16/f32 and mixed types, errors.

use ascendcl::reference::{add, cast, mse_loss, mse_loss_backward, mul, reduce_sum, reduce_sum_as};
use ascendcl::{Error, Reduction};
use half::{bf16, f16};
use ndarray::{Array1, Array2, Array3, ArrayD, Ix1, arr0, array};

fn h(v: f32) -> f16 {
    f16::from_f32(v)
}
fn b(v: f32) -> bf16 {
    bf16::from_f32(v)
}

#[test]
fn add_scales_broadcasts_and_rounds_once() {
    let x = array![[1.0f32, 2.0, 3.0], [4.0, 5.0, 6.0]];
    let row = array![10.0f32, 20.0, 30.0];
    assert_eq!(
        add(x.view(), row.view(), 1).unwrap(),
        array![[11.0, 22.0, 33.0], [14.0, 25.0, 36.0]]
    );
    assert_eq!(
        add(x.view(), arr0(1.0f32).view(), -2.5).unwrap(),
        x.mapv(|v| v - 2.5)
    );
    // 0-D with 0-D
    assert_eq!(
        add(arr0(1.0f32).view(), arr0(2.0f32).view(), 0.5).unwrap()[()],
        2.0
    );
    // empty broadcast: (0, 3) with (3)
    let empty = Array2::<f32>::zeros((0, 3));
    assert_eq!(add(empty.view(), row.view(), 1).unwrap().dim(), (0, 3));
    // computed in f32 (exactly 1 + 2^-11 + 2^-23), then cast to f16: up, not a tie
    let p = |e: i32| 2f32.powi(e);
    let sum = add(array![1.0f32].view(), array![p(-11) + p(-23)].view(), 1).unwrap();
    let once: Array1<f16> = cast(&sum);
    assert_eq!(once[0], h(1.0 + p(-10)));
    // a NaN alpha counts as 1, as the device's (non-950) code
    assert_eq!(add(x.view(), x.view(), f64::NAN).unwrap(), &x * 2.0);
    // alpha from an integer and an f32
    assert_eq!(add(x.view(), x.view(), 3i32).unwrap(), &x * 4.0);
    assert_eq!(add(x.view(), x.view(), -1i64).unwrap(), &x * 0.0);
    assert_eq!(add(x.view(), x.view(), true).unwrap(), &x * 2.0);
    assert_eq!(add(x.view(), x.view(), -0.5f32).unwrap(), &x * 0.5);
}

#[test]
fn add_and_mul_compute_in_the_promoted_type() {
    // f16 + f16 stays f16: 2048 + 1 is not representable, ties to even
    let s = add(array![h(2048.0)].view(), array![h(1.0)].view(), 1).unwrap();
    assert_eq!(s[0], h(2048.0));
    // f16 + f32 computes in f32
    let s = add(array![h(2048.0)].view(), array![1.0f32].view(), 1).unwrap();
    assert_eq!(s[0], 2049.0f32);
    // bf16 + f16 computes in f32
    let s = add(array![b(256.0)].view(), array![h(1.0)].view(), 1).unwrap();
    assert_eq!(s[0], 257.0f32);
    let m = mul(array![b(3.0)].view(), array![b(1.0 / 3.0)].view()).unwrap();
    assert_eq!(m[0], b(3.0 * b(1.0 / 3.0).to_f32()));
    let m = mul(array![h(0.1)].view(), array![0.1f32].view()).unwrap();
    assert_eq!(m[0], (h(0.1).to_f64() * 0.1f32 as f64) as f32);
    let m: Array1<bf16> = cast(&mul(array![1.5f32].view(), array![1.5f32].view()).unwrap());
    assert_eq!(m[0], b(2.25));
}

#[test]
fn mul_broadcasts_and_handles_edges() {
    let col = array![[1.0f32], [-2.0]];
    let row = array![3.0f32, 0.0, f32::INFINITY];
    let m = mul(col.view(), row.view()).unwrap();
    assert_eq!(
        m.slice(ndarray::s![.., ..2]),
        array![[3.0, 0.0], [-6.0, -0.0]]
    );
    assert_eq!(m[[1, 2]], f32::NEG_INFINITY);
    let nan = mul(arr0(0.0f32).view(), arr0(f32::INFINITY).view()).unwrap();
    assert!(nan[()].is_nan());
    // overflow to ∞ in f16
    assert_eq!(
        mul(array![h(300.0)].view(), array![h(300.0)].view()).unwrap()[0],
        f16::INFINITY
    );
    // transposed input
    let a = array![[1.0f32, 2.0], [3.0, 4.0]];
    assert_eq!(
        mul(a.t(), a.view()).unwrap(),
        array![[1.0, 6.0], [6.0, 16.0]]
    );
}

#[test]
fn add_and_mul_errors() {
    let a = Array1::<f32>::zeros(3);
    let c = Array1::<f32>::zeros(4);
    assert!(matches!(
        add(a.view(), c.view(), 1),
        Err(Error::NotBroadcastable {
            argument: "self",
            other: "other",
            ..
        })
    ));
    let nine = ArrayD::<f32>::zeros(vec![1; 9]);
    assert!(matches!(
        mul(nine.view(), a.view()),
        Err(Error::TooManyDims {
            argument: "self",
            dims: 9,
            ..
        })
    ));
}

#[test]
fn reduce_sum_dims_keep_dims_and_edges() {
    let x = Array3::from_shape_fn((2, 3, 4), |(i, j, k)| (i * 12 + j * 4 + k) as f32);
    let s = reduce_sum(x.view(), &[1], false).unwrap();
    assert_eq!(s.shape(), &[2, 4]);
    assert_eq!(s[[1, 2]], 14.0 + 18.0 + 22.0);
    let s = reduce_sum(x.view(), &[0, 2], true).unwrap();
    assert_eq!(s.shape(), &[1, 3, 1]);
    assert_eq!(s[[0, 1, 0]], (4..8).chain(16..20).sum::<i32>() as f32);
    // negative dims, order irrelevant
    assert_eq!(
        reduce_sum(x.view(), &[-1, 0], false).unwrap(),
        reduce_sum(x.view(), &[2, 0], false).unwrap()
    );
    // all dims: explicitly or with an empty list
    let all = reduce_sum(x.view(), &[0, 1, 2], false).unwrap();
    assert_eq!(all.shape(), &[] as &[usize]);
    assert_eq!(all[[]], (0..24).sum::<i32>() as f32);
    assert_eq!(reduce_sum(x.view(), &[], false).unwrap(), all);
    assert_eq!(reduce_sum(x.view(), &[], true).unwrap().shape(), &[1, 1, 1]);
    // 0-D: itself, with dims [] or [0] or [-1]
    for dims in [&[][..], &[0], &[-1]] {
        assert_eq!(
            reduce_sum(arr0(2.5f32).view(), dims, true).unwrap(),
            arr0(2.5).into_dyn()
        );
    }
    // empty input: zeros of the reduced shape
    let e = Array2::<f32>::zeros((0, 3));
    assert_eq!(
        reduce_sum(e.view(), &[0], false).unwrap(),
        ArrayD::zeros(vec![3])
    );
    assert_eq!(reduce_sum(e.view(), &[1], true).unwrap().shape(), &[0, 1]);
}

#[test]
fn reduce_sum_accumulates_exactly_and_rounds_once() {
    // 1e8 then many ones: a plain f32 sum would lose every one
    let mut v = vec![1.0f32; 1001];
    v[0] = 1e8;
    let x = Array1::from(v);
    let s = reduce_sum(x.view(), &[0], false).unwrap();
    assert_eq!(s[[]], 100_001_000.0);
    // cancellation: the compensated sum recovers the small terms
    let x = array![1e30f32, 1.0, -1e30, 1.0];
    assert_eq!(reduce_sum(x.view(), &[], false).unwrap()[[]], 2.0);
    // bf16 input into f32, f16 input into f16
    let x = Array1::from_elem(300, b(1.0));
    let wide: ArrayD<f32> = reduce_sum_as(x.view(), &[0], false).unwrap();
    assert_eq!(wide[[]], 300.0);
    assert_eq!(reduce_sum(x.view(), &[0], false).unwrap()[[]], b(300.0));
    let x = Array1::from_elem(2051, h(1.0));
    assert_eq!(reduce_sum(x.view(), &[0], false).unwrap()[[]], h(2052.0));
    // infinities and NaN propagate
    let x = array![1.0f32, f32::INFINITY];
    assert_eq!(reduce_sum(x.view(), &[], false).unwrap()[[]], f32::INFINITY);
    let x = array![f32::NEG_INFINITY, f32::INFINITY];
    assert!(reduce_sum(x.view(), &[], false).unwrap()[[]].is_nan());
}

#[test]
fn reduce_sum_dims_errors() {
    let x = Array2::<f32>::zeros((2, 3));
    let err = reduce_sum(x.view(), &[2], false).unwrap_err();
    assert!(
        matches!(&err, Error::InvalidArgument(t) if t.contains("dim 2 is out of range [-2, 1]")),
        "{err}"
    );
    let err = reduce_sum(x.view(), &[-3], false).unwrap_err();
    assert!(err.to_string().contains("dims [-3]"), "{err}");
    let err = reduce_sum(x.view(), &[1, -1], false).unwrap_err();
    assert!(
        err.to_string().contains("dim 1 appears more than once"),
        "{err}"
    );
    let err = reduce_sum(arr0(1.0f32).view(), &[1], false).unwrap_err();
    assert!(err.to_string().contains("[-1, 0]"), "{err}");
    let nine = ArrayD::<f32>::zeros(vec![1; 9]);
    assert!(matches!(
        reduce_sum(nine.view(), &[], false),
        Err(Error::TooManyDims {
            argument: "self",
            ..
        })
    ));
}

#[test]
fn mse_loss_reductions_broadcasting_and_empty() {
    let x = array![[1.0f32, 2.0], [3.0, 5.0]];
    let y = array![1.0f32, 1.0];
    let none = mse_loss(x.view(), y.view(), Reduction::None).unwrap();
    assert_eq!(none, array![[0.0, 1.0], [4.0, 16.0]].into_dyn());
    let sum = mse_loss(x.view(), y.view(), Reduction::Sum).unwrap();
    assert_eq!(sum, arr0(21.0).into_dyn());
    // the mean is over the broadcast shape's 4 elements
    let mean = mse_loss(x.view(), y.view(), Reduction::Mean).unwrap();
    assert_eq!(mean, arr0(5.25).into_dyn());
    // 0-D inputs
    let m = mse_loss(arr0(3.0f32).view(), arr0(1.0f32).view(), Reduction::Mean).unwrap();
    assert_eq!(m[[]], 4.0);
    // empty: none gives empty, mean NaN, sum 0
    let e = Array2::<f32>::zeros((0, 2));
    assert_eq!(
        mse_loss(e.view(), y.view(), Reduction::None)
            .unwrap()
            .shape(),
        &[0, 2]
    );
    assert!(mse_loss(e.view(), y.view(), Reduction::Mean).unwrap()[[]].is_nan());
    assert_eq!(
        mse_loss(e.view(), y.view(), Reduction::Sum).unwrap()[[]],
        0.0
    );
    assert!(matches!(
        mse_loss(x.view(), array![1.0f32, 2.0, 3.0].view(), Reduction::Mean),
        Err(Error::NotBroadcastable {
            argument: "self",
            other: "target",
            ..
        })
    ));
}

#[test]
fn mse_loss_types_and_one_rounding() {
    // f16 with f32 computes in f32
    let m = mse_loss(
        array![h(1.5)].view(),
        array![0.25f32].view(),
        Reduction::Sum,
    )
    .unwrap();
    assert_eq!(m[[]], 1.5625f32);
    // bf16: the mean of 3 values rounded once
    let x = array![b(1.0), b(2.0), b(4.0)];
    let m = mse_loss(x.view(), arr0(b(0.0)).view(), Reduction::Mean).unwrap();
    assert_eq!(m[[]], b(21.0 / 3.0));
    // output type f16 of an f32 computation
    let m = mse_loss(
        array![0.1f32].view(),
        array![0.0f32].view(),
        Reduction::None,
    )
    .unwrap();
    let m: ArrayD<f16> = cast(&m);
    assert_eq!(m[[0]], h((0.1f32 as f64 * 0.1f32 as f64) as f32));
    // many small terms after a large one are kept
    let mut v = vec![1.0f32; 1001];
    v[0] = 1e4;
    let x = Array1::from(v);
    let s = mse_loss(x.view(), arr0(0.0f32).view(), Reduction::Sum).unwrap();
    assert_eq!(s[[]], 100_001_000.0);
}

#[test]
fn mse_loss_backward_modes_broadcasting_and_types() {
    let x = array![[1.0f32, 2.0], [3.0, 5.0]];
    let y = array![1.0f32, 1.0];
    let g = arr0(1.0f32);
    let mean = mse_loss_backward(g.view(), x.view(), y.view(), Reduction::Mean).unwrap();
    assert_eq!(mean, array![[0.0, 0.5], [1.0, 2.0]].into_dyn()); // 2(x − y)/4
    let sum = mse_loss_backward(g.view(), x.view(), y.view(), Reduction::Sum).unwrap();
    assert_eq!(sum, array![[0.0, 2.0], [4.0, 8.0]].into_dyn());
    // an elementwise gradient (reduction none), broadcast against self
    let ge = array![[1.0f32], [-0.5]];
    let none = mse_loss_backward(ge.view(), x.view(), y.view(), Reduction::None).unwrap();
    assert_eq!(none, array![[0.0, 2.0], [-2.0, -4.0]].into_dyn());
    // the mean divides by self's element count, not the broadcast one
    let x1 = array![3.0f32];
    let y2 = array![[1.0f32], [2.0]];
    let d = mse_loss_backward(g.view(), x1.view(), y2.view(), Reduction::Mean).unwrap();
    assert_eq!(d, array![[4.0], [2.0]].into_dyn());
    // f16: one rounding of 2·g·(x − y)/3
    let xs = array![h(1.0), h(0.0), h(0.0)];
    let d = mse_loss_backward(
        arr0(h(1.0)).view(),
        xs.view(),
        arr0(h(0.0)).view(),
        Reduction::Mean,
    )
    .unwrap();
    assert_eq!(d[[0]], h(2.0 / 3.0));
    let wide: ArrayD<f32> = cast(&d);
    assert_eq!(wide[[0]], h(2.0 / 3.0).to_f32()); // computed in f16, then widened
    // empty
    let e = Array1::<f32>::zeros(0);
    let d = mse_loss_backward(g.view(), e.view(), e.view(), Reduction::Mean).unwrap();
    assert_eq!(d.into_dimensionality::<Ix1>().unwrap().len(), 0);
    assert!(matches!(
        mse_loss_backward(
            array![1.0f32, 2.0, 3.0].view(),
            x.view(),
            y.view(),
            Reduction::None
        ),
        Err(Error::NotBroadcastable {
            argument: "grad_output",
            other: "self",
            ..
        })
    ));
}

/// reduce_sum over random dims of random shapes (up to 4-D, empty dims included) equals
/// a naive sum, with and without `keep_dims`.
mod properties {
    use super::*;
    use ndarray::Dimension;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]
        #[test]
        fn reduce_sum_matches_a_naive_sum(
            shape in proptest::collection::vec(0usize..4, 0..=4),
            mask in proptest::collection::vec(any::<bool>(), 4),
            keep in any::<bool>(),
            negative in any::<bool>(),
        ) {
            let x = ArrayD::from_shape_fn(shape.clone(), |ix| {
                ix.slice().iter().fold(3usize, |h, &i| h * 7 + i) as f32 % 11.0 - 5.0
            });
            let r = shape.len() as i64;
            let dims: Vec<i64> = (0..r).filter(|&d| mask[d as usize]).map(|d| if negative { d - r } else { d }).collect();
            let reduced: Vec<bool> = (0..shape.len()).map(|d| dims.is_empty() || mask[d]).collect();
            let got = reduce_sum(x.view(), &dims, keep).unwrap();
            let kept: Vec<usize> = shape.iter().zip(&reduced).map(|(&d, &r)| if r { 1 } else { d }).collect();
            let mut want = ArrayD::<f64>::zeros(kept.clone());
            for (ix, v) in x.indexed_iter() {
                let at: Vec<usize> = ix.slice().iter().zip(&reduced).map(|(&i, &r)| if r { 0 } else { i }).collect();
                want[at.as_slice()] += f64::from(*v);
            }
            let want_shape: Vec<usize> = if shape.is_empty() {
                vec![]
            } else if keep {
                kept
            } else {
                shape.iter().zip(&reduced).filter(|(_, r)| !**r).map(|(&d, _)| d).collect()
            };
            prop_assert_eq!(got.shape(), want_shape.as_slice());
            let want = want.into_shape_with_order(want_shape).unwrap().mapv(|v| v as f32);
            prop_assert_eq!(got, want);
        }
    }
}
