//! `libnnopbase.so` (tensors, executors) and `libopapi.so` (aclnnMishBackward).

use crate::kernel::{self, DType, View, offset_range};
use crate::mem::{Alloc, Class, still_live};
use crate::runtime::resolve_stream;
use crate::slab::{Dims64, Shape};
use crate::state::{
    Kind, Life, State, decode, encode, fail, finding, lock, out_slot, state, status_of,
};
use crate::stream::{Scratch, Task};
use ascend_sys::*;
use std::ffi::c_void;
use std::sync::Arc;

/// Most dims `aclCreateTensor` accepts (the operator's own limit, 8, is checked in phase 1).
const MAX_CREATE_DIMS: u64 = 64;
/// Most dims MishBackward supports.
const MAX_OP_DIMS: usize = 8;
/// Alignment of workspace regions and of rebound tensor addresses.
const ALIGN: usize = 32;

/// The recorded descriptor of an `aclTensor`.
#[derive(Debug, Clone)]
pub(crate) struct TensorDesc {
    pub dims: Dims64,
    pub strides: Dims64,
    pub offset: i64,
    pub dtype: aclDataType,
    #[allow(dead_code)]
    pub format: aclFormat,
    pub storage: Dims64,
    pub data: usize,
}

impl TensorDesc {
    fn udims(&self) -> Shape {
        let mut s = Shape::zeroed(self.dims.len());
        for (u, &d) in s.iter_mut().zip(self.dims.iter()) {
            *u = d as usize;
        }
        s
    }

    fn is_empty(&self) -> bool {
        self.dims.contains(&0)
    }

    /// Row-major contiguity (dims of size 1 may have any stride).
    fn is_contiguous(&self) -> bool {
        let mut expect = 1i64;
        for (&d, &s) in self.dims.iter().zip(self.strides.iter()).rev() {
            if d != 1 && s != expect {
                return false;
            }
            expect = expect.saturating_mul(d);
        }
        true
    }
}

pub(crate) fn dtype_name(dt: aclDataType) -> String {
    match dt {
        ACL_DT_UNDEFINED => "DT_UNDEFINED".into(),
        ACL_FLOAT => "FLOAT".into(),
        ACL_FLOAT16 => "FLOAT16".into(),
        ACL_INT8 => "INT8".into(),
        ACL_INT32 => "INT32".into(),
        ACL_UINT8 => "UINT8".into(),
        ACL_INT16 => "INT16".into(),
        ACL_UINT16 => "UINT16".into(),
        ACL_UINT32 => "UINT32".into(),
        ACL_INT64 => "INT64".into(),
        ACL_UINT64 => "UINT64".into(),
        ACL_DOUBLE => "DOUBLE".into(),
        ACL_BOOL => "BOOL".into(),
        ACL_STRING => "STRING".into(),
        ACL_COMPLEX64 => "COMPLEX64".into(),
        ACL_COMPLEX128 => "COMPLEX128".into(),
        ACL_BF16 => "BF16".into(),
        other => format!("aclDataType({other})"),
    }
}

fn is_known_dtype(dt: aclDataType) -> bool {
    matches!(
        dt,
        ACL_FLOAT
            | ACL_FLOAT16
            | ACL_INT8
            | ACL_INT32
            | ACL_UINT8
            | ACL_INT16
            | ACL_UINT16
            | ACL_UINT32
            | ACL_INT64
            | ACL_UINT64
            | ACL_DOUBLE
            | ACL_BOOL
            | ACL_STRING
            | ACL_COMPLEX64
            | ACL_COMPLEX128
            | ACL_BF16
    )
}

#[derive(PartialEq, Eq, PartialOrd, Ord)]
enum Category {
    Bool,
    Integral,
    Floating,
    Complex,
    Other,
}

fn category(dt: aclDataType) -> Category {
    match dt {
        ACL_BOOL => Category::Bool,
        ACL_INT8 | ACL_INT16 | ACL_INT32 | ACL_INT64 | ACL_UINT8 | ACL_UINT16 | ACL_UINT32
        | ACL_UINT64 => Category::Integral,
        ACL_FLOAT | ACL_FLOAT16 | ACL_BF16 | ACL_DOUBLE => Category::Floating,
        ACL_COMPLEX64 | ACL_COMPLEX128 => Category::Complex,
        _ => Category::Other,
    }
}

/// Whether `from` may be cast to `to` (the PyTorch `canCast` rule aclnn uses: no
/// complex -> non-complex, no floating -> integral, no non-bool -> bool).
pub(crate) fn can_cast(from: aclDataType, to: aclDataType) -> bool {
    let (f, t) = (category(from), category(to));
    if f == Category::Other || t == Category::Other {
        return from == to;
    }
    if t == Category::Bool {
        return f == Category::Bool;
    }
    f <= t || t == Category::Complex
}

/// The dtypes MishBackward supports on a SoC.
pub(crate) fn supported_dtypes(soc: &str) -> &'static [aclDataType] {
    if soc.starts_with("Ascend910B") || soc.starts_with("Ascend910_93") {
        &[ACL_FLOAT, ACL_FLOAT16, ACL_BF16]
    } else {
        &[ACL_FLOAT, ACL_FLOAT16]
    }
}

/// Whether the SoC has the MishBackward kernel at all.
pub(crate) fn op_available(soc: &str) -> bool {
    !soc.starts_with("Ascend310B")
}

// ---------------------------------------------------------------------------------------
// Tensors.

#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn create_tensor(
    view_dims: *const i64,
    view_dims_num: u64,
    data_type: aclDataType,
    stride: *const i64,
    offset: i64,
    format: aclFormat,
    storage_dims: *const i64,
    storage_dims_num: u64,
    tensor_data: *mut c_void,
) -> *mut aclTensor {
    let checked = || -> Result<TensorDesc, i32> {
        if view_dims_num > MAX_CREATE_DIMS || storage_dims_num > MAX_CREATE_DIMS {
            return Err(fail(
                ACLNN_ERR_PARAM_INVALID,
                format!(
                    "too many dims ({view_dims_num} view, {storage_dims_num} storage; at most {MAX_CREATE_DIMS})"
                ),
            ));
        }
        if view_dims_num > 0 && view_dims.is_null() {
            return Err(fail(ACLNN_ERR_PARAM_NULLPTR, "viewDims is NULL".into()));
        }
        if view_dims_num > 0 && stride.is_null() {
            return Err(fail(ACLNN_ERR_PARAM_NULLPTR, "stride is NULL".into()));
        }
        if storage_dims_num > 0 && storage_dims.is_null() {
            return Err(fail(ACLNN_ERR_PARAM_NULLPTR, "storageDims is NULL".into()));
        }
        let read = |p: *const i64, n: u64| -> Dims64 {
            if n == 0 {
                Dims64::from_slice(&[])
            } else {
                // SAFETY: p is non-null (checked above) and by the C contract points to n
                // readable int64_t values.
                Dims64::from_slice(unsafe { std::slice::from_raw_parts(p, n as usize) })
            }
        };
        let dims = read(view_dims, view_dims_num);
        let strides = read(stride, view_dims_num);
        let storage = read(storage_dims, storage_dims_num);
        if let Some(d) = dims.iter().find(|&&d| d < 0) {
            return Err(fail(
                ACLNN_ERR_PARAM_INVALID,
                format!("viewDims {dims:?} has a negative dim {d}"),
            ));
        }
        if let Some(s) = strides.iter().find(|&&s| s < 0) {
            return Err(fail(
                ACLNN_ERR_PARAM_INVALID,
                format!("stride {strides:?} has a negative stride {s}"),
            ));
        }
        if let Some(d) = storage.iter().find(|&&d| d < 0) {
            return Err(fail(
                ACLNN_ERR_PARAM_INVALID,
                format!("storageDims {storage:?} has a negative dim {d}"),
            ));
        }
        if offset < 0 {
            return Err(fail(
                ACLNN_ERR_PARAM_INVALID,
                format!("offset {offset} is negative"),
            ));
        }
        if !is_known_dtype(data_type) {
            return Err(fail(
                ACLNN_ERR_PARAM_INVALID,
                format!("dataType {data_type} is not a valid aclDataType"),
            ));
        }
        if !(ACL_FORMAT_NCHW..=ACL_FORMAT_NC1HWC0).contains(&format) {
            return Err(fail(
                ACLNN_ERR_PARAM_INVALID,
                format!("format {format} is not a valid aclFormat"),
            ));
        }
        if dims
            .iter()
            .try_fold(1i64, |acc, &d| acc.checked_mul(d))
            .is_none()
        {
            return Err(fail(
                ACLNN_ERR_PARAM_INVALID,
                format!("viewDims {dims:?} overflow"),
            ));
        }
        Ok(TensorDesc {
            dims,
            strides,
            offset,
            dtype: data_type,
            format,
            storage,
            data: tensor_data as usize,
        })
    };
    // NULL is this function's only failure value; `fail` has recorded the reason.
    match checked() {
        Ok(desc) => encode(Kind::Tensor, state().tensors.insert(desc)),
        Err(_) => std::ptr::null_mut(),
    }
}

pub(crate) unsafe fn destroy_tensor(tensor: *const aclTensor) -> aclnnStatus {
    status_of(|| {
        if tensor.is_null() {
            return Err(fail(ACLNN_ERR_PARAM_NULLPTR, "tensor is NULL".into()));
        }
        let mut st = state();
        let id = decode(Kind::Tensor, tensor).map_err(|m| finding(ACLNN_ERR_PARAM_INVALID, m))?;
        if !st.tensors.discard(id, "destroyed by aclDestroyTensor") {
            return Err(finding(ACLNN_ERR_PARAM_INVALID, st.stale(Kind::Tensor, id)));
        }
        Ok(())
    })
}

/// A live tensor argument: its id and descriptor. `name` prefixes the messages.
fn live_tensor<'s>(
    st: &'s State,
    t: *const aclTensor,
    name: &str,
) -> Result<(u64, &'s TensorDesc), i32> {
    let id = decode(Kind::Tensor, t)
        .map_err(|m| finding(ACLNN_ERR_PARAM_INVALID, format!("{name}: {m}")))?;
    match st.tensors.get(id) {
        Some(d) => Ok((id, d)),
        None => Err(finding(
            ACLNN_ERR_PARAM_INVALID,
            format!("{name}: {}", st.stale(Kind::Tensor, id)),
        )),
    }
}

/// aclnn's status and text for a NULL pointer argument.
fn nullptr_error(name: &str) -> i32 {
    fail(ACLNN_ERR_PARAM_NULLPTR, format!("{name} is nullptr"))
}

// ---------------------------------------------------------------------------------------
// Executors and the operator.

/// What phase 1 decided.
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    pub compute: DType,
    pub out_shape: Shape,
    pub empty: bool,
    /// Workspace byte offsets of the temporaries (gradOutput, self, result).
    pub ws_g: Option<usize>,
    pub ws_x: Option<usize>,
    pub ws_out: Option<usize>,
    pub ws_size: u64,
}

/// A live `aclOpExecutor`.
pub(crate) struct Executor {
    pub device: usize,
    /// Tensor ids: gradOutput, self, gradInput.
    pub tensors: [u64; 3],
    pub descs: [TensorDesc; 3],
    pub plan: Plan,
    pub repeatable: bool,
    pub launched: u64,
}

const NAMES: [&str; 3] = ["gradOutput", "self", "gradInput"];

fn broadcast(a: &[i64], b: &[i64]) -> Option<Dims64> {
    let n = a.len().max(b.len());
    let mut out = Dims64::zeroed(n);
    for k in 0..n {
        let da = if k + a.len() >= n {
            a[k + a.len() - n]
        } else {
            1
        };
        let db = if k + b.len() >= n {
            b[k + b.len() - n]
        } else {
            1
        };
        out[k] = if da == db || db == 1 {
            da
        } else if da == 1 {
            db
        } else {
            return None;
        };
    }
    Some(out)
}

fn align_up(n: usize, a: usize) -> usize {
    n.div_ceil(a) * a
}

pub(crate) unsafe fn get_workspace_size(
    grad_output: *const aclTensor,
    self_: *const aclTensor,
    grad_input: *mut aclTensor,
    workspace_size: *mut u64,
    executor: *mut *mut aclOpExecutor,
) -> aclnnStatus {
    status_of(|| {
        // 1. Null checks.
        for (p, name) in [
            (grad_output as usize, "gradOutput"),
            (self_ as usize, "self"),
            (grad_input as usize, "gradInput"),
        ] {
            if p == 0 {
                return Err(nullptr_error(name));
            }
        }
        // SAFETY: NULL or writable and unaliased during the call, by the C contract.
        let workspace_size_out =
            unsafe { out_slot(workspace_size) }.ok_or_else(|| nullptr_error("workspaceSize"))?;
        // SAFETY: as for `workspace_size`.
        let executor_out =
            unsafe { out_slot(executor) }.ok_or_else(|| nullptr_error("executor"))?;
        let mut st = state();
        let (g_id, g) = live_tensor(&st, grad_output, NAMES[0])?;
        let (x_id, x) = live_tensor(&st, self_, NAMES[1])?;
        let (out_id, out) = live_tensor(&st, grad_input, NAMES[2])?;
        let ids = [g_id, x_id, out_id];
        let descs = [g.clone(), x.clone(), out.clone()];
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
        let soc: &'static str = st.devices[device]
            .soc
            .to_str()
            .unwrap_or("<non-UTF-8 SoC name>");
        if !op_available(soc) {
            return Err(fail(
                ACLNN_ERR_INNER_FIND_KERNEL_ERROR,
                format!("MishBackward is not supported on {soc} (no kernel for this product)"),
            ));
        }
        let [g, x, out] = [&descs[0], &descs[1], &descs[2]];
        // 2. Dtypes.
        if !can_cast(x.dtype, out.dtype) {
            return Err(fail(
                ACLNN_ERR_PARAM_INVALID,
                format!(
                    "self dtype {} can not cast to gradInput dtype {}",
                    dtype_name(x.dtype),
                    dtype_name(out.dtype)
                ),
            ));
        }
        let supported = supported_dtypes(soc);
        for (d, name) in descs.iter().zip(NAMES) {
            if !supported.contains(&d.dtype) {
                let list: Vec<String> = supported.iter().map(|&t| dtype_name(t)).collect();
                return Err(fail(
                    ACLNN_ERR_PARAM_INVALID,
                    format!(
                        "{name} dtype {} is not supported on {soc}, should be in [{}]",
                        dtype_name(d.dtype),
                        list.join(", ")
                    ),
                ));
            }
        }
        // 3. Shapes.
        for (d, name) in descs.iter().zip(NAMES) {
            if d.dims.len() > MAX_OP_DIMS {
                return Err(fail(
                    ACLNN_ERR_PARAM_INVALID,
                    format!(
                        "{name} has {} dims, more than the supported maximum {MAX_OP_DIMS}",
                        d.dims.len()
                    ),
                ));
            }
        }
        let Some(bshape) = broadcast(&g.dims, &x.dims) else {
            return Err(fail(
                ACLNN_ERR_PARAM_INVALID,
                format!(
                    "gradOutput shape {:?} and self shape {:?} can not broadcast",
                    g.dims, x.dims
                ),
            ));
        };
        if *out.dims != *bshape {
            return Err(fail(
                ACLNN_ERR_PARAM_INVALID,
                format!(
                    "gradInput shape {:?} is not equal to the broadcast shape {:?} of gradOutput and self",
                    out.dims, bshape
                ),
            ));
        }
        // 4. Empty tensors and the workspace.
        let (gd, xd, od) = (
            DType::from_acl(g.dtype),
            DType::from_acl(x.dtype),
            DType::from_acl(out.dtype),
        );
        let (Some(gd), Some(xd), Some(od)) = (gd, xd, od) else {
            return Err(fail(
                ACLNN_ERR_INNER,
                "unexpected dtype after validation".into(),
            ));
        };
        let compute = DType::promote(xd, gd);
        let empty = descs.iter().any(TensorDesc::is_empty);
        let mut out_shape = Shape::zeroed(bshape.len());
        for (u, &d) in out_shape.iter_mut().zip(bshape.iter()) {
            *u = d as usize;
        }
        let n: usize = out_shape.iter().product();
        let region = align_up(n * compute.size(), 512);
        let mut plan = Plan {
            compute,
            out_shape,
            empty,
            ws_g: None,
            ws_x: None,
            ws_out: None,
            ws_size: 0,
        };
        if !empty {
            let mut used = 0usize;
            let mut take = |need: bool| {
                need.then(|| {
                    let at = used;
                    used += region;
                    at
                })
            };
            plan.ws_g = take(gd != compute || *g.dims != *bshape || !g.is_contiguous());
            plan.ws_x = take(xd != compute || *x.dims != *bshape || !x.is_contiguous());
            plan.ws_out = take(od != compute || !out.is_contiguous());
            plan.ws_size = used as u64;
        }
        let ws = plan.ws_size;
        let id = st.executors.insert(Executor {
            device,
            tensors: ids,
            descs,
            plan,
            repeatable: false,
            launched: 0,
        });
        workspace_size_out.write(ws);
        executor_out.write(encode(Kind::Executor, id));
        Ok(())
    })
}

fn lookup_executor(st: &State, e: *const aclOpExecutor) -> Result<u64, i32> {
    if e.is_null() {
        return Err(nullptr_error("executor"));
    }
    let id = decode(Kind::Executor, e).map_err(|m| finding(ACLNN_ERR_PARAM_INVALID, m))?;
    if st.executors.contains(id) {
        Ok(id)
    } else {
        Err(finding(
            ACLNN_ERR_PARAM_INVALID,
            st.stale(Kind::Executor, id),
        ))
    }
}

/// One operand of a queued launch.
struct Operand {
    alloc: Arc<Alloc>,
    strides: Dims64,
    offset: i64,
    data: usize,
    dims: Shape,
    dtype: DType,
}

impl Operand {
    fn view(&self) -> View<'_> {
        View {
            dims: &self.dims,
            strides: &self.strides,
            offset: self.offset,
            base_byte: self.data - self.alloc.start,
            dtype: self.dtype,
        }
    }
}

/// Everything a queued MishBackward needs.
pub(crate) struct Launch {
    ops: [Operand; 3],
    ws: Option<Arc<Alloc>>,
    ws_off: usize,
    plan: Plan,
}

/// Checks that a tensor's data lies in a live device allocation. Status codes.
fn bind_operand(st: &State, d: &TensorDesc, name: &str) -> Result<Operand, i32> {
    let dtype = DType::from_acl(d.dtype)
        .ok_or_else(|| fail(ACLNN_ERR_INNER, format!("{name}: unexpected dtype")))?;
    let dims = d.udims();
    if d.data == 0 {
        return Err(finding(
            ACLNN_ERR_PARAM_NULLPTR,
            format!("{name} data address is NULL"),
        ));
    }
    if st.class_of(d.data) == Class::Host {
        return Err(finding(
            ACLNN_ERR_PARAM_INVALID,
            format!(
                "{name} data {:#x} is host memory, not device memory from aclrtMalloc",
                d.data
            ),
        ));
    }
    let Some(a) = st.alloc_at(d.data) else {
        return Err(finding(
            ACLNN_ERR_PARAM_INVALID,
            format!(
                "{name} data {:#x} is not inside a live device allocation (freed or never allocated)",
                d.data
            ),
        ));
    };
    if let Some((_, hi)) = offset_range(&dims, &d.strides) {
        let storage: i64 = d.storage.iter().product();
        if d.offset + hi >= storage {
            return Err(finding(
                ACLNN_ERR_PARAM_INVALID,
                format!(
                    "{name}: the view (dims {:?}, strides {:?}, offset {}) reaches element {} but its storage {:?} has {storage} elements",
                    d.dims,
                    d.strides,
                    d.offset,
                    d.offset + hi,
                    d.storage
                ),
            ));
        }
    }
    let op = Operand {
        alloc: Arc::clone(a),
        strides: d.strides.clone(),
        offset: d.offset,
        data: d.data,
        dims,
        dtype,
    };
    op.view()
        .check_bounds(a.size, name)
        .map_err(|m| finding(ACLNN_ERR_PARAM_INVALID, m))?;
    Ok(op)
}

pub(crate) unsafe fn mish_backward(
    workspace: *mut c_void,
    workspace_size: u64,
    executor: *mut aclOpExecutor,
    stream: aclrtStream,
) -> aclnnStatus {
    status_of(|| {
        let mut st = state();
        let id = lookup_executor(&st, executor)?;
        if st.life != Life::Active {
            return Err(fail(
                ACLNN_ERR_RUNTIME_ERROR,
                "the runtime is not initialized (aclInit) or already finalized".into(),
            ));
        }
        let (shared, device) = resolve_stream(&mut st, stream).map_err(|code| {
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
        if ex.device != device {
            return Err(finding(
                ACLNN_ERR_RUNTIME_ERROR,
                format!(
                    "the executor was created on device {} but the stream is on device {device}",
                    ex.device
                ),
            ));
        }
        for (tid, name) in ex.tensors.iter().zip(NAMES) {
            if !st.tensors.contains(*tid) {
                return Err(finding(
                    ACLNN_ERR_PARAM_INVALID,
                    format!(
                        "{name} tensor was destroyed before aclnnMishBackward ({})",
                        st.stale(Kind::Tensor, *tid)
                    ),
                ));
            }
        }
        let plan = &ex.plan;
        let descs = &ex.descs;
        let (ws, ws_off) = if plan.ws_size > 0 {
            if workspace.is_null() {
                return Err(finding(
                    ACLNN_ERR_PARAM_NULLPTR,
                    format!(
                        "workspace is nullptr but {} bytes are required",
                        plan.ws_size
                    ),
                ));
            }
            if workspace_size < plan.ws_size {
                return Err(finding(
                    ACLNN_ERR_PARAM_INVALID,
                    format!(
                        "workspaceSize {workspace_size} is smaller than the {} bytes phase 1 asked for",
                        plan.ws_size
                    ),
                ));
            }
            let addr = workspace as usize;
            if st.class_of(addr) == Class::Host {
                return Err(finding(
                    ACLNN_ERR_PARAM_INVALID,
                    format!(
                        "workspace {addr:#x} is host memory, not device memory from aclrtMalloc"
                    ),
                ));
            }
            let a = st
                .device_range("workspace", addr, workspace_size as usize)
                .map_err(|m| finding(ACLNN_ERR_PARAM_INVALID, m))?;
            let off = addr - a.start;
            (Some(a), off)
        } else {
            (None, 0)
        };
        let launch = if plan.empty {
            None
        } else {
            let ops = [
                bind_operand(&st, &descs[0], NAMES[0])?,
                bind_operand(&st, &descs[1], NAMES[1])?,
                bind_operand(&st, &descs[2], NAMES[2])?,
            ];
            Some(shared.boxed_launch(Launch {
                ops,
                ws,
                ws_off,
                plan: plan.clone(),
            }))
        };
        // Consume the executor unless it is repeatable.
        let ex = st.executors.get_mut(id).expect("checked above");
        ex.launched += 1;
        if !ex.repeatable {
            st.executors.discard(
                id,
                "consumed by its aclnnMishBackward call (not made repeatable with aclSetAclOpExecutorRepeatable)",
            );
        }
        if let Some(launch) = launch {
            shared.submit(Task::Mish(launch));
        }
        Ok(())
    })
}

/// The queued compute. The f32 temporaries live in the stream worker's grow-only
/// `scratch`, so a steady stream of launches does not allocate.
pub(crate) fn run_launch(l: &Launch, scratch: &mut Scratch) -> Result<(), String> {
    let prefix = |m: String| format!("aclnnMishBackward (queued): {m}");
    for (op, name) in l.ops.iter().zip(NAMES) {
        still_live(name, &op.alloc).map_err(prefix)?;
    }
    if let Some(ws) = &l.ws {
        still_live("workspace", ws).map_err(prefix)?;
    }
    let plan = &l.plan;
    let n: usize = plan.out_shape.iter().product();
    let compute = plan.compute;
    let [g, x, out] = &l.ops;
    let (gv, xv) = scratch.two(n);
    for (op, dst, name) in [(g, &mut *gv, NAMES[0]), (x, &mut *xv, NAMES[1])] {
        let buf = lock(&op.alloc.data);
        let v = op.view();
        v.check_bounds(buf.len(), name).map_err(prefix)?;
        kernel::gather(&buf, &v, &plan.out_shape, dst);
    }
    let ws_pass = |at: Option<usize>, vals: &mut [f32], what: &str| -> Result<(), String> {
        let Some(at) = at else { return Ok(()) };
        let Some(ws) = &l.ws else {
            return Err(prefix(format!("{what} temporary needs a workspace")));
        };
        let mut buf = lock(&ws.data);
        let start = l.ws_off + at;
        let end = start + vals.len() * compute.size();
        if end > buf.len() {
            return Err(prefix(format!(
                "{what} temporary [{start}, {end}) overruns the workspace allocation of {} bytes",
                buf.len()
            )));
        }
        kernel::through_workspace(&mut buf, start, compute, vals);
        Ok(())
    };
    ws_pass(plan.ws_g, gv, "gradOutput")?;
    ws_pass(plan.ws_x, xv, "self")?;
    kernel::compute(gv, xv, compute);
    ws_pass(plan.ws_out, gv, "result")?;
    let mut buf = lock(&out.alloc.data);
    let v = out.view();
    v.check_bounds(buf.len(), NAMES[2]).map_err(prefix)?;
    kernel::scatter(&mut buf, &v, gv);
    drop(buf);
    for (op, name) in l.ops.iter().zip(NAMES) {
        still_live(name, &op.alloc).map_err(prefix)?;
    }
    Ok(())
}

pub(crate) unsafe fn set_repeatable(executor: *mut aclOpExecutor) -> aclnnStatus {
    status_of(|| {
        let mut st = state();
        let id = lookup_executor(&st, executor)?;
        let ex = st.executors.get_mut(id).expect("checked above");
        if ex.launched > 0 && !ex.repeatable {
            return Err(finding(
                ACLNN_ERR_PARAM_INVALID,
                "aclSetAclOpExecutorRepeatable must be called right after phase 1, before any aclnnMishBackward".into(),
            ));
        }
        ex.repeatable = true;
        Ok(())
    })
}

pub(crate) unsafe fn destroy_executor(executor: *mut aclOpExecutor) -> aclnnStatus {
    status_of(|| {
        let mut st = state();
        let id = lookup_executor(&st, executor)?;
        st.executors
            .discard(id, "destroyed by aclDestroyAclOpExecutor");
        Ok(())
    })
}

/// Rebinds the data address of the executor's tensor in `slot` (`index`: the caller's
/// numbering, for messages).
fn set_addr(
    executor: *mut aclOpExecutor,
    slot: usize,
    index: usize,
    tensor: *mut aclTensor,
    addr: *mut c_void,
) -> Result<(), i32> {
    let mut st = state();
    let id = lookup_executor(&st, executor)?;
    if tensor.is_null() {
        return Err(nullptr_error("tensor"));
    }
    if addr.is_null() {
        return Err(nullptr_error("addr"));
    }
    let a = addr as usize;
    if !a.is_multiple_of(ALIGN) {
        return Err(finding(
            ACLNN_ERR_PARAM_INVALID,
            format!("addr {a:#x} is not {ALIGN}-byte aligned"),
        ));
    }
    let (tid, _) = live_tensor(&st, tensor, NAMES[slot])?;
    let ex = st.executors.get_mut(id).expect("checked above");
    if ex.tensors[slot] != tid {
        return Err(finding(
            ACLNN_ERR_PARAM_INVALID,
            format!(
                "tensor {tensor:p} is not the {} tensor (index {index}) the executor was created with",
                NAMES[slot]
            ),
        ));
    }
    ex.descs[slot].data = a;
    if let Some(t) = st.tensors.get_mut(tid) {
        t.data = a;
    }
    Ok(())
}

/// The executor slot of the input `index` names.
fn input_slot(index: usize) -> Result<usize, i32> {
    if index > 1 {
        return Err(fail(
            ACLNN_ERR_PARAM_INVALID,
            format!(
                "input index {index} out of range: MishBackward has inputs 0 (gradOutput) and 1 (self)"
            ),
        ));
    }
    Ok(index)
}

/// The executor slot of the output `index` names.
fn output_slot(index: usize) -> Result<usize, i32> {
    if index != 0 {
        return Err(fail(
            ACLNN_ERR_PARAM_INVALID,
            format!("output index {index} out of range: MishBackward has output 0 (gradInput)"),
        ));
    }
    Ok(2)
}

pub(crate) unsafe fn set_input_addr(
    executor: *mut aclOpExecutor,
    index: usize,
    tensor: *mut aclTensor,
    addr: *mut c_void,
) -> aclnnStatus {
    status_of(|| set_addr(executor, input_slot(index)?, index, tensor, addr))
}

pub(crate) unsafe fn set_output_addr(
    executor: *mut aclOpExecutor,
    index: usize,
    tensor: *mut aclTensor,
    addr: *mut c_void,
) -> aclnnStatus {
    status_of(|| set_addr(executor, output_slot(index)?, index, tensor, addr))
}
