//! `cast` (aclnnCast) and `one_inplace` (aclnnInplaceOne) on the simulator: every pair of
//! the crate's element types the vendor lists on Atlas A2 (all 81) against
//! `reference::cast`, bit for bit, through the function, the allocating forms
//! (`cast_new`, `cast_to`) and the plan; transposed, permuted and stepped views; 0-D and
//! empty tensors; agreement with `copy`; ones in every element type; typed errors.

use crate::common;
use ascendcl::{
    CastPlan, DType, DeviceTensor, Element, Error, InplaceOnePlan, Tensor, cast, cast_new, cast_to,
    copy, one_inplace, reference,
};
use half::{bf16, f16};
use ndarray::{ArrayD, IxDyn};

fn stream() -> ascendcl::Stream {
    common::device(common::A2).stream().unwrap()
}

/// Values that round, truncate, saturate and wrap differently in different targets, as
/// `T` holds them (for a floating `T` NaN and infinities too).
fn values<T: Element>() -> ArrayD<T> {
    let mut v = vec![
        0.0,
        -0.0,
        1.0,
        1.5,
        -2.5,
        2.5,
        3.7,
        -3.7,
        127.0,
        128.0,
        255.0,
        256.0,
        300.0,
        -129.0,
        65504.0,
        65520.0,
        1e10,
        -1e10,
        3e9,
        -1e-8,
        16_777_217.0,
    ];
    if T::DTYPE.is_float() {
        v.extend([f64::NAN, f64::INFINITY, f64::NEG_INFINITY]);
    } else {
        v.extend([-1.0, 2.0, 7.0]);
    }
    let mut v: Vec<T> = v.into_iter().map(T::from_f64).collect();
    if T::DTYPE == DType::I64 {
        // Beyond 2^53: one rounding to a float, the low bits to a narrower integer.
        let big = (1i64 << 60) + (1 << 52) + 1;
        for b in [big, -big, i64::MAX, i64::MIN] {
            v.extend(reference::cast::<T, i64, _, _>(&ndarray::arr1(&[b])));
        }
    }
    let n = v.len();
    ArrayD::from_shape_vec(IxDyn(&[n / 4, 4]), v).unwrap()
}

/// Equal bits, or both NaN (a NaN's payload is not the cast's promise).
fn same<T: Element>(a: &ArrayD<T>, b: &ArrayD<T>) -> bool {
    let nan = |v: T| v.to_f64().is_nan();
    a.shape() == b.shape()
        && a.iter()
            .zip(b)
            .all(|(&x, &y)| x.to_bits_u64() == y.to_bits_u64() || nan(x) && nan(y))
}

/// One pair through `cast`, `cast_new`, `cast_to` and a plan; returns 1.
fn pair<T: Element, O: Element>() -> usize {
    let st = stream();
    let x = values::<T>();
    let want: ArrayD<O> = reference::cast(&x);
    let what = format!("{} to {}", T::DTYPE, O::DTYPE);
    let dx = DeviceTensor::from_array(&st, &x).unwrap();
    let mut out = DeviceTensor::<O>::zeros(&st, x.shape()).unwrap();
    cast(&dx, &mut out, &st).unwrap();
    assert!(same(&out.to_array(&st).unwrap(), &want), "{what}");
    let new: DeviceTensor<O> = cast_new(&dx, &st).unwrap();
    assert!(same(&new.to_array(&st).unwrap(), &want), "{what}: cast_new");
    let dyn_x = Tensor::from(DeviceTensor::from_array(&st, &x).unwrap());
    let to = cast_to(&dyn_x, O::DTYPE, &st).unwrap();
    assert_eq!(to.dtype(), O::DTYPE, "{what}: cast_to");
    let to = to.to_vec::<O>(&st).unwrap();
    let to = ArrayD::from_shape_vec(IxDyn(x.shape()), to).unwrap();
    assert!(same(&to, &want), "{what}: cast_to");
    let mut planned = DeviceTensor::<O>::zeros(&st, x.shape()).unwrap();
    let mut plan = CastPlan::new(&dx, &planned, &st).unwrap();
    plan.launch(&dx, &mut planned, &st).unwrap();
    assert!(same(&planned.to_array(&st).unwrap(), &want), "{what}: plan");
    1
}

macro_rules! pairs_from {
    ($t:ty) => {
        pair::<$t, f32>()
            + pair::<$t, f16>()
            + pair::<$t, bf16>()
            + pair::<$t, f64>()
            + pair::<$t, i8>()
            + pair::<$t, u8>()
            + pair::<$t, i32>()
            + pair::<$t, i64>()
            + pair::<$t, bool>()
    };
}

#[test]
fn every_a2_dtype_pair_casts_as_the_reference() {
    let _gate = crate::common::shared();
    let n = pairs_from!(f32)
        + pairs_from!(f16)
        + pairs_from!(bf16)
        + pairs_from!(f64)
        + pairs_from!(i8)
        + pairs_from!(u8)
        + pairs_from!(i32)
        + pairs_from!(i64)
        + pairs_from!(bool);
    assert_eq!(n, 81);
}

#[test]
fn the_reference_casts_as_the_vendor_documents() {
    let _gate = crate::common::shared();
    let x = ndarray::arr1(&[2.7f32, -2.7, f32::NAN, 1e10, -1e10, 0.5]);
    let i: ndarray::Array1<i32> = reference::cast(&x);
    assert_eq!(i.to_vec(), [2, -2, 0, i32::MAX, i32::MIN, 0]);
    let b: ndarray::Array1<bool> = reference::cast(&x);
    assert_eq!(b.to_vec(), [true, true, true, true, true, true]);
    let w: ndarray::Array1<u8> = reference::cast(&ndarray::arr1(&[300i64, -1, 255]));
    assert_eq!(w.to_vec(), [44, 255, 255]);
    // 1 + 2^-11 is a tie between two f16 values: to even.
    let h: ndarray::Array1<f16> = reference::cast(&ndarray::arr1(&[1.0f64 + 2f64.powi(-11)]));
    assert_eq!(h[0], f16::ONE);
}

#[test]
fn cast_reads_transposed_and_permuted_views_and_writes_stepped_ones() {
    let _gate = crate::common::shared();
    let st = stream();
    let x = values::<f32>();
    let dx = DeviceTensor::from_array(&st, &x).unwrap();
    // A transposed self into a contiguous out.
    let xt = x.t().to_owned();
    let want: ArrayD<i32> = reference::cast(&xt);
    let mut out = DeviceTensor::<i32>::zeros(&st, xt.shape()).unwrap();
    cast(dx.view().t(), &mut out, &st).unwrap();
    assert!(same(&out.to_array(&st).unwrap(), &want));
    // A permuted 3-D self into every other row of a larger out, the rest untouched.
    let y: ArrayD<f64> = common::array(&[2, 3, 4], 7, -300.0, 300.0);
    let dy = DeviceTensor::from_array(&st, &y).unwrap();
    let yp = y.view().permuted_axes(IxDyn(&[2, 0, 1])).to_owned();
    let want: ArrayD<i8> = reference::cast(&yp);
    let mut big =
        DeviceTensor::<i8>::from_array(&st, &ArrayD::from_elem(IxDyn(&[8, 2, 3]), 5i8)).unwrap();
    cast(
        dy.view().permute(&[2, 0, 1]).unwrap(),
        big.view_mut().slice(0, 0, 8, 2).unwrap(),
        &st,
    )
    .unwrap();
    let got = big.to_array::<IxDyn>(&st).unwrap();
    for r in 0..8 {
        let row = got.index_axis(ndarray::Axis(0), r);
        if r % 2 == 0 {
            assert_eq!(row, want.index_axis(ndarray::Axis(0), r / 2), "row {r}");
        } else {
            assert!(row.iter().all(|&v| v == 5), "row {r} untouched");
        }
    }
    // A stepped self (every other column).
    let dz = DeviceTensor::from_array(&st, &values::<i64>()).unwrap();
    let zs = values::<i64>()
        .into_dimensionality::<ndarray::Ix2>()
        .unwrap()
        .slice_move(ndarray::s![.., ..;2])
        .into_dyn();
    let want: ArrayD<bf16> = reference::cast(&zs);
    let got: DeviceTensor<bf16> = cast_new(dz.view().slice(1, 0, 4, 2).unwrap(), &st).unwrap();
    assert!(same(&got.to_array(&st).unwrap(), &want));
}

#[test]
fn empty_and_0d_casts() {
    let _gate = crate::common::shared();
    let st = stream();
    let e = DeviceTensor::<f32>::zeros(&st, [0, 3]).unwrap();
    let got: DeviceTensor<i64> = cast_new(&e, &st).unwrap();
    assert_eq!(got.shape(), &[0, 3]);
    let s = DeviceTensor::from_array(&st, &ndarray::arr0(-7.9f64)).unwrap();
    let mut out = DeviceTensor::from_array(&st, &ndarray::arr0(0i8)).unwrap();
    cast(&s, &mut out, &st).unwrap();
    assert_eq!(out.to_array(&st).unwrap(), ndarray::arr0(-7i8).into_dyn());
    let b = cast_to(Tensor::from(s), DType::Bool, &st).unwrap();
    assert_eq!(b.to_vec::<bool>(&st).unwrap(), [true]);
}

#[test]
fn cast_and_copy_convert_alike() {
    let _gate = crate::common::shared();
    let st = stream();
    let x = values::<i64>();
    let dx = DeviceTensor::from_array(&st, &x).unwrap();
    let via_cast: DeviceTensor<f16> = cast_new(&dx, &st).unwrap();
    let mut via_copy = DeviceTensor::<f16>::zeros(&st, x.shape()).unwrap();
    copy(&dx, &mut via_copy, &st).unwrap();
    let (a, b) = (
        via_cast.to_array(&st).unwrap(),
        via_copy.to_array(&st).unwrap(),
    );
    assert!(same(&a, &b));
}

#[test]
fn cast_new_into_a_tensor_keeps_the_dtype_and_cast_to_names_it() {
    let _gate = crate::common::shared();
    let st = stream();
    let x = Tensor::from_slice(&st, &[1.5f32, -2.5], 2).unwrap();
    let kept: Tensor = cast_new(&x, &st).unwrap();
    assert_eq!(kept.dtype(), DType::F32);
    let named = cast_to(&x, DType::I32, &st).unwrap();
    assert_eq!(named.to_vec::<i32>(&st).unwrap(), [1, -2]);
}

#[test]
fn cast_errors_are_typed() {
    let _gate = crate::common::shared();
    let st = stream();
    let x = DeviceTensor::<f32>::zeros(&st, [2, 3]).unwrap();
    let mut o = DeviceTensor::<f16>::zeros(&st, [3, 2]).unwrap();
    let e = cast(&x, &mut o, &st).unwrap_err();
    assert!(matches!(e, Error::ShapeMismatch { .. }), "{e}");
    // BF16 only on Atlas A2/A3, on either side.
    let t = common::device(common::A910).stream().unwrap();
    let x = DeviceTensor::<f32>::zeros(&t, [2]).unwrap();
    let e = cast_to(&x, DType::BF16, &t).unwrap_err();
    assert!(matches!(e, Error::UnsupportedDtype { .. }), "{e}");
    let h = DeviceTensor::<bf16>::zeros(&t, [2]).unwrap();
    let e = cast_new::<_, f32, DeviceTensor<f32>>(&h, &t).unwrap_err();
    assert!(matches!(e, Error::UnsupportedDtype { .. }), "{e}");
    assert!(cast_new::<_, f16, DeviceTensor<f16>>(&x, &t).is_ok());
    // Not on the 310B.
    let b = common::device(common::B310).stream().unwrap();
    let x = DeviceTensor::<f32>::zeros(&b, [2]).unwrap();
    let e = cast_to(&x, DType::F16, &b).unwrap_err();
    assert!(matches!(e, Error::UnsupportedOperator { .. }), "{e}");
}

fn ones_of<T: Element>() -> usize {
    let st = stream();
    let mut x =
        DeviceTensor::<T>::from_array(&st, &common::array::<T>(&[3, 4], 1, -9.0, 9.0)).unwrap();
    one_inplace(&mut x, &st).unwrap();
    let one = T::from_f64(1.0);
    assert!(
        x.to_array::<IxDyn>(&st).unwrap().iter().all(|&v| v == one),
        "{}",
        T::DTYPE
    );
    1
}

#[test]
fn one_inplace_writes_one_in_every_element_type() {
    let _gate = crate::common::shared();
    let n = ones_of::<f32>()
        + ones_of::<f16>()
        + ones_of::<bf16>()
        + ones_of::<f64>()
        + ones_of::<i8>()
        + ones_of::<u8>()
        + ones_of::<i32>()
        + ones_of::<i64>()
        + ones_of::<bool>();
    assert_eq!(n, 9);
}

#[test]
fn one_inplace_sets_only_its_views_elements() {
    let _gate = crate::common::shared();
    let st = stream();
    let mut x = DeviceTensor::from_array(&st, &ArrayD::from_elem(IxDyn(&[4, 6]), 7i64)).unwrap();
    // The transpose of every other column.
    one_inplace(x.view_mut().slice(1, 1, 6, 2).unwrap().t(), &st).unwrap();
    let got = x.to_array::<IxDyn>(&st).unwrap();
    for (i, &v) in got.indexed_iter() {
        assert_eq!(v, if i[1] % 2 == 1 { 1 } else { 7 }, "at {i:?}");
    }
    // Empty: nothing; 0-D: its element.
    let mut e = DeviceTensor::<f32>::zeros(&st, [2, 0]).unwrap();
    one_inplace(&mut e, &st).unwrap();
    let mut s = DeviceTensor::from_array(&st, &ndarray::arr0(0.0f32)).unwrap();
    one_inplace(&mut s, &st).unwrap();
    assert_eq!(s.to_array(&st).unwrap(), ndarray::arr0(1.0f32).into_dyn());
    // A plan, launched twice on new contents.
    let mut m = DeviceTensor::<f16>::zeros(&st, [5]).unwrap();
    let mut plan = InplaceOnePlan::new(&m, &st).unwrap();
    for _ in 0..2 {
        plan.launch(&mut m, &st).unwrap();
        assert!(
            m.to_array::<IxDyn>(&st)
                .unwrap()
                .iter()
                .all(|&v| v == f16::ONE)
        );
        copy(DeviceTensor::<f16>::zeros(&st, [5]).unwrap(), &mut m, &st).unwrap();
    }
}

#[test]
fn one_inplace_errors_are_typed() {
    let _gate = crate::common::shared();
    let t = common::device(common::A910).stream().unwrap();
    let mut h = DeviceTensor::<bf16>::zeros(&t, [2]).unwrap();
    let e = one_inplace(&mut h, &t).unwrap_err();
    assert!(matches!(e, Error::UnsupportedDtype { .. }), "{e}");
    let mut f = DeviceTensor::<f64>::zeros(&t, [2]).unwrap();
    one_inplace(&mut f, &t).unwrap();
    assert_eq!(
        f.to_array(&t).unwrap(),
        ndarray::arr1(&[1.0, 1.0]).into_dyn()
    );
    let b = common::device(common::B310).stream().unwrap();
    let mut x = DeviceTensor::<f32>::zeros(&b, [2]).unwrap();
    let e = one_inplace(&mut x, &b).unwrap_err();
    assert!(matches!(e, Error::UnsupportedOperator { .. }), "{e}");
}
