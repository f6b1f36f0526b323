//! Phase 2 and the queued kernel call: binding an executor's tensors and workspace to live
//! allocations, and the element access operators' kernels read and write through.

use super::executor::{Decision, Slots, USE_AFTER_RELEASE, lookup_executor};
use super::op_def::OpDef;
use super::prepared::{ForCall, Layout};
use crate::mem::{Alloc, Class, still_live};
use crate::racecheck::{Access, MAX_ACCESSES};
use crate::runtime::resolve_stream;
use crate::state::{Kind, Life, State, fail, finding, state, status_of};
use crate::stream::{Scratch, StreamShared, Task};
use crate::strided::DType;
use crate::tables::dtype_name;
use ascend_sys::*;
use std::ffi::c_void;
use std::sync::{Arc, Weak};

/// One tensor of a queued kernel call: its allocation and data address (its layout is
/// the executor's [`Layout`]).
pub(super) struct Operand {
    pub(super) alloc: Arc<Alloc>,
    data: usize,
}

impl Operand {
    /// Byte position of element offset 0 inside the allocation.
    pub(super) fn base_byte(&self) -> usize {
        self.data - self.alloc.start
    }
}

/// A layout's dtype, for kernels computing in floating point.
pub(super) fn float(l: &Layout, name: &str) -> Result<DType, String> {
    DType::from_acl(l.dtype).ok_or_else(|| {
        format!(
            "{name}: dtype {} is not a floating-point dtype",
            dtype_name(l.dtype)
        )
    })
}

/// Everything a queued operator needs: its operands bound to live allocations, the
/// workspace and phase 1's decision. Operators' kernels read and write through it.
pub(crate) struct KernelCall {
    pub(super) op: &'static OpDef,
    pub(super) prepared: ForCall,
    /// One per slot of the executor (a tensor list has one per element).
    pub(super) operands: Slots<Option<Operand>>,
    pub(super) ws: Option<Arc<Alloc>>,
    pub(super) ws_off: usize,
}

impl KernelCall {
    /// The box of the executor's layouts and decision it carries, for its stream to
    /// reuse once the call has run.
    pub fn take_prepared(&mut self) -> Option<Box<super::Prepared>> {
        self.prepared.take_box()
    }

    /// What phase 1 decided.
    pub fn decision(&self) -> &Decision {
        &self.prepared.decision
    }

    /// Runs the operator's kernel, checking before and after that no allocation it uses
    /// was freed under it.
    pub fn run(&self, scratch: &mut Scratch) -> Result<(), String> {
        let r = self
            .check_live()
            .and_then(|()| (self.op.kernel)(self, scratch))
            .and_then(|()| self.check_live());
        r.map_err(|m| format!("{} (queued): {m}", self.op.launch_api))
    }

    /// The phase-2 entry point, for messages.
    pub fn api(&self) -> &'static str {
        self.op.launch_api
    }

    /// What the kernel reads and writes, for the racecheck: each slot's bytes (written
    /// when its argument is an output, read when only an input) and the workspace it uses.
    /// On the stack up to [`MAX_ACCESSES`] (a long tensor list spills to the heap).
    pub fn accesses(&self) -> smallvec::SmallVec<[Option<Access<'_>>; MAX_ACCESSES]> {
        let mut out = smallvec::SmallVec::new();
        for (k, op) in self.operands.iter().enumerate() {
            let Some(op) = op else { continue };
            let layout = &self.prepared.layouts[k];
            let arg = self
                .prepared
                .arg_of
                .get(k)
                .map_or(usize::MAX, |&a| usize::from(a));
            out.push(layout.byte_span(op.data).map(|(lo, hi)| Access {
                region: op.alloc.region(),
                lo,
                hi,
                write: self.op.outputs.contains(&arg),
                what: self.prepared.name(self.op, k),
            }));
        }
        if let Some(ws) = &self.ws {
            let lo = ws.start + self.ws_off;
            out.push(Some(Access {
                region: ws.region(),
                lo,
                hi: lo + self.decision().ws_size as usize,
                write: true,
                what: "workspace",
            }));
        }
        out
    }

    fn check_live(&self) -> Result<(), String> {
        for (k, op) in self.operands.iter().enumerate() {
            if let Some(op) = op {
                still_live(self.prepared.name(self.op, k), &op.alloc)?;
            }
        }
        match &self.ws {
            Some(ws) => still_live("workspace", ws),
            None => Ok(()),
        }
    }
}

/// The temporaries the operator keeps in `[workspace, workspace + size)` must not
/// overwrite an operand (on hardware the operand would be corrupted in silence).
fn check_no_alias(
    workspace: usize,
    size: u64,
    span: Option<(usize, usize)>,
    name: &str,
) -> Result<(), i32> {
    let Some((first, end)) = span else {
        return Ok(());
    };
    let ws_end = workspace.saturating_add(size as usize);
    if size == 0 || ws_end <= first || end <= workspace {
        return Ok(());
    }
    Err(finding(
        ACLNN_ERR_PARAM_INVALID,
        format!(
            "the workspace [{workspace:#x}, {ws_end:#x}) overlaps the bytes [{first:#x}, {end:#x}) of {name}: the operator's temporaries would overwrite it"
        ),
    ))
}

/// The live allocation `addr` lies in, as [`State::alloc_at`] finds it, trying first
/// `cached`, the one an earlier phase 2 of the executor found for this argument: a live
/// allocation (never freed) is in the map, and live allocations do not overlap, so the
/// map holds no other one at `addr`. The second value says whether the map was searched.
fn live_alloc_at(st: &State, addr: usize, cached: &Weak<Alloc>) -> Option<(Arc<Alloc>, bool)> {
    if let Some(a) = cached.upgrade()
        && !a.is_freed()
        && a.start <= addr
        && addr < a.start + a.size.max(1)
    {
        return Some((a, false));
    }
    Some((Arc::clone(st.alloc_at(addr)?), true))
}

/// Checks that argument `name`, of layout `l` at address `data`, lies in a live device
/// allocation (looked up through `cached`, see [`live_alloc_at`]). Status codes; with the
/// operand, whether the lookup searched the map.
fn bind_operand(
    st: &State,
    (l, data, cached): (&Layout, usize, &Weak<Alloc>),
    name: &str,
    device: usize,
) -> Result<(Operand, bool), i32> {
    if l.elem.is_none() {
        return Err(fail(
            ACLNN_ERR_INNER,
            format!(
                "{name}: dtype {} has no byte-addressable elements in the simulator",
                dtype_name(l.dtype)
            ),
        ));
    }
    if l.empty {
        // No element is ever touched: the address is not looked at, as on CANN.
        let alloc = Arc::new(Alloc::detached(data, device));
        return Ok((Operand { alloc, data }, false));
    }
    if data == 0 {
        return Err(finding(
            ACLNN_ERR_PARAM_NULLPTR,
            format!("{name} data address is NULL"),
        ));
    }
    if st.class_of(data) == Class::Host {
        return Err(finding(
            ACLNN_ERR_PARAM_INVALID,
            format!("{name} data {data:#x} is host memory, not device memory from aclrtMalloc"),
        ));
    }
    let Some((a, searched)) = live_alloc_at(st, data, cached) else {
        return Err(finding(
            ACLNN_ERR_PARAM_INVALID,
            format!("{name} data {data:#x} {}", st.dead_memory(data)),
        ));
    };
    if a.device != device {
        return Err(finding(
            ACLNN_ERR_PARAM_INVALID,
            format!(
                "{name} data {data:#x} is memory of device {}, but the operator runs on device {device}",
                a.device
            ),
        ));
    }
    if let Err(m) = &l.storage {
        return Err(finding(ACLNN_ERR_PARAM_INVALID, m.clone()));
    }
    let size = a.size;
    let op = Operand { alloc: a, data };
    l.check_bounds(op.base_byte(), size, name)
        .map_err(|m| finding(ACLNN_ERR_PARAM_INVALID, m))?;
    Ok((op, searched))
}

/// Why a non-repeatable executor is gone after a phase 2 that succeeded.
const CONSUMED: &str =
    "consumed by its phase-2 call (not made repeatable with aclSetAclOpExecutorRepeatable)";
/// Why a non-repeatable executor is gone after a phase 2 that failed: nnopbase's common
/// phase 2 deletes it after running it, whatever the run returned.
const CONSUMED_BY_FAILURE: &str = "consumed by its phase-2 call, which failed (nnopbase releases a non-repeatable executor whatever phase 2 returns)";
/// Why an executor is gone after a phase 2 given a NULL workspace with a non-zero size:
/// nnopbase deletes it before looking at whether it is repeatable.
const RELEASED_BY_NULL_WORKSPACE: &str = "released by a phase-2 call given a NULL workspace with a non-zero workspaceSize (nnopbase releases the executor then, even a repeatable one)";

/// Phase 2 of `op`: checks the executor, the stream, the tensors and the workspace, then
/// enqueues the kernel. Once the executor is known to be live, the call releases it
/// unless it is repeatable, whether it succeeds or fails, as nnopbase's common phase 2
/// does; a NULL workspace with a non-zero `workspace_size` releases even a repeatable one.
pub(crate) fn phase2(
    op: &'static OpDef,
    workspace: *mut c_void,
    workspace_size: u64,
    executor: *mut aclOpExecutor,
    stream: aclrtStream,
) -> aclnnStatus {
    status_of(|| {
        let mut st = state();
        let id = lookup_executor(&st, executor, ACLNN_ERR_PARAM_NULLPTR, USE_AFTER_RELEASE)?;
        if workspace_size > 0 && workspace.is_null() {
            st.executors.discard(id, RELEASED_BY_NULL_WORKSPACE);
            return Err(finding(
                ACLNN_ERR_PARAM_NULLPTR,
                format!(
                    "workspace is nullptr but workspaceSize is {workspace_size} (the executor is released, even a repeatable one)"
                ),
            ));
        }
        let bound = bind(&mut st, op, id, workspace, workspace_size, stream);
        let Some(ex) = st.executors.get_mut(id) else {
            return Err(fail(ACLNN_ERR_INNER, "executor vanished".into()));
        };
        ex.launched += 1;
        if !ex.repeatable {
            let death = if bound.is_ok() {
                CONSUMED
            } else {
                CONSUMED_BY_FAILURE
            };
            st.executors.discard(id, death);
        }
        if let Some((shared, call)) = bound? {
            shared.submit(Task::Kernel(call));
        }
        Ok(())
    })
}

/// A kernel call bound to live allocations, and the stream it goes to.
type Bound = (Arc<StreamShared>, Box<KernelCall>);

/// Phase 2's checks of a live executor `id`, in order, and its kernel call bound to live
/// allocations (`None`: an empty tensor, nothing to compute).
fn bind(
    st: &mut State,
    op: &'static OpDef,
    id: u64,
    workspace: *mut c_void,
    workspace_size: u64,
    stream: aclrtStream,
) -> Result<Option<Bound>, i32> {
    if st.life != Life::Active {
        return Err(fail(
            ACLNN_ERR_RUNTIME_ERROR,
            "the runtime is not initialized (aclInit) or already finalized".into(),
        ));
    }
    let (shared, device) = resolve_stream(st, stream).map_err(|code| {
        let status = if code == ACL_ERROR_RT_INVALID_HANDLE {
            ACLNN_ERR_PARAM_INVALID
        } else {
            ACLNN_ERR_RUNTIME_ERROR
        };
        fail(
            status,
            format!(
                "stream is not usable ({code} {})",
                ascend_sys::status_name(code)
            ),
        )
    })?;
    let Some(ex) = st.executors.get(id) else {
        return Err(fail(ACLNN_ERR_INNER, "executor vanished".into()));
    };
    if !std::ptr::eq(ex.op, op) {
        return Err(finding(
            ACLNN_ERR_PARAM_INVALID,
            format!(
                "the executor was made by the phase 1 of {}; launch it with {}",
                ex.op.name, ex.op.launch_api
            ),
        ));
    }
    if ex.device != device {
        return Err(finding(
            ACLNN_ERR_RUNTIME_ERROR,
            format!(
                "the executor was created on device {} but the stream is on device {device}",
                ex.device
            ),
        ));
    }
    for (k, tid) in ex.ids.iter().enumerate() {
        let name = ex.prepared.name(op, k);
        if !st.tensors.contains(*tid) {
            return Err(finding(
                ACLNN_ERR_PARAM_INVALID,
                format!(
                    "{name} tensor was destroyed before {} ({})",
                    op.launch_api,
                    st.stale(Kind::Tensor, *tid)
                ),
            ));
        }
    }
    let decision = &ex.prepared.decision;
    let (ws, ws_off) = if decision.ws_size > 0 {
        if workspace.is_null() {
            return Err(finding(
                ACLNN_ERR_PARAM_NULLPTR,
                format!(
                    "workspace is nullptr but {} bytes are required",
                    decision.ws_size
                ),
            ));
        }
        if workspace_size < decision.ws_size {
            return Err(finding(
                ACLNN_ERR_PARAM_INVALID,
                format!(
                    "workspaceSize {workspace_size} is smaller than the {} bytes phase 1 asked for",
                    decision.ws_size
                ),
            ));
        }
        let addr = workspace as usize;
        if st.class_of(addr) == Class::Host {
            return Err(finding(
                ACLNN_ERR_PARAM_INVALID,
                format!("workspace {addr:#x} is host memory, not device memory from aclrtMalloc"),
            ));
        }
        let a = st
            .device_range("workspace", addr, workspace_size as usize)
            .map_err(|m| finding(ACLNN_ERR_PARAM_INVALID, m))?;
        if a.device != device {
            return Err(finding(
                ACLNN_ERR_PARAM_INVALID,
                format!(
                    "workspace {addr:#x} is memory of device {}, but the operator runs on device {device}",
                    a.device
                ),
            ));
        }
        let off = addr - a.start;
        (Some(a), off)
    } else {
        (None, 0)
    };
    if decision.empty {
        return Ok(None);
    }
    let n = ex.ids.len();
    let mut operands: Slots<Option<Operand>> = Slots::with_capacity(n);
    let mut found: Slots<Option<Weak<Alloc>>> = Slots::with_capacity(n);
    for k in 0..n {
        let layout = &ex.prepared.layouts[k];
        let data = ex.descs[k].data;
        let name = ex.prepared.name(op, k);
        let arg = (layout, data, &ex.allocs[k]);
        let (operand, searched) = bind_operand(st, arg, name, device)?;
        // Only a repeatable executor has a next phase 2 to look its allocations up for.
        found.push((searched && ex.repeatable).then(|| Arc::downgrade(&operand.alloc)));
        check_no_alias(
            workspace as usize,
            decision.ws_size,
            layout.byte_span(data),
            name,
        )?;
        operands.push(Some(operand));
    }
    let Some(ex) = st.executors.get_mut(id) else {
        return Err(fail(ACLNN_ERR_INNER, "executor vanished".into()));
    };
    for (cache, fresh) in ex.allocs.iter_mut().zip(found) {
        if let Some(w) = fresh {
            *cache = w;
        }
    }
    let call = shared.boxed_call(KernelCall {
        op,
        prepared: ex.prepared.for_call(|| shared.spare_prepared()),
        operands,
        ws,
        ws_off,
    });
    Ok(Some((shared, call)))
}

/// The effect of an injected fault of an operator's phase 2 on its executor: the one a
/// failing phase 2 has on CANN, which releases a live non-repeatable executor. Anything
/// else (NULL, a stale or foreign handle) is left alone, as the fault fires before any
/// check.
pub(crate) fn release_on_fault(executor: *mut aclOpExecutor) {
    let mut st = state();
    let Ok(id) = crate::state::decode(Kind::Executor, executor) else {
        return;
    };
    if st.executors.get(id).is_some_and(|ex| !ex.repeatable) {
        st.executors.discard(id, CONSUMED_BY_FAILURE);
    }
}
