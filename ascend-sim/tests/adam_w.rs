//! `aclnnApplyAdamWV2` through the C ABI: the vendor's phase-1 unit-test cases replayed
//! (expected status per case), the products without the kernel, and the kernel against
//! the vendor's f32 sequence.

mod common;
mod opkit;

use crate::common::*;
use ascend_sim::symbol;
use ascend_sys::*;
use opkit::{A2, P310, TRAINING};
use std::ffi::c_void;
use std::ptr::null_mut;

type Phase1 = unsafe extern "C" fn(
    *mut aclTensor,
    *mut aclTensor,
    *mut aclTensor,
    *mut aclTensor,
    *const aclTensor,
    *const aclTensor,
    f32,
    f32,
    f32,
    f32,
    f32,
    bool,
    bool,
    *mut u64,
    *mut *mut aclOpExecutor,
) -> i32;

/// var, m, v, maxGradNorm, grad, step.
type Six = [*mut aclTensor; 6];

/// The hyper-parameters of the vendor's cases: lr, β₁, β₂, weight decay, ε.
const VENDOR_H: [f32; 5] = [0.001, 0.01, 0.09, 0.0001, 0.000_001];

fn adam(t: Six, h: [f32; 5], amsgrad: bool, maximize: bool) -> opkit::Got {
    let p = symbol("aclnnApplyAdamWV2GetWorkspaceSize").expect("simulated");
    // SAFETY: the simulator's aclnnApplyAdamWV2GetWorkspaceSize has this prototype.
    let f = unsafe { std::mem::transmute::<*const c_void, Phase1>(p) };
    // SAFETY: simulator handles or NULL; valid out-pointers.
    opkit::p1(|ws, ex| unsafe {
        f(
            t[0], t[1], t[2], t[3], t[4], t[5], h[0], h[1], h[2], h[3], h[4], amsgrad, maximize,
            ws, ex,
        )
    })
}

fn dtype(name: &str) -> aclDataType {
    match name {
        "F32" => ACL_FLOAT,
        "F16" => ACL_FLOAT16,
        "BF16" => ACL_BF16,
        "I32" => ACL_INT32,
        "I64" => ACL_INT64,
        other => panic!("dtype {other}"),
    }
}

/// `dt dims` (dims comma-separated), or `null -`.
fn operand(dt: &str, dims: &str) -> *mut aclTensor {
    if dt == "null" {
        return null_mut();
    }
    let d: Vec<i64> = dims.split(',').map(|v| v.parse().unwrap()).collect();
    opkit::meta(&d, dtype(dt))
}

/// `optim/apply_adam_w_v2/tests/ut/op_host/test_aclnn_apply_adam_w_v2.cpp`, one case per
/// line (a vendor test with several calls gives one line per call): case, then varRef,
/// mRef, vRef, maxGradNormOptionalRef, grad, step (dtype and dims each), amsgrad,
/// maximize, expected status. Every case uses lr 0.001, β₁ 0.01, β₂ 0.09, weight decay
/// 0.0001, ε 1e-6, and runs on the file's default product (Atlas A2).
const VENDOR_CASES: &str = "
case_nullptr/var null - F32 1 F32 1 F32 1 F32 1 F32 1 1 1 NULLPTR
case_nullptr/m F32 1 null - F32 1 F32 1 F32 1 F32 1 1 1 NULLPTR
case_nullptr/v F32 1 F32 1 null - F32 1 F32 1 F32 1 1 1 NULLPTR
case_nullptr/maxGradNorm F32 1 F32 1 F32 1 null - F32 1 F32 1 1 1 NULLPTR
case_nullptr/grad F32 1 F32 1 F32 1 F32 1 null - F32 1 1 1 NULLPTR
case_nullptr/step F32 1 F32 1 F32 1 F32 1 F32 1 null - 1 1 NULLPTR
case_null_tensor F32 4,3,0 F32 4,3,0 F32 4,3,0 F32 4,3,0 F32 4,3,0 F32 1 1 1 OK
case_error_dtype I32 4,3,2 I32 4,3,2 I32 4,3,2 I32 4,3,2 I32 4,3,2 F32 1 1 1 INVALID
case_error_shape/v F32 4,3,2 F32 4,3,2 F32 4,3,1 F32 4,3,2 F32 4,3,2 F32 1 1 1 INVALID
case_error_shape/step F32 4,3,2 F32 4,3,2 F32 4,3,2 F32 4,3,2 F32 4,3,2 F32 4 1 1 INVALID
case_maxGradNorm_is_not_null F32 4,3,2 F32 4,3,2 F32 4,3,2 F32 4,3,2 F32 4,3,2 F32 1 1 1 OK
case_maxGradNorm_is_null F32 4,3,2 F32 4,3,2 F32 4,3,2 null - F32 4,3,2 F32 1 0 1 OK
case_diff_dtype F32 4,3,2 F16 4,3,2 F32 4,3,2 F32 4,3,2 F32 4,3,2 F32 1 1 1 OK
case_diff_dtype_and_maxGradNorm_is_null F32 4,3,2 F16 4,3,2 F32 4,3,2 null - F32 4,3,2 F32 1 0 1 OK
";

fn expected(text: &str) -> i32 {
    match text {
        "OK" => ACLNN_SUCCESS,
        "INVALID" => ACLNN_ERR_PARAM_INVALID,
        "NULLPTR" => ACLNN_ERR_PARAM_NULLPTR,
        other => panic!("{other}"),
    }
}

#[test]
fn the_vendors_apply_adam_w_v2_phase1_cases_replay() {
    opkit::on(A2);
    let mut replayed = 0;
    for line in VENDOR_CASES.lines().filter(|l| !l.trim().is_empty()) {
        let c: Vec<&str> = line.split_whitespace().collect();
        let t: Six = std::array::from_fn(|k| operand(c[1 + 2 * k], c[2 + 2 * k]));
        let got = opkit::status(adam(t, VENDOR_H, c[13] == "1", c[14] == "1"));
        assert_eq!(got, expected(c[15]), "vendor case `{line}`: {}", err_msg());
        for x in t.into_iter().filter(|x| !x.is_null()) {
            destroy_tensor(x);
        }
        replayed += 1;
    }
    assert_eq!(replayed, 14);
}

#[test]
fn checks_follow_the_vendors_order_and_bf16_and_an_int64_step_pass() {
    opkit::on(A2);
    let f = |dt: aclDataType, d: &[i64]| opkit::meta(d, dt);
    let ok: Six = [
        f(ACL_BF16, &[2, 3]),
        f(ACL_BF16, &[2, 3]),
        f(ACL_BF16, &[2, 3]),
        f(ACL_BF16, &[2, 3]),
        f(ACL_BF16, &[2, 3]),
        f(ACL_INT64, &[]),
    ];
    assert_eq!(
        opkit::status(adam(ok, VENDOR_H, true, false)),
        ACLNN_SUCCESS
    );
    // A NULL maxGradNorm is refused only under amsgrad, and before grad's NULL.
    let mut t = ok;
    t[3] = null_mut();
    t[4] = null_mut();
    opkit::nullptr(adam(t, VENDOR_H, true, false), "maxGradNormOptionalRef");
    opkit::nullptr(adam(t, VENDOR_H, false, false), "grad");
    // Dtypes before shapes: a bad step dtype and a bad m shape report the dtype.
    let (bad_step, bad_m) = (f(ACL_INT32, &[1]), f(ACL_BF16, &[3, 2]));
    let mut t = ok;
    t[1] = bad_m;
    t[5] = bad_step;
    opkit::invalid(adam(t, VENDOR_H, false, false), "step dtype");
    t[5] = ok[5];
    opkit::invalid(adam(t, VENDOR_H, false, false), "mRef shape");
    // A DOUBLE grad is not a dtype of the operator.
    let g64 = f(ACL_DOUBLE, &[2, 3]);
    let mut t = ok;
    t[4] = g64;
    opkit::invalid(adam(t, VENDOR_H, false, false), "grad dtype");
    for x in ok.into_iter().chain([bad_step, bad_m, g64]) {
        destroy_tensor(x);
    }
}

#[test]
fn products_without_the_kernel_refuse_it() {
    for device in [TRAINING, P310] {
        opkit::on(device);
        let t: Six = std::array::from_fn(|k| {
            let d: &[i64] = if k == 5 { &[1] } else { &[4] };
            opkit::meta(d, ACL_FLOAT)
        });
        let got = opkit::status(adam(t, VENDOR_H, false, false));
        assert_eq!(got, ACLNN_ERR_INNER_FIND_KERNEL_ERROR, "{}", err_msg());
        for x in t {
            destroy_tensor(x);
        }
    }
}

/// The vendor's kernel in f32, operation by operation, one element.
fn vendor_f32(w: f32, m: f32, v: f32, mx: Option<f32>, g: f32, step: f32, h: [f32; 5]) -> [f32; 4] {
    let [lr, b1, b2, wd, eps] = h;
    let t = step + 1.0;
    let step_size = lr / (1.0 - b1.powf(t));
    let bc2_sqrt = 1.0 / (1.0 - b2.powf(t)).sqrt();
    let w1 = w * (1.0 - lr * wd);
    let m1 = (g - m) * (1.0 - b1) + m;
    let v1 = v * b2 + g * g * (1.0 - b2);
    let top = mx.map(|x| x.max(v1));
    let denom = top.unwrap_or(v1).sqrt() * bc2_sqrt + eps;
    [w1 - m1 / denom * step_size, m1, v1, top.unwrap_or(f32::NAN)]
}

#[test]
fn the_kernel_runs_the_vendors_f32_sequence_in_place() {
    opkit::on(A2);
    let h = [0.01f32, 0.9, 0.999, 0.1, 1e-8];
    let (w, m, v, mx) = (
        [0.5f32, -1.0, 2.0],
        [0.1f32, 0.0, -0.2],
        [0.01f32, 0.0, 0.3],
        [0.5f32, 0.0, 0.1],
    );
    let g = [0.3f32, -0.7, 1.5];
    let p2 = {
        let p = symbol("aclnnApplyAdamWV2").expect("simulated");
        // SAFETY: every phase 2 has the common prototype.
        unsafe { std::mem::transmute::<*const c_void, opkit::Phase2>(p) }
    };
    for amsgrad in [false, true] {
        let bufs: Vec<(*mut aclTensor, *mut c_void)> = [&w[..], &m[..], &v[..], &mx[..], &g[..]]
            .iter()
            .map(|x| opkit::f32_tensor(&[3], x))
            .collect();
        let (step, step_p) = {
            let p = opkit::upload(&[4i64]);
            (tensor(&[1], ACL_INT64, p), p)
        };
        let t: Six = [bufs[0].0, bufs[1].0, bufs[2].0, bufs[3].0, bufs[4].0, step];
        opkit::run(adam(t, h, amsgrad, false), p2);
        let got: Vec<Vec<f32>> = bufs[..4].iter().map(|b| d2h::<f32>(b.1, 3)).collect();
        for k in 0..3 {
            let want = vendor_f32(w[k], m[k], v[k], amsgrad.then_some(mx[k]), g[k], 4.0, h);
            for (j, name) in ["var", "m", "v"].iter().enumerate() {
                assert_eq!(
                    got[j][k].to_bits(),
                    want[j].to_bits(),
                    "{name}[{k}] amsgrad {amsgrad}"
                );
            }
            // Without amsgrad the given maxGradNorm is left as it was.
            let mx_want = if amsgrad { want[3] } else { mx[k] };
            assert_eq!(got[3][k], mx_want, "maxGradNorm[{k}] amsgrad {amsgrad}");
        }
        for (x, p) in bufs.into_iter().chain([(step, step_p)]) {
            destroy_tensor(x);
            free(p);
        }
    }
}
