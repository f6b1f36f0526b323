//! Helpers shared by the simulator's integration tests (each test binary is one process;
//! see [`Gate`] for how its tests share it).
#![allow(dead_code)]

use ascend_sim::{api, testing::StreamHold};
use ascend_sys::*;
use std::ffi::{CStr, c_void};
use std::sync::Once;

static INIT: Once = Once::new();

/// Sets the environment (once, before `aclInit`) and initializes the runtime; tolerates
/// another test of the same process having initialized it.
pub fn init_with(env: &[(&str, &str)]) {
    INIT.call_once(|| {
        for (k, v) in env {
            // SAFETY: runs once, before any test of this process reads the environment
            // (aclInit reads it under the Once).
            unsafe { std::env::set_var(k, v) };
        }
        // SAFETY: NULL config path is allowed.
        let rc = unsafe { api::aclInit(std::ptr::null()) };
        assert!(
            rc == ACL_SUCCESS || rc == ACL_ERROR_REPEAT_INITIALIZE,
            "aclInit: {rc}"
        );
    });
}

/// Initializes with the default configuration and sets device 0 on this thread.
pub fn setup() {
    init_with(&[]);
    set_device(0);
}

pub fn set_device(d: i32) {
    // SAFETY: plain value argument.
    assert_eq!(
        unsafe { api::aclrtSetDevice(d) },
        ACL_SUCCESS,
        "{}",
        err_msg()
    );
}

pub fn reset_device(d: i32) {
    // SAFETY: plain value argument.
    assert_eq!(
        unsafe { api::aclrtResetDevice(d) },
        ACL_SUCCESS,
        "{}",
        err_msg()
    );
}

/// `aclGetRecentErrMsg` once: the texts not fetched yet (newest first), then cleared;
/// `None` when there are none.
pub fn fetch_err_msg() -> Option<String> {
    // SAFETY: no arguments; the result is NULL or a NUL-terminated string.
    let p = unsafe { api::aclGetRecentErrMsg() };
    // SAFETY: non-null, NUL-terminated, valid until this thread's next fetch.
    (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
}

thread_local! {
    static LAST_ERR_MSG: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
}

/// The text of this thread's latest failure. A fetch clears the simulator's copy, so the
/// text is kept here for the assertions that read it more than once.
pub fn err_msg() -> String {
    if let Some(m) = fetch_err_msg() {
        LAST_ERR_MSG.with(|l| *l.borrow_mut() = m);
    }
    LAST_ERR_MSG.with(|l| l.borrow().clone())
}

/// Asserts that the calling thread's last error message contains every one of `fragments`.
#[track_caller]
pub fn assert_err_msg_contains(fragments: &[&str]) {
    let msg = err_msg();
    for fragment in fragments {
        assert!(
            msg.contains(fragment),
            "no {fragment:?} in the error message: {msg}"
        );
    }
}

/// Asserts that a call returned the failure `want` and left an error message containing
/// every one of `fragments`.
#[track_caller]
pub fn assert_fails_with(rc: i32, want: i32, fragments: &[&str]) {
    assert_eq!(rc, want, "{}", err_msg());
    assert_err_msg_contains(fragments);
}

/// Asserts that the executor `ex` is released: destroying it is refused (161002) as a
/// double release, with a finding containing every one of `how`.
#[track_caller]
pub fn assert_double_release(ex: *mut aclOpExecutor, how: &[&str]) {
    // SAFETY: a released executor's handle is checked, never dereferenced.
    let rc = unsafe { api::aclDestroyAclOpExecutor(ex) };
    assert_fails_with(
        rc,
        ACLNN_ERR_PARAM_INVALID,
        &["double release of an executor"],
    );
    assert_err_msg_contains(how);
}

/// Asserts that the non-repeatable executor `ex` was released by a phase 2 that failed.
#[track_caller]
pub fn assert_released_by_failed_phase2(ex: *mut aclOpExecutor) {
    assert_double_release(ex, &["consumed by its phase-2 call, which failed"]);
}

/// Frees `buf` while `hold` keeps queued work of `s` that uses it waiting, releases the
/// hold and asserts that synchronizing `s` reports the use with
/// `ACL_ERROR_RT_INTERNAL_ERROR`, "freed while queued work" and `more` in the message.
#[track_caller]
pub fn assert_freed_while_queued_is_reported(
    buf: *mut c_void,
    hold: StreamHold,
    s: aclrtStream,
    more: &[&str],
) {
    free(buf);
    hold.release();
    assert_fails_with(
        sync(s),
        ACL_ERROR_RT_INTERNAL_ERROR,
        &["freed while queued work"],
    );
    assert_err_msg_contains(more);
}

pub fn malloc(size: usize) -> *mut c_void {
    let mut p = std::ptr::null_mut();
    // SAFETY: &mut p is a valid out-pointer.
    let rc = unsafe { api::aclrtMalloc(&mut p, size, ACL_MEM_MALLOC_HUGE_FIRST) };
    assert_eq!(rc, ACL_SUCCESS, "{}", err_msg());
    p
}

pub fn free(p: *mut c_void) {
    // SAFETY: p came from aclrtMalloc.
    assert_eq!(unsafe { api::aclrtFree(p) }, ACL_SUCCESS, "{}", err_msg());
}

pub fn h2d<T: Copy>(dst: *mut c_void, src: &[T]) {
    let n = std::mem::size_of_val(src);
    // SAFETY: src is a live host slice of n bytes.
    let rc = unsafe { api::aclrtMemcpy(dst, n, src.as_ptr().cast(), n, ACL_MEMCPY_HOST_TO_DEVICE) };
    assert_eq!(rc, ACL_SUCCESS, "{}", err_msg());
}

pub fn d2h<T: Copy + Default>(src: *const c_void, n: usize) -> Vec<T> {
    let mut out = vec![T::default(); n];
    let bytes = n * std::mem::size_of::<T>();
    // SAFETY: out is a live host buffer of `bytes` bytes.
    let rc = unsafe {
        api::aclrtMemcpy(
            out.as_mut_ptr().cast(),
            bytes,
            src,
            bytes,
            ACL_MEMCPY_DEVICE_TO_HOST,
        )
    };
    assert_eq!(rc, ACL_SUCCESS, "{}", err_msg());
    out
}

pub fn contiguous_strides(dims: &[i64]) -> Vec<i64> {
    let mut s = vec![1i64; dims.len()];
    for k in (0..dims.len().saturating_sub(1)).rev() {
        s[k] = s[k + 1] * dims[k + 1].max(1);
    }
    s
}

/// A contiguous ND tensor over `data`.
pub fn tensor(dims: &[i64], dtype: aclDataType, data: *mut c_void) -> *mut aclTensor {
    tensor_view(dims, &contiguous_strides(dims), 0, dims, dtype, data)
}

pub fn tensor_view(
    dims: &[i64],
    strides: &[i64],
    offset: i64,
    storage: &[i64],
    dtype: aclDataType,
    data: *mut c_void,
) -> *mut aclTensor {
    // SAFETY: the arrays are live slices of the stated lengths.
    let t = unsafe {
        api::aclCreateTensor(
            dims.as_ptr(),
            dims.len() as u64,
            dtype,
            strides.as_ptr(),
            offset,
            ACL_FORMAT_ND,
            storage.as_ptr(),
            storage.len() as u64,
            data,
        )
    };
    assert!(!t.is_null(), "aclCreateTensor: {}", err_msg());
    t
}

pub fn destroy_tensor(t: *mut aclTensor) {
    // SAFETY: t came from aclCreateTensor.
    assert_eq!(
        unsafe { api::aclDestroyTensor(t) },
        ACLNN_SUCCESS,
        "{}",
        err_msg()
    );
}

/// Phase 1: `(status, workspace size, executor)`.
pub fn phase1(
    g: *mut aclTensor,
    x: *mut aclTensor,
    out: *mut aclTensor,
) -> (i32, u64, *mut aclOpExecutor) {
    let mut ws = 0u64;
    let mut ex = std::ptr::null_mut();
    // SAFETY: tensors are simulator handles or null; out-pointers are valid.
    let rc = unsafe { api::aclnnMishBackwardGetWorkspaceSize(g, x, out, &mut ws, &mut ex) };
    (rc, ws, ex)
}

pub fn create_stream() -> aclrtStream {
    let mut s = std::ptr::null_mut();
    // SAFETY: valid out-pointer.
    assert_eq!(
        unsafe { api::aclrtCreateStream(&mut s) },
        ACL_SUCCESS,
        "{}",
        err_msg()
    );
    s
}

pub fn destroy_stream(s: aclrtStream) {
    // SAFETY: s came from aclrtCreateStream.
    assert_eq!(
        unsafe { api::aclrtDestroyStream(s) },
        ACL_SUCCESS,
        "{}",
        err_msg()
    );
}

pub fn sync(s: aclrtStream) -> i32 {
    // SAFETY: s is a simulator stream handle or null.
    unsafe { api::aclrtSynchronizeStream(s) }
}

/// Runs MishBackward end to end on f32 data of `shape` and returns gradInput.
pub fn mish_backward_f32(grad: &[f32], x: &[f32], shape: &[i64]) -> Vec<f32> {
    let n = grad.len();
    let bytes = n * 4;
    let (dg, dx, dout) = (malloc(bytes), malloc(bytes), malloc(bytes));
    h2d(dg, grad);
    h2d(dx, x);
    let (tg, tx, tout) = (
        tensor(shape, ACL_FLOAT, dg),
        tensor(shape, ACL_FLOAT, dx),
        tensor(shape, ACL_FLOAT, dout),
    );
    let (rc, ws, ex) = phase1(tg, tx, tout);
    assert_eq!(rc, ACLNN_SUCCESS, "{}", err_msg());
    let wsp = if ws > 0 {
        malloc(ws as usize)
    } else {
        std::ptr::null_mut()
    };
    let s = create_stream();
    // SAFETY: executor from phase 1, workspace of the asked size, live stream.
    let rc = unsafe { api::aclnnMishBackward(wsp, ws, ex, s) };
    assert_eq!(rc, ACLNN_SUCCESS, "{}", err_msg());
    assert_eq!(sync(s), ACL_SUCCESS, "{}", err_msg());
    let out = d2h::<f32>(dout, n);
    destroy_stream(s);
    for t in [tg, tx, tout] {
        destroy_tensor(t);
    }
    for p in [dg, dx, dout] {
        free(p);
    }
    if !wsp.is_null() {
        free(wsp);
    }
    out
}

/// `aclrtMemcpy` returning the code.
pub fn memcpy(
    dst: *mut c_void,
    dest_max: usize,
    src: *const c_void,
    count: usize,
    kind: u32,
) -> i32 {
    // SAFETY: tests pass live host buffers of at least `count` bytes or device addresses.
    unsafe { api::aclrtMemcpy(dst, dest_max, src, count, kind) }
}

/// `aclrtMemcpyAsync` returning the code.
pub fn memcpy_async(
    dst: *mut c_void,
    dest_max: usize,
    src: *const c_void,
    count: usize,
    kind: u32,
    stream: aclrtStream,
) -> i32 {
    // SAFETY: tests keep host buffers alive until the stream is synchronized.
    unsafe { api::aclrtMemcpyAsync(dst, dest_max, src, count, kind, stream) }
}

/// Phase 2 returning the status.
pub fn phase2(ws: *mut c_void, size: u64, ex: *mut aclOpExecutor, s: aclrtStream) -> i32 {
    // SAFETY: all arguments are simulator handles/addresses or garbage the simulator checks.
    unsafe { api::aclnnMishBackward(ws, size, ex, s) }
}

/// Launches phase 2 of `ex` on the default stream and asserts that the launch and the
/// synchronize succeed.
#[track_caller]
pub fn launch_and_sync(w: *mut c_void, ws: u64, ex: *mut aclOpExecutor) {
    assert_eq!(
        phase2(w, ws, ex, std::ptr::null_mut()),
        ACLNN_SUCCESS,
        "{}",
        err_msg()
    );
    assert_eq!(sync(std::ptr::null_mut()), ACL_SUCCESS, "{}", err_msg());
}

/// Phase 1 and 2 of MishBackward on the default stream; asserts success.
#[track_caller]
pub fn run_mish_backward(g: *mut aclTensor, x: *mut aclTensor, out: *mut aclTensor) {
    let (rc, ws, ex) = phase1(g, x, out);
    assert_eq!(rc, ACLNN_SUCCESS, "{}", err_msg());
    let w = if ws > 0 {
        malloc(ws as usize)
    } else {
        std::ptr::null_mut()
    };
    launch_and_sync(w, ws, ex);
    if !w.is_null() {
        free(w);
    }
}

pub fn create_event() -> aclrtEvent {
    let mut e = std::ptr::null_mut();
    // SAFETY: valid out-pointer.
    assert_eq!(
        unsafe { api::aclrtCreateEvent(&mut e) },
        ACL_SUCCESS,
        "{}",
        err_msg()
    );
    e
}

/// f64 golden of `grad * mish'(x)`.
pub fn golden(grad: f64, x: f64) -> f64 {
    if x.is_nan() || grad.is_nan() {
        return f64::NAN;
    }
    if x == f64::INFINITY {
        return grad;
    }
    if x == f64::NEG_INFINITY {
        return grad * 0.0;
    }
    let sp = x.max(0.0) + (-x.abs()).exp().ln_1p();
    let t = sp.tanh();
    let sig = 1.0 / (1.0 + (-x).exp());
    grad * (t + x * (1.0 - t * t) * sig)
}

/// CANN precision standard: MERE < thr and MARE < 10 thr.
pub fn assert_precision(got: &[f64], want: &[f64], thr: f64, label: &str) {
    let mut sum = 0.0;
    let mut max: f64 = 0.0;
    for (g, w) in got.iter().zip(want) {
        let e = (g - w).abs() / (w.abs() + 1e-7);
        sum += e;
        max = max.max(e);
    }
    let mere = sum / got.len().max(1) as f64;
    assert!(
        mere < thr && max < 10.0 * thr,
        "{label}: MERE {mere:e} MARE {max:e} threshold {thr:e}"
    );
}

/// A tiny deterministic generator (xorshift64*).
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in [lo, hi).
    pub fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// The five products the per-product tests (phase-1 checks, operators) run on, in one
/// process: device `i` is `FIVE_SOCS[i]`.
pub const FIVE_SOCS: [&str; 5] = [
    "Ascend910B4",
    "Ascend910A",
    "Ascend310P3",
    "Ascend310B1",
    "Ascend910_9391",
];

/// The gate of a test binary: every test holds it, shared or exclusive, for its whole run.
///
/// A test binary gathers the modules of one theme (`tests/<binary>/main.rs`), and the
/// simulator's state is process-wide: live-object counters, device reference counts,
/// injected faults (armed for the next call of a C name, whoever makes it), memory
/// figures. A test that reads or changes such state takes [`serial`] (exclusive: no other
/// test of the process runs meanwhile); every other test takes [`shared`], so that it
/// never runs beside an exclusive one, whichever module it comes from. A test that takes
/// neither would see (or cause) a fault or a count meant for another test.
///
/// Re-entry on one thread is a no-op (a helper may take the gate its test already holds);
/// asking for the exclusive gate while holding the shared one is a test bug (it would wait
/// for itself) and panics. Threads a test spawns do not hold the gate and must not ask
/// for it: their test holds it for them.
pub struct Gate {
    held: Option<GateGuard>,
}

enum GateGuard {
    Shared(std::sync::RwLockReadGuard<'static, ()>),
    Exclusive(std::sync::RwLockWriteGuard<'static, ()>),
}

static GATE: std::sync::RwLock<()> = std::sync::RwLock::new(());

thread_local! {
    /// What this thread holds: 0 nothing, 1 shared, 2 exclusive.
    static HELD: std::cell::Cell<u8> = const { std::cell::Cell::new(0) };
}

impl Drop for Gate {
    fn drop(&mut self) {
        if self.held.take().is_some() {
            HELD.with(|h| h.set(0));
        }
    }
}

/// The shared gate: for a test that neither reads process-wide counters nor sets faults.
pub fn shared() -> Gate {
    if HELD.with(std::cell::Cell::get) != 0 {
        return Gate { held: None };
    }
    let g = GATE
        .read()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    HELD.with(|h| h.set(1));
    Gate {
        held: Some(GateGuard::Shared(g)),
    }
}

/// The exclusive gate: for a test that reads process-wide counters, sets faults or
/// changes device state others would see; no other test of the binary runs meanwhile.
pub fn serial() -> Gate {
    match HELD.with(std::cell::Cell::get) {
        2 => return Gate { held: None },
        1 => panic!("serial() while this test holds shared(): take serial() instead"),
        _ => {}
    }
    let g = GATE
        .write()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    HELD.with(|h| h.set(2));
    Gate {
        held: Some(GateGuard::Exclusive(g)),
    }
}

/// Initialises the runtime once with [`FIVE_SOCS`] and serialises the tests of the binary:
/// device reference counts are process-wide (and a test may release a device past zero
/// on purpose, which would take the reference of a concurrent test using that device).
pub fn init_five() -> Gate {
    let guard = serial();
    init_with(&[("ASCEND_SIM_DEVICES", &FIVE_SOCS.join(","))]);
    guard
}

/// Runs `f` on a fresh thread with device `d` of [`FIVE_SOCS`] current.
pub fn on_device(d: i32, f: impl FnOnce() + Send + 'static) {
    let _serial = init_five();
    std::thread::spawn(move || {
        set_device(d);
        f();
        reset_device(d);
    })
    .join()
    .unwrap();
}
