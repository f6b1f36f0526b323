//! The argument model of `operator!` without walls: any number of arguments, optional
//! scalars and tensors (NULL), per-argument dtype rules, and the operators that need them
//! (`aclnnClamp`), against the CPU reference.

mod common;

use ascendcl::protocol::rules;
use ascendcl::{DType, DeviceTensor, Error, SocFamily};
use common::*;

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
