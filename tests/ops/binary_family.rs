//! The binary family on the simulator, every row against the reference: each dtype the
//! crate uploads (f32, f64, f16, bf16, i32, i64, i8, u8, bool) that the vendor lists on
//! Atlas A2, broadcast shapes (empty and 0-D
//! among them), whole, transposed and stepped views, the allocating form, the in-place
//! twin and the plans, judged by the precision standard (exactly for integers).

use crate::common;

use ascendcl::protocol::Scalar;
use ascendcl::{DeviceTensor, Element, Result, Stream, TensorView, TensorViewMut};
use common::held::{Lay, broadcast_shapes, hold, lay};
use common::*;
use half::{bf16, f16};
use ndarray::{ArrayD, IxDyn};
use proptest::prelude::*;

type Call<T> =
    fn(TensorView<'_, T>, TensorView<'_, T>, Scalar, TensorViewMut<'_, T>, &Stream) -> Result<()>;
type New<T> = fn(TensorView<'_, T>, TensorView<'_, T>, Scalar, &Stream) -> Result<DeviceTensor<T>>;
type InPlace<T> = fn(TensorViewMut<'_, T>, TensorView<'_, T>, Scalar, &Stream) -> Result<()>;
type Compare<T> =
    fn(TensorView<'_, T>, TensorView<'_, T>, TensorViewMut<'_, bool>, &Stream) -> Result<()>;
type CompareNew<T> =
    fn(TensorView<'_, T>, TensorView<'_, T>, &Stream) -> Result<DeviceTensor<bool>>;
type Reference<T> = fn(&ArrayD<T>, &ArrayD<T>, Scalar) -> Result<ArrayD<T>>;

/// One row's functions for the element type `T` (out of place, allocating, in place, and
/// through a plan), each taking alpha (ignored by rows without one), and its reference.
struct Row<T: Element> {
    name: &'static str,
    call: Call<T>,
    new: New<T>,
    inplace: Option<InPlace<T>>,
    plan: Call<T>,
    reference: Reference<T>,
}

macro_rules! binary_rows {
    ($(
        $(#[$doc:meta])*
        $rust:ident($name:ident $(, $inplace:ident)?) $inputs:tt [$($quirk:ident)?] { $($facts:tt)* }
    )*) => {
        fn binary_rows<T: Element>() -> Vec<Row<T>> {
            let mut rows = Vec::new();
            $(binary_rows!(@row rows [$($quirk)?] $inputs $rust $name [$($inplace)?]);)*
            rows
        }

        fn comparison_rows<T: Element>() -> Vec<Comparison<T>> {
            let mut rows = Vec::new();
            $(binary_rows!(@comparison rows [$($quirk)?] $rust $name [$($inplace)?]);)*
            rows
        }
    };
    (@comparison $rows:ident [bool_out] $rust:ident $name:ident [$($inplace:ident)?]) => {
        paste::paste! { $rows.push(Comparison {
            name: stringify!($name),
            call: |a, b, out, s| ascendcl::$rust(a, b, out, s),
            new: |a, b, s| ascendcl::[<$rust _new>](a, b, s),
            inplace: binary_rows!(@inplace [] $rust [$($inplace)?]),
            plan: |a, b, mut out, s| {
                let mut plan = ascendcl::[<$name Plan>]::new(&a, &b, &out, s)?;
                plan.launch(&a, &b, &mut out, s)?;
                plan.launch(&a, &b, &mut out, s)
            },
            reference: |a, b| ascendcl::reference::$rust(a.view(), b.view()),
        }) }
    };
    (@comparison $rows:ident [$($quirk:ident)?] $rust:ident $name:ident [$($inplace:ident)?]) => {};
    (@row $rows:ident [bool_out] $($rest:tt)*) => {};
    (@row $rows:ident [$($quirk:ident)?] [$other:literal] $rust:ident $name:ident [$($inplace:ident)?]) => {
        paste::paste! { $rows.push(Row {
            name: stringify!($name),
            call: |a, b, _, out, s| ascendcl::$rust(a, b, out, s),
            new: |a, b, _, s| ascendcl::[<$rust _new>](a, b, s),
            inplace: binary_rows!(@inplace [] $rust [$($inplace)?]),
            plan: |a, b, _, mut out, s| {
                let mut plan = ascendcl::[<$name Plan>]::new(&a, &b, &out, s)?;
                plan.launch(&a, &b, &mut out, s)?;
                plan.launch(&a, &b, &mut out, s)
            },
            reference: |a, b, _| ascendcl::reference::$rust(a.view(), b.view()),
        }) }
    };
    (@row $rows:ident [$($quirk:ident)?] [$other:literal, alpha] $rust:ident $name:ident [$($inplace:ident)?]) => {
        paste::paste! { $rows.push(Row {
            name: stringify!($name),
            call: |a, b, alpha, out, s| ascendcl::$rust(a, b, alpha, out, s),
            new: |a, b, alpha, s| ascendcl::[<$rust _new>](a, b, alpha, s),
            inplace: binary_rows!(@inplace [alpha] $rust [$($inplace)?]),
            plan: |a, b, alpha, mut out, s| {
                let mut plan = ascendcl::[<$name Plan>]::new(&a, &b, alpha, &out, s)?;
                plan.launch(&a, &b, &mut out, s)?;
                plan.launch(&a, &b, &mut out, s)
            },
            reference: |a, b, alpha| ascendcl::reference::$rust(a.view(), b.view(), alpha),
        }) }
    };
    (@inplace $alpha:tt $rust:ident []) => { None };
    (@inplace [] $rust:ident [$inplace:ident]) => {
        paste::paste! { Some(|a, b, _, s| ascendcl::[<$rust _inplace>](a, b, s)) }
    };
    (@inplace [alpha] $rust:ident [$inplace:ident]) => {
        paste::paste! { Some(|a, b, alpha, s| ascendcl::[<$rust _inplace>](a, b, alpha, s)) }
    };
}

/// One comparison or logical row's functions for inputs of `T` (BOOL results), and its
/// reference.
struct Comparison<T: Element> {
    name: &'static str,
    call: Compare<T>,
    new: CompareNew<T>,
    inplace: Option<InPlace<T>>,
    plan: Compare<T>,
    reference: fn(&ArrayD<T>, &ArrayD<T>) -> Result<ArrayD<bool>>,
}

ascend_ops::binary_family!(binary_rows);

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 10,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// Whether `T` is an integer type or BOOL.
fn integral<T: Element>() -> bool {
    T::from_f64(0.5).to_f64() != 0.5
}

/// Whether `T` has no negative values.
fn unsigned<T: Element>() -> bool {
    T::from_f64(-1.0).to_f64() >= 0.0
}

/// The row's inputs moved into its domain: divisors away from 0, powers of a positive
/// float base or to a non-negative integer exponent, and unsigned minuends large enough
/// that the difference stays unsigned.
fn domain<T: Element>(name: &str, (x, y): (f64, f64)) -> (f64, f64) {
    let (x, y) = if integral::<T>() {
        (x.round(), y.round())
    } else {
        (x, y)
    };
    let x = if unsigned::<T>() { x.abs() } else { x };
    let y = if unsigned::<T>() { y.abs() } else { y };
    match name {
        "Div" if integral::<T>() => (x, if y == 0.0 { 1.0 } else { y }),
        "Div" => (x, y.signum() * (y.abs() + 0.5)),
        "PowTensorTensor" if integral::<T>() => (x, y.abs()),
        "PowTensorTensor" => (x.abs() + 0.5, y),
        "Sub" if unsigned::<T>() => (x + 10.0, y),
        _ => (x, y),
    }
}

#[allow(clippy::too_many_arguments)]
fn check<T: Element>(
    s: &Stream,
    f: &Row<T>,
    (sa, sb, so): (&[usize], &[usize], &[usize]),
    values: &[(f64, f64)],
    alpha: i64,
    (la, lb): (Lay, Lay),
) -> std::result::Result<(), TestCaseError> {
    let pick = |shape: &[usize], k: usize| -> ArrayD<T> {
        let n = shape.iter().product::<usize>();
        let v = (0..n)
            .map(|i| {
                let (x, y) = domain::<T>(f.name, values[i % values.len()]);
                T::from_f64(if k == 0 { x } else { y })
            })
            .collect();
        ArrayD::from_shape_vec(IxDyn(shape), v).unwrap()
    };
    let (a, b) = (pick(sa, 0), pick(sb, 1));
    let alpha = if T::DTYPE == ascendcl::DType::Bool {
        // The device casts alpha to the BOOL promote: only 0 and 1 mean the same there.
        Scalar::from(alpha.abs().min(1))
    } else if integral::<T>() {
        Scalar::from(if unsigned::<T>() { alpha.abs() } else { alpha })
    } else {
        Scalar::from(alpha as f64 * 0.75)
    };
    let want = (f.reference)(&a, &b, alpha).unwrap();
    let t = ascendcl::precision::threshold(T::DTYPE);
    let judge = |got: &ArrayD<T>, what: &str| -> std::result::Result<(), TestCaseError> {
        let (mere, mare) = mere_mare(got, &want);
        prop_assert!(
            mere < t && mare < 10.0 * t || t == 0.0 && *got == want,
            "{} {what} of {:?} {sa:?}·{sb:?} {la:?}/{lb:?}: MERE {mere:e} MARE {mare:e}\n{got:?}\n{want:?}",
            f.name,
            T::DTYPE
        );
        Ok(())
    };
    let (ha, hb) = (hold(s, &a, la), hold(s, &b, lb));
    let zeros = ArrayD::from_elem(IxDyn(so), T::from_f64(0.0));
    let mut out = hold(s, &zeros, la);
    (f.call)(ha.view(), hb.view(), alpha, out.view_mut(), s).unwrap();
    judge(&out.get(s), "out of place")?;
    let new = (f.new)(ha.view(), hb.view(), alpha, s).unwrap();
    judge(&new.to_array(s).unwrap(), "allocated")?;
    let mut planned = hold(s, &zeros, lb);
    (f.plan)(ha.view(), hb.view(), alpha, planned.view_mut(), s).unwrap();
    judge(&planned.get(s), "planned")?;
    if let (Some(inplace), true) = (f.inplace, sa == so) {
        let mut ha = ha;
        inplace(ha.view_mut(), hb.view(), alpha, s).unwrap();
        judge(&ha.get(s), "in place")?;
    }
    Ok(())
}

fn every_row<T: Element>(cases: &std::cell::Cell<usize>) {
    let s = device(0).stream().unwrap();
    for f in binary_rows::<T>() {
        let row = ascend_ops::binary::row(f.name).unwrap();
        let dtype = T::DTYPE.acl();
        let both_bool = dtype == ascend_sys::ACL_BOOL
            && row.checks.contains(&ascend_ops::binary::Check::NotBothBool);
        if !row.dtypes.allows(ascend_ops::Product::AtlasA2, dtype)
            || row.default_out_dtype(dtype) != dtype
            || both_bool
        {
            continue;
        }
        let values = prop::collection::vec((-3.0f64..3.0, -3.0f64..3.0), 1..8);
        let mut runner = proptest::test_runner::TestRunner::new(config());
        runner
            .run(
                &(broadcast_shapes(3), values, -2i64..=2, lay(), lay()),
                |((sa, sb, so), values, alpha, la, lb)| {
                    cases.set(cases.get() + 1);
                    check(&s, &f, (&sa, &sb, &so), &values, alpha, (la, lb))
                },
            )
            .unwrap();
    }
}

#[test]
fn every_binary_row_matches_the_reference_in_every_listed_dtype() {
    let _gate = crate::common::shared();
    let cases = std::cell::Cell::new(0);
    every_row::<f32>(&cases);
    every_row::<f64>(&cases);
    every_row::<f16>(&cases);
    every_row::<bf16>(&cases);
    every_row::<i32>(&cases);
    every_row::<i64>(&cases);
    every_row::<i8>(&cases);
    every_row::<u8>(&cases);
    every_row::<bool>(&cases);
    let cases = cases.get();
    println!("{cases} binary cases");
    assert!(cases > 250, "{cases} cases");
}

/// A comparison of `T` inputs against the reference: exactly, into BOOL out of place,
/// allocated and planned, and in place into `T` (true as 1).
fn check_comparison<T: Element>(
    s: &Stream,
    f: &Comparison<T>,
    (sa, sb, so): (&[usize], &[usize], &[usize]),
    values: &[(f64, f64)],
    (la, lb): (Lay, Lay),
) -> std::result::Result<(), TestCaseError> {
    // Few distinct values, so that equal pairs occur.
    let pick = |shape: &[usize], k: usize| -> ArrayD<T> {
        let n = shape.iter().product::<usize>();
        let v = (0..n)
            .map(|i| {
                let (x, y) = values[i % values.len()];
                T::from_f64((if k == 0 { x } else { y }).round().abs())
            })
            .collect();
        ArrayD::from_shape_vec(IxDyn(shape), v).unwrap()
    };
    let (a, b) = (pick(sa, 0), pick(sb, 1));
    let want = (f.reference)(&a, &b).unwrap();
    let what = |w: &str| {
        format!(
            "{} {w} of {:?} {sa:?}·{sb:?} {la:?}/{lb:?}",
            f.name,
            T::DTYPE
        )
    };
    let (ha, hb) = (hold(s, &a, la), hold(s, &b, lb));
    let falses = ArrayD::from_elem(IxDyn(so), false);
    let mut out = hold(s, &falses, la);
    (f.call)(ha.view(), hb.view(), out.view_mut(), s).unwrap();
    prop_assert_eq!(&out.get(s), &want, "{}", what("out of place"));
    let new = (f.new)(ha.view(), hb.view(), s).unwrap();
    prop_assert_eq!(&new.to_array(s).unwrap(), &want, "{}", what("allocated"));
    let mut planned = hold(s, &falses, lb);
    (f.plan)(ha.view(), hb.view(), planned.view_mut(), s).unwrap();
    prop_assert_eq!(&planned.get(s), &want, "{}", what("planned"));
    if let (Some(inplace), true) = (f.inplace, sa == so) {
        let mut ha = ha;
        inplace(ha.view_mut(), hb.view(), Scalar::from(1), s).unwrap();
        let want = want.mapv(|v| T::from_f64(f64::from(u8::from(v))));
        prop_assert_eq!(&ha.get(s), &want, "{}", what("in place"));
    }
    Ok(())
}

fn every_comparison<T: Element>(cases: &std::cell::Cell<usize>) {
    let s = device(0).stream().unwrap();
    for f in comparison_rows::<T>() {
        let row = ascend_ops::binary::row(f.name).unwrap();
        let dtype = T::DTYPE.acl();
        let product = ascend_ops::Product::AtlasA2;
        let accepted = row.dtypes.allows(product, dtype)
            || row.checks.contains(&ascend_ops::binary::Check::PromoteIn)
                && row
                    .dtypes
                    .allows(product, row.compute_dtype(product, dtype, dtype, dtype));
        if !accepted {
            continue;
        }
        let values = prop::collection::vec((-3.0f64..3.0, -3.0f64..3.0), 1..8);
        let mut runner = proptest::test_runner::TestRunner::new(config());
        runner
            .run(
                &(broadcast_shapes(3), values, lay(), lay()),
                |((sa, sb, so), values, la, lb)| {
                    cases.set(cases.get() + 1);
                    check_comparison(&s, &f, (&sa, &sb, &so), &values, (la, lb))
                },
            )
            .unwrap();
    }
}

#[test]
fn every_comparison_and_logical_row_matches_the_reference_in_every_listed_dtype() {
    let _gate = crate::common::shared();
    let cases = std::cell::Cell::new(0);
    every_comparison::<f32>(&cases);
    every_comparison::<f64>(&cases);
    every_comparison::<f16>(&cases);
    every_comparison::<bf16>(&cases);
    every_comparison::<i32>(&cases);
    every_comparison::<i64>(&cases);
    every_comparison::<i8>(&cases);
    every_comparison::<u8>(&cases);
    every_comparison::<bool>(&cases);
    let cases = cases.get();
    println!("{cases} comparison cases");
    assert!(cases > 300, "{cases} cases");
}

#[test]
fn integer_division_divides_as_float_and_truncates_into_an_integer_out() {
    let _gate = crate::common::shared();
    let s = device(0).stream().unwrap();
    let a = DeviceTensor::from_array(&s, &ndarray::array![7i32, -7, 9]).unwrap();
    let b = DeviceTensor::from_array(&s, &ndarray::array![2i32, 2, -4]).unwrap();
    let q: DeviceTensor<i32> = ascendcl::div_new(&a, &b, &s).unwrap();
    assert_eq!(
        q.to_array::<ndarray::Ix1>(&s).unwrap(),
        ndarray::array![3, -3, -2]
    );
    let a = DeviceTensor::from_array(&s, &ndarray::array![7i8, -7, 9]).unwrap();
    let b = DeviceTensor::from_array(&s, &ndarray::array![2i8, 2, -4]).unwrap();
    let mut f = DeviceTensor::<f32>::zeros(&s, [3]).unwrap();
    ascendcl::div(&a, &b, &mut f, &s).unwrap();
    assert_eq!(
        f.to_array::<ndarray::Ix1>(&s).unwrap(),
        ndarray::array![3.5f32, -3.5, -2.25]
    );
    let mut x = DeviceTensor::from_array(&s, &ndarray::array![2.0f32, 3.0]).unwrap();
    let e = DeviceTensor::from_array(&s, &ndarray::array![10.0f32]).unwrap();
    ascendcl::pow_tensor_tensor_inplace(&mut x, &e, &s).unwrap();
    assert_eq!(
        x.to_array::<ndarray::Ix1>(&s).unwrap(),
        ndarray::array![1024.0f32, 59049.0]
    );
}
