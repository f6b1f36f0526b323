//! aclnnGelu, aclnnGeluBackward and aclnnThresholdBackward through the C ABI: the vendor's
//! phase-1 unit-test cases replayed (expected status per case), and the kernels on small
//! inputs, broadcast and integer ones included.

use crate::common;
use crate::nn_cases;
use crate::opkit;

use ascend_sim::{kernel::gelu_grad_f32, symbol};
use ascend_sys::*;
use common::*;
use opkit::{Got, Phase2};
use std::ffi::c_void;

type TwoIn = unsafe extern "C" fn(
    *const aclTensor,
    *const aclTensor,
    *const aclTensor,
    *mut u64,
    *mut *mut aclOpExecutor,
) -> i32;
type OneIn = unsafe extern "C" fn(
    *const aclTensor,
    *mut aclTensor,
    *mut u64,
    *mut *mut aclOpExecutor,
) -> i32;
type Threshold = unsafe extern "C" fn(
    *const aclTensor,
    *const aclTensor,
    *const aclScalar,
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

fn gelu_p1(x: *mut aclTensor, out: *mut aclTensor) -> Got {
    let f: OneIn = entry("aclnnGeluGetWorkspaceSize");
    // SAFETY: simulator handles or NULL; valid out-pointers.
    opkit::p1(|ws, ex| unsafe { f(x, out, ws, ex) })
}

fn gelu_backward_p1(g: *mut aclTensor, x: *mut aclTensor, out: *mut aclTensor) -> Got {
    let f: TwoIn = entry("aclnnGeluBackwardGetWorkspaceSize");
    // SAFETY: simulator handles or NULL; valid out-pointers.
    opkit::p1(|ws, ex| unsafe { f(g, x, out, ws, ex) })
}

fn threshold_p1(
    g: *mut aclTensor,
    x: *mut aclTensor,
    t: *const aclScalar,
    out: *mut aclTensor,
) -> Got {
    let f: Threshold = entry("aclnnThresholdBackwardGetWorkspaceSize");
    // SAFETY: simulator handles or NULL; valid out-pointers.
    opkit::p1(|ws, ex| unsafe { f(g, x, t, out, ws, ex) })
}

/// `activation/gelu/tests/ut/op_api/test_aclnn_gelu.cpp` (ops-nn): self, out, expected.
const GELU_CASES: &str = "
null F16:2,4,6,7 NULLPTR
F16:2,4,6,7 null NULLPTR
F32:2,3 F16:2,3 INVALID
I32:2,3 I32:2,3 INVALID
F32:2,4 F32:2,3 INVALID
F32:2,3,4 F32:2,3 INVALID
UNDEF:2,3 UNDEF:2,3 INVALID
F32:2,4,6,7:NCHW F32:2,4,6,7:NHWC OK
F16:2,4,6,7,8:NDHWC F16:2,4,6,7,8:NCDHW OK
F32:2,4,6,8:HWCN F32:2,4,6,8:HWCN OK
F32:2,4,6,8,5:NC1HWC0 F32:2,4,6,8:HWCN INVALID
F32:2,4,6,8:HWCN F32:2,4,6,8,8:NC1HWC0 INVALID
F32:2,4,6,8 F32:2,4,6,8 OK
F16:2,4,6,8,4,5 F16:2,4,6,8,4,5 OK
F16:2,4,6,8,4,5 F16:2,4,6,8,4,5 OK
F32:2,4,6,8,4,5 F32:2,4,6,8,4,5 OK
F32:2,4:ND:1,2:0:4,2 F32:2,4:ND:1,2:0:4,2 OK
";

/// `activation/gelu_grad/tests/ut/op_api/test_aclnn_gelu_backward.cpp` (ops-nn):
/// gradOutput, self, gradInput, expected (case 010 loops over three formats).
const GELU_BACKWARD_CASES: &str = "
F32:2,5 F32:2,5 F32:2,5 OK
F16:2,5 F16:2,5 F16:2,5 OK
F32:0 F32:0 F32:0 OK
null F32:1,16,1,1 F32:1,16,1,1 NULLPTR
F32:1,16,1,1 null F32:1,16,1,1 NULLPTR
F32:1,16,1,1 F32:1,16,1,1 null NULLPTR
F64:1,16,1,1 F32:1,16,1,1 F64:1,16,1,1 INVALID
F32:1,16,1,1 F16:1,16,1,1 F32:1,16,1,1 OK
F16:1,16,1,1 F32:1,16,1,1 F32:1,16,1,1 OK
F32:1,16,1,1 F32:1,16,1,1 F32:1,16,1,1 OK
F32:1,16,1,1:NC1HWC0 F32:1,16,1,1:NC1HWC0 F32:1,16,1,1:NC1HWC0 OK
F32:1,16,1,1:NZ F32:1,16,1,1:NZ F32:1,16,1,1:NZ OK
F32:1,16,1,1 F32:1,16,1,1:NCHW F32:1,16,1,1 OK
F32:1,16,1,1 F32:1,16,1,1:NC1HWC0 F32:1,16,1,1 OK
F32:1,16,1,1 F32:1,1,4,4 F32:1,16,1,1 INVALID
F32:2,5:ND:1,2:0:5,2 F32:2,5:ND:1,2:0:5,2 F32:2,5:ND:1,2:0:5,2 OK
F16:2,5:ND:1,2:0:5,2 F16:2,5:ND:1,2:0:5,2 F16:2,5:ND:1,2:0:5,2 OK
C64:1,16,1,1 C64:1,16,1,1 C64:1,16,1,1 INVALID
C128:1,16,1,1 C128:1,16,1,1 C128:1,16,1,1 INVALID
F32:1,2,2,2,2,2,2,2,2 F32:1,2,2,2,2,2,2,2,2 F32:1,2,2,2,2,2,2,2,2 INVALID
F32:16,16 F32:0 F32:16,16 INVALID
F32:0 F32:16,16 F32:0 INVALID
F32:16 F32:16,16 F32:16,16 OK
F32:16,5,5 F32:5,5 F32:16,5,5 OK
F32:1024,1024 F32:1024,1024 F32:1024,1024 OK
F16:2,4,8,16,32 F16:2,4,8,16,32 F16:2,4,8,16,32 OK
F32:- F32:- F32:- OK
F16:2,64,112,112:NCHW F16:2,64,112,112:NCHW F16:2,64,112,112:NCHW OK
F32:8 F32:8 F32:8 OK
BF16:2,4,6,8 BF16:2,4,6,8 BF16:2,4,6,8 OK
I32:2,4 I32:2,4 I32:2,4 INVALID
UNDEF:2,4 UNDEF:2,4 UNDEF:2,4 INVALID
";

/// `activation/threshold_grad_v2_d/tests/ut/op_api/test_aclnn_threshold_backward.cpp`
/// (ops-nn): gradOutput, self, threshold (`null` for NULL), out, expected. The cases the
/// file runs on the 950 (`ascend950PR_9589_`) use dtypes Atlas A2 has too.
const THRESHOLD_CASES: &str = "
I64:2,3 I64:2,3 0 I64:2,3 INVALID
I64:2,3 I32:2,3 0 I32:2,3 INVALID
I32:2,1 I32:2,3 0 I32:2,3 OK
I32:2,1 I32:2,3 0 I32:2,4 INVALID
null I32:2,0 0 I32:2,0 NULLPTR
I32:2,0 I32:2,0 0 I32:2,0 OK
I32:10 I32:10 0 I32:10 OK
I8:10 I8:10 0 I8:10 OK
F16:10 F16:10 0 F16:10 OK
F32:10 F32:10 0 F32:10 OK
I32:10 I32:10 1 I32:10 OK
I32:10 I32:10 -1 I32:10 OK
BF16:10 BF16:10 0 BF16:10 OK
F32:2,2,2,2,2,2,2,2,2,2 F32:2,2,2,2,2,2,2,2,2,2 0 F32:2,2,2,2,2,2,2,2,2,2 INVALID
U8:10 U8:10 0 U8:10 OK
I64:10 I64:10 0 I64:10 INVALID
I64:10 I64:10 1 I64:10 INVALID
F32:4,8 F32:4,8 0.5 F32:4,8 OK
F16:2,3,4,5 F16:2,3,4,5 0 F16:2,3,4,5 OK
F32:2,2,2,2,2,2,2,2 F32:2,2,2,2,2,2,2,2 0 F32:2,2,2,2,2,2,2,2 OK
F16:1024,1024 F16:1024,1024 0 F16:1024,1024 OK
BF16:10 BF16:10 0 BF16:10 OK
U8:10 U8:10 1 U8:10 OK
F32:10 F32:10 2 F32:10 OK
F32:- F32:- 0 F32:- OK
F32:10 F32:10 null F32:10 NULLPTR
";

#[test]
fn the_vendors_gelu_phase1_unit_test_cases_replay() {
    on_device(0, || {
        let cases = nn_cases::rows(GELU_CASES);
        assert_eq!(cases.len(), 17);
        for c in &cases {
            let (x, out) = (nn_cases::tensor(c[0]), nn_cases::tensor(c[1]));
            let got = gelu_p1(x, out);
            let rc = opkit::status(got);
            assert_eq!(rc, nn_cases::status(c[2]), "case {c:?}: {}", err_msg());
            [x, out].into_iter().for_each(nn_cases::destroy);
        }
    });
}

#[test]
fn the_vendors_gelu_backward_phase1_unit_test_cases_replay() {
    on_device(0, || {
        let cases = nn_cases::rows(GELU_BACKWARD_CASES);
        assert_eq!(cases.len(), 32);
        for c in &cases {
            let ts = [c[0], c[1], c[2]].map(nn_cases::tensor);
            let rc = opkit::status(gelu_backward_p1(ts[0], ts[1], ts[2]));
            assert_eq!(rc, nn_cases::status(c[3]), "case {c:?}: {}", err_msg());
            ts.into_iter().for_each(nn_cases::destroy);
        }
    });
}

#[test]
fn the_vendors_threshold_backward_phase1_unit_test_cases_replay() {
    on_device(0, || {
        let cases = nn_cases::rows(THRESHOLD_CASES);
        assert_eq!(cases.len(), 26);
        for c in &cases {
            let (g, x, out) = (
                nn_cases::tensor(c[0]),
                nn_cases::tensor(c[1]),
                nn_cases::tensor(c[3]),
            );
            let t = match c[2] {
                "null" => std::ptr::null_mut(),
                v => opkit::scalar(v.parse::<f32>().unwrap(), ACL_FLOAT),
            };
            let rc = opkit::status(threshold_p1(g, x, t, out));
            assert_eq!(rc, nn_cases::status(c[4]), "case {c:?}: {}", err_msg());
            if !t.is_null() {
                opkit::destroy_scalar(t);
            }
            [g, x, out].into_iter().for_each(nn_cases::destroy);
        }
    });
}

#[test]
fn threshold_backward_without_bf16_on_the_training_series_and_in_order() {
    on_device(1, || {
        let (g, x, o) = (
            opkit::meta(&[4], ACL_BF16),
            opkit::meta(&[4], ACL_BF16),
            opkit::meta(&[4], ACL_BF16),
        );
        let t = opkit::scalar(0.0f32, ACL_FLOAT);
        opkit::invalid(threshold_p1(g, x, t, o), "gradOutput dtype BF16");
        // The dtypes come before the shapes: a wrong out dtype and shape reports the dtype.
        let (gf, xf, of) = (
            opkit::meta(&[4], ACL_FLOAT),
            opkit::meta(&[4], ACL_FLOAT),
            opkit::meta(&[5], ACL_FLOAT16),
        );
        opkit::invalid(threshold_p1(gf, xf, t, of), "out dtype");
        opkit::destroy_scalar(t);
        [g, x, o, gf, xf, of].into_iter().for_each(destroy_tensor);
    });
}

fn phase2(name: &str) -> Phase2 {
    entry(name)
}

#[test]
fn threshold_backward_passes_the_gradient_above_the_threshold_only() {
    on_device(0, || {
        // i32 with a broadcast gradient, threshold 1.5 (read as a float).
        let gv = [10i32, 20];
        let xv = [-3i32, 1, 2, 5, 1, 0];
        let (gp, xp, op) = (
            opkit::upload(&gv),
            opkit::upload(&xv),
            opkit::upload(&[0i32; 6]),
        );
        let (g, x, o) = (
            tensor(&[2, 1], ACL_INT32, gp),
            tensor(&[2, 3], ACL_INT32, xp),
            tensor(&[2, 3], ACL_INT32, op),
        );
        let t = opkit::scalar(1.5f64, ACL_DOUBLE);
        opkit::run(threshold_p1(g, x, t, o), phase2("aclnnThresholdBackward"));
        assert_eq!(d2h::<i32>(op, 6), vec![0, 0, 10, 20, 0, 0]);
        // f32 (the contiguous fast path), threshold 0, a NaN passes.
        let xv = [-1.0f32, 0.0, 2.0, f32::NAN];
        let gv = [1.0f32, 2.0, 3.0, 4.0];
        let (gp2, xp2, op2) = (
            opkit::upload(&gv),
            opkit::upload(&xv),
            opkit::upload(&[9.0f32; 4]),
        );
        let (g2, x2, o2) = (
            tensor(&[4], ACL_FLOAT, gp2),
            tensor(&[4], ACL_FLOAT, xp2),
            tensor(&[4], ACL_FLOAT, op2),
        );
        let zero = opkit::scalar(0.0f32, ACL_FLOAT);
        opkit::run(
            threshold_p1(g2, x2, zero, o2),
            phase2("aclnnThresholdBackward"),
        );
        assert_eq!(d2h::<f32>(op2, 4), vec![0.0, 0.0, 3.0, 4.0]);
        opkit::destroy_scalar(t);
        opkit::destroy_scalar(zero);
        [g, x, o, g2, x2, o2].into_iter().for_each(destroy_tensor);
        [gp, xp, op, gp2, xp2, op2].into_iter().for_each(free);
    });
}

#[test]
fn gelu_backward_computes_the_tanh_forms_derivative_with_broadcast() {
    on_device(0, || {
        let gv = [1.0f32, -2.0, 0.5];
        let xv = [-3.0f32, -0.5, 0.0, 0.7, 2.0, 9.0];
        let (gp, xp, op) = (
            opkit::upload(&gv),
            opkit::upload(&xv),
            opkit::upload(&[0.0f32; 6]),
        );
        let (g, x, o) = (
            tensor(&[3], ACL_FLOAT, gp),
            tensor(&[2, 3], ACL_FLOAT, xp),
            tensor(&[2, 3], ACL_FLOAT, op),
        );
        opkit::run(gelu_backward_p1(g, x, o), phase2("aclnnGeluBackward"));
        let got = d2h::<f32>(op, 6);
        for (k, &v) in got.iter().enumerate() {
            assert_eq!(v, gelu_grad_f32(gv[k % 3], xv[k]), "element {k}");
        }
        // gelu'(0) = 1/2 exactly; far out the derivative is 1 (right) or 0 (left).
        assert_eq!(got[2], 0.25);
        assert_eq!(gelu_grad_f32(1.0, 30.0), 1.0);
        assert_eq!(gelu_grad_f32(1.0, -30.0), 0.0);
        [g, x, o].into_iter().for_each(destroy_tensor);
        [gp, xp, op].into_iter().for_each(free);
    });
}
