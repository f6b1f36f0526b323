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
        plan.launch(stream, &values, self.spec)
    }
}

impl<O, E> Drop for Plan<O, E> {
    /// Never waits: the executor and its handles are released after the queued launches.
    fn drop(&mut self) {
        if let Some(r) = self.reusable.take() {
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
