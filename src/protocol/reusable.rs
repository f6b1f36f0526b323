//! [`Reusable`]: a repeatable executor with its own handles, launched many times by
//! rebinding only the tensor addresses that changed. A [`Plan`](super::Plan) owns one; the
//! device's executor cache ([`ExecutorCache`](super::cache::ExecutorCache)) keeps recent
//! ones for one-off calls.

use super::args::{Arg, Value};
use super::entry::OperatorFns;
use super::handles::{Guard, PlanHandles, handle_not_destroyed, window};
use super::launch::{Spec, enqueue, order_after_other_streams, prepare, record_uses};
use crate::alloc::Parked;
use crate::device::DeviceInner;
use crate::error::Result;
use crate::stream::Stream;
use crate::sys;
use crate::uses::{Access, Uses};
use ascend_sys::{aclOpExecutor, aclTensor};
use std::ffi::c_void;

/// A repeatable executor and the handles it was made with (each descriptor declares only
/// the storage its view reaches, so any tensor whose view has the same layout fits).
///
/// It holds no reference to its device, so that a device may keep some in its executor
/// cache without a cycle: its owner hands it back with [`release`](Self::release).
pub(crate) struct Reusable {
    fns: OperatorFns,
    handles: PlanHandles,
    executor: *mut aclOpExecutor,
    workspace_size: u64,
    /// The launches of the executor, which its release waits for.
    uses: Uses,
    /// The device address each tensor's descriptor holds (the one it was made with, or the
    /// last one rebound).
    bound: Box<[*mut c_void]>,
    /// The same for the tensor lists' elements, in argument order.
    bound_elements: Box<[*mut c_void]>,
    /// Each tensor's descriptor offset, its view's [`window`] residue: the tensors a
    /// launch takes have the same.
    residues: Box<[i64]>,
}

// SAFETY: the handles and executor are opaque library handles used only through
// `&mut Reusable` (launch) or on release, with the device's context bound on the calling
// thread.
unsafe impl Send for Reusable {}
// SAFETY: `&Reusable` exposes nothing that touches the handles.
unsafe impl Sync for Reusable {}

impl Reusable {
    /// Fresh handles, phase 1, and the executor made repeatable (validated arguments).
    pub(crate) fn new<const N: usize>(
        device: &DeviceInner,
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
        let raw_executor = executor.into_raw(); // destroyed by `release`
        let mut bound = [std::ptr::null_mut(); N];
        let mut residues = [0i64; N];
        for ((b, r), v) in bound.iter_mut().zip(&mut residues).zip(values) {
            if let Some(t) = v.tensor() {
                (*r, *b) = window(t);
            }
        }
        let mut elements = Vec::new();
        for v in values {
            if let Some(l) = v.list_elements() {
                elements.extend((0..l.len()).map(|k| window(&l.element(k)).1));
            }
        }
        Ok(Reusable {
            fns,
            handles: handles.into_plan(),
            executor: raw_executor,
            workspace_size,
            uses: Uses::new(),
            bound: Box::from(bound),
            bound_elements: elements.into_boxed_slice(),
            residues: Box::from(residues),
        })
    }

    /// Whether every tensor of `values` has the [`window`] residue its descriptor was made
    /// with (else a launch needs another executor).
    #[inline]
    pub(crate) fn fits(&self, values: &[Value<'_>]) -> bool {
        values
            .iter()
            .zip(self.residues.iter())
            .all(|(v, &r)| v.tensor().is_none_or(|t| window(t).0 == r))
    }

    /// Queues phase 2 on `stream` for `values` (validated, of the layouts, dtypes and
    /// attributes the executor was made for): orders the stream after the tensors' other
    /// users, rebinds the addresses that changed, and records the uses. Does not allocate.
    #[inline]
    pub(crate) fn launch<const N: usize>(
        &mut self,
        stream: &Stream,
        values: &[Value<'_>; N],
        spec: Spec,
    ) -> Result<()> {
        let args = spec.args;
        let inner = &stream.inner;
        inner.device.bind()?;
        order_after_other_streams(inner, values, args)?;
        let mut addrs = [std::ptr::null_mut(); N];
        for (((a, v), &r), arg) in addrs
            .iter_mut()
            .zip(values)
            .zip(self.residues.iter())
            .zip(args)
        {
            if let Some(t) = v.tensor() {
                let (residue, base) = window(t);
                if residue != r {
                    return Err(crate::Error::PlanMismatch {
                        argument: arg.label,
                        detail: format!(
                            "offset {} is not the executor's window (offset {r} modulo the \
                             elements of 32 bytes)",
                            t.layout.offset
                        ),
                    });
                }
                *a = base;
            }
        }
        if addrs[..] != self.bound[..] || self.elements_moved(values) {
            self.rebind(&inner.device, args, values, &addrs)?;
        }
        // Repeatable: phase 2 leaves the executor to its owner whatever it returns.
        let executor = self.executor;
        let ticket = enqueue(
            inner,
            spec.entry,
            &self.fns,
            move || executor,
            self.workspace_size,
        )?;
        self.uses.record(inner, ticket, Access::Read);
        record_uses(inner, ticket, values, args);
        Ok(())
    }

    /// Points the executor's descriptors at `addrs`, skipping those that already hold
    /// theirs: inputs by input index, outputs by output index, an in-place argument both
    /// (counted over the tensor arguments). The device context must be current.
    #[inline(never)]
    fn rebind(
        &mut self,
        device: &DeviceInner,
        args: &[Arg],
        values: &[Value<'_>],
        addrs: &[*mut c_void],
    ) -> Result<()> {
        let table = device.table();
        let (mut input, mut output) = (0usize, 0usize);
        let mut element = 0usize;
        let slots = args.iter().zip(addrs).zip(self.handles.raw.iter());
        for ((((arg, &addr), handle), bound), v) in slots.zip(self.bound.iter_mut()).zip(values) {
            // A list's elements: one input index each (CANN counts input tensors).
            if let Some(list) = v.list_elements() {
                for k in 0..list.len() {
                    let addr = window(&list.element(k)).1;
                    let (Some(&d), Some(b)) = (
                        self.handles.members.get(element),
                        self.bound_elements.get_mut(element),
                    ) else {
                        break;
                    };
                    if addr != *b {
                        *b = std::ptr::null_mut();
                        // SAFETY: the live repeatable executor and its own descriptor of
                        // this element (owned by the executor's list); `addr` is the base
                        // of a live device allocation holding a view of its layout.
                        unsafe { sys::set_input_addr(table, self.executor, input, d, addr) }?;
                        *b = addr;
                    }
                    input += 1;
                    element += 1;
                }
                continue;
            }
            let Some(role) = arg.role() else { continue };
            let d = handle.ptr.cast::<aclTensor>();
            let changed = addr != *bound;
            if changed {
                // Unknown until both calls succeed: an in-place argument may be half
                // rebound, so the next launch must rebind it whatever its address.
                *bound = std::ptr::null_mut();
            }
            // SAFETY: the live repeatable executor and its own descriptor of this argument
            // (never shared); `addr` is the base of a live device allocation in which a
            // view of the executor's layout lies, so it holds the storage the descriptor
            // declares.
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

    /// Whether a tensor list's element has another address than its descriptor holds.
    #[inline]
    fn elements_moved(&self, values: &[Value<'_>]) -> bool {
        if self.bound_elements.is_empty() {
            return false;
        }
        let mut bound = self.bound_elements.iter();
        values
            .iter()
            .filter_map(Value::list_elements)
            .any(|l| (0..l.len()).any(|k| bound.next() != Some(&l.element(k).buf.ptr)))
    }

    /// Releases the executor and its handles on `device`, the one they were made on.
    /// Never waits: while launches may still be queued, they are parked in the device's
    /// cache, which releases them once that work has finished (`alloc/`).
    pub(crate) fn release(mut self, device: &DeviceInner) {
        let parts = Parts {
            handles: self.handles.take(),
            executor: std::mem::replace(&mut self.executor, std::ptr::null_mut()),
            uses: std::mem::replace(&mut self.uses, Uses::new()),
        };
        if parts.uses.is_idle() && device.bind().is_ok() {
            parts.destroy(device);
        } else {
            device.cache.park(Box::new(parts));
        }
    }
}

/// What a released [`Reusable`] destroys once its launches have run.
struct Parts {
    handles: PlanHandles,
    executor: *mut aclOpExecutor,
    uses: Uses,
}

// SAFETY: opaque library handles, used only by the single owner on release, with the
// device's context bound on the calling thread.
unsafe impl Send for Parts {}

impl Parts {
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

impl Parked for Parts {
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
