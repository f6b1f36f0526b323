//! Simulated device memory: an inaccessible reserved address range per device, with the
//! bytes of each allocation kept in a host-side backing buffer.

use crate::state::{State, fail, finding, lock, state};
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
    fn take(&mut self, padded: usize) -> Option<usize> {
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
    fn give_back(&mut self, start: usize, padded: usize) {
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
}

impl Alloc {
    pub fn is_freed(&self) -> bool {
        self.freed.load(Ordering::SeqCst)
    }
}

/// One live `aclrtMallocHost` buffer.
pub(crate) struct HostAlloc {
    pub size: usize,
    layout: std::alloc::Layout,
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

    /// Resolves `[addr, addr + len)` to the one live allocation containing it.
    pub fn device_range(&self, what: &str, addr: usize, len: usize) -> Result<Arc<Alloc>, String> {
        let Some(a) = self.alloc_at(addr) else {
            return Err(format!(
                "{what} {addr:#x} is not inside any live device allocation (freed, never allocated, or host memory)"
            ));
        };
        let end = addr.saturating_add(len);
        if end > a.start + a.size {
            return Err(format!(
                "{what} range [{addr:#x}, {end:#x}) ({len} bytes) overruns the device allocation [{:#x}, {:#x}) of {} bytes by {} bytes",
                a.start,
                a.start + a.size,
                a.size,
                end - (a.start + a.size)
            ));
        }
        Ok(Arc::clone(a))
    }
}

pub(crate) unsafe fn malloc(dev_ptr: *mut *mut c_void, size: usize, policy: u32) -> aclError {
    let mut st = state();
    if let Err(e) = st.require_active() {
        return e;
    }
    if dev_ptr.is_null() {
        return fail(ACL_ERROR_INVALID_PARAM, "devPtr is NULL".into());
    }
    if size == 0 {
        return fail(ACL_ERROR_INVALID_PARAM, "size is 0".into());
    }
    if policy > ACL_MEM_MALLOC_NORMAL_ONLY {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            format!("policy {policy} is not an aclrtMemMallocPolicy"),
        );
    }
    let (_, device) = match st.current_ctx() {
        Ok(c) => c,
        Err(e) => return e,
    };
    let padded = match size
        .checked_add(DEVICE_ALIGN - 1)
        .map(|s| s / DEVICE_ALIGN * DEVICE_ALIGN + DEVICE_ALIGN)
    {
        Some(p) => p,
        None => {
            return fail(
                ACL_ERROR_RT_MEMORY_ALLOCATION,
                format!("size {size} too large"),
            );
        }
    };
    let arena = &mut st.devices[device].arena;
    let Some(start) = arena.take(padded) else {
        let (cap, used) = (arena.capacity, arena.used);
        return fail(
            ACL_ERROR_RT_MEMORY_ALLOCATION,
            format!(
                "out of device memory on device {device}: asked {size} bytes ({padded} padded), {} of {cap} bytes free",
                cap - used
            ),
        );
    };
    let alloc = Alloc {
        start,
        size,
        padded,
        device,
        data: Mutex::new(vec![0u8; size]),
        freed: AtomicBool::new(false),
    };
    st.allocs.insert(start, Arc::new(alloc));
    // SAFETY: dev_ptr is non-null and, by the C contract, points to a writable `void *`.
    unsafe { *dev_ptr = start as *mut c_void };
    ACL_SUCCESS
}

pub(crate) unsafe fn free(dev_ptr: *mut c_void) -> aclError {
    let mut st = state();
    if let Err(e) = st.require_active() {
        return e;
    }
    let addr = dev_ptr as usize;
    if addr == 0 {
        return fail(ACL_ERROR_INVALID_PARAM, "devPtr is NULL".into());
    }
    match st.allocs.get(&addr) {
        Some(a) => {
            a.freed.store(true, Ordering::SeqCst);
            let (device, padded) = (a.device, a.padded);
            st.allocs.remove(&addr);
            st.devices[device].arena.give_back(addr, padded);
            ACL_SUCCESS
        }
        None => {
            let why = if !st.is_device_addr(addr) {
                "is not device memory (host pointer passed to aclrtFree?)".to_string()
            } else if let Some(a) = st.alloc_at(addr) {
                format!(
                    "points inside the allocation at {:#x} ({} bytes) but is not its start",
                    a.start, a.size
                )
            } else {
                "is not a live device allocation (double free or never allocated)".to_string()
            };
            finding(ACL_ERROR_INVALID_PARAM, format!("devPtr {addr:#x} {why}"))
        }
    }
}

pub(crate) unsafe fn malloc_host(host_ptr: *mut *mut c_void, size: usize) -> aclError {
    let mut st = state();
    if let Err(e) = st.require_active() {
        return e;
    }
    if host_ptr.is_null() {
        return fail(ACL_ERROR_INVALID_PARAM, "hostPtr is NULL".into());
    }
    if size == 0 {
        return fail(ACL_ERROR_INVALID_PARAM, "size is 0".into());
    }
    let Ok(layout) = std::alloc::Layout::from_size_align(size, 64) else {
        return fail(ACL_ERROR_BAD_ALLOC, format!("size {size} too large"));
    };
    // SAFETY: layout has a non-zero size.
    let p = unsafe { std::alloc::alloc_zeroed(layout) };
    if p.is_null() {
        return fail(
            ACL_ERROR_BAD_ALLOC,
            format!("host allocation of {size} bytes failed"),
        );
    }
    st.host_allocs
        .insert(p as usize, HostAlloc { size, layout });
    // SAFETY: host_ptr is non-null and points to a writable `void *` by the C contract.
    unsafe { *host_ptr = p.cast() };
    ACL_SUCCESS
}

pub(crate) unsafe fn free_host(host_ptr: *mut c_void) -> aclError {
    let mut st = state();
    if let Err(e) = st.require_active() {
        return e;
    }
    let addr = host_ptr as usize;
    if addr == 0 {
        return fail(ACL_ERROR_INVALID_PARAM, "hostPtr is NULL".into());
    }
    match st.host_allocs.remove(&addr) {
        Some(h) => {
            // SAFETY: the pointer was returned by `alloc_zeroed` with this layout and is
            // removed from the table, so it is freed exactly once.
            unsafe { std::alloc::dealloc(host_ptr.cast(), h.layout) };
            ACL_SUCCESS
        }
        None => finding(
            ACL_ERROR_INVALID_PARAM,
            format!(
                "hostPtr {addr:#x} was not returned by aclrtMallocHost or was already freed{}",
                if st.is_device_addr(addr) {
                    " (it is device memory: use aclrtFree)"
                } else {
                    ""
                }
            ),
        ),
    }
}

/// A validated copy: what to do once the stream (or the caller) runs it.
pub(crate) enum CopyPlan {
    HostToHost {
        dst: usize,
        src: usize,
    },
    HostToDevice {
        dst: (Arc<Alloc>, usize),
        src: usize,
    },
    DeviceToHost {
        dst: usize,
        src: (Arc<Alloc>, usize),
    },
    DeviceToDevice {
        dst: (Arc<Alloc>, usize),
        src: (Arc<Alloc>, usize),
    },
}

/// Checks a memcpy request and returns its plan (`Ok(None)`: nothing to copy).
pub(crate) fn plan_copy(
    st: &State,
    dst: usize,
    dest_max: usize,
    src: usize,
    count: usize,
    kind: u32,
) -> Result<Option<(CopyPlan, usize)>, i32> {
    if dst == 0 || src == 0 {
        return Err(fail(
            ACL_ERROR_INVALID_PARAM,
            format!("{} is NULL", if dst == 0 { "dst" } else { "src" }),
        ));
    }
    if count > dest_max {
        return Err(finding(
            ACL_ERROR_INVALID_PARAM,
            format!("count {count} exceeds destMax {dest_max}"),
        ));
    }
    if kind > ACL_MEMCPY_DEFAULT {
        return Err(fail(
            ACL_ERROR_INVALID_PARAM,
            format!("kind {kind} is not an aclrtMemcpyKind"),
        ));
    }
    let (dc, sc) = (st.class_of(dst), st.class_of(src));
    let expected = match kind {
        ACL_MEMCPY_HOST_TO_HOST => Some((Class::Host, Class::Host, "ACL_MEMCPY_HOST_TO_HOST")),
        ACL_MEMCPY_HOST_TO_DEVICE => {
            Some((Class::Device, Class::Host, "ACL_MEMCPY_HOST_TO_DEVICE"))
        }
        ACL_MEMCPY_DEVICE_TO_HOST => {
            Some((Class::Host, Class::Device, "ACL_MEMCPY_DEVICE_TO_HOST"))
        }
        ACL_MEMCPY_DEVICE_TO_DEVICE => {
            Some((Class::Device, Class::Device, "ACL_MEMCPY_DEVICE_TO_DEVICE"))
        }
        _ => None,
    };
    if let Some((ed, es, name)) = expected {
        let name_of = |c: Class| match c {
            Class::Host => "host",
            Class::Device => "device",
        };
        if dc != ed || sc != es {
            let which = if dc != ed {
                ("dst", dst, dc)
            } else {
                ("src", src, sc)
            };
            return Err(finding(
                ACL_ERROR_INVALID_PARAM,
                format!(
                    "kind {name} but {} {:#x} is {} memory",
                    which.0,
                    which.1,
                    name_of(which.2)
                ),
            ));
        }
    }
    if dc == Class::Device || sc == Class::Device {
        st.current_ctx()?;
    }
    if count == 0 {
        return Ok(None);
    }
    let dev = |what: &str, addr: usize| -> Result<(Arc<Alloc>, usize), i32> {
        st.device_range(what, addr, count)
            .map(|a| {
                let off = addr - a.start;
                (a, off)
            })
            .map_err(|m| finding(ACL_ERROR_INVALID_PARAM, m))
    };
    let plan = match (dc, sc) {
        (Class::Host, Class::Host) => CopyPlan::HostToHost { dst, src },
        (Class::Device, Class::Host) => CopyPlan::HostToDevice {
            dst: dev("dst", dst)?,
            src,
        },
        (Class::Host, Class::Device) => CopyPlan::DeviceToHost {
            dst,
            src: dev("src", src)?,
        },
        (Class::Device, Class::Device) => CopyPlan::DeviceToDevice {
            dst: dev("dst", dst)?,
            src: dev("src", src)?,
        },
    };
    Ok(Some((plan, count)))
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

/// Performs a copy plan.
///
/// # Safety
/// Host addresses in the plan must be valid for the access (`count` bytes).
pub(crate) unsafe fn run_copy(plan: &CopyPlan, count: usize) -> Result<(), String> {
    match plan {
        CopyPlan::HostToHost { dst, src } => {
            // SAFETY: both are host ranges of `count` bytes by the caller's contract;
            // `copy` tolerates overlap.
            unsafe { std::ptr::copy(*src as *const u8, *dst as *mut u8, count) };
        }
        CopyPlan::HostToDevice { dst: (a, off), src } => {
            still_live("dst", a)?;
            let mut d = lock(&a.data);
            // SAFETY: src is a host range of `count` bytes (caller's contract); the
            // destination slice was bounds-checked at planning time.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    *src as *const u8,
                    d[*off..*off + count].as_mut_ptr(),
                    count,
                )
            };
        }
        CopyPlan::DeviceToHost { dst, src: (a, off) } => {
            still_live("src", a)?;
            let s = lock(&a.data);
            // SAFETY: dst is a host range of `count` bytes (caller's contract); the
            // source slice was bounds-checked at planning time.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    s[*off..*off + count].as_ptr(),
                    *dst as *mut u8,
                    count,
                )
            };
        }
        CopyPlan::DeviceToDevice {
            dst: (da, doff),
            src: (sa, soff),
        } => {
            still_live("dst", da)?;
            still_live("src", sa)?;
            if Arc::ptr_eq(da, sa) {
                let mut d = lock(&da.data);
                d.copy_within(*soff..*soff + count, *doff);
            } else {
                let tmp = lock(&sa.data)[*soff..*soff + count].to_vec();
                lock(&da.data)[*doff..*doff + count].copy_from_slice(&tmp);
            }
        }
    }
    Ok(())
}

pub(crate) unsafe fn memcpy(
    dst: *mut c_void,
    dest_max: usize,
    src: *const c_void,
    count: usize,
    kind: u32,
) -> aclError {
    let plan = {
        let st = state();
        if let Err(e) = st.require_active() {
            return e;
        }
        match plan_copy(&st, dst as usize, dest_max, src as usize, count, kind) {
            Ok(p) => p,
            Err(e) => return e,
        }
    };
    if let Some((plan, count)) = plan {
        // SAFETY: host ranges are valid for `count` bytes by the C contract of aclrtMemcpy.
        if let Err(m) = unsafe { run_copy(&plan, count) } {
            return finding(ACL_ERROR_INVALID_PARAM, m);
        }
    }
    ACL_SUCCESS
}

pub(crate) unsafe fn memset(
    dev_ptr: *mut c_void,
    max_count: usize,
    value: i32,
    count: usize,
) -> aclError {
    let a = {
        let st = state();
        if let Err(e) = st.require_active() {
            return e;
        }
        let addr = dev_ptr as usize;
        if addr == 0 {
            return fail(ACL_ERROR_INVALID_PARAM, "devPtr is NULL".into());
        }
        if count > max_count {
            return finding(
                ACL_ERROR_INVALID_PARAM,
                format!("count {count} exceeds maxCount {max_count}"),
            );
        }
        if let Err(e) = st.current_ctx() {
            return e;
        }
        if count == 0 {
            return ACL_SUCCESS;
        }
        if !st.is_device_addr(addr) {
            return finding(
                ACL_ERROR_INVALID_PARAM,
                format!("devPtr {addr:#x} is host memory; aclrtMemset works on device memory"),
            );
        }
        match st.device_range("devPtr", addr, count) {
            Ok(a) => (a, addr),
            Err(m) => return finding(ACL_ERROR_INVALID_PARAM, m),
        }
    };
    let (a, addr) = a;
    let off = addr - a.start;
    lock(&a.data)[off..off + count].fill(value as u8);
    ACL_SUCCESS
}

pub(crate) unsafe fn get_mem_info(attr: u32, free: *mut usize, total: *mut usize) -> aclError {
    let st = state();
    if let Err(e) = st.require_active() {
        return e;
    }
    if free.is_null() || total.is_null() {
        return fail(ACL_ERROR_INVALID_PARAM, "free or total is NULL".into());
    }
    if attr > ACL_HBM_MEM_NORMAL {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            format!("attr {attr} is not an aclrtMemAttr"),
        );
    }
    let (_, device) = match st.current_ctx() {
        Ok(c) => c,
        Err(e) => return e,
    };
    let arena = &st.devices[device].arena;
    // SAFETY: both pointers are non-null and writable by the C contract.
    unsafe {
        *free = arena.capacity - arena.used;
        *total = arena.capacity;
    }
    ACL_SUCCESS
}
