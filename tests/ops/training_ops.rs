//! The training operators against their CPU references, on the simulator: dtypes, 0-D,
//! empty, broadcast and batch-broadcast shapes, transposed and strided views, judged by
//! the precision standard; and bad input refused with typed errors before any C call.

use crate::common;

use ascendcl::element::Promote;
use ascendcl::reference;
use ascendcl::{DType, DeviceTensor, Element, Reduction};
use common::held::{Lay, broadcast_shapes, hold, lay};
use common::*;
use half::{bf16, f16};
use ndarray::{ArrayD, IxDyn};
use proptest::prelude::*;

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 24,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

fn judge<O: Element>(
    got: &ArrayD<O>,
    want: &ArrayD<O>,
    t: f64,
    what: &str,
) -> Result<(), TestCaseError> {
    prop_assert_eq!(got.shape(), want.shape(), "{}", what);
    let (mere, mare) = mere_mare(got, want);
    prop_assert!(
        mere < t && mare < 10.0 * t,
        "{what}: MERE {mere:e} MARE {mare:e} (T {t:e})"
    );
    Ok(())
}

fn binary<A: Promote<B>, B: Element, O: Element>(
    mul: bool,
    (sa, sb, so): (Vec<usize>, Vec<usize>, Vec<usize>),
    lays: (Lay, Lay, Lay),
    alpha: f64,
    seed: u64,
) -> Result<(), TestCaseError> {
    let _check = LeakCheck::start();
    let s = device(A2).stream().unwrap();
    let a = array::<A>(&sa, seed, -4.0, 4.0);
    let b = array::<B>(&sb, seed + 1, -4.0, 4.0);
    let (da, db) = (hold(&s, &a, lays.0), hold(&s, &b, lays.1));
    let mut out = hold(
        &s,
        &ArrayD::<O>::from_elem(IxDyn(&so), O::from_f64(0.0)),
        lays.2,
    );
    let want: ArrayD<O> = if mul {
        ascendcl::mul(da.view(), db.view(), out.view_mut(), &s).unwrap();
        reference::cast(&reference::mul(a.view(), b.view()).unwrap())
    } else {
        ascendcl::add(da.view(), db.view(), alpha, out.view_mut(), &s).unwrap();
        reference::cast(&reference::add(a.view(), b.view(), alpha).unwrap())
    };
    judge(
        &out.get(&s),
        &want,
        threshold_for(A::DTYPE, B::DTYPE, O::DTYPE),
        "binary",
    )
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn add_and_mul_match_the_reference(
        shapes in broadcast_shapes(4),
        lays in (lay(), lay(), lay()),
        types in 0usize..5,
        alpha in prop_oneof![Just(1.0), Just(-0.5), Just(2.0)],
        mul in any::<bool>(),
        seed in 0u64..1000,
    ) {
        match types {
            0 => binary::<f32, f32, f32>(mul, shapes, lays, alpha, seed)?,
            1 => binary::<f16, f16, f16>(mul, shapes, lays, alpha, seed)?,
            2 => binary::<bf16, bf16, bf16>(mul, shapes, lays, alpha, seed)?,
            3 => binary::<f16, f32, f32>(mul, shapes, lays, alpha, seed)?,
            _ => binary::<bf16, f32, bf16>(mul, shapes, lays, alpha, seed)?,
        }
    }
}

fn reduce<T: Element, O: Element>(
    shape: Vec<usize>,
    dims: Vec<i64>,
    keep: bool,
    l: Lay,
    seed: u64,
) -> Result<(), TestCaseError> {
    let _check = LeakCheck::start();
    let s = device(A2).stream().unwrap();
    let x = array::<T>(&shape, seed, -2.0, 2.0);
    let want: ArrayD<O> = reference::reduce_sum_as(x.view(), &dims, keep).unwrap();
    let dx = hold(&s, &x, l);
    let mut out = DeviceTensor::<O>::zeros(&s, want.shape()).unwrap();
    ascendcl::reduce_sum(dx.view(), &dims, keep, &mut out, &s).unwrap();
    let t = threshold(T::DTYPE).max(threshold(O::DTYPE));
    judge(&out.to_array(&s).unwrap(), &want, t, "reduce_sum")
}

/// A shape of up to 4 dims and a valid dims list for it (distinct, possibly negative,
/// possibly empty).
fn reduce_case() -> impl Strategy<Value = (Vec<usize>, Vec<i64>)> {
    prop::collection::vec(prop_oneof![1 => Just(0usize), 6 => 1usize..=4], 0..=4).prop_flat_map(
        |shape| {
            let r = shape.len().max(1);
            (
                Just(shape),
                prop::sample::subsequence((0..r).collect::<Vec<_>>(), 0..=r),
                any::<bool>(),
            )
                .prop_map(move |(shape, dims, neg)| {
                    let dims = dims
                        .into_iter()
                        .map(|d| if neg { d as i64 - r as i64 } else { d as i64 })
                        .collect();
                    (shape, dims)
                })
        },
    )
}

fn loss<X: Promote<T>, T: Element>(
    (sx, st, _): (Vec<usize>, Vec<usize>, Vec<usize>),
    reduction: Reduction,
    lays: (Lay, Lay),
    seed: u64,
) -> Result<(), TestCaseError> {
    let _check = LeakCheck::start();
    let s = device(A2).stream().unwrap();
    let x = array::<X>(&sx, seed, -2.0, 2.0);
    let y = array::<T>(&st, seed + 1, -2.0, 2.0);
    let (dx, dy) = (hold(&s, &x, lays.0), hold(&s, &y, lays.1));
    let want: ArrayD<f32> =
        reference::cast(&reference::mse_loss(x.view(), y.view(), reduction).unwrap());
    let mut out = DeviceTensor::<f32>::zeros(&s, want.shape()).unwrap();
    ascendcl::mse_loss(dx.view(), dy.view(), reduction, &mut out, &s).unwrap();
    let t = threshold_for(X::DTYPE, T::DTYPE, DType::F32);
    judge(&out.to_array(&s).unwrap(), &want, t, "mse_loss")?;
    // The backward of the same loss, with a gradient of the reduced shape.
    let g = array::<X>(want.shape(), seed + 2, -1.0, 1.0);
    let yx = y.mapv(|v| X::from_f64(v.to_f64()));
    let want: ArrayD<X> =
        reference::mse_loss_backward(g.view(), x.view(), yx.view(), reduction).unwrap();
    let (dg, dyx) = (hold(&s, &g, Lay::Whole), hold(&s, &yx, lays.1));
    let mut out = DeviceTensor::<X>::zeros(&s, want.shape()).unwrap();
    ascendcl::mse_loss_backward(dg.view(), dx.view(), dyx.view(), reduction, &mut out, &s).unwrap();
    judge(
        &out.to_array(&s).unwrap(),
        &want,
        threshold(X::DTYPE),
        "mse_loss_backward",
    )
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn reduce_sum_matches_the_reference(
        (shape, dims) in reduce_case(),
        keep in any::<bool>(),
        l in lay(),
        types in 0usize..3,
        seed in 0u64..1000,
    ) {
        match types {
            0 => reduce::<f32, f32>(shape, dims, keep, l, seed)?,
            1 => reduce::<f16, f32>(shape, dims, keep, l, seed)?,
            _ => reduce::<bf16, bf16>(shape, dims, keep, l, seed)?,
        }
    }

    #[test]
    fn mse_loss_and_its_backward_match_the_reference(
        shapes in broadcast_shapes(3),
        reduction in prop::sample::select(Reduction::ALL.to_vec()),
        lays in (lay(), lay()),
        types in 0usize..3,
        seed in 0u64..1000,
    ) {
        match types {
            0 => loss::<f32, f32>(shapes, reduction, lays, seed)?,
            1 => loss::<f16, f16>(shapes, reduction, lays, seed)?,
            _ => loss::<bf16, f32>(shapes, reduction, lays, seed)?,
        }
    }

    #[test]
    fn fill_and_zero_write_only_the_view(
        shape in prop::collection::vec(1usize..=3, 0..=3),
        l in lay(),
        value in prop_oneof![Just(0.5f64), Just(-3.0), Just(1e3)],
        seed in 0u64..1000,
    ) {
        let _check = LeakCheck::start();
        let s = device(A2).stream().unwrap();
        let x = array::<f32>(&shape, seed, -1.0, 1.0);
        let mut dx = hold(&s, &x, l);
        let whole_before = dx.t.to_array::<ndarray::IxDyn>(&s).unwrap();
        ascendcl::fill_inplace(dx.view_mut(), value, &s).unwrap();
        prop_assert!(dx.get(&s).iter().all(|v| f64::from(*v) == value));
        ascendcl::zero_inplace(dx.view_mut(), &s).unwrap();
        prop_assert!(dx.get(&s).iter().all(|v| *v == 0.0));
        // Outside the view (the strided layout's gaps) nothing changed.
        let whole = dx.t.to_array::<ndarray::IxDyn>(&s).unwrap();
        let outside = whole.iter().zip(&whole_before).filter(|(a, b)| a != b).count();
        prop_assert_eq!(outside, x.len() - x.iter().filter(|v| **v == 0.0).count());
    }
}

/// Bad input of every kind is a typed error naming the argument (`rust (c)`), and no
/// phase 1 runs.
#[test]
fn bad_input_is_refused_before_any_c_call() {
    let _check = LeakCheck::start();
    let s = device(A2).stream().unwrap();
    let z = |shape: &[usize]| DeviceTensor::<f32>::zeros(&s, shape).unwrap();
    let (a23, a32, a4) = (z(&[2, 3]), z(&[3, 2]), z(&[4]));
    let mut o23 = z(&[2, 3]);
    let mut o0 = z(&[]);
    let phase1 = || {
        [
            "Add",
            "Mul",
            "ReduceSum",
            "MseLoss",
            "MseLossBackward",
            "InplaceAdd",
        ]
        .map(|n| ascend_sim::call_count(&format!("aclnn{n}GetWorkspaceSize")))
    };
    let before = phase1();
    let label = |e: ascendcl::Error| match e {
        ascendcl::Error::NotBroadcastable { argument, .. }
        | ascendcl::Error::ShapeMismatch { argument, .. } => argument.to_owned(),
        ascendcl::Error::InvalidArgument(text) => text,
        other => panic!("unexpected {other:?}"),
    };
    let e = ascendcl::add(&a23, &a4, 1.0, &mut o23, &s).unwrap_err();
    assert_eq!(label(e), "a (self)");
    let e = ascendcl::mul(&a23, &a23, &mut o0, &s).unwrap_err();
    assert_eq!(label(e), "out");
    let e = ascendcl::add_inplace(&mut o23, &a32, 1.0, &s).unwrap_err();
    assert_eq!(label(e), "a (selfRef)");
    let e = ascendcl::reduce_sum(&a23, &[2], false, &mut o0, &s).unwrap_err();
    assert_eq!(label(e), "dims holds a dim outside -rank..rank");
    let e = ascendcl::reduce_sum(&a23, &[1, -1], false, &mut o0, &s).unwrap_err();
    assert_eq!(label(e), "dims holds a dim twice");
    let e = ascendcl::reduce_sum(&a23, &[0; 9], false, &mut o0, &s).unwrap_err();
    assert_eq!(label(e), "dims has more elements than an IntList holds");
    let e = ascendcl::reduce_sum(&a23, &[1], true, &mut o0, &s).unwrap_err();
    assert_eq!(label(e), "out");
    let e = ascendcl::mse_loss(&a23, &a23, Reduction::Mean, &mut o23, &s).unwrap_err();
    assert_eq!(label(e), "out");
    let e = ascendcl::mse_loss(&a23, &a32, Reduction::None, &mut o23, &s).unwrap_err();
    assert_eq!(label(e), "x (self)");
    let e = ascendcl::mse_loss_backward(&o0, &a23, &a4, Reduction::Sum, &mut o23, &s).unwrap_err();
    assert_eq!(label(e), "x (self)");
    assert_eq!(phase1(), before, "no phase 1 ran");
    s.synchronize().unwrap();
}

/// The products the vendor documents: Add is not on 310P/310B, MseLossBackward not on the
/// training series; the typed error comes before any C call.
#[test]
fn operators_absent_from_a_product_are_typed_errors() {
    let _check = LeakCheck::start();
    let s = device(A910).stream().unwrap();
    let x = DeviceTensor::<f32>::zeros(&s, [2]).unwrap();
    let mut o = DeviceTensor::<f32>::zeros(&s, [2]).unwrap();
    let e = ascendcl::mse_loss_backward(&x, &x, &x, Reduction::None, &mut o, &s).unwrap_err();
    assert!(
        matches!(
            e,
            ascendcl::Error::UnsupportedOperator {
                operator: "aclnnMseLossBackward",
                ..
            }
        ),
        "{e:?}"
    );
    ascendcl::add(&x, &x, 1.0, &mut o, &s).unwrap();
    let s = device(B310).stream().unwrap();
    let x = DeviceTensor::<f32>::zeros(&s, [2]).unwrap();
    let mut o = DeviceTensor::<f32>::zeros(&s, [2]).unwrap();
    let e = ascendcl::add(&x, &x, 1.0, &mut o, &s).unwrap_err();
    assert!(
        matches!(
            e,
            ascendcl::Error::UnsupportedOperator {
                operator: "aclnnAdd",
                ..
            }
        ),
        "{e:?}"
    );
    let e = ascendcl::zero_inplace(&mut o, &s).unwrap_err();
    assert!(
        matches!(
            e,
            ascendcl::Error::UnsupportedOperator {
                operator: "aclnnInplaceZero",
                ..
            }
        ),
        "{e:?}"
    );
}
