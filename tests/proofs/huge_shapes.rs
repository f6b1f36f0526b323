//! Shape and size arithmetic is checked everywhere: huge dims give typed errors with the
//! true figures, never a panic (debug builds check overflow) or a wrapped count.

use crate::common;

use ascendcl::{DeviceTensor, Error, shape::Dims};
use common::*;
use ndarray::array;
use proptest::prelude::*;

/// The exact product of `shape`, when it fits in u128.
fn product(shape: &[usize]) -> Option<u128> {
    if shape.contains(&0) {
        return Some(0);
    }
    shape
        .iter()
        .try_fold(1u128, |acc, d| acc.checked_mul(*d as u128))
}

#[test]
fn wrapped_counts_are_errors_with_the_true_figures() {
    let _check = LeakCheck::start();
    let s = device(A2).stream().unwrap();
    for shape in [
        vec![1usize << 32, 1 << 32],
        vec![(1usize << 62) + 1, 4],
        vec![usize::MAX, 2],
        vec![256; 8],
    ] {
        let e = DeviceTensor::<f32>::zeros(&s, &shape).unwrap_err();
        let Error::TooManyElements {
            shape: reported,
            elements,
            ..
        } = &e
        else {
            panic!("{shape:?}: {e:?}");
        };
        assert_eq!(reported, &shape);
        assert_eq!(elements, &product(&shape).unwrap().to_string(), "{e}");
    }
    let e = DeviceTensor::<f32>::zeros(&s, [usize::MAX, 2]).unwrap_err();
    assert!(
        e.to_string().contains("36893488147419103230"),
        "the true count, not the wrapped 18446744073709551614: {e}"
    );

    let t = DeviceTensor::from_array(&s, &array![[1.0f32, 2.0, 3.0], [4.0, 5.0, 6.0]]).unwrap();
    for target in [
        vec![1usize << 32, 1 << 32, 3],
        vec![(1usize << 62) + 1, 2, 3],
    ] {
        assert!(matches!(
            t.view().broadcast_to(&target),
            Err(Error::TooManyElements { .. })
        ));
    }
    assert!(matches!(
        t.view().reshape([1 << 32, 1 << 32]),
        Err(Error::TooManyElements { .. })
    ));
    // A zero dim makes the tensor empty however large the others are.
    assert_eq!(
        Dims::new("x", &[0, usize::MAX, usize::MAX])
            .unwrap()
            .numel(),
        0
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Any shape: `Dims::new` accepts exactly the shapes whose count fits in i64, and then
    /// `numel` is that count.
    #[test]
    fn dims_accept_exactly_the_addressable_shapes(
        shape in proptest::collection::vec(
            prop_oneof![0usize..4, 1usize..100_000, Just(usize::MAX), (1usize << 20)..(1usize << 40)],
            0..9,
        )
    ) {
        let _gate = crate::common::shared();
        let exact = product(&shape);
        let fits = shape.contains(&0) || exact.is_some_and(|n| n <= i64::MAX as u128);
        match Dims::new("x", &shape) {
            Ok(d) => {
                prop_assert!(fits);
                prop_assert_eq!(d.numel() as u128, exact.unwrap());
            }
            Err(Error::TooManyElements { elements, .. }) => {
                prop_assert!(!fits);
                if let Some(n) = exact {
                    prop_assert_eq!(elements, n.to_string());
                }
            }
            Err(e) => prop_assert!(false, "{e:?}"),
        }
    }

    /// Views of a small tensor broadcast, reshaped or sliced with huge figures end in
    /// typed errors or valid views, never a panic.
    #[test]
    fn huge_view_arguments_never_panic(
        a in prop_oneof![1usize..8, Just(usize::MAX), (1usize << 31)..(1usize << 63)],
        b in prop_oneof![1usize..8, Just(usize::MAX), (1usize << 31)..(1usize << 63)],
        step in prop_oneof![0usize..4, Just(usize::MAX)],
    ) {
        let _check = LeakCheck::start();
        let s = device(A2).stream().unwrap();
        let t = DeviceTensor::from_array(&s, &array![[1.0f32, 2.0, 3.0], [4.0, 5.0, 6.0]]).unwrap();
        let _ = t.view().broadcast_to([a, b, 2, 3]);
        let _ = t.view().reshape([a, b]);
        let _ = t.view().slice(1, a.min(3), b, step);
        let _ = DeviceTensor::<f32>::zeros(&s, [a, b]);
    }
}
