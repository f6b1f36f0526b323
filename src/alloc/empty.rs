//! Emptying the caching allocator: waiting for the cached blocks' and parked resources'
//! work, freeing the segments that are whole again, and leaking (counted) what cannot be
//! proved idle.

use super::free::Segment;
use super::{Block, Bound, Cache};
use crate::device::DeviceInner;
use crate::sys;

impl Cache {
    /// Frees every whole segment of the cache once the work of its blocks has finished
    /// (waiting on the host), and releases the parked resources the same way; what cannot
    /// be proved finished is leaked and counted. Returns the bytes given back to the
    /// device.
    pub(crate) fn empty(&self, device: &DeviceInner) -> u64 {
        self.empty_as(device, "cached block")
    }

    /// [`empty`](Self::empty), naming leaks `what`.
    pub(super) fn empty_as(&self, device: &DeviceInner, what: &'static str) -> u64 {
        let parked = std::mem::take(&mut self.lock().parked);
        for item in parked {
            if item.uses().wait_idle() && device.bind().is_ok() {
                item.release(device);
            } else {
                item.leak(device);
            }
        }
        let blocks = {
            let mut s = self.lock();
            let blocks = std::mem::take(&mut s.free);
            for b in &blocks {
                if let Some(seg) = s.segment(b.ptr.addr()) {
                    seg.out += 1; // held by this thread while it waits
                }
            }
            blocks
        };
        let mut settled = Vec::with_capacity(blocks.len());
        for mut block in blocks {
            let idle = block.uses.wait_idle() && device.bind().is_ok();
            if idle {
                // Its work finished (waited for above); the context is current.
                block.destroy_desc(device);
            }
            settled.push((block, idle));
        }
        let mut whole = Vec::new();
        let segments = {
            let mut s = self.lock();
            for (block, idle) in settled {
                let addr = block.ptr.addr();
                let Some(seg) = s.segment(addr) else { continue };
                seg.out -= 1;
                if !idle {
                    let first = !std::mem::replace(&mut seg.leaked, true);
                    let handles = u64::from(!block.desc.is_null());
                    s.stats.reserved -= block.bytes as u64;
                    device.note_leak(what, u64::from(first), block.bytes as u64, handles);
                    // The memory (and descriptor) stay allocated: queued work may still use them.
                    drop(block);
                    continue;
                }
                s.insert_free(device, block, &mut Bound(Some(true)));
                whole.push(addr);
            }
            // The free pieces of leaked segments are leaked too: their segment can never be
            // freed, and the host no longer tracks them.
            let mut i = 0;
            while i < s.free.len() {
                let leaked = s.segment_of(s.free[i].ptr.addr()).is_some_and(|g| g.leaked);
                if leaked {
                    let block = s.free.swap_remove(i);
                    s.stats.reserved -= block.bytes as u64;
                    let handles = u64::from(!block.desc.is_null());
                    device.note_leak(what, 0, block.bytes as u64, handles);
                } else {
                    i += 1;
                }
            }
            whole.retain(|&addr| s.segment_of(addr).is_some());
            let mut segments = Vec::new();
            for addr in whole {
                if let Some(seg) = s.whole_segment(addr) {
                    s.stats.reserved -= seg.bytes as u64;
                    segments.push(seg);
                }
            }
            segments
        };
        self.free_segments(device, segments)
    }

    /// Leaks a block held outside the cache (a workspace of a stream whose drain failed),
    /// counted with its segment: queued work may still use it.
    pub(crate) fn leak(&self, device: &DeviceInner, block: Block) {
        let mut s = self.lock();
        s.stats.allocated -= block.bytes as u64;
        s.stats.reserved -= block.bytes as u64;
        let first = match s.segment(block.ptr.addr()) {
            Some(seg) => {
                seg.out -= 1;
                !std::mem::replace(&mut seg.leaked, true)
            }
            None => false,
        };
        drop(s);
        let handles = u64::from(!block.desc.is_null());
        device.note_leak(
            "device block",
            u64::from(first),
            block.bytes as u64,
            handles,
        );
    }

    fn free_segments(&self, device: &DeviceInner, segments: Vec<Segment>) -> u64 {
        let mut freed = 0;
        for seg in segments {
            // SAFETY: a whole aclrtMalloc allocation of this device (context bound while
            // settling its blocks), no queued work uses any of it (every piece was waited
            // for), freed exactly once (removed from the cache).
            match unsafe { sys::free(device.table(), seg.base) } {
                Ok(()) => {
                    freed += seg.bytes as u64;
                    self.lock().stats.device_frees += 1;
                }
                Err(e) => {
                    device.note_release_error(&e);
                    device.note_leak("cached block", 1, seg.bytes as u64, 0);
                }
            }
        }
        freed
    }
}
