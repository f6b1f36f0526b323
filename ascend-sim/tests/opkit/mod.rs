//! Helpers of the training operators' tests: attribute objects, the two phases, and the
//! products of a multi-device process (device 0 Atlas A2, 1 the training series, 2 the
//! inference series 310P).
#![allow(dead_code)]

pub mod alpha_chain;

use crate::common::*;
use ascend_sim::api;
use ascend_sys::*;
use std::ffi::c_void;
use std::ptr::null_mut;

/// The devices these helpers use: A2, training series, 310P, 310B, A3 (the devices of
/// [`FIVE_SOCS`], with which the process is initialised: the modules of the `operators`
/// binary share one process, and one `aclInit`).
pub const A2: i32 = 0;
pub const TRAINING: i32 = 1;
pub const P310: i32 = 2;
pub const P310B: i32 = 3;
pub const A3: i32 = 4;

/// Initialises the process with [`FIVE_SOCS`] and makes `device` current.
pub fn on(device: i32) {
    init_with(&[("ASCEND_SIM_DEVICES", &FIVE_SOCS.join(","))]);
    set_device(device);
}

/// A phase-2 entry point.
pub type Phase2 = unsafe extern "C" fn(*mut c_void, u64, *mut aclOpExecutor, aclrtStream) -> i32;

/// What a phase 1 returned.
pub type Got = (i32, u64, *mut aclOpExecutor);

/// Runs `f(&mut ws, &mut ex)` as a phase 1.
pub fn p1(f: impl FnOnce(*mut u64, *mut *mut aclOpExecutor) -> i32) -> Got {
    let (mut ws, mut ex) = (0u64, null_mut());
    let rc = f(&mut ws, &mut ex);
    (rc, ws, ex)
}

/// The status of a phase 1, its executor released on success.
pub fn status(g: Got) -> i32 {
    if g.0 == ACLNN_SUCCESS {
        // SAFETY: the executor of a successful phase 1.
        assert_eq!(unsafe { api::aclDestroyAclOpExecutor(g.2) }, ACLNN_SUCCESS);
    }
    g.0
}

/// Asserts a phase 1 fails with `want` and a text holding `fragments`.
#[track_caller]
pub fn refused(g: Got, want: i32, fragments: &[&str]) {
    assert_fails_with(status(g), want, fragments);
}

/// Asserts that `phase1`, given an executor out-pointer, fails with 161001 naming
/// `workspaceSize` (which it passes NULL, with NULL for every other pointer).
#[track_caller]
pub fn refuses_null_workspace_size(phase1: impl FnOnce(*mut *mut aclOpExecutor) -> i32) {
    let mut ex = null_mut();
    let rc = phase1(&mut ex);
    assert_fails_with(rc, ACLNN_ERR_PARAM_NULLPTR, &["workspaceSize is nullptr"]);
}

/// [`refused`] with `ACLNN_ERR_PARAM_NULLPTR` (161001).
#[track_caller]
pub fn nullptr(g: Got, fragment: &str) {
    refused(g, ACLNN_ERR_PARAM_NULLPTR, &[fragment]);
}

/// [`refused`] with `ACLNN_ERR_PARAM_INVALID` (161002).
#[track_caller]
pub fn invalid(g: Got, fragment: &str) {
    refused(g, ACLNN_ERR_PARAM_INVALID, &[fragment]);
}

/// Runs phase 2 of a successful phase 1 on the default stream and waits for it.
#[track_caller]
pub fn run(g: Got, f: Phase2) {
    assert_eq!(g.0, ACLNN_SUCCESS, "phase 1: {}", err_msg());
    let w = if g.1 > 0 {
        malloc(g.1 as usize)
    } else {
        null_mut()
    };
    // SAFETY: the executor of phase 1 with a workspace of its size.
    let rc = unsafe { f(w, g.1, g.2, null_mut()) };
    assert_eq!(rc, ACLNN_SUCCESS, "phase 2: {}", err_msg());
    assert_eq!(sync(null_mut()), ACL_SUCCESS, "{}", err_msg());
    if !w.is_null() {
        free(w);
    }
}

/// A scalar of `dtype` holding the bytes of `v`.
pub fn scalar<T: Copy>(mut v: T, dtype: aclDataType) -> *mut aclScalar {
    // SAFETY: `v` is a live value of the dtype's size; the scalar copies it.
    let s = unsafe { api::aclCreateScalar((&raw mut v).cast(), dtype) };
    assert!(!s.is_null(), "{}", err_msg());
    s
}

pub fn f64_scalar(v: f64) -> *mut aclScalar {
    scalar(v, ACL_DOUBLE)
}

pub fn destroy_scalar(s: *mut aclScalar) {
    // SAFETY: a scalar from aclCreateScalar.
    assert_eq!(unsafe { api::aclDestroyScalar(s) }, ACLNN_SUCCESS);
}

pub fn int_array(v: &[i64]) -> *mut aclIntArray {
    // SAFETY: a live slice of the stated length.
    let a = unsafe { api::aclCreateIntArray(v.as_ptr(), v.len() as u64) };
    assert!(!a.is_null());
    a
}

pub fn destroy_int_array(a: *mut aclIntArray) {
    // SAFETY: an array from aclCreateIntArray.
    assert_eq!(unsafe { api::aclDestroyIntArray(a) }, ACLNN_SUCCESS);
}

/// Device memory holding `v` (at least one byte).
pub fn upload<T: Copy>(v: &[T]) -> *mut c_void {
    let p = malloc(std::mem::size_of_val(v).max(1));
    if !v.is_empty() {
        h2d(p, v);
    }
    p
}

/// A device buffer of `n` f32 and its contiguous tensor of `dims`.
pub fn f32_tensor(dims: &[i64], v: &[f32]) -> (*mut aclTensor, *mut c_void) {
    let p = upload(v);
    (tensor(dims, ACL_FLOAT, p), p)
}

/// A tensor of `dims` and `dtype` without data: enough for phase-1 checks.
pub fn meta(dims: &[i64], dtype: aclDataType) -> *mut aclTensor {
    tensor(dims, dtype, null_mut())
}

pub const NULL_T: *mut aclTensor = null_mut();
