//! `aclnnMishBackward`: the gradient of Mish.

use crate::device::DeviceInner;
use crate::element::{DType, Element};
use crate::error::{Error, Result};
use crate::op;
use crate::shape;
use crate::stream::Stream;
use crate::sys;
use crate::tensor::{AsTensorView, AsTensorViewMut, Layout, RawTensor};
use crate::uses::Uses;
use ascend_sys::{FnTable, aclOpExecutor, aclTensor};
use std::ffi::c_void;
use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;

const OPERATOR: &str = "aclnnMishBackward";

static ENTRY: op::EntryPoints =
    op::EntryPoints::new("aclnnMishBackwardGetWorkspaceSize", "aclnnMishBackward");

/// Compile-time proof that the phase-1 argument order used here is the header's.
#[allow(dead_code, clippy::extra_unused_type_parameters)]
fn _prototypes_match_header<T>() {
    let _: unsafe extern "C" fn(
        *const aclTensor,
        *const aclTensor,
        *mut aclTensor,
        *mut u64,
        *mut *mut aclOpExecutor,
    ) -> i32 = ascend_sys::aclnnMishBackwardGetWorkspaceSize;
    let _: ascend_sys::OperatorLaunchFn = ascend_sys::aclnnMishBackward;
}

/// Whether the SoC has the operator at all (Atlas 200I/500 A2, "Ascend310B*", has not).
pub(crate) fn available_on(soc: &str) -> bool {
    !soc.starts_with("Ascend310B")
}

/// Whether `dtype` is in the SoC's list: FLOAT and FLOAT16 everywhere, BF16 on Atlas A2/A3
/// ("Ascend910B*", "Ascend910_93*").
pub fn dtype_supported(soc: &str, dtype: DType) -> bool {
    match dtype {
        DType::F32 | DType::F16 => true,
        DType::BF16 => soc.starts_with("Ascend910B") || soc.starts_with("Ascend910_93"),
    }
}

/// Validates in the vendor's order, entirely in Rust: devices of the three tensors against
/// the stream, operator availability on the SoC, dtypes of grad_output / self / grad_input,
/// then the shape rules of [`shape::check_mish_backward`]. The SoC tests read the flags the
/// device computed from its SoC name when it was opened ([`Caps`](crate::device::Caps)).
#[inline]
pub(crate) fn validate(
    stream: &Stream,
    grad: &RawTensor<'_>,
    x: &RawTensor<'_>,
    out: &RawTensor<'_>,
) -> Result<()> {
    let device = &stream.inner.device;
    for (argument, t) in [("grad_output", grad), ("self", x), ("grad_input", out)] {
        if !t.buf.device.same_as(device) {
            return Err(device_mismatch(argument, device, &t.buf.device));
        }
    }
    let caps = device.caps;
    if !caps.mish_backward {
        return Err(unsupported_operator(device));
    }
    for (argument, t) in [("grad_output", grad), ("self", x), ("grad_input", out)] {
        let supported = match t.dtype {
            DType::F32 | DType::F16 => true,
            DType::BF16 => caps.bf16,
        };
        if !supported {
            return Err(unsupported_dtype(argument, t.dtype, device));
        }
    }
    // Three equal shapes (the common case) pass every shape rule: a `Dims` has at most
    // 8 dims, equal shapes broadcast to themselves, and the output equals that shape.
    let (g, s, o) = (&grad.layout.dims, &x.layout.dims, &out.layout.dims);
    if g == s && s == o {
        return Ok(());
    }
    shape::check_mish_backward(g, s, Some(o))?;
    Ok(())
}

#[cold]
#[inline(never)]
fn device_mismatch(argument: &'static str, expected: &DeviceInner, found: &DeviceInner) -> Error {
    Error::DeviceMismatch {
        argument,
        expected: expected.id,
        found: found.id,
    }
}

#[cold]
#[inline(never)]
fn unsupported_operator(device: &DeviceInner) -> Error {
    Error::UnsupportedOperator {
        operator: OPERATOR,
        soc: device.soc().to_owned(),
        missing_symbol: None,
    }
}

#[cold]
#[inline(never)]
fn unsupported_dtype(argument: &'static str, dtype: DType, device: &DeviceInner) -> Error {
    Error::UnsupportedDtype {
        argument,
        dtype,
        operator: OPERATOR,
        soc: device.soc().to_owned(),
    }
}

/// `grad_input = grad_output * mish'(self)`, queued on `stream` (`aclnnMishBackward`).
///
/// * `grad` (gradOutput) and `x` (self): any [`AsTensorView`] — `&DeviceTensor<_>`,
///   [`TensorView`](crate::TensorView)s (permuted, sliced, broadcast) — of `f32`, `f16`
///   or `bf16` (bf16 on Atlas A2/A3 only), broadcastable together (numpy rules, up to 8
///   dims).
/// * `out` (gradInput): `&mut DeviceTensor<_>` or a [`TensorViewMut`](crate::TensorViewMut)
///   (may be non-contiguous) whose shape is the broadcast shape. Any of the three dtypes:
///   the inputs are promoted (same → same, mixed → f32), computed, then cast to `out`'s.
///
/// Everything is validated first, in Rust, with typed errors and no FFI call; then the
/// two-phase protocol runs with the workspace from the stream's cache. The call returns
/// once the work is queued; all three tensors stay alive until it has run. Empty tensors
/// succeed without computing anything. In steady state the call does not allocate.
///
/// # Errors
/// [`Error::DeviceMismatch`], [`Error::UnsupportedOperator`] (SoC "Ascend310B*"),
/// [`Error::UnsupportedDtype`], [`Error::TooManyDims`], [`Error::NotBroadcastable`],
/// [`Error::ShapeMismatch`]; [`Error::Aclnn`] / [`Error::Acl`] from the library.
///
/// ```
/// # fn main() -> ascendcl::Result<()> {
/// use ascendcl::{DeviceTensor, Runtime, mish_backward};
/// use ndarray::array;
/// let stream = Runtime::auto()?.device(0)?.stream()?;
/// let grad = DeviceTensor::from_array(&stream, &array![[0.0f32, 1.0], [2.0, 3.0]])?;
/// let x = DeviceTensor::from_array(&stream, &array![1.0f32, 2.0])?; // broadcast
/// let mut out = DeviceTensor::<f32>::zeros(&stream, &[2, 2])?;
/// mish_backward(&grad, &x, &mut out, &stream)?;
/// let y = out.to_array(&stream)?;
/// assert!((y[[0, 1]] - 1.069).abs() < 1e-3);
/// # Ok(()) }
/// ```
pub fn mish_backward<G, X, O>(grad: G, x: X, mut out: O, stream: &Stream) -> Result<()>
where
    G: AsTensorView,
    X: AsTensorView,
    O: AsTensorViewMut,
{
    let g = grad.as_tensor_view().raw();
    let s = x.as_tensor_view().raw();
    let o = out.as_tensor_view_mut().raw();
    run(stream, g, s, o)
}

/// Validation and the two-phase protocol on already-extracted arguments.
fn run(stream: &Stream, g: RawTensor<'_>, s: RawTensor<'_>, o: RawTensor<'_>) -> Result<()> {
    validate(stream, &g, &s, &o)?;
    op::launch(stream, [g, s, o], &ENTRY)
}

/// A reusable `aclnnMishBackward` for fixed shapes, dtypes and layouts: phase 1 runs once
/// (with `aclSetAclOpExecutorRepeatable`), and every [`launch`](Self::launch) only rebinds
/// the device addresses (`aclSetInputTensorAddr` / `aclSetOutputTensorAddr`) and runs
/// phase 2. An address is rebound only when it differs from the one the plan's descriptor
/// already holds (the address of the previous launch, or of the tensor the plan was built
/// with), so relaunching on the same tensors runs phase 2 alone; shapes, strides, offsets,
/// storage sizes, dtypes (by type) and device are still checked on every launch. The plan
/// owns its descriptors and executor (they are never shared with other calls, whose
/// descriptors may be cached on the tensors), and releases them
/// (`aclDestroyAclOpExecutor`, `aclDestroyTensor`) when it is dropped, after the queued
/// launches have run.
///
/// Where the library lacks the executor-reuse functions (CANN before 8.0), the plan falls
/// back to a plain [`mish_backward`] per launch; [`is_reusable`](Self::is_reusable) says
/// which. `Send + Sync`: launching needs `&mut self`.
///
/// ```
/// # fn main() -> ascendcl::Result<()> {
/// use ascendcl::{DeviceTensor, Runtime, ops::mish_backward::MishBackwardPlan};
/// use ndarray::array;
/// let stream = Runtime::auto()?.device(0)?.stream()?;
/// let g = DeviceTensor::from_array(&stream, &array![1.0f32, 2.0])?;
/// let x = DeviceTensor::from_array(&stream, &array![0.0f32, 1.0])?;
/// let mut out = DeviceTensor::<f32>::zeros(&stream, &[2])?;
/// let mut plan = MishBackwardPlan::new(&g, &x, &out, &stream)?;
/// for _ in 0..3 {
///     plan.launch(&g, &x, &mut out, &stream)?;
/// }
/// assert!((out.to_array(&stream)?[0] - 0.6).abs() < 1e-6);
/// # Ok(()) }
/// ```
pub struct MishBackwardPlan<G: Element, X: Element, O: Element> {
    device: Arc<DeviceInner>,
    keys: [(Layout, usize); 3],
    reusable: Option<Reusable>,
    _elem: PhantomData<Dtypes<G, X, O>>,
}

/// The element types of a plan (a `fn` type: `Send + Sync` whatever they are).
type Dtypes<G, X, O> = fn() -> (G, X, O);

struct Reusable {
    table: &'static FnTable,
    fns: op::OperatorFns,
    descriptors: [*mut aclTensor; 3],
    executor: *mut aclOpExecutor,
    workspace_size: u64,
    uses: Uses,
    /// The device address each descriptor currently holds (the one it was created with,
    /// or the last one rebound): a launch calls `aclSet{Input,Output}TensorAddr` only for
    /// the arguments whose address differs.
    bound: [*mut c_void; 3],
}

// SAFETY: the descriptors and executor are opaque library handles used only through
// `&mut self` (launch) or on drop, with the device's context bound on the calling thread.
unsafe impl Send for Reusable {}
// SAFETY: `&Reusable` exposes nothing that touches the handles.
unsafe impl Sync for Reusable {}

impl Drop for Reusable {
    fn drop(&mut self) {
        if !self.uses.wait_idle() {
            return; // leaked rather than destroyed under queued launches
        }
        if let Some(destroy) = self.table.aclDestroyAclOpExecutor {
            // SAFETY: a repeatable executor from phase 1, never consumed; destroyed once
            // after every launch of it has run.
            let _ = unsafe { destroy(self.executor) };
        }
        for d in self.descriptors {
            // SAFETY: descriptors made for this plan, destroyed once, after the executor.
            let _ = unsafe { (self.table.aclDestroyTensor)(d) };
        }
    }
}

impl<G: Element, X: Element, O: Element> fmt::Debug for MishBackwardPlan<G, X, O> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MishBackwardPlan")
            .field("dtypes", &(G::DTYPE, X::DTYPE, O::DTYPE))
            .field("shape", &self.keys[2].0.dims)
            .field("reusable", &self.reusable.is_some())
            .finish()
    }
}

const NAMES: [&str; 3] = ["grad_output", "self", "grad_input"];

impl<G: Element, X: Element, O: Element> MishBackwardPlan<G, X, O> {
    /// Validates like [`mish_backward`] and runs phase 1 once for these tensors' shapes,
    /// strides, offsets and storage sizes. Nothing is computed.
    ///
    /// # Errors
    /// As [`mish_backward`]; [`Error::Aclnn`] from phase 1 or
    /// `aclSetAclOpExecutorRepeatable`.
    pub fn new<A, B, C>(grad: A, x: B, out: C, stream: &Stream) -> Result<Self>
    where
        A: AsTensorView<Elem = G>,
        B: AsTensorView<Elem = X>,
        C: AsTensorView<Elem = O>,
    {
        let g = grad.as_tensor_view().raw();
        let s = x.as_tensor_view().raw();
        let o = out.as_tensor_view().raw();
        validate(stream, &g, &s, &o)?;
        let keys = [
            (g.layout, g.buf.len),
            (s.layout, s.buf.len),
            (o.layout, o.buf.len),
        ];
        let device = Arc::clone(&stream.inner.device);
        let table = device.table();
        if !device.rt.api.supports_executor_reuse() {
            return Ok(MishBackwardPlan {
                device,
                keys,
                reusable: None,
                _elem: PhantomData,
            });
        }
        let fns = ENTRY.get(&device)?;
        device.bind()?;
        let (g_ptr, s_ptr, o_ptr) = (g.buf.ptr, s.buf.ptr, o.buf.ptr);
        let descriptors = op::Descriptors::new(table, &[g, s, o])?;
        let mut workspace_size = 0u64;
        let mut raw: *mut aclOpExecutor = std::ptr::null_mut();
        // SAFETY: MishBackward's phase 1 takes these three descriptors in this order (see
        // `_prototypes_match_header`); valid out-pointers.
        let status = unsafe { fns.phase1(&descriptors.raw, &mut workspace_size, &mut raw) };
        let executor = op::Executor::new(table, raw);
        sys::aclnn(table, "aclnnMishBackwardGetWorkspaceSize", status)?;
        if let Some(repeatable) = table.aclSetAclOpExecutorRepeatable {
            // SAFETY: a fresh executor from phase 1, before any phase 2.
            let status = unsafe { repeatable(executor.raw) };
            sys::aclnn(table, "aclSetAclOpExecutorRepeatable", status)?;
        }
        let executor_raw = executor.raw;
        executor.consumed(); // owned by the plan from here on
        Ok(MishBackwardPlan {
            device,
            keys,
            reusable: Some(Reusable {
                table,
                fns,
                descriptors: descriptors.into_raw(),
                executor: executor_raw,
                workspace_size,
                uses: Uses::new(),
                bound: [g_ptr, s_ptr, o_ptr],
            }),
            _elem: PhantomData,
        })
    }

    /// Whether launches reuse the executor (`false`: the library lacks executor reuse and
    /// every launch is a plain [`mish_backward`]).
    pub fn is_reusable(&self) -> bool {
        self.reusable.is_some()
    }

    /// Queues the operator on `stream` for tensors laid out exactly like the ones the plan
    /// was built with (same shapes, strides, offsets and storage sizes; any storage).
    /// Arguments whose device address differs from the previous launch's are rebound
    /// first. Does not allocate.
    ///
    /// # Errors
    /// [`Error::DeviceMismatch`], [`Error::PlanMismatch`]; [`Error::Aclnn`] from the
    /// library.
    pub fn launch<A, B, C>(&mut self, grad: A, x: B, mut out: C, stream: &Stream) -> Result<()>
    where
        A: AsTensorView<Elem = G>,
        B: AsTensorView<Elem = X>,
        C: AsTensorViewMut<Elem = O>,
    {
        let g = grad.as_tensor_view().raw();
        let s = x.as_tensor_view().raw();
        let o = out.as_tensor_view_mut().raw();
        let device = &stream.inner.device;
        if !self.device.same_as(device) {
            return Err(Error::DeviceMismatch {
                argument: "plan",
                expected: device.id,
                found: self.device.id,
            });
        }
        for ((t, key), argument) in [&g, &s, &o].into_iter().zip(&self.keys).zip(NAMES) {
            if !t.buf.device.same_as(device) {
                return Err(Error::DeviceMismatch {
                    argument,
                    expected: device.id,
                    found: t.buf.device.id,
                });
            }
            if t.layout != key.0 || t.buf.len != key.1 {
                return Err(plan_mismatch(argument, t, key));
            }
        }
        let Some(plan) = self.reusable.as_mut() else {
            return run(stream, g, s, o);
        };
        let table = plan.table;
        let inner = &stream.inner;
        inner.device.bind()?;
        let addrs = [g.buf.ptr, s.buf.ptr, o.buf.ptr];
        if addrs != plan.bound {
            plan.rebind(addrs)?;
        }
        let (executor, workspace_size, phase2) =
            (plan.executor, plan.workspace_size, plan.fns.phase2);
        let ticket = inner.submit(|state, raw_stream, ticket| {
            let workspace = state.workspace(table, workspace_size, ticket)?;
            // SAFETY: a repeatable executor (not consumed by phase 2) whose descriptors hold
            // the addresses of `g`, `s`, `o` (rebound above); the workspace and tensors stay
            // allocated until the stream has run this launch.
            let status = unsafe { phase2(workspace, workspace_size, executor, raw_stream) };
            sys::aclnn(table, OPERATOR, status)
        })?;
        plan.uses.record(inner, ticket);
        for t in [&g, &s, &o] {
            t.buf.uses.record(inner, ticket);
        }
        Ok(())
    }
}

impl Reusable {
    /// Points the executor's descriptors at `addrs` (`aclSetInputTensorAddr` for
    /// grad_output and self, `aclSetOutputTensorAddr` for grad_input), skipping the ones
    /// that already hold that address. The device context must be current.
    #[inline(never)]
    fn rebind(&mut self, addrs: [*mut c_void; 3]) -> Result<()> {
        let table = self.table;
        let (Some(set_in), Some(set_out)) =
            (table.aclSetInputTensorAddr, table.aclSetOutputTensorAddr)
        else {
            // Unreachable: a plan is reusable only when the library has both.
            return Err(Error::InvalidArgument(
                "executor reuse without aclSet{Input,Output}TensorAddr".into(),
            ));
        };
        for (i, (&addr, bound)) in addrs.iter().zip(&mut self.bound).enumerate() {
            if addr == *bound {
                continue;
            }
            // SAFETY: the plan's live repeatable executor and its own descriptor of this
            // argument (never shared with other calls); `addr` is a live device allocation
            // of the storage size the plan was built for (checked by the caller).
            let (api, status) = unsafe {
                if i < 2 {
                    (
                        "aclSetInputTensorAddr",
                        set_in(self.executor, i, self.descriptors[i], addr),
                    )
                } else {
                    (
                        "aclSetOutputTensorAddr",
                        set_out(self.executor, 0, self.descriptors[i], addr),
                    )
                }
            };
            sys::aclnn(table, api, status)?;
            *bound = addr;
        }
        Ok(())
    }
}

#[cold]
fn plan_mismatch(argument: &'static str, t: &RawTensor<'_>, key: &(Layout, usize)) -> Error {
    Error::PlanMismatch {
        argument,
        detail: format!(
            "shape {:?} strides {:?} offset {} storage {} vs planned shape {:?} strides {:?} offset {} storage {}",
            t.layout.dims,
            t.layout.strides(),
            t.layout.offset,
            t.buf.len,
            key.0.dims,
            key.0.strides(),
            key.0.offset,
            key.1
        ),
    }
}

#[cfg(all(test, feature = "sim"))]
mod tests {
    use super::*;
    use crate::{DeviceTensor, Runtime};
    use ndarray::{ArrayD, array};

    fn calls(symbol: &str) -> u64 {
        ascend_sim::call_count(symbol)
    }

    /// A toolkit without the operator still loads and runs everything else; the operator
    /// (one-off or plan) reports the missing entry point.
    #[test]
    fn a_toolkit_without_the_operator_reports_the_missing_symbol() {
        let rt = Runtime::simulator_without_operators().unwrap();
        let stream = rt.device(0).unwrap().stream().unwrap();
        let g = DeviceTensor::from_array(&stream, &array![1.0f32, 2.0]).unwrap();
        let mut out = DeviceTensor::<f32>::zeros(&stream, &[2]).unwrap();
        let expect = |r: Result<()>| match r {
            Err(Error::UnsupportedOperator {
                operator: "aclnnMishBackward",
                missing_symbol: Some("aclnnMishBackwardGetWorkspaceSize"),
                ..
            }) => {}
            other => panic!("expected UnsupportedOperator, got {other:?}"),
        };
        expect(mish_backward(&g, &g, &mut out, &stream));
        expect(MishBackwardPlan::new(&g, &g, &out, &stream).map(drop));
        let text = mish_backward(&g, &g, &mut out, &stream)
            .unwrap_err()
            .to_string();
        assert!(
            text.contains("has no `aclnnMishBackwardGetWorkspaceSize`"),
            "{text}"
        );
        assert_eq!(
            out.to_array(&stream).unwrap(),
            array![0.0f32, 0.0].into_dyn()
        );
    }

    /// Without the executor-reuse functions a plan runs plain calls: no phase 1 when it is
    /// built, then the whole protocol (phase 1, phase 2) per launch, with correct results
    /// and the usual checks.
    #[test]
    fn plan_falls_back_to_plain_calls_without_executor_reuse() {
        let rt = Runtime::simulator_without_executor_reuse().unwrap();
        assert!(!rt.api().supports_executor_reuse());
        let stream = rt.device(0).unwrap().stream().unwrap();
        let g = DeviceTensor::from_array(&stream, &array![[1.0f32, -2.0], [0.5, 3.0]]).unwrap();
        let x = DeviceTensor::from_array(&stream, &array![0.0f32, 1.0]).unwrap(); // broadcast
        let mut out = DeviceTensor::<f32>::zeros(&stream, &[2, 2]).unwrap();
        let (phase1, repeatable, set_in, set_out) = (
            calls("aclnnMishBackwardGetWorkspaceSize"),
            calls("aclSetAclOpExecutorRepeatable"),
            calls("aclSetInputTensorAddr"),
            calls("aclSetOutputTensorAddr"),
        );
        let mut plan = MishBackwardPlan::new(&g, &x, &out, &stream).unwrap();
        assert!(!plan.is_reusable());
        assert_eq!(
            calls("aclnnMishBackwardGetWorkspaceSize"),
            phase1,
            "no phase 1 yet"
        );
        for _ in 0..3 {
            plan.launch(&g, &x, &mut out, &stream).unwrap();
        }
        assert_eq!(
            calls("aclnnMishBackwardGetWorkspaceSize"),
            phase1 + 3,
            "one plain call (phase 1 + phase 2) per launch"
        );
        assert_eq!(calls("aclSetAclOpExecutorRepeatable"), repeatable);
        assert_eq!(calls("aclSetInputTensorAddr"), set_in);
        assert_eq!(calls("aclSetOutputTensorAddr"), set_out);
        let got = out.to_array(&stream).unwrap();
        let want: ArrayD<f32> = crate::reference::mish_backward(
            array![[1.0f32, -2.0], [0.5, 3.0]].into_dyn().view(),
            array![0.0f32, 1.0].into_dyn().view(),
        )
        .unwrap();
        for (a, b) in got.iter().zip(want.iter()) {
            assert!(
                (a - b).abs() <= 1e-6 * b.abs().max(1.0),
                "{got:?} vs {want:?}"
            );
        }
        // The checks still apply in the fallback.
        let mut other = DeviceTensor::<f32>::zeros(&stream, &[2, 3]).unwrap();
        assert!(matches!(
            plan.launch(&g, &x, other.view_mut().slice(1, 0, 2, 1).unwrap(), &stream),
            Err(Error::PlanMismatch {
                argument: "grad_input",
                ..
            })
        ));
        drop(plan);
        stream.synchronize().unwrap();
    }
}
