//! Attribute objects of `acl_meta.h`: scalars, int/float/bool arrays, tensor and scalar
//! lists, each in its own generation-checked slab (no handle valid twice, counted live).
//!
//! The vendor's rules (opbase `common_types.cpp`): a scalar copies its value at creation
//! by dtype size and refuses a NULL value or a dtype without one (NULL); an array or list
//! with a NULL value or a size of 0 is a valid, non-NULL, empty object; a list stores its
//! elements' handles, and destroying the list destroys every element; every destroy takes
//! NULL as a no-op.

// Operators read them through `Phase1`; until every reader exists some stay unused.
#![allow(dead_code)]

use crate::slab::{Dims64, Slab};
use crate::state::{Kind, State, decode, encode, fail, finding, state, status_of};
use crate::tables::{dtype_name, dtype_size};
use ascend_sys::*;
use std::ffi::c_void;

/// Most elements an array or list records: a bound on what is read through the caller's
/// pointer (no operator takes more).
const MAX_ELEMS: u64 = 1 << 20;

/// An `aclScalar`: its dtype and the bytes copied at creation (little-endian, at the
/// start of `bytes`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Scalar {
    pub dtype: aclDataType,
    bytes: [u8; 16],
}

impl Scalar {
    /// The value read as a double, as nnopbase's `ToDouble` (complex: the real part; a
    /// dtype the simulator cannot convert: NaN).
    pub fn to_f64(self) -> f64 {
        let mut out = [0u8; 8];
        if !crate::cast::supported(self.dtype, ACL_DOUBLE) {
            return f64::NAN;
        }
        let n = scalar_size(self.dtype).unwrap_or(1);
        crate::cast::convert(self.dtype, &self.bytes[..n.max(1)], ACL_DOUBLE, &mut out);
        f64::from_le_bytes(out)
    }

    /// The value converted to `to`, as one element's bytes (at the start of `out`), the
    /// way a cast on the device converts it.
    pub fn convert_to(self, to: aclDataType, out: &mut [u8]) {
        let n = scalar_size(self.dtype).unwrap_or(1);
        crate::cast::convert(self.dtype, &self.bytes[..n.max(1)], to, out);
    }
}

/// Bytes `aclCreateScalar` copies for `dt` (`None`: it refuses the dtype).
fn scalar_size(dt: aclDataType) -> Option<usize> {
    match dt {
        // The FP6/FP4 kinds have no byte size of their own but are stored in one byte.
        38..=41 => Some(1),
        ACL_STRING => None,
        _ => dtype_size(dt),
    }
}

/// The live attribute objects.
pub(crate) struct Attrs {
    pub scalars: Slab<Scalar>,
    pub int_arrays: Slab<Dims64>,
    pub float_arrays: Slab<Vec<f32>>,
    pub bool_arrays: Slab<Vec<bool>>,
    /// Element handles (a NULL element stays 0).
    pub tensor_lists: Slab<Vec<usize>>,
    pub scalar_lists: Slab<Vec<usize>>,
}

impl Attrs {
    pub const fn new() -> Attrs {
        Attrs {
            scalars: Slab::new(),
            int_arrays: Slab::new(),
            float_arrays: Slab::new(),
            bool_arrays: Slab::new(),
            tensor_lists: Slab::new(),
            scalar_lists: Slab::new(),
        }
    }

    pub fn array_count(&self) -> usize {
        self.int_arrays.len() + self.float_arrays.len() + self.bool_arrays.len()
    }

    pub fn list_count(&self) -> usize {
        self.tensor_lists.len() + self.scalar_lists.len()
    }

    /// Why a handle of an attribute `kind` is not live.
    pub fn why_dead(&self, kind: Kind, id: u64) -> &'static str {
        match kind {
            Kind::Scalar => self.scalars.why_dead(id),
            Kind::IntArray => self.int_arrays.why_dead(id),
            Kind::FloatArray => self.float_arrays.why_dead(id),
            Kind::BoolArray => self.bool_arrays.why_dead(id),
            Kind::TensorList => self.tensor_lists.why_dead(id),
            Kind::ScalarList => self.scalar_lists.why_dead(id),
            _ => "not an attribute object",
        }
    }
}

/// The id of a live attribute handle of `kind` (`has`: whether the slab holds the id),
/// 161002 with a finding for a foreign or stale handle. `name` prefixes the messages.
fn live_id(
    st: &State,
    kind: Kind,
    p: *const c_void,
    name: &str,
    has: impl Fn(&Attrs, u64) -> bool,
) -> Result<u64, i32> {
    let id =
        decode(kind, p).map_err(|m| finding(ACLNN_ERR_PARAM_INVALID, format!("{name}: {m}")))?;
    if has(&st.attrs, id) {
        Ok(id)
    } else {
        Err(finding(
            ACLNN_ERR_PARAM_INVALID,
            format!("{name}: {}", st.stale(kind, id)),
        ))
    }
}

/// A live scalar argument of an operator.
pub(crate) fn live_scalar(st: &State, p: *const aclScalar, name: &str) -> Result<Scalar, i32> {
    let id = live_id(st, Kind::Scalar, p.cast(), name, |a, id| {
        a.scalars.contains(id)
    })?;
    st.attrs
        .scalars
        .get(id)
        .copied()
        .ok_or_else(|| fail(ACLNN_ERR_INNER, format!("{name}: scalar vanished")))
}

/// A live int-array argument of an operator.
pub(crate) fn live_int_array(st: &State, p: *const aclIntArray, name: &str) -> Result<Dims64, i32> {
    let id = live_id(st, Kind::IntArray, p.cast(), name, |a, id| {
        a.int_arrays.contains(id)
    })?;
    st.attrs
        .int_arrays
        .get(id)
        .cloned()
        .ok_or_else(|| fail(ACLNN_ERR_INNER, format!("{name}: int array vanished")))
}

/// `aclCreateScalar`: NULL for a NULL value or a dtype without a byte size.
pub(crate) unsafe fn create_scalar(value: *mut c_void, data_type: aclDataType) -> *mut aclScalar {
    if value.is_null() {
        fail(ACLNN_ERR_PARAM_NULLPTR, "value is nullptr".into());
        return std::ptr::null_mut();
    }
    let Some(n) = scalar_size(data_type) else {
        fail(
            ACLNN_ERR_PARAM_INVALID,
            format!(
                "dataType {} has no scalar representation",
                dtype_name(data_type)
            ),
        );
        return std::ptr::null_mut();
    };
    let mut s = Scalar {
        dtype: data_type,
        bytes: [0; 16],
    };
    // SAFETY: by the C contract `value` points to one readable value of `dataType`, `n`
    // bytes; it need not be aligned, so it is read as bytes.
    let src = unsafe { std::slice::from_raw_parts(value.cast::<u8>(), n) };
    s.bytes[..n].copy_from_slice(src);
    encode(Kind::Scalar, state().attrs.scalars.insert(s))
}

/// The `size` elements at `value`, or none for a NULL value or a size of 0 (the vendor's
/// empty array). `None`: more than the simulator records.
///
/// # Safety
/// A non-null `value` points to `size` readable, aligned `T`s.
unsafe fn elements<'a, T>(value: *const T, size: u64) -> Option<&'a [T]> {
    if size > MAX_ELEMS {
        fail(
            ACLNN_ERR_PARAM_INVALID,
            format!("size {size} is more than the {MAX_ELEMS} elements the simulator records"),
        );
        return None;
    }
    if value.is_null() || size == 0 {
        return Some(&[]);
    }
    // SAFETY: non-null, and `size` readable elements by the caller's contract.
    Some(unsafe { std::slice::from_raw_parts(value, size as usize) })
}

pub(crate) unsafe fn create_int_array(value: *const i64, size: u64) -> *mut aclIntArray {
    // SAFETY: the C contract of aclCreateIntArray.
    match unsafe { elements(value, size) } {
        Some(v) => encode(
            Kind::IntArray,
            state().attrs.int_arrays.insert(Dims64::from_slice(v)),
        ),
        None => std::ptr::null_mut(),
    }
}

pub(crate) unsafe fn create_float_array(value: *const f32, size: u64) -> *mut aclFloatArray {
    // SAFETY: the C contract of aclCreateFloatArray.
    match unsafe { elements(value, size) } {
        Some(v) => encode(
            Kind::FloatArray,
            state().attrs.float_arrays.insert(v.to_vec()),
        ),
        None => std::ptr::null_mut(),
    }
}

pub(crate) unsafe fn create_bool_array(value: *const bool, size: u64) -> *mut aclBoolArray {
    // Read as bytes: a C caller's `bool` need not hold 0 or 1.
    // SAFETY: the C contract of aclCreateBoolArray; `bool` and `u8` share size and layout.
    match unsafe { elements(value.cast::<u8>(), size) } {
        Some(v) => {
            let v = v.iter().map(|&b| b != 0).collect();
            encode(Kind::BoolArray, state().attrs.bool_arrays.insert(v))
        }
        None => std::ptr::null_mut(),
    }
}

pub(crate) unsafe fn create_tensor_list(
    value: *const *const aclTensor,
    size: u64,
) -> *mut aclTensorList {
    // SAFETY: the C contract of aclCreateTensorList.
    match unsafe { elements(value, size) } {
        Some(v) => {
            let v = v.iter().map(|&p| p as usize).collect();
            encode(Kind::TensorList, state().attrs.tensor_lists.insert(v))
        }
        None => std::ptr::null_mut(),
    }
}

/// The elements of a tensor-list argument `name` of an operator, in order: NULL list or a
/// NULL element 161001 (the vendor checks the list, then each element), a stale or foreign
/// handle 161002.
pub(crate) fn list_elements(
    list: *const aclTensorList,
    name: &str,
) -> Result<super::Slots<*const aclTensor>, i32> {
    if list.is_null() {
        return Err(super::nullptr_error(name));
    }
    let st = state();
    let id = live_id(&st, Kind::TensorList, list.cast(), name, |a, id| {
        a.tensor_lists.get(id).is_some()
    })?;
    let elements = st
        .attrs
        .tensor_lists
        .get(id)
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    let mut out = super::Slots::new();
    for (k, &p) in elements.iter().enumerate() {
        if p == 0 {
            return Err(super::nullptr_error(&format!("{name}[{k}]")));
        }
        out.push(p as *const aclTensor);
    }
    Ok(out)
}

pub(crate) unsafe fn create_scalar_list(
    value: *const *const aclScalar,
    size: u64,
) -> *mut aclScalarList {
    // SAFETY: the C contract of aclCreateScalarList.
    match unsafe { elements(value, size) } {
        Some(v) => {
            let v = v.iter().map(|&p| p as usize).collect();
            encode(Kind::ScalarList, state().attrs.scalar_lists.insert(v))
        }
        None => std::ptr::null_mut(),
    }
}

/// Destroys a live handle of `kind` (NULL: nothing, 0), 161002 with a finding for a stale
/// or foreign one. `discard` drops it from its slab (false: not live) and returns the
/// element handles it owned.
fn destroy(
    p: *const c_void,
    kind: Kind,
    discard: impl FnOnce(&mut Attrs, u64) -> Option<Vec<usize>>,
) -> Result<Vec<usize>, i32> {
    if p.is_null() {
        return Ok(Vec::new());
    }
    let mut st = state();
    let id = decode(kind, p).map_err(|m| finding(ACLNN_ERR_PARAM_INVALID, m))?;
    match discard(&mut st.attrs, id) {
        Some(owned) => Ok(owned),
        None => Err(finding(ACLNN_ERR_PARAM_INVALID, st.stale(kind, id))),
    }
}

const DESTROYED: &str = "destroyed by its aclDestroy* call";
const WITH_LIST: &str = "destroyed with the list holding it";

pub(crate) unsafe fn destroy_scalar(scalar: *const aclScalar) -> aclnnStatus {
    status_of(|| {
        destroy(scalar.cast(), Kind::Scalar, |a, id| {
            a.scalars.discard(id, DESTROYED).then(Vec::new)
        })
        .map(drop)
    })
}

pub(crate) unsafe fn destroy_int_array(array: *const aclIntArray) -> aclnnStatus {
    status_of(|| {
        destroy(array.cast(), Kind::IntArray, |a, id| {
            a.int_arrays.discard(id, DESTROYED).then(Vec::new)
        })
        .map(drop)
    })
}

pub(crate) unsafe fn destroy_float_array(array: *const aclFloatArray) -> aclnnStatus {
    status_of(|| {
        destroy(array.cast(), Kind::FloatArray, |a, id| {
            a.float_arrays.discard(id, DESTROYED).then(Vec::new)
        })
        .map(drop)
    })
}

pub(crate) unsafe fn destroy_bool_array(array: *const aclBoolArray) -> aclnnStatus {
    status_of(|| {
        destroy(array.cast(), Kind::BoolArray, |a, id| {
            a.bool_arrays.discard(id, DESTROYED).then(Vec::new)
        })
        .map(drop)
    })
}

/// Destroys the elements a list owned; an element already dead is the vendor's double
/// free, reported (161002) after the live ones are gone.
fn destroy_elements(owned: &[usize], kind: Kind) -> Result<(), i32> {
    let mut st = state();
    let mut first_err = Ok(());
    for (k, &h) in owned.iter().enumerate() {
        if h == 0 {
            continue;
        }
        let id = match decode(kind, h as *const c_void) {
            Ok(id) => id,
            Err(m) => {
                first_err = first_err.and(Err(finding(
                    ACLNN_ERR_PARAM_INVALID,
                    format!("element {k}: {m}"),
                )));
                continue;
            }
        };
        let gone = match kind {
            Kind::Tensor => st.tensors.discard(id, WITH_LIST),
            _ => st.attrs.scalars.discard(id, WITH_LIST),
        };
        if !gone {
            let why = st.stale(kind, id);
            first_err = first_err.and(Err(finding(
                ACLNN_ERR_PARAM_INVALID,
                format!("element {k} (the list destroys its elements; destroying them too is a double free): {why}"),
            )));
        }
    }
    first_err
}

pub(crate) unsafe fn destroy_tensor_list(list: *const aclTensorList) -> aclnnStatus {
    status_of(|| {
        let owned = destroy(list.cast(), Kind::TensorList, |a, id| {
            let v = a.tensor_lists.get(id).cloned();
            a.tensor_lists.discard(id, DESTROYED);
            v
        })?;
        destroy_elements(&owned, Kind::Tensor)
    })
}

pub(crate) unsafe fn destroy_scalar_list(list: *const aclScalarList) -> aclnnStatus {
    status_of(|| {
        let owned = destroy(list.cast(), Kind::ScalarList, |a, id| {
            let v = a.scalar_lists.get(id).cloned();
            a.scalar_lists.discard(id, DESTROYED);
            v
        })?;
        destroy_elements(&owned, Kind::Scalar)
    })
}

/// A size getter: NULL array or NULL `size` → 161001; a stale handle → 161002.
///
/// # Safety
/// `size` is NULL or writable.
unsafe fn get_size(
    p: *const c_void,
    kind: Kind,
    size: *mut u64,
    len: impl Fn(&Attrs, u64) -> Option<usize>,
) -> aclnnStatus {
    status_of(|| {
        if p.is_null() {
            return Err(crate::nnopbase::nullptr_error(kind_arg(kind)));
        }
        // SAFETY: NULL or writable by the caller's contract.
        let out = unsafe { crate::state::out_slot(size) }
            .ok_or_else(|| crate::nnopbase::nullptr_error("size"))?;
        let st = state();
        let id = decode(kind, p).map_err(|m| finding(ACLNN_ERR_PARAM_INVALID, m))?;
        let n = len(&st.attrs, id)
            .ok_or_else(|| finding(ACLNN_ERR_PARAM_INVALID, st.stale(kind, id)))?;
        out.write(n as u64);
        Ok(())
    })
}

/// The vendor's parameter name of a getter's object.
fn kind_arg(kind: Kind) -> &'static str {
    match kind {
        Kind::TensorList => "tensorList",
        Kind::ScalarList => "scalarList",
        _ => "array",
    }
}

pub(crate) unsafe fn get_int_array_size(array: *const aclIntArray, size: *mut u64) -> aclnnStatus {
    // SAFETY: forwarded contract.
    unsafe {
        get_size(array.cast(), Kind::IntArray, size, |a, id| {
            a.int_arrays.get(id).map(|v| v.len())
        })
    }
}

pub(crate) unsafe fn get_float_array_size(
    array: *const aclFloatArray,
    size: *mut u64,
) -> aclnnStatus {
    // SAFETY: forwarded contract.
    unsafe {
        get_size(array.cast(), Kind::FloatArray, size, |a, id| {
            a.float_arrays.get(id).map(Vec::len)
        })
    }
}

pub(crate) unsafe fn get_bool_array_size(
    array: *const aclBoolArray,
    size: *mut u64,
) -> aclnnStatus {
    // SAFETY: forwarded contract.
    unsafe {
        get_size(array.cast(), Kind::BoolArray, size, |a, id| {
            a.bool_arrays.get(id).map(Vec::len)
        })
    }
}

pub(crate) unsafe fn get_tensor_list_size(
    list: *const aclTensorList,
    size: *mut u64,
) -> aclnnStatus {
    // SAFETY: forwarded contract.
    unsafe {
        get_size(list.cast(), Kind::TensorList, size, |a, id| {
            a.tensor_lists.get(id).map(Vec::len)
        })
    }
}

pub(crate) unsafe fn get_scalar_list_size(
    list: *const aclScalarList,
    size: *mut u64,
) -> aclnnStatus {
    // SAFETY: forwarded contract.
    unsafe {
        get_size(list.cast(), Kind::ScalarList, size, |a, id| {
            a.scalar_lists.get(id).map(Vec::len)
        })
    }
}
