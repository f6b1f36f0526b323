//! `gather` and `index_select` (aclnnGather, aclnnIndexSelect) on the simulator against
//! `reference::index`: element types, `i64` and `i32` indices, every dim (negative too),
//! transposed views, 0-D and empty tensors, the allocating forms and plans, typed errors.

use crate::common;

use ascendcl::reference::index as ri;
use ascendcl::{
    DeviceTensor, Element, Error, GatherPlan, gather, gather_new, index_select, index_select_new,
};
use half::f16;
use ndarray::{ArrayD, IxDyn};

fn stream() -> ascendcl::Stream {
    common::device(0).stream().unwrap()
}

/// A [2, 3, 4] array of `T` from small integers.
fn data<T: Element>() -> ArrayD<T> {
    let v: Vec<T> = (0..24)
        .map(|k| T::from_f64(f64::from(k % 7) - 3.0))
        .collect();
    ArrayD::from_shape_vec(IxDyn(&[2, 3, 4]), v).unwrap()
}

/// An index of `shape` whose values are in `[0, size)`.
fn index(shape: &[usize], size: usize, salt: usize) -> ArrayD<i64> {
    let n: usize = shape.iter().product();
    let v = (0..n).map(|k| ((k * 7 + salt) % size) as i64).collect();
    ArrayD::from_shape_vec(IxDyn(shape), v).unwrap()
}

fn cases_of<T: Element + PartialEq + std::fmt::Debug>() -> usize {
    let s = stream();
    let x = data::<T>();
    let dx = DeviceTensor::from_array(&s, &x).unwrap();
    let mut n = 0;
    for dim in -3i64..3 {
        let d = dim.rem_euclid(3) as usize;
        let mut ishape = vec![2, 3, 4];
        ishape[d] = 5;
        let i = index(&ishape, x.shape()[d], d);
        let want = ri::gather(x.view(), dim, i.view()).unwrap();
        // i64 and i32 indices.
        let di = DeviceTensor::from_array(&s, &i).unwrap();
        let got: DeviceTensor<T> = gather_new(&dx, dim, &di, &s).unwrap();
        assert_eq!(got.to_array::<IxDyn>(&s).unwrap(), want, "gather dim {dim}");
        let di32 = DeviceTensor::from_array(&s, &i.mapv(|v| v as i32)).unwrap();
        let mut out = DeviceTensor::<T>::zeros(&s, &ishape[..]).unwrap();
        gather(&dx, dim, &di32, &mut out, &s).unwrap();
        assert_eq!(
            out.to_array::<IxDyn>(&s).unwrap(),
            want,
            "gather i32 dim {dim}"
        );
        let sel = index(&[5], x.shape()[d], d + 1);
        let want = ri::index_select(x.view(), dim, sel.view()).unwrap();
        let ds = DeviceTensor::from_array(&s, &sel).unwrap();
        let got: DeviceTensor<T> = index_select_new(&dx, dim, &ds, &s).unwrap();
        assert_eq!(
            got.to_array::<IxDyn>(&s).unwrap(),
            want,
            "index_select dim {dim}"
        );
        n += 3;
    }
    n
}

#[test]
fn gather_and_index_select_match_the_reference_for_every_type_dim_and_index_type() {
    let _gate = crate::common::shared();
    let n = cases_of::<f32>()
        + cases_of::<f16>()
        + cases_of::<i64>()
        + cases_of::<i32>()
        + cases_of::<u8>()
        + cases_of::<i8>()
        + cases_of::<f64>();
    assert_eq!(n, 7 * 18);
}

#[test]
fn views_zero_d_and_empty_tensors() {
    let _gate = crate::common::shared();
    let s = stream();
    let x = data::<f32>();
    let dx = DeviceTensor::from_array(&s, &x).unwrap();
    // A transposed view of x: dims [4, 3, 2].
    let xt = x.view().permuted_axes(IxDyn(&[2, 1, 0]));
    let i = index(&[4, 3, 2], 3, 1);
    let di = DeviceTensor::from_array(&s, &i).unwrap();
    let view = dx.view().permute(&[2, 1, 0]).unwrap();
    let got: DeviceTensor<f32> = gather_new(view, 1, &di, &s).unwrap();
    assert_eq!(
        got.to_array::<IxDyn>(&s).unwrap(),
        ri::gather(xt.view(), 1, i.view()).unwrap()
    );
    let sel = ndarray::arr1(&[1i64, 0, 1]).into_dyn();
    let ds = DeviceTensor::from_array(&s, &sel).unwrap();
    let view = dx.view().permute(&[2, 1, 0]).unwrap();
    let got: DeviceTensor<f32> = index_select_new(view, 2, &ds, &s).unwrap();
    assert_eq!(
        got.to_array::<IxDyn>(&s).unwrap(),
        ri::index_select(xt.view(), 2, sel.view()).unwrap()
    );
    // 0-D self with a 0-D index.
    let z = DeviceTensor::from_array(&s, &ndarray::arr0(7.5f32).into_dyn()).unwrap();
    let zi = DeviceTensor::from_array(&s, &ndarray::arr0(0i64).into_dyn()).unwrap();
    let got: DeviceTensor<f32> = gather_new(&z, 0, &zi, &s).unwrap();
    assert_eq!(
        got.to_array::<IxDyn>(&s).unwrap(),
        ndarray::arr0(7.5f32).into_dyn()
    );
    let got: DeviceTensor<f32> = index_select_new(&z, -1, &zi, &s).unwrap();
    assert_eq!(
        got.to_array::<IxDyn>(&s).unwrap(),
        ndarray::arr0(7.5f32).into_dyn()
    );
    // An empty index: an empty result.
    let e = DeviceTensor::<i64>::zeros(&s, [2, 0, 4]).unwrap();
    let got: DeviceTensor<f32> = gather_new(&dx, 1, &e, &s).unwrap();
    assert_eq!(got.shape(), &[2, 0, 4]);
    let e = DeviceTensor::<i32>::zeros(&s, [0]).unwrap();
    let got: DeviceTensor<f32> = index_select_new(&dx, 0, &e, &s).unwrap();
    assert_eq!(got.shape(), &[0, 3, 4]);
}

#[test]
fn a_plan_gathers_new_indices_at_each_launch() {
    let _gate = crate::common::shared();
    let s = stream();
    let x = data::<f32>();
    let dx = DeviceTensor::from_array(&s, &x).unwrap();
    let mut out = DeviceTensor::<f32>::zeros(&s, [2, 3, 4]).unwrap();
    let a = index(&[2, 3, 4], 4, 0);
    let b = index(&[2, 3, 4], 4, 3);
    let da = DeviceTensor::from_array(&s, &a).unwrap();
    let db = DeviceTensor::from_array(&s, &b).unwrap();
    let mut plan = GatherPlan::<f32, i64>::new(&dx, 2, &da, &out, &s).unwrap();
    for i in [&a, &b] {
        let di = if std::ptr::eq(i, &a) { &da } else { &db };
        plan.launch(&dx, di, &mut out, &s).unwrap();
        assert_eq!(
            out.to_array::<IxDyn>(&s).unwrap(),
            ri::gather(x.view(), 2, i.view()).unwrap()
        );
    }
}

#[test]
fn invalid_calls_are_refused_in_rust_with_typed_errors() {
    // Exclusive: the failed launch leaves a simulator report, which a leak check of
    // another test would read as its own.
    let _gate = crate::common::serial();
    let s = stream();
    let dx = DeviceTensor::from_array(&s, &data::<f32>()).unwrap();
    let i = DeviceTensor::from_array(&s, &index(&[2, 3, 4], 3, 0)).unwrap();
    let mut out = DeviceTensor::<f32>::zeros(&s, [2, 3, 4]).unwrap();
    let e = gather(&dx, 3, &i, &mut out, &s).unwrap_err();
    assert!(
        matches!(e, Error::InvalidArgument(ref m) if m.contains("dim")),
        "{e}"
    );
    let mut bad = DeviceTensor::<f32>::zeros(&s, [2, 3, 5]).unwrap();
    let e = gather(&dx, 1, &i, &mut bad, &s).unwrap_err();
    assert!(matches!(e, Error::ShapeMismatch { .. }), "{e}");
    let big = DeviceTensor::<i64>::zeros(&s, [2, 4, 4]).unwrap();
    let mut o = DeviceTensor::<f32>::zeros(&s, [2, 4, 4]).unwrap();
    let e = gather(&dx, 2, &big, &mut o, &s).unwrap_err();
    assert!(matches!(e, Error::ShapeMismatch { .. }), "{e}");
    let f = DeviceTensor::<f32>::zeros(&s, [2]).unwrap();
    let mut o = DeviceTensor::<f32>::zeros(&s, [2, 2, 4]).unwrap();
    let e = index_select(&dx, 1, &f, &mut o, &s).unwrap_err();
    assert!(matches!(e, Error::UnsupportedDtype { .. }), "{e}");
    let two_d = DeviceTensor::<i64>::zeros(&s, [1, 2]).unwrap();
    let e = index_select(&dx, 1, &two_d, &mut o, &s).unwrap_err();
    assert!(matches!(e, Error::InvalidArgument(_)), "{e}");
    // An index value out of range: CANN does not check it, the simulator fails the launch.
    let oob = DeviceTensor::from_array(&s, &ndarray::arr1(&[0i64, 3]).into_dyn()).unwrap();
    index_select(&dx, 1, &oob, &mut o, &s).unwrap();
    let e = s.synchronize().unwrap_err();
    assert!(e.to_string().contains("outside [0, 3)"), "{e}");
    ascend_sim::clear_last_report();
}
