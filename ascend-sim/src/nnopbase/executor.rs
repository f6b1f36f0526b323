//! Executors of any arity: phase 1's shared steps, the decision it leaves for the kernel,
//! and the executor-reuse API. Nothing here knows a particular operator.

use super::op_def::OpDef;
use super::prepared::{Held, Prepared};
use super::{
    Scalar, TensorDesc, list_elements, live_int_array, live_scalar, live_tensor, nullptr_error,
};
use crate::mem::Alloc;
use crate::slab::{Dims64, Shape};
use crate::state::{Kind, Life, State, decode, encode, fail, finding, state, status_of};
use crate::tables::{Family, dtype_list, dtype_name};
use ascend_sys::*;
use std::ffi::c_void;
use std::marker::PhantomData;
use std::mem::MaybeUninit;
use std::sync::{MutexGuard, Weak};

/// Most tensor arguments a user-registered operator declares (its checks keep them on the
/// stack), and the slots whose temporaries a [`Decision`] places. An executor itself holds
/// any number of tensors ([`Slots`]): a tensor list adds one per element.
pub(crate) const MAX_ARGS: usize = 8;

/// Per-tensor values of an executor, inline up to [`MAX_ARGS`] (no allocation in a phase 2
/// of the common operators), on the heap beyond (a long tensor list).
pub(crate) type Slots<T> = smallvec::SmallVec<[T; MAX_ARGS]>;
/// Alignment of rebound tensor addresses (documented for `aclSetInputTensorAddr`).
const ADDR_ALIGN: usize = 32;
/// Alignment of the workspace regions of temporaries.
const REGION_ALIGN: usize = 512;

/// Most attributes an operator keeps for its kernel.
pub(crate) const MAX_ATTRS: usize = 4;

/// An attribute value phase 1 fixed for the kernel: CANN consumes scalars and arrays in
/// phase 1, so a repeatable executor keeps these values whatever happens to the objects.
#[derive(Debug, Clone, Default, PartialEq)]
#[allow(dead_code)]
pub(crate) enum Attr {
    #[default]
    None,
    Scalar(Scalar),
    Ints(Dims64),
    Int(i64),
    Bool(bool),
    DType(aclDataType),
    Float(f64),
}

/// What phase 1 decided, for the kernel.
#[derive(Debug, Clone, Default)]
pub(crate) struct Decision {
    /// The dtype the operator computes in.
    pub compute: aclDataType,
    /// The shape the kernel produces (inputs are broadcast to it).
    pub out_shape: Shape,
    /// Some tensor is empty: phase 2 computes nothing.
    pub empty: bool,
    /// Workspace byte offset of each argument's temporary, if it needs one.
    pub ws: [Option<usize>; MAX_ARGS],
    pub ws_size: u64,
    /// The operator's attributes, in its own order.
    #[allow(dead_code)]
    pub attrs: [Attr; MAX_ATTRS],
}

impl Decision {
    pub fn new(compute: aclDataType, out_dims: &[i64], empty: bool) -> Decision {
        let mut out_shape = Shape::zeroed(out_dims.len());
        for (u, &d) in out_shape.iter_mut().zip(out_dims) {
            *u = d as usize;
        }
        Decision {
            compute,
            out_shape,
            empty,
            ..Decision::default()
        }
    }

    #[allow(dead_code)]
    /// Attribute `k` as a double (a scalar read by `ToDouble`, an integer or bool
    /// converted; anything else NaN).
    pub fn attr_f64(&self, k: usize) -> f64 {
        match &self.attrs[k] {
            Attr::Scalar(s) => s.to_f64(),
            Attr::Int(v) => *v as f64,
            Attr::Bool(b) => f64::from(u8::from(*b)),
            Attr::Float(v) => *v,
            _ => f64::NAN,
        }
    }

    #[allow(dead_code)]
    /// Attribute `k` as an integer (0 when it is not one).
    pub fn attr_i64(&self, k: usize) -> i64 {
        match &self.attrs[k] {
            Attr::Int(v) => *v,
            Attr::Bool(b) => i64::from(*b),
            Attr::DType(d) => i64::from(*d),
            _ => 0,
        }
    }

    /// The decision of an operator that computes over argument `d` as it is: its dtype,
    /// its shape, nothing to do when it is empty.
    pub fn over(d: &TensorDesc) -> Decision {
        Decision::new(d.dtype, &d.dims, d.is_empty())
    }

    /// Elements of the result.
    pub fn numel(&self) -> usize {
        self.out_shape.iter().product()
    }

    /// Reserves, when `need` (and the result is not empty), a workspace region for a
    /// temporary of argument `arg`: the result's element count at `elem` bytes each.
    pub fn temporary(&mut self, arg: usize, need: bool, elem: usize) -> Result<(), i32> {
        if !need || self.empty {
            return Ok(());
        }
        let at = self.ws_size;
        let end = self
            .out_shape
            .iter()
            .try_fold(elem, |acc, &d| acc.checked_mul(d))
            .and_then(|b| b.checked_next_multiple_of(REGION_ALIGN))
            .and_then(|b| at.checked_add(b as u64))
            .ok_or_else(|| {
                fail(
                    ACLNN_ERR_PARAM_INVALID,
                    format!(
                        "the workspace for a temporary of shape {:?} overflows",
                        &*self.out_shape
                    ),
                )
            })?;
        self.ws[arg] = Some(at as usize);
        self.ws_size = end;
        Ok(())
    }
}

/// A live `aclOpExecutor`.
pub(crate) struct Executor {
    pub(super) op: &'static OpDef,
    pub(super) device: usize,
    /// Tensor ids and descriptors, one per slot: the arguments in the order of `op.args`,
    /// a tensor list contributing one slot per element (`prepared.arg_of` says whose).
    pub(super) ids: Slots<u64>,
    pub(super) descs: Slots<TensorDesc>,
    /// The arguments' layouts and the decision (shared once it is repeatable).
    pub(super) prepared: Held,
    /// The allocation each slot's data lay in at the last phase 2 (a lookup hint).
    pub(super) allocs: Slots<Weak<Alloc>>,
    pub(super) repeatable: bool,
    pub(super) launched: u64,
}

/// Where a C out-parameter of phase 1 points.
type Out<'a, T> = &'a mut MaybeUninit<T>;

/// Phase 1's two C out-parameters, `workspaceSize` and `executor`, as the entry point
/// received them. Only [`OutParams::new`] makes one, under the C contract's promise, so the
/// operators' phase-1 code that takes it needs no `unsafe` of its own.
pub(crate) struct OutParams<'a> {
    workspace_size: *mut u64,
    executor: *mut *mut aclOpExecutor,
    call: PhantomData<&'a mut ()>,
}

impl<'a> OutParams<'a> {
    /// # Safety
    /// Each pointer is NULL or, for `'a` (the phase-1 call), aligned, writable and not
    /// accessed through any other pointer.
    pub(crate) unsafe fn new(workspace_size: *mut u64, executor: *mut *mut aclOpExecutor) -> Self {
        OutParams {
            workspace_size,
            executor,
            call: PhantomData,
        }
    }

    /// The two slots, failing with 161001 on a NULL one (`workspaceSize` first).
    pub(crate) fn slots(self) -> Result<(Out<'a, u64>, Out<'a, *mut aclOpExecutor>), i32> {
        // SAFETY: NULL or writable and unaliased for `'a`, as `new` was promised.
        let ws = unsafe { crate::state::out_slot(self.workspace_size) }
            .ok_or_else(|| nullptr_error("workspaceSize"))?;
        // SAFETY: as above.
        let ex = unsafe { crate::state::out_slot(self.executor) }
            .ok_or_else(|| nullptr_error("executor"))?;
        Ok((ws, ex))
    }
}

/// A phase-1 pointer argument that must not be NULL (161001): the operator's next tensor
/// argument (named by [`OpDef::args`]), its next argument as a tensor list (NULL, or a NULL
/// element, 161001), or another object with its name.
pub(crate) enum Arg {
    Tensor(*const aclTensor),
    // Built-in list operators check their list in their own order (`Phase1::begin_slots`);
    // this is the common opening's form of it.
    #[allow(dead_code)]
    List(*const aclTensorList),
    Object(usize, &'static str),
}

impl Arg {
    /// A non-tensor argument (a scalar, an array) named `name`.
    pub fn object<T>(p: *const T, name: &'static str) -> Arg {
        Arg::Object(p as usize, name)
    }
}

/// A phase-1 call past the steps every operator shares: its tensors are live, the
/// runtime is initialised, the thread has a context, and the product has the operator.
pub(crate) struct Phase1<'a> {
    st: MutexGuard<'static, State>,
    op: &'static OpDef,
    device: usize,
    pub family: Family,
    pub soc: &'static str,
    ids: Slots<u64>,
    descs: Slots<TensorDesc>,
    arg_of: Slots<u8>,
    outs: (Out<'a, u64>, Out<'a, *mut aclOpExecutor>),
}

impl<'a> Phase1<'a> {
    /// The shared steps, in the vendor's order, for the (non-null) `tensors` of `op.args`.
    pub fn begin(
        op: &'static OpDef,
        tensors: &[*const aclTensor],
        outs: (Out<'a, u64>, Out<'a, *mut aclOpExecutor>),
    ) -> Result<Phase1<'a>, i32> {
        let slots: Slots<(*const aclTensor, u8)> = tensors
            .iter()
            .enumerate()
            .map(|(k, &t)| (t, k as u8))
            .collect();
        Phase1::begin_slots(op, &slots, outs)
    }

    /// [`Phase1::begin`] for tensors given per slot with the argument each belongs to (the
    /// elements of a tensor list share their list's argument).
    pub fn begin_slots(
        op: &'static OpDef,
        slots: &[(*const aclTensor, u8)],
        outs: (Out<'a, u64>, Out<'a, *mut aclOpExecutor>),
    ) -> Result<Phase1<'a>, i32> {
        let st = state();
        let mut ids = Slots::new();
        let mut descs = Slots::new();
        let mut arg_of = Slots::new();
        for &(t, arg) in slots {
            let name = op.args.get(usize::from(arg)).copied().unwrap_or("?");
            let (id, d) = live_tensor(&st, t, name)?;
            ids.push(id);
            descs.push(d.clone());
            arg_of.push(arg);
        }
        if st.life != Life::Active {
            return Err(fail(
                ACLNN_ERR_RUNTIME_ERROR,
                "the runtime is not initialized (aclInit) or already finalized".into(),
            ));
        }
        let (_, device) = st.current_ctx().map_err(|_| {
            fail(
                ACLNN_ERR_RUNTIME_ERROR,
                "no current context on this thread (107002): call aclrtSetDevice first".into(),
            )
        })?;
        let dev = &st.devices[device];
        let (soc, family): (&'static str, Family) = (
            dev.soc.to_str().unwrap_or("<non-UTF-8 SoC name>"),
            dev.family,
        );
        if !(op.available)(family) {
            return Err(fail(
                ACLNN_ERR_INNER_FIND_KERNEL_ERROR,
                format!(
                    "{} is not supported on {soc} (no kernel for this product)",
                    op.name
                ),
            ));
        }
        Ok(Phase1 {
            st,
            op,
            device,
            family,
            soc,
            ids,
            descs,
            arg_of,
            outs,
        })
    }

    /// The opening most operators share, in the vendor's order: `workspaceSize` and
    /// `executor` (161001 on NULL), then each of `args` in order (161001 on NULL), then
    /// [`Phase1::begin`] on its tensors.
    pub fn open(op: &'static OpDef, outs: OutParams<'a>, args: &[Arg]) -> Result<Phase1<'a>, i32> {
        let outs = outs.slots()?;
        let mut slots: Slots<(*const aclTensor, u8)> = Slots::new();
        let mut n = 0usize;
        for arg in args {
            let (tensor, list) = match *arg {
                Arg::Tensor(t) => (Some(t), None),
                Arg::List(l) => (None, Some(l)),
                Arg::Object(0, name) => return Err(nullptr_error(name)),
                Arg::Object(..) => continue,
            };
            let Some(name) = op.args.get(n) else {
                return Err(fail(
                    ACLNN_ERR_INNER,
                    format!("{} has more tensor arguments than it declares", op.name),
                ));
            };
            let at = n as u8;
            if let Some(t) = tensor {
                if t.is_null() {
                    return Err(nullptr_error(name));
                }
                slots.push((t, at));
            }
            if let Some(l) = list {
                for t in list_elements(l, name)? {
                    slots.push((t, at));
                }
            }
            n += 1;
        }
        Phase1::begin_slots(op, &slots, outs)
    }

    /// The operator being checked (for checks that two operator kinds share).
    pub fn op(&self) -> &'static OpDef {
        self.op
    }

    /// The descriptor of slot `slot` (argument `slot` for an operator without lists).
    pub fn desc(&self, slot: usize) -> &TensorDesc {
        &self.descs[slot]
    }

    #[allow(dead_code)]
    /// A live scalar argument (161002 for a stale or foreign handle; NULL was checked in
    /// the operator's order).
    pub fn scalar(&self, p: *const aclScalar, name: &str) -> Result<Scalar, i32> {
        live_scalar(&self.st, p, name)
    }

    #[allow(dead_code)]
    /// A live int-array argument, as [`Phase1::scalar`].
    pub fn int_array(&self, p: *const aclIntArray, name: &str) -> Result<Dims64, i32> {
        live_int_array(&self.st, p, name)
    }

    /// Fails with 161002 unless argument `arg`'s dtype is in `list`.
    pub fn require_dtype(&self, arg: usize, list: &[aclDataType]) -> Result<(), i32> {
        let dt = self.descs[arg].dtype;
        if list.contains(&dt) {
            return Ok(());
        }
        Err(fail(
            ACLNN_ERR_PARAM_INVALID,
            format!(
                "{} dtype {} is not supported on {}, should be in {}",
                self.op.args[arg],
                dtype_name(dt),
                self.soc,
                dtype_list(list)
            ),
        ))
    }

    /// Fails with 161002 if argument `arg` has more than `max` dims.
    pub fn require_max_dims(&self, arg: usize, max: usize) -> Result<(), i32> {
        let n = self.descs[arg].dims.len();
        if n <= max {
            return Ok(());
        }
        Err(fail(
            ACLNN_ERR_PARAM_INVALID,
            format!(
                "{} has {n} dims, more than the supported maximum {max}",
                self.op.args[arg]
            ),
        ))
    }

    /// Fails with 161002 unless arguments `a` and `b` broadcast (numpy rules) to exactly
    /// argument `out`'s shape.
    pub fn require_broadcast_to(&self, a: usize, b: usize, out: usize) -> Result<(), i32> {
        require_broadcast(
            self.op,
            (a, &self.descs[a]),
            (b, &self.descs[b]),
            (out, &self.descs[out]),
        )
    }

    /// Records the executor and writes the out-parameters.
    pub fn finish(mut self, decision: Decision) -> Result<(), i32> {
        let ws = decision.ws_size;
        let prepared = Held::Own(Prepared::new(self.op, &self.descs, &self.arg_of, decision));
        let allocs = self.ids.iter().map(|_| Weak::new()).collect();
        let id = self.st.executors.insert(Executor {
            op: self.op,
            device: self.device,
            ids: self.ids,
            descs: self.descs,
            prepared,
            allocs,
            repeatable: false,
            launched: 0,
        });
        self.outs.0.write(ws);
        self.outs.1.write(encode(Kind::Executor, id));
        Ok(())
    }
}

/// [`Phase1::require_broadcast_to`] on descriptors `(argument, descriptor)` of `op`, for
/// checks that run before the shared steps.
pub(crate) fn require_broadcast(
    op: &OpDef,
    (a, x): (usize, &TensorDesc),
    (b, y): (usize, &TensorDesc),
    (out, o): (usize, &TensorDesc),
) -> Result<(), i32> {
    let (a, b, out) = (op.args[a], op.args[b], op.args[out]);
    match super::broadcast(&x.dims, &y.dims) {
        None => Err(fail(
            ACLNN_ERR_PARAM_INVALID,
            format!(
                "{a} shape {:?} and {b} shape {:?} can not broadcast",
                x.dims, y.dims
            ),
        )),
        Some(s) if *s != *o.dims => Err(fail(
            ACLNN_ERR_PARAM_INVALID,
            format!(
                "{out} shape {:?} is not the broadcast shape {s:?} of {a} and {b}",
                o.dims
            ),
        )),
        Some(_) => Ok(()),
    }
}

/// The id of a live executor. `null_status` is what the calling API returns for NULL:
/// 161001 for phase 2, 561103 for the executor API of nnopbase. `misuse` names what the
/// call would do to a released executor on CANN, which does not check (the memory is
/// freed): the finding leads with it.
pub(super) fn lookup_executor(
    st: &State,
    e: *const aclOpExecutor,
    null_status: i32,
    misuse: &str,
) -> Result<u64, i32> {
    if e.is_null() {
        return Err(fail(null_status, "executor is nullptr".into()));
    }
    let id = decode(Kind::Executor, e).map_err(|m| finding(ACLNN_ERR_PARAM_INVALID, m))?;
    if st.executors.contains(id) {
        Ok(id)
    } else {
        Err(finding(
            ACLNN_ERR_PARAM_INVALID,
            format!("{misuse}: {}", st.stale(Kind::Executor, id)),
        ))
    }
}

/// What a call on a released executor is, for the calls that use it.
pub(super) const USE_AFTER_RELEASE: &str = "use of a released executor";

pub(crate) unsafe fn set_repeatable(executor: *mut aclOpExecutor) -> aclnnStatus {
    status_of(|| {
        let mut st = state();
        let id = lookup_executor(&st, executor, ACLNN_ERR_INNER_NULLPTR, USE_AFTER_RELEASE)?;
        let Some(ex) = st.executors.get_mut(id) else {
            return Err(fail(ACLNN_ERR_INNER, "executor vanished".into()));
        };
        if ex.launched > 0 && !ex.repeatable {
            return Err(finding(
                ACLNN_ERR_PARAM_INVALID,
                format!(
                    "aclSetAclOpExecutorRepeatable must be called right after phase 1, before any {}",
                    ex.op.launch_api
                ),
            ));
        }
        ex.repeatable = true;
        ex.prepared.make_shared();
        Ok(())
    })
}

pub(crate) unsafe fn destroy_executor(executor: *mut aclOpExecutor) -> aclnnStatus {
    status_of(|| {
        let mut st = state();
        let id = lookup_executor(
            &st,
            executor,
            ACLNN_ERR_INNER_NULLPTR,
            "double release of an executor (CANN would free it a second time)",
        )?;
        st.executors
            .discard(id, "destroyed by aclDestroyAclOpExecutor");
        Ok(())
    })
}

/// Which index space an address setter uses.
#[derive(Clone, Copy)]
enum Role {
    Input,
    Output,
}

/// Rebinds the data address of the executor's tensor that `role` index `index` names.
/// The order of CANN's checks: the tensor, then the executor (561103 for NULL), then the
/// index (161002). A NULL address is accepted, as by CANN; phase 2 refuses it for a
/// tensor with elements.
fn set_addr(
    executor: *mut aclOpExecutor,
    role: Role,
    index: usize,
    tensor: *mut aclTensor,
    addr: *mut c_void,
) -> Result<(), i32> {
    if tensor.is_null() {
        return Err(fail(ACLNN_ERR_INNER_NULLPTR, "tensor is nullptr".into()));
    }
    let mut st = state();
    let id = lookup_executor(&st, executor, ACLNN_ERR_INNER_NULLPTR, USE_AFTER_RELEASE)?;
    let Some(ex) = st.executors.get(id) else {
        return Err(fail(ACLNN_ERR_INNER, "executor vanished".into()));
    };
    let op = ex.op;
    let (list, what) = match role {
        Role::Input => (op.inputs, "input"),
        Role::Output => (op.outputs, "output"),
    };
    // Indices count tensors: each element of a list argument is one (CANN numbers the
    // inputs "from 0 to the number of input tensors - 1").
    let arg_of = &ex.prepared.arg_of;
    let indexed: Slots<usize> = list
        .iter()
        .flat_map(|&a| (0..arg_of.len()).filter(move |&k| usize::from(arg_of[k]) == a))
        .collect();
    let Some(&slot) = indexed.get(index) else {
        let names: Vec<String> = indexed
            .iter()
            .enumerate()
            .map(|(i, &k)| format!("{i} ({})", op.args[usize::from(arg_of[k])]))
            .collect();
        return Err(fail(
            ACLNN_ERR_PARAM_INVALID,
            format!(
                "{what} index {index} out of range: {} has {what}s {}",
                op.name,
                names.join(", ")
            ),
        ));
    };
    let a = addr as usize;
    if !a.is_multiple_of(ADDR_ALIGN) {
        return Err(finding(
            ACLNN_ERR_PARAM_INVALID,
            format!("addr {a:#x} is not {ADDR_ALIGN}-byte aligned"),
        ));
    }
    let name = op.args[usize::from(arg_of[slot])];
    let (tid, _) = live_tensor(&st, tensor, name)?;
    let Some(ex) = st.executors.get_mut(id) else {
        return Err(fail(ACLNN_ERR_INNER, "executor vanished".into()));
    };
    if ex.ids[slot] != tid {
        return Err(finding(
            ACLNN_ERR_PARAM_INVALID,
            format!(
                "tensor {tensor:p} is not the {name} tensor ({what} index {index}) the executor was created with"
            ),
        ));
    }
    // An in-place operator holds its tensor once per role: rebind every one.
    for (k, d) in ex.descs.iter_mut().enumerate() {
        if ex.ids[k] == tid {
            d.data = a;
        }
    }
    if let Some(t) = st.tensors.get_mut(tid) {
        t.data = a;
    }
    Ok(())
}

pub(crate) unsafe fn set_input_addr(
    executor: *mut aclOpExecutor,
    index: usize,
    tensor: *mut aclTensor,
    addr: *mut c_void,
) -> aclnnStatus {
    status_of(|| set_addr(executor, Role::Input, index, tensor, addr))
}

pub(crate) unsafe fn set_output_addr(
    executor: *mut aclOpExecutor,
    index: usize,
    tensor: *mut aclTensor,
    addr: *mut c_void,
) -> aclnnStatus {
    status_of(|| set_addr(executor, Role::Output, index, tensor, addr))
}
