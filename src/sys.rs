//! The checked layer: each C function the crate calls, wrapped once. A wrapper makes the
//! call through the [`FnTable`] and turns its status (or NULL result) into a [`Result`]
//! whose error names the function and carries `aclGetRecentErrMsg`; the C name is spelled
//! only here, by the `checked!` macro, from the same identifier as the table field.
//!
//! Wrappers are `unsafe` exactly when the C function has preconditions beyond its
//! arguments' types (live handles, valid memory); their `# Safety` is the C contract.
//! Nothing here allocates unless an error is built.

use crate::error::{Error, Result};
use ascend_sys::{
    Api, FnTable, aclBoolArray, aclDataType, aclIntArray, aclOpExecutor, aclScalar, aclTensor,
    aclTensorList, aclrtContext, aclrtEvent, aclrtMemcpyKind, aclrtStream,
};
use std::ffi::{CStr, c_void};

/// Calls `table.$f(args)` and checks its `aclError` (`acl`) or `aclnnStatus` (`aclnn`),
/// naming the error after `$f`.
macro_rules! checked {
    (acl $t:expr, $f:ident ( $($a:expr),* $(,)? )) => {
        check($t, Lib::Acl, stringify!($f), ($t.$f)($($a),*))
    };
    (aclnn $t:expr, $f:ident ( $($a:expr),* $(,)? )) => {
        check($t, Lib::Aclnn, stringify!($f), ($t.$f)($($a),*))
    };
    // An optional runtime function: its absence is an error of the call.
    (acl? $t:expr, $f:ident ( $($a:expr),* $(,)? )) => {
        match $t.$f {
            Some(f) => check($t, Lib::Acl, stringify!($f), f($($a),*)),
            None => Err(absent(Lib::Acl, stringify!($f))),
        }
    };
    // An optional function: its absence is an error of the call.
    (aclnn? $t:expr, $f:ident ( $($a:expr),* $(,)? )) => {
        checked!(aclnn? $t, $t, $f($($a),*))
    };
    // An optional function of the set `$fns`, errors reported with `$t`'s message.
    (aclnn? $fns:expr, $t:expr, $f:ident ( $($a:expr),* $(,)? )) => {
        match $fns.$f {
            Some(f) => check($t, Lib::Aclnn, stringify!($f), f($($a),*)),
            None => Err(absent(Lib::Aclnn, stringify!($f))),
        }
    };
}

/// Declares checked-layer calls that hand their arguments to one C function unchanged,
/// as `unsafe fn name(args) = [kind] cFunction;` (`kind` as in `checked!`) under the
/// call's docs, whose `# Safety` section is the contract the forwarding relies on.
macro_rules! forwarding {
    ($($(#[$doc:meta])* unsafe fn $name:ident($($arg:ident: $ty:ty),* $(,)?)
        = [$($kind:tt)+] $f:ident;)*) => {
        $(
            $(#[$doc])*
            pub(crate) unsafe fn $name(t: &FnTable, $($arg: $ty),*) -> Result<()> {
                // SAFETY: the caller's contract, stated in the call's docs.
                unsafe { checked!($($kind)+ t, $f($($arg),*)) }
            }
        )*
    };
}

/// Runs `call` with a place holding `init` for a C function to write its result to, and
/// returns what it wrote.
fn written<T>(init: T, call: impl FnOnce(&mut T) -> Result<()>) -> Result<T> {
    let mut value = init;
    call(&mut value)?;
    Ok(value)
}

// ---------------------------------------------------------------------------------------
// Process, devices, contexts.

/// `aclInit(NULL)`; "already initialised" (by another library in the process) is success.
///
/// # Safety
/// At most once per process and backend (CANN forbids a second `aclInit`).
pub(crate) unsafe fn init(t: &FnTable) -> Result<()> {
    // SAFETY: a null configuration path is accepted; once-ness is the caller's.
    match unsafe { checked!(acl t, aclInit(std::ptr::null())) } {
        Err(Error::Acl { code, .. }) if code == ascend_sys::ACL_ERROR_REPEAT_INITIALIZE => Ok(()),
        other => other,
    }
}

/// `aclrtGetDeviceCount`, as the `i32` that device ids are (`aclrtSetDevice` takes an
/// `int32_t`, so no usable count exceeds `i32::MAX`).
pub(crate) fn device_count(t: &FnTable) -> Result<i32> {
    // SAFETY: a valid out-pointer for the duration of the call.
    let count = written(0u32, |n| unsafe { checked!(acl t, aclrtGetDeviceCount(n)) })?;
    Ok(i32::try_from(count).unwrap_or(i32::MAX))
}

/// `aclrtSetDevice`: opens the device (reference-counted) and makes its default context
/// current on this thread.
pub(crate) fn set_device(t: &FnTable, id: i32) -> Result<()> {
    // SAFETY: takes any id and validates it.
    unsafe { checked!(acl t, aclrtSetDevice(id)) }
}

forwarding! {
    /// `aclrtResetDevice`.
    ///
    /// # Safety
    /// Balances one successful [`set_device`]; the device's streams, events and memory created
    /// by this crate are released first.
    unsafe fn reset_device(id: i32) = [acl] aclrtResetDevice;

    /// `aclrtSetCurrentContext`.
    ///
    /// # Safety
    /// `context` is a live context.
    unsafe fn set_current_context(context: aclrtContext) = [acl] aclrtSetCurrentContext;
}

/// `aclrtGetCurrentContext`; a NULL context is `ACL_ERROR_RT_CONTEXT_NULL`.
pub(crate) fn current_context(t: &FnTable) -> Result<aclrtContext> {
    // SAFETY: a valid out-pointer.
    let context = written(std::ptr::null_mut(), |c| unsafe {
        checked!(acl t, aclrtGetCurrentContext(c))
    })?;
    if context.is_null() {
        return Err(error(
            t,
            Lib::Acl,
            "aclrtGetCurrentContext",
            ascend_sys::ACL_ERROR_RT_CONTEXT_NULL,
        ));
    }
    Ok(context)
}

/// `aclrtGetSocName` of the current device, copied; NULL (its failure value) is an error,
/// reported as `ACL_ERROR_INTERNAL_ERROR`.
pub(crate) fn soc_name(t: &FnTable) -> Result<String> {
    // SAFETY: no preconditions; the result is NULL or a NUL-terminated string owned by
    // the runtime, copied before any other call.
    let p = unsafe { (t.aclrtGetSocName)() };
    if p.is_null() {
        return Err(error(
            t,
            Lib::Acl,
            "aclrtGetSocName",
            ascend_sys::ACL_ERROR_INTERNAL_ERROR,
        ));
    }
    // SAFETY: non-null, NUL-terminated (above).
    Ok(unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
}

/// `aclrtGetMemInfo(ACL_HBM_MEM)` of the current context's device: `(free, total)`.
pub(crate) fn mem_info(t: &FnTable) -> Result<(usize, usize)> {
    let (mut free, mut total) = (0usize, 0usize);
    // SAFETY: valid out-pointers.
    unsafe { checked!(acl t, aclrtGetMemInfo(ascend_sys::ACL_HBM_MEM, &mut free, &mut total)) }?;
    Ok((free, total))
}

// ---------------------------------------------------------------------------------------
// Memory.

/// `aclrtMalloc(HUGE_FIRST)` of `bytes` device bytes on the current context's device.
pub(crate) fn malloc(t: &FnTable, bytes: usize) -> Result<*mut c_void> {
    let policy = ascend_sys::ACL_MEM_MALLOC_HUGE_FIRST;
    // SAFETY: a valid out-pointer.
    written(std::ptr::null_mut(), |p| unsafe {
        checked!(acl t, aclrtMalloc(p, bytes, policy))
    })
}

forwarding! {
    /// `aclrtFree`.
    ///
    /// # Safety
    /// `p` came from [`malloc`] on the current context's device, no queued work uses it, and
    /// it is freed once.
    unsafe fn free(p: *mut c_void) = [acl] aclrtFree;
}

/// `aclrtMallocHost`: `bytes` of page-locked host memory.
pub(crate) fn malloc_host(t: &FnTable, bytes: usize) -> Result<*mut c_void> {
    // SAFETY: a valid out-pointer.
    written(std::ptr::null_mut(), |p| unsafe {
        checked!(acl t, aclrtMallocHost(p, bytes))
    })
}

forwarding! {
    /// `aclrtFreeHost`.
    ///
    /// # Safety
    /// `p` came from [`malloc_host`], no queued work uses it, and it is freed once.
    unsafe fn free_host(p: *mut c_void) = [acl] aclrtFreeHost;
}

forwarding! {
    /// `aclrtMemcpyAsync` of `count` bytes.
    ///
    /// # Safety
    /// `dst` holds `dst_max >= count` bytes and `src` `count` bytes of the memory kinds
    /// `kind` names, both staying valid until the stream has run the copy; `stream` is a
    /// live stream of the current context.
    unsafe fn memcpy_async(
        dst: *mut c_void, dst_max: usize, src: *const c_void, count: usize,
        kind: aclrtMemcpyKind, stream: aclrtStream,
    ) = [acl] aclrtMemcpyAsync;
}

/// `aclrtDeviceCanAccessPeer`: whether device `device` can access the memory of `peer`.
pub(crate) fn can_access_peer(t: &FnTable, device: i32, peer: i32) -> Result<bool> {
    // SAFETY: a valid out-pointer for the duration of the call; ids are validated by it.
    let can = written(0i32, |c| unsafe {
        checked!(acl? t, aclrtDeviceCanAccessPeer(c, device, peer))
    })?;
    Ok(can != 0)
}

/// `aclrtDeviceEnablePeerAccess(peer, 0)`: the current device may then copy from and to
/// `peer`'s memory.
pub(crate) fn enable_peer_access(t: &FnTable, peer: i32) -> Result<()> {
    // SAFETY: takes any id and validates it; flags are reserved (0).
    unsafe { checked!(acl? t, aclrtDeviceEnablePeerAccess(peer, 0)) }
}

forwarding! {
    /// `aclrtMemcpy` of `count` bytes: synchronous, and not ordered with any stream.
    ///
    /// # Safety
    /// `dst` holds `dst_max >= count` bytes and `src` `count` bytes of the memory kinds
    /// `kind` names; no queued work uses either range.
    unsafe fn memcpy(
        dst: *mut c_void, dst_max: usize, src: *const c_void, count: usize,
        kind: aclrtMemcpyKind,
    ) = [acl] aclrtMemcpy;

    /// `aclrtMemset` of `count` bytes to `value`.
    ///
    /// # Safety
    /// `p` holds `max >= count` bytes of device memory of the current context that no
    /// queued work uses.
    unsafe fn memset(p: *mut c_void, max: usize, value: i32, count: usize) = [acl] aclrtMemset;
}

// ---------------------------------------------------------------------------------------
// Streams and events.

/// `aclrtCreateStream` in the current context.
pub(crate) fn create_stream(t: &FnTable) -> Result<aclrtStream> {
    // SAFETY: a valid out-pointer.
    written(std::ptr::null_mut(), |s| unsafe {
        checked!(acl t, aclrtCreateStream(s))
    })
}

forwarding! {
    /// `aclrtDestroyStream`.
    ///
    /// # Safety
    /// `s` is a live stream of the current context, destroyed once.
    unsafe fn destroy_stream(s: aclrtStream) = [acl] aclrtDestroyStream;

    /// `aclrtSynchronizeStream`.
    ///
    /// # Safety
    /// `s` is a live stream of the current context.
    unsafe fn synchronize_stream(s: aclrtStream) = [acl] aclrtSynchronizeStream;
}

/// `aclrtCreateEvent` in the current context.
pub(crate) fn create_event(t: &FnTable) -> Result<aclrtEvent> {
    // SAFETY: a valid out-pointer.
    written(std::ptr::null_mut(), |e| unsafe {
        checked!(acl t, aclrtCreateEvent(e))
    })
}

forwarding! {
    /// `aclrtDestroyEvent`.
    ///
    /// # Safety
    /// `e` is a live event of the current context that no queued work uses, destroyed once.
    unsafe fn destroy_event(e: aclrtEvent) = [acl] aclrtDestroyEvent;

    /// `aclrtRecordEvent`.
    ///
    /// # Safety
    /// Both handles are live and belong to the current context.
    unsafe fn record_event(e: aclrtEvent, s: aclrtStream) = [acl] aclrtRecordEvent;

    /// `aclrtStreamWaitEvent`.
    ///
    /// # Safety
    /// Both handles are live and belong to the current context.
    unsafe fn stream_wait_event(s: aclrtStream, e: aclrtEvent) = [acl] aclrtStreamWaitEvent;

    /// `aclrtSynchronizeEvent`.
    ///
    /// # Safety
    /// `e` is a live event of the current context.
    unsafe fn synchronize_event(e: aclrtEvent) = [acl] aclrtSynchronizeEvent;
}

// ---------------------------------------------------------------------------------------
// nnopbase: descriptors and executors.

/// `aclCreateTensor` with the format torch_npu gives a plain tensor, by rank: NCL for 3
/// dims, NCHW for 4, NCDHW for 5, ND otherwise (the convolution and pooling operators
/// refuse an ND 4-D tensor; the others accept any of these); NULL (its failure value) is
/// reported as `ACLNN_ERR_INNER_NULLPTR`.
///
/// # Safety
/// `dims` and `strides` have the same length (at most 8); `data` is the base of a live
/// device allocation holding the `storage` shape, and the view stays inside it.
pub(crate) unsafe fn create_tensor(
    t: &FnTable,
    dims: &[i64],
    strides: &[i64],
    offset: i64,
    dtype: aclDataType,
    storage: &[i64],
    data: *mut c_void,
) -> Result<*mut aclTensor> {
    debug_assert_eq!(dims.len(), strides.len());
    // SAFETY: the arrays are valid for their lengths and copied by the call; the rest is
    // the caller's contract.
    let p = unsafe {
        (t.aclCreateTensor)(
            dims.as_ptr(),
            dims.len() as u64,
            dtype,
            strides.as_ptr(),
            offset,
            format_of_rank(dims.len()),
            storage.as_ptr(),
            storage.len() as u64,
            data,
        )
    };
    non_null(t, "aclCreateTensor", p)
}

/// The format torch_npu's `ConvertType` gives a tensor of `rank` dims.
fn format_of_rank(rank: usize) -> ascend_sys::aclFormat {
    match rank {
        3 => ascend_sys::ACL_FORMAT_NCL,
        4 => ascend_sys::ACL_FORMAT_NCHW,
        5 => ascend_sys::ACL_FORMAT_NCDHW,
        _ => ascend_sys::ACL_FORMAT_ND,
    }
}

forwarding! {
    /// `aclDestroyTensor`.
    ///
    /// # Safety
    /// `p` came from [`create_tensor`], no executor that queued work still uses refers to it,
    /// and it is destroyed once.
    unsafe fn destroy_tensor(p: *mut aclTensor) = [aclnn] aclDestroyTensor;
}

/// `aclCreateScalar` of the value at `value`, of `dtype` (copied by the call); NULL (its
/// failure value) and an absent function are errors.
///
/// # Safety
/// `value` points to a readable value of `dtype`'s size.
pub(crate) unsafe fn create_scalar(
    t: &Api,
    value: *mut c_void,
    dtype: aclDataType,
) -> Result<*mut aclScalar> {
    let f = t
        .attrs()
        .aclCreateScalar
        .ok_or_else(|| absent(Lib::Aclnn, "aclCreateScalar"))?;
    // SAFETY: the caller's contract; the value is copied before the call returns.
    non_null(t, "aclCreateScalar", unsafe { f(value, dtype) })
}

/// `aclDestroyScalar`.
///
/// # Safety
/// `p` came from [`create_scalar`], no phase 1 or 2 still to return uses it, destroyed once.
pub(crate) unsafe fn destroy_scalar(t: &Api, p: *mut aclScalar) -> Result<()> {
    // SAFETY: the caller's contract.
    unsafe { checked!(aclnn? t.attrs(), t, aclDestroyScalar(p)) }
}

/// `aclCreateIntArray` of `values` (copied by the call).
pub(crate) fn create_int_array(t: &Api, values: &[i64]) -> Result<*mut aclIntArray> {
    let f = t
        .attrs()
        .aclCreateIntArray
        .ok_or_else(|| absent(Lib::Aclnn, "aclCreateIntArray"))?;
    // SAFETY: `values` is valid for its length and copied by the call.
    non_null(t, "aclCreateIntArray", unsafe {
        f(values.as_ptr(), values.len() as u64)
    })
}

/// `aclDestroyIntArray`.
///
/// # Safety
/// As [`destroy_scalar`], for an array from [`create_int_array`].
pub(crate) unsafe fn destroy_int_array(t: &Api, p: *mut aclIntArray) -> Result<()> {
    // SAFETY: the caller's contract.
    unsafe { checked!(aclnn? t.attrs(), t, aclDestroyIntArray(p)) }
}

/// `aclCreateBoolArray` of `values` (copied by the call).
pub(crate) fn create_bool_array(t: &Api, values: &[bool]) -> Result<*mut aclBoolArray> {
    let f = t
        .attrs()
        .aclCreateBoolArray
        .ok_or_else(|| absent(Lib::Aclnn, "aclCreateBoolArray"))?;
    // SAFETY: `values` is valid for its length and copied by the call.
    non_null(t, "aclCreateBoolArray", unsafe {
        f(values.as_ptr(), values.len() as u64)
    })
}

/// `aclDestroyBoolArray`.
///
/// # Safety
/// As [`destroy_scalar`], for an array from [`create_bool_array`].
pub(crate) unsafe fn destroy_bool_array(t: &Api, p: *mut aclBoolArray) -> Result<()> {
    // SAFETY: the caller's contract.
    unsafe { checked!(aclnn? t.attrs(), t, aclDestroyBoolArray(p)) }
}

/// `aclCreateTensorList` of `tensors`, which the list owns from then on (destroying the
/// list destroys them).
///
/// # Safety
/// Each element is a live descriptor that nothing else destroys.
pub(crate) unsafe fn create_tensor_list(
    t: &Api,
    tensors: &[*const aclTensor],
) -> Result<*mut aclTensorList> {
    let f = t
        .attrs()
        .aclCreateTensorList
        .ok_or_else(|| absent(Lib::Aclnn, "aclCreateTensorList"))?;
    // SAFETY: `tensors` is valid for its length; the elements are live (the caller's
    // contract).
    non_null(t, "aclCreateTensorList", unsafe {
        f(tensors.as_ptr(), tensors.len() as u64)
    })
}

/// `aclDestroyTensorList`, which destroys the list's tensors too.
///
/// # Safety
/// As [`destroy_scalar`], for a list from [`create_tensor_list`].
pub(crate) unsafe fn destroy_tensor_list(t: &Api, p: *mut aclTensorList) -> Result<()> {
    // SAFETY: the caller's contract.
    unsafe { checked!(aclnn? t.attrs(), t, aclDestroyTensorList(p)) }
}

/// `p`, or `ACLNN_ERR_INNER_NULLPTR` for `api` when it is NULL (an nnopbase constructor's
/// failure value).
fn non_null<T>(t: &FnTable, api: &'static str, p: *mut T) -> Result<*mut T> {
    if p.is_null() {
        Err(error(
            t,
            Lib::Aclnn,
            api,
            ascend_sys::ACLNN_ERR_INNER_NULLPTR,
        ))
    } else {
        Ok(p)
    }
}

forwarding! {
    /// `aclSetAclOpExecutorRepeatable` (CANN 8.0+; absent is an error).
    ///
    /// # Safety
    /// `e` is a live executor from phase 1, before its first phase 2.
    unsafe fn set_executor_repeatable(e: *mut aclOpExecutor)
        = [aclnn?] aclSetAclOpExecutorRepeatable;

    /// `aclDestroyAclOpExecutor` (CANN 8.0+; absent is an error, and the executor leaks).
    ///
    /// # Safety
    /// `e` is a live executor that never reached phase 2 (or a repeatable one, never given a
    /// NULL workspace with a non-zero size), no queued work uses it, destroyed once.
    unsafe fn destroy_executor(e: *mut aclOpExecutor) = [aclnn?] aclDestroyAclOpExecutor;
}

forwarding! {
    /// `aclSetInputTensorAddr` (CANN 8.0+; absent is an error).
    ///
    /// # Safety
    /// `e` is a live repeatable executor, `tensor` its descriptor of input `index`, and
    /// `addr` the base of a live device allocation holding the storage that descriptor
    /// describes. (Each phase 2 takes the addresses bound when it is enqueued, so rebinding
    /// between launches does not affect queued ones.)
    unsafe fn set_input_addr(
        e: *mut aclOpExecutor, index: usize, tensor: *mut aclTensor, addr: *mut c_void,
    ) = [aclnn?] aclSetInputTensorAddr;

    /// `aclSetOutputTensorAddr` (CANN 8.0+; absent is an error).
    ///
    /// # Safety
    /// As [`set_input_addr`], for output `index`.
    unsafe fn set_output_addr(
        e: *mut aclOpExecutor, index: usize, tensor: *mut aclTensor, addr: *mut c_void,
    ) = [aclnn?] aclSetOutputTensorAddr;
}

// ---------------------------------------------------------------------------------------
// Status conversion.

/// The library whose status a call returns: the runtime (`aclError`, [`Error::Acl`]) or
/// nnopbase and the operators (`aclnnStatus`, [`Error::Aclnn`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lib {
    Acl,
    Aclnn,
}

/// `Ok(())` when `code` is `lib`'s success, else its error for `api` (operator entry
/// points, whose names are data of the operator's declaration, go through here).
#[inline]
pub(crate) fn check(table: &FnTable, lib: Lib, api: &'static str, code: i32) -> Result<()> {
    let success = match lib {
        Lib::Acl => ascend_sys::ACL_SUCCESS,
        Lib::Aclnn => ascend_sys::ACLNN_SUCCESS,
    };
    if code == success {
        Ok(())
    } else {
        Err(error(table, lib, api, code))
    }
}

/// `lib`'s error for a failed call of `api`, with this thread's recent error message.
#[cold]
#[inline(never)]
pub(crate) fn error(table: &FnTable, lib: Lib, api: &'static str, code: i32) -> Error {
    failure(lib, api, code, recent_message(table))
}

/// A call of an optional function that the loaded library lacks.
#[cold]
#[inline(never)]
fn absent(lib: Lib, api: &'static str) -> Error {
    match lib {
        Lib::Acl => failure(
            lib,
            api,
            ascend_sys::ACL_ERROR_FEATURE_UNSUPPORTED,
            "the loaded runtime lacks this function".into(),
        ),
        Lib::Aclnn => failure(
            lib,
            api,
            ascend_sys::ACLNN_ERR_INNER,
            "the loaded toolkit lacks this function (before CANN 8.0)".into(),
        ),
    }
}

fn failure(lib: Lib, api: &'static str, code: i32, message: String) -> Error {
    let name = ascend_sys::status_name(code);
    match lib {
        Lib::Acl => Error::Acl {
            api,
            code,
            name,
            message,
        },
        Lib::Aclnn => Error::Aclnn {
            api,
            status: code,
            name,
            message,
        },
    }
}

/// `aclGetRecentErrMsg()` of this thread, or an empty string.
#[cold]
pub(crate) fn recent_message(table: &FnTable) -> String {
    // SAFETY: aclGetRecentErrMsg has no preconditions; it returns null or a NUL-terminated
    // string owned by the library that stays valid until the next call on this thread,
    // and it is copied before anything else is called.
    unsafe {
        let p = (table.aclGetRecentErrMsg)();
        if p.is_null() {
            String::new()
        } else {
            CStr::from_ptr(p).to_string_lossy().into_owned()
        }
    }
}
