//! `aclnnSoftmax`, `aclnnLogSoftmax`, `aclnnSoftmaxBackward` and `aclnnLogSoftmaxBackward`
//! through the C ABI: the vendor's phase-1 unit-test cases replayed (expected status per
//! case), the checks' order where it differs between the four, and the kernels along the
//! last dim and along an inner dim.

use crate::opkit;

use crate::common::*;
use ascend_sim::symbol;
use ascend_sys::*;
use opkit::{A2, P310, TRAINING};
use std::ffi::c_void;
use std::ptr::null_mut;

type Forward = unsafe extern "C" fn(
    *const aclTensor,
    i64,
    *mut aclTensor,
    *mut u64,
    *mut *mut aclOpExecutor,
) -> i32;
type Backward = unsafe extern "C" fn(
    *const aclTensor,
    *const aclTensor,
    i64,
    *mut aclTensor,
    *mut u64,
    *mut *mut aclOpExecutor,
) -> i32;

fn forward(name: &str, x: *mut aclTensor, dim: i64, out: *mut aclTensor) -> opkit::Got {
    let p = symbol(&format!("aclnn{name}GetWorkspaceSize")).expect("simulated");
    // SAFETY: the simulator's forward phase 1s have this prototype.
    let f = unsafe { std::mem::transmute::<*const c_void, Forward>(p) };
    // SAFETY: simulator handles or NULL; valid out-pointers.
    opkit::p1(|ws, ex| unsafe { f(x, dim, out, ws, ex) })
}

fn backward(
    name: &str,
    g: *mut aclTensor,
    y: *mut aclTensor,
    dim: i64,
    out: *mut aclTensor,
) -> opkit::Got {
    let p = symbol(&format!("aclnn{name}GetWorkspaceSize")).expect("simulated");
    // SAFETY: the simulator's backward phase 1s have this prototype.
    let f = unsafe { std::mem::transmute::<*const c_void, Backward>(p) };
    // SAFETY: simulator handles or NULL; valid out-pointers.
    opkit::p1(|ws, ex| unsafe { f(g, y, dim, out, ws, ex) })
}

fn phase2(name: &str) -> opkit::Phase2 {
    let p = symbol(&format!("aclnn{name}")).expect("simulated");
    // SAFETY: every phase 2 has the common prototype.
    unsafe { std::mem::transmute::<*const c_void, opkit::Phase2>(p) }
}

fn dtype(name: &str) -> aclDataType {
    match name {
        "F32" => ACL_FLOAT,
        "F16" => ACL_FLOAT16,
        "BF16" => ACL_BF16,
        "F64" => ACL_DOUBLE,
        "U32" => ACL_UINT32,
        other => panic!("dtype {other}"),
    }
}

/// A tensor for `dt dims` (`-` dims: 0-D; `T5x4` a {5,4} view with strides {1,5} over a
/// {4,5} storage, the vendor's non-contiguous case); `null` a NULL pointer.
fn operand(dt: &str, dims: &str) -> *mut aclTensor {
    if dt == "null" {
        return null_mut();
    }
    if dims == "T5x4" {
        return tensor_view(&[5, 4], &[1, 5], 0, &[4, 5], dtype(dt), null_mut());
    }
    let d: Vec<i64> = if dims == "-" {
        vec![]
    } else {
        dims.split(',').map(|v| v.parse().unwrap()).collect()
    };
    opkit::meta(&d, dtype(dt))
}

fn expected(text: &str) -> i32 {
    match text {
        "OK" => ACLNN_SUCCESS,
        "INVALID" => ACLNN_ERR_PARAM_INVALID,
        "NULLPTR" => ACLNN_ERR_PARAM_NULLPTR,
        other => panic!("{other}"),
    }
}

/// `activation/softmax_v2/tests/ut/op_api/test_aclnn_softmax.cpp` and
/// `activation/log_softmax_v2/tests/ut/op_api/test_aclnn_log_softmax.cpp`, one call per
/// line: operator, case, self dtype and dims, out dtype and dims, dim, expected status. A
/// case with several NULL calls has one line per call. Formats (NHWC, ...) are labels
/// to these operators and left out; every case runs on Atlas A2.
const FORWARD_CASES: &str = "
Softmax case_002 F16 2,3 F16 2,3 0 OK
Softmax case_003 F32 2,3 F32 2,3 0 OK
Softmax case_005 F32 1,2,3,4,5,6,7,8 F32 1,2,3,4,5,6,7,8 0 OK
Softmax case_006 F32 1,2,3,4,5,6,7,8 F32 1,2,3,4,5,6,7,8 7 OK
Softmax case_007 F32 1,2,3,4,5,6,7,8 F32 1,2,3,4,5,6,7,8 8 INVALID
Softmax case_008 F32 2,3 F32 2,3 0 OK
Softmax case_010 F32 2,0 F32 2,3 0 OK
Softmax case_011 F32 3,3 F32 2,3 0 INVALID
Softmax case_013 F32 T5x4 F32 5,4 0 OK
Softmax case_014 F32 1,2,3,4,5,6,7,8,9 F32 1,2,3,4,5,6,7,8,9 0 INVALID
Softmax case_015a null - F32 1,2,3,4,5,6,7,8 0 NULLPTR
Softmax case_015b F32 1,2,3,4,5,6,7,8 null - 0 NULLPTR
Softmax case_017 F16 2,3 F16 2,3 0 OK
Softmax case_zero_dim_num F32 - F32 - 0 OK
LogSoftmax case_000 F32 2,3 F32 2,3 0 OK
LogSoftmax case_001 F32 2,3 F32 2,3 0 OK
LogSoftmax case_002 F16 2,3 F32 2,3 0 OK
LogSoftmax case_003 F64 2,3 F32 2,3 0 OK
LogSoftmax case_008 F32 8 F32 8 0 OK
LogSoftmax case_009 F32 1,2,3 F32 1,2,3 0 OK
LogSoftmax case_010 F32 1,2,3,4,5 F32 1,2,3,4,5 0 OK
LogSoftmax case_011 F32 1,2,3,4,5,6,7,8 F32 1,2,3,4,5,6,7,8 0 OK
LogSoftmax case_012 F32 1,2,3,4,5 F32 1,2,3,4,5 4 OK
LogSoftmax case_013 F32 1,2,3,4,5 F32 1,2,3,4,5 -5 OK
LogSoftmax case_014 F32 2,3,4,5 F32 2,3,4,5 0 OK
LogSoftmax case_015 F32 2,3,4,5 F32 2,3,4,5 0 OK
LogSoftmax case_016 F32 2,3,4,5 F32 2,3,4,5 0 OK
LogSoftmax case_017 F32 2,3,4,5 F32 2,3,4,5 0 OK
LogSoftmax case_018 F32 1,2,3,4,5 F32 1,2,3,4,5 0 OK
LogSoftmax case_019 U32 1,2,3,4,5 U32 1,2,3,4,5 0 INVALID
LogSoftmax case_020 F32 1,2,3,4,5 F32 2,3,4,5,6 0 INVALID
LogSoftmax case_021 F32 1,2,3,4,5 F32 1,2,3,4,5 9 INVALID
LogSoftmax case_023 F32 2,0 F32 2,0 0 OK
LogSoftmax case_024 F32 T5x4 F32 T5x4 1 OK
LogSoftmax case_025a null - F32 2,3,4,5,6 0 NULLPTR
LogSoftmax case_025b F32 1,2,3,4,5 null - 0 NULLPTR
LogSoftmax case_026 F32 2,3,4,5,6,7,8,9,10 F32 2,3,4,5,6,7,8,9,10 0 INVALID
LogSoftmax case_027 F32 - F32 - 0 OK
LogSoftmax ascend910B2_case_BF16_910b BF16 8 BF16 8 0 OK
";

/// `activation/softmax_grad/tests/ut/op_api/test_aclnn_softmax_backward.cpp` and
/// `activation/log_softmax_grad/tests/ut/op_api/test_aclnn_logsoftmax_backward.cpp`:
/// operator, case, then gradOutput, output and out (dtype and dims each), dim, expected.
const BACKWARD_CASES: &str = "
SoftmaxBackward case_001 F32 2,3 F32 2,3 F32 2,3 0 OK
SoftmaxBackward case_002 F16 2,3 F16 2,3 F16 2,3 0 OK
SoftmaxBackward case_003 F64 2,3 F64 2,3 F64 2,3 0 INVALID
SoftmaxBackward case_005 F32 2,3 F64 2,3 F32 2,3 0 INVALID
SoftmaxBackward case_006 F32 2,3 F32 2,3 F32 2,3 0 OK
SoftmaxBackward case_007 F32 2,4 F32 2,3 F32 2,4 0 INVALID
SoftmaxBackward case_009 F32 2,3 F32 2,3 F32 2,3 0 OK
SoftmaxBackward case_010 F32 2,3 F32 2,3 F32 2,4 0 INVALID
SoftmaxBackward case_011 F32 1,2,3,4,5,6,7,8 F32 1,2,3,4,5,6,7,8 F32 1,2,3,4,5,6,7,8 0 OK
SoftmaxBackward case_012 F32 1,2,3,4,5,6,7,8 F32 1,2,3,4,5,6,7,8 F32 1,2,3,4,5,6,7,8 7 OK
SoftmaxBackward case_013 F32 1,2,3,4,5,6,7,8 F32 1,2,3,4,5,6,7,8 F32 1,2,3,4,5,6,7,8 8 INVALID
SoftmaxBackward case_014 F32 2,3 F32 2,3 F32 2,3 0 OK
SoftmaxBackward case_016 F32 2,0 F32 2,0 F32 2,3 0 OK
SoftmaxBackward case_017 F32 T5x4 F32 T5x4 F32 5,4 0 OK
SoftmaxBackward case_018 F32 1,2,3,4,5,6,7,8,9 F32 1,2,3,4,5,6,7,8,9 F32 1,2,3,4,5,6,7,8,9 0 INVALID
SoftmaxBackward case_019a null - F32 1,2,3,4,5,6,7,8 F32 1,2,3,4,5,6,7,8 0 NULLPTR
SoftmaxBackward case_019b F32 1,2,3,4,5,6,7,8 null - F32 1,2,3,4,5,6,7,8 0 NULLPTR
SoftmaxBackward case_019c F32 1,2,3,4,5,6,7,8 F32 1,2,3,4,5,6,7,8 null - 0 NULLPTR
SoftmaxBackward case_020 BF16 2,3 BF16 2,3 BF16 2,3 0 OK
SoftmaxBackward case_zero_dim_num F16 - F16 - F16 - 0 OK
LogSoftmaxBackward case_001 F32 2,3 F32 2,3 F32 2,3 0 OK
LogSoftmaxBackward case_002 F16 2,3 F16 2,3 F16 2,3 0 OK
LogSoftmaxBackward case_003 F64 2,3 F64 2,3 F64 2,3 0 INVALID
LogSoftmaxBackward case_005 F32 2,3 F64 2,3 F32 2,3 0 INVALID
LogSoftmaxBackward case_006 F32 2,3 F32 2,3 F32 2,3 0 OK
LogSoftmaxBackward case_007 F32 2,4 F32 2,3 F32 2,4 0 INVALID
LogSoftmaxBackward case_008 F32 2,3 F32 2,3 F64 2,3 0 OK
LogSoftmaxBackward case_009 F32 2,3 F32 2,3 F32 2,3 0 OK
LogSoftmaxBackward case_010 F32 2,3 F32 2,3 F32 2,4 0 INVALID
LogSoftmaxBackward case_011 F32 1,2,3,4,5,6,7,8 F32 1,2,3,4,5,6,7,8 F32 1,2,3,4,5,6,7,8 0 OK
LogSoftmaxBackward case_012 F32 1,2,3,4,5,6,7,8 F32 1,2,3,4,5,6,7,8 F32 1,2,3,4,5,6,7,8 7 OK
LogSoftmaxBackward case_013 F32 1,2,3,4,5,6,7,8 F32 1,2,3,4,5,6,7,8 F32 1,2,3,4,5,6,7,8 8 INVALID
LogSoftmaxBackward case_014 F32 2,3 F32 2,3 F32 2,3 0 OK
LogSoftmaxBackward case_016 F32 2,0 F32 2,0 F32 2,3 0 OK
LogSoftmaxBackward case_017 F32 T5x4 F32 T5x4 F32 5,4 0 OK
LogSoftmaxBackward case_018 F32 1,2,3,4,5,6,7,8,9 F32 1,2,3,4,5,6,7,8,9 F32 1,2,3,4,5,6,7,8,9 0 INVALID
LogSoftmaxBackward case_019a null - F32 1,2,3,4,5,6,7,8 F32 1,2,3,4,5,6,7,8 0 NULLPTR
LogSoftmaxBackward case_019b F32 1,2,3,4,5,6,7,8 null - F32 1,2,3,4,5,6,7,8 0 NULLPTR
LogSoftmaxBackward case_019c F32 1,2,3,4,5,6,7,8 F32 1,2,3,4,5,6,7,8 null - 0 NULLPTR
LogSoftmaxBackward ascend910B2_case_BF16_910b BF16 2,3 BF16 2,3 BF16 2,3 0 OK
";

fn lines(table: &str) -> Vec<Vec<&str>> {
    table
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.split_whitespace().collect())
        .collect()
}

fn destroy_all(ts: &[*mut aclTensor]) {
    for &t in ts.iter().filter(|t| !t.is_null()) {
        destroy_tensor(t);
    }
}

#[test]
fn the_vendors_softmax_and_log_softmax_phase1_cases_replay() {
    let _gate = crate::common::shared();
    opkit::on(A2);
    let cases = lines(FORWARD_CASES);
    let count = |op: &str| cases.iter().filter(|c| c[0] == op).count();
    assert_eq!((count("Softmax"), count("LogSoftmax")), (14, 25));
    for c in &cases {
        let (x, out) = (operand(c[2], c[3]), operand(c[4], c[5]));
        let got = opkit::status(forward(c[0], x, c[6].parse().unwrap(), out));
        assert_eq!(
            got,
            expected(c[7]),
            "vendor case `{}`: {}",
            c.join(" "),
            err_msg()
        );
        destroy_all(&[x, out]);
    }
}

#[test]
fn the_vendors_softmax_backward_phase1_cases_replay() {
    let _gate = crate::common::shared();
    opkit::on(A2);
    let cases = lines(BACKWARD_CASES);
    let count = |op: &str| cases.iter().filter(|c| c[0] == op).count();
    assert_eq!(
        (count("SoftmaxBackward"), count("LogSoftmaxBackward")),
        (20, 20)
    );
    for c in &cases {
        let (g, y, out) = (
            operand(c[2], c[3]),
            operand(c[4], c[5]),
            operand(c[6], c[7]),
        );
        let got = opkit::status(backward(c[0], g, y, c[8].parse().unwrap(), out));
        assert_eq!(
            got,
            expected(c[9]),
            "vendor case `{}`: {}",
            c.join(" "),
            err_msg()
        );
        destroy_all(&[g, y, out]);
    }
}

#[test]
fn bf16_is_refused_where_the_product_lacks_it_and_310p_has_log_softmax() {
    let _gate = crate::common::shared();
    // The vendor's case_020 on a product without BF16 (its `else` branch).
    opkit::on(TRAINING);
    for op in ["SoftmaxBackward", "LogSoftmaxBackward"] {
        let t = opkit::meta(&[2, 3], ACL_BF16);
        opkit::invalid(backward(op, t, t, 0, t), "BF16");
        destroy_tensor(t);
    }
    let t = opkit::meta(&[8], ACL_BF16);
    opkit::invalid(forward("LogSoftmax", t, 0, t), "BF16");
    opkit::invalid(forward("Softmax", t, 0, t), "BF16");
    destroy_tensor(t);
    opkit::on(P310);
    let t = opkit::meta(&[2, 3], ACL_FLOAT);
    assert_eq!(opkit::status(forward("LogSoftmax", t, 1, t)), ACLNN_SUCCESS);
    destroy_tensor(t);
}

#[test]
fn the_checks_run_in_each_operators_own_order() {
    let _gate = crate::common::shared();
    opkit::on(A2);
    let (bad_dtype, f32_23) = (
        opkit::meta(&[2, 3], ACL_UINT32),
        opkit::meta(&[2, 3], ACL_FLOAT),
    );
    // Softmax checks the dtype before the dim, LogSoftmax the dim before the dtype.
    opkit::invalid(forward("Softmax", bad_dtype, 5, bad_dtype), "dtype UINT32");
    opkit::invalid(forward("LogSoftmax", bad_dtype, 5, bad_dtype), "dim 5");
    // Softmax returns on an empty self before anything; LogSoftmax checks out's shape.
    let (empty, other) = (
        opkit::meta(&[2, 0], ACL_FLOAT),
        opkit::meta(&[7], ACL_FLOAT),
    );
    assert_eq!(
        opkit::status(forward("Softmax", empty, 9, other)),
        ACLNN_SUCCESS
    );
    opkit::invalid(forward("LogSoftmax", empty, 0, other), "shape");
    // SoftmaxBackward checks the dim before the shapes, LogSoftmaxBackward after.
    let f32_24 = opkit::meta(&[2, 4], ACL_FLOAT);
    opkit::invalid(
        backward("SoftmaxBackward", f32_23, f32_23, 3, f32_24),
        "dim 3",
    );
    opkit::invalid(
        backward("LogSoftmaxBackward", f32_23, f32_23, 3, f32_24),
        "shape",
    );
    // LogSoftmaxBackward names output first when both are NULL.
    opkit::nullptr(
        backward("LogSoftmaxBackward", null_mut(), null_mut(), 0, f32_23),
        "output",
    );
    opkit::nullptr(
        backward("SoftmaxBackward", null_mut(), null_mut(), 0, f32_23),
        "gradOutput",
    );
    destroy_all(&[bad_dtype, f32_23, empty, other, f32_24]);
}

/// Runs `op` over f32 `x` of `dims` along `dim` through the C ABI.
fn run_forward(op: &str, dims: &[i64], x: &[f32], dim: i64) -> Vec<f32> {
    let (xt, xp) = opkit::f32_tensor(dims, x);
    let (ot, op_) = opkit::f32_tensor(dims, &vec![0.0; x.len()]);
    opkit::run(forward(op, xt, dim, ot), phase2(op));
    let got = d2h::<f32>(op_, x.len());
    destroy_all(&[xt, ot]);
    free(xp);
    free(op_);
    got
}

#[test]
fn kernels_reduce_along_the_last_and_an_inner_dim_alike() {
    let _gate = crate::common::shared();
    opkit::on(A2);
    // [3, 4, 5]: softmax along dim 1 equals softmax along the last dim of its transpose.
    let x: Vec<f32> = (0..60)
        .map(|i| ((i * 37 % 23) as f32 - 11.0) / 4.0)
        .collect();
    for op in ["Softmax", "LogSoftmax"] {
        let inner = run_forward(op, &[3, 4, 5], &x, 1);
        let xt: Vec<f32> = (0..60)
            .map(|k| {
                let (a, c, b) = (k / 20, (k / 4) % 5, k % 4);
                x[a * 20 + b * 5 + c]
            })
            .collect();
        let last = run_forward(op, &[3, 5, 4], &xt, -1);
        for (k, &v) in last.iter().enumerate() {
            let (a, c, b) = (k / 20, (k / 4) % 5, k % 4);
            assert_eq!(v, inner[a * 20 + b * 5 + c], "{op} at {k}");
        }
        // Each softmax lane sums to 1; each log-softmax lane's exponentials too.
        for a in 0..3 {
            for c in 0..5 {
                let s: f32 = (0..4)
                    .map(|b| inner[a * 20 + b * 5 + c])
                    .map(|v| if op == "Softmax" { v } else { v.exp() })
                    .sum();
                assert!((s - 1.0).abs() < 1e-5, "{op} lane ({a}, {c}) sums to {s}");
            }
        }
    }
    // A NaN poisons its row only; a 0-D softmax is 1.
    let got = run_forward("Softmax", &[2, 2], &[f32::NAN, 0.0, 1.0, 1.0], 1);
    assert!(got[0].is_nan() && got[1].is_nan());
    assert_eq!(&got[2..], &[0.5, 0.5]);
    assert_eq!(run_forward("Softmax", &[], &[3.0], 0), vec![1.0]);
    assert_eq!(run_forward("LogSoftmax", &[], &[3.0], -1), vec![0.0]);
}

#[test]
fn a_large_softmax_splits_its_rows_across_threads_with_the_same_result() {
    let _gate = crate::common::shared();
    opkit::on(A2);
    // 512 rows of 256: above the threshold at which the rows are split.
    let (rows, len) = (512usize, 256usize);
    let x: Vec<f32> = (0..rows * len)
        .map(|i| ((i * 7919 % 1000) as f32) / 100.0 - 5.0)
        .collect();
    let got = run_forward("Softmax", &[rows as i64, len as i64], &x, 1);
    let small = run_forward("Softmax", &[1, len as i64], &x[len * 300..len * 301], 1);
    assert_eq!(&got[len * 300..len * 301], &small[..]);
}
