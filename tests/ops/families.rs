//! The operator families on the simulator, every row against the reference: each dtype
//! the vendor lists on Atlas A2, whole, transposed and stepped views, empty and 0-D
//! tensors, the allocating form, the in-place twin and the plans, judged by the precision
//! standard; BOOL inputs, which the rows compute as FLOAT, against the formula of 0 and 1.

use crate::common;

use ascendcl::{DeviceTensor, Element, Result, Stream, TensorView, TensorViewMut};
use common::held::{Lay, hold, lay};
use common::*;
use half::{bf16, f16};
use ndarray::{ArrayD, IxDyn};
use proptest::prelude::*;

/// An in-place function.
type InPlace<T> = fn(TensorViewMut<'_, T>, &Stream) -> Result<()>;

/// One row's functions for the element type `T` (out of place, allocating, in place,
/// and through a plan).
struct Row<T: Element> {
    name: &'static str,
    call: fn(TensorView<'_, T>, TensorViewMut<'_, T>, &Stream) -> Result<()>,
    new: fn(TensorView<'_, T>, &Stream) -> Result<DeviceTensor<T>>,
    inplace: Option<InPlace<T>>,
    plan: fn(TensorView<'_, T>, TensorViewMut<'_, T>, &Stream) -> Result<()>,
}

macro_rules! unary_rows {
    ($(
        $(#[$doc:meta])*
        $rust:ident($name:ident $(, $inplace:ident)?) $([$quirk:ident])? { $($facts:tt)* }
    )*) => {
        fn unary_rows<T: Element>() -> Vec<Row<T>> {
            paste::paste! { vec![$(
                Row {
                    name: stringify!($name),
                    call: |x, out, s| ascendcl::$rust(x, out, s),
                    new: |x, s| ascendcl::[<$rust _new>](x, s),
                    inplace: unary_rows!(@inplace $rust [$($inplace)?]),
                    plan: |x, mut out, s| {
                        let mut plan = ascendcl::[<$name Plan>]::new(&x, &out, s)?;
                        plan.launch(&x, &mut out, s)?;
                        plan.launch(&x, &mut out, s)
                    },
                },
            )*] }
        }
    };
    (@inplace $rust:ident []) => { None };
    (@inplace $rust:ident [$inplace:ident]) => {
        paste::paste! { Some(|x, s| ascendcl::[<$rust _inplace>](x, s)) }
    };
}

ascend_ops::unary_family!(unary_rows);

/// One row's out-of-place functions from `T` into another element type `O` (out of place,
/// allocating, and through a plan).
struct Widening<T: Element, O: Element> {
    name: &'static str,
    call: fn(TensorView<'_, T>, TensorViewMut<'_, O>, &Stream) -> Result<()>,
    new: fn(TensorView<'_, T>, &Stream) -> Result<DeviceTensor<O>>,
    plan: fn(TensorView<'_, T>, TensorViewMut<'_, O>, &Stream) -> Result<()>,
}

macro_rules! widening_rows {
    ($(
        $(#[$doc:meta])*
        $rust:ident($name:ident $(, $inplace:ident)?) $([$quirk:ident])? { $($facts:tt)* }
    )*) => {
        fn widening_rows<T: Element, O: Element>() -> Vec<Widening<T, O>> {
            paste::paste! { vec![$(
                Widening {
                    name: stringify!($name),
                    call: |x, out, s| ascendcl::$rust(x, out, s),
                    new: |x, s| ascendcl::[<$rust _new>](x, s),
                    plan: |x, mut out, s| {
                        let mut plan = ascendcl::[<$name Plan>]::new(&x, &out, s)?;
                        plan.launch(&x, &mut out, s)
                    },
                },
            )*] }
        }
    };
}

ascend_ops::unary_family!(widening_rows);

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 12,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// A shape of up to 3 dims of sizes 0..=4 (0 rarely) and values for it.
fn shaped() -> impl Strategy<Value = (Vec<usize>, Vec<f64>)> {
    prop::collection::vec(prop_oneof![1 => Just(0usize), 8 => 1usize..=4], 0..=3).prop_flat_map(
        |shape| {
            let n = shape.iter().product::<usize>();
            (Just(shape), prop::collection::vec(-3.0f64..3.0, n))
        },
    )
}

/// The row's inputs: where the formula has no real value below 0 (log, sqrt, rsqrt), its
/// magnitude moved away from 0.
fn domain(row: &ascend_ops::unary::Unary, v: f64) -> f64 {
    if (row.f64)(-1.0).is_nan() {
        v.abs() + 0.125
    } else {
        v
    }
}

fn check<T: Element>(
    s: &Stream,
    f: &Row<T>,
    shape: &[usize],
    values: &[f64],
    lay: Lay,
) -> std::result::Result<(), TestCaseError> {
    let row = ascend_ops::unary::row(f.name).unwrap();
    let x = ArrayD::from_shape_vec(
        IxDyn(shape),
        values
            .iter()
            .map(|&v| T::from_f64(domain(row, v)))
            .collect(),
    )
    .unwrap();
    let want = reference(row.name, &x).unwrap();
    let t = ascendcl::precision::threshold(T::DTYPE);
    let judge = |got: &ArrayD<T>, what: &str| -> std::result::Result<(), TestCaseError> {
        let (mere, mare) = mere_mare(got, &want);
        prop_assert!(
            mere < t && mare < 10.0 * t || t == 0.0 && *got == want,
            "{} {what} of {:?} {lay:?}: MERE {mere:e} MARE {mare:e}",
            f.name,
            T::DTYPE
        );
        Ok(())
    };
    let held = hold(s, &x, lay);
    let mut out = hold(s, &ArrayD::from_elem(IxDyn(shape), T::from_f64(0.0)), lay);
    (f.call)(held.view(), out.view_mut(), s).unwrap();
    judge(&out.get(s), "out of place")?;
    let new = (f.new)(held.view(), s).unwrap();
    judge(&new.to_array(s).unwrap(), "allocated")?;
    let mut planned = hold(s, &ArrayD::from_elem(IxDyn(shape), T::from_f64(0.0)), lay);
    (f.plan)(held.view(), planned.view_mut(), s).unwrap();
    judge(&planned.get(s), "planned")?;
    if let Some(inplace) = f.inplace {
        let mut held = held;
        inplace(held.view_mut(), s).unwrap();
        judge(&held.get(s), "in place")?;
    }
    Ok(())
}

macro_rules! reference_dispatch {
    ($(
        $(#[$doc:meta])*
        $rust:ident($cname:ident $(, $inplace:ident)?) $([$quirk:ident])? { $($facts:tt)* }
    )*) => {
        /// The reference function of the row named `name`.
        fn reference<T: Element>(name: &str, x: &ArrayD<T>) -> Result<ArrayD<T>> {
            match name {
                $(stringify!($cname) => ascendcl::reference::$rust(x.view()),)*
                other => panic!("no reference for {other}"),
            }
        }
    };
}

ascend_ops::unary_family!(reference_dispatch);

fn every_row<T: Element>(cases: &std::cell::Cell<usize>) {
    let s = device(0).stream().unwrap();
    for f in unary_rows::<T>() {
        let row = ascend_ops::unary::row(f.name).unwrap();
        // Same-dtype calls only: an integer `self` whose result is FLOAT is the simulator
        // suite's integer test.
        let dtype = T::DTYPE.acl();
        if !row.dtypes.allows(ascend_ops::Product::AtlasA2, dtype)
            || row.default_out_dtype(dtype) != dtype
        {
            continue;
        }
        let mut runner = proptest::test_runner::TestRunner::new(config());
        runner
            .run(&(shaped(), lay()), |((shape, values), lay)| {
                cases.set(cases.get() + 1);
                check(&s, &f, &shape, &values, lay)
            })
            .unwrap();
    }
}

/// `T` inputs of the rows that list `T` and compute it as `O` (BOOL as FLOAT): the row's
/// formula of each input's value (0 or 1 for BOOL), in `O`'s precision, against
/// the out-of-place, allocating and planned calls.
fn every_widening_row<T: Element, O: Element>(cases: &std::cell::Cell<usize>) {
    let s = device(0).stream().unwrap();
    for f in widening_rows::<T, O>() {
        let row = ascend_ops::unary::row(f.name).unwrap();
        let dtype = T::DTYPE.acl();
        if !row.dtypes.allows(ascend_ops::Product::AtlasA2, dtype)
            || row.default_out_dtype(dtype) != O::DTYPE.acl()
        {
            continue;
        }
        let mut runner = proptest::test_runner::TestRunner::new(config());
        runner
            .run(&(shaped(), lay()), |((shape, values), lay)| {
                cases.set(cases.get() + 1);
                let x = ArrayD::from_shape_vec(
                    IxDyn(&shape),
                    values.iter().map(|&v| T::from_f64(v.round())).collect(),
                )
                .unwrap();
                // The kernel evaluates the row's f32 formula for a FLOAT compute dtype, the
                // f64 one for DOUBLE.
                let want = x.mapv(|v| match O::DTYPE {
                    ascendcl::DType::F32 => O::from_f32((row.f32)(v.to_f32())),
                    _ => O::from_f64((row.f64)(v.to_f64())),
                });
                let same = |got: &ArrayD<O>, what: &str| {
                    let equal = got
                        .iter()
                        .zip(&want)
                        .all(|(g, w)| g == w || g.to_f64().is_nan() && w.to_f64().is_nan());
                    prop_assert!(
                        equal,
                        "{} {what} of {:?} {lay:?}: {got:?} against {want:?}",
                        f.name,
                        T::DTYPE
                    );
                    Ok(())
                };
                let held = hold(&s, &x, lay);
                let zeros = ArrayD::from_elem(IxDyn(&shape), O::from_f64(0.0));
                let mut out = hold(&s, &zeros, lay);
                (f.call)(held.view(), out.view_mut(), &s).unwrap();
                same(&out.get(&s), "out of place")?;
                let new = (f.new)(held.view(), &s).unwrap();
                same(&new.to_array(&s).unwrap(), "allocated")?;
                let mut planned = hold(&s, &zeros, lay);
                (f.plan)(held.view(), planned.view_mut(), &s).unwrap();
                same(&planned.get(&s), "planned")
            })
            .unwrap();
    }
}

#[test]
fn every_unary_row_computes_bool_inputs_as_its_result_dtype() {
    let _gate = crate::common::shared();
    let cases = std::cell::Cell::new(0);
    every_widening_row::<bool, f32>(&cases);
    let cases = cases.get();
    println!("{cases} bool cases");
    assert!(cases >= 12 * 5, "{cases} cases");
}

#[test]
fn every_unary_row_matches_the_reference_in_every_listed_dtype() {
    let _gate = crate::common::shared();
    let cases = std::cell::Cell::new(0);
    every_row::<f32>(&cases);
    every_row::<f16>(&cases);
    every_row::<bf16>(&cases);
    every_row::<i32>(&cases);
    every_row::<i64>(&cases);
    every_row::<i8>(&cases);
    every_row::<u8>(&cases);
    every_row::<f64>(&cases);
    every_row::<bool>(&cases);
    let cases = cases.get();
    println!("{cases} unary cases");
    assert!(cases > 500, "{cases} cases");
}
