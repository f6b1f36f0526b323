//! The simulator's own API, in Rust and in C: live-object counters, fault injection,
//! call counts and the latest sanitizer finding.

use crate::{FIRST_HCCL, FIRST_NNOPBASE, FIRST_OPERATOR, SYM_ORDER, SYMBOLS, Sym, hccl, state};
use ascend_sys::*;
use std::ffi::{CStr, c_char};

/// Live-object counters (`ascendSimCounters` in C).
///
/// [`counters`] / `ascendSimGetCounters` count live objects: device allocations plus
/// `aclrtMallocHost` buffers (`allocations`, `allocated_bytes` = requested sizes), tensors,
/// executors (not yet consumed or destroyed), streams created with `aclrtCreateStream`
/// (default streams are not counted), events, contexts created with
/// `aclrtCreateContext` (default contexts of `aclrtSetDevice` are not counted), and
/// scalars, arrays and lists (`scalars`, `arrays`, `lists`; a list's elements count as
/// tensors or scalars too). `aclFinalize` reports any live object as a finding.
/// [`call_count`] / `ascendSimGetCallCount` count calls per symbol since process start.
/// [`last_report`] / `ascendSimLastReport` give the latest sanitizer finding.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Counters {
    /// Live device allocations plus live `aclrtMallocHost` buffers.
    pub allocations: u64,
    /// Requested bytes of those allocations.
    pub allocated_bytes: u64,
    /// Live `aclTensor`s.
    pub tensors: u64,
    /// Live executors (not consumed, not destroyed).
    pub executors: u64,
    /// Live streams created with `aclrtCreateStream`.
    pub streams: u64,
    /// Live events.
    pub events: u64,
    /// Live contexts created with `aclrtCreateContext`.
    pub contexts: u64,
    /// Live `aclScalar`s.
    pub scalars: u64,
    /// Live `aclIntArray`s, `aclFloatArray`s and `aclBoolArray`s.
    pub arrays: u64,
    /// Live `aclTensorList`s and `aclScalarList`s (their elements count as tensors and
    /// scalars too).
    pub lists: u64,
}

impl Counters {
    /// The counts a leak check compares: `[allocations, tensors, executors, streams,
    /// events]` (byte totals and explicitly created contexts left out; attribute objects
    /// are in [`Counters::attributes`]).
    pub fn objects(&self) -> [u64; 5] {
        [
            self.allocations,
            self.tensors,
            self.executors,
            self.streams,
            self.events,
        ]
    }

    /// The attribute objects a leak check compares: `[scalars, arrays, lists]`.
    pub fn attributes(&self) -> [u64; 3] {
        [self.scalars, self.arrays, self.lists]
    }
}

/// Error of [`set_fault`]: the name is not a simulated symbol.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownSymbol(pub String);

impl std::fmt::Display for UnknownSymbol {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?} is not a simulated CANN symbol", self.0)
    }
}

impl std::error::Error for UnknownSymbol {}

/// The live-object counters now.
pub fn counters() -> Counters {
    state::state().counters()
}

/// Arms a fault: the `nth` call of `symbol` from now fails with its documented failure
/// value (`nth == 0` disarms).
///
/// # Fault injection
///
/// `ascendSimSetFault(symbol, n)` ([`set_fault`]) makes the `n`-th call of `symbol`,
/// counted from the moment it is set, fail (`n = 0` disarms); `ASCEND_SIM_FAULT` does the
/// same counted from process start. A fault fires once, before any validation, with an
/// `aclGetRecentErrMsg` text saying so, and without side effects except the one a failure
/// of that function has on CANN: an operator's phase 2 releases the live non-repeatable
/// executor it was given. The codes:
///
/// | symbol | failure |
/// |---|---|
/// | `aclInit`, `aclFinalize` | 500000 `ACL_ERROR_INTERNAL_ERROR` |
/// | `aclrtSetDevice` | 507033 `ACL_ERROR_RT_DEV_SETUP_ERROR` |
/// | `aclrtGetDeviceCount` | 207004 `ACL_ERROR_RT_NO_DEVICE` |
/// | `aclrtGetDevice`, `aclrtGetCurrentContext` | 107002 `ACL_ERROR_RT_CONTEXT_NULL` |
/// | `aclrtMalloc`, `aclrtMallocHost`, `aclrtMemPoolMallocAsync` | 207001 `ACL_ERROR_RT_MEMORY_ALLOCATION` |
/// | `aclrtSynchronizeStream`, `aclrtSynchronizeEvent` | 507046 `ACL_ERROR_RT_STREAM_SYNC_TIMEOUT` |
/// | every other runtime function returning `aclError` | 507000 `ACL_ERROR_RT_INTERNAL_ERROR` |
/// | `aclrtGetSocName`, `aclGetRecentErrMsg` | NULL |
/// | `aclCreateTensor`, `aclCreateScalar`, `aclCreateIntArray` and the other `aclCreate*` | NULL |
/// | `aclDestroyScalar`, `aclDestroyIntArray` and the other `aclDestroy*` of attribute objects, `aclGet*Size` | 561000 `ACLNN_ERR_INNER` |
/// | `aclDestroyTensor`, `aclSetAclOpExecutorRepeatable`, `aclDestroyAclOpExecutor`, `aclSetInputTensorAddr`, `aclSetOutputTensorAddr` | 561000 `ACLNN_ERR_INNER` |
/// | every operator's phase 1 (`aclnn*GetWorkspaceSize`) | 561101 `ACLNN_ERR_INNER_CREATE_EXECUTOR` |
/// | every operator's phase 2 (`aclnnMishBackward` ...) | 361001 `ACLNN_ERR_RUNTIME_ERROR` |
/// | every HCCL function returning `HcclResult` | 4 `HCCL_E_INTERNAL` |
/// | `HcclGetErrorString` | NULL |
pub fn set_fault(symbol: &str, nth: u64) -> Result<(), UnknownSymbol> {
    if state::set_fault(symbol, nth) {
        Ok(())
    } else {
        Err(UnknownSymbol(symbol.to_string()))
    }
}

/// Calls of `symbol` so far in this process (0 for an unknown name).
pub fn call_count(symbol: &str) -> u64 {
    state::call_count(symbol)
}

/// The latest sanitizer finding, if any.
pub fn last_report() -> Option<String> {
    state::last_report()
}

/// Forgets the latest sanitizer finding.
pub fn clear_last_report() {
    state::clear_last_report()
}

/// The failure value of an injected fault (an `aclError`/`aclnnStatus`; pointer-returning
/// functions return NULL instead).
pub(crate) fn fault_code(sym: Sym) -> i32 {
    fault_code_at(sym as usize)
}

/// [`fault_code`] of the symbol with counter index `index`, listed or catalogued (a
/// catalogued symbol is an operator's phase 1 or 2).
pub(crate) fn fault_code_at(index: usize) -> i32 {
    use Sym::*;
    if index >= crate::SYMBOL_COUNT {
        return if crate::catalog::name_of(index).ends_with("GetWorkspaceSize") {
            ACLNN_ERR_INNER_CREATE_EXECUTOR
        } else {
            ACLNN_ERR_RUNTIME_ERROR
        };
    }
    let sym = SYM_ORDER[index];
    if index >= FIRST_HCCL {
        return ascend_sys::hccl::HCCL_E_INTERNAL as i32;
    }
    if (FIRST_NNOPBASE..FIRST_OPERATOR).contains(&index) {
        return ACLNN_ERR_INNER;
    }
    if index >= FIRST_OPERATOR {
        return if SYMBOLS[index].ends_with("GetWorkspaceSize") {
            ACLNN_ERR_INNER_CREATE_EXECUTOR
        } else {
            ACLNN_ERR_RUNTIME_ERROR
        };
    }
    match sym {
        aclInit | aclFinalize => ACL_ERROR_INTERNAL_ERROR,
        aclrtSetDevice => ACL_ERROR_RT_DEV_SETUP_ERROR,
        aclrtGetDeviceCount => ACL_ERROR_RT_NO_DEVICE,
        aclrtGetDevice | aclrtGetCurrentContext => ACL_ERROR_RT_CONTEXT_NULL,
        aclrtMalloc | aclrtMallocHost | aclrtMemPoolMallocAsync => ACL_ERROR_RT_MEMORY_ALLOCATION,
        aclrtSynchronizeStream | aclrtSynchronizeEvent => ACL_ERROR_RT_STREAM_SYNC_TIMEOUT,
        aclDestroyTensor
        | aclSetAclOpExecutorRepeatable
        | aclDestroyAclOpExecutor
        | aclSetInputTensorAddr
        | aclSetOutputTensorAddr
        | aclCreateTensor => ACLNN_ERR_INNER,
        _ => ACL_ERROR_RT_INTERNAL_ERROR,
    }
}

/// The extra C API.
pub(crate) mod ext {
    use super::*;

    /// # Safety
    /// `symbol` is null or a NUL-terminated string.
    unsafe fn name<'a>(symbol: *const c_char) -> Option<&'a str> {
        if symbol.is_null() {
            return None;
        }
        // SAFETY: non-null and NUL-terminated by the caller's contract.
        unsafe { CStr::from_ptr(symbol) }.to_str().ok()
    }

    pub(crate) unsafe fn set_fault(symbol: *const c_char, nth: u64) -> i32 {
        // SAFETY: forwarded contract.
        match unsafe { name(symbol) } {
            Some(s) if crate::state::set_fault(s, nth) => ACL_SUCCESS,
            _ => ACL_ERROR_INVALID_PARAM,
        }
    }

    pub(crate) unsafe fn get_counters(out: *mut Counters) -> i32 {
        if out.is_null() {
            return ACL_ERROR_INVALID_PARAM;
        }
        // SAFETY: non-null and writable by the caller's contract.
        unsafe { out.write(counters()) };
        ACL_SUCCESS
    }

    pub(crate) unsafe fn get_hccl_counters(out: *mut hccl::HcclCounters) -> i32 {
        if out.is_null() {
            return ACL_ERROR_INVALID_PARAM;
        }
        // SAFETY: non-null and writable by the caller's contract.
        unsafe { out.write(hccl::counters()) };
        ACL_SUCCESS
    }

    pub(crate) unsafe fn last_report() -> *const c_char {
        crate::state::last_report_ptr()
    }

    pub(crate) unsafe fn get_call_count(symbol: *const c_char) -> u64 {
        // SAFETY: forwarded contract.
        unsafe { name(symbol) }.map_or(0, crate::state::call_count)
    }
}
