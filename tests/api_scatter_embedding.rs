//! `scatter_add` (aclnnScatterAdd), `embedding` (aclnnEmbedding) and
//! `embedding_dense_backward` (aclnnEmbeddingDenseBackward) on the simulator against
//! `reference::index`, and the scatter reference against a naive loop: every element type
//! the crate shares with the vendors' lists, `i64` and `i32` indices, every dim (negative
//! too), repeated indices, padding and frequency scaling, transposed views, 0-D and empty
//! tensors, in-place use, the allocating forms and plans, typed errors.

mod common;

use ascendcl::reference::index as ri;
use ascendcl::{
    DeviceTensor, Element, EmbeddingDenseBackwardPlan, EmbeddingPlan, Error, ScatterAddPlan,
    embedding, embedding_dense_backward, embedding_dense_backward_new, embedding_new, scatter_add,
    scatter_add_new,
};
use half::{bf16, f16};
use ndarray::{ArrayD, IxDyn};

fn stream() -> ascendcl::Stream {
    crate::common::device(0).stream().unwrap()
}

/// An array of `shape` of `T` from small integers (exact in every type, sums too).
fn data<T: Element>(shape: &[usize], salt: usize) -> ArrayD<T> {
    let n: usize = shape.iter().product();
    let v = (0..n)
        .map(|k| T::from_f64(((k * 5 + salt) % 7) as f64 - 3.0))
        .collect();
    ArrayD::from_shape_vec(IxDyn(shape), v).unwrap()
}

/// An index of `shape` whose values are in `[0, size)`, with repeats.
fn index(shape: &[usize], size: usize, salt: usize) -> ArrayD<i64> {
    let n: usize = shape.iter().product();
    let v = (0..n).map(|k| ((k * 7 + salt) % size) as i64).collect();
    ArrayD::from_shape_vec(IxDyn(shape), v).unwrap()
}

fn f64s<T: Element>(a: &ArrayD<T>) -> ArrayD<f64> {
    a.mapv(T::to_f64)
}

/// torch.scatter_add written as the definition reads, for rank 3.
fn naive(x: &ArrayD<f64>, dim: usize, i: &ArrayD<i64>, s: &ArrayD<f64>) -> ArrayD<f64> {
    let mut out = x.clone();
    let sh = i.shape();
    for a in 0..sh[0] {
        for b in 0..sh[1] {
            for c in 0..sh[2] {
                let mut at = [a, b, c];
                at[dim] = i[[a, b, c]] as usize;
                out[IxDyn(&at)] += s[[a, b, c]];
            }
        }
    }
    out
}

#[test]
fn the_reference_matches_the_definition_on_every_dim() {
    let x = data::<f64>(&[3, 4, 5], 0);
    let s = data::<f64>(&[4, 5, 6], 1);
    for dim in -3i64..3 {
        let d = dim.rem_euclid(3) as usize;
        let mut ishape = vec![2, 3, 4];
        ishape[d] = 4;
        let i = index(&ishape, x.shape()[d], d);
        let got = ri::scatter_add(x.view(), dim, i.view(), s.view()).unwrap();
        assert_eq!(got, naive(&x, d, &i, &s), "dim {dim}");
        assert_ne!(got, x, "dim {dim}: something was added");
    }
}

fn cases_of<T: Element + PartialEq + std::fmt::Debug>() -> usize {
    let st = stream();
    let x = data::<T>(&[3, 4, 5], 2);
    let src = data::<T>(&[4, 5, 6], 3);
    let dx = DeviceTensor::from_array(&st, &x).unwrap();
    let ds = DeviceTensor::from_array(&st, &src).unwrap();
    let mut n = 0;
    for dim in -3i64..3 {
        let d = dim.rem_euclid(3) as usize;
        let mut ishape = vec![2, 3, 4];
        ishape[d] = 4;
        let i = index(&ishape, x.shape()[d], d + 1);
        let want = ri::scatter_add(f64s(&x).view(), dim, i.view(), f64s(&src).view())
            .unwrap()
            .mapv(T::from_f64);
        let di = DeviceTensor::from_array(&st, &i).unwrap();
        let got: DeviceTensor<T> = scatter_add_new(&dx, dim, &di, &ds, &st).unwrap();
        assert_eq!(got.to_array::<IxDyn>(&st).unwrap(), want, "i64 dim {dim}");
        let di32 = DeviceTensor::from_array(&st, &i.mapv(|v| v as i32)).unwrap();
        let mut out = DeviceTensor::<T>::zeros(&st, [3, 4, 5]).unwrap();
        scatter_add(&dx, dim, &di32, &ds, &mut out, &st).unwrap();
        assert_eq!(out.to_array::<IxDyn>(&st).unwrap(), want, "i32 dim {dim}");
        n += 2;
    }
    n
}

#[test]
fn scatter_add_matches_the_reference_for_every_type_dim_and_index_type() {
    let n = cases_of::<f32>()
        + cases_of::<f16>()
        + cases_of::<bf16>()
        + cases_of::<f64>()
        + cases_of::<i64>()
        + cases_of::<i32>()
        + cases_of::<i8>()
        + cases_of::<u8>();
    assert_eq!(n, 8 * 12);
}

#[test]
fn views_zero_d_empty_and_in_place() {
    let st = stream();
    let x = data::<f32>(&[3, 4, 5], 0);
    let dx = DeviceTensor::from_array(&st, &x).unwrap();
    let src = data::<f32>(&[5, 4, 3], 4);
    let dsrc = DeviceTensor::from_array(&st, &src).unwrap();
    // Transposed self and src: dims [5, 4, 3].
    let xt = x.view().permuted_axes(IxDyn(&[2, 1, 0]));
    let st_src = src.view().permuted_axes(IxDyn(&[2, 1, 0]));
    let i = index(&[3, 4, 3], 5, 2);
    let di = DeviceTensor::from_array(&st, &i).unwrap();
    let got: DeviceTensor<f32> = scatter_add_new(
        dx.view().permute(&[2, 1, 0]).unwrap(),
        0,
        &di,
        dsrc.view().permute(&[2, 1, 0]).unwrap(),
        &st,
    )
    .unwrap();
    let want = ri::scatter_add(
        xt.mapv(f64::from).view(),
        0,
        i.view(),
        st_src.mapv(f64::from).view(),
    )
    .unwrap();
    assert_eq!(got.to_array::<IxDyn>(&st).unwrap(), want.mapv(|v| v as f32));
    // 0-D self, index and src.
    let z = DeviceTensor::from_array(&st, &ndarray::arr0(1.5f32).into_dyn()).unwrap();
    let zi = DeviceTensor::from_array(&st, &ndarray::arr0(0i64).into_dyn()).unwrap();
    let zs = DeviceTensor::from_array(&st, &ndarray::arr0(2.0f32).into_dyn()).unwrap();
    let got: DeviceTensor<f32> = scatter_add_new(&z, -1, &zi, &zs, &st).unwrap();
    assert_eq!(
        got.to_array::<IxDyn>(&st).unwrap(),
        ndarray::arr0(3.5f32).into_dyn()
    );
    // An empty index: out is a copy of self; an empty self: an empty out.
    let e = DeviceTensor::<i64>::zeros(&st, [0, 4, 5]).unwrap();
    let got: DeviceTensor<f32> = scatter_add_new(&dx, 0, &e, &dsrc, &st).unwrap();
    assert_eq!(got.to_array::<IxDyn>(&st).unwrap(), x);
    let ex = DeviceTensor::<f32>::zeros(&st, [0, 4]).unwrap();
    let ei = DeviceTensor::<i64>::zeros(&st, [0, 4]).unwrap();
    let got: DeviceTensor<f32> = scatter_add_new(&ex, 1, &ei, &ex, &st).unwrap();
    assert_eq!(got.shape(), &[0, 4]);
    // In place: out is self's buffer, launched twice through a plan.
    let mut acc = DeviceTensor::from_array(&st, &x).unwrap();
    let i = index(&[2, 4, 5], 3, 1);
    let di = DeviceTensor::from_array(&st, &i).unwrap();
    let s3 = data::<f32>(&[2, 4, 5], 6);
    let ds3 = DeviceTensor::from_array(&st, &s3).unwrap();
    let mut want = x.mapv(f64::from);
    for _ in 0..2 {
        let mut out = DeviceTensor::<f32>::zeros(&st, [3, 4, 5]).unwrap();
        scatter_add(&acc, 0, &di, &ds3, &mut out, &st).unwrap();
        acc = out;
        want = ri::scatter_add(want.view(), 0, i.view(), s3.mapv(f64::from).view()).unwrap();
    }
    assert_eq!(acc.to_array::<IxDyn>(&st).unwrap(), want.mapv(|v| v as f32));
}

#[test]
fn a_plan_scatters_new_indices_at_each_launch() {
    let st = stream();
    let x = data::<f32>(&[3, 4], 0);
    let s = data::<f32>(&[3, 4], 5);
    let dx = DeviceTensor::from_array(&st, &x).unwrap();
    let ds = DeviceTensor::from_array(&st, &s).unwrap();
    let mut out = DeviceTensor::<f32>::zeros(&st, [3, 4]).unwrap();
    let a = index(&[3, 4], 4, 0);
    let b = index(&[3, 4], 4, 3);
    let da = DeviceTensor::from_array(&st, &a).unwrap();
    let db = DeviceTensor::from_array(&st, &b).unwrap();
    let mut plan = ScatterAddPlan::<f32, i64>::new(&dx, 1, &da, &ds, &out, &st).unwrap();
    for (i, di) in [(&a, &da), (&b, &db)] {
        plan.launch(&dx, di, &ds, &mut out, &st).unwrap();
        let want = ri::scatter_add(
            x.mapv(f64::from).view(),
            1,
            i.view(),
            s.mapv(f64::from).view(),
        )
        .unwrap();
        assert_eq!(out.to_array::<IxDyn>(&st).unwrap(), want.mapv(|v| v as f32));
    }
}

#[test]
fn invalid_scatter_add_calls_are_refused_with_typed_errors() {
    let st = stream();
    let dx = DeviceTensor::from_array(&st, &data::<f32>(&[3, 4], 0)).unwrap();
    let ds = DeviceTensor::from_array(&st, &data::<f32>(&[3, 4], 1)).unwrap();
    let i = DeviceTensor::from_array(&st, &index(&[3, 4], 3, 0)).unwrap();
    let mut out = DeviceTensor::<f32>::zeros(&st, [3, 4]).unwrap();
    let e = scatter_add(&dx, 2, &i, &ds, &mut out, &st).unwrap_err();
    assert!(
        matches!(e, Error::InvalidArgument(ref m) if m.contains("dim")),
        "{e}"
    );
    let mut bad = DeviceTensor::<f32>::zeros(&st, [4, 3]).unwrap();
    let e = scatter_add(&dx, 0, &i, &ds, &mut bad, &st).unwrap_err();
    assert!(matches!(e, Error::ShapeMismatch { .. }), "{e}");
    // index larger than src.
    let small = DeviceTensor::from_array(&st, &data::<f32>(&[2, 4], 1)).unwrap();
    let e = scatter_add(&dx, 0, &i, &small, &mut out, &st).unwrap_err();
    assert!(matches!(e, Error::ShapeMismatch { .. }), "{e}");
    // ranks differ.
    let flat = DeviceTensor::from_array(&st, &index(&[4], 3, 0)).unwrap();
    let e = scatter_add(&dx, 0, &flat, &ds, &mut out, &st).unwrap_err();
    assert!(matches!(e, Error::InvalidArgument(_)), "{e}");
    // A float index.
    let fi = DeviceTensor::<f32>::zeros(&st, [3, 4]).unwrap();
    let e = scatter_add(&dx, 0, &fi, &ds, &mut out, &st).unwrap_err();
    assert!(matches!(e, Error::UnsupportedDtype { .. }), "{e}");
    // An index value out of range: CANN does not check it, the simulator fails the launch.
    let oob = DeviceTensor::from_array(&st, &ndarray::arr2(&[[0i64, 3, 0, 0]]).into_dyn()).unwrap();
    scatter_add(&dx, 0, &oob, &ds, &mut out, &st).unwrap();
    let e = st.synchronize().unwrap_err();
    assert!(e.to_string().contains("outside [0, 3)"), "{e}");
}

/// The index shapes the embedding tests look up: 1-D to 3-D and 0-D.
const INDEX_SHAPES: &[&[usize]] = &[&[5], &[2, 3], &[2, 2, 2], &[]];

fn embedding_cases_of<T: Element + PartialEq + std::fmt::Debug>() -> usize {
    let st = stream();
    let w = data::<T>(&[7, 4], 1);
    let dw = DeviceTensor::from_array(&st, &w).unwrap();
    let mut n = 0;
    for (k, shape) in INDEX_SHAPES.iter().enumerate() {
        let i = index(shape, 7, k);
        let want = ri::embedding(w.view(), i.view()).unwrap();
        let di = DeviceTensor::from_array(&st, &i).unwrap();
        let got: DeviceTensor<T> = embedding_new(&dw, &di, &st).unwrap();
        assert_eq!(got.to_array::<IxDyn>(&st).unwrap(), want, "i64 {shape:?}");
        let di32 = DeviceTensor::from_array(&st, &i.mapv(|v| v as i32)).unwrap();
        let mut out = DeviceTensor::<T>::zeros(&st, want.shape()).unwrap();
        embedding(&dw, &di32, &mut out, &st).unwrap();
        assert_eq!(out.to_array::<IxDyn>(&st).unwrap(), want, "i32 {shape:?}");
        n += 2;
    }
    n
}

#[test]
fn embedding_matches_the_reference_for_every_type_and_index_shape() {
    let n = embedding_cases_of::<f32>()
        + embedding_cases_of::<f16>()
        + embedding_cases_of::<bf16>()
        + embedding_cases_of::<f64>()
        + embedding_cases_of::<i64>()
        + embedding_cases_of::<i32>()
        + embedding_cases_of::<i8>()
        + embedding_cases_of::<u8>();
    assert_eq!(n, 8 * 8);
}

/// Asserts `got` is `want` within `tol` per element.
fn close<T: Element>(got: &ArrayD<T>, want: &ArrayD<f64>, tol: f64, what: &str) {
    assert_eq!(got.shape(), want.shape(), "{what}");
    for (g, w) in got.iter().zip(want) {
        assert!(
            (g.to_f64() - w).abs() <= tol,
            "{what}: {} vs {w}",
            g.to_f64()
        );
    }
}

fn dense_backward_cases_of<T: Element>(tol: f64) -> usize {
    let st = stream();
    let mut n = 0;
    for (k, shape) in INDEX_SHAPES.iter().enumerate() {
        let i = index(shape, 6, k + 2);
        let mut gshape = shape.to_vec();
        gshape.push(3);
        let g = data::<T>(&gshape, k);
        let dg = DeviceTensor::from_array(&st, &g).unwrap();
        let di = DeviceTensor::from_array(&st, &i).unwrap();
        let di32 = DeviceTensor::from_array(&st, &i.mapv(|v| v as i32)).unwrap();
        let padded = i.iter().next().map(|&v| v as usize);
        for (pad, scale) in [(None, false), (padded, false), (None, true), (padded, true)] {
            let want =
                ri::embedding_dense_backward(f64s(&g).view(), i.view(), 6, pad, scale).unwrap();
            let summed = want.iter().any(|&v| v != 0.0);
            assert!(summed || pad.is_some(), "{shape:?}: something was summed");
            let p = pad.map_or(u64::MAX, |p| p as u64);
            let what = format!("{shape:?} padding {pad:?} scaled {scale}");
            let got: DeviceTensor<T> =
                embedding_dense_backward_new(&dg, &di, 6u64, p, scale, &st).unwrap();
            close(&got.to_array::<IxDyn>(&st).unwrap(), &want, tol, &what);
            let mut out = DeviceTensor::<T>::zeros(&st, [6, 3]).unwrap();
            embedding_dense_backward(&dg, &di32, 6u64, p, scale, &mut out, &st).unwrap();
            close(&out.to_array::<IxDyn>(&st).unwrap(), &want, tol, &what);
            n += 2;
        }
    }
    n
}

#[test]
fn embedding_dense_backward_matches_the_reference_with_padding_and_scaling() {
    let n = dense_backward_cases_of::<f32>(1e-5)
        + dense_backward_cases_of::<f16>(1e-2)
        + dense_backward_cases_of::<bf16>(5e-2);
    assert_eq!(n, 3 * 4 * 8);
}

#[test]
fn embedding_dense_backward_takes_float_indices_as_the_library_does() {
    let st = stream();
    let g = data::<f32>(&[4, 2], 3);
    let i = index(&[4], 3, 1);
    let want = ri::embedding_dense_backward(f64s(&g).view(), i.view(), 3, None, false).unwrap();
    let dg = DeviceTensor::from_array(&st, &g).unwrap();
    let di = DeviceTensor::from_array(&st, &i.mapv(|v| v as f32)).unwrap();
    let got: DeviceTensor<f32> =
        embedding_dense_backward_new(&dg, &di, 3u64, u64::MAX, false, &st).unwrap();
    close(
        &got.to_array::<IxDyn>(&st).unwrap(),
        &want,
        1e-6,
        "f32 indices",
    );
}

#[test]
fn empty_indices_give_an_empty_lookup_and_a_zero_gradient() {
    let st = stream();
    let w = DeviceTensor::from_array(&st, &data::<f32>(&[5, 3], 0)).unwrap();
    let e = DeviceTensor::<i64>::zeros(&st, [0]).unwrap();
    let got: DeviceTensor<f32> = embedding_new(&w, &e, &st).unwrap();
    assert_eq!(got.shape(), &[0, 3]);
    let e2 = DeviceTensor::<i32>::zeros(&st, [2, 0]).unwrap();
    let got: DeviceTensor<f32> = embedding_new(&w, &e2, &st).unwrap();
    assert_eq!(got.shape(), &[2, 0, 3]);
    let g = DeviceTensor::<f32>::zeros(&st, [0, 3]).unwrap();
    let mut out = DeviceTensor::from_array(&st, &data::<f32>(&[5, 3], 1)).unwrap();
    embedding_dense_backward(&g, &e, 5u64, u64::MAX, true, &mut out, &st).unwrap();
    assert_eq!(
        out.to_array::<IxDyn>(&st).unwrap(),
        ArrayD::<f32>::zeros(IxDyn(&[5, 3]))
    );
    let want = ri::embedding_dense_backward(
        ArrayD::<f64>::zeros(IxDyn(&[0, 3])).view(),
        ArrayD::<i64>::zeros(IxDyn(&[0])).view(),
        5,
        None,
        true,
    )
    .unwrap();
    assert_eq!(want, ArrayD::<f64>::zeros(IxDyn(&[5, 3])));
}

#[test]
fn embedding_plans_look_up_and_sum_new_indices_at_each_launch() {
    let st = stream();
    let w = data::<f32>(&[6, 3], 2);
    let dw = DeviceTensor::from_array(&st, &w).unwrap();
    let g = data::<f32>(&[2, 4, 3], 4);
    let dg = DeviceTensor::from_array(&st, &g).unwrap();
    let (a, b) = (index(&[2, 4], 6, 0), index(&[2, 4], 6, 5));
    let (da, db) = (
        DeviceTensor::from_array(&st, &a).unwrap(),
        DeviceTensor::from_array(&st, &b).unwrap(),
    );
    let mut out = DeviceTensor::<f32>::zeros(&st, [2, 4, 3]).unwrap();
    let mut plan = EmbeddingPlan::<f32, i64>::new(&dw, &da, &out, &st).unwrap();
    let mut grad = DeviceTensor::<f32>::zeros(&st, [6, 3]).unwrap();
    let mut back =
        EmbeddingDenseBackwardPlan::<f32, i64>::new(&dg, &da, 6u64, 2u64, true, &grad, &st)
            .unwrap();
    for (i, di) in [(&a, &da), (&b, &db)] {
        plan.launch(&dw, di, &mut out, &st).unwrap();
        let want = ri::embedding(w.view(), i.view()).unwrap();
        assert_eq!(out.to_array::<IxDyn>(&st).unwrap(), want);
        back.launch(&dg, di, &mut grad, &st).unwrap();
        let want =
            ri::embedding_dense_backward(f64s(&g).view(), i.view(), 6, Some(2), true).unwrap();
        close(&grad.to_array::<IxDyn>(&st).unwrap(), &want, 1e-5, "plan");
    }
}

#[test]
fn invalid_embedding_calls_are_refused_with_typed_errors() {
    let st = stream();
    let w = DeviceTensor::from_array(&st, &data::<f32>(&[5, 3], 0)).unwrap();
    let i = DeviceTensor::from_array(&st, &index(&[4], 5, 0)).unwrap();
    // Float indices.
    let fi = DeviceTensor::<f32>::zeros(&st, [4]).unwrap();
    let r: ascendcl::Result<DeviceTensor<f32>> = embedding_new(&w, &fi, &st);
    let e = r.unwrap_err();
    assert!(matches!(e, Error::UnsupportedDtype { .. }), "{e}");
    // out of the wrong rank, leading dims or width.
    for shape in [&[4usize][..], &[3, 3], &[4, 2]] {
        let mut bad = DeviceTensor::<f32>::zeros(&st, shape).unwrap();
        let e = embedding(&w, &i, &mut bad, &st).unwrap_err();
        assert!(matches!(e, Error::ShapeMismatch { .. }), "{shape:?}: {e}");
    }
    // A 3-D weight has no out to allocate.
    let w3 = DeviceTensor::<f32>::zeros(&st, [5, 3, 2]).unwrap();
    let r: ascendcl::Result<DeviceTensor<f32>> = embedding_new(&w3, &i, &st);
    let e = r.unwrap_err();
    assert!(matches!(e, Error::InvalidArgument(_)), "{e}");
    // Grad rows against indices, and out against numWeights.
    let g = DeviceTensor::from_array(&st, &data::<f32>(&[3, 3], 0)).unwrap();
    let r: ascendcl::Result<DeviceTensor<f32>> =
        embedding_dense_backward_new(&g, &i, 5u64, u64::MAX, false, &st);
    let e = r.unwrap_err();
    assert!(matches!(e, Error::InvalidArgument(_)), "{e}");
    let g = DeviceTensor::from_array(&st, &data::<f32>(&[4, 3], 0)).unwrap();
    let mut out = DeviceTensor::<f32>::zeros(&st, [6, 3]).unwrap();
    let e = embedding_dense_backward(&g, &i, 5u64, u64::MAX, false, &mut out, &st).unwrap_err();
    assert!(matches!(e, Error::ShapeMismatch { .. }), "{e}");
    // Integer gradients.
    let gi = DeviceTensor::<i32>::zeros(&st, [4, 3]).unwrap();
    let r: ascendcl::Result<DeviceTensor<i32>> =
        embedding_dense_backward_new(&gi, &i, 5u64, 0u64, false, &st);
    let e = r.unwrap_err();
    assert!(matches!(e, Error::UnsupportedDtype { .. }), "{e}");
    // An index value out of range: CANN does not check it, the simulator fails the launch.
    let oob = DeviceTensor::from_array(&st, &ndarray::arr1(&[0i64, 5, 1, 1]).into_dyn()).unwrap();
    let mut out = DeviceTensor::<f32>::zeros(&st, [4, 3]).unwrap();
    embedding(&w, &oob, &mut out, &st).unwrap();
    let e = st.synchronize().unwrap_err();
    assert!(e.to_string().contains("outside [0, 5)"), "{e}");
}

/// The weight gradient of `loss(W) = Σ r ⊙ embedding(W, indices)` from
/// `aclnnEmbeddingDenseBackward` equals the central differences of that loss, each loss
/// computed with the device's `aclnnEmbedding` (repeated indices accumulate).
#[test]
fn the_dense_backward_is_the_central_difference_of_the_embedding_on_the_device() {
    let st = stream();
    let w0 = data::<f32>(&[5, 3], 1);
    let indices = ndarray::arr2(&[[4i64, 0, 4], [2, 2, 1]]).into_dyn();
    let r = data::<f32>(&[2, 3, 3], 2);
    let di = DeviceTensor::from_array(&st, &indices).unwrap();
    let loss = |w: &ArrayD<f32>| -> f64 {
        let dw = DeviceTensor::from_array(&st, w).unwrap();
        let y: DeviceTensor<f32> = embedding_new(&dw, &di, &st).unwrap();
        let y: ArrayD<f32> = y.to_array(&st).unwrap();
        y.iter()
            .zip(r.iter())
            .map(|(a, b)| f64::from(*a) * f64::from(*b))
            .sum()
    };
    let dr = DeviceTensor::from_array(&st, &r).unwrap();
    let g: DeviceTensor<f32> =
        embedding_dense_backward_new(&dr, &di, 5u64, u64::MAX, false, &st).unwrap();
    let g: ArrayD<f32> = g.to_array(&st).unwrap();
    const H: f32 = 0.25;
    for (i, got) in g.iter().enumerate() {
        let mut w = w0.clone();
        let orig = w.as_slice().unwrap()[i];
        w.as_slice_mut().unwrap()[i] = orig + H;
        let up = loss(&w);
        w.as_slice_mut().unwrap()[i] = orig - H;
        let down = loss(&w);
        let want = (up - down) / (2.0 * f64::from(H));
        assert!(
            (f64::from(*got) - want).abs() <= 1e-4 * want.abs().max(1.0),
            "dW[{i}]: {got} vs central difference {want}"
        );
    }
    // Row 3 is never looked up; the others are.
    assert!(g.as_slice().unwrap()[9..12].iter().all(|&v| v == 0.0));
    assert!(g.iter().any(|&v| v != 0.0));
}
