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

use crate::error::Result;
use crate::shape::MAX_DIMS;
use crate::stream::Stream;
use crate::sys;
use crate::tensor::RawTensor;
use ascend_sys::{FnTable, aclOpExecutor, aclTensor, aclrtStream};
use std::ffi::c_void;

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

/// Phase 2 of an operator: `aclnnXxx(workspace, size, executor, stream)`.
pub(crate) type Phase2 =
    unsafe extern "C" fn(*mut c_void, u64, *mut aclOpExecutor, aclrtStream) -> i32;

/// Runs the whole protocol for one call.
///
/// `phase1(descriptors, &mut workspace_size, &mut executor)` calls the operator's
/// `GetWorkspaceSize` function and returns its status. All tensors must already be
/// validated (device, dtype, shape). On success every tensor records the stream and the
/// ticket of the launch, so its memory outlives the queued work.
pub(crate) fn launch<const N: usize>(
    stream: &Stream,
    tensors: [RawTensor<'_>; N],
    phase1_name: &'static str,
    phase1: impl FnOnce(&[*mut aclTensor; N], &mut u64, &mut *mut aclOpExecutor) -> i32,
    phase2_name: &'static str,
    phase2: Phase2,
) -> Result<()> {
    let inner = &stream.inner;
    let table = inner.table();
    inner.device.bind()?;
    let descriptors = Descriptors::for_call(table, &tensors)?;
    let mut workspace_size = 0u64;
    let mut raw_executor: *mut aclOpExecutor = std::ptr::null_mut();
    let status = phase1(&descriptors.raw, &mut workspace_size, &mut raw_executor);
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
    for t in &tensors {
        t.buf.uses.record(inner, ticket);
    }
    drop(descriptors);
    Ok(())
}
