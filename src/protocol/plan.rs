//! [`Plan`]: one operator's phase 1 run once, phase 2 launched many times.

use super::args::{Arg, Given, Value, resolve_dtype_of};
use super::attr::Attr;
use super::entry::OperatorFns;
use super::handles::{Guard, PlanHandles, handle_not_destroyed};
use super::launch::{Spec, enqueue, launch, order_after_other_streams, prepare, record_uses};
use super::rules::{Operator, validate};
use crate::alloc::Parked;
use crate::device::DeviceInner;
use crate::element::DType;
use crate::error::{Error, Result};
use crate::stream::Stream;
use crate::sys;
use crate::tensor::Layout;
use crate::uses::{Access, Uses};
use ascend_sys::{aclOpExecutor, aclTensor};
use std::ffi::c_void;
use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;

/// A reusable launch of operator `O` for fixed layouts, element types `E` (a tuple, one
/// type per type parameter of the operator's function) and attributes: phase 1 runs
/// once, when the plan is built (with `aclSetAclOpExecutorRepeatable`), and every `launch`
/// only rebinds the device addresses that changed (`aclSetInputTensorAddr` /
/// `aclSetOutputTensorAddr`) and runs phase 2.
///
/// Each operator's declaration wraps it in a plan type named after the C operator
/// (`MishBackwardPlan`, `AddPlan`, ...) with `new` (the attributes and the tensors, in the
/// operator's order) and `launch` (the tensors and the stream).
///
/// * **What a launch accepts.** Tensors on the plan's device whose views have the dims,
///   strides and offset the plan was built with, in any storage: a whole tensor, or the
///   same-shaped view of a larger one. The plan's descriptors declare only the storage
///   their views reach, so the storage size does not matter; an address is rebound only
///   when it differs from the one the descriptor holds, so relaunching on the same tensors
///   runs phase 2 alone. Element types are fixed by the type. Another layout (the last,
///   smaller batch of an epoch, say) needs a plan of its own. An optional tensor is given
///   or absent (NULL) as it was at `new`.
/// * **Attributes are fixed at `new`.** CANN rebinds only tensor addresses on a repeatable
///   executor; its scalars and int arrays keep their phase-1 values. The plan owns them
///   (`aclScalar`, `aclIntArray`) until it is dropped.
/// * **Ownership.** The plan owns its descriptors, attribute objects and executor (never
///   shared with one-off calls, whose descriptors may be cached on the tensors) and
///   releases them (`aclDestroyAclOpExecutor`, then `aclDestroyTensor`,
///   `aclDestroyScalar`, `aclDestroyIntArray`) when dropped, after its queued launches
///   have run.
/// * **Older CANN.** Where the library lacks executor reuse (before CANN 8.0), every
///   launch is a plain one-off call; [`is_reusable`](Self::is_reusable) says which.
///
/// `Send + Sync`; launching needs `&mut self`. A launch does not allocate.
pub struct Plan<O, E> {
    operator: &'static str,
    spec: Spec,
    device: Arc<DeviceInner>,
    /// Per argument, in declaration order (made once, at `build`).
    layouts: Box<[Option<Layout>]>,
    /// The tensors' dtypes, which a launch's tensors must have (a run-time dtype may
    /// differ).
    dtypes: Box<[Option<DType>]>,
    attrs: Box<[Option<Attr>]>,
    reusable: Option<Reusable>,
    _types: PhantomData<fn() -> (O, E)>,
}

/// A plan's own handles and repeatable executor.
struct Reusable {
    device: Arc<DeviceInner>,
    fns: OperatorFns,
    handles: PlanHandles,
    executor: *mut aclOpExecutor,
    workspace_size: u64,
    uses: Uses,
    /// The device address each tensor's descriptor holds (the one it was made with, or the
    /// last one rebound).
    bound: Box<[*mut c_void]>,
}

// SAFETY: the handles and executor are opaque library handles used only through
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

impl<O: Operator, E> Plan<O, E> {
    /// Validates like a one-off call and runs phase 1 once for these tensors' layouts and
    /// these attributes. Called by the `new` that `operator!` generates.
    #[doc(hidden)]
    pub fn build<const N: usize>(stream: &Stream, values: [Value<'_>; N]) -> Result<Self> {
        let mut values = values;
        resolve_dtype_of(O::ARGS, &mut values);
        validate::<O>(stream, &values)?;
        let mut layouts = [None; N];
        let mut dtypes = [None; N];
        let mut attrs = [None; N];
        for (((l, d), a), v) in layouts
            .iter_mut()
            .zip(&mut dtypes)
            .zip(&mut attrs)
            .zip(&values)
        {
            match &v.0 {
                Given::Tensor(t) => (*l, *d) = (Some(t.layout), Some(t.dtype)),
                Given::Attr(x) => *a = Some(*x),
                Given::Planned | Given::Pending(_) | Given::Absent | Given::DTypeOfOutput => {}
            }
        }
        let device = Arc::clone(&stream.inner.device);
        let spec = Spec::of::<O>();
        let fns = spec.entry.get(&device)?;
        let reusable = if device.rt.api.supports_executor_reuse() {
            Some(Reusable::new(&device, spec, fns, &values)?)
        } else {
            None
        };
        Ok(Plan {
            operator: O::NAME,
            spec,
            device,
            layouts: Box::from(layouts),
            dtypes: Box::from(dtypes),
            attrs: Box::from(attrs),
            reusable,
            _types: PhantomData,
        })
    }

    /// Queues the operator on `stream` for the tensors in `values` (in the declaration's
    /// order, [`Value::PLANNED`] at the attributes), which must have the planned layouts.
    /// Called by the `launch` that `operator!` generates.
    #[doc(hidden)]
    pub fn run<const N: usize>(&mut self, stream: &Stream, values: [Value<'_>; N]) -> Result<()> {
        let device = &stream.inner.device;
        self.device.expect_same(device, "plan")?;
        let args = self.spec.args;
        for (((v, planned), dtype), arg) in
            values.iter().zip(&self.layouts).zip(&self.dtypes).zip(args)
        {
            // An optional tensor is given or absent as when the plan was built.
            match (v.tensor(), planned) {
                (Some(t), Some(planned)) => {
                    t.buf.device.expect_same(device, arg.label)?;
                    if t.layout != *planned {
                        return Err(plan_mismatch(arg.label, &t.layout, planned));
                    }
                    // A run-time dtype ([`Tensor`](crate::Tensor)) may differ from the
                    // planned one, which the executor's descriptors hold.
                    if Some(t.dtype) != *dtype {
                        return Err(dtype_mismatch(arg.label, t.dtype, *dtype));
                    }
                }
                (Some(_), None) if arg.role().is_some() => {
                    return Err(presence_mismatch(arg.label, "given", "absent"));
                }
                (None, Some(_)) => return Err(presence_mismatch(arg.label, "absent", "given")),
                _ => {}
            }
        }
        let Some(plan) = self.reusable.as_mut() else {
            let mut values = values;
            for (v, a) in values.iter_mut().zip(&self.attrs) {
                if let Some(a) = a {
                    *v = Value(Given::Attr(*a));
                }
            }
            return launch(stream, &values, self.spec);
        };
        let inner = &stream.inner;
        inner.device.bind()?;
        order_after_other_streams(inner, &values, args)?;
        let mut addrs = [std::ptr::null_mut(); N];
        for (a, v) in addrs.iter_mut().zip(&values) {
            if let Some(t) = v.tensor() {
                *a = t.buf.ptr;
            }
        }
        if addrs[..] != plan.bound[..] {
            plan.rebind(args, &addrs)?;
        }
        // Repeatable: phase 2 leaves the executor to the plan whatever it returns.
        let executor = plan.executor;
        let ticket = enqueue(
            inner,
            self.spec.entry,
            &plan.fns,
            move || executor,
            plan.workspace_size,
        )?;
        plan.uses.record(inner, ticket, Access::Read);
        record_uses(inner, ticket, &values, args);
        Ok(())
    }
}

impl Reusable {
    /// The plan's own handles, phase 1, and the executor made repeatable.
    fn new<const N: usize>(
        device: &Arc<DeviceInner>,
        spec: Spec,
        fns: OperatorFns,
        values: &[Value<'_>; N],
    ) -> Result<Reusable> {
        let table = device.table();
        device.bind()?;
        let handles = Guard::for_plan(device, values)?;
        let (executor, workspace_size) = prepare(device, spec, &fns, &handles.handles.raw)?;
        // SAFETY: a fresh executor from phase 1, before any phase 2.
        unsafe { sys::set_executor_repeatable(table, executor.raw) }?;
        let raw_executor = executor.into_raw(); // destroyed by the plan's drop
        let mut bound = [std::ptr::null_mut(); N];
        for (b, v) in bound.iter_mut().zip(values) {
            if let Some(t) = v.tensor() {
                *b = t.buf.ptr;
            }
        }
        Ok(Reusable {
            device: Arc::clone(device),
            fns,
            handles: handles.into_plan(),
            executor: raw_executor,
            workspace_size,
            uses: Uses::new(),
            bound: Box::from(bound),
        })
    }

    /// Points the executor's descriptors at `addrs`, skipping those that already hold
    /// theirs: inputs by input index, outputs by output index, an in-place argument both
    /// (counted over the tensor arguments). The device context must be current.
    #[inline(never)]
    fn rebind(&mut self, args: &[Arg], addrs: &[*mut c_void]) -> Result<()> {
        let table = self.device.table();
        let (mut input, mut output) = (0usize, 0usize);
        let slots = args.iter().zip(addrs).zip(self.handles.raw.iter());
        for (((arg, &addr), handle), bound) in slots.zip(self.bound.iter_mut()) {
            let Some(role) = arg.role() else { continue };
            let d = handle.ptr.cast::<aclTensor>();
            let changed = addr != *bound;
            if changed {
                // Unknown until both calls succeed: an in-place argument may be half
                // rebound, so the next launch must rebind it whatever its address.
                *bound = std::ptr::null_mut();
            }
            // SAFETY: the plan's live repeatable executor and its own descriptor of this
            // argument (never shared); `addr` is the base of a live device allocation in
            // which a view of the planned layout lies, so it holds the storage the
            // descriptor declares.
            unsafe {
                if role.reads() {
                    if changed {
                        sys::set_input_addr(table, self.executor, input, d, addr)?;
                    }
                    input += 1;
                }
                if role.writes() {
                    if changed {
                        sys::set_output_addr(table, self.executor, output, d, addr)?;
                    }
                    output += 1;
                }
            }
            *bound = addr;
        }
        Ok(())
    }
}

impl Drop for Reusable {
    /// Never waits: while launches of the plan may still be queued, its executor and
    /// descriptors are parked in the device's cache, which releases them once that work
    /// has finished (`alloc/`).
    fn drop(&mut self) {
        let parts = PlanParts {
            handles: self.handles.take(),
            executor: std::mem::replace(&mut self.executor, std::ptr::null_mut()),
            uses: std::mem::replace(&mut self.uses, Uses::new()),
        };
        let device = &self.device;
        if parts.uses.is_idle() && device.bind().is_ok() {
            parts.destroy(device);
        } else {
            device.cache.park(Box::new(parts));
        }
    }
}

/// What a dropped plan releases once its launches have run.
struct PlanParts {
    handles: PlanHandles,
    executor: *mut aclOpExecutor,
    uses: Uses,
}

// SAFETY: opaque library handles, used only by the single owner on release, with the
// device's context bound on the calling thread.
unsafe impl Send for PlanParts {}

impl PlanParts {
    fn destroy(mut self, device: &DeviceInner) {
        let table = device.table();
        // SAFETY: a repeatable executor from phase 1, never consumed; destroyed once after
        // every launch of it has run (the caller checked its use records).
        if let Err(e) = unsafe { sys::destroy_executor(table, self.executor) } {
            handle_not_destroyed(device, &e);
        }
        // After the executor, which refers to them.
        self.handles
            .release(&device.rt.api, |e| handle_not_destroyed(device, &e));
    }
}

impl Parked for PlanParts {
    fn uses(&self) -> &Uses {
        &self.uses
    }

    fn release(self: Box<Self>, device: &DeviceInner) {
        (*self).destroy(device);
    }

    fn leak(self: Box<Self>, device: &DeviceInner) {
        device.note_leak("plan", 0, 0, self.handles.made() + 1);
    }
}

impl<O, E> fmt::Debug for Plan<O, E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shapes: Vec<(&str, &[usize])> = self
            .spec
            .args
            .iter()
            .zip(&self.layouts)
            .filter_map(|(a, l)| Some((a.label, l.as_ref()?.dims.as_slice())))
            .collect();
        let attrs: Vec<(&str, Attr)> = self
            .spec
            .args
            .iter()
            .zip(&self.attrs)
            .filter_map(|(a, v)| v.map(|v| (a.label, v)))
            .collect();
        f.debug_struct("Plan")
            .field("operator", &self.operator)
            .field("shapes", &shapes)
            .field("attrs", &attrs)
            .field("reusable", &self.reusable.is_some())
            .finish()
    }
}

#[cold]
fn presence_mismatch(argument: &'static str, got: &str, planned: &str) -> Error {
    Error::PlanMismatch {
        argument,
        detail: format!("{got}, but {planned} when the plan was built"),
    }
}

#[cold]
fn dtype_mismatch(argument: &'static str, got: DType, planned: Option<DType>) -> Error {
    let planned = planned.map_or_else(|| "no tensor".to_owned(), |d| d.to_string());
    Error::PlanMismatch {
        argument,
        detail: format!("dtype {got} vs planned {planned}"),
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
