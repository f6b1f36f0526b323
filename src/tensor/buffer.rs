//! [`Buffer`]: the device memory of a tensor, its use records and its cached descriptor,
//! and its stream-ordered release to the caching allocator.

use crate::alloc::{DescKey, Want};
use crate::device::DeviceInner;
use crate::element::DType;
use crate::error::{Error, Result};
use crate::shape::Dims;
use crate::stream::Stream;
use crate::uses::Uses;
use ascend_sys::aclTensor;
use std::ffi::c_void;
use std::sync::Arc;
use std::sync::atomic::{AtomicPtr, Ordering};

/// Device memory of one tensor, with the streams whose queued work uses it.
pub(crate) struct Buffer {
    pub(crate) device: Arc<DeviceInner>,
    pub(crate) ptr: *mut c_void,
    /// Capacity in elements of the tensor's dtype (the storage shape given to aclnn).
    pub(crate) len: usize,
    /// Size of the allocation in bytes.
    pub(super) bytes: usize,
    pub(crate) uses: Uses,
    /// The `aclTensor` descriptor of the owning [`DeviceTensor`]'s full layout (its dims,
    /// contiguous strides, offset 0, storage `[len]`, its dtype, format ND, `ptr`), made on
    /// the first operator call that passes the whole tensor and destroyed when the tensor
    /// is dropped, after the queued work that used it has finished. Null until then.
    ///
    /// Race-free: the first callers may each create one, exactly one wins the
    /// compare-exchange and the others destroy theirs. Afterwards the descriptor is only
    /// *read*: it is passed to phase-1 calls (possibly from several threads at once, as an
    /// input of some calls and the output of another) and never given to
    /// `aclSetInputTensorAddr` / `aclSetOutputTensorAddr` (plans own their descriptors).
    /// An `aclTensor` is immutable metadata for aclnn; the simulator serialises phase 1
    /// and copies the descriptor into the executor, and it allows one descriptor in any
    /// number of executors.
    pub(crate) desc: AtomicPtr<aclTensor>,
    /// The dtype and dims of the owning tensor's layout, which `desc` describes: the cache
    /// hands `desc` to the next tensor of the same key instead of destroying it.
    pub(crate) key: DescKey,
}

// SAFETY: `ptr` is device memory, never dereferenced by the host; it is only passed to
// CANN calls made with the device's context bound. Use tracking is behind a mutex.
unsafe impl Send for Buffer {}
// SAFETY: as above; `&Buffer` gives out the address only to stream-ordered calls.
unsafe impl Sync for Buffer {}

/// Smallest allocation, so that empty tensors still have a valid, aligned address.
const MIN_BYTES: usize = 32;

impl Buffer {
    /// The memory of a contiguous tensor of `dims` and `dtype`, from the device's cache
    /// (with the descriptor of a dropped tensor of the same layout, when its block is the
    /// one taken). `first_use`: the stream whose queued work touches the memory first
    /// (none: a host access does), on which a block with queued work may be taken at once.
    #[inline]
    pub(crate) fn alloc(
        device: &Arc<DeviceInner>,
        dims: Dims,
        dtype: DType,
        first_use: Option<&Stream>,
    ) -> Result<Buffer> {
        let len = dims.numel();
        let bytes = len
            .checked_mul(dtype.size())
            .ok_or_else(|| Error::InvalidArgument(format!("{len} elements overflow usize")))?
            .max(MIN_BYTES);
        device.bind()?;
        let key = DescKey { dtype, dims };
        let want = Want {
            key: &key,
            stream: first_use.map(|s| s.inner.clock.uid),
        };
        let size = crate::alloc::size_class(bytes);
        let block = device.cache.take(device, size, false, Some(want))?;
        // Every constructor writes the new tensor before anything reads it, ordered after
        // the block's old uses; what the old tensor's work wrote, or failed to, is not the
        // new tensor's.
        block.uses.new_owner();
        Ok(Buffer {
            device: Arc::clone(device),
            ptr: block.ptr,
            len,
            bytes: block.bytes,
            uses: block.uses,
            desc: AtomicPtr::new(block.desc),
            key,
        })
    }

    /// Size of the allocation in bytes.
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }

    /// The cached descriptor of the whole tensor, if one was made.
    #[inline]
    pub(crate) fn cached_desc(&self) -> *mut aclTensor {
        self.desc.load(Ordering::Acquire)
    }

    /// Installs `new` as the cached descriptor unless another thread was first; returns the
    /// descriptor to use and whether `new` was installed (otherwise the caller destroys it).
    #[cold]
    pub(crate) fn install_desc(&self, new: *mut aclTensor) -> (*mut aclTensor, bool) {
        match self.desc.compare_exchange(
            std::ptr::null_mut(),
            new,
            Ordering::AcqRel,
            Ordering::Acquire,
        ) {
            Ok(_) => (new, true),
            Err(winner) => (winner, false),
        }
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        // With caching on, a stream-ordered release without waiting: the block keeps its
        // use records, which order every later user after the queued work (`alloc/`).
        let block = crate::alloc::Block::returned(
            self.ptr,
            self.bytes,
            std::mem::replace(&mut self.uses, Uses::new()),
            *self.desc.get_mut(),
            self.key,
        );
        self.device.cache.give_back(&self.device, block);
    }
}
