//! The per-device caching allocator behind every tensor's device memory.
//!
//! # Policy
//! Caching is off by default ([`Device::set_caching`](crate::Device::set_caching)): a
//! dropped tensor's memory is then freed after its queued work, as `aclrtFree` requires.
//! With caching on:
//! * A dropped tensor's block goes to the device's cache at once, never waiting on the
//!   host. It keeps its use records ([`Uses`]): the queued work that may still touch it.
//! * A new tensor takes the smallest cached block of its size class that fits (sizes are
//!   rounded up to 512 bytes, blocks of more than 1 MiB to 2 MiB, as PyTorch's caching
//!   allocator does), together with the block's use records. The normal ordering then
//!   applies: work on the stream that used the block last runs after the old work anyway;
//!   another stream waits for it on the device (an event); a host access (a synchronous
//!   copy, memset or read) waits for it on the host.
//! * A block with the old tensor's `aclTensor` descriptor still pending is handed out only
//!   once its queued work has finished (the descriptor is destroyed then).
//! * When `aclrtMalloc` fails, the cache is emptied ([`Cache::empty`]) and the allocation
//!   retried once; a second failure is the typed error.
//! * Emptying waits for each cached block's work; a block whose work cannot be proved
//!   finished (a failed synchronisation) is leaked and counted in
//!   [`Device::leaks`](crate::Device::leaks), as every other release (the invariants of
//!   `uses.rs`).
//!
//! Blocks are not split: a cached block serves requests of its own size class only, which
//! keeps every block a whole `aclrtMalloc` allocation (freed as one).

use crate::device::DeviceInner;
use crate::error::Result;
use crate::sync::{Mutex, MutexGuard, PoisonError};
use crate::sys;
use crate::uses::Uses;
use ascend_sys::aclTensor;
use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, Ordering};

/// Device memory statistics of one device's caching allocator
/// ([`Device::memory_stats`](crate::Device::memory_stats)). Plain data: `Send + Sync`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MemoryStats {
    /// Bytes of blocks held by live tensors (size-class bytes).
    pub allocated: u64,
    /// Bytes obtained from `aclrtMalloc` and not yet freed: `allocated` plus the cache.
    pub reserved: u64,
    /// The highest `allocated` so far.
    pub peak: u64,
    /// `aclrtMalloc` calls made by the allocator.
    pub device_allocations: u64,
    /// Allocations served from the cache.
    pub cache_hits: u64,
}

/// A cached block: a whole `aclrtMalloc` allocation, with the work that may still use it.
pub(crate) struct Block {
    pub(crate) ptr: *mut c_void,
    pub(crate) bytes: usize,
    pub(crate) uses: Uses,
    /// The previous tensor's descriptor, destroyed once `uses` is idle (null: none).
    pub(crate) desc: *mut aclTensor,
}

// SAFETY: `ptr` is device memory and `desc` an immutable CANN descriptor, neither
// dereferenced by the host; both are only handed to CANN calls under the cache's lock or
// by their single owner.
unsafe impl Send for Block {}

struct State {
    free: Vec<Block>,
    stats: MemoryStats,
}

/// One device's cache of blocks. `Send + Sync` (a mutex guards it).
pub(crate) struct Cache {
    state: Mutex<State>,
    /// Off: a dropped tensor's block is released at once, after waiting for its work.
    enabled: AtomicBool,
}

/// The size class of a request of `bytes`.
pub(crate) fn size_class(bytes: usize) -> usize {
    const SMALL: usize = 512;
    const LARGE: usize = 2 << 20;
    let unit = if bytes <= 1 << 20 { SMALL } else { LARGE };
    bytes.div_ceil(unit).saturating_mul(unit).max(SMALL)
}

impl Cache {
    pub(crate) fn new() -> Cache {
        Cache {
            state: Mutex::new(State {
                free: Vec::new(),
                stats: MemoryStats::default(),
            }),
            enabled: AtomicBool::new(false),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn stats(&self) -> MemoryStats {
        self.lock().stats
    }

    /// A block of at least `bytes` (a size class): a cached one with its use records, or
    /// a new allocation. The device's context must be current.
    pub(crate) fn take(&self, device: &DeviceInner, bytes: usize) -> Result<Block> {
        if let Some(block) = self.take_cached(device, bytes) {
            return Ok(block);
        }
        let t = device.table();
        let ptr = match sys::malloc(t, bytes) {
            Ok(p) => p,
            // Retrying makes sense only when the cache had memory to give back.
            Err(e) if self.empty(device) == 0 => return Err(e),
            Err(_) => sys::malloc(t, bytes)?,
        };
        let mut s = self.lock();
        s.stats.device_allocations += 1;
        s.stats.reserved += bytes as u64;
        Self::count_allocated(&mut s.stats, bytes);
        Ok(Block {
            ptr,
            bytes,
            uses: Uses::new(),
            desc: std::ptr::null_mut(),
        })
    }

    fn count_allocated(stats: &mut MemoryStats, bytes: usize) {
        stats.allocated += bytes as u64;
        stats.peak = stats.peak.max(stats.allocated);
    }

    fn take_cached(&self, device: &DeviceInner, bytes: usize) -> Option<Block> {
        let mut s = self.lock();
        let i = s
            .free
            .iter()
            .enumerate()
            .filter(|(_, b)| b.bytes == bytes && (b.desc.is_null() || b.uses.is_idle()))
            .map(|(i, _)| i)
            .next()?;
        let mut block = s.free.swap_remove(i);
        s.stats.cache_hits += 1;
        Self::count_allocated(&mut s.stats, bytes);
        drop(s);
        if !block.desc.is_null() {
            // SAFETY: the previous tensor's descriptor, destroyed once; its queued work has
            // finished (`is_idle` above, and finished work stays finished).
            if let Err(e) = unsafe { sys::destroy_tensor(device.table(), block.desc) } {
                device.note_release_error(&e);
            }
            block.desc = std::ptr::null_mut();
        }
        Some(block)
    }

    /// Turns caching on or off; off empties the cache.
    pub(crate) fn set_enabled(&self, device: &DeviceInner, on: bool) {
        self.enabled.store(on, Ordering::Relaxed);
        if !on {
            let _ = self.empty(device);
        }
    }

    /// Returns a tensor's block to the cache without waiting (caching on), or releases it
    /// after its work (off).
    pub(crate) fn give_back(&self, device: &DeviceInner, block: Block) {
        let mut s = self.lock();
        s.stats.allocated -= block.bytes as u64;
        if self.enabled.load(Ordering::Relaxed) {
            s.free.push(block);
            return;
        }
        s.stats.reserved -= block.bytes as u64;
        drop(s);
        release(device, block, "tensor");
    }

    /// Frees every cached block whose work has finished or can be waited for; a block
    /// whose work cannot be proved finished is leaked and counted. Waits on the host.
    /// Returns how many blocks left the cache.
    pub(crate) fn empty(&self, device: &DeviceInner) -> usize {
        let blocks = std::mem::take(&mut self.lock().free);
        let n = blocks.len();
        for block in blocks {
            let bytes = block.bytes as u64;
            self.lock().stats.reserved -= bytes;
            release(device, block, "cached block");
        }
        n
    }
}

/// Frees one block after its work (or leaks and counts it).
pub(crate) fn release(device: &DeviceInner, block: Block, what: &'static str) {
    let handles = u64::from(!block.desc.is_null());
    if !block.uses.wait_idle() || device.bind().is_err() {
        device.note_leak(what, 1, block.bytes as u64, handles);
        return;
    }
    let t = device.table();
    if !block.desc.is_null() {
        // SAFETY: the previous tensor's descriptor, destroyed once, its work finished.
        if let Err(e) = unsafe { sys::destroy_tensor(t, block.desc) } {
            device.note_release_error(&e);
        }
    }
    // SAFETY: a whole aclrtMalloc allocation of this device (context bound above), no
    // queued work uses it (waited above), freed exactly once (the block is consumed).
    if let Err(e) = unsafe { sys::free(t, block.ptr) } {
        device.note_release_error(&e);
        device.note_leak(what, 1, block.bytes as u64, 0);
    }
}

#[cfg(test)]
mod tests {
    use super::size_class;

    #[test]
    fn size_classes_round_up() {
        assert_eq!(size_class(1), 512);
        assert_eq!(size_class(512), 512);
        assert_eq!(size_class(513), 1024);
        assert_eq!(size_class(1 << 20), 1 << 20);
        assert_eq!(size_class((1 << 20) + 1), 2 << 20);
        assert_eq!(size_class((4 << 20) + 1), 6 << 20);
    }
}
