//! aclnnInplaceUniform, aclnnInplaceNormal, aclnnInplaceBernoulli(Tensor): the vendor's
//! phase-1 unit-test cases replayed through the C ABI, and the kernels' documented
//! streams (Philox4x32-10 of seed, offset and element index) written through views.

use crate::casekit;
use crate::common;
use crate::opkit;

use ascend_sim::ops::kernel::{bernoulli_unit, standard_normal, uniform_unit};
use ascend_sys::*;
use casekit::*;
use common::*;
use opkit::*;
use std::ffi::c_void;

type UniformFn = unsafe extern "C" fn(
    *const aclTensor,
    f64,
    f64,
    u64,
    u64,
    *mut u64,
    *mut *mut aclOpExecutor,
) -> i32;
type NormalFn = unsafe extern "C" fn(
    *const aclTensor,
    f32,
    f32,
    i64,
    i64,
    *mut u64,
    *mut *mut aclOpExecutor,
) -> i32;
type BernoulliFn = unsafe extern "C" fn(
    *const aclTensor,
    *const aclScalar,
    i64,
    i64,
    *mut u64,
    *mut *mut aclOpExecutor,
) -> i32;
type BernoulliTensorFn = unsafe extern "C" fn(
    *const aclTensor,
    *const aclTensor,
    i64,
    i64,
    *mut u64,
    *mut *mut aclOpExecutor,
) -> i32;

fn uniform(x: *mut aclTensor, from: f64, to: f64, seed: u64, offset: u64) -> Got {
    // SAFETY: the simulator's entry point has this prototype.
    let f = unsafe {
        std::mem::transmute::<*const c_void, UniformFn>(entry(
            "aclnnInplaceUniformGetWorkspaceSize",
        ))
    };
    // SAFETY: simulator handles or NULL; out-pointers from `p1`.
    p1(|ws, ex| unsafe { f(x, from, to, seed, offset, ws, ex) })
}

fn normal(x: *mut aclTensor, mean: f32, std: f32, seed: i64, offset: i64) -> Got {
    // SAFETY: as above.
    let f = unsafe {
        std::mem::transmute::<*const c_void, NormalFn>(entry("aclnnInplaceNormalGetWorkspaceSize"))
    };
    // SAFETY: as above.
    p1(|ws, ex| unsafe { f(x, mean, std, seed, offset, ws, ex) })
}

fn bernoulli(x: *mut aclTensor, p: *mut aclScalar, seed: i64, offset: i64) -> Got {
    // SAFETY: as above.
    let f = unsafe {
        std::mem::transmute::<*const c_void, BernoulliFn>(entry(
            "aclnnInplaceBernoulliGetWorkspaceSize",
        ))
    };
    // SAFETY: as above.
    p1(|ws, ex| unsafe { f(x, p, seed, offset, ws, ex) })
}

fn bernoulli_tensor(x: *mut aclTensor, p: *mut aclTensor, seed: i64, offset: i64) -> Got {
    // SAFETY: as above.
    let f = unsafe {
        std::mem::transmute::<*const c_void, BernoulliTensorFn>(entry(
            "aclnnInplaceBernoulliTensorGetWorkspaceSize",
        ))
    };
    // SAFETY: as above.
    p1(|ws, ex| unsafe { f(x, p, seed, offset, ws, ex) })
}

fn phase2(name: &str) -> Phase2 {
    // SAFETY: every phase 2 has the common prototype.
    unsafe { std::mem::transmute::<*const c_void, Phase2>(entry(name)) }
}

/// The vendor's phase-1 cases (`tests/ut/op_api/test_aclnn_{uniform,normal,bernoulli}.cpp`
/// of ops-math), one per line: SoC (`910` the UT's default platform, `A2` its
/// `ascend910B2_` cases), operator, selfRef, then the operator's parameters (Uniform
/// `from to`, Normal `mean std`, Bernoulli the prob scalar's value, BernoulliTensor the
/// prob tensor), expected status (`ANY`: the case checks none). The `...Tensor` variants
/// of Uniform and Normal (seed and offset as device tensors) are not modelled.
const VENDOR_CASES: &str = "
910 Uniform F32:3,4 2 4 OK
910 Uniform F16:5,4,6 2 4 OK
910 Uniform F32:5,4,6 3 2 INVALID
910 Uniform null 2 3 NULLPTR
910 Uniform U32:5,4,6 2 3 INVALID
910 Uniform F32:5,4,6 2 3 ANY
910 Uniform F32:5,4,6,1,1,1,1,1,1 2 3 INVALID
A2 Uniform F32:3,4 2 4 OK
A2 Uniform BF16:3,4 0 1 OK
A2 Uniform F16:3,4 0 1 OK
910 Uniform F64:3,4 2 4 OK
910 Normal F32:-:NCHW 1 2 OK
910 Normal F32:3,4,4,3:NCHW 1 2 OK
910 Normal F32:3,4,2,3,2,3,3,2:NCHW 2.5 5.6 OK
910 Normal F32:2,3:NCHW 2 1 OK
910 Normal F32:3,4,5 1 2 OK
910 Normal F16:3,4,5 1 2 OK
910 Normal F32:3,4,5:NCHW 1 2 OK
910 Normal F32:3,4,5:NHWC 1 2 OK
910 Normal F32:3,4,5:HWCN 1 2 OK
910 Normal F32:3,4,5:NDHWC 1 2 OK
910 Normal F32:3,4,5:NCDHW 1 2 OK
910 Normal F32:3,4,5 0 0 OK
910 Normal F32:3,4,5 0 -2 INVALID
910 Normal I16:3,4,5:NCDHW 1 2 OK
910 Normal I32:3,4,5:NCDHW 1 2 OK
910 Normal I64:3,4,5:NCDHW 1 2 OK
910 Normal U8:3,4,5:NCDHW 1 2 OK
910 Normal BOOL:3,4,5:NCDHW 1 2 OK
910 Normal F64:3,4 1 2 OK
A2 Normal BF16:3,4 0 1 OK
910 Normal F32:3,4,2,3,2,3,3,2,1 1 2 INVALID
910 Normal null 1 2 NULLPTR
910 Bernoulli F32:4,4:NCHW 1 OK
910 Bernoulli F16:4,4:NCHW 1 OK
910 Bernoulli I8:4,4:NCHW 1 OK
910 Bernoulli I32:4,4:NCHW 1 OK
910 Bernoulli U8:4,4:NCHW 1 OK
910 Bernoulli BOOL:4,4:NCHW 1 OK
A2 Bernoulli BF16:4,4:NCHW 1 ANY
910 Bernoulli F32:4,4:NHWC 1 OK
910 Bernoulli F32:4,4 1 OK
910 Bernoulli F32:4,4:NC1HWC0 1 INVALID
910 Bernoulli F32:4,4:HWCN 1 OK
910 Bernoulli F32:4,4:NDHWC 1 OK
910 Bernoulli F32:4,0,4:NDHWC 1 OK
910 Bernoulli F32:5,4:ND:1,5:0:4,5 1 OK
910 Bernoulli F64:1,2,3,4,5,6,7,8,9 1 INVALID
A2 Bernoulli BF16:4,4:NCHW 0.2 OK
A2 Bernoulli F16:4,4:NCHW 0.2 OK
A2 Bernoulli F32:4,4:NCHW 0.9 OK
910 BernoulliTensor F64:1,2,3,4,5,6,7,8,9 F64:1,2,3,4,5,6,7,8,9 INVALID
910 BernoulliTensor F32:4,4:NDHWC F64:4,4 OK
";

#[test]
fn the_vendors_phase1_unit_test_cases_replay() {
    let _serial = serial();
    on(A2);
    let table = cases(VENDOR_CASES);
    let mut checked = 0;
    for c in &table {
        set_device(device_of(c[0]));
        let x = case_tensor(c[2]);
        let (got, want) = match c[1] {
            "Uniform" => (
                uniform(x, c[3].parse().unwrap(), c[4].parse().unwrap(), 0, 0),
                c[5],
            ),
            "Normal" => (
                normal(x, c[3].parse().unwrap(), c[4].parse().unwrap(), 1, 1),
                c[5],
            ),
            "Bernoulli" => {
                let p = scalar(c[3].parse::<f32>().unwrap(), ACL_FLOAT);
                let g = bernoulli(x, p, 0, 0);
                destroy_scalar(p);
                (g, c[4])
            }
            "BernoulliTensor" => {
                let p = case_tensor(c[3]);
                let g = bernoulli_tensor(x, p, 0, 0);
                release(&[p]);
                (g, c[4])
            }
            other => panic!("operator {other}"),
        };
        let rc = status(got);
        if let Some(want) = expected(want) {
            assert_eq!(rc, want, "vendor case `{}`: {}", c.join(" "), err_msg());
            checked += 1;
        }
        release(&[x]);
    }
    assert_eq!(table.len(), 53);
    assert_eq!(checked, 51);
}

#[test]
fn checks_run_in_the_vendors_order() {
    let _serial = serial();
    on(A2);
    let f = |d: &[i64]| meta(d, ACL_FLOAT);
    // Normal: std before the dtype (an INT16... UINT32 self with a negative std names std).
    invalid(normal(meta(&[2], ACL_UINT32), 0.0, -1.0, 0, 0), "std");
    invalid(normal(meta(&[2], ACL_UINT32), 0.0, 1.0, 0, 0), "UINT32");
    // Uniform: dims before from/to.
    invalid(uniform(f(&[1; 9]), 3.0, 2.0, 0, 0), "9 dims");
    invalid(uniform(f(&[2]), 3.0, 2.0, 0, 0), "from 3");
    assert_eq!(status(uniform(f(&[2]), 2.0, 2.0, 0, 0)), ACLNN_SUCCESS);
    // Bernoulli: the value after the dtypes; the scalar's dtype is checked.
    let p = scalar(1.5f64, ACL_DOUBLE);
    invalid(bernoulli(meta(&[2], ACL_UINT32), p, 0, 0), "UINT32");
    invalid(bernoulli(f(&[2]), p, 0, 0), "0<=prob<=1");
    destroy_scalar(p);
    let p = scalar(1i64, ACL_INT64);
    invalid(bernoulli(f(&[2]), p, 0, 0), "prob dtype INT64");
    nullptr(bernoulli(f(&[2]), std::ptr::null_mut(), 0, 0), "prob");
    destroy_scalar(p);
    // The inference products list no dtype at all.
    set_device(P310);
    let p = scalar(0.5f64, ACL_DOUBLE);
    invalid(bernoulli(f(&[2]), p, 0, 0), "FLOAT");
    destroy_scalar(p);
    set_device(A2);
    // BF16 on the training series: refused before the list.
    set_device(TRAINING);
    invalid(uniform(meta(&[2], ACL_BF16), 0.0, 1.0, 0, 0), "BFLOAT16");
    set_device(A2);
}

/// Runs a fill of `x` (a view of `storage`), returns the storage's f32 after it.
fn fill_f32(g: Got, api: &str, storage: *mut c_void, n: usize) -> Vec<f32> {
    run(g, phase2(api));
    d2h::<f32>(storage, n)
}

#[test]
fn each_element_is_the_documented_function_of_seed_offset_and_index() {
    let _serial = serial();
    on(A2);
    let n = 1001;
    let (seed, offset) = (0x1234_5678_9abc_def0u64, 24u64);
    let (x, px) = f32_tensor(&[7, 11, 13], &vec![0.0; n]);
    let got = fill_f32(
        uniform(x, -2.0, 3.0, seed, offset),
        "aclnnInplaceUniform",
        px,
        n,
    );
    for (i, &g) in got.iter().enumerate() {
        let want = (-2.0 + 5.0 * uniform_unit(seed, offset, i as u64, false)) as f32;
        assert_eq!(g, want, "uniform element {i}");
    }
    let got = fill_f32(
        normal(x, 0.5, 2.0, seed as i64, offset as i64),
        "aclnnInplaceNormal",
        px,
        n,
    );
    for (i, &g) in got.iter().enumerate() {
        let want = (0.5 + 2.0 * standard_normal(seed, offset, i as u64)) as f32;
        assert_eq!(g, want, "normal element {i}");
    }
    let p = scalar(0.3f64, ACL_DOUBLE);
    let got = fill_f32(
        bernoulli(x, p, seed as i64, offset as i64),
        "aclnnInplaceBernoulli",
        px,
        n,
    );
    destroy_scalar(p);
    for (i, &g) in got.iter().enumerate() {
        let want = f32::from(u8::from(bernoulli_unit(seed, offset, i as u64) < 0.3));
        assert_eq!(g, want, "bernoulli element {i}");
    }
    // Another offset: another stream, not the same one shifted.
    let again = fill_f32(
        uniform(x, 0.0, 1.0, seed, offset + 1),
        "aclnnInplaceUniform",
        px,
        n,
    );
    let first = fill_f32(
        uniform(x, 0.0, 1.0, seed, offset),
        "aclnnInplaceUniform",
        px,
        n,
    );
    assert!(again.iter().zip(&first).filter(|(a, b)| a == b).count() < 5);
    assert!(
        again[1..]
            .iter()
            .zip(&first)
            .filter(|(a, b)| a == b)
            .count()
            < 5
    );
    release(&[x]);
    free(px);
}

#[test]
fn a_transposed_view_is_filled_in_its_own_row_major_order() {
    let _serial = serial();
    on(A2);
    // A [3, 2] view of [2, 3] storage, strides (1, 3): element (r, c) at storage c*3 + r.
    let px = upload(&[0f32; 6]);
    let x = tensor_view(&[3, 2], &[1, 3], 0, &[2, 3], ACL_FLOAT, px);
    let got = fill_f32(uniform(x, 0.0, 1.0, 9, 0), "aclnnInplaceUniform", px, 6);
    for r in 0..3 {
        for c in 0..2 {
            let i = (r * 2 + c) as u64;
            assert_eq!(got[c * 3 + r], uniform_unit(9, 0, i, false) as f32);
        }
    }
    release(&[x]);
    free(px);
}

#[test]
fn a_prob_tensor_outside_zero_one_fails_the_launch_loudly() {
    let _serial = serial();
    on(A2);
    let (x, px) = f32_tensor(&[2, 3], &[0.0; 6]);
    let (p, pp) = f32_tensor(&[3], &[0.5, 1.5, 0.0]);
    let g = bernoulli_tensor(x, p, 0, 0);
    assert_eq!(g.0, ACLNN_SUCCESS, "{}", err_msg());
    // SAFETY: the executor of a successful phase 1; no workspace.
    let rc = unsafe {
        phase2("aclnnInplaceBernoulliTensor")(std::ptr::null_mut(), g.1, g.2, std::ptr::null_mut())
    };
    assert_eq!(rc, ACLNN_SUCCESS);
    assert_ne!(sync(std::ptr::null_mut()), ACL_SUCCESS);
    assert_err_msg_contains(&["prob element 1", "1.5", "outside [0, 1]"]);
    // A prob that does not broadcast to selfRef is refused at launch too.
    let (q, pq) = f32_tensor(&[2], &[0.5, 0.5]);
    let g = bernoulli_tensor(x, q, 0, 0);
    // SAFETY: as above.
    let rc = unsafe {
        phase2("aclnnInplaceBernoulliTensor")(std::ptr::null_mut(), g.1, g.2, std::ptr::null_mut())
    };
    assert_eq!(rc, ACLNN_SUCCESS);
    assert_ne!(sync(std::ptr::null_mut()), ACL_SUCCESS);
    assert_err_msg_contains(&["does not broadcast"]);
    // In range, broadcast: prob 0 rows stay 0, prob 1 rows are 1.
    let (r, pr) = f32_tensor(&[1, 3], &[0.0, 1.0, 0.0]);
    run(
        bernoulli_tensor(x, r, 0, 0),
        phase2("aclnnInplaceBernoulliTensor"),
    );
    assert_eq!(d2h::<f32>(px, 6), [0.0, 1.0, 0.0, 0.0, 1.0, 0.0]);
    release(&[x, p, q, r]);
    for m in [px, pp, pq, pr] {
        free(m);
    }
}
