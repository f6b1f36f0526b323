//! [`Pinned`]: one page-locked host allocation (`aclrtMallocHost`) and its release, the
//! only owner of pinned memory in the crate (host tensors and the streams' staging
//! buffers hold one each).

use crate::device::DeviceInner;
use crate::error::{Error, Result};
use crate::sys;
use std::ffi::c_void;
use std::sync::Arc;

/// Smallest allocation: `aclrtMallocHost` refuses 0 bytes, and an empty tensor still needs
/// an aligned address.
const MIN_BYTES: usize = 64;

/// One `aclrtMallocHost` allocation of a device's context.
///
/// Dropping it frees the memory, so its owner must drop it only once no queued copy reads
/// or writes it (a host tensor waits for its recorded uses, a stream for the ticket of its
/// staging buffer's last copy), or [`forget`](Self::forget) it when that cannot be proved.
pub(crate) struct Pinned {
    device: Arc<DeviceInner>,
    /// Null once forgotten.
    ptr: *mut c_void,
    bytes: usize,
}

// SAFETY: `ptr` is host memory owned by this value; the host reads or writes it only
// through its owners, which order that against the queued copies that use it (and need
// `&mut` of the owner, or the stream's lock, to write it).
unsafe impl Send for Pinned {}
// SAFETY: as above; `&Pinned` only gives out the address.
unsafe impl Sync for Pinned {}

impl Pinned {
    /// At least `bytes` bytes (and at least [`MIN_BYTES`]) of pinned memory, allocated in
    /// `device`'s context. `aclrtMallocHost` does not promise zeroed memory.
    ///
    /// # Errors
    /// [`Error::Acl`] from binding the context or from `aclrtMallocHost` (e.g. out of
    /// memory).
    pub(crate) fn alloc(device: &Arc<DeviceInner>, bytes: usize) -> Result<Pinned> {
        let bytes = bytes.max(MIN_BYTES);
        device.bind()?;
        let ptr = sys::malloc_host(device.table(), bytes)?;
        Ok(Pinned {
            device: Arc::clone(device),
            ptr,
            bytes,
        })
    }

    /// The size of `count` elements of `size` bytes, checked.
    pub(crate) fn bytes_of(count: usize, size: usize) -> Result<usize> {
        count
            .checked_mul(size)
            .ok_or_else(|| Error::InvalidArgument(format!("{count} elements overflow usize")))
    }

    /// The start of the memory (page-aligned).
    #[inline]
    pub(crate) fn ptr(&self) -> *mut c_void {
        self.ptr
    }

    /// The size of the allocation in bytes.
    #[inline]
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }

    /// The device whose context allocated the memory.
    #[inline]
    pub(crate) fn device(&self) -> &Arc<DeviceInner> {
        &self.device
    }

    /// Gives the memory up without freeing it, because queued copies may still use it; the
    /// caller counts the leak.
    pub(crate) fn forget(&mut self) {
        self.ptr = std::ptr::null_mut();
    }
}

impl Drop for Pinned {
    fn drop(&mut self) {
        if self.ptr.is_null() {
            return;
        }
        if self.device.bind().is_err() {
            self.device
                .note_leak("pinned memory", 1, self.bytes as u64, 0);
            return;
        }
        // SAFETY: `ptr` came from aclrtMallocHost in this device's context (bound above);
        // the owner drops this only once no queued copy uses it (see the type's docs), and
        // it is freed once.
        if let Err(e) = unsafe { sys::free_host(self.device.table(), self.ptr) } {
            self.device.note_release_error(&e);
            self.device
                .note_leak("pinned memory", 1, self.bytes as u64, 0);
        }
    }
}
