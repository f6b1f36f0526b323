//! The argument model of `operator!` without walls: any number of arguments, optional
//! scalars and tensors (NULL), per-argument dtype rules, two outputs with an allocating
//! form returning both, and the operators that need them (`aclnnClamp`, `aclnnMaxDim`),
//! against the CPU reference.

use crate::common;

use ascendcl::protocol::{Arg, Scalar, rules};
use ascendcl::{
    ClampPlan, DType, DeviceTensor, Element, Error, MaxDimPlan, SocFamily, clamp, clamp_new,
    max_dim, max_dim_new, reference,
};
use common::*;
use half::{bf16, f16};
use ndarray::{ArrayD, IxDyn, array};

ascendcl::operator! {
    /// An operator of eleven arguments, which the simulator does not have: the
    /// declaration and the checks before any C call work at any arity.
    pub unsafe struct WideSum: aclnnWideSum, aclnnWideSumGetWorkspaceSize;
    products: |_soc: SocFamily| true;
    dtypes: |_soc: SocFamily, _dtype: DType| true;
    rule: rules::broadcast;

    /// `out = a0 + ... + a9`.
    pub fn wide_sum<T>(
        a0: input<T> = "a0",
        a1: input<T> = "a1",
        a2: input<T> = "a2",
        a3: input<T> = "a3",
        a4: input<T> = "a4",
        a5: input<T> = "a5",
        a6: input<T> = "a6",
        a7: input<T> = "a7",
        a8: input<T> = "a8",
        a9: input<T> = "a9",
        out: output<T> = "out",
    );

    /// Its plan.
    pub type WideSumPlan;
}

// SAFETY: never reaches C: the simulator lacks the operator, and the tests expect the
// lookup of its entry points to fail.
unsafe impl ascendcl::protocol::Promise for WideSum {}

#[test]
fn a_declaration_takes_more_than_eight_arguments_and_checks_each() {
    let _gate = crate::common::shared();
    let s = device(A2).stream().unwrap();
    let x = DeviceTensor::<f32>::zeros(&s, [2, 3]).unwrap();
    let row = DeviceTensor::<f32>::zeros(&s, [3]).unwrap();
    let bad = DeviceTensor::<f32>::zeros(&s, [4]).unwrap();
    let mut out = DeviceTensor::<f32>::zeros(&s, [2, 3]).unwrap();
    assert_eq!(WideSum::ARGS.len(), 11);
    // The tenth input does not broadcast: the rule names it.
    let e = wide_sum(&x, &x, &x, &x, &x, &x, &x, &x, &x, &bad, &mut out, &s).unwrap_err();
    assert!(
        matches!(e, Error::NotBroadcastable { other: "a9", .. }),
        "{e:?}"
    );
    // Every argument valid (the tenth broadcast): the call gets as far as the library,
    // which lacks the operator.
    let e = wide_sum(&x, &x, &x, &x, &x, &x, &x, &x, &x, &row, &mut out, &s).unwrap_err();
    assert!(
        matches!(
            e,
            Error::UnsupportedOperator {
                operator: "aclnnWideSum",
                ..
            }
        ),
        "{e:?}"
    );
    let e = WideSumPlan::new(&x, &x, &x, &x, &x, &x, &x, &x, &x, &row, &out, &s).unwrap_err();
    assert!(matches!(e, Error::UnsupportedOperator { .. }), "{e:?}");
    // The output is the eleventh argument, checked against the broadcast shape.
    let mut small = DeviceTensor::<f32>::zeros(&s, [3]).unwrap();
    let e = wide_sum(&x, &x, &x, &x, &x, &x, &x, &x, &x, &row, &mut small, &s).unwrap_err();
    assert!(
        matches!(
            e,
            Error::ShapeMismatch {
                argument: "out",
                ..
            }
        ),
        "{e:?}"
    );
}

/// Values of every sign and size, with halves (ties), as `T`.
fn samples<T: Element>() -> ArrayD<T> {
    let v = [
        -7.5, -2.5, -1.0, -0.5, 0.0, 0.4, 1.5, 2.0, 3.25, 9.0, 100.0, -100.0,
    ];
    ArrayD::from_shape_vec(IxDyn(&[3, 4]), v.iter().map(|&x| T::from_f64(x)).collect()).unwrap()
}

/// The bound combinations every dtype is run with: both, one of each, and crossed.
const BOUNDS: [(Option<f64>, Option<f64>); 5] = [
    (Some(-1.0), Some(2.0)),
    (Some(0.0), None),
    (None, Some(1.5)),
    (Some(3.0), Some(-2.0)),
    (Some(-2.6), Some(9.9)),
];

/// `clamp` of `samples::<T>()` into `O` against the reference, for every bound
/// combination `O` holds (how a bound outside an integer type's range converts is not
/// documented); returns how many cases ran.
fn clamp_against_reference<T: Element, O: Element>(device: i32) -> usize {
    let s = common::device(device).stream().unwrap();
    let x = samples::<T>();
    let dx = DeviceTensor::from_array(&s, &x).unwrap();
    let mut out = DeviceTensor::<O>::zeros(&s, [3, 4]).unwrap();
    let held = |b: Option<f64>| b.is_none_or(|b| O::DTYPE != DType::U8 || b >= 0.0);
    let mut n = 0;
    for (lo, hi) in BOUNDS.into_iter().filter(|(lo, hi)| held(*lo) && held(*hi)) {
        clamp(
            &dx,
            lo.map(Scalar::from),
            hi.map(Scalar::from),
            &mut out,
            &s,
        )
        .unwrap();
        let got: ArrayD<O> = out.to_array(&s).unwrap();
        let want: ArrayD<O> = reference::clamp_as(x.view(), lo, hi).unwrap();
        assert_eq!(
            got,
            want,
            "{} -> {} bounds {lo:?} {hi:?}",
            T::DTYPE,
            O::DTYPE
        );
        n += 1;
    }
    n
}

#[test]
fn clamp_matches_the_reference_in_every_dtype_and_bound_combination() {
    let _gate = crate::common::shared();
    let n = clamp_against_reference::<f32, f32>(A2)
        + clamp_against_reference::<f16, f16>(A2)
        + clamp_against_reference::<bf16, bf16>(A2)
        + clamp_against_reference::<i32, i32>(A2)
        + clamp_against_reference::<i64, i64>(A910)
        + clamp_against_reference::<i8, i8>(A910)
        + clamp_against_reference::<u8, u8>(B310)
        // Computed in out's dtype: self cast to it first.
        + clamp_against_reference::<f32, f16>(A2)
        + clamp_against_reference::<i32, f32>(A2)
        + clamp_against_reference::<u8, i64>(A910);
    assert_eq!(n, 47);
}

#[test]
fn clamp_reads_views_and_handles_empty_and_zero_d() {
    let _gate = crate::common::shared();
    let s = device(A2).stream().unwrap();
    let x = array![[-3.0f32, 0.5, 4.0], [1.0, -0.5, 9.0]].into_dyn();
    let dx = DeviceTensor::from_array(&s, &x).unwrap();
    // The transpose, into a transposed output view.
    let mut out = DeviceTensor::<f32>::zeros(&s, [2, 3]).unwrap();
    clamp(
        dx.view().t(),
        Some(0.0.into()),
        Some(2.0.into()),
        out.view_mut().t(),
        &s,
    )
    .unwrap();
    let want: ArrayD<f32> = reference::clamp_as(x.view(), Some(0.0), Some(2.0)).unwrap();
    assert_eq!(out.to_array::<IxDyn>(&s).unwrap(), want);
    // Every other column of the transpose.
    let stepped = dx.view().t().slice(0, 0, 3, 2).unwrap();
    let got =
        clamp_new::<f32, f32, DeviceTensor<f32>>(stepped, None, Some(0.7.into()), &s).unwrap();
    assert_eq!(got.shape(), &[2, 2]);
    assert_eq!(
        got.to_array::<IxDyn>(&s).unwrap(),
        array![[-3.0f32, 0.7], [0.7, 0.7]].into_dyn()
    );
    let empty = DeviceTensor::<f32>::zeros(&s, [0, 3]).unwrap();
    let e = clamp_new::<f32, f32, DeviceTensor<f32>>(&empty, Some(1.0.into()), None, &s).unwrap();
    assert_eq!(e.shape(), &[0, 3]);
    let zero_d = DeviceTensor::from_array(&s, &ndarray::arr0(-5i32).into_dyn()).unwrap();
    let z = clamp_new::<i32, i32, DeviceTensor<i32>>(&zero_d, Some((-2).into()), None, &s).unwrap();
    assert_eq!(
        z.to_array::<IxDyn>(&s).unwrap(),
        ndarray::arr0(-2).into_dyn()
    );
}

#[test]
fn a_clamp_plan_keeps_its_bounds_and_rebinds_its_tensors() {
    let _gate = crate::common::shared();
    let s = device(A2).stream().unwrap();
    let a = DeviceTensor::from_array(&s, &array![1i64, 7, -4, 12]).unwrap();
    let b = DeviceTensor::from_array(&s, &array![6i64, -9, 5, 0]).unwrap();
    let (mut oa, mut ob) = (
        DeviceTensor::<i64>::zeros(&s, [4]).unwrap(),
        DeviceTensor::<i64>::zeros(&s, [4]).unwrap(),
    );
    let mut plan = ClampPlan::new(&a, None, Some(Scalar::from(5)), &oa, &s).unwrap();
    plan.launch(&a, &mut oa, &s).unwrap();
    plan.launch(&b, &mut ob, &s).unwrap();
    assert_eq!(
        oa.to_array::<IxDyn>(&s).unwrap(),
        array![1i64, 5, -4, 5].into_dyn()
    );
    assert_eq!(
        ob.to_array::<IxDyn>(&s).unwrap(),
        array![5i64, -9, 5, 0].into_dyn()
    );
    let other = DeviceTensor::<i64>::zeros(&s, [5]).unwrap();
    let mut o5 = DeviceTensor::<i64>::zeros(&s, [5]).unwrap();
    assert!(matches!(
        plan.launch(&other, &mut o5, &s),
        Err(Error::PlanMismatch { .. })
    ));
}

#[test]
fn clamp_is_refused_in_rust_before_any_c_call() {
    let _gate = crate::common::shared();
    let s = device(A910).stream().unwrap();
    let x = DeviceTensor::from_array(&s, &array![1.0f32, 2.0]).unwrap();
    let mut out = DeviceTensor::<f32>::zeros(&s, [2]).unwrap();
    let e = clamp(&x, None, None, &mut out, &s).unwrap_err();
    assert!(
        matches!(&e, Error::InvalidArgument(m) if m.contains("min (clipValueMin)")),
        "{e:?}"
    );
    let mut ints = DeviceTensor::<i32>::zeros(&s, [2]).unwrap();
    let e = clamp(&x, Some(0.0.into()), None, &mut ints, &s).unwrap_err();
    assert!(
        matches!(&e, Error::InvalidArgument(m) if m.contains("cannot be cast")),
        "{e:?}"
    );
    let mut three = DeviceTensor::<f32>::zeros(&s, [3]).unwrap();
    let e = clamp(&x, Some(0.0.into()), None, &mut three, &s).unwrap_err();
    assert!(
        matches!(
            e,
            Error::ShapeMismatch {
                argument: "out",
                ..
            }
        ),
        "{e:?}"
    );
    // BF16 is on Atlas A2/A3 only.
    let b = DeviceTensor::from_array(&s, &array![bf16::ONE]).unwrap();
    let e =
        clamp_new::<bf16, bf16, DeviceTensor<bf16>>(&b, Some(0.0.into()), None, &s).unwrap_err();
    assert!(
        matches!(
            e,
            Error::UnsupportedDtype {
                argument: "x (self)",
                ..
            }
        ),
        "{e:?}"
    );
}

ascendcl::operator! {
    /// `aclnnAdd` with a rule per argument: a floating `self`, an `i64` `other`.
    pub struct FloatPlusInt: aclnnAdd, aclnnAddGetWorkspaceSize;
    products: |_soc: SocFamily| true;
    arg_dtypes: |_soc: SocFamily, arg: &Arg, dtype: DType| match arg.name {
        "other" => dtype == DType::I64,
        _ => dtype.is_float(),
    };
    rule: rules::broadcast;

    /// `out = a + alpha·b`.
    pub fn float_plus_int<A, B, O>(
        a: input<A> = "self",
        b: input<B> = "other",
        alpha: attr<Scalar> = "alpha",
        out: output<O> = "out",
    );

    /// Its plan.
    pub type FloatPlusIntPlan;
}

#[test]
fn a_dtype_rule_per_argument_lets_an_integer_sit_next_to_a_float() {
    let _gate = crate::common::shared();
    let s = device(A2).stream().unwrap();
    let x = DeviceTensor::from_array(&s, &array![0.5f32, 1.5]).unwrap();
    let k = DeviceTensor::from_array(&s, &array![2i64, -3]).unwrap();
    let mut out = DeviceTensor::<f32>::zeros(&s, [2]).unwrap();
    float_plus_int(&x, &k, 1, &mut out, &s).unwrap();
    assert_eq!(
        out.to_array::<IxDyn>(&s).unwrap(),
        array![2.5f32, -1.5].into_dyn()
    );
    // The same dtype is refused in one place and accepted in the other.
    let e = float_plus_int(&x, &x, 1, &mut out, &s).unwrap_err();
    assert!(
        matches!(
            e,
            Error::UnsupportedDtype {
                argument: "b (other)",
                dtype: DType::F32,
                ..
            }
        ),
        "{e:?}"
    );
    let e = float_plus_int(&k, &k, 1, &mut out, &s).unwrap_err();
    assert!(
        matches!(
            e,
            Error::UnsupportedDtype {
                argument: "a (self)",
                dtype: DType::I64,
                ..
            }
        ),
        "{e:?}"
    );
    assert!(FloatPlusInt::supports(SocFamily::AtlasA2, DType::I64));
    assert!(!FloatPlusInt::supports(SocFamily::AtlasA2, DType::I32));
    assert!(FloatPlusInt::supports_arg(
        SocFamily::AtlasA2,
        &FloatPlusInt::ARGS[0],
        DType::F16
    ));
    assert!(!FloatPlusInt::supports_arg(
        SocFamily::AtlasA2,
        &FloatPlusInt::ARGS[1],
        DType::F16
    ));
}

ascendcl::operator! {
    /// `aclnnMul` with `other` declared optional, to see a `None` reach phase 1.
    pub struct MaybeMul: aclnnMul, aclnnMulGetWorkspaceSize;
    products: |_soc: SocFamily| true;
    dtypes: |_soc: SocFamily, _dtype: DType| true;
    rule: rules::broadcast;

    /// `out = a · b`.
    pub fn maybe_mul<A, B, O>(
        a: input<A> = "self",
        b: opt_input<B> = "other",
        out: output<O> = "out",
    );

    /// Its plan.
    pub type MaybeMulPlan;
}

#[test]
fn an_absent_optional_tensor_reaches_phase_one_as_null() {
    let _gate = crate::common::shared();
    let s = device(A2).stream().unwrap();
    let x = DeviceTensor::from_array(&s, &array![2.0f32, 3.0]).unwrap();
    let mut out = DeviceTensor::<f32>::zeros(&s, [2]).unwrap();
    maybe_mul::<f32, f32, f32>(&x, Some(x.view()), &mut out, &s).unwrap();
    assert_eq!(
        out.to_array::<IxDyn>(&s).unwrap(),
        array![4.0f32, 9.0].into_dyn()
    );
    assert!(MaybeMul::ARGS[1].optional && !MaybeMul::ARGS[0].optional);
    // aclnnMul requires `other`: the simulated library refuses the NULL (161001).
    let e = maybe_mul::<f32, f32, f32>(&x, None, &mut out, &s).unwrap_err();
    assert!(matches!(e, Error::Aclnn { status: 161001, .. }), "{e:?}");
    // A plan fixes whether the optional tensor is given.
    let mut plan = MaybeMulPlan::<f32, f32, f32>::new(&x, Some(x.view()), &out, &s).unwrap();
    plan.launch(&x, Some(x.view()), &mut out, &s).unwrap();
    let e = plan.launch(&x, None, &mut out, &s).unwrap_err();
    assert!(
        matches!(&e, Error::PlanMismatch { argument: "b (other)", detail } if detail.contains("absent")),
        "{e:?}"
    );
}

/// `max_dim` of a [2, 3, 4] tensor of `T` (ties included) along every dim, kept or not,
/// into fresh outputs and through the allocating form, against the reference; returns how
/// many cases ran.
fn max_dim_against_reference<T: Element, I: Element>(device: i32) -> usize {
    let s = common::device(device).stream().unwrap();
    let v: Vec<T> = (0..24)
        .map(|k| T::from_f64(((k * 7) % 11) as f64 - 4.0))
        .collect();
    let x = ArrayD::from_shape_vec(IxDyn(&[2, 3, 4]), v).unwrap();
    let dx = DeviceTensor::from_array(&s, &x).unwrap();
    let mut n = 0;
    for dim in -3..3i64 {
        for keep in [false, true] {
            let (want_v, want_i) = reference::max_dim(x.view(), dim, keep).unwrap();
            let (mut out, mut at) = (
                DeviceTensor::<T>::zeros(&s, want_v.shape()).unwrap(),
                DeviceTensor::<I>::zeros(&s, want_v.shape()).unwrap(),
            );
            max_dim(&dx, dim, keep, &mut out, &mut at, &s).unwrap();
            let label = format!("{} dim {dim} keep {keep}", T::DTYPE);
            assert_eq!(out.to_array::<IxDyn>(&s).unwrap(), want_v, "{label}");
            let got_i: ArrayD<I> = at.to_array(&s).unwrap();
            assert_eq!(got_i.mapv(|i| i.to_f64() as i64), want_i, "{label}");
            let (m, i) =
                max_dim_new::<T, I, DeviceTensor<T>, DeviceTensor<I>>(&dx, dim, keep, &s).unwrap();
            assert_eq!(m.to_array::<IxDyn>(&s).unwrap(), want_v, "{label} (new)");
            assert_eq!(i.shape(), want_i.shape(), "{label} (new)");
            n += 1;
        }
    }
    n
}

#[test]
fn max_dim_matches_the_reference_in_every_dtype_dim_and_keep_dim() {
    let _gate = crate::common::shared();
    let n = max_dim_against_reference::<f32, i64>(A2)
        + max_dim_against_reference::<f16, i64>(A910)
        + max_dim_against_reference::<bf16, i64>(A2)
        + max_dim_against_reference::<i64, i64>(A2)
        // Indices of any type: the operator casts to it.
        + max_dim_against_reference::<f32, i32>(A910);
    assert_eq!(n, 60);
}

#[test]
fn max_dim_reads_views_and_handles_zero_d_and_empty() {
    let _gate = crate::common::shared();
    let s = device(A2).stream().unwrap();
    let x = array![[3.0f32, -1.0, 8.0], [2.0, 9.0, 8.0]].into_dyn();
    let dx = DeviceTensor::from_array(&s, &x).unwrap();
    // Along dim 0 of the transpose = along dim 1 of x.
    let (m, i) =
        max_dim_new::<f32, i64, DeviceTensor<f32>, DeviceTensor<i64>>(dx.view().t(), 0, false, &s)
            .unwrap();
    assert_eq!(
        m.to_array::<IxDyn>(&s).unwrap(),
        array![8.0f32, 9.0].into_dyn()
    );
    assert_eq!(i.to_array::<IxDyn>(&s).unwrap(), array![2i64, 1].into_dyn());
    let zero_d = DeviceTensor::from_array(&s, &ndarray::arr0(4.5f32).into_dyn()).unwrap();
    let (m, i) =
        max_dim_new::<f32, i64, DeviceTensor<f32>, DeviceTensor<i64>>(&zero_d, -1, false, &s)
            .unwrap();
    assert_eq!(m.shape(), &[] as &[usize]);
    assert_eq!(
        m.to_array::<IxDyn>(&s).unwrap(),
        ndarray::arr0(4.5f32).into_dyn()
    );
    assert_eq!(
        i.to_array::<IxDyn>(&s).unwrap(),
        ndarray::arr0(0i64).into_dyn()
    );
    // An empty self along its empty dim: outputs of the reduced shape, nothing computed.
    let empty = DeviceTensor::<f32>::zeros(&s, [0, 4]).unwrap();
    let (m, i) =
        max_dim_new::<f32, i64, DeviceTensor<f32>, DeviceTensor<i64>>(&empty, 0, false, &s)
            .unwrap();
    assert_eq!((m.shape(), i.shape()), (&[4][..], &[4][..]));
}

#[test]
fn a_max_dim_plan_launches_for_both_outputs() {
    let _gate = crate::common::shared();
    let s = device(A2).stream().unwrap();
    let a = DeviceTensor::from_array(&s, &array![[1.0f32, 4.0], [6.0, 2.0]]).unwrap();
    let b = DeviceTensor::from_array(&s, &array![[7.0f32, 0.0], [1.0, 3.0]]).unwrap();
    let mut out = DeviceTensor::<f32>::zeros(&s, [2, 1]).unwrap();
    let mut at = DeviceTensor::<i64>::zeros(&s, [2, 1]).unwrap();
    let mut plan = MaxDimPlan::new(&a, 1, true, &out, &at, &s).unwrap();
    plan.launch(&a, &mut out, &mut at, &s).unwrap();
    assert_eq!(
        at.to_array::<IxDyn>(&s).unwrap(),
        array![[1i64], [0]].into_dyn()
    );
    plan.launch(&b, &mut out, &mut at, &s).unwrap();
    assert_eq!(
        out.to_array::<IxDyn>(&s).unwrap(),
        array![[7.0f32], [3.0]].into_dyn()
    );
    assert_eq!(
        at.to_array::<IxDyn>(&s).unwrap(),
        array![[0i64], [1]].into_dyn()
    );
}

#[test]
fn max_dim_is_refused_in_rust_before_any_c_call() {
    let _gate = crate::common::shared();
    let s = device(A910).stream().unwrap();
    let x = DeviceTensor::from_array(&s, &array![[1.0f32, 2.0], [3.0, 4.0]]).unwrap();
    let e = max_dim_new::<f32, i64, DeviceTensor<f32>, DeviceTensor<i64>>(&x, 2, false, &s)
        .unwrap_err();
    assert!(
        matches!(&e, Error::InvalidArgument(m) if m.contains("dim")),
        "{e:?}"
    );
    // indices is checked before out, as the vendor does.
    let (mut out, mut at) = (
        DeviceTensor::<f32>::zeros(&s, [3]).unwrap(),
        DeviceTensor::<i64>::zeros(&s, [3]).unwrap(),
    );
    let e = max_dim(&x, 0, false, &mut out, &mut at, &s).unwrap_err();
    assert!(
        matches!(
            e,
            Error::ShapeMismatch {
                argument: "indices",
                ..
            }
        ),
        "{e:?}"
    );
    // A one-element output matches a 0-D result, as in CANN.
    let v = DeviceTensor::from_array(&s, &array![5.0f32]).unwrap();
    let (mut o1, mut i1) = (
        DeviceTensor::<f32>::zeros(&s, [1]).unwrap(),
        DeviceTensor::<i64>::zeros(&s, [1]).unwrap(),
    );
    max_dim(&v, 0, false, &mut o1, &mut i1, &s).unwrap();
    assert_eq!(o1.to_array::<IxDyn>(&s).unwrap(), array![5.0f32].into_dyn());
    // BF16 is on Atlas A2/A3 only; i32 is no self dtype (but any indices dtype is).
    let b = DeviceTensor::from_array(&s, &array![bf16::ONE]).unwrap();
    let e = max_dim_new::<bf16, i64, DeviceTensor<bf16>, DeviceTensor<i64>>(&b, 0, false, &s)
        .unwrap_err();
    assert!(
        matches!(
            e,
            Error::UnsupportedDtype {
                argument: "x (self)",
                ..
            }
        ),
        "{e:?}"
    );
    let k = DeviceTensor::from_array(&s, &array![1i32]).unwrap();
    let e = max_dim_new::<i32, i64, DeviceTensor<i32>, DeviceTensor<i64>>(&k, 0, false, &s)
        .unwrap_err();
    assert!(
        matches!(
            e,
            Error::UnsupportedDtype {
                argument: "x (self)",
                ..
            }
        ),
        "{e:?}"
    );
}
