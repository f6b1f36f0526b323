//! The cache's books: the `aclrtMalloc` allocations (segments), their free pieces, and
//! the rules for handing a piece out and for merging pieces.

use super::{Block, Bound, MemoryStats, Parked, Want};
use crate::device::DeviceInner;
use crate::sys;
use crate::uses::{Pending, Uses};
use ascend_sys::aclTensor;
use std::ffi::c_void;

/// One `aclrtMalloc` allocation.
pub(super) struct Segment {
    pub(super) base: *mut c_void,
    pub(super) bytes: usize,
    /// Pieces held outside the cache (by tensors, workspaces, or an emptying thread).
    pub(super) out: usize,
    /// A piece's work could not be proved finished: never freed, counted as leaked.
    pub(super) leaked: bool,
}

impl Segment {
    pub(super) fn contains(&self, addr: usize) -> bool {
        (self.base.addr()..self.base.addr() + self.bytes).contains(&addr)
    }
}

pub(super) struct State {
    pub(super) segments: Vec<Segment>,
    pub(super) free: Vec<Block>,
    pub(super) parked: Vec<Box<dyn Parked>>,
    pub(super) stats: MemoryStats,
}

// SAFETY: the raw pointers are device addresses, never dereferenced by the host; every
// access goes through the cache's mutex.
unsafe impl Send for State {}

/// A block's descriptor taken off while queued work may still use it: destroyed once that
/// work has finished, as any parked resource.
struct RetiredDesc {
    desc: *mut aclTensor,
    uses: Uses,
}

// SAFETY: an immutable CANN descriptor, never dereferenced by the host; only its single
// owner (the cache, under its lock, or the releasing thread) hands it to CANN.
unsafe impl Send for RetiredDesc {}

impl Parked for RetiredDesc {
    fn uses(&self) -> &Uses {
        &self.uses
    }

    fn release(self: Box<Self>, device: &DeviceInner) {
        // SAFETY: a tensor's descriptor, owned here alone; the queued work that used it
        // has finished (the caller's contract) and the context is current.
        if let Err(e) = unsafe { sys::destroy_tensor(device.table(), self.desc) } {
            device.note_release_error(&e);
        }
    }

    fn leak(self: Box<Self>, device: &DeviceInner) {
        device.note_leak("tensor descriptor", 0, 0, 1);
    }
}

/// Whether two pieces with these pending works may become one: the merged piece's work
/// must be on one stream at most (so that stream may still take it at once and nobody
/// else waits for work that never touched its range), and none may be doubtful.
fn mergeable(a: Pending, b: Pending) -> bool {
    match (a, b) {
        (Pending::Idle, Pending::Idle | Pending::On(_)) | (Pending::On(_), Pending::Idle) => true,
        (Pending::On(x), Pending::On(y)) => x == y,
        _ => false,
    }
}

/// The pending work of two merged pieces (both [`mergeable`]).
fn merged(a: Pending, b: Pending) -> Pending {
    if a == Pending::Idle { b } else { a }
}

/// How a free block may serve a request: its rank (lower is better) and whether its
/// descriptor goes with it.
#[derive(Clone, Copy)]
pub(super) struct Fit {
    pub(super) index: usize,
    pub(super) same: bool,
    rank: (usize, bool, u8),
}

impl Block {
    /// Takes the descriptor off: destroyed now when its work has finished and the context
    /// is current, otherwise parked until it has.
    pub(super) fn retire_desc(
        &mut self,
        device: &DeviceInner,
        idle: bool,
        bound: &mut Bound,
        parked: &mut Vec<Box<dyn Parked>>,
    ) {
        if self.desc.is_null() {
            return;
        }
        if idle && bound.ok(device) {
            self.destroy_desc(device);
        } else {
            let desc = std::mem::replace(&mut self.desc, std::ptr::null_mut());
            parked.push(Box::new(RetiredDesc {
                desc,
                uses: self.uses.duplicate(),
            }));
        }
    }
}

impl State {
    pub(super) fn segment(&mut self, addr: usize) -> Option<&mut Segment> {
        self.segments.iter_mut().find(|s| s.contains(addr))
    }

    pub(super) fn segment_of(&self, addr: usize) -> Option<&Segment> {
        self.segments.iter().find(|s| s.contains(addr))
    }

    pub(super) fn count_allocated(&mut self, bytes: usize) {
        self.stats.allocated += bytes as u64;
        self.stats.peak = self.stats.peak.max(self.stats.allocated);
    }

    /// The free block that serves a request of `bytes` best, if any. A block whose work
    /// may never be proved finished is never handed out. A block with queued work only on
    /// the taker's stream serves it at once (that stream runs the old work first); a block
    /// with other queued work serves only without a descriptor (its use records order the
    /// new work after the old) and never for memory the caller cannot order
    /// (`idle_only`). Smallest first; of equal sizes, the wanted descriptor, then idle,
    /// then work on the taker's stream only.
    pub(super) fn best_fit(
        &self,
        bytes: usize,
        large: bool,
        idle_only: bool,
        want: Option<Want<'_>>,
    ) -> Option<Fit> {
        let stream = want.and_then(|w| w.stream);
        let mut best: Option<Fit> = None;
        for (index, b) in self.free.iter().enumerate() {
            if b.bytes < bytes || b.large != large {
                continue;
            }
            let class = match b.uses.pending() {
                Pending::Idle => 0,
                Pending::On(uid) if Some(uid) == stream && !idle_only => 1,
                Pending::Doubtful => continue,
                _ if idle_only || !b.desc.is_null() => continue,
                _ => 2,
            };
            let same = !b.desc.is_null() && want.is_some_and(|w| *w.key == b.key);
            let fit = Fit {
                index,
                same,
                rank: (b.bytes, !same, class),
            };
            if same && b.bytes == bytes && class < 2 {
                // Nothing fits better.
                return Some(fit);
            }
            if best.is_none_or(|f| fit.rank < f.rank) {
                best = Some(fit);
            }
        }
        best
    }

    /// Adds a free block, merging it with the free pieces beside it in its segment when
    /// their queued work allows ([`mergeable`]). A piece keeps a descriptor whose work is
    /// pending (for the next tensor of its layout) and stays apart meanwhile; an idle
    /// piece's descriptor is destroyed for a merge (the context must be current when
    /// `bound`).
    pub(super) fn insert_free(
        &mut self,
        device: &DeviceInner,
        mut block: Block,
        bound: &mut Bound,
    ) {
        let Some((lo, hi)) = self
            .segment_of(block.ptr.addr())
            .map(|g| (g.base.addr(), g.base.addr() + g.bytes))
        else {
            self.free.push(block);
            return;
        };
        let in_segment = |b: &Block| (lo..hi).contains(&b.ptr.addr());
        let mut pending = block.uses.pending();
        loop {
            if !block.desc.is_null() && pending != Pending::Idle {
                break;
            }
            let (start, end) = (block.ptr.addr(), block.end());
            let Some((i, theirs)) = self.free.iter().enumerate().find_map(|(i, f)| {
                if !(f.end() == start || f.ptr.addr() == end) || !in_segment(f) {
                    return None;
                }
                let theirs = f.uses.pending();
                let desc_ok = f.desc.is_null() || theirs == Pending::Idle;
                (desc_ok && mergeable(pending, theirs)).then_some((i, theirs))
            }) else {
                break;
            };
            let descs = !block.desc.is_null() || !self.free[i].desc.is_null();
            if descs && !bound.ok(device) {
                break;
            }
            // Both descriptors' work has finished (checked above); the context is current.
            self.free[i].destroy_desc(device);
            block.destroy_desc(device);
            let other = self.free.swap_remove(i);
            block.absorb(other);
            pending = merged(pending, theirs);
        }
        self.free.push(block);
    }

    /// Merges every two adjacent free pieces of a segment whose queued work allows it,
    /// taking their descriptors off (destroyed when idle, parked otherwise): for a request
    /// no free piece fits, before the device is asked for memory. The context is current.
    pub(super) fn coalesce(&mut self, device: &DeviceInner) -> usize {
        let mut bound = Bound(Some(true));
        self.free.sort_unstable_by_key(|b| b.ptr.addr());
        let mut merges = 0;
        let mut i = 0;
        while i + 1 < self.free.len() {
            let (a, b) = (&self.free[i], &self.free[i + 1]);
            let (pa, pb) = (a.uses.pending(), b.uses.pending());
            let joined = a.end() == b.ptr.addr()
                && self
                    .segment_of(a.ptr.addr())
                    .is_some_and(|g| g.contains(b.ptr.addr()))
                && mergeable(pa, pb);
            if !joined {
                i += 1;
                continue;
            }
            let mut second = self.free.remove(i + 1);
            second.retire_desc(device, pb == Pending::Idle, &mut bound, &mut self.parked);
            let first = &mut self.free[i];
            first.retire_desc(device, pa == Pending::Idle, &mut bound, &mut self.parked);
            first.absorb(second);
            merges += 1;
        }
        merges
    }

    /// Removes the segment of `addr` when it is whole in the free list as one piece that
    /// no queued work uses and no descriptor names, and returns it.
    pub(super) fn whole_segment(&mut self, addr: usize) -> Option<Segment> {
        let i = self.segments.iter().position(|s| s.contains(addr))?;
        let seg = &self.segments[i];
        if seg.out != 0 || seg.leaked {
            return None;
        }
        let (base, bytes) = (seg.base.addr(), seg.bytes);
        // A piece given back while an emptying waited may have merged in with its work
        // still queued: such a segment stays cached.
        let i_free = self.free.iter().position(|f| {
            f.ptr.addr() == base && f.bytes == bytes && f.desc.is_null() && f.uses.is_idle()
        })?;
        self.free.swap_remove(i_free);
        Some(self.segments.swap_remove(i))
    }

    /// The figures with the free pieces' (fragmentation).
    pub(super) fn stats(&self) -> MemoryStats {
        let mut stats = self.stats;
        stats.free_pieces = self.free.len() as u64;
        stats.free_bytes = self.free.iter().map(|b| b.bytes as u64).sum();
        stats.largest_free = self.free.iter().map(|b| b.bytes as u64).max().unwrap_or(0);
        stats
    }
}
