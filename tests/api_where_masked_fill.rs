//! `s_where` (aclnnSWhere) and `masked_fill_scalar_inplace` (aclnnInplaceMaskedFillScalar)
//! on the simulator against `reference::{s_where, masked_fill_scalar}`: every element type
//! the crate shares with the vendors' Atlas A2 lists, BOOL and UINT8 conditions, three-way
//! broadcast (fewer dims, size-1 dims), whole, transposed and stepped views, empty and
//! 0-D tensors, promotion of self and other and the cast to out, the allocating form (its
//! run-time dtype the promote of self and other) and the plans, typed errors.

mod common;

use ascendcl::reference as r;
use ascendcl::{
    DType, DeviceTensor, Element, Error, InplaceMaskedFillScalarPlan, SWherePlan, Stream, Tensor,
    masked_fill_scalar_inplace, s_where, s_where_new,
};
use common::held::{Lay, hold, lay, shapes_broadcasting_to};
use half::{bf16, f16};
use ndarray::{ArrayD, IxDyn, array};
use proptest::prelude::*;
use std::cell::Cell;

fn stream() -> Stream {
    common::device(common::A2).stream().unwrap()
}

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 12,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// An array of `shape` of `T` from small integers (exact in every type), varied by `salt`.
fn data<T: Element>(shape: &[usize], salt: usize) -> ArrayD<T> {
    let n: usize = shape.iter().product();
    let v = (0..n)
        .map(|k| T::from_f64(((k * 5 + salt) % 7) as f64 - 3.0))
        .collect();
    ArrayD::from_shape_vec(IxDyn(shape), v).unwrap()
}

/// A condition of `shape` from `bits` (repeated): BOOL, or UINT8 with nonzero values
/// other than 1 among the true ones.
fn flags<C: Element>(shape: &[usize], bits: &[bool]) -> ArrayD<C> {
    let n: usize = shape.iter().product();
    let v = (0..n)
        .map(|k| {
            C::from_f64(if bits[k % bits.len()] {
                1.0 + (k % 3) as f64
            } else {
                0.0
            })
        })
        .collect();
    ArrayD::from_shape_vec(IxDyn(shape), v).unwrap()
}

/// A shape of up to `max_dims` dims of sizes 0..=3 (0 rarely) and three shapes that
/// broadcast to it (leading dims dropped, dims replaced by 1), with their broadcast.
fn three_shapes(max_dims: usize) -> impl Strategy<Value = [Vec<usize>; 4]> {
    shapes_broadcasting_to(max_dims).prop_map(|(_, [c, a, b])| {
        let o = ascendcl::shape::broadcast(&[("c", &c), ("a", &a), ("b", &b)])
            .unwrap()
            .to_vec();
        [c, a, b, o]
    })
}

/// One SWhere case: condition `C`, self and other `T`, out `T`, in the given layouts,
/// out of place, allocated and planned, each equal to the reference.
fn where_case<C: Element, T: Element + PartialEq + std::fmt::Debug>(
    s: &Stream,
    [sc, sa, sb, so]: &[Vec<usize>; 4],
    bits: &[bool],
    salt: usize,
    lays: [Lay; 4],
) -> Result<(), TestCaseError> {
    let (c, a, b) = (
        flags::<C>(sc, bits),
        data::<T>(sa, salt),
        data::<T>(sb, salt + 3),
    );
    let want = r::s_where(c.view(), a.view(), b.view()).unwrap();
    let (hc, ha, hb) = (
        hold(s, &c, lays[0]),
        hold(s, &a, lays[1]),
        hold(s, &b, lays[2]),
    );
    let zeros = ArrayD::from_elem(IxDyn(so), T::from_f64(0.0));
    let mut out = hold(s, &zeros, lays[3]);
    s_where(hc.view(), ha.view(), hb.view(), out.view_mut(), s).unwrap();
    let what = format!(
        "{:?}/{:?} {sc:?} {sa:?} {sb:?} {lays:?}",
        C::DTYPE,
        T::DTYPE
    );
    prop_assert_eq!(&out.get(s), &want, "out of place {}", what);
    let new: DeviceTensor<T> = s_where_new(hc.view(), ha.view(), hb.view(), s).unwrap();
    prop_assert_eq!(&new.to_array(s).unwrap(), &want, "allocated {}", what);
    let mut planned = hold(s, &zeros, lays[0]);
    let mut plan = SWherePlan::new(hc.view(), ha.view(), hb.view(), planned.view(), s).unwrap();
    plan.launch(hc.view(), ha.view(), hb.view(), planned.view_mut(), s)
        .unwrap();
    prop_assert_eq!(&planned.get(s), &want, "planned {}", what);
    Ok(())
}

fn where_property<T: Element + PartialEq + std::fmt::Debug>(cases: &Cell<usize>) {
    let s = stream();
    let mut runner = proptest::test_runner::TestRunner::new(config());
    let strategy = (
        three_shapes(4),
        prop::collection::vec(any::<bool>(), 1..6),
        0usize..7,
        [lay(), lay(), lay(), lay()],
        any::<bool>(),
    );
    runner
        .run(&strategy, |(shapes, bits, salt, lays, byte)| {
            cases.set(cases.get() + 1);
            if byte {
                where_case::<u8, T>(&s, &shapes, &bits, salt, lays)
            } else {
                where_case::<bool, T>(&s, &shapes, &bits, salt, lays)
            }
        })
        .unwrap();
}

#[test]
fn s_where_matches_the_reference_in_every_listed_dtype_layout_and_broadcast() {
    let cases = Cell::new(0);
    where_property::<f32>(&cases);
    where_property::<f64>(&cases);
    where_property::<f16>(&cases);
    where_property::<bf16>(&cases);
    where_property::<i32>(&cases);
    where_property::<i64>(&cases);
    where_property::<i8>(&cases);
    where_property::<u8>(&cases);
    where_property::<bool>(&cases);
    println!("{} s_where cases", cases.get());
    assert_eq!(cases.get(), 9 * 12);
}

/// SWhere of `a` and `b` of different types into an `O` out against the reference: both
/// converted to their promote `P` (exactly), selected, cast to `O`.
fn promoted<A: Element, B: Element, P: Element, O: Element + PartialEq + std::fmt::Debug>(
    s: &Stream,
) {
    let c = flags::<bool>(&[2, 1, 3], &[true, false, false, true]);
    let (a, b) = (data::<A>(&[4, 1], 1), data::<B>(&[3], 2));
    let to_p = |v: f64| P::from_f64(v);
    let want = r::s_where(
        c.view(),
        a.mapv(|v| to_p(v.to_f64())).view(),
        b.mapv(|v| to_p(v.to_f64())).view(),
    )
    .unwrap()
    .mapv(|v| O::from_f64(v.to_f64()));
    let dc = DeviceTensor::from_array(s, &c).unwrap();
    let (da, db) = (
        DeviceTensor::from_array(s, &a).unwrap(),
        DeviceTensor::from_array(s, &b).unwrap(),
    );
    let mut out = DeviceTensor::<O>::zeros(s, [2, 4, 3]).unwrap();
    s_where(&dc, &da, &db, &mut out, s).unwrap();
    assert_eq!(
        out.to_array::<IxDyn>(s).unwrap(),
        want,
        "{:?} {:?} into {:?}",
        A::DTYPE,
        B::DTYPE,
        O::DTYPE
    );
}

#[test]
fn s_where_selects_in_the_promote_of_self_and_other_and_casts_to_out() {
    let s = stream();
    promoted::<i8, i64, i64, i64>(&s);
    promoted::<bool, f32, f32, f32>(&s);
    promoted::<f16, bf16, f32, f32>(&s);
    promoted::<u8, i32, i32, f64>(&s);
    promoted::<i32, f16, f16, f16>(&s);
    promoted::<f64, f32, f64, f16>(&s);
    // The library computes INT8 with UINT8 in INT16, which this crate has no type for:
    // every value fits i32.
    promoted::<i8, u8, i32, f32>(&s);
    // A floating selection into an integer out truncates; the library checks no cast.
    let c = DeviceTensor::from_array(&s, &array![true, false]).unwrap();
    let x = DeviceTensor::from_array(&s, &array![2.75f64, 9.0]).unwrap();
    let y = DeviceTensor::from_array(&s, &array![0.0f32, -3.5]).unwrap();
    let mut out = DeviceTensor::<i8>::zeros(&s, [2]).unwrap();
    s_where(&c, &x, &y, &mut out, &s).unwrap();
    assert_eq!(out.to_array(&s).unwrap(), array![2i8, -3].into_dyn());
    // i64 values beyond 2^53 are selected bit for bit.
    let big = DeviceTensor::from_array(&s, &array![i64::MAX, i64::MIN + 1]).unwrap();
    let mut wide = DeviceTensor::<i64>::zeros(&s, [2]).unwrap();
    let odd = DeviceTensor::from_array(&s, &array![(1i64 << 53) + 1, -(1i64 << 60) - 1]).unwrap();
    s_where(&c, &big, &odd, &mut wide, &s).unwrap();
    assert_eq!(
        wide.to_array(&s).unwrap(),
        array![i64::MAX, -(1i64 << 60) - 1].into_dyn()
    );
}

#[test]
fn a_run_time_dtype_result_takes_the_promote_of_self_and_other() {
    let s = stream();
    let byte = DeviceTensor::from_array(&s, &array![3u8, 0]).unwrap();
    let t = DeviceTensor::from_array(&s, &array![true, true]).unwrap();
    let f = DeviceTensor::from_array(&s, &array![false, false]).unwrap();
    // A UINT8 condition with BOOL inputs: BOOL, not the UINT8 all three would promote to.
    let got: Tensor = s_where_new(&byte, &t, &f, &s).unwrap();
    assert_eq!(got.dtype(), DType::Bool);
    assert_eq!(got.to_vec::<bool>(&s).unwrap(), [true, false]);
    // INT8 inputs under a UINT8 condition: INT8 (UINT8 with INT8 has no type here).
    let i = DeviceTensor::from_array(&s, &array![-4i8, 5]).unwrap();
    let j = DeviceTensor::from_array(&s, &array![6i8, -7]).unwrap();
    let got: Tensor = s_where_new(&byte, &i, &j, &s).unwrap();
    assert_eq!(got.dtype(), DType::I8);
    assert_eq!(got.to_vec::<i8>(&s).unwrap(), [-4, -7]);
    let h = DeviceTensor::from_array(&s, &array![f16::from_f32(0.5), f16::ONE]).unwrap();
    let got: Tensor = s_where_new(&t, &i, &h, &s).unwrap();
    assert_eq!(got.dtype(), DType::F16);
    // Self and other that promote to INT16 need a named result type.
    let u = DeviceTensor::from_array(&s, &array![1u8, 2]).unwrap();
    let e = s_where_new::<_, _, _, _, Tensor>(&t, &i, &u, &s).unwrap_err();
    assert!(matches!(e, Error::InvalidArgument(_)), "{e}");
    let named: DeviceTensor<f32> = s_where_new(&f, &i, &u, &s).unwrap();
    assert_eq!(named.to_array(&s).unwrap(), array![1.0f32, 2.0].into_dyn());
}

#[test]
fn s_where_on_empty_and_zero_d_tensors() {
    let s = stream();
    let c0 = DeviceTensor::from_array(&s, &ndarray::arr0(false)).unwrap();
    let x0 = DeviceTensor::from_array(&s, &ndarray::arr0(1.5f32)).unwrap();
    let y0 = DeviceTensor::from_array(&s, &ndarray::arr0(-2.0f32)).unwrap();
    let z: DeviceTensor<f32> = s_where_new(&c0, &x0, &y0, &s).unwrap();
    assert_eq!(z.shape(), &[] as &[usize]);
    assert_eq!(z.to_array(&s).unwrap(), ndarray::arr0(-2.0f32).into_dyn());
    // A 0-D condition over [2, 3] inputs; an empty condition broadcasting [3] to [0, 3].
    let x = DeviceTensor::from_array(&s, &data::<f32>(&[2, 3], 0)).unwrap();
    let full: DeviceTensor<f32> = s_where_new(&c0, &x, &y0, &s).unwrap();
    assert_eq!(
        full.to_array(&s).unwrap(),
        ArrayD::from_elem(IxDyn(&[2, 3]), -2.0f32)
    );
    let ce = DeviceTensor::<bool>::zeros(&s, [0, 1]).unwrap();
    let row = DeviceTensor::from_array(&s, &array![1.0f32, 2.0, 3.0]).unwrap();
    let empty: DeviceTensor<f32> = s_where_new(&ce, &row, &y0, &s).unwrap();
    assert_eq!(empty.shape(), &[0, 3]);
}

#[test]
fn s_where_errors_are_typed() {
    let s = stream();
    let c = DeviceTensor::from_array(&s, &array![true, false, true]).unwrap();
    let x = DeviceTensor::from_array(&s, &array![1.0f32, 2.0, 3.0]).unwrap();
    let mut out = DeviceTensor::<f32>::zeros(&s, [3]).unwrap();
    let fc = DeviceTensor::from_array(&s, &array![1.0f32, 0.0, 1.0]).unwrap();
    let e = s_where(&fc, &x, &x, &mut out, &s).unwrap_err();
    assert!(matches!(e, Error::UnsupportedDtype { .. }), "{e}");
    let ic = DeviceTensor::from_array(&s, &array![1i8, 0, 1]).unwrap();
    let e = s_where(&ic, &x, &x, &mut out, &s).unwrap_err();
    assert!(matches!(e, Error::UnsupportedDtype { .. }), "{e}");
    let four = DeviceTensor::<f32>::zeros(&s, [4]).unwrap();
    let e = s_where(&c, &x, &four, &mut out, &s).unwrap_err();
    assert!(matches!(e, Error::NotBroadcastable { .. }), "{e}");
    let c4 = DeviceTensor::<bool>::zeros(&s, [4]).unwrap();
    let e = s_where(&c4, &x, &x, &mut out, &s).unwrap_err();
    assert!(matches!(e, Error::NotBroadcastable { .. }), "{e}");
    let mut wrong = DeviceTensor::<f32>::zeros(&s, [2, 3]).unwrap();
    let e = s_where(&c, &x, &x, &mut wrong, &s).unwrap_err();
    assert!(matches!(e, Error::ShapeMismatch { .. }), "{e}");
    // BF16 off Atlas A2/A3; no operator on the 310B.
    let s910 = common::device(common::A910).stream().unwrap();
    let cb = DeviceTensor::from_array(&s910, &array![true]).unwrap();
    let b = DeviceTensor::from_array(&s910, &array![bf16::ONE]).unwrap();
    let e = s_where_new::<_, _, _, _, DeviceTensor<bf16>>(&cb, &b, &b, &s910).unwrap_err();
    assert!(matches!(e, Error::UnsupportedDtype { .. }), "{e}");
    let f = DeviceTensor::from_array(&s910, &array![1.0f32]).unwrap();
    let ok: DeviceTensor<f32> = s_where_new(&cb, &f, &f, &s910).unwrap();
    assert_eq!(ok.to_array(&s910).unwrap(), array![1.0f32].into_dyn());
    let s310 = common::device(common::B310).stream().unwrap();
    let c3 = DeviceTensor::from_array(&s310, &array![true]).unwrap();
    let f3 = DeviceTensor::from_array(&s310, &array![1.0f32]).unwrap();
    let e = s_where_new::<_, _, _, _, DeviceTensor<f32>>(&c3, &f3, &f3, &s310).unwrap_err();
    assert!(matches!(e, Error::UnsupportedOperator { .. }), "{e}");
}

/// One masked fill: selfRef `T` of `shape` in layout `lx`, a BOOL mask of `mshape` in
/// layout `lm`, in place and through a plan, each equal to the reference.
fn fill_case<T: Element + PartialEq + std::fmt::Debug>(
    s: &Stream,
    (shape, mshape): (&[usize], &[usize]),
    bits: &[bool],
    value: f64,
    (lx, lm): (Lay, Lay),
) -> Result<(), TestCaseError> {
    let (x, m) = (data::<T>(shape, 2), flags::<bool>(mshape, bits));
    let want = r::masked_fill_scalar(x.view(), m.view(), value).unwrap();
    let hm = hold(s, &m, lm);
    let mut hx = hold(s, &x, lx);
    masked_fill_scalar_inplace(hx.view_mut(), hm.view(), value, s).unwrap();
    let what = format!("{:?} {shape:?} {mshape:?} {value} {lx:?}/{lm:?}", T::DTYPE);
    prop_assert_eq!(&hx.get(s), &want, "in place {}", what);
    let mut hp = hold(s, &x, lm);
    let mut plan = InplaceMaskedFillScalarPlan::new(hp.view(), hm.view(), value, s).unwrap();
    plan.launch(hp.view_mut(), hm.view(), s).unwrap();
    prop_assert_eq!(&hp.get(s), &want, "planned {}", what);
    Ok(())
}

fn fill_property<T: Element + PartialEq + std::fmt::Debug>(cases: &Cell<usize>) {
    let s = stream();
    let mut runner = proptest::test_runner::TestRunner::new(config());
    // selfRef's shape is the broadcast: the mask is one of the shapes that broadcast to it.
    let strategy = (
        three_shapes(4),
        prop::collection::vec(any::<bool>(), 1..6),
        prop_oneof![Just(0.0), Just(1.0), Just(-2.75), Just(5.5), Just(100.0)],
        lay(),
        lay(),
    );
    runner
        .run(&strategy, |([m, _, _, x], bits, value, lx, lm)| {
            cases.set(cases.get() + 1);
            fill_case::<T>(&s, (&x, &m), &bits, value, (lx, lm))
        })
        .unwrap();
}

#[test]
fn masked_fill_matches_the_reference_in_every_listed_dtype_layout_and_broadcast() {
    let cases = Cell::new(0);
    fill_property::<f32>(&cases);
    fill_property::<f16>(&cases);
    fill_property::<bf16>(&cases);
    fill_property::<i32>(&cases);
    fill_property::<i64>(&cases);
    fill_property::<i8>(&cases);
    fill_property::<bool>(&cases);
    println!("{} masked fill cases", cases.get());
    assert_eq!(cases.get(), 7 * 12);
}

#[test]
fn masked_fill_converts_the_value_and_keeps_a_plans_value() {
    let s = stream();
    let mut x = DeviceTensor::from_array(&s, &array![[1i32, 2, 3], [4, 5, 6]]).unwrap();
    let m = DeviceTensor::from_array(&s, &array![[true], [false]]).unwrap();
    // 8.88888 truncates toward zero; -7.9 to -7.
    masked_fill_scalar_inplace(&mut x, &m, 8.88888f32, &s).unwrap();
    assert_eq!(
        x.to_array(&s).unwrap(),
        array![[8, 8, 8], [4, 5, 6]].into_dyn()
    );
    let mut plan = InplaceMaskedFillScalarPlan::new(&x, &m, -7.9, &s).unwrap();
    let mut y = DeviceTensor::from_array(&s, &array![[0i32, 0, 0], [0, 0, 0]]).unwrap();
    plan.launch(&mut y, &m, &s).unwrap();
    plan.launch(&mut x, &m, &s).unwrap();
    assert_eq!(
        y.to_array(&s).unwrap(),
        array![[-7, -7, -7], [0, 0, 0]].into_dyn()
    );
    assert_eq!(
        x.to_array(&s).unwrap(),
        array![[-7, -7, -7], [4, 5, 6]].into_dyn()
    );
    // A BOOL selfRef with an integer value; a 0-D selfRef and mask; an empty one.
    let mut b = DeviceTensor::from_array(&s, &array![true, false, true]).unwrap();
    let mb = DeviceTensor::from_array(&s, &array![true, true, false]).unwrap();
    masked_fill_scalar_inplace(&mut b, &mb, 0, &s).unwrap();
    assert_eq!(
        b.to_array(&s).unwrap(),
        array![false, false, true].into_dyn()
    );
    masked_fill_scalar_inplace(&mut b, &mb, true, &s).unwrap();
    assert_eq!(b.to_array(&s).unwrap(), array![true, true, true].into_dyn());
    let mut z = DeviceTensor::from_array(&s, &ndarray::arr0(1.0f32)).unwrap();
    let mz = DeviceTensor::from_array(&s, &ndarray::arr0(true)).unwrap();
    masked_fill_scalar_inplace(&mut z, &mz, 2.5, &s).unwrap();
    assert_eq!(z.to_array(&s).unwrap(), ndarray::arr0(2.5f32).into_dyn());
    let mut e = DeviceTensor::<f32>::zeros(&s, [0, 3]).unwrap();
    let me = DeviceTensor::<bool>::zeros(&s, [3]).unwrap();
    masked_fill_scalar_inplace(&mut e, &me, 1.0, &s).unwrap();
    assert_eq!(e.shape(), &[0, 3]);
}

#[test]
fn masked_fill_errors_are_typed() {
    let s = stream();
    let mut x = DeviceTensor::from_array(&s, &array![1.0f32, 2.0, 3.0]).unwrap();
    let m = DeviceTensor::from_array(&s, &array![true, false, true]).unwrap();
    let byte = DeviceTensor::from_array(&s, &array![1u8, 0, 1]).unwrap();
    let e = masked_fill_scalar_inplace(&mut x, &byte, 1.0, &s).unwrap_err();
    assert!(matches!(e, Error::UnsupportedDtype { .. }), "{e}");
    let mut d = DeviceTensor::from_array(&s, &array![1.0f64, 2.0, 3.0]).unwrap();
    let e = masked_fill_scalar_inplace(&mut d, &m, 1.0, &s).unwrap_err();
    assert!(matches!(e, Error::UnsupportedDtype { .. }), "{e}");
    let mut u = DeviceTensor::from_array(&s, &array![1u8, 2, 3]).unwrap();
    let e = masked_fill_scalar_inplace(&mut u, &m, 1.0, &s).unwrap_err();
    assert!(matches!(e, Error::UnsupportedDtype { .. }), "{e}");
    // A mask that would grow selfRef, and one that does not broadcast.
    let wide = DeviceTensor::<bool>::zeros(&s, [2, 3]).unwrap();
    let e = masked_fill_scalar_inplace(&mut x, &wide, 1.0, &s).unwrap_err();
    assert!(matches!(e, Error::ShapeMismatch { .. }), "{e}");
    let four = DeviceTensor::<bool>::zeros(&s, [4]).unwrap();
    let e = masked_fill_scalar_inplace(&mut x, &four, 1.0, &s).unwrap_err();
    assert!(matches!(e, Error::NotBroadcastable { .. }), "{e}");
    let s910 = common::device(common::A910).stream().unwrap();
    let mut b = DeviceTensor::from_array(&s910, &array![bf16::ONE]).unwrap();
    let mb = DeviceTensor::from_array(&s910, &array![true]).unwrap();
    let e = masked_fill_scalar_inplace(&mut b, &mb, 1.0, &s910).unwrap_err();
    assert!(matches!(e, Error::UnsupportedDtype { .. }), "{e}");
    let s310 = common::device(common::B310).stream().unwrap();
    let mut f = DeviceTensor::from_array(&s310, &array![1.0f32]).unwrap();
    let mf = DeviceTensor::from_array(&s310, &array![true]).unwrap();
    let e = masked_fill_scalar_inplace(&mut f, &mf, 1.0, &s310).unwrap_err();
    assert!(matches!(e, Error::UnsupportedOperator { .. }), "{e}");
}
