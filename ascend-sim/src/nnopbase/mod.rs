//! `libnnopbase.so`: tensors, attribute objects (scalars, arrays, lists), and executors
//! of any arity carrying an operator kind.
//!
//! Operators (in [`crate::ops`]) describe themselves with an [`OpDef`], run their phase-1
//! checks on a [`Phase1`] and leave the rest to this module: the executor, phase 2, the
//! queued kernel call and the executor-reuse API.

mod access;
mod attrs;
mod executor;
mod op_def;
mod phase2;
mod prepared;

pub(crate) use attrs::*;

pub(crate) use executor::{
    Arg, Attr, Decision, Executor, MAX_ARGS, MAX_ATTRS, OutParams, Phase1, Slots, destroy_executor,
    require_broadcast, set_input_addr, set_output_addr, set_repeatable,
};
pub(crate) use op_def::{OpDef, every_product, op_def, positions};
pub(crate) use phase2::{KernelCall, phase2, release_on_fault};
pub(crate) use prepared::Prepared;

use crate::slab::{Dims64, Shape};
use crate::state::{Kind, State, decode, encode, fail, finding, report, state, status_of};
use crate::tables::{format_list, is_known_dtype, is_known_format};
use ascend_sys::*;
use std::ffi::c_void;

/// Most dims `aclCreateTensor` records (operators check their own limit in phase 1): a
/// bound on what is read through the caller's pointers.
const MAX_CREATE_DIMS: u64 = 64;

/// The recorded descriptor of an `aclTensor`.
#[derive(Debug, Clone, Default)]
pub(crate) struct TensorDesc {
    pub dims: Dims64,
    pub strides: Dims64,
    pub offset: i64,
    pub dtype: aclDataType,
    pub format: aclFormat,
    pub storage: Dims64,
    pub data: usize,
}

impl TensorDesc {
    pub fn udims(&self) -> Shape {
        let mut s = Shape::zeroed(self.dims.len());
        for (u, &d) in s.iter_mut().zip(self.dims.iter()) {
            *u = d as usize;
        }
        s
    }

    pub fn is_empty(&self) -> bool {
        self.dims.contains(&0)
    }

    /// Row-major contiguity (dims of size 1 may have any stride).
    pub fn is_contiguous(&self) -> bool {
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

/// Row-major strides of `dims` (what CANN assumes for a NULL `stride`).
fn contiguous_strides(dims: &[i64]) -> Dims64 {
    let mut s = Dims64::zeroed(dims.len());
    let mut acc = 1i64;
    for (k, &d) in dims.iter().enumerate().rev() {
        s[k] = acc;
        acc = acc.saturating_mul(d.max(1));
    }
    s
}

/// `aclCreateTensor`. Like CANN it fails only on a NULL array whose length is not 0 and
/// records the rest unchecked, since an operator's phase 1 is where a descriptor is
/// judged: any `aclFormat` (elementwise operators treat it as a label) and any
/// `aclDataType` is accepted. What CANN would keep silently but no operator can use (a
/// value outside the vendor's enums, a negative size or offset) is also reported as a
/// sanitizer finding.
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
        for (p, n, name) in [
            (view_dims, view_dims_num, "viewDims"),
            (storage_dims, storage_dims_num, "storageDims"),
        ] {
            if n > 0 && p.is_null() {
                return Err(fail(
                    ACLNN_ERR_PARAM_NULLPTR,
                    format!("{name} is NULL but has {n} dims"),
                ));
            }
            if n > MAX_CREATE_DIMS {
                return Err(fail(
                    ACLNN_ERR_PARAM_INVALID,
                    format!("{name} has {n} dims; the simulator records at most {MAX_CREATE_DIMS}"),
                ));
            }
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
        let strides = if stride.is_null() {
            contiguous_strides(&dims)
        } else {
            read(stride, view_dims_num)
        };
        let storage = read(storage_dims, storage_dims_num);
        let odd = [
            (!is_known_dtype(data_type))
                .then(|| format!("dataType {data_type} is not an aclDataType")),
            (!is_known_format(format)).then(|| {
                format!(
                    "format {format} is not an aclFormat (known: {})",
                    format_list()
                )
            }),
            dims.iter()
                .any(|&d| d < 0)
                .then(|| format!("viewDims {dims:?} has a negative dim")),
            storage
                .iter()
                .any(|&d| d < 0)
                .then(|| format!("storageDims {storage:?} has a negative dim")),
            (offset < 0).then(|| format!("offset {offset} is negative")),
        ];
        for why in odd.into_iter().flatten() {
            report(format!(
                "aclCreateTensor: {why}; the tensor is created, as by CANN, but operators refuse it"
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

/// `aclDestroyTensor`: NULL is a no-op, as in CANN.
pub(crate) unsafe fn destroy_tensor(tensor: *const aclTensor) -> aclnnStatus {
    status_of(|| {
        if tensor.is_null() {
            return Ok(());
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
pub(crate) fn live_tensor<'s>(
    st: &'s State,
    t: *const aclTensor,
    name: &str,
) -> Result<(u64, &'s TensorDesc), i32> {
    let id = decode(Kind::Tensor, t)
        .map_err(|m| finding(ACLNN_ERR_PARAM_INVALID, format!("{name}: {m}")))?;
    match st.tensors.get(id) {
        Some(d) => {
            validate(d, name)?;
            Ok((id, d))
        }
        None => Err(finding(
            ACLNN_ERR_PARAM_INVALID,
            format!("{name}: {}", st.stale(Kind::Tensor, id)),
        )),
    }
}

/// What every operator refuses in a tensor argument (161002): a negative dim, or more
/// elements than an `i64` counts.
fn validate(d: &TensorDesc, name: &str) -> Result<(), i32> {
    if let Some(&neg) = d.dims.iter().find(|&&x| x < 0) {
        return Err(finding(
            ACLNN_ERR_PARAM_INVALID,
            format!("{name} has a negative dim {neg} in {:?}", d.dims),
        ));
    }
    if d.dims
        .iter()
        .try_fold(1i64, |a, &x| a.checked_mul(x))
        .is_none()
    {
        return Err(finding(
            ACLNN_ERR_PARAM_INVALID,
            format!("{name} dims {:?} have more than i64::MAX elements", d.dims),
        ));
    }
    Ok(())
}

/// aclnn's status and text for a NULL pointer argument.
pub(crate) fn nullptr_error(name: &str) -> i32 {
    fail(ACLNN_ERR_PARAM_NULLPTR, format!("{name} is nullptr"))
}

/// aclnn's status (161002) and text for an invalid argument.
pub(crate) fn invalid(msg: String) -> i32 {
    fail(ACLNN_ERR_PARAM_INVALID, msg)
}

/// Fails with [`nullptr_error`] on the first NULL of `args` (`(pointer, name)`, in the
/// operator's order).
pub(crate) fn require_non_null(args: &[(usize, &str)]) -> Result<(), i32> {
    match args.iter().find(|(p, _)| *p == 0) {
        Some((_, name)) => Err(nullptr_error(name)),
        None => Ok(()),
    }
}

/// numpy broadcasting of two shapes (`None`: not broadcastable).
pub(crate) fn broadcast(a: &[i64], b: &[i64]) -> Option<Dims64> {
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
