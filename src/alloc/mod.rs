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
//! * **Merging.** A block that returns to the cache merges with the free pieces beside it
//!   in the same `aclrtMalloc` allocation (a *segment*); the merged block waits for the
//!   work of both. A segment is freed with `aclrtFree` only when it is whole again: no
//!   piece of it is held by a tensor.
//! * **Descriptors.** A dropped tensor's block keeps the tensor's `aclTensor` descriptor.
//!   A tensor of the same dtype and dims (the same descriptor: same address, contiguous
//!   strides, storage length) takes the descriptor with the block. This saves an
//!   `aclCreateTensor` and an `aclDestroyTensor` per allocate-launch-drop step. A new
//!   operator output on the stream whose work is still queued on the block takes it at
//!   once (that work runs first, and it stays in the block's use records), so a loop that
//!   queues several such steps keeps reusing one block; any other taker of a block whose
//!   descriptor's work is queued waits for a later allocation. Any other taker, a merge
//!   with a free neighbour, and emptying destroy the descriptor, so they take, split or
//!   merge the block only once its work has finished. So the cache holds descriptors as well as memory until
//!   [`Cache::empty`].
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

use crate::device::DeviceInner;
use crate::element::DType;
use crate::error::Result;
use crate::shape::Dims;
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

/// One `aclrtMalloc` allocation.
struct Segment {
    base: *mut c_void,
    bytes: usize,
    /// Pieces held outside the cache (by tensors, workspaces, or an emptying thread).
    out: usize,
    /// A piece's work could not be proved finished: never freed, counted as leaked.
    leaked: bool,
}

impl Segment {
    fn contains(&self, addr: usize) -> bool {
        (self.base.addr()..self.base.addr() + self.bytes).contains(&addr)
    }
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

struct State {
    segments: Vec<Segment>,
    free: Vec<Block>,
    parked: Vec<Box<dyn Parked>>,
    stats: MemoryStats,
}

// SAFETY: the raw pointers are device addresses, never dereferenced by the host; every
// access goes through the cache's mutex.
unsafe impl Send for State {}

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

impl State {
    fn segment(&mut self, addr: usize) -> Option<&mut Segment> {
        self.segments.iter_mut().find(|s| s.contains(addr))
    }

    fn segment_of(&self, addr: usize) -> Option<&Segment> {
        self.segments.iter().find(|s| s.contains(addr))
    }

    fn count_allocated(&mut self, bytes: usize) {
        self.stats.allocated += bytes as u64;
        self.stats.peak = self.stats.peak.max(self.stats.allocated);
    }

    /// Adds a free block, merging it with the free pieces beside it in its segment. A
    /// descriptor is dropped for a merge (destroyed: the context must be current when
    /// `bound`) when its work has finished; a piece whose descriptor's work is pending
    /// stays apart.
    fn insert_free(&mut self, device: &DeviceInner, mut block: Block, bound: &mut Bound) {
        let Some((lo, hi)) = self
            .segment_of(block.ptr.addr())
            .map(|g| (g.base.addr(), g.base.addr() + g.bytes))
        else {
            self.free.push(block);
            return;
        };
        let in_segment = |b: &Block| (lo..hi).contains(&b.ptr.addr());
        loop {
            let (start, end) = (block.ptr.addr(), block.end());
            let Some(i) = self.free.iter().position(|f| {
                (f.end() == start || f.ptr.addr() == end)
                    && in_segment(f)
                    && (f.desc.is_null() || f.uses.is_idle())
            }) else {
                break;
            };
            let free_desc = block.desc.is_null() || (block.uses.is_idle() && bound.ok(device));
            if !free_desc {
                break;
            }
            let other = &mut self.free[i];
            if !other.desc.is_null() {
                if !bound.ok(device) {
                    break;
                }
                other.destroy_desc(device);
            }
            block.destroy_desc(device);
            let other = self.free.swap_remove(i);
            block.uses.absorb(&other.uses);
            if other.ptr.addr() < block.ptr.addr() {
                block.ptr = other.ptr;
            }
            block.bytes += other.bytes;
        }
        self.free.push(block);
    }

    /// Removes the segment of `addr` when it is whole in the free list, and returns it.
    fn whole_segment(&mut self, addr: usize) -> Option<Segment> {
        let i = self.segments.iter().position(|s| s.contains(addr))?;
        let seg = &self.segments[i];
        if seg.out != 0 || seg.leaked {
            return None;
        }
        let (base, bytes) = (seg.base.addr(), seg.bytes);
        let i_free = self
            .free
            .iter()
            .position(|f| f.ptr.addr() == base && f.bytes == bytes)?;
        // Its work has finished (the caller waited for it) and it has no descriptor.
        self.free.swap_remove(i_free);
        Some(self.segments.swap_remove(i))
    }
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
        self.lock().stats
    }

    /// A block of at least `bytes` (a size class): a cached one (or a piece of one) with
    /// its use records, or a new allocation. `idle_only`: only a cached block that no
    /// queued work uses (for memory the caller cannot order, a stream's workspace).
    /// `want`: the descriptor the caller's tensor would make; a cached block whose
    /// descriptor is the same comes with it (`desc`), any other descriptor is destroyed.
    /// Such a block may still have queued work on `want.stream` (only there). The device's
    /// context must be current.
    #[inline]
    pub(crate) fn take(
        &self,
        device: &DeviceInner,
        bytes: usize,
        idle_only: bool,
        want: Option<Want<'_>>,
    ) -> Result<Block> {
        match self.take_cached(device, bytes, idle_only, want) {
            Some(block) => Ok(block),
            None => self.take_new(device, bytes),
        }
    }

    /// A new allocation of `bytes` (see [`take`](Self::take)).
    #[cold]
    #[inline(never)]
    fn take_new(&self, device: &DeviceInner, bytes: usize) -> Result<Block> {
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

    /// The cached block [`take`](Self::take) hands out, if one fits. Also releases a
    /// parked resource whose work has finished: one per allocation, so the steady state
    /// stays cheap and every idle one goes soon.
    #[inline]
    fn take_cached(
        &self,
        device: &DeviceInner,
        bytes: usize,
        idle_only: bool,
        want: Option<Want<'_>>,
    ) -> Option<Block> {
        let mut s = self.lock();
        let parked = s
            .parked
            .iter()
            .position(|p| p.uses().is_idle())
            .map(|i| s.parked.swap_remove(i));
        let large = is_large(bytes);
        // (index, size, same descriptor, idle)
        let mut best: Option<(usize, usize, bool, bool)> = None;
        for (i, b) in s.free.iter().enumerate() {
            if b.bytes < bytes || b.large != large {
                continue;
            }
            let same = !b.desc.is_null() && want.is_some_and(|w| *w.key == b.key);
            let ordered =
                || (want.and_then(|w| w.stream)).is_some_and(|uid| b.uses.is_idle_beside(uid));
            if same && !idle_only && b.bytes == bytes && ordered() {
                // Nothing fits better; its work runs before the new tensor's first use.
                best = Some((i, b.bytes, true, true));
                break;
            }
            let idle = b.uses.is_idle();
            if (idle_only || !b.desc.is_null()) && !idle {
                continue;
            }
            // Smallest first; of equal sizes, one with the wanted descriptor, then one
            // without pending work.
            let better = best.is_none_or(|(_, n, was_same, was_idle)| {
                (b.bytes, !same, !idle) < (n, !was_same, !was_idle)
            });
            if better {
                best = Some((i, b.bytes, same, idle));
            }
        }
        let Some((i, _, same, _)) = best else {
            drop(s);
            release_parked(device, parked);
            return None;
        };
        let mut block = s.free.swap_remove(i);
        if !same {
            // Its queued work has finished (`is_idle` above, and finished work stays
            // finished); the context is current (the caller's contract).
            block.destroy_desc(device);
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
