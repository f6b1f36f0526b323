//! [`Plan`]: one operator's phase 1 run once, phase 2 launched many times.

use super::args::{Given, Value, resolve_dtype_of};
use super::attr::Attr;
use super::launch::{Spec, launch};
use super::reusable::Reusable;
use super::rules::{Operator, validate};
use crate::device::DeviceInner;
use crate::element::DType;
use crate::error::{Error, Result};
use crate::stream::Stream;
use crate::tensor::Layout;
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
/// * **What a launch accepts.** Tensors on the plan's device whose views have the dims
///   and strides the plan was built with, at any offset, in any storage: a whole tensor,
///   the same-shaped view of a larger one, or a batch window moving over a device-resident
///   data set (rows 0..4, then 4..8). The plan's descriptors declare only the storage
///   their views reach from a 32-byte aligned start (CANN requires rebound addresses to
///   be 32-byte aligned), so the storage size does not matter and an offset that moves by
///   a multiple of 32 bytes is a rebind alone; another offset residue (modulo the elements
///   in 32 bytes) runs phase 1 once for it, and the plan keeps that executor for when the
///   window comes back (up to 8), so a window moving by a fixed step reaches a steady
///   state with no phase 1 and no allocation. An address is rebound only when it differs
///   from the one the descriptor holds, so relaunching on the same tensors runs phase 2
///   alone. Element types are fixed by the type; another shape (the last, smaller batch
///   of an epoch, say) needs a plan of its own. An optional tensor is given or absent
///   (NULL) as it was at `new`; a tensor list has the planned length and each element its
///   planned layout.
/// * **Attributes are fixed in each executor.** CANN rebinds only tensor addresses on a
///   repeatable executor; its scalars and int arrays keep their phase-1 values. The plan
///   owns them (`aclScalar`, `aclIntArray`) until it is dropped. To change one between
///   launches (a learning-rate schedule), [`set_attr`](Self::set_attr) gives the plan the
///   new value, and the next launch runs phase 1 once for it.
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
    /// The layouts and dtypes of the tensor lists' elements, in argument order, and the
    /// length of each list argument (0 for the other arguments).
    elements: Box<[(Layout, DType)]>,
    list_lens: Box<[usize]>,
    /// Whether the library has executor reuse (else every launch is a plain call).
    reuse: bool,
    /// The executor launches use, made for the planned attributes and the current
    /// [`window`](super::handles::window) residues of the tensors' offsets (`None` after
    /// [`set_attr`](Self::set_attr), until the next launch makes one).
    reusable: Option<Reusable>,
    /// Executors made for other residues, kept for the launches that come back to them
    /// (at most [`SPARES`]).
    spares: Vec<Reusable>,
    _types: PhantomData<fn() -> (O, E)>,
}

/// Most executors a plan keeps for other offset residues: a window moving by a fixed step
/// comes back to its first residue within 32 steps (bytes of alignment over element size).
const SPARES: usize = 8;

impl<O, E> Plan<O, E> {
    /// Whether launches reuse the executor (`false`: the library lacks executor reuse and
    /// every launch is a plain call).
    pub fn is_reusable(&self) -> bool {
        self.reuse
    }

    /// Changes the attribute argument named `name` (its C name or its label) for the
    /// launches to come: a learning rate that a schedule lowers, say.
    ///
    /// CANN fixes an executor's attributes in phase 1 (scalars and arrays are read then;
    /// only tensor addresses can be rebound on a reusable executor), so the plan releases
    /// its executors (after their queued launches) and the next launch runs phase 1 once
    /// more with the new value, validated as `new` validates; the launches after it run
    /// phase 2 alone again. A setter rather than a per-launch argument: it makes that
    /// phase 1 explicit, where a changed value in a launch would hide it.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when the operator has no attribute of that name, or the
    /// value is of another kind than declared (a scalar for an `aclScalar`, ...).
    pub fn set_attr(&mut self, name: &str, value: Attr) -> Result<()> {
        let found = self
            .spec
            .args
            .iter()
            .position(|a| a.name == name || a.label == name);
        let Some(i) = found else {
            return Err(Error::InvalidArgument(format!(
                "{}: no argument `{name}`",
                self.operator
            )));
        };
        let arg = &self.spec.args[i];
        match arg.kind {
            super::args::ArgKind::Attr(kind) if kind == value.kind() => {}
            _ => {
                return Err(Error::InvalidArgument(format!(
                    "{}: `{name}` is not an attribute of the kind of {value:?}",
                    self.operator
                )));
            }
        }
        self.attrs[i] = Some(value);
        if let Some(r) = self.reusable.take() {
            r.release(&self.device);
        }
        for r in self.spares.drain(..) {
            r.release(&self.device);
        }
        Ok(())
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
                Given::List(_)
                | Given::Planned
                | Given::Pending(_)
                | Given::Absent
                | Given::DTypeOfOutput => {}
            }
        }
        let mut elements = Vec::new();
        let list_lens: Box<[usize]> = values
            .iter()
            .map(|v| {
                let l = v.list_elements();
                for k in 0..l.map_or(0, |l| l.len()) {
                    if let Some(t) = l.map(|l| l.element(k)) {
                        elements.push((t.layout, t.dtype));
                    }
                }
                l.map_or(0, |l| l.len())
            })
            .collect();
        let device = Arc::clone(&stream.inner.device);
        let spec = Spec::of::<O>();
        let fns = spec.entry.get(&device)?;
        let reusable = if device.rt.api.supports_executor_reuse() {
            Some(Reusable::new(&device, spec, fns, &values)?)
        } else {
            None
        };
        let reuse = reusable.is_some();
        Ok(Plan {
            operator: O::NAME,
            spec,
            device,
            layouts: Box::from(layouts),
            dtypes: Box::from(dtypes),
            attrs: Box::from(attrs),
            elements: elements.into_boxed_slice(),
            list_lens,
            reuse,
            reusable,
            spares: Vec::new(),
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
        self.check_lists(device, &values)?;
        for (((v, planned), dtype), arg) in
            values.iter().zip(&self.layouts).zip(&self.dtypes).zip(args)
        {
            if arg.is_list() {
                continue;
            }
            // An optional tensor is given or absent as when the plan was built.
            match (v.tensor(), planned) {
                (Some(t), Some(planned)) => {
                    t.buf.device.expect_same(device, arg.label)?;
                    // Any offset: the executor follows a moving window.
                    let same =
                        t.layout.dims == planned.dims && t.layout.strides() == planned.strides();
                    if !same {
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
        let mut values = values;
        for (v, a) in values.iter_mut().zip(&self.attrs) {
            if let Some(a) = a {
                *v = Value(Given::Attr(*a));
            }
        }
        if !self.reuse {
            return launch(stream, &values, self.spec);
        }
        if !self.reusable.as_ref().is_some_and(|r| r.fits(&values)) {
            self.switch(stream, &values)?;
        }
        match self.reusable.as_mut() {
            Some(plan) => plan.launch(stream, &values, self.spec),
            None => launch(stream, &values, self.spec),
        }
    }

    /// Makes the executor for `values` current: a spare one of their offsets' residues, or
    /// a new one (phase 1, validated as a call is: the attributes may have changed).
    #[cold]
    #[inline(never)]
    fn switch<const N: usize>(&mut self, stream: &Stream, values: &[Value<'_>; N]) -> Result<()> {
        let next = match self.spares.iter().position(|r| r.fits(values)) {
            Some(i) => self.spares.swap_remove(i),
            None => {
                validate::<O>(stream, values)?;
                let fns = self.spec.entry.get(&self.device)?;
                Reusable::new(&self.device, self.spec, fns, values)?
            }
        };
        if let Some(old) = self.reusable.replace(next) {
            if self.spares.len() == SPARES {
                self.spares.remove(0).release(&self.device);
            }
            self.spares.push(old);
        }
        Ok(())
    }
}

impl<O, E> Plan<O, E> {
    /// Each tensor list has the planned length, and each element the planned layout and
    /// dtype, on the plan's device.
    fn check_lists(&self, device: &Arc<DeviceInner>, values: &[Value<'_>]) -> Result<()> {
        let mut planned = self.elements.iter();
        for ((v, &len), arg) in values.iter().zip(&self.list_lens).zip(self.spec.args) {
            let Some(list) = v.list_elements() else {
                continue;
            };
            if list.len() != len {
                return Err(Error::PlanMismatch {
                    argument: arg.label,
                    detail: format!("{} tensors vs planned {len}", list.len()),
                });
            }
            for k in 0..len {
                let t = list.element(k);
                let Some((layout, dtype)) = planned.next() else {
                    break;
                };
                t.buf.device.expect_same(device, arg.label)?;
                if t.layout != *layout {
                    return Err(plan_mismatch(arg.label, &t.layout, layout));
                }
                if t.dtype != *dtype {
                    return Err(dtype_mismatch(arg.label, t.dtype, Some(*dtype)));
                }
            }
        }
        Ok(())
    }
}

impl<O, E> Drop for Plan<O, E> {
    /// Never waits: the executor and its handles are released after the queued launches.
    fn drop(&mut self) {
        if let Some(r) = self.reusable.take() {
            r.release(&self.device);
        }
        for r in self.spares.drain(..) {
            r.release(&self.device);
        }
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
            .field("reusable", &self.reuse)
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
