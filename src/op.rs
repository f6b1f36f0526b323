//! The two-phase aclnn protocol, shared by every operator.
//!
//! [`launch`] gets one `aclTensor` descriptor per argument, runs phase 1 through a
//! closure, takes the workspace from the stream's cache, runs phase 2 on the stream, and
//! destroys the descriptors it made. An argument that is a whole
//! [`DeviceTensor`](crate::DeviceTensor) (not a view with another layout) uses the
//! descriptor cached on the tensor (made on its first use, destroyed with the tensor after
//! its queued work); any other view gets a descriptor built from stack arrays for this
//! call only. Guards release everything made so far on every error path: per-call
//! descriptors (`aclDestroyTensor`) and an executor that phase 2 did not consume
//! (`aclDestroyAclOpExecutor`). Nothing here allocates unless an error is reported.

use crate::device::DeviceInner;
use crate::error::{Error, Result};
use crate::shape::MAX_DIMS;
use crate::stream::Stream;
use crate::sys;
use crate::tensor::RawTensor;
use crate::uses::Access;
use ascend_sys::{Api, FnTable, OperatorLaunchFn, aclOpExecutor, aclTensor};
use std::ffi::c_void;
use std::ptr::NonNull;
use std::sync::OnceLock;

/// The `aclTensor` descriptors of one call; the ones it made are destroyed on drop.
pub(crate) struct Descriptors<'t, const N: usize> {
    table: &'t FnTable,
    pub(crate) raw: [*mut aclTensor; N],
    /// Made for this call (destroyed on drop), as opposed to cached on a tensor.
    owned: [bool; N],
}

impl<'t, const N: usize> Descriptors<'t, N> {
    /// Creates a fresh descriptor for each argument, all owned (for plans, which rebind
    /// addresses and so must never share a descriptor).
    pub(crate) fn new(table: &'t FnTable, tensors: &[RawTensor<'_>; N]) -> Result<Self> {
        Self::filled(table, tensors, |t| Ok((create_tensor(table, t)?, true)))
    }

    /// The descriptors of one call: a whole tensor's cached descriptor (made now if it is
    /// the tensor's first use), or a fresh one for a view with another layout.
    #[inline]
    pub(crate) fn for_call(table: &'t FnTable, tensors: &[RawTensor<'_>; N]) -> Result<Self> {
        Self::filled(table, tensors, |t| {
            if t.whole {
                let p = t.buf.cached_desc();
                Ok((if p.is_null() { cache(table, t)? } else { p }, false))
            } else {
                Ok((create_tensor(table, t)?, true))
            }
        })
    }

    /// One descriptor per argument from `make` (the descriptor, and whether this call
    /// owns it). On an error the ones made so far are released by the drop of the
    /// partly filled set.
    #[inline]
    fn filled(
        table: &'t FnTable,
        tensors: &[RawTensor<'_>; N],
        mut make: impl FnMut(&RawTensor<'_>) -> Result<(*mut aclTensor, bool)>,
    ) -> Result<Self> {
        let mut d = Descriptors {
            table,
            raw: [std::ptr::null_mut(); N],
            owned: [false; N],
        };
        for ((slot, owned), t) in d.raw.iter_mut().zip(&mut d.owned).zip(tensors) {
            (*slot, *owned) = make(t)?;
        }
        Ok(d)
    }
}

/// Makes and installs the cached descriptor of a whole tensor (first use).
#[cold]
#[inline(never)]
fn cache(table: &FnTable, t: &RawTensor<'_>) -> Result<*mut aclTensor> {
    let new = create_tensor(table, t)?;
    let (p, installed) = t.buf.install_desc(new);
    if !installed {
        // Another thread installed one first; ours was never used.
        // SAFETY: made above by aclCreateTensor, destroyed once.
        let _ = unsafe { (table.aclDestroyTensor)(new) };
    }
    Ok(p)
}

impl<const N: usize> Descriptors<'_, N> {
    /// Gives up ownership of the descriptors (the caller destroys them). Only for
    /// descriptors made by [`Descriptors::new`].
    pub(crate) fn into_raw(self) -> [*mut aclTensor; N] {
        debug_assert!(self.owned.iter().all(|o| *o));
        let raw = self.raw;
        std::mem::forget(self);
        raw
    }
}

impl<const N: usize> Drop for Descriptors<'_, N> {
    #[inline]
    fn drop(&mut self) {
        for (p, owned) in self.raw.into_iter().zip(self.owned) {
            if owned {
                // SAFETY: `p` was returned by aclCreateTensor for this call and is
                // destroyed once (cached descriptors are not owned here).
                let _ = unsafe { (self.table.aclDestroyTensor)(p) };
            }
        }
    }
}

/// Creates the descriptor of one argument: view dims/strides/offset in elements, storage
/// shape `[len]` (1-D), format ND, base address of the storage.
pub(crate) fn create_tensor(table: &FnTable, t: &RawTensor<'_>) -> Result<*mut aclTensor> {
    let n = t.layout.dims.ndim();
    let mut dims = [0i64; MAX_DIMS];
    for (d, v) in dims.iter_mut().zip(t.layout.dims.iter()) {
        // Dims of a checked view fit in i64 (they bound a real allocation or are 0-strided).
        *d = i64::try_from(*v).unwrap_or(i64::MAX);
    }
    let storage = [i64::try_from(t.buf.len).unwrap_or(i64::MAX)];
    // SAFETY: `dims` and `strides` hold `n <= 8` valid entries and `storage` one; they are
    // copied by aclCreateTensor. `t.buf.ptr` is a live device allocation of at least
    // `t.buf.len` elements, and the view stays inside it (checked when it was built).
    let p = unsafe {
        (table.aclCreateTensor)(
            dims.as_ptr(),
            n as u64,
            t.dtype.acl(),
            t.layout.strides.as_ptr(),
            t.layout.offset,
            ascend_sys::ACL_FORMAT_ND,
            storage.as_ptr(),
            1,
            t.buf.ptr,
        )
    };
    if p.is_null() {
        return Err(sys::aclnn_error(
            table,
            "aclCreateTensor",
            ascend_sys::ACLNN_ERR_INNER_NULLPTR,
        ));
    }
    Ok(p)
}

/// An executor from phase 1; destroyed on drop unless phase 2 consumed it.
pub(crate) struct Executor<'t> {
    table: &'t FnTable,
    pub(crate) raw: *mut aclOpExecutor,
}

impl<'t> Executor<'t> {
    pub(crate) fn new(table: &'t FnTable, raw: *mut aclOpExecutor) -> Self {
        Executor { table, raw }
    }

    /// Phase 2 took ownership: do not destroy.
    pub(crate) fn consumed(mut self) {
        self.raw = std::ptr::null_mut();
    }
}

impl Drop for Executor<'_> {
    fn drop(&mut self) {
        if let (false, Some(destroy)) = (self.raw.is_null(), self.table.aclDestroyAclOpExecutor) {
            // SAFETY: the executor came from a successful phase 1, was not consumed by a
            // successful phase 2, and is destroyed once. (Releases without this function,
            // before CANN 8.0, cannot free an unconsumed executor; it is leaked.)
            let _ = unsafe { destroy(self.raw) };
        }
    }
}

/// The two C entry points of one operator, looked up by name ([`Api::operator_symbol`])
/// the first time a runtime uses them and remembered per runtime, so that a toolkit
/// lacking the operator still loads and the call reports [`Error::UnsupportedOperator`].
/// One `static` per operator; a lookup in steady state is an atomic load and a compare.
pub(crate) struct EntryPoints {
    /// `aclnnXxxGetWorkspaceSize`.
    pub(crate) phase1: &'static str,
    /// `aclnnXxx`, also the operator's name in errors.
    pub(crate) phase2: &'static str,
    /// One entry per runtime that used the operator (there are at most a few runtimes in
    /// a process: CANN and the simulator). A runtime beyond the last slot looks the
    /// symbols up on every call.
    resolved: [OnceLock<Lookup>; RUNTIME_SLOTS],
}

const RUNTIME_SLOTS: usize = 4;

/// The lookup result of one runtime.
#[derive(Clone, Copy)]
struct Lookup {
    /// Which runtime (compared, never dereferenced).
    api: *const Api,
    phase1: Option<NonNull<c_void>>,
    phase2: Option<NonNull<c_void>>,
}

// SAFETY: the pointers are addresses of immutable code (functions of a library that
// stays loaded for the life of the process) and an identity key; nothing is mutated.
unsafe impl Send for Lookup {}
// SAFETY: as above.
unsafe impl Sync for Lookup {}

/// An operator's entry points in one runtime.
#[derive(Clone, Copy)]
pub(crate) struct OperatorFns {
    phase1: NonNull<c_void>,
    pub(crate) phase2: OperatorLaunchFn,
}

impl EntryPoints {
    pub(crate) const fn new(phase1: &'static str, phase2: &'static str) -> Self {
        EntryPoints {
            phase1,
            phase2,
            resolved: [const { OnceLock::new() }; RUNTIME_SLOTS],
        }
    }

    /// The entry points in the runtime of `device`.
    ///
    /// # Errors
    /// [`Error::UnsupportedOperator`] naming the first symbol the runtime lacks.
    #[inline]
    pub(crate) fn get(&self, device: &DeviceInner) -> Result<OperatorFns> {
        let api: &'static Api = &device.rt.api;
        let key: *const Api = api;
        for slot in &self.resolved {
            match slot.get() {
                Some(r) if r.api == key => return self.usable(r, device),
                Some(_) => continue,
                None => {
                    let r = slot.get_or_init(|| self.look_up(api));
                    if r.api == key {
                        return self.usable(r, device);
                    }
                }
            }
        }
        self.usable(&self.look_up(api), device)
    }

    #[cold]
    fn look_up(&self, api: &'static Api) -> Lookup {
        Lookup {
            api,
            phase1: api.operator_symbol(self.phase1),
            phase2: api.operator_symbol(self.phase2),
        }
    }

    #[inline]
    fn usable(&self, r: &Lookup, device: &DeviceInner) -> Result<OperatorFns> {
        match (r.phase1, r.phase2) {
            (Some(phase1), Some(phase2)) => Ok(OperatorFns {
                phase1,
                // SAFETY: `operator_symbol` returns the address of the function named
                // `self.phase2`, an aclnn phase 2, whose prototype is `OperatorLaunchFn`
                // (checked against the header where the operator is declared).
                phase2: unsafe {
                    std::mem::transmute::<*mut c_void, OperatorLaunchFn>(phase2.as_ptr())
                },
            }),
            (None, _) => Err(self.missing(self.phase1, device)),
            (_, None) => Err(self.missing(self.phase2, device)),
        }
    }

    #[cold]
    #[inline(never)]
    fn missing(&self, symbol: &'static str, device: &DeviceInner) -> Error {
        Error::UnsupportedOperator {
            operator: self.phase2,
            soc: device.soc().to_owned(),
            missing_symbol: Some(symbol),
        }
    }
}

impl OperatorFns {
    /// Calls phase 1 with one descriptor per argument, in the operator's argument order.
    ///
    /// # Safety
    /// The entry points must be those of an operator whose phase 1 takes exactly `N`
    /// tensors (then the workspace-size and executor out-pointers), and `descriptors` must
    /// be live descriptors of that operator's arguments.
    #[inline]
    pub(crate) unsafe fn phase1<const N: usize>(
        &self,
        descriptors: &[*mut aclTensor; N],
        workspace_size: &mut u64,
        executor: &mut *mut aclOpExecutor,
    ) -> i32 {
        type T = *mut aclTensor;
        type W = *mut u64;
        type E = *mut *mut aclOpExecutor;
        let p = self.phase1.as_ptr();
        // SAFETY: `p` is the operator's phase 1, which takes N tensor pointers then W and E
        // (the caller's contract). `*mut aclTensor` is ABI-compatible with the
        // `const aclTensor *` of inputs. `N` is a constant: one arm survives.
        unsafe {
            match *descriptors.as_slice() {
                [a] => std::mem::transmute::<*mut c_void, unsafe extern "C" fn(T, W, E) -> i32>(p)(
                    a,
                    workspace_size,
                    executor,
                ),
                [a, b] => {
                    std::mem::transmute::<*mut c_void, unsafe extern "C" fn(T, T, W, E) -> i32>(p)(
                        a,
                        b,
                        workspace_size,
                        executor,
                    )
                }
                [a, b, c] => std::mem::transmute::<
                    *mut c_void,
                    unsafe extern "C" fn(T, T, T, W, E) -> i32,
                >(p)(a, b, c, workspace_size, executor),
                [a, b, c, d] => std::mem::transmute::<
                    *mut c_void,
                    unsafe extern "C" fn(T, T, T, T, W, E) -> i32,
                >(p)(a, b, c, d, workspace_size, executor),
                _ => ascend_sys::ACLNN_ERR_INNER,
            }
        }
    }
}

/// Runs the whole protocol for one call.
///
/// The operator's entry points come from `entry`. All tensors must already be validated
/// (device, dtype, shape), and be in the order of the operator's phase-1 arguments. On success every tensor records the stream and the
/// ticket of the launch, so its memory outlives the queued work.
pub(crate) fn launch<const N: usize>(
    stream: &Stream,
    tensors: [RawTensor<'_>; N],
    entry: &'static EntryPoints,
) -> Result<()> {
    let inner = &stream.inner;
    let table = inner.table();
    let fns = entry.get(&inner.device)?;
    let (phase1_name, phase2_name, phase2) = (entry.phase1, entry.phase2, fns.phase2);
    inner.device.bind()?;
    for (t, access) in tensors.iter().zip(accesses::<N>()) {
        t.buf.uses.order(inner, access)?;
    }
    let descriptors = Descriptors::for_call(table, &tensors)?;
    let mut workspace_size = 0u64;
    let mut raw_executor: *mut aclOpExecutor = std::ptr::null_mut();
    // SAFETY: the operator's phase 1 takes its N tensors in `tensors`' order (the
    // operator's declaration); the descriptors are live for this call.
    let status = unsafe { fns.phase1(&descriptors.raw, &mut workspace_size, &mut raw_executor) };
    let executor = Executor::new(table, raw_executor);
    sys::aclnn(table, phase1_name, status)?;
    if executor.raw.is_null() {
        return Err(sys::aclnn_error(
            table,
            phase1_name,
            ascend_sys::ACLNN_ERR_INNER_NULLPTR,
        ));
    }
    let ticket = inner.submit(|state, raw_stream, ticket| {
        let workspace = state.workspace(table, workspace_size, ticket)?;
        // SAFETY: the executor comes from phase 1 and is used once; the workspace holds at
        // least `workspace_size` bytes of device memory that stays allocated until the
        // stream has finished this work (grow-only cache, deferred release); the tensors'
        // memory is kept alive by the use records made below.
        let status = unsafe { phase2(workspace, workspace_size, executor.raw, raw_stream) };
        sys::aclnn(table, phase2_name, status)
    });
    // On error, `executor` and `descriptors` are released by their guards.
    let ticket = ticket?;
    executor.consumed();
    for (t, access) in tensors.iter().zip(accesses::<N>()) {
        t.buf.uses.record(inner, ticket, access);
    }
    drop(descriptors);
    Ok(())
}

/// The access of each argument: the last one is the output.
pub(crate) fn accesses<const N: usize>() -> [Access; N] {
    std::array::from_fn(|i| {
        if i + 1 == N {
            Access::Write
        } else {
            Access::Read
        }
    })
}
