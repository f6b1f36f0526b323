//! `aclnnNLLLoss` and `aclnnNLLLossBackward` through the C ABI: the vendor's phase-1
//! unit-test cases replayed (expected status per case), NLLLossBackward's checks in the
//! vendor's order (the vendor has no unit test of it), and the kernels.

use crate::opkit;

use crate::common::*;
use ascend_sim::symbol;
use ascend_sys::*;
use opkit::{A2, P310, TRAINING};
use std::ffi::c_void;
use std::ptr::null_mut;

type Forward = unsafe extern "C" fn(
    *const aclTensor,
    *const aclTensor,
    *const aclTensor,
    i64,
    i64,
    *mut aclTensor,
    *mut aclTensor,
    *mut u64,
    *mut *mut aclOpExecutor,
) -> i32;
type Backward = unsafe extern "C" fn(
    *const aclTensor,
    *const aclTensor,
    *const aclTensor,
    *const aclTensor,
    i64,
    i64,
    *const aclTensor,
    *mut aclTensor,
    *mut u64,
    *mut *mut aclOpExecutor,
) -> i32;

/// self, target, weight, out, totalWeightOut.
type Five = [*mut aclTensor; 5];

fn forward(t: Five, reduction: i64, ignore: i64) -> opkit::Got {
    let p = symbol("aclnnNLLLossGetWorkspaceSize").expect("simulated");
    // SAFETY: the simulator's aclnnNLLLossGetWorkspaceSize has this prototype.
    let f = unsafe { std::mem::transmute::<*const c_void, Forward>(p) };
    // SAFETY: simulator handles or NULL; valid out-pointers.
    opkit::p1(|ws, ex| unsafe { f(t[0], t[1], t[2], reduction, ignore, t[3], t[4], ws, ex) })
}

/// gradOutput, self, target, weight, totalWeight, out.
fn backward(t: [*mut aclTensor; 6], reduction: i64, ignore: i64) -> opkit::Got {
    let p = symbol("aclnnNLLLossBackwardGetWorkspaceSize").expect("simulated");
    // SAFETY: the simulator's aclnnNLLLossBackwardGetWorkspaceSize has this prototype.
    let f = unsafe { std::mem::transmute::<*const c_void, Backward>(p) };
    // SAFETY: simulator handles or NULL; valid out-pointers.
    opkit::p1(|ws, ex| unsafe {
        f(
            t[0], t[1], t[2], t[3], reduction, ignore, t[4], t[5], ws, ex,
        )
    })
}

fn phase2(name: &str) -> opkit::Phase2 {
    let p = symbol(name).expect("simulated");
    // SAFETY: every phase 2 has the common prototype.
    unsafe { std::mem::transmute::<*const c_void, opkit::Phase2>(p) }
}

fn dtype(name: &str) -> aclDataType {
    match name {
        "F32" => ACL_FLOAT,
        "F16" => ACL_FLOAT16,
        "BF16" => ACL_BF16,
        "I8" => ACL_INT8,
        "I16" => ACL_INT16,
        "I32" => ACL_INT32,
        "I64" => ACL_INT64,
        "U8" => ACL_UINT8,
        other => panic!("dtype {other}"),
    }
}

/// `dt dims` (`-`: 0-D; `T5x4`: the vendor's {5,4} view with strides {1,5}); `null`.
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

/// `loss/nll_loss/tests/ut/op_api/test_aclnn_nll_loss_l2.cpp`, one case per line: the
/// product it runs on (`any`: the file's default, replayed on Atlas A2 and the training
/// series), case, then self, target, weight, out, totalWeightOut (dtype and dims each),
/// reduction, ignoreIndex, expected status. Formats are labels here and left out. The
/// file's `ascend950_case_024` (a product the simulator does not model) is not replayed.
const VENDOR_CASES: &str = "
any case_001 F32 3,5 I64 3 F32 5 F32 3 F32 1 0 -100 OK
any case_002 F32 10,7 U8 10 F32 7 F32 - F32 1 1 -100 OK
any case_003 F32 7 I64 - F32 7 F32 - F32 1 2 -100 OK
any case_004 F32 1 I64 1 F32 1 F32 1 F32 1 0 -100 INVALID
any case_005 F32 5,5 I64 5 F32 5 F32 - F32 - 1 0 OK
any case_006 F32 7,7 I64 7 F32 7 F32 - F32 - 2 5 OK
any case_007 F32 1,7 I64 1 F32 7 F32 - F32 - 3 4 INVALID
any case_008 F32 1,2,3,4 I64 12 F32 2 F32 12 F32 - 0 -100 INVALID
any case_009 F32 1,7 I64 2 F32 7 F32 1 F32 - 0 -100 INVALID
any case_010 I32 1,7 I64 1 I32 7 I32 1 I32 - 0 -100 INVALID
any case_011 null - I64 1 F32 7 F32 1 F32 - 0 -100 NULLPTR
any case_012 F32 1,7 null - F32 7 F32 1 F32 - 0 -100 NULLPTR
any case_013 F32 1,7 I64 1 null - F32 1 F32 - 0 -100 NULLPTR
any case_014 F32 1,7 I64 1 F32 7 null - F32 - 0 -100 NULLPTR
any case_015 F32 1,7 I64 1 F32 7 F32 1 null - 0 -100 NULLPTR
any case_016 F32 1,7 I64 1 F16 7 F32 1 F32 - 0 -100 INVALID
any case_017 F32 0,4 I64 0 F32 4 F32 0 F32 - 0 -100 OK
any case_018 F32 T5x4 I64 5 F32 4 F32 - F32 - 2 -100 OK
any case_019 F32 0,4 I64 0 F32 4 F32 - F32 - 1 -100 OK
any case_020 F32 10,4 I64 10 F32 4 F16 10 F16 - 0 -100 OK
any case_021 F32 10,4 I64 10 F32 4 I32 10 I32 - 0 -100 INVALID
A2 Ascend910B2_case_024 BF16 10,7 U8 10 BF16 7 BF16 - BF16 1 1 -100 OK
";

#[test]
fn the_vendors_nll_loss_phase1_cases_replay() {
    let _gate = crate::common::shared();
    let cases: Vec<Vec<&str>> = VENDOR_CASES
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(cases.len(), 22);
    let mut replayed = 0;
    for (product, device) in [("A2", A2), ("TRAINING", TRAINING)] {
        opkit::on(device);
        for c in cases.iter().filter(|c| c[0] == "any" || c[0] == product) {
            let t: Five = std::array::from_fn(|k| operand(c[2 + 2 * k], c[3 + 2 * k]));
            let got = opkit::status(forward(t, c[12].parse().unwrap(), c[13].parse().unwrap()));
            assert_eq!(
                got,
                expected(c[14]),
                "vendor case `{}` on {product}: {}",
                c.join(" "),
                err_msg()
            );
            for x in t.into_iter().filter(|x| !x.is_null()) {
                destroy_tensor(x);
            }
            replayed += 1;
        }
    }
    assert_eq!(replayed, 43);
}

#[test]
fn nll_loss_backward_checks_in_the_vendors_order() {
    let _gate = crate::common::shared();
    opkit::on(A2);
    let f = |dt: aclDataType, d: &[i64]| opkit::meta(d, dt);
    let (g, x, t, w, tw, o) = (
        f(ACL_FLOAT, &[]),
        f(ACL_FLOAT, &[3, 5]),
        f(ACL_INT64, &[3]),
        f(ACL_FLOAT, &[5]),
        f(ACL_FLOAT, &[1]),
        f(ACL_FLOAT, &[3, 5]),
    );
    assert_eq!(
        opkit::status(backward([g, x, t, w, tw, o], 1, -100)),
        ACLNN_SUCCESS
    );
    for (k, name) in [
        "gradOutput",
        "self",
        "target",
        "weight",
        "totalWeight",
        "out",
    ]
    .iter()
    .enumerate()
    {
        let mut args = [g, x, t, w, tw, o];
        args[k] = null_mut();
        opkit::nullptr(backward(args, 1, -100), name);
    }
    let (g16, w16) = (f(ACL_FLOAT16, &[]), f(ACL_FLOAT16, &[5]));
    // weight's dtype is checked before gradOutput's.
    opkit::invalid(backward([g16, x, t, w16, tw, o], 1, -100), "weight dtype");
    opkit::invalid(backward([g16, x, t, w, tw, o], 1, -100), "gradOutput dtype");
    let o_i32 = f(ACL_INT32, &[3, 5]);
    opkit::invalid(backward([g, x, t, w, tw, o_i32], 1, -100), "can not cast");
    let t_f32 = f(ACL_FLOAT, &[3]);
    opkit::invalid(backward([g, x, t_f32, w, tw, o], 1, -100), "target dtype");
    // The reduction before the shapes; per-sample gradients for none.
    let bad_o = f(ACL_FLOAT, &[5, 3]);
    opkit::invalid(backward([g, x, t, w, tw, bad_o], 3, -100), "reduction 3");
    opkit::invalid(backward([g, x, t, w, tw, bad_o], 1, -100), "out shape");
    opkit::invalid(
        backward([g, x, t, w, tw, o], 0, -100),
        "gradOutput shape [3]",
    );
    let g3 = f(ACL_FLOAT, &[3]);
    assert_eq!(
        opkit::status(backward([g3, x, t, w, tw, o], 0, -100)),
        ACLNN_SUCCESS
    );
    opkit::on(P310);
    opkit::refused(
        backward([g, x, t, w, tw, o], 1, -100),
        ACLNN_ERR_INNER_FIND_KERNEL_ERROR,
        &["not supported"],
    );
    for d in [g, x, t, w, tw, o, g16, w16, o_i32, t_f32, bad_o, g3] {
        destroy_tensor(d);
    }
}

fn f32s_of(p: *mut c_void, n: usize) -> Vec<f32> {
    d2h::<f32>(p, n)
}

#[test]
fn the_kernels_weigh_count_and_ignore_labels() {
    let _gate = crate::common::shared();
    opkit::on(A2);
    // 4 samples of 3 classes; labels 2, 0, ignored (−1), 1; weights 1, 2, 4.
    let x: Vec<f32> = vec![
        -1.0, -2.0, -3.0, -0.5, -1.5, -2.5, -9.0, -9.0, -9.0, -0.25, -0.75, -1.25,
    ];
    let (xt, xp) = opkit::f32_tensor(&[4, 3], &x);
    let labels = opkit::upload(&[2i32, 0, -1, 1]);
    let tt = tensor(&[4], ACL_INT32, labels);
    let (wt, wp) = opkit::f32_tensor(&[3], &[1.0, 2.0, 4.0]);
    // Per sample: 3·4, 0.5·1, 0, 0.75·2; total weight 4 + 1 + 2 = 7.
    for (reduction, want, total) in [(1i64, vec![2.0f32], 7.0f32), (2, vec![14.0], 7.0)] {
        let (ot, op) = opkit::f32_tensor(&[], &[5.0]);
        let (twt, twp) = opkit::f32_tensor(&[1], &[5.0]);
        opkit::run(
            forward([xt, tt, wt, ot, twt], reduction, -1),
            phase2("aclnnNLLLoss"),
        );
        assert_eq!(f32s_of(op, 1), want, "reduction {reduction}");
        assert_eq!(f32s_of(twp, 1), vec![total]);
        destroy_all(&[ot, twt], &[op, twp]);
    }
    let (ot, op) = opkit::f32_tensor(&[4], &[5.0; 4]);
    let (twt, twp) = opkit::f32_tensor(&[], &[5.0]);
    opkit::run(
        forward([xt, tt, wt, ot, twt], 0, -1),
        phase2("aclnnNLLLoss"),
    );
    assert_eq!(f32s_of(op, 4), vec![12.0, 0.5, 0.0, 1.5]);
    // None leaves totalWeightOut untouched, as the vendor's chain does.
    assert_eq!(f32s_of(twp, 1), vec![5.0]);
    // The gradient of the mean: −w[y]/7 at each counted label.
    let (gt, gp) = opkit::f32_tensor(&[], &[1.0]);
    let (tot, totp) = opkit::f32_tensor(&[], &[7.0]);
    let (dt, dp) = opkit::f32_tensor(&[4, 3], &[9.0; 12]);
    opkit::run(
        backward([gt, xt, tt, wt, tot, dt], 1, -1),
        phase2("aclnnNLLLossBackward"),
    );
    let s = 1.0f32 / 7.0;
    let want = [
        0.0,
        0.0,
        -4.0 * s,
        -s,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        -2.0 * s,
        0.0,
    ];
    assert_eq!(f32s_of(dp, 12), want);
    destroy_all(
        &[ot, twt, gt, tot, dt, xt, tt, wt],
        &[op, twp, gp, totp, dp, xp, labels, wp],
    );
}

#[test]
fn an_empty_batch_gives_a_nan_mean_and_zero_sums() {
    let _gate = crate::common::shared();
    opkit::on(A2);
    let x = opkit::meta(&[0, 4], ACL_FLOAT);
    let t = opkit::meta(&[0], ACL_INT64);
    let (wt, wp) = opkit::f32_tensor(&[4], &[1.0; 4]);
    for (reduction, want) in [(1i64, f32::NAN), (2, 0.0)] {
        let (ot, op) = opkit::f32_tensor(&[], &[5.0]);
        let (twt, twp) = opkit::f32_tensor(&[], &[5.0]);
        opkit::run(
            forward([x, t, wt, ot, twt], reduction, -100),
            phase2("aclnnNLLLoss"),
        );
        let got = f32s_of(op, 1)[0];
        assert!(
            got == want || got.is_nan() && want.is_nan(),
            "{reduction}: {got}"
        );
        assert_eq!(f32s_of(twp, 1), vec![0.0]);
        destroy_all(&[ot, twt], &[op, twp]);
    }
    // A batch of samples with no classes: the labels are out of bounds.
    let (x0, w0, t2) = (
        opkit::meta(&[2, 0], ACL_FLOAT),
        opkit::meta(&[0], ACL_FLOAT),
        opkit::meta(&[2], ACL_INT64),
    );
    let o = opkit::meta(&[], ACL_FLOAT);
    opkit::invalid(forward([x0, t2, w0, o, o], 1, -100), "out of bounds");
    destroy_all(&[x, t, wt, x0, w0, t2, o], &[wp]);
}

fn destroy_all(ts: &[*mut aclTensor], ps: &[*mut c_void]) {
    for &t in ts {
        destroy_tensor(t);
    }
    for &p in ps {
        free(p);
    }
}
