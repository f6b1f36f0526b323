//! Invalid inputs, generated like the property cases: non-broadcastable pairs, wrong
//! output shapes, more than 8 dims, bf16 on an Ascend910A, any call on an Ascend310B,
//! tensors of another device. Always a typed `Err`, never a panic, no FFI call of the
//! operator (`aclCreateTensor` / phase 1 call counts unchanged) and the simulator's live
//! counters unchanged. One `#[test]`: counters are process-global.

use crate::common;

use ascendcl::{DeviceTensor, Error, mish_backward};
use common::props;
use common::*;
use half::bf16;
use ndarray::{ArrayD, IxDyn};
use proptest::prelude::*;
use std::panic::{AssertUnwindSafe, catch_unwind};

#[derive(Debug, Clone)]
enum Bad {
    NotBroadcastable,
    WrongOutput,
}

fn zeros(shape: &[usize]) -> ArrayD<f32> {
    ArrayD::zeros(IxDyn(shape))
}

fn snapshot() -> (ascend_sim::Counters, u64, u64) {
    (
        ascend_sim::counters(),
        ascend_sim::call_count("aclCreateTensor"),
        ascend_sim::call_count("aclnnMishBackwardGetWorkspaceSize"),
    )
}

#[test]
fn invalid_inputs_are_typed_errors_without_side_effects() {
    let _serial = LeakCheck::start();
    let a2 = device(A2).stream().unwrap();
    let strategy = (
        props::shape(4096),
        any::<u64>(),
        prop_oneof![Just(Bad::NotBroadcastable), Just(Bad::WrongOutput)],
        0usize..8,
    )
        .prop_filter("needs a dim", |(s, ..)| !s.is_empty());
    let mut runner = props::runner(256, "tests/proofs/invalid.proptest-regressions");
    let counts = [std::cell::Cell::new(0usize), std::cell::Cell::new(0usize)];
    runner
        .run(&strategy, |(shape, seed, bad, which)| {
            let mut g = shape.clone();
            let mut x = shape.clone();
            let mut out = shape.clone();
            let axis = (seed as usize) % shape.len();
            match bad {
                Bad::NotBroadcastable => {
                    // two different sizes, neither 1
                    g[axis] = 2 + (seed as usize >> 8) % 5;
                    x[axis] = g[axis] + 1;
                    out = g.clone();
                    counts[0].set(counts[0].get() + 1);
                }
                Bad::WrongOutput => {
                    match which % 3 {
                        0 => out[axis] += 1,
                        1 if out.len() < 8 => out.insert(0, 2),
                        1 => out[axis] += 2,
                        _ => {
                            out.pop();
                        }
                    }
                    counts[1].set(counts[1].get() + 1);
                }
            }
            let gd = DeviceTensor::from_array(&a2, &zeros(&g)).unwrap();
            let xd = DeviceTensor::from_array(&a2, &zeros(&x)).unwrap();
            let mut od = DeviceTensor::<f32>::zeros(&a2, &out).unwrap();
            let before = snapshot();
            let r = catch_unwind(AssertUnwindSafe(|| mish_backward(&gd, &xd, &mut od, &a2)));
            let after = snapshot();
            let r = r.map_err(|_| TestCaseError::fail("panicked"))?;
            let typed = matches!(
                (&bad, &r),
                (Bad::NotBroadcastable, Err(Error::NotBroadcastable { .. }))
                    | (
                        Bad::WrongOutput,
                        Err(Error::ShapeMismatch {
                            argument: "out (grad_input)",
                            ..
                        })
                    )
            );
            prop_assert!(typed, "{bad:?} {g:?} {x:?} -> {out:?}: {r:?}");
            prop_assert_eq!(before, after);
            Ok(())
        })
        .unwrap();

    // More than 8 dims: rejected when building the tensor or the view.
    let before = snapshot();
    let nine = ArrayD::<f32>::zeros(IxDyn(&[1; 9]));
    assert!(matches!(
        DeviceTensor::from_array(&a2, &nine),
        Err(Error::TooManyDims {
            dims: 9,
            max: 8,
            ..
        })
    ));
    assert!(matches!(
        DeviceTensor::<f32>::zeros(&a2, [1; 9]),
        Err(Error::TooManyDims { .. })
    ));
    assert_eq!(snapshot(), before);
    let t = DeviceTensor::from_array(&a2, &zeros(&[2, 3])).unwrap();
    let before = snapshot();
    assert!(matches!(
        t.view().reshape([1, 1, 1, 1, 1, 1, 1, 2, 3]),
        Err(Error::TooManyDims { .. })
    ));
    assert!(matches!(
        t.view().broadcast_to([1, 1, 1, 1, 1, 1, 1, 2, 3]),
        Err(Error::TooManyDims { .. })
    ));
    assert_eq!(snapshot(), before);

    // bf16 on an Ascend910A (every position), anything on an Ascend310B, another device.
    let s910 = device(A910).stream().unwrap();
    let b = DeviceTensor::from_array(&s910, &ArrayD::from_elem(IxDyn(&[4]), bf16::ONE)).unwrap();
    let f = DeviceTensor::from_array(&s910, &zeros(&[4])).unwrap();
    let mut fo = DeviceTensor::<f32>::zeros(&s910, [4]).unwrap();
    let mut bo = DeviceTensor::<bf16>::zeros(&s910, [4]).unwrap();
    let before = snapshot();
    assert!(matches!(
        mish_backward(&b, &f, &mut fo, &s910),
        Err(Error::UnsupportedDtype {
            argument: "grad (grad_output)",
            ..
        })
    ));
    assert!(matches!(
        mish_backward(&f, &b, &mut fo, &s910),
        Err(Error::UnsupportedDtype {
            argument: "x (self)",
            ..
        })
    ));
    assert!(matches!(
        mish_backward(&f, &f, &mut bo, &s910),
        Err(Error::UnsupportedDtype {
            argument: "out (grad_input)",
            ..
        })
    ));
    assert!(matches!(
        mish_backward(&f, &f, &mut fo, &a2),
        Err(Error::DeviceMismatch { .. })
    ));
    assert_eq!(snapshot(), before);
    let s310 = device(B310).stream().unwrap();
    let f3 = DeviceTensor::from_array(&s310, &zeros(&[4])).unwrap();
    let mut o3 = DeviceTensor::<f32>::zeros(&s310, [4]).unwrap();
    let before = snapshot();
    assert!(matches!(
        mish_backward(&f3, &f3, &mut o3, &s310),
        Err(Error::UnsupportedOperator { .. })
    ));
    assert_eq!(snapshot(), before);
    println!(
        "invalid inputs: {} non-broadcastable + {} wrong-output-shape random cases, plus >8 dims, bf16 on 910A, 310B and device-mismatch cases: all typed errors, counters unchanged",
        counts[0].get(),
        counts[1].get()
    );
}
