//! [`Plan`]: one operator's phase 1 run once, phase 2 launched many times.

use super::descriptors::Descriptors;
use super::entry::{EntryPoints, MAX_ARGS, OperatorFns};
use super::launch::{enqueue, launch, order_after_other_streams, prepare, record_uses};
use super::rules::{Arg, Operator, validate};
use crate::device::DeviceInner;
use crate::error::{Error, Result};
use crate::stream::Stream;
use crate::sys;
use crate::tensor::{Layout, RawTensor};
use crate::uses::{Access, Uses};
use ascend_sys::{aclOpExecutor, aclTensor};
use std::ffi::c_void;
use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;

/// A reusable launch of operator `O` for fixed layouts and element types `E` (a tuple,
/// one type per tensor argument): phase 1 runs once, when the plan is built (with
/// `aclSetAclOpExecutorRepeatable`), and every `launch` only rebinds the device addresses
/// that changed (`aclSetInputTensorAddr` / `aclSetOutputTensorAddr`) and runs phase 2.
///
/// Each operator module names its plan (`MishBackwardPlan`, `MishPlan`, ...) and gives it
/// `new` and `launch` with the operator's own arguments.
///
/// * **What a launch accepts.** Tensors on the plan's device whose views have the dims,
///   strides and offset the plan was built with, in any storage: a whole tensor, or the
///   same-shaped view of a larger one. The plan's descriptors declare only the storage
///   their views reach, so the storage size does not matter; an address is rebound only
///   when it differs from the one the descriptor holds, so relaunching on the same tensors
///   runs phase 2 alone. Element types are fixed by the type.
/// * **Ownership.** The plan owns its descriptors and executor (never shared with one-off
///   calls, whose descriptors may be cached on the tensors) and releases them
///   (`aclDestroyAclOpExecutor`, `aclDestroyTensor`) when dropped, after its queued
///   launches have run.
/// * **Older CANN.** Where the library lacks executor reuse (before CANN 8.0), every
///   launch is a plain one-off call; [`is_reusable`](Self::is_reusable) says which.
///
/// `Send + Sync`; launching needs `&mut self`. A launch does not allocate.
pub struct Plan<O, E> {
    operator: &'static str,
    entry: &'static EntryPoints,
    args: &'static [Arg],
    device: Arc<DeviceInner>,
    layouts: [Layout; MAX_ARGS],
    reusable: Option<Reusable>,
    _types: PhantomData<fn() -> (O, E)>,
}

/// A plan's own descriptors and repeatable executor.
struct Reusable {
    device: Arc<DeviceInner>,
    fns: OperatorFns,
    descriptors: [*mut aclTensor; MAX_ARGS],
    n: usize,
    executor: *mut aclOpExecutor,
    workspace_size: u64,
    uses: Uses,
    /// The device address each descriptor holds (the one it was made with, or the last
    /// one rebound).
    bound: [*mut c_void; MAX_ARGS],
}

// SAFETY: the descriptors and executor are opaque library handles used only through
// `&mut Plan` (launch) or on drop, with the device's context bound on the calling thread.
unsafe impl Send for Reusable {}
// SAFETY: `&Reusable` exposes nothing that touches the handles.
unsafe impl Sync for Reusable {}

impl<O, E> Plan<O, E> {
    /// Whether launches reuse the executor (`false`: the library lacks executor reuse and
    /// every launch is a plain call).
    pub fn is_reusable(&self) -> bool {
        self.reusable.is_some()
    }
}

impl<O, E> Plan<O, E> {
    /// Validates like a one-off call and runs phase 1 once for these tensors' layouts.
    pub(crate) fn build<const N: usize>(stream: &Stream, args: [RawTensor<'_>; N]) -> Result<Self>
    where
        O: Operator,
    {
        validate::<O, N>(stream, &args)?;
        let mut layouts = [Layout::default(); MAX_ARGS];
        for (l, t) in layouts.iter_mut().zip(&args) {
            *l = t.layout;
        }
        let device = Arc::clone(&stream.inner.device);
        let entry = O::entry_points();
        let fns = entry.get(&device)?;
        let reusable = if device.rt.api.supports_executor_reuse() {
            Some(Reusable::new(&device, entry, fns, &args)?)
        } else {
            None
        };
        Ok(Plan {
            operator: O::NAME,
            entry,
            args: O::ARGS,
            device,
            layouts,
            reusable,
            _types: PhantomData,
        })
    }

    /// Queues the operator on `stream` for `args` (in the declaration's order), which must
    /// have the planned layouts.
    pub(crate) fn run<const N: usize>(
        &mut self,
        stream: &Stream,
        args: [RawTensor<'_>; N],
    ) -> Result<()> {
        let device = &stream.inner.device;
        self.device.expect_same(device, "plan")?;
        for ((t, planned), arg) in args.iter().zip(&self.layouts).zip(self.args) {
            t.buf.device.expect_same(device, arg.name)?;
            if t.layout != *planned {
                return Err(plan_mismatch(arg.name, &t.layout, planned));
            }
        }
        let Some(plan) = self.reusable.as_mut() else {
            return launch(stream, args, self.args, self.entry);
        };
        let inner = &stream.inner;
        inner.device.bind()?;
        order_after_other_streams(inner, &args, self.args)?;
        let mut addrs = [std::ptr::null_mut(); MAX_ARGS];
        for (a, t) in addrs.iter_mut().zip(&args) {
            *a = t.buf.ptr;
        }
        if addrs != plan.bound {
            plan.rebind(self.args, &addrs)?;
        }
        // Repeatable: phase 2 leaves the executor to the plan whatever it returns.
        let executor = plan.executor;
        let ticket = enqueue(
            inner,
            self.entry,
            &plan.fns,
            move || executor,
            plan.workspace_size,
        )?;
        plan.uses.record(inner, ticket, Access::Read);
        record_uses(inner, ticket, &args, self.args);
        Ok(())
    }
}

impl Reusable {
    /// The plan's own descriptors, phase 1, and the executor made repeatable.
    fn new<const N: usize>(
        device: &Arc<DeviceInner>,
        entry: &EntryPoints,
        fns: OperatorFns,
        args: &[RawTensor<'_>; N],
    ) -> Result<Reusable> {
        let table = device.table();
        device.bind()?;
        let descriptors = Descriptors::for_plan(table, args)?;
        let (executor, workspace_size) = prepare(table, entry, &fns, &descriptors.raw)?;
        // SAFETY: a fresh executor from phase 1, before any phase 2.
        unsafe { sys::set_executor_repeatable(table, executor.raw) }?;
        let raw_executor = executor.into_raw(); // destroyed by the plan's drop
        let mut plan = Reusable {
            device: Arc::clone(device),
            fns,
            descriptors: [std::ptr::null_mut(); MAX_ARGS],
            n: N,
            executor: raw_executor,
            workspace_size,
            uses: Uses::new(),
            bound: [std::ptr::null_mut(); MAX_ARGS],
        };
        plan.descriptors[..N].copy_from_slice(&descriptors.into_raw());
        for (b, t) in plan.bound.iter_mut().zip(args) {
            *b = t.buf.ptr;
        }
        Ok(plan)
    }

    /// Points the executor's descriptors at `addrs`, skipping those that already hold
    /// theirs: inputs by input index, outputs by output index, an in-place argument both.
    /// The device context must be current.
    #[inline(never)]
    fn rebind(&mut self, args: &[Arg], addrs: &[*mut c_void; MAX_ARGS]) -> Result<()> {
        let table = self.device.table();
        let (mut input, mut output) = (0usize, 0usize);
        for (i, arg) in args.iter().enumerate() {
            let (addr, d) = (addrs[i], self.descriptors[i]);
            let changed = addr != self.bound[i];
            // SAFETY: the plan's live repeatable executor and its own descriptor of this
            // argument (never shared); `addr` is the base of a live device allocation in
            // which a view of the planned layout lies, so it holds the storage the
            // descriptor declares.
            unsafe {
                if arg.role.reads() {
                    if changed {
                        sys::set_input_addr(table, self.executor, input, d, addr)?;
                    }
                    input += 1;
                }
                if arg.role.writes() {
                    if changed {
                        sys::set_output_addr(table, self.executor, output, d, addr)?;
                    }
                    output += 1;
                }
            }
            self.bound[i] = addr;
        }
        Ok(())
    }
}

impl Drop for Reusable {
    fn drop(&mut self) {
        let device = &self.device;
        if !self.uses.wait_idle() || device.bind().is_err() {
            device.note_leak("plan", 0, 0, self.n as u64 + 1);
            return;
        }
        let table = device.table();
        // SAFETY: a repeatable executor from phase 1, never consumed; destroyed once after
        // every launch of it has run.
        if let Err(e) = unsafe { sys::destroy_executor(table, self.executor) } {
            device.note_release_error(&e);
        }
        for &d in &self.descriptors[..self.n] {
            // SAFETY: descriptors made for this plan, destroyed once, after the executor.
            if let Err(e) = unsafe { sys::destroy_tensor(table, d) } {
                device.note_release_error(&e);
            }
        }
    }
}

impl<O, E> fmt::Debug for Plan<O, E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shapes: Vec<(&str, &[usize])> = self
            .args
            .iter()
            .zip(&self.layouts)
            .map(|(a, l)| (a.name, l.dims.as_slice()))
            .collect();
        f.debug_struct("Plan")
            .field("operator", &self.operator)
            .field("shapes", &shapes)
            .field("reusable", &self.reusable.is_some())
            .finish()
    }
}

#[cold]
fn plan_mismatch(argument: &'static str, got: &Layout, planned: &Layout) -> Error {
    Error::PlanMismatch {
        argument,
        detail: format!(
            "shape {:?} strides {:?} offset {} vs planned shape {:?} strides {:?} offset {}",
            got.dims,
            got.strides(),
            got.offset,
            planned.dims,
            planned.strides(),
            planned.offset,
        ),
    }
}
