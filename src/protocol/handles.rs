//! The C arguments of one call or plan: `aclTensor` descriptors, `aclScalar`s,
//! `aclIntArray`s and `aclBoolArray`s made for it (destroyed on drop, and on every error path while being
//! made), cached tensor descriptors, and plain values.

use super::args::{Given, TensorList, Value};
use super::attr::{self, Attr, CArg, Scalar};
use crate::device::DeviceInner;
use crate::error::Result;
use crate::shape::MAX_DIMS;
use crate::sys;
use crate::tensor::RawTensor;
use ascend_sys::{Api, FnTable, aclBoolArray, aclIntArray, aclScalar, aclTensor, aclTensorList};
use std::ffi::c_void;

/// What a set made, and so destroys.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Owned {
    No,
    Tensor,
    Scalar,
    Ints,
    Bools,
    /// A tensor list, which destroys its tensors with it.
    List,
}

/// The C arguments of one call or plan, in declaration order, on the stack (one slot per
/// argument). Does not release on its own: [`Guard`] does for a call; a plan moves them
/// to the heap once ([`PlanHandles`]) and releases them on drop.
pub(crate) struct Handles<const N: usize> {
    pub(crate) raw: [CArg; N],
    owned: [Owned; N],
    /// The descriptors of the tensor lists' elements, in argument order (the lists own
    /// them; a plan rebinds their addresses). Empty, and so never allocated, without a list.
    pub(crate) members: Vec<*mut aclTensor>,
}

/// A plan's handles: made once when it is built, so the plan's type need not carry the
/// operator's argument count.
pub(crate) struct PlanHandles {
    pub(crate) raw: Box<[CArg]>,
    owned: Box<[Owned]>,
    /// As [`Handles::members`].
    pub(crate) members: Box<[*mut aclTensor]>,
}

/// What storage a descriptor declares.
#[derive(Clone, Copy)]
enum Storage {
    /// The whole buffer: `[len]`.
    Buffer,
    /// Just what the view reaches from its [`window`] (see
    /// [`Layout::reach`](crate::tensor::Layout::reach)), so that any tensor whose view has
    /// the same dims and strides, and an offset of the same [`window`] residue, fits it,
    /// whatever its buffer's size.
    Reach,
}

/// [`Handles`] that release what they made on drop.
pub(crate) struct Guard<'t, const N: usize> {
    table: &'t Api,
    /// Where a failed destroy is counted (a release error and a leaked handle).
    device: &'t DeviceInner,
    pub(crate) handles: Handles<N>,
}

impl<const N: usize> Drop for Guard<'_, N> {
    #[inline]
    fn drop(&mut self) {
        let device = self.device;
        let h = &mut self.handles;
        release(&h.raw, &mut h.owned, self.table, |e| {
            handle_not_destroyed(device, &e)
        });
    }
}

impl<'t, const N: usize> Guard<'t, N> {
    /// Fresh handles for a plan, which rebinds its descriptors' addresses and so never
    /// shares them. Each descriptor declares only the storage its view reaches.
    pub(crate) fn for_plan(device: &'t DeviceInner, values: &[Value<'_>; N]) -> Result<Self> {
        let table = &device.rt.api;
        Self::filled(device, values, Storage::Reach, |t| {
            Ok((create(table, t, Storage::Reach)?, true))
        })
    }

    /// The handles of one call: a whole tensor's cached descriptor (made now if it is the
    /// tensor's first use), or a fresh one for a view with another layout.
    #[inline]
    pub(crate) fn for_call(device: &'t DeviceInner, values: &[Value<'_>; N]) -> Result<Self> {
        let table = &device.rt.api;
        Self::filled(device, values, Storage::Buffer, |t| {
            if t.whole {
                let p = t.buf.cached_desc();
                Ok((if p.is_null() { cache(device, t)? } else { p }, false))
            } else {
                Ok((create(table, t, Storage::Buffer)?, true))
            }
        })
    }

    #[inline]
    fn filled(
        device: &'t DeviceInner,
        values: &[Value<'_>; N],
        storage: Storage,
        mut tensor: impl FnMut(&RawTensor<'_>) -> Result<(*mut aclTensor, bool)>,
    ) -> Result<Self> {
        let table = &device.rt.api;
        let mut g = Guard {
            table,
            device,
            handles: Handles {
                raw: [CArg::NONE; N],
                owned: [Owned::No; N],
                members: Vec::new(),
            },
        };
        let h = &mut g.handles;
        for ((slot, owned), v) in h.raw.iter_mut().zip(&mut h.owned).zip(values) {
            match &v.0 {
                Given::List(l) => {
                    // The list owns its elements: fresh descriptors, never a tensor's
                    // cached one.
                    let p = list(table, *l, &mut h.members, storage)?;
                    *slot = CArg::handle(p);
                    *owned = Owned::List;
                }
                Given::Tensor(t) => {
                    let (p, own) = tensor(t)?;
                    *slot = CArg::handle(p);
                    if own {
                        *owned = Owned::Tensor;
                    }
                }
                Given::Attr(Attr::Scalar(s)) => {
                    *slot = CArg::handle(scalar(table, *s)?);
                    *owned = Owned::Scalar;
                }
                Given::Attr(Attr::Ints(list)) => {
                    // Validated: the list fits.
                    let p = sys::create_int_array(table, list.get().unwrap_or(&[]))?;
                    *slot = CArg::handle(p);
                    *owned = Owned::Ints;
                }
                Given::Attr(Attr::Bools(list)) => {
                    // Validated: the list fits.
                    let p = sys::create_bool_array(table, list.get().unwrap_or(&[]))?;
                    *slot = CArg::handle(p);
                    *owned = Owned::Bools;
                }
                Given::Attr(a) => *slot = attr::plain(a).unwrap_or(CArg::NONE),
                // A plan's launch falls back to a call with its own values; an absent
                // optional argument is NULL; the others are resolved before a call.
                Given::Planned | Given::Pending(_) | Given::Absent | Given::DTypeOfOutput => {}
            }
        }
        Ok(g)
    }

    /// Gives the handles to a plan, which releases them (with [`PlanHandles::release`]).
    pub(crate) fn into_plan(mut self) -> PlanHandles {
        let h = &mut self.handles;
        let plan = PlanHandles {
            raw: Box::from(&h.raw[..]),
            owned: Box::from(&h.owned[..]),
            members: std::mem::take(&mut h.members).into_boxed_slice(),
        };
        // The plan releases them now.
        h.owned = [Owned::No; N];
        plan
    }
}

impl PlanHandles {
    /// Moves the handles out, leaving an empty set that releases nothing.
    pub(crate) fn take(&mut self) -> PlanHandles {
        PlanHandles {
            raw: std::mem::take(&mut self.raw),
            owned: std::mem::take(&mut self.owned),
            members: std::mem::take(&mut self.members),
        }
    }

    /// Destroys what the set made, passing each failure to `failed`.
    pub(crate) fn release(&mut self, table: &Api, failed: impl FnMut(crate::Error)) {
        release(&self.raw, &mut self.owned, table, failed);
    }

    /// How many handles the set made (for leak reports).
    pub(crate) fn made(&self) -> u64 {
        self.owned.iter().filter(|o| **o != Owned::No).count() as u64
    }
}

/// Destroys what a set made (`owned`), passing each failure to `failed`.
fn release(raw: &[CArg], owned: &mut [Owned], table: &Api, mut failed: impl FnMut(crate::Error)) {
    for (arg, owned) in raw.iter().zip(owned) {
        let p = arg.ptr;
        // SAFETY: each handle was made for this set by the function of its kind and is
        // destroyed once (`owned` is cleared); no phase 1 or 2 still to return uses it.
        let r = unsafe {
            match std::mem::replace(owned, Owned::No) {
                Owned::No => continue,
                Owned::Tensor => sys::destroy_tensor(table, p.cast::<aclTensor>()),
                Owned::Scalar => sys::destroy_scalar(table, p.cast::<aclScalar>()),
                Owned::Ints => sys::destroy_int_array(table, p.cast::<aclIntArray>()),
                Owned::Bools => sys::destroy_bool_array(table, p.cast::<aclBoolArray>()),
                Owned::List => sys::destroy_tensor_list(table, p.cast::<aclTensorList>()),
            }
        };
        if let Err(e) = r {
            failed(e);
        }
    }
}

/// The elements' fresh descriptors (appended to `members`) and the `aclTensorList` that
/// owns them. On an error, what was made is destroyed here.
fn list(
    table: &Api,
    list: &dyn TensorList,
    members: &mut Vec<*mut aclTensor>,
    storage: Storage,
) -> Result<*mut aclTensorList> {
    let from = members.len();
    let made = (0..list.len()).try_for_each(|k| {
        members.push(create(table, &list.element(k), storage)?);
        Ok(())
    });
    let ptrs: Vec<*const aclTensor> = members[from..].iter().map(|&p| p.cast_const()).collect();
    // SAFETY: live descriptors made above, owned by the list from now on.
    let created = made.and_then(|()| unsafe { sys::create_tensor_list(table, &ptrs) });
    if created.is_err() {
        for p in members.drain(from..) {
            // SAFETY: made above, owned by no list, destroyed once.
            let _ = unsafe { sys::destroy_tensor(table, p) };
        }
    }
    created
}

/// `aclCreateScalar` of a scalar, in the dtype of its Rust type.
fn scalar(table: &Api, s: Scalar) -> Result<*mut aclScalar> {
    /// One value of any of the scalar types, at an address aligned for each.
    #[repr(C)]
    union Raw {
        f64: f64,
        f32: f32,
        i64: i64,
        bool: u8,
    }
    let (mut raw, dtype) = match s {
        Scalar::F64(v) => (Raw { f64: v }, ascend_sys::ACL_DOUBLE),
        Scalar::F32(v) => (Raw { f32: v }, ascend_sys::ACL_FLOAT),
        Scalar::I64(v) => (Raw { i64: v }, ascend_sys::ACL_INT64),
        Scalar::Bool(v) => (Raw { bool: u8::from(v) }, ascend_sys::ACL_BOOL),
    };
    let p: *mut c_void = (&raw mut raw).cast();
    // SAFETY: `p` points to a live, aligned value of the dtype's size (BOOL: one byte, 0
    // or 1), read and copied by the call.
    unsafe { sys::create_scalar(table, p, dtype) }
}

/// A fresh descriptor of a view over its whole buffer, owned by the caller (the raw escape
/// hatch's).
pub(crate) fn view_descriptor(table: &FnTable, t: &RawTensor<'_>) -> Result<*mut aclTensor> {
    create(table, t, Storage::Buffer)
}

/// Makes and installs the cached descriptor of a whole tensor (first use).
#[cold]
#[inline(never)]
fn cache(device: &DeviceInner, t: &RawTensor<'_>) -> Result<*mut aclTensor> {
    let table = &device.rt.api;
    let new = create(table, t, Storage::Buffer)?;
    let (p, installed) = t.buf.install_desc(new);
    if !installed {
        // Another thread installed one first; ours was never used.
        // SAFETY: made above by aclCreateTensor, destroyed once.
        if let Err(e) = unsafe { sys::destroy_tensor(table, new) } {
            handle_not_destroyed(device, &e);
        }
    }
    Ok(p)
}

/// A handle whose destroy failed stays alive in CANN: a release error and a leaked handle
/// of the device (`Device::leaks`), as a failed free is.
#[cold]
pub(crate) fn handle_not_destroyed(device: &DeviceInner, error: &crate::Error) {
    device.note_release_error(error);
    device.note_leak("operator handle", 0, 0, 1);
}

/// The descriptor of one argument: view dims/strides/offset in elements, a 1-D storage
/// shape, format ND, the base address of the buffer.
fn create(table: &FnTable, t: &RawTensor<'_>, storage: Storage) -> Result<*mut aclTensor> {
    let n = t.layout.dims.ndim();
    let mut dims = [0i64; MAX_DIMS];
    for (d, v) in dims.iter_mut().zip(t.layout.dims.iter()) {
        // Dims of a checked view fit in i64 (they bound a real allocation or are 0-strided).
        *d = i64::try_from(*v).unwrap_or(i64::MAX);
    }
    let (offset, len, data) = match storage {
        Storage::Buffer => (t.layout.offset, t.buf.len, t.buf.ptr),
        Storage::Reach => {
            let (residue, base) = window(t);
            let shift = usize::try_from(t.layout.offset - residue).unwrap_or(0);
            (residue, t.layout.reach().saturating_sub(shift), base)
        }
    };
    let storage = [i64::try_from(len).unwrap_or(i64::MAX)];
    // SAFETY: `data` lies in the live device allocation `t.buf.ptr` of `t.buf.len`
    // elements (at the start, or `offset - residue <= offset` elements into it), and the
    // view, `offset` elements from `data`, stays inside its first `len` (checked when it
    // was built).
    unsafe {
        sys::create_tensor(
            table,
            &dims[..n],
            t.layout.strides(),
            offset,
            t.dtype.acl(),
            &storage,
            data,
        )
    }
}

/// The alignment CANN requires of an address rebound on a reusable executor
/// (`aclSetInputTensorAddr`: "must be 32-byte aligned").
const ADDR_ALIGN: usize = 32;

/// Where a reusable executor's descriptor of `t` starts, so that a tensor at another
/// offset can take it by a rebind alone: the view's offset modulo the elements in
/// [`ADDR_ALIGN`] bytes (its residue, the descriptor's offset), and the address of the
/// element before which that residue starts, a multiple of [`ADDR_ALIGN`] bytes into the
/// buffer (so aligned as the buffer is). A view at any offset of the same residue fits the
/// descriptor at its own such address (a moving batch window over a resident data set).
pub(crate) fn window(t: &RawTensor<'_>) -> (i64, *mut c_void) {
    let size = t.dtype.size().max(1);
    let per_align = (ADDR_ALIGN / gcd(ADDR_ALIGN, size)) as i64;
    let residue = t.layout.offset.rem_euclid(per_align);
    let shift = usize::try_from(t.layout.offset - residue).unwrap_or(0) * size;
    (residue, t.buf.ptr.cast::<u8>().wrapping_add(shift).cast())
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 { a } else { gcd(b, a % b) }
}

#[cfg(all(test, feature = "sim"))]
mod tests {
    use super::*;
    use crate::protocol::{Attribute, BoolList, IntList};

    /// The length nnopbase records for a bool array.
    fn bool_array_len(p: *mut c_void) -> u64 {
        let mut n = u64::MAX;
        // SAFETY: a live bool array of the simulator, a valid out-pointer.
        let rc = unsafe { ascend_sim::api::aclGetBoolArraySize(p.cast(), &mut n) };
        assert_eq!(rc, 0);
        n
    }

    #[test]
    fn list_attributes_become_nnopbase_arrays_released_with_the_call() {
        let device = crate::Runtime::simulator().unwrap().device(0).unwrap();
        let values = [
            Value::attr(BoolList::from(&[true, false, true]).to_attr()),
            Value::attr(IntList::from(&[4i64, -1]).to_attr()),
            Value::attr(BoolList::from(&[] as &[bool]).to_attr()),
        ];
        let guard = Guard::for_call(&device.inner, &values).unwrap();
        let raw = guard.handles.raw;
        assert_eq!(bool_array_len(raw[0].ptr), 3);
        assert_eq!(bool_array_len(raw[2].ptr), 0);
        assert!(!raw[1].ptr.is_null());
        assert_eq!(
            guard.handles.owned,
            [Owned::Bools, Owned::Ints, Owned::Bools]
        );
        drop(guard);
        // Destroyed with the guard: the simulator no longer knows the handle.
        let mut n = 0u64;
        // SAFETY: a stale handle, which the simulator reports instead of reading.
        let rc = unsafe { ascend_sim::api::aclGetBoolArraySize(raw[0].ptr.cast(), &mut n) };
        assert_ne!(rc, 0);
    }
}
