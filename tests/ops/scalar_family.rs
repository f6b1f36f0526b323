//! The tensor–scalar family on the simulator, every row against the reference: each dtype
//! the vendor lists on Atlas A2 whose result stays in it (floating types with DOUBLE
//! scalars, integers and bool with integer scalars), whole, transposed and stepped views,
//! empty and 0-D tensors, the allocating form, the in-place twin and the plans, judged by
//! the precision standard (exactly for integers and bool); the comparisons into bool,
//! exactly.

use crate::common;

use ascendcl::protocol::Scalar;
use ascendcl::{DeviceTensor, Element, Result, Stream, TensorView, TensorViewMut};
use common::held::{Lay, hold, lay};
use common::*;
use half::{bf16, f16};
use ndarray::{ArrayD, IxDyn};
use proptest::prelude::*;

type Call<T> = fn(TensorView<'_, T>, Scalar, Scalar, TensorViewMut<'_, T>, &Stream) -> Result<()>;
type New<T> = fn(TensorView<'_, T>, Scalar, Scalar, &Stream) -> Result<DeviceTensor<T>>;
type InPlace<T> = fn(TensorViewMut<'_, T>, Scalar, Scalar, &Stream) -> Result<()>;

/// One row's functions for the element type `T`.
struct Row<T: Element> {
    name: &'static str,
    call: Call<T>,
    new: New<T>,
    inplace: InPlace<T>,
    plan: Call<T>,
    inplace_plan: InPlace<T>,
    reference: fn(&ArrayD<T>, Scalar, Scalar) -> Result<ArrayD<T>>,
}

macro_rules! scalar_rows {
    ($(
        $(#[$doc:meta])*
        $rust:ident($name:ident, $inplace:ident) [$($marker:ident)*] { $($facts:tt)* }
    )*) => {
        fn scalar_rows<T: Element>() -> Vec<Row<T>> {
            let mut rows = Vec::new();
            $( scalar_rows!(@row rows [$($marker)*] $rust $name $inplace); )*
            rows
        }
    };
    (@row $rows:ident [alpha $($quirk:ident)?] $rust:ident $name:ident $inplace:ident) => {
        paste::paste! { $rows.push(Row {
            name: stringify!($name),
            call: |x, o, a, out, s| ascendcl::$rust(x, o, a, out, s),
            new: |x, o, a, s| ascendcl::[<$rust _new>](x, o, a, s),
            inplace: |x, o, a, s| ascendcl::[<$rust _inplace>](x, o, a, s),
            plan: |x, o, a, mut out, s| {
                let mut plan = ascendcl::[<$name Plan>]::new(&x, o, a, &out, s)?;
                plan.launch(&x, &mut out, s)?;
                plan.launch(&x, &mut out, s)
            },
            inplace_plan: |mut x, o, a, s| {
                let mut plan = ascendcl::[<$inplace Plan>]::new(&x, o, a, s)?;
                plan.launch(&mut x, s)
            },
            reference: |x, o, a| ascendcl::reference::$rust(x.view(), o, a),
        }); }
    };
    (@row $rows:ident [compare $($quirk:ident)*] $rust:ident $name:ident $inplace:ident) => {};
    (@row $rows:ident [$(const_self_ref)? $(const_out)?] $rust:ident $name:ident $inplace:ident) => {
        paste::paste! { $rows.push(Row {
            name: stringify!($name),
            call: |x, o, _, out, s| ascendcl::$rust(x, o, out, s),
            new: |x, o, _, s| ascendcl::[<$rust _new>](x, o, s),
            inplace: |x, o, _, s| ascendcl::[<$rust _inplace>](x, o, s),
            plan: |x, o, _, mut out, s| {
                let mut plan = ascendcl::[<$name Plan>]::new(&x, o, &out, s)?;
                plan.launch(&x, &mut out, s)?;
                plan.launch(&x, &mut out, s)
            },
            inplace_plan: |mut x, o, _, s| {
                let mut plan = ascendcl::[<$inplace Plan>]::new(&x, o, s)?;
                plan.launch(&mut x, s)
            },
            reference: |x, o, _| ascendcl::reference::$rust(x.view(), o),
        }); }
    };
}

ascend_ops::scalar_family!(scalar_rows);

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 12,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// A shape of up to 3 dims of sizes 0..=4 (0 rarely), values for it, and two scalars.
fn shaped() -> impl Strategy<Value = (Vec<usize>, Vec<f64>, f64, f64)> {
    prop::collection::vec(prop_oneof![1 => Just(0usize), 8 => 1usize..=4], 0..=3).prop_flat_map(
        |shape| {
            let n = shape.iter().product::<usize>();
            (
                Just(shape),
                prop::collection::vec(-3.0f64..3.0, n),
                -3.0f64..3.0,
                -2.0f64..2.0,
            )
        },
    )
}

/// The scalars a `T` computes in its own dtype with: DOUBLE for floating types, INT64 for
/// integers (away from 0 for Divs; non-negative for u8), BOOL for bool. PowTensorScalar's
/// floating exponents are multiples of 0.5 (its special cases 0.5, 2, 3, −1, ... and
/// negative bases with integer and fractional powers).
fn scalars<T: Element>(name: &str, other: f64, alpha: f64) -> (Scalar, Scalar) {
    if T::DTYPE.is_float() {
        let other = if name == "Divs" && other.abs() < 0.25 {
            0.5
        } else if name == "PowTensorScalar" {
            (other * 2.0).round() / 2.0
        } else {
            other
        };
        return (Scalar::F64(other), Scalar::F64(alpha));
    }
    if T::DTYPE == ascendcl::DType::Bool {
        return (Scalar::Bool(other > 0.0), Scalar::Bool(true));
    }
    // Non-negative terms for u8, which would wrap below 0 (the reference saturates).
    let (other, alpha) = if T::DTYPE == ascendcl::DType::U8 {
        (other.abs(), alpha.abs())
    } else {
        (other, alpha)
    };
    let other = other.round() as i64;
    let other = if name == "Divs" && other == 0 {
        2
    } else {
        other
    };
    (Scalar::I64(other), Scalar::I64(alpha.round() as i64))
}

fn check<T: Element>(
    s: &Stream,
    f: &Row<T>,
    (shape, values, other, alpha): (&[usize], &[f64], f64, f64),
    lay: Lay,
) -> std::result::Result<(), TestCaseError> {
    let x = ArrayD::from_shape_vec(
        IxDyn(shape),
        values.iter().map(|&v| T::from_f64(v)).collect(),
    )
    .unwrap();
    let (o, a) = scalars::<T>(f.name, other, alpha);
    let want = (f.reference)(&x, o, a).unwrap();
    let t = ascendcl::precision::threshold(T::DTYPE);
    let judge = |got: &ArrayD<T>, what: &str| -> std::result::Result<(), TestCaseError> {
        let (mere, mare) = mere_mare(got, &want);
        prop_assert!(
            mere < t && mare < 10.0 * t || t == 0.0 && *got == want,
            "{} {what} of {:?} {lay:?} {o:?} {a:?}: MERE {mere:e} MARE {mare:e}\n{got:?}\n{want:?}",
            f.name,
            T::DTYPE
        );
        Ok(())
    };
    let held = hold(s, &x, lay);
    let zeros = ArrayD::from_elem(IxDyn(shape), T::from_f64(0.0));
    let mut out = hold(s, &zeros, lay);
    (f.call)(held.view(), o, a, out.view_mut(), s).unwrap();
    judge(&out.get(s), "out of place")?;
    let new = (f.new)(held.view(), o, a, s).unwrap();
    judge(&new.to_array(s).unwrap(), "allocated")?;
    let mut planned = hold(s, &zeros, lay);
    (f.plan)(held.view(), o, a, planned.view_mut(), s).unwrap();
    judge(&planned.get(s), "planned")?;
    let mut twin = hold(s, &x, lay);
    (f.inplace_plan)(twin.view_mut(), o, a, s).unwrap();
    judge(&twin.get(s), "planned in place")?;
    let mut held = held;
    (f.inplace)(held.view_mut(), o, a, s).unwrap();
    judge(&held.get(s), "in place")
}

/// The cases run per row.
type Tally = std::cell::RefCell<std::collections::BTreeMap<&'static str, usize>>;

fn every_row<T: Element>(cases: &Tally) {
    let s = device(0).stream().unwrap();
    for f in scalar_rows::<T>() {
        let row = ascend_ops::scalar::row(f.name).unwrap();
        if !row.dtypes.allows(ascend_ops::Product::AtlasA2, T::DTYPE.acl())
            // An unsigned self minus a larger term wraps on the device, where the
            // reference saturates: not compared.
            || (f.name == "Subs" && T::DTYPE == ascendcl::DType::U8)
            // A bool base raises in i64, which casts to no bool out (nor in place):
            // `pow_of_a_bool_base_raises_in_i64` takes it.
            || (f.name == "PowTensorScalar" && T::DTYPE == ascendcl::DType::Bool)
        {
            continue;
        }
        let mut runner = proptest::test_runner::TestRunner::new(config());
        runner
            .run(
                &(shaped(), lay()),
                |((shape, values, other, alpha), lay)| {
                    *cases.borrow_mut().entry(f.name).or_default() += 1;
                    let values: Vec<f64> = if T::DTYPE == ascendcl::DType::U8 {
                        values.iter().map(|v| v.abs()).collect()
                    } else {
                        values
                    };
                    check(&s, &f, (&shape, &values, other, alpha), lay)
                },
            )
            .unwrap();
    }
}

#[test]
fn every_scalar_row_matches_the_reference_in_every_listed_dtype() {
    let _gate = crate::common::shared();
    let tally = Tally::default();
    every_row::<f32>(&tally);
    every_row::<f16>(&tally);
    every_row::<bf16>(&tally);
    every_row::<f64>(&tally);
    every_row::<i32>(&tally);
    every_row::<i64>(&tally);
    every_row::<i8>(&tally);
    every_row::<u8>(&tally);
    every_row::<bool>(&tally);
    let tally = tally.into_inner();
    let cases: usize = tally.values().sum();
    println!("{cases} scalar cases: {tally:?}");
    assert!(cases >= 12 * 4 * 8, "{cases} cases");
    // Pow: the four floating types and the four integer ones (bool is its own test)
    assert_eq!(tally["PowTensorScalar"], 12 * 8);
}

/// The scalar's dtype takes part in the promotion: an integer tensor plus a DOUBLE
/// scalar into f32 computes in f32; into an integer `out` CANN refuses it.
#[test]
fn a_floating_scalar_promotes_an_integer_tensor() {
    let _gate = crate::common::shared();
    let s = device(0).stream().unwrap();
    let x = DeviceTensor::from_array(&s, &ndarray::array![1i32, -2]).unwrap();
    let mut out = DeviceTensor::<f32>::zeros(&s, [2]).unwrap();
    ascendcl::adds(&x, 0.5, 1, &mut out, &s).unwrap();
    assert_eq!(
        out.to_array::<ndarray::Ix1>(&s).unwrap().to_vec(),
        vec![1.5, -1.5]
    );
    let mut ints = DeviceTensor::<i32>::zeros(&s, [2]).unwrap();
    let e = ascendcl::adds(&x, 0.5, 1, &mut ints, &s).unwrap_err();
    assert!(matches!(e, ascendcl::Error::Aclnn { .. }), "{e}");
    ascendcl::muls(&x, 3, &mut ints, &s).unwrap();
    assert_eq!(
        ints.to_array::<ndarray::Ix1>(&s).unwrap().to_vec(),
        vec![3, -6]
    );
}

type Compare<T> = fn(TensorView<'_, T>, Scalar, TensorViewMut<'_, bool>, &Stream) -> Result<()>;
type CompareNew<T> = fn(TensorView<'_, T>, Scalar, &Stream) -> Result<DeviceTensor<bool>>;
type CompareInPlace<T> = fn(TensorViewMut<'_, T>, Scalar, &Stream) -> Result<()>;

/// One comparison row's functions for the element type `T`, into `bool`.
struct CompareRow<T: Element> {
    name: &'static str,
    call: Compare<T>,
    new: CompareNew<T>,
    plan: Compare<T>,
    inplace: CompareInPlace<T>,
    reference: fn(&ArrayD<T>, Scalar) -> Result<ArrayD<bool>>,
}

macro_rules! compare_rows {
    ($(
        $(#[$doc:meta])*
        $rust:ident($name:ident, $inplace:ident) [$($marker:ident)*] { $($facts:tt)* }
    )*) => {
        fn compare_rows<T: Element>() -> Vec<CompareRow<T>> {
            let mut rows = Vec::new();
            $( compare_rows!(@row rows [$($marker)*] $rust $name); )*
            rows
        }
    };
    (@row $rows:ident [compare $($quirk:ident)*] $rust:ident $name:ident) => {
        paste::paste! { $rows.push(CompareRow {
            name: stringify!($name),
            call: |x, o, out, s| ascendcl::$rust(x, o, out, s),
            new: |x, o, s| ascendcl::[<$rust _new>](x, o, s),
            plan: |x, o, mut out, s| {
                let mut plan = ascendcl::[<$name Plan>]::new(&x, o, &out, s)?;
                plan.launch(&x, &mut out, s)
            },
            inplace: |x, o, s| ascendcl::[<$rust _inplace>](x, o, s),
            reference: |x, o| ascendcl::reference::$rust(x.view(), o),
        }); }
    };
    (@row $rows:ident [$($marker:ident)*] $rust:ident $name:ident) => {};
}

ascend_ops::scalar_family!(compare_rows);

fn every_comparison<T: Element>(cases: &std::cell::Cell<usize>) {
    let s = device(0).stream().unwrap();
    for f in compare_rows::<T>() {
        let row = ascend_ops::scalar::row(f.name).unwrap();
        if !row.accepts_self(ascend_ops::Product::AtlasA2, T::DTYPE.acl()) {
            continue;
        }
        let mut runner = proptest::test_runner::TestRunner::new(config());
        runner
            .run(&(shaped(), lay()), |((shape, values, other, _), lay)| {
                cases.set(cases.get() + 1);
                // Values on a coarse grid, so that equality happens.
                let x = ArrayD::from_shape_vec(
                    IxDyn(&shape),
                    values
                        .iter()
                        .map(|&v| T::from_f64((v * 2.0).round() / 2.0))
                        .collect(),
                )
                .unwrap();
                let (o, _) = scalars::<T>("", (other * 2.0).round() / 2.0, 1.0);
                let want = (f.reference)(&x, o).unwrap();
                let held = hold(&s, &x, lay);
                let mut out = hold(&s, &ArrayD::from_elem(IxDyn(&shape), false), lay);
                (f.call)(held.view(), o, out.view_mut(), &s).unwrap();
                prop_assert_eq!(&out.get(&s), &want, "{} of {:?} {:?}", f.name, T::DTYPE, o);
                let new = (f.new)(held.view(), o, &s).unwrap();
                prop_assert_eq!(&new.to_array::<IxDyn>(&s).unwrap(), &want);
                let mut planned = hold(&s, &ArrayD::from_elem(IxDyn(&shape), false), lay);
                (f.plan)(held.view(), o, planned.view_mut(), &s).unwrap();
                prop_assert_eq!(&planned.get(&s), &want);
                let mut held = held;
                (f.inplace)(held.view_mut(), o, &s).unwrap();
                prop_assert_eq!(
                    held.get(&s),
                    want.mapv(|b| T::from_f64(f64::from(u8::from(b))))
                );
                Ok(())
            })
            .unwrap();
    }
}

#[test]
fn every_comparison_row_matches_the_reference_in_every_listed_dtype() {
    let _gate = crate::common::shared();
    let cases = std::cell::Cell::new(0);
    every_comparison::<f32>(&cases);
    every_comparison::<f16>(&cases);
    every_comparison::<bf16>(&cases);
    every_comparison::<f64>(&cases);
    every_comparison::<i32>(&cases);
    every_comparison::<i64>(&cases);
    every_comparison::<i8>(&cases);
    every_comparison::<u8>(&cases);
    every_comparison::<bool>(&cases);
    let cases = cases.get();
    println!("{cases} comparison cases");
    assert!(cases >= 12 * 6 * 8, "{cases} cases");
}
