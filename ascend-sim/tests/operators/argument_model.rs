//! Operators whose arguments go beyond tensors and plain attributes, through the C ABI:
//! `aclnnClamp` (optional `aclScalar *` bounds, NULL for none) and `aclnnMaxDim` (an
//! `int64_t` and a `bool` attribute, two outputs): the vendor's phase-1 unit-test cases
//! replayed, the checks in the vendor's order, and the kernels.

use crate::common;
use crate::opkit;

use ascend_sim::symbol;
use ascend_sys::*;
use common::*;
use half::f16;
use opkit::{A2, P310, Phase2, TRAINING};
use std::ffi::c_void;
use std::ptr::{null, null_mut};

type ClampPhase1 = unsafe extern "C" fn(
    *const aclTensor,
    *const aclScalar,
    *const aclScalar,
    *mut aclTensor,
    *mut u64,
    *mut *mut aclOpExecutor,
) -> i32;

fn clamp_p1(
    x: *mut aclTensor,
    lo: *mut aclScalar,
    hi: *mut aclScalar,
    out: *mut aclTensor,
) -> opkit::Got {
    let p = symbol("aclnnClampGetWorkspaceSize").expect("aclnnClamp is simulated");
    // SAFETY: the simulator's aclnnClampGetWorkspaceSize has this prototype.
    let f = unsafe { std::mem::transmute::<*const c_void, ClampPhase1>(p) };
    // SAFETY: simulator handles or NULL; valid out-pointers.
    opkit::p1(|ws, ex| unsafe { f(x, lo, hi, out, ws, ex) })
}

fn clamp_p2() -> Phase2 {
    let p = symbol("aclnnClamp").expect("aclnnClamp is simulated");
    // SAFETY: every phase 2 has the common prototype.
    unsafe { std::mem::transmute::<*const c_void, Phase2>(p) }
}

/// `ops-math/conversion/clip_by_value_v2/tests/ut/op_api/test_aclnn_clamp.cpp`, one case
/// per line: self dtype and dims, min, max, out dtype and dims, expected status. `null`
/// is a NULL pointer; integer bounds are INT64 scalars, others FLOAT.
const VENDOR_CASES: &str = "
I64 5,4,3,2 -1 2 I64 2,3,4,5 INVALID
null - -1 2 I64 2,3,4,5 NULLPTR
I64 2,3,4,5 -1 2 null - NULLPTR
I64 2,3,4,5 null null I64 2,3,4,5 NULLPTR
I64 2,3,4,5,6,7,8,9,10 -1 2 I64 2,3,4,5,6,7,8,9,10 INVALID
F32 2,3 -1.5 2.5 I64 2,3 INVALID
";

fn dtype(name: &str) -> aclDataType {
    match name {
        "F32" => ACL_FLOAT,
        "F16" => ACL_FLOAT16,
        "BF16" => ACL_BF16,
        "F64" => ACL_DOUBLE,
        "I8" => ACL_INT8,
        "I16" => ACL_INT16,
        "I32" => ACL_INT32,
        "I64" => ACL_INT64,
        "U8" => ACL_UINT8,
        "BOOL" => ACL_BOOL,
        "C64" => ACL_COMPLEX64,
        "C128" => ACL_COMPLEX128,
        "STR" => ACL_STRING,
        other => panic!("dtype {other}"),
    }
}

/// Comma-separated dims; `-` is 0-D.
fn dims(text: &str) -> Vec<i64> {
    if text == "-" {
        return vec![];
    }
    text.split(',').map(|d| d.parse().unwrap()).collect()
}

fn expected(text: &str) -> i32 {
    match text {
        "OK" => ACLNN_SUCCESS,
        "INVALID" => ACLNN_ERR_PARAM_INVALID,
        "NULLPTR" => ACLNN_ERR_PARAM_NULLPTR,
        other => panic!("{other}"),
    }
}

fn meta_or_null(dt: &str, d: &str) -> *mut aclTensor {
    if dt == "null" {
        null_mut()
    } else {
        opkit::meta(&dims(d), dtype(dt))
    }
}

fn bound(text: &str) -> *mut aclScalar {
    match text {
        "null" => null_mut(),
        t if t.contains('.') => opkit::scalar(t.parse::<f32>().unwrap(), ACL_FLOAT),
        t => opkit::scalar(t.parse::<i64>().unwrap(), ACL_INT64),
    }
}

#[test]
fn the_vendors_clamp_phase1_cases_replay() {
    let _gate = crate::common::shared();
    opkit::on(A2);
    let mut n = 0;
    for line in VENDOR_CASES.lines().filter(|l| !l.trim().is_empty()) {
        let c: Vec<&str> = line.split_whitespace().collect();
        let (x, lo, hi, out) = (
            meta_or_null(c[0], c[1]),
            bound(c[2]),
            bound(c[3]),
            meta_or_null(c[4], c[5]),
        );
        let want = expected(c[6]);
        let got = opkit::status(clamp_p1(x, lo, hi, out));
        assert_eq!(got, want, "vendor case `{line}`: {}", err_msg());
        for t in [x, out].into_iter().filter(|t| !t.is_null()) {
            destroy_tensor(t);
        }
        for s in [lo, hi].into_iter().filter(|s| !s.is_null()) {
            opkit::destroy_scalar(s);
        }
        n += 1;
    }
    assert_eq!(n, 6);
}

#[test]
fn clamp_checks_run_in_the_vendors_order() {
    let _gate = crate::common::shared();
    opkit::on(TRAINING);
    let lo = opkit::f64_scalar(0.0);
    // Both bounds NULL is a NULL-pointer error, before the out-parameters.
    let x = opkit::meta(&[2], ACL_FLOAT);
    let mut ex = null_mut();
    let f = |lo: *const aclScalar, ws: *mut u64, ex: *mut *mut aclOpExecutor| {
        let p = symbol("aclnnClampGetWorkspaceSize").unwrap();
        // SAFETY: the simulator's prototype; handles or NULL.
        unsafe { std::mem::transmute::<*const c_void, ClampPhase1>(p)(x, lo, null(), x, ws, ex) }
    };
    assert_fails_with(
        f(null(), null_mut(), &mut ex),
        ACLNN_ERR_PARAM_NULLPTR,
        &["at least one of 'min' or 'max'"],
    );
    assert_fails_with(
        f(lo, null_mut(), &mut ex),
        ACLNN_ERR_PARAM_NULLPTR,
        &["workspaceSize"],
    );
    // BF16 is on Atlas A2/A3 only: the training series refuses it, self before out.
    let (b, o) = (opkit::meta(&[2], ACL_BF16), opkit::meta(&[3], ACL_BF16));
    opkit::invalid(clamp_p1(b, lo, null_mut(), o), "self dtype BF16");
    // The dtype check comes before the shape check.
    let f32_3 = opkit::meta(&[3], ACL_FLOAT);
    opkit::invalid(clamp_p1(x, lo, null_mut(), o), "out dtype BF16");
    opkit::invalid(clamp_p1(x, lo, null_mut(), f32_3), "out shape");
    // An empty self succeeds with no workspace even into an integer out (the cast check
    // comes after).
    let (e, ei) = (
        opkit::meta(&[0, 3], ACL_FLOAT),
        opkit::meta(&[0, 3], ACL_INT32),
    );
    let g = clamp_p1(e, lo, null_mut(), ei);
    assert_eq!((g.0, g.1), (ACLNN_SUCCESS, 0), "{}", err_msg());
    opkit::status(g);
    let ne = opkit::meta(&[2], ACL_INT32);
    opkit::invalid(clamp_p1(x, lo, null_mut(), ne), "can't be cast");
    for t in [x, b, o, f32_3, e, ei, ne] {
        destroy_tensor(t);
    }
    opkit::destroy_scalar(lo);
}

/// Clamps `x` (f32) into a new tensor of `out_dt` with the given bounds.
fn run_clamp(x: &[f32], lo: *mut aclScalar, hi: *mut aclScalar, out_dt: aclDataType) -> Vec<u8> {
    let n = x.len() as i64;
    let (xt, xp) = opkit::f32_tensor(&[n], x);
    let size = if out_dt == ACL_FLOAT16 { 2 } else { 4 };
    let op = malloc(x.len() * size);
    let ot = tensor(&[n], out_dt, op);
    opkit::run(clamp_p1(xt, lo, hi, ot), clamp_p2());
    let got = d2h::<u8>(op, x.len() * size);
    destroy_tensor(xt);
    destroy_tensor(ot);
    free(xp);
    free(op);
    got
}

fn f32s(b: &[u8]) -> Vec<f32> {
    b.chunks(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

#[test]
fn clamp_bounds_each_element_in_outs_dtype() {
    let _gate = crate::common::shared();
    opkit::on(A2);
    let x = [-3.0f32, -0.25, 0.5, 2.0, 7.5, f32::NAN, f32::NEG_INFINITY];
    let (lo, hi) = (opkit::f64_scalar(-1.0), opkit::scalar(2.5f32, ACL_FLOAT));
    let both = f32s(&run_clamp(&x, lo, hi, ACL_FLOAT));
    assert_eq!(&both[..5], &[-1.0, -0.25, 0.5, 2.0, 2.5]);
    assert!(both[5].is_nan(), "NaN stays NaN");
    assert_eq!(both[6], -1.0);
    // Only a lower bound: relu.
    let below = f32s(&run_clamp(
        &x,
        opkit::f64_scalar(0.0),
        null_mut(),
        ACL_FLOAT,
    ));
    assert_eq!(&below[..5], &[0.0, 0.0, 0.5, 2.0, 7.5]);
    // Only an upper bound; min > max gives max.
    let above = f32s(&run_clamp(&x, null_mut(), hi, ACL_FLOAT));
    assert_eq!(&above[..5], &[-3.0, -0.25, 0.5, 2.0, 2.5]);
    let crossed = f32s(&run_clamp(&x, opkit::f64_scalar(3.0), hi, ACL_FLOAT));
    assert_eq!(&crossed[..5], &[2.5; 5]);
    // Into f16: self cast to f16, the bound 0.1 converted to f16 too.
    let h = run_clamp(&[0.0, 0.3], opkit::f64_scalar(0.1), null_mut(), ACL_FLOAT16);
    let h: Vec<f16> = h
        .chunks(2)
        .map(|c| f16::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(h, [f16::from_f64(0.1), f16::from_f64(0.3)]);
    opkit::destroy_scalar(lo);
    opkit::destroy_scalar(hi);
}

type MaxDimPhase1 = unsafe extern "C" fn(
    *const aclTensor,
    i64,
    bool,
    *mut aclTensor,
    *mut aclTensor,
    *mut u64,
    *mut *mut aclOpExecutor,
) -> i32;

fn max_dim_p1(
    x: *mut aclTensor,
    dim: i64,
    keep: bool,
    out: *mut aclTensor,
    indices: *mut aclTensor,
) -> opkit::Got {
    let p = symbol("aclnnMaxDimGetWorkspaceSize").expect("aclnnMaxDim is simulated");
    // SAFETY: the simulator's aclnnMaxDimGetWorkspaceSize has this prototype.
    let f = unsafe { std::mem::transmute::<*const c_void, MaxDimPhase1>(p) };
    // SAFETY: simulator handles or NULL; valid out-pointers.
    opkit::p1(|ws, ex| unsafe { f(x, dim, keep, out, indices, ws, ex) })
}

fn max_dim_p2() -> Phase2 {
    let p = symbol("aclnnMaxDim").expect("aclnnMaxDim is simulated");
    // SAFETY: every phase 2 has the common prototype.
    unsafe { std::mem::transmute::<*const c_void, Phase2>(p) }
}

/// `ops-math/math/arg_max_with_value/tests/ut/op_api/test_aclnn_arg_max_with_value.cpp`,
/// one case per line: product (the file's default is Atlas A2), self dtype and dims, dim,
/// keepdim, out dtype and dims, indices dtype and dims, expected status. The vendor's
/// formats (NCHW, NHWC, ...) are labels to this operator and left out.
const MAX_DIM_CASES: &str = "
A2 F32 3,4 -1 true F32 3 I64 3 INVALID
A2 F32 - 0 false F32 - I64 - OK
A2 F32 4 0 false F32 - I64 - OK
A2 F32 3,4 5 false F32 4 I64 4 INVALID
A2 F32 3,4 0 false F32 4 I64 4 OK
A2 F16 3,4,6 0 false F16 4,6 I64 4,6 OK
A2 F16 2,4,5 1 false F16 2,5 I64 2,5 OK
A2 F32 5,10,2 1 false F32 5,2 I64 5,2 OK
A2 F64 2,10,2 0 false F64 10,2 I64 10,2 INVALID
A2 I8 2,10,2 1 false I8 2,2 I64 2,2 INVALID
A2 I16 5,10,2 0 false I16 10,2 I64 10,2 INVALID
A2 I32 2,4,2 1 false I32 2,2 I64 2,2 INVALID
A2 I64 2,10,2 0 false I64 10,2 I64 10,2 OK
310P I64 2,10,2 0 false I64 10,2 I64 10,2 OK
A2 I64 2,10,2 0 false I64 10,2 I64 10,2 OK
A2 U8 5,3,2 0 false U8 3,2 I64 3,2 INVALID
A2 BOOL 4,5,2 1 false BOOL 4,2 I64 4,2 OK
A2 BF16 3,9,2 1 false BF16 3,2 I64 3,2 OK
A2 BF16 3,9,2 1 false BF16 3,2 I64 3,2 OK
A2 C64 3,9,2 1 false C64 3,2 I64 3,2 INVALID
A2 C128 3,9,2 1 false C128 3,2 I64 3,2 INVALID
A2 STR 3,9,2 1 false STR 3,2 I64 3,2 INVALID
A2 F32 0,4 0 false F32 4 I64 4 OK
A2 F32 7,9,11,3,4,6,9,2,2 0 false F32 9,11,3,4,6,9,2,2 I64 9,11,3,4,6,9,2,2 INVALID
A2 F32 3,4 0 false F32 4 I64 4 OK
A2 F32 3,4 0 false F32 4,3 I64 4 INVALID
A2 null - 0 false F32 4,3 I64 4 NULLPTR
A2 F32 3,4 0 false F32 4,3 null - NULLPTR
A2 F32 3,4 0 false null - I64 4 NULLPTR
A2 F32 3,4 0 true F32 1,4 I64 1,4 OK
";

#[test]
fn the_vendors_max_dim_phase1_cases_replay() {
    let _gate = crate::common::shared();
    let cases: Vec<Vec<&str>> = MAX_DIM_CASES
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(cases.len(), 30);
    for (product, device) in [("A2", A2), ("310P", P310)] {
        opkit::on(device);
        for c in cases.iter().filter(|c| c[0] == product) {
            let x = meta_or_null(c[1], c[2]);
            let (out, idx) = (meta_or_null(c[5], c[6]), meta_or_null(c[7], c[8]));
            let got = opkit::status(max_dim_p1(
                x,
                c[3].parse().unwrap(),
                c[4] == "true",
                out,
                idx,
            ));
            assert_eq!(
                got,
                expected(c[9]),
                "vendor case `{}`: {}",
                c.join(" "),
                err_msg()
            );
            for t in [x, out, idx].into_iter().filter(|t| !t.is_null()) {
                destroy_tensor(t);
            }
        }
    }
    // The vendor's transposed case: views whose last two dims are swapped.
    opkit::on(A2);
    let x = tensor_view(
        &[3, 5, 7, 6],
        &[210, 42, 1, 7],
        0,
        &[3, 5, 6, 7],
        ACL_FLOAT,
        null_mut(),
    );
    let o = tensor_view(
        &[5, 7, 6],
        &[42, 1, 7],
        0,
        &[5, 6, 7],
        ACL_FLOAT,
        null_mut(),
    );
    let i = tensor_view(
        &[5, 7, 6],
        &[42, 1, 7],
        0,
        &[5, 6, 7],
        ACL_INT64,
        null_mut(),
    );
    assert_eq!(
        opkit::status(max_dim_p1(x, 0, false, o, i)),
        ACLNN_SUCCESS,
        "{}",
        err_msg()
    );
    for t in [x, o, i] {
        destroy_tensor(t);
    }
}

#[test]
fn max_dim_finds_the_first_maximum_and_its_position() {
    let _gate = crate::common::shared();
    opkit::on(A2);
    // [2, 3, 2] with ties and a NaN.
    let v = [
        1.0f32,
        9.0,
        4.0,
        9.0,
        4.0,
        2.0,
        -1.0,
        f32::NAN,
        -3.0,
        5.0,
        -1.0,
        5.0,
    ];
    let (xt, xp) = opkit::f32_tensor(&[2, 3, 2], &v);
    for (dim, keep, want_v, want_i, shape) in [
        (
            1i64,
            false,
            vec![4.0f32, 9.0, -1.0, f32::NAN],
            vec![1i64, 0, 0, 0],
            vec![2i64, 2],
        ),
        (
            -1,
            true,
            vec![9.0, 9.0, 4.0, f32::NAN, 5.0, 5.0],
            vec![1, 1, 0, 1, 1, 1],
            vec![2, 3, 1],
        ),
        (
            0,
            false,
            vec![1.0, f32::NAN, 4.0, 9.0, 4.0, 5.0],
            vec![0, 1, 0, 0, 0, 1],
            vec![3, 2],
        ),
    ] {
        let n = want_v.len();
        let (op, ip) = (malloc(n * 4), malloc(n * 8));
        let (ot, it) = (tensor(&shape, ACL_FLOAT, op), tensor(&shape, ACL_INT64, ip));
        opkit::run(max_dim_p1(xt, dim, keep, ot, it), max_dim_p2());
        let got = f32s(&d2h::<u8>(op, n * 4));
        let at = d2h::<i64>(ip, n);
        assert_eq!(at, want_i, "dim {dim}");
        for (g, w) in got.iter().zip(&want_v) {
            assert!(
                g == w || g.is_nan() && w.is_nan(),
                "dim {dim}: {got:?} vs {want_v:?}"
            );
        }
        for t in [ot, it] {
            destroy_tensor(t);
        }
        free(op);
        free(ip);
    }
    destroy_tensor(xt);
    free(xp);
}
