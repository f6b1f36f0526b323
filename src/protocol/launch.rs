//! The two-phase protocol of one call: descriptors, phase 1, workspace, phase 2.

use super::args::{Arg, Given, Inferred, Value, resolve_dtype_of};
use super::attr::CArg;
use super::entry::{EntryPoints, OperatorFns};
use super::handles::{Guard, handle_not_destroyed};
use super::rules::{Operator, validate, validate_into};
use crate::device::DeviceInner;
use crate::element::DType;
use crate::error::Result;
use crate::operand::Allocated;
use crate::shape::Dims;
use crate::stream::{Stream, StreamInner};
use crate::sys::{self, Lib};
use crate::uses::Access;
use ascend_sys::aclOpExecutor;
use std::cell::Cell;
use std::ffi::c_void;
use std::ptr::NonNull;
use std::sync::Arc;

/// An operator's typed phase-1 call ([`Operator::phase1`]).
pub(crate) type Phase1 =
    unsafe fn(NonNull<c_void>, &[CArg], *mut u64, *mut *mut aclOpExecutor) -> i32;

/// What the protocol needs of a declared operator, without its type.
#[derive(Clone, Copy)]
pub(crate) struct Spec {
    pub(crate) args: &'static [Arg],
    pub(crate) entry: &'static EntryPoints,
    pub(crate) phase1: Phase1,
}

impl Spec {
    pub(crate) fn of<O: Operator>() -> Spec {
        Spec {
            args: O::ARGS,
            entry: O::entry_points(),
            phase1: O::phase1,
        }
    }
}

/// Validates the arguments against the declaration of `O` and runs the whole protocol
/// once. Called by the functions `operator!` generates.
#[doc(hidden)]
#[inline]
pub fn call<O: Operator, const N: usize>(stream: &Stream, values: [Value<'_>; N]) -> Result<()> {
    let mut values = values;
    resolve_dtype_of(O::ARGS, &mut values);
    validate::<O>(stream, &values)?;
    launch(stream, &values, Spec::of::<O>())
}

/// An allocating variant: validates the arguments with the output pending
/// ([`Value::pending`]), makes a new tensor `R` of the shape the operator's rule computes
/// for it (from the device's caching allocator, without a fill: the operator writes it
/// whole), of `R`'s dtype or, for a [`Tensor`](crate::Tensor), the dtype the call infers,
/// and runs the protocol into it. Called by the functions `operator!` generates for
/// `allocating:`.
///
/// # Errors
/// As [`call`]; [`Error::InvalidArgument`](crate::Error::InvalidArgument) when the
/// operator's rule computes no shape for the pending output, or no dtype can be inferred
/// for it; the allocation's error.
#[doc(hidden)]
#[inline]
pub fn call_new<O: Operator, R: Allocated, const N: usize>(
    stream: &Stream,
    values: [Value<'_>; N],
) -> Result<R> {
    let dims = [const { Cell::new(None) }; N];
    let inferred = Inferred {
        dims: &dims,
        ..Inferred::default()
    };
    validate_into::<O>(stream, &values, &inferred)?;
    let (out, shape, dtype) = pending_output::<O>(&values, &inferred, 0)?;
    let mut tensor = R::allocate(stream, shape, dtype)?;
    {
        let mut values = values;
        values[out] = Value::output(tensor.output());
        resolve_dtype_of(O::ARGS, &mut values);
        launch(stream, &values, Spec::of::<O>())?;
    }
    Ok(tensor)
}

/// [`call_new`] for an operator with two outputs, both pending: makes both (in the
/// declaration's order) and returns them as a pair.
///
/// # Errors
/// As [`call_new`].
#[doc(hidden)]
#[inline]
pub fn call_new2<O: Operator, R: Allocated, S: Allocated, const N: usize>(
    stream: &Stream,
    values: [Value<'_>; N],
) -> Result<(R, S)> {
    let dims = [const { Cell::new(None) }; N];
    let inferred = Inferred {
        dims: &dims,
        ..Inferred::default()
    };
    validate_into::<O>(stream, &values, &inferred)?;
    let (first, shape, dtype) = pending_output::<O>(&values, &inferred, 0)?;
    let (second, shape2, dtype2) = pending_output::<O>(&values, &inferred, first + 1)?;
    let mut a = R::allocate(stream, shape, dtype)?;
    let mut b = S::allocate(stream, shape2, dtype2)?;
    {
        let mut values = values;
        values[first] = Value::output(a.output());
        values[second] = Value::output(b.output());
        resolve_dtype_of(O::ARGS, &mut values);
        launch(stream, &values, Spec::of::<O>())?;
    }
    Ok((a, b))
}

/// The first pending output at or after `from`, with the shape the rule gave it and its
/// dtype (the caller's, or the one the call inferred).
fn pending_output<O: Operator>(
    values: &[Value<'_>],
    inferred: &Inferred<'_>,
    from: usize,
) -> Result<(usize, Dims, DType)> {
    let out = values
        .iter()
        .skip(from)
        .position(Value::is_pending)
        .map(|k| k + from);
    let found = out.and_then(|i| {
        let shape = inferred.dims.get(i)?.get()?;
        let dtype = match values[i].0 {
            Given::Pending(Some(d)) => d,
            _ => inferred.dtype.get()?,
        };
        Some((i, shape, dtype))
    });
    found.ok_or_else(|| no_inferred_shape(O::NAME))
}

#[cold]
fn no_inferred_shape(operator: &'static str) -> crate::Error {
    crate::Error::InvalidArgument(format!(
        "the rule of {operator} computes no shape or dtype for its output: it has no \
         allocating form"
    ))
}

/// Runs the protocol on validated arguments (in the order of phase 1), through the
/// device's executor cache when it is on (and the library has executor reuse); else the
/// handles
/// ([`Guard::for_call`]), phase 1, then phase 2 on the stream with the workspace from the
/// stream's cache. On success every tensor records the stream and the ticket of the
/// launch, so its memory outlives the queued work; the handles made for the call are
/// released once phase 2 has returned, and on every error path by the guards.
pub(crate) fn launch<const N: usize>(
    stream: &Stream,
    values: &[Value<'_>; N],
    spec: Spec,
) -> Result<()> {
    let inner = &stream.inner;
    let fns = spec.entry.get(&inner.device)?;
    // A call with a tensor list is never cached: its key would be as long as the list.
    if inner.device.executors.enabled()
        && inner.device.rt.api.supports_executor_reuse()
        && !values.iter().any(|v| v.list_elements().is_some())
    {
        return super::cache::launch(stream, values, spec, fns);
    }
    inner.device.bind()?;
    order_after_other_streams(inner, values, spec.args)?;
    let handles = Guard::for_call(&inner.device, values)?;
    let (mut executor, workspace_size) = prepare(&inner.device, spec, &fns, &handles.handles.raw)?;
    let ticket = enqueue(
        inner,
        spec.entry,
        &fns,
        || executor.hand_to_phase2(),
        workspace_size,
    )?;
    record_uses(inner, ticket, values, spec.args);
    drop(handles);
    Ok(())
}

fn access(arg: &Arg) -> Access {
    match arg.role() {
        Some(r) if r.may_write() => Access::Write,
        _ => Access::Read,
    }
}

/// Makes `stream` wait for the work of other streams that the arguments' accesses must
/// follow (see [`Uses::order`](crate::uses::Uses::order)).
#[inline]
pub(crate) fn order_after_other_streams(
    stream: &Arc<StreamInner>,
    values: &[Value<'_>],
    args: &[Arg],
) -> Result<()> {
    let mut ordered = Ok(());
    for (v, arg) in values.iter().zip(args) {
        v.each_tensor(|t| {
            if ordered.is_ok() {
                ordered = t.buf.uses.order(stream, access(arg));
            }
        });
    }
    ordered
}

/// Records that the launch with `ticket` uses (reads or writes) every tensor argument.
#[inline]
pub(crate) fn record_uses(
    stream: &Arc<StreamInner>,
    ticket: u64,
    values: &[Value<'_>],
    args: &[Arg],
) {
    for (v, arg) in values.iter().zip(args) {
        v.each_tensor(|t| t.buf.uses.record(stream, ticket, access(arg)));
    }
}

/// Phase 1 on `handles`: the executor (destroyed on drop unless handed on) and the
/// workspace size. The device's context must be current.
pub(crate) fn prepare<'t>(
    device: &'t DeviceInner,
    spec: Spec,
    fns: &OperatorFns,
    handles: &[CArg],
) -> Result<(Executor<'t>, u64)> {
    let table = device.table();
    let mut workspace_size = 0u64;
    let mut raw: *mut aclOpExecutor = std::ptr::null_mut();
    // SAFETY: `fns.phase1` is the phase 1 of the operator whose typed call `spec.phase1`
    // is (both from its declaration); the handles are live and of the declared kinds.
    let status = unsafe { (spec.phase1)(fns.phase1, handles, &mut workspace_size, &mut raw) };
    let executor = Executor { device, raw };
    sys::check(table, Lib::Aclnn, spec.entry.phase1, status)?;
    if executor.raw.is_null() {
        return Err(sys::error(
            table,
            Lib::Aclnn,
            spec.entry.phase1,
            ascend_sys::ACLNN_ERR_INNER_NULLPTR,
        ));
    }
    Ok((executor, workspace_size))
}

/// Queues phase 2 on the stream, with a workspace of `workspace_size` bytes (the stream's
/// grow-only block of the device's cache). Returns the ticket of the launch.
///
/// `executor` gives the executor at the moment phase 2 is called, and only then (not when
/// the stream or the workspace fails first): CANN releases a non-repeatable executor in
/// its phase 2 whatever phase 2 returns, so from that call on the caller must not destroy
/// it. The workspace is never NULL with a non-zero size, the one case in which CANN also
/// releases a repeatable executor.
pub(crate) fn enqueue(
    stream: &StreamInner,
    entry: &EntryPoints,
    fns: &OperatorFns,
    executor: impl FnOnce() -> *mut aclOpExecutor,
    workspace_size: u64,
) -> Result<u64> {
    let table = stream.table();
    stream.reserve_workspace(workspace_size)?;
    stream.submit(|state, raw_stream, _| {
        let workspace = state.workspace(workspace_size)?;
        let executor = executor();
        // SAFETY: the executor comes from the operator's phase 1 and has not been through
        // a non-repeatable phase 2; the workspace holds at least `workspace_size` bytes of
        // device memory that stays allocated until the stream has run this work
        // (grow-only; a replaced one goes back to the device's cache with this stream's use
        // record, so no other user takes it before that work has run); the callers record the tensors' use at the
        // returned ticket.
        let status = unsafe { (fns.phase2)(workspace, workspace_size, executor, raw_stream) };
        sys::check(table, Lib::Aclnn, entry.phase2, status)
    })
}

/// An executor from phase 1; destroyed on drop unless it was handed to phase 2 or a plan
/// took it.
pub(crate) struct Executor<'t> {
    device: &'t DeviceInner,
    pub(crate) raw: *mut aclOpExecutor,
}

impl Executor<'_> {
    /// The executor, for phase 2, which releases it (not repeatable) whether it succeeds
    /// or fails: the guard no longer destroys it.
    pub(crate) fn hand_to_phase2(&mut self) -> *mut aclOpExecutor {
        std::mem::replace(&mut self.raw, std::ptr::null_mut())
    }

    /// The executor, for a plan that made it repeatable and destroys it itself.
    pub(crate) fn into_raw(mut self) -> *mut aclOpExecutor {
        std::mem::replace(&mut self.raw, std::ptr::null_mut())
    }
}

impl Drop for Executor<'_> {
    fn drop(&mut self) {
        if !self.raw.is_null() {
            // SAFETY: the executor came from a successful phase 1, never reached phase 2
            // (which would have released it) and no plan took it; destroyed once.
            // (Releases without this function, before CANN 8.0, cannot free it: it leaks,
            // counted as a failed destroy is.)
            if let Err(e) = unsafe { sys::destroy_executor(self.device.table(), self.raw) } {
                handle_not_destroyed(self.device, &e);
            }
        }
    }
}
