//! `aclrtMemcpy`, `aclrtMemcpyAsync` (planned here, queued by the runtime) and
//! `aclrtMemset`: every request is checked against the pointer classes and the live
//! allocations before any byte moves.

use crate::mem::{Alloc, Class, HostAlloc, still_live};
use crate::racecheck::{self, Access, Accesses};
use crate::state::{State, active_state, fail, finding, lock, non_null_address, status_of};
use ascend_sys::*;
use std::ffi::c_void;
use std::sync::Arc;

/// `aclrtMemcpyKind` values of CANN 8.x beyond `ACL_MEMCPY_DEFAULT`: a host-to-device
/// copy whose host bytes the runtime buffers at the call (so the caller may free them at
/// once), and device-to-device copies within one device or between two.
pub(crate) const MEMCPY_HOST_TO_BUF_TO_DEVICE: u32 = 5;
const MEMCPY_INNER_DEVICE_TO_DEVICE: u32 = 6;
const MEMCPY_INTER_DEVICE_TO_DEVICE: u32 = 7;

/// The host side of a copy: its address, and the `aclrtMallocHost` buffer it lies in when
/// it does (held, so that the memory outlives the copy and a free meanwhile is noticed).
/// Other host memory (heap, stack) is the caller's; its lifetime is invisible here.
pub(crate) struct HostSide {
    addr: usize,
    pinned: Option<Arc<HostAlloc>>,
}

impl HostSide {
    fn check(&self, what: &str) -> Result<(), String> {
        self.pinned.as_ref().map_or(Ok(()), |h| h.still_live(what))
    }

    /// The racecheck access of `count` bytes (pinned memory only).
    fn access(&self, count: usize, write: bool, what: &'static str) -> Option<Access<'_>> {
        self.pinned.as_ref().map(|h| Access {
            region: h.region(),
            lo: self.addr,
            hi: self.addr + count,
            write,
            what,
        })
    }
}

/// The racecheck access of `count` bytes at offset `off` of a device allocation.
fn device_access<'a>(
    (a, off): &'a (Arc<Alloc>, usize),
    count: usize,
    write: bool,
    what: &'static str,
) -> Option<Access<'a>> {
    let lo = a.start + off;
    Some(Access {
        region: a.region(),
        lo,
        hi: lo + count,
        write,
        what,
    })
}

/// A validated copy: what to do once the stream (or the caller) runs it.
pub(crate) enum CopyPlan {
    HostToHost {
        dst: HostSide,
        src: HostSide,
    },
    HostToDevice {
        dst: (Arc<Alloc>, usize),
        src: HostSide,
    },
    DeviceToHost {
        dst: HostSide,
        src: (Arc<Alloc>, usize),
    },
    DeviceToDevice {
        dst: (Arc<Alloc>, usize),
        src: (Arc<Alloc>, usize),
    },
    /// `ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE` on a stream: the host bytes, taken at the call.
    BufferedToDevice {
        dst: (Arc<Alloc>, usize),
        bytes: Vec<u8>,
    },
}

impl CopyPlan {
    /// The devices whose memory the copy touches.
    pub(crate) fn devices(&self) -> impl Iterator<Item = usize> + '_ {
        let (a, b) = match self {
            CopyPlan::HostToHost { .. } => (None, None),
            CopyPlan::HostToDevice { dst, .. } | CopyPlan::BufferedToDevice { dst, .. } => {
                (Some(&dst.0), None)
            }
            CopyPlan::DeviceToHost { src, .. } => (Some(&src.0), None),
            CopyPlan::DeviceToDevice { dst, src } => (Some(&dst.0), Some(&src.0)),
        };
        a.into_iter().chain(b).map(|x| x.device)
    }

    /// What the copy of `count` bytes reads and writes, for the racecheck.
    pub(crate) fn accesses(&self, count: usize) -> Accesses<'_> {
        let (dst, src) = match self {
            CopyPlan::HostToHost { dst, src } => (
                dst.access(count, true, "dst"),
                src.access(count, false, "src"),
            ),
            CopyPlan::HostToDevice { dst, src } => (
                device_access(dst, count, true, "dst"),
                src.access(count, false, "src"),
            ),
            CopyPlan::DeviceToHost { dst, src } => (
                dst.access(count, true, "dst"),
                device_access(src, count, false, "src"),
            ),
            CopyPlan::DeviceToDevice { dst, src } => (
                device_access(dst, count, true, "dst"),
                device_access(src, count, false, "src"),
            ),
            CopyPlan::BufferedToDevice { dst, .. } => {
                (device_access(dst, count, true, "dst"), None)
            }
        };
        [dst, src, None, None, None, None]
    }

    /// Takes the host bytes of a host-to-device plan now, as the runtime's buffer does.
    ///
    /// # Safety
    /// The plan's host source is valid for `count` bytes.
    pub(crate) unsafe fn buffered(self, count: usize) -> CopyPlan {
        match self {
            CopyPlan::HostToDevice { dst, src } => {
                // SAFETY: by the caller's contract.
                let bytes = unsafe { std::slice::from_raw_parts(src.addr as *const u8, count) };
                CopyPlan::BufferedToDevice {
                    dst,
                    bytes: bytes.to_vec(),
                }
            }
            other => other,
        }
    }
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
    if kind > MEMCPY_INTER_DEVICE_TO_DEVICE {
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
        MEMCPY_HOST_TO_BUF_TO_DEVICE => Some((
            Class::Device,
            Class::Host,
            "ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE",
        )),
        MEMCPY_INNER_DEVICE_TO_DEVICE => Some((
            Class::Device,
            Class::Device,
            "ACL_MEMCPY_INNER_DEVICE_TO_DEVICE",
        )),
        MEMCPY_INTER_DEVICE_TO_DEVICE => Some((
            Class::Device,
            Class::Device,
            "ACL_MEMCPY_INTER_DEVICE_TO_DEVICE",
        )),
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
    let host = |what: &str, addr: usize| -> Result<HostSide, i32> {
        let pinned = st
            .pinned_range(what, addr, count)
            .map_err(|m| finding(ACL_ERROR_INVALID_PARAM, m))?;
        Ok(HostSide { addr, pinned })
    };
    let plan = match (dc, sc) {
        (Class::Host, Class::Host) => CopyPlan::HostToHost {
            dst: host("dst", dst)?,
            src: host("src", src)?,
        },
        (Class::Device, Class::Host) => CopyPlan::HostToDevice {
            dst: dev("dst", dst)?,
            src: host("src", src)?,
        },
        (Class::Host, Class::Device) => CopyPlan::DeviceToHost {
            dst: host("dst", dst)?,
            src: dev("src", src)?,
        },
        (Class::Device, Class::Device) => {
            let (d, s) = (dev("dst", dst)?, dev("src", src)?);
            if d.0.device != s.0.device {
                let what = format!(
                    "a copy from device {} memory to device {} memory",
                    s.0.device, d.0.device
                );
                if kind == MEMCPY_INNER_DEVICE_TO_DEVICE {
                    return Err(finding(
                        ACL_ERROR_INVALID_PARAM,
                        format!("kind ACL_MEMCPY_INNER_DEVICE_TO_DEVICE but {what}"),
                    ));
                }
                let (_, current) = st.current_ctx()?;
                crate::peer::check_copy(st, current, d.0.device, s.0.device)?;
            }
            CopyPlan::DeviceToDevice { dst: d, src: s }
        }
    };
    Ok(Some((plan, count)))
}

/// Performs a copy plan.
///
/// # Safety
/// Host addresses in the plan must be valid for the access (`count` bytes).
pub(crate) unsafe fn run_copy(plan: &CopyPlan, count: usize) -> Result<(), String> {
    match plan {
        CopyPlan::HostToHost { dst, src } => {
            dst.check("dst")?;
            src.check("src")?;
            // SAFETY: both are host ranges of `count` bytes by the caller's contract (a
            // pinned one is held by the plan and was checked live); `copy` tolerates
            // overlap.
            unsafe { std::ptr::copy(src.addr as *const u8, dst.addr as *mut u8, count) };
        }
        CopyPlan::HostToDevice { dst: (a, off), src } => {
            still_live("dst", a)?;
            src.check("src")?;
            let mut d = lock(&a.data);
            // SAFETY: src is a host range of `count` bytes (caller's contract; a pinned
            // one is held by the plan and was checked live); the destination slice was
            // bounds-checked at planning time.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    src.addr as *const u8,
                    d[*off..*off + count].as_mut_ptr(),
                    count,
                )
            };
        }
        CopyPlan::DeviceToHost { dst, src: (a, off) } => {
            still_live("src", a)?;
            dst.check("dst")?;
            let s = lock(&a.data);
            // SAFETY: dst is a host range of `count` bytes (caller's contract; a pinned
            // one is held by the plan and was checked live); the source slice was
            // bounds-checked at planning time.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    s[*off..*off + count].as_ptr(),
                    dst.addr as *mut u8,
                    count,
                )
            };
        }
        CopyPlan::BufferedToDevice {
            dst: (a, off),
            bytes,
        } => {
            still_live("dst", a)?;
            lock(&a.data)[*off..*off + count].copy_from_slice(&bytes[..count]);
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
                // Two allocations' locks, always taken in address order: no other path
                // holds two, so two copies in opposite directions cannot deadlock.
                let (s, mut d) = if Arc::as_ptr(sa) < Arc::as_ptr(da) {
                    let s = lock(&sa.data);
                    (s, lock(&da.data))
                } else {
                    let d = lock(&da.data);
                    (lock(&sa.data), d)
                };
                d[*doff..*doff + count].copy_from_slice(&s[*soff..*soff + count]);
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
    status_of(|| {
        let plan = {
            let st = active_state()?;
            plan_copy(&st, dst as usize, dest_max, src as usize, count, kind)?
        };
        if let Some((plan, count)) = plan {
            racecheck::check_host("aclrtMemcpy", &plan.accesses(count))
                .map_err(|m| finding(ACL_ERROR_RT_INTERNAL_ERROR, m))?;
            // SAFETY: host ranges are valid for `count` bytes by the C contract of
            // aclrtMemcpy.
            unsafe { run_copy(&plan, count) }.map_err(|m| finding(ACL_ERROR_INVALID_PARAM, m))?;
        }
        Ok(())
    })
}

pub(crate) unsafe fn memset(
    dev_ptr: *mut c_void,
    max_count: usize,
    value: i32,
    count: usize,
) -> aclError {
    status_of(|| {
        let (a, addr) = {
            let st = active_state()?;
            let addr = non_null_address(dev_ptr, "devPtr")?;
            if count > max_count {
                return Err(finding(
                    ACL_ERROR_INVALID_PARAM,
                    format!("count {count} exceeds maxCount {max_count}"),
                ));
            }
            st.current_ctx()?;
            if count == 0 {
                return Ok(());
            }
            if !st.is_device_addr(addr) {
                return Err(finding(
                    ACL_ERROR_INVALID_PARAM,
                    format!("devPtr {addr:#x} is host memory; aclrtMemset works on device memory"),
                ));
            }
            let a = st
                .device_range("devPtr", addr, count)
                .map_err(|m| finding(ACL_ERROR_INVALID_PARAM, m))?;
            (a, addr)
        };
        let off = addr - a.start;
        let place = (a, off);
        let set = device_access(&place, count, true, "devPtr");
        racecheck::check_host("aclrtMemset", &[set, None, None, None, None, None])
            .map_err(|m| finding(ACL_ERROR_RT_INTERNAL_ERROR, m))?;
        lock(&place.0.data)[off..off + count].fill(value as u8);
        Ok(())
    })
}
