//! Simulated device memory: an inaccessible reserved address range per device, with the
//! bytes of each allocation kept in a host-side backing buffer.

use crate::racecheck::{Region, Shadow};
use crate::state::{
    State, active_state, fail, finding, non_null_address, out_param, out_slot, status_of,
};
use ascend_sys::*;
use std::collections::BTreeMap;
use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// Alignment of addresses returned by `aclrtMalloc` (CANN pads to 32 bytes).
pub const DEVICE_ALIGN: usize = 32;

/// A reserved, inaccessible (PROT_NONE) address range handing out device addresses.
pub(crate) struct Arena {
    base: usize,
    len: usize,
    /// Device memory size (`ASCEND_SIM_MEM_BYTES`).
    pub capacity: usize,
    /// Bytes in use (padded sizes).
    pub used: usize,
    /// Free ranges: start -> length.
    free: BTreeMap<usize, usize>,
}

impl Arena {
    /// Reserves `2 * capacity` (at least 64 KiB) of address space with no access rights.
    pub fn reserve(capacity: usize) -> Result<Arena, String> {
        let len = capacity
            .checked_mul(2)
            .and_then(|l| l.checked_add(0x20_0000))
            .ok_or("ASCEND_SIM_MEM_BYTES too large")?
            & !0xF_FFFF;
        // SAFETY: an anonymous private mapping with PROT_NONE at an address chosen by the
        // kernel touches no existing memory; we only ever use the returned range as
        // numbers, never dereference it.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_NONE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(format!(
                "cannot reserve {len} bytes of address space for device memory: {}",
                std::io::Error::last_os_error()
            ));
        }
        let base = p as usize;
        let mut free = BTreeMap::new();
        free.insert(base, len);
        Ok(Arena {
            base,
            len,
            capacity,
            used: 0,
            free,
        })
    }

    pub fn contains(&self, addr: usize) -> bool {
        addr >= self.base && addr < self.base + self.len
    }

    /// First-fit allocation of `padded` bytes (a multiple of [`DEVICE_ALIGN`]).
    /// [`Arena::take`] for an allocation of `size` bytes on `device`: 207001 with the
    /// free bytes when the device is full.
    pub(crate) fn allocate(
        &mut self,
        device: usize,
        size: usize,
        padded: usize,
    ) -> Result<usize, i32> {
        self.take(padded).ok_or_else(|| {
            fail(
                ACL_ERROR_RT_MEMORY_ALLOCATION,
                format!(
                    "out of device memory on device {device}: asked {size} bytes ({padded} padded), {} of {} bytes free",
                    self.capacity - self.used,
                    self.capacity
                ),
            )
        })
    }

    pub(crate) fn take(&mut self, padded: usize) -> Option<usize> {
        if self.capacity - self.used < padded {
            return None;
        }
        let (&start, &len) = self.free.iter().find(|&(_, &len)| len >= padded)?;
        self.free.remove(&start);
        if len > padded {
            self.free.insert(start + padded, len - padded);
        }
        self.used += padded;
        Some(start)
    }

    /// Returns a range, coalescing with its neighbours.
    pub(crate) fn give_back(&mut self, start: usize, padded: usize) {
        self.used -= padded;
        let (mut s, mut l) = (start, padded);
        if let Some((&ps, &pl)) = self.free.range(..s).next_back()
            && ps + pl == s
        {
            self.free.remove(&ps);
            s = ps;
            l += pl;
        }
        if let Some(&nl) = self.free.get(&(s + l)) {
            self.free.remove(&(s + l));
            l += nl;
        }
        self.free.insert(s, l);
    }
}

/// One live device allocation.
pub(crate) struct Alloc {
    pub start: usize,
    /// Requested size: every access is checked against it, not the padded size.
    pub size: usize,
    pub padded: usize,
    pub device: usize,
    pub data: Mutex<Vec<u8>>,
    /// Set by `aclrtFree`, so work already running notices.
    pub freed: AtomicBool,
    /// The accesses the racecheck remembers.
    pub race: Shadow,
    /// The id of the memory pool it came from (`aclrtMemPoolMallocAsync`); 0: `aclrtMalloc`.
    pub pool: u64,
}

impl Alloc {
    /// The allocation as racecheck memory.
    pub fn region(&self) -> Region<'_> {
        Region {
            shadow: &self.race,
            start: self.start,
            size: self.size,
            kind: "device allocation",
        }
    }

    /// Bytes outside every device's memory map: the process that serves a communicator
    /// holds a rank of another process's buffers in these while a collective runs.
    pub fn staging(device: usize, data: Vec<u8>) -> Alloc {
        Alloc {
            start: 0,
            size: data.len(),
            padded: data.len(),
            device,
            data: Mutex::new(data),
            freed: AtomicBool::new(false),
            race: Shadow::default(),
            pool: 0,
        }
    }

    /// A zero-byte stand-in at `start` for an operand without elements (never freed).
    pub fn detached(start: usize, device: usize) -> Alloc {
        Alloc {
            start,
            size: 0,
            padded: 0,
            device,
            data: Mutex::new(Vec::new()),
            freed: AtomicBool::new(false),
            race: Shadow::default(),
            pool: 0,
        }
    }

    pub fn is_freed(&self) -> bool {
        self.freed.load(Ordering::SeqCst)
    }
}

/// One `aclrtMallocHost` buffer. Its memory is returned to the allocator when the last
/// holder lets go: `aclrtFreeHost` only marks it freed, so a copy still queued on it (which
/// holds it) finds it freed and fails loudly instead of touching released memory.
pub(crate) struct HostAlloc {
    pub start: usize,
    pub size: usize,
    layout: std::alloc::Layout,
    freed: AtomicBool,
    /// The copies' accesses the racecheck remembers.
    pub race: Shadow,
}

impl HostAlloc {
    /// The buffer as racecheck memory.
    pub fn region(&self) -> Region<'_> {
        Region {
            shadow: &self.race,
            start: self.start,
            size: self.size,
            kind: "aclrtMallocHost buffer",
        }
    }

    /// Checks, when a queued copy runs, that the buffer was not freed meanwhile.
    pub(crate) fn still_live(&self, what: &str) -> Result<(), String> {
        if self.freed.load(Ordering::SeqCst) {
            Err(format!(
                "{what} is the aclrtMallocHost buffer [{:#x}, {:#x}), freed with aclrtFreeHost while a queued copy still used it",
                self.start,
                self.start + self.size
            ))
        } else {
            Ok(())
        }
    }
}

impl Drop for HostAlloc {
    fn drop(&mut self) {
        // SAFETY: `start` was returned by `alloc_zeroed` with `layout`; this is the last
        // holder, so nothing reads or writes the memory any more.
        unsafe { std::alloc::dealloc(self.start as *mut u8, self.layout) };
    }
}

/// Where a pointer points.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Class {
    Host,
    Device,
}

impl State {
    pub fn class_of(&self, addr: usize) -> Class {
        if self.is_device_addr(addr) {
            Class::Device
        } else {
            Class::Host
        }
    }

    /// Why `addr` lies in no live allocation, for messages.
    pub fn dead_memory(&self, addr: usize) -> String {
        match self.released.range(..=addr).next_back() {
            Some((&start, &(end, device))) if addr < end => format!(
                "was released by aclrtResetDevice({device}) with the allocation at {start:#x} (use after reset)"
            ),
            _ => "is not inside any live device allocation (freed or never allocated)".into(),
        }
    }

    /// Invalidates every allocation of `device` (its reset). Each stays counted as
    /// leaked and its address range stays reserved, so any later use of it is recognised
    /// as use after reset.
    pub fn invalidate_device_memory(&mut self, device: usize) {
        let starts: Vec<usize> = self
            .allocs
            .iter()
            .filter(|(_, a)| a.device == device)
            .map(|(&s, _)| s)
            .collect();
        for start in starts {
            if let Some(a) = self.allocs.remove(&start) {
                a.freed.store(true, Ordering::SeqCst);
                self.released
                    .insert(a.start, (a.start + a.size.max(1), device));
                self.reset_leaks.allocations += 1;
                self.reset_leaks.allocated_bytes += a.size as u64;
            }
        }
    }

    /// Resolves `[addr, addr + len)` to the one live allocation containing it.
    pub fn device_range(&self, what: &str, addr: usize, len: usize) -> Result<Arc<Alloc>, String> {
        let Some(a) = self.alloc_at(addr) else {
            return Err(if self.is_device_addr(addr) {
                format!("{what} {addr:#x} {}", self.dead_memory(addr))
            } else {
                format!("{what} {addr:#x} is host memory, not inside any device allocation")
            });
        };
        check_inside(what, addr, len, "device allocation", a.start, a.size)?;
        Ok(Arc::clone(a))
    }

    /// The live `aclrtMallocHost` buffer that host range `[addr, addr + len)` lies in, if
    /// it starts inside one (`None`: other host memory, which the simulator cannot track).
    pub fn pinned_range(
        &self,
        what: &str,
        addr: usize,
        len: usize,
    ) -> Result<Option<Arc<HostAlloc>>, String> {
        let Some((_, h)) = self.host_allocs.range(..=addr).next_back() else {
            return Ok(None);
        };
        if addr >= h.start + h.size {
            return Ok(None);
        }
        check_inside(what, addr, len, "aclrtMallocHost buffer", h.start, h.size)?;
        Ok(Some(Arc::clone(h)))
    }
}

/// Checks that `[addr, addr + len)`, which starts inside the `kind` `[start, start + size)`,
/// ends inside it too.
fn check_inside(
    what: &str,
    addr: usize,
    len: usize,
    kind: &str,
    start: usize,
    size: usize,
) -> Result<(), String> {
    let (end, limit) = (addr.saturating_add(len), start + size);
    if end > limit {
        return Err(format!(
            "{what} range [{addr:#x}, {end:#x}) ({len} bytes) overruns the {kind} [{start:#x}, {limit:#x}) of {size} bytes by {} bytes",
            end - limit
        ));
    }
    Ok(())
}

/// Whether `policy` is an `aclrtMemMallocPolicy` as documented: a page policy
/// (`ACL_MEM_MALLOC_HUGE_FIRST` 0 to `ACL_MEM_MALLOC_HUGE1G_ONLY_P2P` 7), optionally ORed
/// with one bandwidth type (`ACL_MEM_TYPE_LOW_BAND_WIDTH` 0x100, `_HIGH_` 0x1000) and with
/// `ACL_MEM_ACCESS_USER_SPACE_READONLY` (0x100000). Every one allocates the same memory
/// here.
fn is_malloc_policy(policy: u32) -> bool {
    const BAND: u32 = 0x100 | 0x1000;
    const READONLY: u32 = 0x10_0000;
    let page = policy & 0xFF;
    page <= 7 && policy & BAND != BAND && policy & !(0xFF | BAND | READONLY) == 0
}

/// The arena bytes an allocation of `size` takes: rounded up to [`DEVICE_ALIGN`] plus
/// one alignment unit of padding, as CANN does.
pub(crate) fn padded_size(size: usize) -> Option<usize> {
    size.checked_add(DEVICE_ALIGN - 1)
        .map(|s| s / DEVICE_ALIGN * DEVICE_ALIGN + DEVICE_ALIGN)
}

pub(crate) unsafe fn malloc(dev_ptr: *mut *mut c_void, size: usize, policy: u32) -> aclError {
    status_of(|| {
        let mut st = active_state()?;
        // SAFETY: NULL or writable and unaliased during the call, by the C contract.
        let out = unsafe { out_param(dev_ptr, "devPtr") }?;
        if size == 0 {
            return Err(fail(ACL_ERROR_INVALID_PARAM, "size is 0".into()));
        }
        if !is_malloc_policy(policy) {
            return Err(fail(
                ACL_ERROR_INVALID_PARAM,
                format!(
                    "policy {policy:#x} is not an aclrtMemMallocPolicy (a page policy 0..=7, optionally ORed with 0x100 or 0x1000 and with 0x100000)"
                ),
            ));
        }
        let (_, device) = st.current_ctx()?;
        let padded = padded_size(size).ok_or_else(|| {
            fail(
                ACL_ERROR_RT_MEMORY_ALLOCATION,
                format!("size {size} too large"),
            )
        })?;
        let start = st.devices[device].arena.allocate(device, size, padded)?;
        let alloc = Alloc {
            start,
            size,
            padded,
            device,
            data: Mutex::new(vec![0u8; size]),
            freed: AtomicBool::new(false),
            race: Shadow::default(),
            pool: 0,
        };
        st.allocs.insert(start, Arc::new(alloc));
        out.write(start as *mut c_void);
        Ok(())
    })
}

pub(crate) unsafe fn free(dev_ptr: *mut c_void) -> aclError {
    status_of(|| {
        let mut st = active_state()?;
        let addr = non_null_address(dev_ptr, "devPtr")?;
        if let Some(a) = st.allocs.get(&addr)
            && a.pool != 0
        {
            return Err(finding(
                ACL_ERROR_INVALID_PARAM,
                format!(
                    "devPtr {addr:#x} came from aclrtMemPoolMallocAsync: release it with aclrtMemPoolFreeAsync"
                ),
            ));
        }
        let Some(a) = st.allocs.remove(&addr) else {
            let why = if !st.is_device_addr(addr) {
                "is not device memory (host pointer passed to aclrtFree?)".to_string()
            } else if let Some(a) = st.alloc_at(addr) {
                format!(
                    "points inside the allocation at {:#x} ({} bytes) but is not its start",
                    a.start, a.size
                )
            } else if st.released.contains_key(&addr) {
                st.dead_memory(addr)
            } else {
                "is not a live device allocation (double free or never allocated)".to_string()
            };
            return Err(finding(
                ACL_ERROR_INVALID_PARAM,
                format!("devPtr {addr:#x} {why}"),
            ));
        };
        a.freed.store(true, Ordering::SeqCst);
        st.devices[a.device].arena.give_back(addr, a.padded);
        Ok(())
    })
}

pub(crate) unsafe fn malloc_host(host_ptr: *mut *mut c_void, size: usize) -> aclError {
    status_of(|| {
        let mut st = active_state()?;
        // SAFETY: NULL or writable and unaliased during the call, by the C contract.
        let out = unsafe { out_param(host_ptr, "hostPtr") }?;
        if size == 0 {
            return Err(fail(ACL_ERROR_INVALID_PARAM, "size is 0".into()));
        }
        let Ok(layout) = std::alloc::Layout::from_size_align(size, 64) else {
            return Err(fail(ACL_ERROR_BAD_ALLOC, format!("size {size} too large")));
        };
        // SAFETY: layout has a non-zero size.
        let p = unsafe { std::alloc::alloc_zeroed(layout) };
        if p.is_null() {
            return Err(fail(
                ACL_ERROR_BAD_ALLOC,
                format!("host allocation of {size} bytes failed"),
            ));
        }
        st.host_allocs.insert(
            p as usize,
            Arc::new(HostAlloc {
                start: p as usize,
                size,
                layout,
                freed: AtomicBool::new(false),
                race: Shadow::default(),
            }),
        );
        out.write(p.cast());
        Ok(())
    })
}

pub(crate) unsafe fn free_host(host_ptr: *mut c_void) -> aclError {
    status_of(|| {
        let mut st = active_state()?;
        let addr = non_null_address(host_ptr, "hostPtr")?;
        let Some(h) = st.host_allocs.remove(&addr) else {
            return Err(finding(
                ACL_ERROR_INVALID_PARAM,
                format!(
                    "hostPtr {addr:#x} was not returned by aclrtMallocHost or was already freed{}",
                    if st.is_device_addr(addr) {
                        " (it is device memory: use aclrtFree)"
                    } else {
                        ""
                    }
                ),
            ));
        };
        // Released when the last queued copy holding it is gone (see `HostAlloc`).
        h.freed.store(true, Ordering::SeqCst);
        Ok(())
    })
}

/// Re-checks, at execution time, that a planned allocation is still the live one.
pub(crate) fn still_live(what: &str, a: &Alloc) -> Result<(), String> {
    if a.is_freed() {
        Err(format!(
            "{what} allocation [{:#x}, {:#x}) was freed while queued work still used it",
            a.start,
            a.start + a.size
        ))
    } else {
        Ok(())
    }
}

pub(crate) unsafe fn get_mem_info(attr: u32, free: *mut usize, total: *mut usize) -> aclError {
    status_of(|| {
        let st = active_state()?;
        // SAFETY: each is NULL or writable and unaliased during the call, by the C contract.
        let (Some(free), Some(total)) = (unsafe { (out_slot(free), out_slot(total)) }) else {
            return Err(fail(
                ACL_ERROR_INVALID_PARAM,
                "free or total is NULL".into(),
            ));
        };
        // ACL_DDR_MEM 0 .. ACL_MEM_P2P_HUGE1G 17; every kind reports the one simulated
        // device memory.
        if attr > 17 {
            return Err(fail(
                ACL_ERROR_INVALID_PARAM,
                format!("attr {attr} is not an aclrtMemAttr (0..=17)"),
            ));
        }
        let (_, device) = st.current_ctx()?;
        let arena = &st.devices[device].arena;
        free.write(arena.capacity - arena.used);
        total.write(arena.capacity);
        Ok(())
    })
}
