//! HCCL's checked layer: each HCCL function the crate calls, wrapped once. A wrapper calls
//! through the [`HcclTable`] and turns its `HcclResult` into a [`Result`] whose error names
//! the function (spelled only here, by `checked!`, from the table field) and carries
//! `HcclGetErrorString` and the runtime's `aclGetRecentErrMsg`.
//!
//! Wrappers are `unsafe` when the C function has preconditions beyond its arguments'
//! types (live handles, device memory, a current context); their `# Safety` is that
//! contract. Nothing here allocates unless an error is built.

use crate::error::{Error, Result};
use ascend_sys::FnTable;
use ascend_sys::aclrtStream;
use ascend_sys::hccl::{
    HCCL_SUCCESS, HcclComm, HcclDataType, HcclReduceOp, HcclResult, HcclRootInfo, HcclTable,
};
use std::ffi::{CStr, c_void};

/// Calls `hccl.$f(args)` and checks its `HcclResult`, naming the error after `$f`.
macro_rules! checked {
    ($h:expr, $t:expr, $f:ident ( $($a:expr),* $(,)? )) => {
        check($h, $t, stringify!($f), ($h.$f)($($a),*))
    };
}

/// `Ok(())` for `HCCL_SUCCESS`, else [`Error::Hccl`] for `api`.
#[inline]
fn check(h: &HcclTable, t: &FnTable, api: &'static str, code: HcclResult) -> Result<()> {
    if code == HCCL_SUCCESS {
        Ok(())
    } else {
        Err(error(h, t, api, code))
    }
}

/// Builds [`Error::Hccl`]: HCCL's text for the code, then the runtime's latest text.
#[cold]
#[inline(never)]
pub(crate) fn error(h: &HcclTable, t: &FnTable, api: &'static str, code: HcclResult) -> Error {
    // SAFETY: HcclGetErrorString takes any code and returns NULL or a static string.
    let text = unsafe {
        let p = (h.HcclGetErrorString)(code);
        if p.is_null() {
            String::new()
        } else {
            CStr::from_ptr(p).to_string_lossy().into_owned()
        }
    };
    let recent = own_text(api, &crate::sys::recent_message(t));
    let message = match (text.is_empty(), recent.is_empty()) {
        (_, true) => text,
        (true, false) => recent,
        (false, false) => format!("{text}; {recent}"),
    };
    Error::Hccl {
        api,
        code,
        name: ascend_sys::hccl::result_name(code),
        message,
    }
}

/// `recent` without the "`api` failed with NAME (code): " that the library puts before
/// each of its texts, since [`Error::Hccl`]'s display says it already.
fn own_text(api: &str, recent: &str) -> String {
    let mut out = String::with_capacity(recent.len());
    for (i, line) in recent.lines().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let own = line
            .strip_prefix(api)
            .and_then(|rest| rest.strip_prefix(" failed with "))
            .and_then(|rest| rest.split_once("): "))
            .map_or(line, |(_, text)| text);
        out.push_str(own);
    }
    out
}

/// `HcclCommInitAll`: one communicator per device of `devices` (rank = position).
///
/// # Safety
/// The calling thread has a current context (HCCL asks for the current device first).
pub(crate) unsafe fn comm_init_all(
    h: &HcclTable,
    t: &FnTable,
    devices: &mut [i32],
) -> Result<Vec<HcclComm>> {
    let n = u32::try_from(devices.len())
        .map_err(|_| Error::InvalidArgument(format!("{} devices", devices.len())))?;
    let mut comms = vec![std::ptr::null_mut(); devices.len()];
    // SAFETY: both arrays hold `n` elements; the caller's contract.
    unsafe {
        checked!(
            h,
            t,
            HcclCommInitAll(n, devices.as_mut_ptr(), comms.as_mut_ptr())
        )
    }?;
    Ok(comms)
}

/// `HcclGetRootInfo`.
///
/// # Safety
/// As [`comm_init_all`].
pub(crate) unsafe fn root_info(h: &HcclTable, t: &FnTable) -> Result<HcclRootInfo> {
    let mut root = HcclRootInfo {
        internal: [0; ascend_sys::hccl::HCCL_ROOT_INFO_BYTES as usize],
    };
    // SAFETY: a valid out-pointer; the caller's contract.
    unsafe { checked!(h, t, HcclGetRootInfo(&mut root)) }?;
    Ok(root)
}

/// `HcclCommInitRootInfo`: returns once all `n_ranks` ranks have joined.
///
/// # Safety
/// As [`comm_init_all`]; the rank's device is the current one.
pub(crate) unsafe fn comm_init_root_info(
    h: &HcclTable,
    t: &FnTable,
    n_ranks: u32,
    root: &HcclRootInfo,
    rank: u32,
) -> Result<HcclComm> {
    let mut comm = std::ptr::null_mut();
    // SAFETY: a live root info and a valid out-pointer; the caller's contract.
    unsafe { checked!(h, t, HcclCommInitRootInfo(n_ranks, root, rank, &mut comm)) }?;
    Ok(comm)
}

/// `HcclCommDestroy`.
///
/// # Safety
/// `comm` is live, destroyed once, after its queued collectives; a current context.
pub(crate) unsafe fn comm_destroy(h: &HcclTable, t: &FnTable, comm: HcclComm) -> Result<()> {
    // SAFETY: the caller's contract.
    unsafe { checked!(h, t, HcclCommDestroy(comm)) }
}

/// `HcclGetRankSize`.
///
/// # Safety
/// `comm` is live.
pub(crate) unsafe fn rank_size(h: &HcclTable, t: &FnTable, comm: HcclComm) -> Result<u32> {
    let mut n = 0u32;
    // SAFETY: a valid out-pointer; the caller's contract.
    unsafe { checked!(h, t, HcclGetRankSize(comm, &mut n)) }?;
    Ok(n)
}

/// `HcclGetRankId`.
///
/// # Safety
/// `comm` is live.
pub(crate) unsafe fn rank_id(h: &HcclTable, t: &FnTable, comm: HcclComm) -> Result<u32> {
    let mut rank = 0u32;
    // SAFETY: a valid out-pointer; the caller's contract.
    unsafe { checked!(h, t, HcclGetRankId(comm, &mut rank)) }?;
    Ok(rank)
}

/// `HcclGetCommAsyncError`: the communicator's asynchronous error (`HCCL_SUCCESS`: none).
///
/// # Safety
/// `comm` is live.
pub(crate) unsafe fn async_error(h: &HcclTable, t: &FnTable, comm: HcclComm) -> Result<HcclResult> {
    let mut code = HCCL_SUCCESS;
    // SAFETY: a valid out-pointer; the caller's contract.
    unsafe { checked!(h, t, HcclGetCommAsyncError(comm, &mut code)) }?;
    Ok(code)
}

/// Declares checked-layer calls that hand their arguments to one HCCL function
/// unchanged, as `unsafe fn name(args) = HcclFunction;` under the call's docs, whose
/// `# Safety` section is the contract the forwarding relies on.
macro_rules! forwarding {
    ($($(#[$doc:meta])* unsafe fn $name:ident($($arg:ident: $ty:ty),* $(,)?) = $f:ident;)*) => {
        $(
            $(#[$doc])*
            #[allow(clippy::too_many_arguments)]
            pub(crate) unsafe fn $name(h: &HcclTable, t: &FnTable, $($arg: $ty),*) -> Result<()> {
                // SAFETY: the caller's contract, stated in the call's docs.
                unsafe { checked!(h, t, $f($($arg),*)) }
            }
        )*
    };
}

forwarding! {
    /// `HcclAllReduce`.
    ///
    /// # Safety
    /// `comm` is live; `stream` is a stream of its device, whose context is current; `send`
    /// and `recv` hold `count` elements of `dtype` in that device's memory and stay alive
    /// until the stream has executed the collective.
    unsafe fn all_reduce(
        send: *mut c_void, recv: *mut c_void, count: u64, dtype: HcclDataType,
        op: HcclReduceOp, comm: HcclComm, stream: aclrtStream,
    ) = HcclAllReduce;

    /// `HcclBroadcast`.
    ///
    /// # Safety
    /// As [`all_reduce`], for the one buffer `buf` of `count` elements.
    unsafe fn broadcast(
        buf: *mut c_void, count: u64, dtype: HcclDataType, root: u32, comm: HcclComm,
        stream: aclrtStream,
    ) = HcclBroadcast;

    /// `HcclAllGather`.
    ///
    /// # Safety
    /// As [`all_reduce`], with `send` holding `send_count` elements and `recv` the group's
    /// size times that.
    unsafe fn all_gather(
        send: *mut c_void, recv: *mut c_void, send_count: u64, dtype: HcclDataType,
        comm: HcclComm, stream: aclrtStream,
    ) = HcclAllGather;

    /// `HcclReduceScatter`.
    ///
    /// # Safety
    /// As [`all_reduce`], with `recv` holding `recv_count` elements and `send` the group's
    /// size times that.
    unsafe fn reduce_scatter(
        send: *mut c_void, recv: *mut c_void, recv_count: u64, dtype: HcclDataType,
        op: HcclReduceOp, comm: HcclComm, stream: aclrtStream,
    ) = HcclReduceScatter;

    /// `HcclBarrier`.
    ///
    /// # Safety
    /// `comm` is live; `stream` is a stream of its device, whose context is current.
    unsafe fn barrier(comm: HcclComm, stream: aclrtStream) = HcclBarrier;

    /// `HcclSend`: `buf`'s `count` elements to rank `dest` (matched by its [`recv`]).
    ///
    /// # Safety
    /// As [`all_reduce`], for the one buffer `buf` of `count` elements.
    unsafe fn send(
        buf: *mut c_void, count: u64, dtype: HcclDataType, dest: u32, comm: HcclComm,
        stream: aclrtStream,
    ) = HcclSend;

    /// `HcclRecv`: `count` elements from rank `src` into `buf` (matched by its [`send`]).
    ///
    /// # Safety
    /// As [`all_reduce`], for the one buffer `buf` of `count` elements.
    unsafe fn recv(
        buf: *mut c_void, count: u64, dtype: HcclDataType, src: u32, comm: HcclComm,
        stream: aclrtStream,
    ) = HcclRecv;
}
