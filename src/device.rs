//! [`Device`]: RAII over `aclrtSetDevice` / `aclrtResetDevice` and the device's default
//! context, plus the per-thread context binding.

use crate::error::{Error, Result};
use crate::runtime::{Backend, RuntimeInner};
use crate::stream::Stream;
use crate::sys;
use ascend_sys::{FnTable, aclrtContext};
use std::cell::Cell;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// Source of process-unique ids for devices (context bindings) and streams. Ids are never
/// reused, so a stale per-thread cache entry can never match a new device.
static NEXT_UID: AtomicU64 = AtomicU64::new(1);

pub(crate) fn next_uid() -> u64 {
    NEXT_UID.fetch_add(1, Ordering::Relaxed)
}

thread_local! {
    /// The uid of the device whose context this crate last made current on this thread
    /// (0: unknown). `const`-initialised: reading it never allocates.
    static BOUND: Cell<u64> = const { Cell::new(0) };
}

pub(crate) struct DeviceInner {
    pub(crate) rt: &'static RuntimeInner,
    pub(crate) id: i32,
    uid: u64,
    context: aclrtContext,
    soc: String,
    /// What the SoC supports, decided once from `soc` when the device is opened, so that
    /// operator calls test flags instead of comparing strings.
    pub(crate) caps: Caps,
    leaks: LeakCounters,
}

/// What the crate leaked on this device, because it could not prove that queued work no
/// longer used it (a synchronisation failed).
#[derive(Default)]
struct LeakCounters {
    allocations: AtomicU64,
    bytes: AtomicU64,
    handles: AtomicU64,
}

/// Device resources the crate leaked instead of releasing them under work that might still
/// be running ([`Device::leaks`]). Each leak is also reported through `tracing` (target
/// `ascendcl`, level `WARN`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Leaks {
    /// Device (and pinned staging) allocations not freed.
    pub allocations: u64,
    /// Their size in bytes.
    pub bytes: u64,
    /// Events, tensor descriptors and executors not destroyed.
    pub handles: u64,
}

/// Per-device capability flags derived from the SoC name.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Caps {
    /// `aclnnMishBackward` exists on this SoC.
    pub(crate) mish_backward: bool,
    /// BF16 is in the SoC's dtype list (Atlas A2/A3).
    pub(crate) bf16: bool,
}

impl Caps {
    pub(crate) fn of(soc: &str) -> Caps {
        use crate::ops::mish_backward::{available_on, dtype_supported};
        Caps {
            mish_backward: available_on(soc),
            bf16: dtype_supported(soc, crate::element::DType::BF16),
        }
    }
}

// SAFETY: `context` is an opaque handle that CANN allows any thread to make current
// (`aclrtSetCurrentContext`); the crate binds it before every context-dependent call on
// the calling thread. The other fields are immutable after construction.
unsafe impl Send for DeviceInner {}
// SAFETY: as above; `&DeviceInner` only reads immutable fields or passes the handle to
// thread-safe C functions.
unsafe impl Sync for DeviceInner {}

impl DeviceInner {
    #[inline]
    pub(crate) fn table(&self) -> &'static FnTable {
        self.rt.table()
    }

    /// Makes this device's context current on the calling thread, unless the crate already
    /// did (per-thread cache; no allocation, one TLS read in the common case).
    #[inline]
    pub(crate) fn bind(&self) -> Result<()> {
        if BOUND.try_with(Cell::get).ok() == Some(self.uid) {
            return Ok(());
        }
        self.bind_slow()
    }

    #[cold]
    fn bind_slow(&self) -> Result<()> {
        let t = self.table();
        // SAFETY: `context` is the live default context of this device: the device is
        // reset only when this `DeviceInner` is dropped.
        let code = unsafe { (t.aclrtSetCurrentContext)(self.context) };
        sys::acl(t, "aclrtSetCurrentContext", code)?;
        let _ = BOUND.try_with(|b| b.set(self.uid));
        Ok(())
    }

    /// Whether `other` is the same physical device of the same runtime.
    #[inline]
    pub(crate) fn same_as(&self, other: &DeviceInner) -> bool {
        std::ptr::eq(self.rt, other.rt) && self.id == other.id
    }

    pub(crate) fn soc(&self) -> &str {
        &self.soc
    }

    /// Counts a resource leaked on a release path (see [`Leaks`]).
    #[cold]
    pub(crate) fn note_leak(&self, what: &'static str, allocations: u64, bytes: u64, handles: u64) {
        tracing::warn!(
            device = self.id,
            what,
            allocations,
            bytes,
            handles,
            "leaked rather than released under work that may still be running"
        );
        self.leaks
            .allocations
            .fetch_add(allocations, Ordering::Relaxed);
        self.leaks.bytes.fetch_add(bytes, Ordering::Relaxed);
        self.leaks.handles.fetch_add(handles, Ordering::Relaxed);
    }

    /// Reports a failed release call, which `Drop` cannot return.
    #[cold]
    pub(crate) fn note_release_error(&self, error: &Error) {
        tracing::warn!(device = self.id, %error, "releasing a device resource failed");
    }
}

impl Drop for DeviceInner {
    fn drop(&mut self) {
        let t = self.table();
        // The thread's cached binding may name this device; forget it (the uid is never
        // reused, but a clean cache avoids a useless comparison hit).
        let _ = BOUND.try_with(|b| {
            if b.get() == self.uid {
                b.set(0);
            }
        });
        // SAFETY: every stream, event and buffer of this device holds an `Arc` to this
        // inner, so all of them were released (in the order CANN requires) before this
        // runs.
        let code = unsafe { (t.aclrtResetDevice)(self.id) };
        if let Err(e) = sys::acl(t, "aclrtResetDevice", code) {
            self.note_release_error(&e);
        }
    }
}

/// One device (NPU) of a [`Runtime`](crate::Runtime), opened with `aclrtSetDevice` and
/// reset with `aclrtResetDevice` when the last user is gone.
///
/// A `Device` is a cheap `Clone` handle (`Arc`). Every [`Stream`], [`Event`](crate::Event)
/// and [`DeviceTensor`](crate::DeviceTensor) of the device keeps it alive, so the device
/// is reset only after its last stream, event and tensor have been dropped.
///
/// # Threads and contexts
/// CANN's "current context" is per thread. The crate binds the device's default context
/// on whichever thread calls (cached per thread; `aclrtSetCurrentContext` is called only
/// when the thread's current context differs), so a `Device`, `Stream` or tensor moved to
/// or shared with another thread just works. `Device` is `Send + Sync` for that reason.
/// (Code that changes the current context behind the crate's back with raw calls must
/// restore it.)
///
/// ```
/// # fn main() -> ascendcl::Result<()> {
/// let device = ascendcl::Runtime::auto()?.device(0)?;
/// let mem = device.memory_info()?;
/// assert!(mem.free <= mem.total);
/// let _stream = device.stream()?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Device {
    pub(crate) inner: Arc<DeviceInner>,
}

/// Free and total device memory in bytes (`aclrtGetMemInfo(ACL_HBM_MEM)`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryInfo {
    /// Free bytes.
    pub free: usize,
    /// Total bytes.
    pub total: usize,
}

impl fmt::Debug for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Device")
            .field("id", &self.inner.id)
            .field("soc", &self.inner.soc)
            .field("backend", &self.inner.rt.backend)
            .finish()
    }
}

impl Device {
    pub(crate) fn open(rt: &'static RuntimeInner, id: i32) -> Result<Device> {
        if id < 0 {
            return Err(Error::InvalidArgument(format!(
                "device id {id} is negative"
            )));
        }
        let t = rt.table();
        // SAFETY: aclrtSetDevice takes any id and validates it.
        let code = unsafe { (t.aclrtSetDevice)(id) };
        sys::acl(t, "aclrtSetDevice", code)?;
        // From here on the device is open: reset it on every error path.
        let reset = |e: Error| {
            // SAFETY: balances the successful aclrtSetDevice above.
            let _ = unsafe { (t.aclrtResetDevice)(id) };
            e
        };
        let mut context: aclrtContext = std::ptr::null_mut();
        // SAFETY: the out-pointer is valid; aclrtSetDevice made the device's default
        // context current on this thread.
        let code = unsafe { (t.aclrtGetCurrentContext)(&mut context) };
        sys::acl(t, "aclrtGetCurrentContext", code).map_err(reset)?;
        if context.is_null() {
            return Err(reset(sys::acl_error(
                t,
                "aclrtGetCurrentContext",
                ascend_sys::ACL_ERROR_RT_CONTEXT_NULL,
            )));
        }
        // SAFETY: aclrtGetSocName has no preconditions beyond an initialised runtime with
        // a current context; the returned string is copied immediately.
        let soc_ptr = unsafe { (t.aclrtGetSocName)() };
        if soc_ptr.is_null() {
            // NULL is aclrtGetSocName's failure value; without the SoC name the dtype and
            // operator rules cannot be applied, so the device is not usable.
            return Err(reset(sys::acl_error(
                t,
                "aclrtGetSocName",
                ascend_sys::ACL_ERROR_INTERNAL_ERROR,
            )));
        }
        // SAFETY: non-null, NUL-terminated string owned by the runtime; copied here.
        let soc = unsafe { sys::c_string(soc_ptr) };
        let uid = next_uid();
        let _ = BOUND.try_with(|b| b.set(uid));
        Ok(Device {
            inner: Arc::new(DeviceInner {
                rt,
                id,
                uid,
                context,
                caps: Caps::of(&soc),
                soc,
                leaks: LeakCounters::default(),
            }),
        })
    }

    /// The device id.
    pub fn id(&self) -> i32 {
        self.inner.id
    }

    /// The backend driving this device.
    pub fn backend(&self) -> Backend {
        self.inner.rt.backend
    }

    /// The SoC name (`aclrtGetSocName`), e.g. `"Ascend910B4"`; it decides which dtypes and
    /// operators are available.
    pub fn soc_name(&self) -> &str {
        &self.inner.soc
    }

    /// Free and total device memory.
    ///
    /// # Errors
    /// [`Error::Acl`] from `aclrtSetCurrentContext` or `aclrtGetMemInfo`.
    pub fn memory_info(&self) -> Result<MemoryInfo> {
        self.inner.bind()?;
        let t = self.inner.table();
        let (mut free, mut total) = (0usize, 0usize);
        // SAFETY: the out-pointers are valid; the device's context is current.
        let code = unsafe { (t.aclrtGetMemInfo)(ascend_sys::ACL_HBM_MEM, &mut free, &mut total) };
        sys::acl(t, "aclrtGetMemInfo", code)?;
        Ok(MemoryInfo { free, total })
    }

    /// What the crate leaked on this device so far because a synchronisation on a release
    /// path failed (the failure itself is returned by that stream's next call).
    ///
    /// ```
    /// # fn main() -> ascendcl::Result<()> {
    /// let device = ascendcl::Runtime::auto()?.device(0)?;
    /// assert_eq!(device.leaks().allocations, 0);
    /// # Ok(()) }
    /// ```
    pub fn leaks(&self) -> Leaks {
        let l = &self.inner.leaks;
        Leaks {
            allocations: l.allocations.load(Ordering::Relaxed),
            bytes: l.bytes.load(Ordering::Relaxed),
            handles: l.handles.load(Ordering::Relaxed),
        }
    }

    /// Creates a new stream on this device.
    ///
    /// # Errors
    /// [`Error::Acl`] from `aclrtCreateStream`.
    pub fn stream(&self) -> Result<Stream> {
        Stream::new(&self.inner)
    }

    /// Creates an event on this device, for ordering work between streams.
    ///
    /// # Errors
    /// [`Error::Acl`] from `aclrtCreateEvent`.
    pub fn event(&self) -> Result<crate::Event> {
        crate::Event::new(&self.inner)
    }
}
