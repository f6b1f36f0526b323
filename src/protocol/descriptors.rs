//! The `aclTensor` descriptors of an operator's arguments.

use crate::error::Result;
use crate::shape::MAX_DIMS;
use crate::sys;
use crate::tensor::RawTensor;
use ascend_sys::{FnTable, aclTensor};

/// The `aclTensor` descriptors of one call or plan; the ones it made are destroyed on
/// drop (and on every error path while it is being filled).
pub(crate) struct Descriptors<'t, const N: usize> {
    table: &'t FnTable,
    pub(crate) raw: [*mut aclTensor; N],
    /// Made here (destroyed on drop), as opposed to cached on a tensor.
    owned: [bool; N],
}

/// What storage a descriptor declares.
#[derive(Clone, Copy)]
enum Storage {
    /// The whole buffer: `[len]`.
    Buffer,
    /// Just what the view reaches (see [`Layout::reach`](crate::tensor::Layout::reach)), so
    /// that any tensor whose view has the same layout fits it, whatever its buffer's size.
    Reach,
}

impl<'t, const N: usize> Descriptors<'t, N> {
    /// Fresh descriptors for a plan, which rebinds their addresses and so never shares
    /// them. Each declares only the storage its view reaches.
    pub(crate) fn for_plan(table: &'t FnTable, tensors: &[RawTensor<'_>; N]) -> Result<Self> {
        Self::filled(table, tensors, |t| {
            Ok((create(table, t, Storage::Reach)?, true))
        })
    }

    /// The descriptors of one call: a whole tensor's cached descriptor (made now if it is
    /// the tensor's first use), or a fresh one for a view with another layout.
    #[inline]
    pub(crate) fn for_call(table: &'t FnTable, tensors: &[RawTensor<'_>; N]) -> Result<Self> {
        Self::filled(table, tensors, |t| {
            if t.whole {
                let p = t.buf.cached_desc();
                Ok((if p.is_null() { cache(table, t)? } else { p }, false))
            } else {
                Ok((create(table, t, Storage::Buffer)?, true))
            }
        })
    }

    /// One descriptor per argument from `make` (the descriptor, and whether this set owns
    /// it). On an error the ones made so far are released by the drop of the partly
    /// filled set.
    #[inline]
    fn filled(
        table: &'t FnTable,
        tensors: &[RawTensor<'_>; N],
        mut make: impl FnMut(&RawTensor<'_>) -> Result<(*mut aclTensor, bool)>,
    ) -> Result<Self> {
        let mut d = Descriptors {
            table,
            raw: [std::ptr::null_mut(); N],
            owned: [false; N],
        };
        for ((slot, owned), t) in d.raw.iter_mut().zip(&mut d.owned).zip(tensors) {
            (*slot, *owned) = make(t)?;
        }
        Ok(d)
    }

    /// Gives up ownership of the descriptors (the caller destroys them). Only for
    /// descriptors made by [`Descriptors::for_plan`].
    pub(crate) fn into_raw(self) -> [*mut aclTensor; N] {
        debug_assert!(self.owned.iter().all(|o| *o));
        let raw = self.raw;
        std::mem::forget(self);
        raw
    }
}

impl<const N: usize> Drop for Descriptors<'_, N> {
    #[inline]
    fn drop(&mut self) {
        for (p, owned) in self.raw.into_iter().zip(self.owned) {
            if owned {
                // SAFETY: made by aclCreateTensor for this set and destroyed once (cached
                // descriptors are not owned here).
                let _ = unsafe { sys::destroy_tensor(self.table, p) };
            }
        }
    }
}

/// Makes and installs the cached descriptor of a whole tensor (first use).
#[cold]
#[inline(never)]
fn cache(table: &FnTable, t: &RawTensor<'_>) -> Result<*mut aclTensor> {
    let new = create(table, t, Storage::Buffer)?;
    let (p, installed) = t.buf.install_desc(new);
    if !installed {
        // Another thread installed one first; ours was never used.
        // SAFETY: made above by aclCreateTensor, destroyed once.
        let _ = unsafe { sys::destroy_tensor(table, new) };
    }
    Ok(p)
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
    let len = match storage {
        Storage::Buffer => t.buf.len,
        Storage::Reach => t.layout.reach(),
    };
    let storage = [i64::try_from(len).unwrap_or(i64::MAX)];
    // SAFETY: `t.buf.ptr` is a live device allocation of `t.buf.len >= len` elements, and
    // the view stays inside its first `len` (checked when it was built).
    unsafe {
        sys::create_tensor(
            table,
            &dims[..n],
            t.layout.strides(),
            t.layout.offset,
            t.dtype.acl(),
            &storage,
            t.buf.ptr,
        )
    }
}
