//! Helpers of the racecheck tests: small f32 buffers with tensors over them, the kernels
//! and copies that access them, and the assertions on a reported race.
#![allow(dead_code)]

use crate::common::*;
use ascend_sim::api;
use ascend_sim::testing::hold_stream;
use ascend_sys::*;
use std::ffi::c_void;
use std::ptr::null_mut;

pub const N: usize = 8;
pub const BYTES: usize = N * 4;

/// A device buffer of `N` f32 with an `aclTensor` over it.
pub struct Buf {
    pub ptr: *mut c_void,
    pub t: *mut aclTensor,
}

impl Buf {
    pub fn new(v: f32) -> Buf {
        let ptr = malloc(BYTES);
        h2d(ptr, &[v; N]);
        Buf {
            ptr,
            t: tensor(&[N as i64], ACL_FLOAT, ptr),
        }
    }

    /// The first half of the buffer as its own tensor.
    pub fn half(&self) -> *mut aclTensor {
        tensor(&[N as i64 / 2], ACL_FLOAT, self.ptr)
    }

    pub fn end(&self) -> usize {
        self.ptr as usize + BYTES
    }
}

impl Drop for Buf {
    fn drop(&mut self) {
        destroy_tensor(self.t);
        free(self.ptr);
    }
}

pub fn mish_t(x: *mut aclTensor, y: *mut aclTensor, s: aclrtStream) {
    let (mut ws, mut ex) = (0u64, null_mut());
    // SAFETY: live tensors, valid out-pointers.
    let rc = unsafe { api::aclnnMishGetWorkspaceSize(x, y, &mut ws, &mut ex) };
    assert_eq!(rc, ACLNN_SUCCESS, "{}", err_msg());
    assert_eq!(ws, 0);
    // SAFETY: executor of phase 1, no workspace needed, a live stream.
    let rc = unsafe { api::aclnnMish(null_mut(), 0, ex, s) };
    assert_eq!(rc, ACLNN_SUCCESS, "{}", err_msg());
}

/// `y = mish(x)` on `s`: reads `x`, writes `y`.
pub fn mish(x: &Buf, y: &Buf, s: aclrtStream) {
    mish_t(x.t, y.t, s);
}

/// In-place mish of `x` on `s`: reads and writes it.
pub fn inplace_mish(x: &Buf, s: aclrtStream) {
    let (mut ws, mut ex) = (0u64, null_mut());
    // SAFETY: live tensor, valid out-pointers.
    let rc = unsafe { api::aclnnInplaceMishGetWorkspaceSize(x.t, &mut ws, &mut ex) };
    assert_eq!(rc, ACLNN_SUCCESS, "{}", err_msg());
    // SAFETY: executor of phase 1, no workspace needed, a live stream.
    let rc = unsafe { api::aclnnInplaceMish(null_mut(), 0, ex, s) };
    assert_eq!(rc, ACLNN_SUCCESS, "{}", err_msg());
}

pub fn d2d_async(dst: &Buf, src: &Buf, s: aclrtStream) {
    copy_async(dst.ptr, src.ptr, ACL_MEMCPY_DEVICE_TO_DEVICE, s);
}

/// Queues a copy of `BYTES` bytes of kind `kind` on `s`, which must be accepted.
#[track_caller]
pub fn copy_async(dst: *mut c_void, src: *const c_void, kind: u32, s: aclrtStream) {
    let rc = memcpy_async(dst, BYTES, src, BYTES, kind, s);
    assert_eq!(rc, ACL_SUCCESS, "{}", err_msg());
}

pub fn ok(s: aclrtStream) {
    assert_eq!(sync(s), ACL_SUCCESS, "{}", err_msg());
}

/// Asserts that synchronising `s` reports a race containing every one of `fragments`.
#[track_caller]
pub fn race_on(s: aclrtStream, fragments: &[&str]) {
    assert_fails_with(sync(s), ACL_ERROR_RT_INTERNAL_ERROR, &["racecheck: "]);
    assert_err_msg_contains(fragments);
    assert!(
        ascend_sim::last_report().is_some_and(|r| r.contains("racecheck: ")),
        "the race is also a sanitizer finding"
    );
}

pub fn hex(p: *mut c_void) -> String {
    format!("{:#x}", p as usize)
}

pub fn stream_name(s: aclrtStream) -> String {
    format!("stream {:#x}", s as usize)
}

/// The first access runs on `a` while `b` is held, then the second one on `b`: the second
/// must be reported, naming both.
pub fn unordered(
    first: impl FnOnce(aclrtStream),
    second: impl FnOnce(aclrtStream),
    fragments: &[&str],
) -> (aclrtStream, aclrtStream) {
    let (a, b) = (create_stream(), create_stream());
    let hold = hold_stream(b).expect("a live stream");
    second(b);
    first(a);
    ok(a);
    hold.release();
    let mut all = vec![stream_name(a), stream_name(b)];
    all.extend(fragments.iter().map(|f| f.to_string()));
    race_on(b, &all.iter().map(String::as_str).collect::<Vec<_>>());
    (a, b)
}

pub fn done(streams: (aclrtStream, aclrtStream)) {
    destroy_stream(streams.0);
    destroy_stream(streams.1);
}
