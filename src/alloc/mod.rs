//! The per-device caching allocator behind tensors' device memory and streams'
//! workspaces.
//!
//! # Policy
//! Caching is on by default ([`Device::set_caching`](crate::Device::set_caching) turns it
//! off for a device):
//! * A dropped tensor's block goes to the device's cache at once, never waiting on the
//!   host. It keeps its use records ([`Uses`]): the queued work that may still touch it.
//! * A request is rounded to its size class (512-byte steps up to 1 MiB, then 2 MiB
//!   steps, as PyTorch's caching allocator rounds) and takes the smallest cached block
//!   of its pool that fits, together with the block's use records. The normal ordering
//!   then applies: work on the stream that used the block last runs after the old work
//!   anyway; another stream waits for it on the device (an event); a host access (a
//!   synchronous copy, memset or read) waits for it on the host.
//! * **Splitting.** A larger cached block serves a smaller request: the front piece is
//!   handed out and the rest stays cached. Both pieces carry the block's use records, so
//!   each waits for the old work on its range. Blocks up to 1 MiB and larger ones form
//!   two pools (as in PyTorch), so small requests never fragment large blocks.
//! * **Same stream first.** A block whose queued work is all on the taker's stream (the
//!   stream whose work touches the new memory first) serves it at once, with or without a
//!   descriptor: that stream runs the old work first. Another stream or the host takes a
//!   block with queued work only when it has no descriptor, and waits for the old work
//!   (an event on the device, or on the host); memory the caller cannot order (a
//!   stream's workspace) is only taken idle. A block whose work may never be proved
//!   finished (its stream was dropped after a failed drain) is never handed out: it stays
//!   until [`Cache::empty`] leaks it, counted.
//! * **Merging.** A block that returns to the cache merges with the free pieces beside it
//!   in the same `aclrtMalloc` allocation (a *segment*) when the merged block's queued
//!   work is on one stream at most; the merged block waits for the work of both. A
//!   segment is freed with `aclrtFree` only when it is whole again, as one free piece
//!   that no queued work uses: no piece of it is held by a tensor, and every piece's work
//!   is known to have finished.
//! * **Descriptors.** A dropped tensor's block keeps the tensor's `aclTensor` descriptor.
//!   A tensor of the same dtype and dims (the same descriptor: same address, contiguous
//!   strides, storage length) takes the descriptor with the block. This saves an
//!   `aclCreateTensor` and an `aclDestroyTensor` per allocate-launch-drop step. A block
//!   whose descriptor's work is pending stays apart from its neighbours (for the next
//!   tensor of its layout); any other taker takes the descriptor off: destroyed when its
//!   work has finished, parked ([`Parked`]) until then.
//! * **Coalescing.** When no free piece fits a request, adjacent free pieces that may
//!   merge (the rule above; their work is known finished after a synchronisation or an
//!   event wait) do so, their descriptors taken off, before the device is asked for
//!   memory: reserved memory reaches a steady state when shapes vary.
//!   [`MemoryStats`] reports the free pieces (fragmentation).
//! * When `aclrtMalloc` fails, the cache is emptied ([`Cache::empty`]) and the allocation
//!   retried once; a second failure is the typed error.
//! * Emptying waits for each cached block's work, then frees the segments that are whole;
//!   a block whose work cannot be proved finished (a failed synchronisation) is leaked
//!   and counted in [`Device::leaks`](crate::Device::leaks) with the rest of its segment,
//!   as every other release (the invariants of `uses.rs`).
//! * Other resources that queued work may still use (a plan's executor and descriptors)
//!   are parked here when dropped ([`Parked`]) and released once that work has finished:
//!   on a later allocation that finds them idle (one per allocation), after a
//!   [`Stream::synchronize`](crate::Stream::synchronize) (all that are idle), or when the
//!   cache is emptied ([`Device::empty_cache`](crate::Device::empty_cache), and when the
//!   device is dropped).
//!
//! A stream's pinned staging buffer (host-array transfers, `transfer/`) is not in this
//! cache: it belongs to the stream, only grows, and is freed when the stream is dropped
//! (after its drain). A staged upload returns without waiting for its own copy; a second
//! staged upload on the same stream waits for the first copy before it writes the buffer
//! again.
//!
//! With caching off, a block is released when it is dropped, after waiting for its work,
//! unless a piece of its segment is still held.

mod empty;
mod free;

use crate::device::DeviceInner;
use crate::element::DType;
use crate::error::Result;
use crate::shape::Dims;
use crate::sync::{Mutex, MutexGuard, PoisonError};
use crate::sys;
use crate::uses::Uses;
use ascend_sys::aclTensor;
use free::{Segment, State};
use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, Ordering};

/// Device memory statistics of one device's caching allocator
/// ([`Device::memory_stats`](crate::Device::memory_stats)). Plain data: `Send + Sync`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MemoryStats {
    /// Bytes of blocks held by live tensors and stream workspaces (size-class bytes).
    pub allocated: u64,
    /// Bytes obtained from `aclrtMalloc` and neither freed nor leaked: `allocated` plus
    /// the cache.
    pub reserved: u64,
    /// The highest `allocated` so far.
    pub peak: u64,
    /// `aclrtMalloc` calls made by the allocator.
    pub device_allocations: u64,
    /// `aclrtFree` calls made by the allocator (whole segments).
    pub device_frees: u64,
    /// Allocations served from the cache.
    pub cache_hits: u64,
    /// Cached blocks split to serve a smaller request.
    pub splits: u64,
    /// Bytes of the cache's free pieces (`reserved - allocated`, until a leak).
    pub free_bytes: u64,
    /// Free pieces in the cache: many small ones for few bytes is fragmentation.
    pub free_pieces: u64,
    /// The largest free piece: the largest request served without `aclrtMalloc`.
    pub largest_free: u64,
}

/// What a tensor's cached descriptor describes besides its address: its dtype and dims
/// (contiguous strides, offset 0, storage of `dims.numel()` elements, format ND).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct DescKey {
    pub(crate) dtype: DType,
    pub(crate) dims: Dims,
}

/// What a tensor asks of the cache besides a size: the descriptor it would make, and the
/// stream whose queued work will touch the new memory first, if any (a host access
/// first: none).
#[derive(Clone, Copy)]
pub(crate) struct Want<'a> {
    pub(crate) key: &'a DescKey,
    pub(crate) stream: Option<u64>,
}

/// A block handed out or given back: a piece of a segment, with the work that may still
/// use it.
pub(crate) struct Block {
    pub(crate) ptr: *mut c_void,
    pub(crate) bytes: usize,
    pub(crate) uses: Uses,
    /// A tensor's descriptor of this address (null: none): handed to the next tensor
    /// with the same `key`, otherwise destroyed once `uses` is idle.
    pub(crate) desc: *mut aclTensor,
    /// What `desc` describes (meaningless when it is null).
    pub(crate) key: DescKey,
    /// Whether the block belongs to the large pool (a piece of a segment above
    /// `SMALL_LIMIT`).
    large: bool,
}

// SAFETY: `ptr` is device memory and `desc` an immutable CANN descriptor, neither
// dereferenced by the host; both are only handed to CANN calls under the cache's lock or
// by their single owner.
unsafe impl Send for Block {}

impl Block {
    fn end(&self) -> usize {
        self.ptr.addr() + self.bytes
    }

    /// Joins the adjacent free piece `other` (no descriptor) to this one (no descriptor):
    /// the joined block waits for the work of both.
    fn absorb(&mut self, other: Block) {
        self.uses.absorb(&other.uses);
        if other.ptr.addr() < self.ptr.addr() {
            self.ptr = other.ptr;
        }
        self.bytes += other.bytes;
    }

    /// A block given back by a tensor, with its use records and its descriptor (`desc`,
    /// of `key`; null for none).
    pub(crate) fn returned(
        ptr: *mut c_void,
        bytes: usize,
        uses: Uses,
        desc: *mut aclTensor,
        key: DescKey,
    ) -> Block {
        Block {
            ptr,
            bytes,
            uses,
            desc,
            key,
            // Set from its segment when it returns to the cache.
            large: false,
        }
    }

    /// Destroys the descriptor, whose work has finished; the device's context is current.
    fn destroy_desc(&mut self, device: &DeviceInner) {
        if self.desc.is_null() {
            return;
        }
        // SAFETY: a tensor's descriptor, destroyed once (unhooked below); the queued work
        // that used it has finished (the callers' check; finished work stays finished).
        if let Err(e) = unsafe { sys::destroy_tensor(device.table(), self.desc) } {
            device.note_release_error(&e);
        }
        self.desc = std::ptr::null_mut();
    }
}

impl DescKey {
    /// The key of a block without a descriptor.
    pub(crate) fn none() -> DescKey {
        DescKey {
            dtype: DType::F32,
            dims: Dims::default(),
        }
    }
}

/// A resource dropped while queued work may still use it, released by the cache once
/// that work has finished.
pub(crate) trait Parked: Send {
    /// The work that may still use it.
    fn uses(&self) -> &Uses;
    /// Releases it; its work has finished and the device's context is current.
    fn release(self: Box<Self>, device: &DeviceInner);
    /// Leaks it, counted: its work could not be proved finished.
    fn leak(self: Box<Self>, device: &DeviceInner);
}

/// Releases a parked resource whose work has finished (from [`Cache::take`], whose caller
/// made the context current).
#[inline]
fn release_parked(device: &DeviceInner, item: Option<Box<dyn Parked>>) {
    if let Some(item) = item {
        item.release(device);
    }
}

/// Whether the device's context is current on this thread, bound on first need.
struct Bound(Option<bool>);

impl Bound {
    fn ok(&mut self, device: &DeviceInner) -> bool {
        *self.0.get_or_insert_with(|| device.bind().is_ok())
    }
}

/// One device's cache of blocks. `Send + Sync` (a mutex guards it).
pub(crate) struct Cache {
    state: Mutex<State>,
    enabled: AtomicBool,
}

/// Requests above this many bytes use the large pool.
const SMALL_LIMIT: usize = 1 << 20;
/// The smallest block, and the size-class step of the small pool.
const MIN_BLOCK: usize = 512;

/// The size class of a request of `bytes`.
pub(crate) fn size_class(bytes: usize) -> usize {
    const LARGE: usize = 2 << 20;
    let unit = if bytes <= SMALL_LIMIT {
        MIN_BLOCK
    } else {
        LARGE
    };
    bytes.div_ceil(unit).saturating_mul(unit).max(MIN_BLOCK)
}

fn is_large(bytes: usize) -> bool {
    bytes > SMALL_LIMIT
}

impl Cache {
    pub(crate) fn new() -> Cache {
        Cache {
            state: Mutex::new(State {
                segments: Vec::new(),
                free: Vec::new(),
                parked: Vec::new(),
                stats: MemoryStats::default(),
            }),
            enabled: AtomicBool::new(true),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn stats(&self) -> MemoryStats {
        self.lock().stats()
    }

    /// A block of at least `bytes` (a size class): a cached one (or a piece of one) with
    /// its use records, or a new allocation. `idle_only`: only a cached block that no
    /// queued work uses (for memory the caller cannot order, a stream's workspace).
    /// `want`: the descriptor the caller's tensor would make and its first stream; a
    /// cached block whose descriptor is the same comes with it (`desc`), any other
    /// descriptor is taken off. Such a block may still have queued work on `want.stream`
    /// (only there). The device's context must be current.
    #[inline]
    pub(crate) fn take(
        &self,
        device: &DeviceInner,
        bytes: usize,
        idle_only: bool,
        want: Option<Want<'_>>,
    ) -> Result<Block> {
        match self.take_cached(device, bytes, idle_only, want, false) {
            Some(block) => Ok(block),
            None => self.take_new(device, bytes, idle_only, want),
        }
    }

    /// A block for a request no free piece fits: one of merged free pieces, or a new
    /// allocation of `bytes` (see [`take`](Self::take)).
    #[cold]
    #[inline(never)]
    fn take_new(
        &self,
        device: &DeviceInner,
        bytes: usize,
        idle_only: bool,
        want: Option<Want<'_>>,
    ) -> Result<Block> {
        if let Some(block) = self.take_cached(device, bytes, idle_only, want, true) {
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
        s.count_allocated(bytes);
        s.segments.push(Segment {
            base: ptr,
            bytes,
            out: 1,
            leaked: false,
        });
        Ok(Block {
            ptr,
            bytes,
            uses: Uses::new(),
            desc: std::ptr::null_mut(),
            key: DescKey::none(),
            large: is_large(bytes),
        })
    }

    /// The cached block [`take`](Self::take) hands out, if one fits (after merging the
    /// free pieces that may merge, when `coalesce`). Also releases a parked resource
    /// whose work has finished: one per allocation, so the steady state stays cheap and
    /// every idle one goes soon.
    #[inline]
    fn take_cached(
        &self,
        device: &DeviceInner,
        bytes: usize,
        idle_only: bool,
        want: Option<Want<'_>>,
        coalesce: bool,
    ) -> Option<Block> {
        let mut s = self.lock();
        if coalesce && s.coalesce(device) == 0 {
            return None;
        }
        let parked = s
            .parked
            .iter()
            .position(|p| p.uses().is_idle())
            .map(|i| s.parked.swap_remove(i));
        let Some(fit) = s.best_fit(bytes, is_large(bytes), idle_only, want) else {
            drop(s);
            release_parked(device, parked);
            return None;
        };
        let mut block = s.free.swap_remove(fit.index);
        if !fit.same {
            // The context is current (the caller's contract).
            let idle = block.uses.is_idle();
            let state = &mut *s;
            block.retire_desc(device, idle, &mut Bound(Some(true)), &mut state.parked);
        }
        if block.bytes - bytes >= MIN_BLOCK {
            let rest = Block {
                ptr: block.ptr.wrapping_byte_add(bytes),
                bytes: block.bytes - bytes,
                uses: block.uses.duplicate(),
                desc: std::ptr::null_mut(),
                key: DescKey::none(),
                large: block.large,
            };
            block.bytes = bytes;
            s.free.push(rest);
            s.stats.splits += 1;
        }
        s.stats.cache_hits += 1;
        s.count_allocated(block.bytes);
        if let Some(seg) = s.segment(block.ptr.addr()) {
            seg.out += 1;
        }
        drop(s);
        release_parked(device, parked);
        Some(block)
    }

    /// Turns caching on or off; off empties the cache.
    pub(crate) fn set_enabled(&self, device: &DeviceInner, on: bool) {
        self.enabled.store(on, Ordering::Relaxed);
        if !on {
            let _ = self.empty(device);
        }
    }

    /// Returns a block to the cache without waiting (caching on), or releases its segment
    /// after its work when the segment is whole (off). Its descriptor stays with it, for
    /// the next tensor of the same layout, unless the block merges with a neighbour.
    pub(crate) fn give_back(&self, device: &DeviceInner, mut block: Block) {
        let addr = block.ptr.addr();
        let mut s = self.lock();
        s.stats.allocated -= block.bytes as u64;
        if let Some(seg) = s.segment(addr) {
            seg.out -= 1;
            block.large = is_large(seg.bytes);
        }
        s.insert_free(device, block, &mut Bound(None));
        if self.enabled.load(Ordering::Relaxed) {
            return;
        }
        drop(s);
        let _ = self.empty_as(device, "tensor");
    }

    /// Keeps `item` until its queued work has finished, then releases it (see the module
    /// docs). Never waits.
    pub(crate) fn park(&self, item: Box<dyn Parked>) {
        self.lock().parked.push(item);
    }

    /// Releases every parked resource whose work has finished, without waiting (after a
    /// stream's synchronisation). One lock when nothing is parked.
    pub(crate) fn collect_parked(&self, device: &DeviceInner) {
        loop {
            let item = {
                let mut s = self.lock();
                match s.parked.iter().position(|p| p.uses().is_idle()) {
                    Some(i) => s.parked.swap_remove(i),
                    None => return,
                }
            };
            if device.bind().is_ok() {
                item.release(device);
            } else {
                // Not released here: the next allocation or emptying tries again.
                self.park(item);
                return;
            }
        }
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
