//! aclnnArgMax and aclnnMean through the C ABI: the vendor's phase-1 unit-test cases of
//! ArgMax replayed (expected status per case; the vendor has none for Mean, whose checks
//! are exercised in the vendor's order instead), and both kernels on the last dim, an inner
//! dim, several dims, 0-D and empty inputs.

use crate::common;
use crate::nn_cases;
use crate::opkit;

use ascend_sim::symbol;
use ascend_sys::*;
use common::*;
use opkit::{Got, Phase2};
use std::ffi::c_void;

type ArgMaxPhase1 = unsafe extern "C" fn(
    *const aclTensor,
    i64,
    bool,
    *mut aclTensor,
    *mut u64,
    *mut *mut aclOpExecutor,
) -> i32;
type MeanPhase1 = unsafe extern "C" fn(
    *const aclTensor,
    *const aclIntArray,
    bool,
    aclDataType,
    *mut aclTensor,
    *mut u64,
    *mut *mut aclOpExecutor,
) -> i32;

fn entry<F: Copy>(name: &str) -> F {
    let p = symbol(name).unwrap_or_else(|| panic!("{name} is simulated"));
    assert_eq!(size_of::<F>(), size_of::<*const c_void>());
    // SAFETY: `F` is the C prototype of `name` (each caller names its own).
    unsafe { std::mem::transmute_copy::<*const c_void, F>(&p) }
}

fn arg_max_p1(x: *mut aclTensor, dim: i64, keep: bool, out: *mut aclTensor) -> Got {
    let f: ArgMaxPhase1 = entry("aclnnArgMaxGetWorkspaceSize");
    // SAFETY: simulator handles or NULL; valid out-pointers.
    opkit::p1(|ws, ex| unsafe { f(x, dim, keep, out, ws, ex) })
}

fn mean_p1(
    x: *mut aclTensor,
    dims: *const aclIntArray,
    keep: bool,
    dtype: aclDataType,
    out: *mut aclTensor,
) -> Got {
    let f: MeanPhase1 = entry("aclnnMeanGetWorkspaceSize");
    // SAFETY: simulator handles or NULL; valid out-pointers.
    opkit::p1(|ws, ex| unsafe { f(x, dims, keep, dtype, out, ws, ex) })
}

/// ops-math `math/arg_max_v2/tests/ut/op_api/test_aclnn_arg_max_v2.cpp` and
/// `tests/ut/op_host/op_api/test_aclnn_argmax.cpp`: product (`ascend310P_` cases on the
/// 310P, the rest on Atlas A2), self, dim, keepdim, out, expected (`-`: the case checks
/// no status).
const ARG_MAX_CASES: &str = "
A2 F32:3,3,3 2 false I32:3,3 OK
A2 F32:3,3,3 2 false I64:3,3 OK
A2 F16:3,3,3 2 false I64:3,3 OK
A2 F32:3,3,3 2 true I64:3,3,1 OK
A2 F32:10 0 false I64:- OK
A2 null 0 false null NULLPTR
A2 BOOL:3,3,3 2 false I64:3,3 INVALID
A2 F32:3,3,3 5 false I64:3,3 INVALID
A2 F32:3,3,3 -1 false I64:3,3 OK
A2 BF16:3,3,3 2 false I64:3,3 OK
A2 I8:3,3,3 2 false I64:3,3 OK
A2 I32:3,3,3 2 false I32:3,3 OK
A2 I64:3,3,3 2 false I64:3,3 OK
A2 U8:3,3,3 2 false I64:3,3 OK
A2 F64:3,3,3 2 false I64:3,3 OK
A2 I16:3,3,3 2 false I64:3,3 OK
A2 F32:0,3,3 0 false I64:0,3 OK
A2 I32:1,1,1,1,1,1,1,3 7 false I64:1,1,1,1,1,1,1 OK
A2 I32:1,1,1,1,1,1,3,1 6 false I64:1,1,1,1,1,1,1 OK
A2 F32:1,1,1,1,1,1,1,3 7 false I64:1,1,1,1,1,1,1 OK
A2 F32:3,4 0 false I64:4 OK
310P F16:3,4,6 0 false I64:4,6 OK
A2 F16:16,40,10 1 false I64:16,10 OK
A2 F32:16,100,2 1 false I64:16,2 OK
A2 F64:512,100,2 0 false I64:100,2 OK
A2 F64:256,40,10 0 false I64:40,10 OK
A2 I8:512,100,2 1 false I64:512,2 OK
A2 I16:512,100,2 0 false I64:100,2 OK
A2 I32:512,100,2 1 false I64:512,2 OK
A2 I64:512,100,2 0 false I64:100,2 OK
A2 U8:512,100,2 0 false I64:100,2 OK
A2 BOOL:512,100,2 1 false I64:512,2 INVALID
A2 U32:512,100,2 1 false I64:512,2 INVALID
A2 U64:512,100,2 1 false I64:512,2 INVALID
A2 F32:3,5,7,6:ND:210,42,1,7:0:3,5,6,7 0 false I64:5,7,6:ND:42,1,7:0:5,6,7 OK
A2 I8:512,0,2 0 false I64:512,2 OK
A2 I64:2,2,2,2,2,2,2,2 0 false I64:2,2,2,2,2,2,2 -
A2 I64:- 0 false I64:- OK
A2 I64:2,2,2,2,2,2,2,2 7 false I64:2,2,2,2,2,2,2 OK
";

#[test]
fn the_vendors_arg_max_phase1_unit_test_cases_replay() {
    let cases = nn_cases::rows(ARG_MAX_CASES);
    assert_eq!(cases.len(), 39);
    for device in [0, 2] {
        let cases: Vec<Vec<String>> = cases
            .iter()
            .filter(|c| (c[0] == "310P") == (device == 2))
            .map(|c| c.iter().map(|s| s.to_string()).collect())
            .collect();
        on_device(device, move || {
            assert_eq!(
                FIVE_SOCS[device as usize].starts_with("Ascend310P"),
                device == 2
            );
            for c in &cases {
                let (x, out) = (nn_cases::tensor(&c[1]), nn_cases::tensor(&c[4]));
                let rc = opkit::status(arg_max_p1(x, c[2].parse().unwrap(), c[3] == "true", out));
                if c[5] != "-" {
                    assert_eq!(rc, nn_cases::status(&c[5]), "case {c:?}: {}", err_msg());
                }
                [x, out].into_iter().for_each(nn_cases::destroy);
            }
        });
    }
}

#[test]
fn arg_max_checks_bf16_per_product_and_the_result_shape_last() {
    // BF16 on the 310B (its list has it) but not on the training series.
    for (device, want) in [(3, ACLNN_SUCCESS), (1, ACLNN_ERR_PARAM_INVALID)] {
        on_device(device, move || {
            let (x, o) = (opkit::meta(&[3, 4], ACL_BF16), opkit::meta(&[3], ACL_INT64));
            assert_eq!(
                opkit::status(arg_max_p1(x, 1, false, o)),
                want,
                "{}",
                err_msg()
            );
            [x, o].into_iter().for_each(destroy_tensor);
        });
    }
    on_device(0, || {
        // A wrong out shape fails after the dim check, and not for an empty self.
        let (x, o) = (
            opkit::meta(&[3, 4], ACL_FLOAT),
            opkit::meta(&[4], ACL_INT64),
        );
        opkit::invalid(arg_max_p1(x, 1, false, o), "out shape");
        opkit::invalid(arg_max_p1(x, 2, false, o), "dim");
        let e = opkit::meta(&[0, 4], ACL_FLOAT);
        assert_eq!(opkit::status(arg_max_p1(e, 1, false, o)), ACLNN_SUCCESS);
        [x, o, e].into_iter().for_each(destroy_tensor);
    });
}

#[test]
fn mean_checks_in_the_vendors_order() {
    on_device(0, || {
        let x = opkit::meta(&[2, 3, 4], ACL_FLOAT);
        let o = opkit::meta(&[2, 4], ACL_FLOAT);
        let d1 = opkit::int_array(&[1]);
        opkit::nullptr(mean_p1(x, std::ptr::null(), false, ACL_FLOAT, o), "dim");
        opkit::nullptr(
            mean_p1(std::ptr::null_mut(), d1, false, ACL_FLOAT, o),
            "self",
        );
        // dtype before out's dtype; castability after both lists.
        let b = opkit::meta(&[2, 4], ACL_BOOL);
        opkit::invalid(mean_p1(x, d1, false, ACL_BOOL, b), "dtype BOOL");
        let i = opkit::meta(&[2, 4], ACL_INT32);
        opkit::invalid(mean_p1(x, d1, false, ACL_INT32, i), "can not cast");
        // Dims out of range or repeated, then the shape.
        let bad = opkit::int_array(&[3]);
        opkit::invalid(mean_p1(x, bad, false, ACL_FLOAT, o), "out of range");
        let twice = opkit::int_array(&[1, -2]);
        opkit::invalid(mean_p1(x, twice, false, ACL_FLOAT, o), "more than once");
        let wrong = opkit::meta(&[2, 3], ACL_FLOAT);
        opkit::invalid(mean_p1(x, d1, false, ACL_FLOAT, wrong), "reduced shape");
        assert_eq!(
            opkit::status(mean_p1(x, d1, false, ACL_FLOAT, o)),
            ACLNN_SUCCESS
        );
        // An empty self succeeds whatever out's shape; a complex out cannot hold NaN.
        let e = opkit::meta(&[2, 0, 4], ACL_FLOAT);
        assert_eq!(
            opkit::status(mean_p1(e, d1, false, ACL_FLOAT, wrong)),
            ACLNN_SUCCESS
        );
        let c = opkit::meta(&[2, 4], ACL_COMPLEX64);
        opkit::invalid(mean_p1(e, d1, false, ACL_COMPLEX64, c), "NaN");
        [d1, bad, twice]
            .into_iter()
            .for_each(opkit::destroy_int_array);
        [x, o, b, i, wrong, e, c]
            .into_iter()
            .for_each(destroy_tensor);
    });
}

fn phase2(name: &str) -> Phase2 {
    entry(name)
}

#[test]
fn arg_max_over_the_last_and_an_inner_dim() {
    on_device(0, || {
        // [2, 3, 2]: values chosen with a tie (first wins) and a NaN (the maximum).
        let v = [
            1.0f32,
            5.0,
            7.0,
            5.0,
            7.0,
            f32::NAN,
            0.0,
            2.0,
            0.0,
            9.0,
            -1.0,
            2.0,
        ];
        let xp = opkit::upload(&v);
        let x = tensor(&[2, 3, 2], ACL_FLOAT, xp);
        for (dim, dims, want) in [
            (2i64, vec![2i64, 3], vec![1i64, 0, 1, 1, 1, 1]),
            (1, vec![2, 2], vec![1, 2, 0, 1]),
        ] {
            let op = opkit::upload(&[0i64; 6]);
            let o = tensor(&dims, ACL_INT64, op);
            opkit::run(arg_max_p1(x, dim, false, o), phase2("aclnnArgMax"));
            assert_eq!(d2h::<i64>(op, want.len()), want, "dim {dim}");
            destroy_tensor(o);
            free(op);
        }
        destroy_tensor(x);
        free(xp);
    });
}

#[test]
fn mean_over_trailing_inner_and_all_dims() {
    on_device(0, || {
        let v: Vec<f32> = (0..24).map(|k| k as f32).collect();
        let xp = opkit::upload(&v);
        let x = tensor(&[2, 3, 4], ACL_FLOAT, xp);
        let sum = |f: &dyn Fn(usize, usize, usize) -> bool| -> (f32, f32) {
            let (mut s, mut n) = (0.0, 0.0);
            for a in 0..2 {
                for b in 0..3 {
                    for c in 0..4 {
                        if f(a, b, c) {
                            s += v[a * 12 + b * 4 + c];
                            n += 1.0;
                        }
                    }
                }
            }
            (s, n)
        };
        let mean = |f: &dyn Fn(usize, usize, usize) -> bool| {
            let (s, n) = sum(f);
            s / n
        };
        let cases: Vec<(Vec<i64>, Vec<i64>, Vec<f32>)> = vec![
            (
                vec![-1],
                vec![2, 3],
                (0..6).map(|o| mean(&|a, b, _| a * 3 + b == o)).collect(),
            ),
            (
                vec![1],
                vec![2, 4],
                (0..8).map(|o| mean(&|a, _, c| a * 4 + c == o)).collect(),
            ),
            (
                vec![0, 2],
                vec![3],
                (0..3).map(|o| mean(&|_, b, _| b == o)).collect(),
            ),
            (vec![], vec![], vec![mean(&|_, _, _| true)]),
        ];
        for (dims, shape, want) in cases {
            let op = opkit::upload(&vec![0.0f32; want.len()]);
            let o = tensor(&shape, ACL_FLOAT, op);
            let d = opkit::int_array(&dims);
            opkit::run(mean_p1(x, d, false, ACL_FLOAT, o), phase2("aclnnMean"));
            assert_eq!(d2h::<f32>(op, want.len()), want, "dims {dims:?}");
            opkit::destroy_int_array(d);
            destroy_tensor(o);
            free(op);
        }
        // An empty self fills out with NaN.
        let e = tensor(&[0, 2], ACL_FLOAT, xp);
        let op = opkit::upload(&[0.0f32; 2]);
        let o = tensor(&[2], ACL_FLOAT, op);
        let d = opkit::int_array(&[0]);
        opkit::run(mean_p1(e, d, false, ACL_FLOAT, o), phase2("aclnnMean"));
        assert!(d2h::<f32>(op, 2).iter().all(|v| v.is_nan()));
        opkit::destroy_int_array(d);
        [x, e, o].into_iter().for_each(destroy_tensor);
        [xp, op].into_iter().for_each(free);
    });
}
