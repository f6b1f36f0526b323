//! [`Device`]: RAII over `aclrtSetDevice` / `aclrtResetDevice` and the device's default
//! context, plus the per-thread context binding.

use crate::error::{Error, Result};
use crate::runtime::{Backend, RuntimeInner};
use crate::stream::Stream;
use crate::sys;
use ascend_sys::{FnTable, aclrtContext};
use std::cell::Cell;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

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

/// A device's identity (its runtime's address and its id): two handles of one device
/// have the same key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct DeviceKey {
    rt: usize,
    id: i32,
}

pub(crate) struct DeviceInner {
    pub(crate) rt: &'static RuntimeInner,
    pub(crate) id: i32,
    uid: u64,
    context: aclrtContext,
    soc: String,
    /// Parsed once from `soc` when the device is opened, so that operator rules test an
    /// enum instead of comparing strings.
    family: SocFamily,
    leaks: LeakCounters,
    /// Bit `p` set: this handle enabled peer access to device `p` (ids below 64).
    pub(crate) peers: AtomicU64,
    /// The caching allocator of tensors' device memory.
    pub(crate) cache: Arc<crate::alloc::Cache>,
    /// Recent one-off calls' repeatable executors.
    pub(crate) executors: crate::protocol::cache::ExecutorCache,
    /// The random-number generator, shared by every handle of the device.
    generator: Arc<Mutex<Philox>>,
}

/// The default seed of a device's generator until [`Device::manual_seed`]: torch's
/// default seed for its accelerator generators, so that an unseeded program draws the
/// same `(seed, offset)` pairs as torch_npu would.
pub const DEFAULT_SEED: u64 = 67_280_421_310_721;

/// How far each random operator call advances a device's offset: torch_npu asks its
/// generator for 10 Philox draws per call (`philox_engine_inputs(10)`), which it rounds up
/// to a multiple of 4.
pub const PHILOX_OFFSET_STEP: u64 = 12;

/// A generator's state: the `(seed, offset)` pair the vendor's random operators take.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Philox {
    /// The seed.
    pub seed: u64,
    /// The offset of the next call.
    pub offset: u64,
}

/// Every device's generator, by device: a process-wide table (as torch's default
/// generators are), so that all handles of a device, even opened one after another, draw
/// from one stream. A handful of entries, never removed.
static GENERATORS: Mutex<Vec<(DeviceKey, Arc<Mutex<Philox>>)>> = Mutex::new(Vec::new());

/// The generator of the device `key`, made with [`DEFAULT_SEED`] on first use.
fn generator_of(key: DeviceKey) -> Arc<Mutex<Philox>> {
    let mut all = GENERATORS.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some((_, g)) = all.iter().find(|(k, _)| *k == key) {
        return Arc::clone(g);
    }
    let g = Arc::new(Mutex::new(Philox {
        seed: DEFAULT_SEED,
        offset: 0,
    }));
    all.push((key, Arc::clone(&g)));
    g
}

/// What the crate leaked on this device, because it could not prove that queued work no
/// longer used it (a synchronisation failed).
#[derive(Default)]
struct LeakCounters {
    allocations: AtomicU64,
    bytes: AtomicU64,
    handles: AtomicU64,
    release_errors: AtomicU64,
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

/// The product family of a SoC, parsed from its name (`aclrtGetSocName`). Operators state
/// their availability and dtype lists per family.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SocFamily {
    /// Atlas A3 training/inference series (`"Ascend910_93*"`).
    AtlasA3,
    /// Atlas A2 training/inference series (`"Ascend910B*"`).
    AtlasA2,
    /// Atlas training series, the first Ascend 910 (`"Ascend910A"`, `"Ascend910ProB"`, ...).
    Training910,
    /// Atlas inference series (`"Ascend310P*"`).
    Inference310P,
    /// Atlas 200I/500 A2 (`"Ascend310B*"`).
    Atlas310B,
    /// A SoC name this crate does not know; operators leave the decision to the library.
    Other,
}

impl SocFamily {
    /// The family of a SoC name.
    ///
    /// ```
    /// use ascendcl::SocFamily;
    /// assert_eq!(SocFamily::of("Ascend910B4"), SocFamily::AtlasA2);
    /// assert_eq!(SocFamily::of("Ascend910_9391"), SocFamily::AtlasA3);
    /// assert_eq!(SocFamily::of("Ascend910A"), SocFamily::Training910);
    /// assert_eq!(SocFamily::of("Ascend310P3"), SocFamily::Inference310P);
    /// assert_eq!(SocFamily::of("Ascend310B1"), SocFamily::Atlas310B);
    /// assert_eq!(SocFamily::of("Ascend999"), SocFamily::Other);
    /// ```
    pub fn of(soc: &str) -> SocFamily {
        // Longest prefixes first: "Ascend910B" and "Ascend910_93" also start "Ascend910".
        const PREFIXES: [(&str, SocFamily); 5] = [
            ("Ascend910_93", SocFamily::AtlasA3),
            ("Ascend910B", SocFamily::AtlasA2),
            ("Ascend910", SocFamily::Training910),
            ("Ascend310P", SocFamily::Inference310P),
            ("Ascend310B", SocFamily::Atlas310B),
        ];
        PREFIXES
            .iter()
            .find(|(prefix, _)| soc.starts_with(prefix))
            .map_or(SocFamily::Other, |(_, family)| *family)
    }

    /// Whether the family's vector units compute in bfloat16 (Atlas A2 and A3).
    pub fn has_bf16(self) -> bool {
        matches!(self, SocFamily::AtlasA2 | SocFamily::AtlasA3)
    }

    /// The product line of the operator tables (`None` for [`SocFamily::Other`]).
    pub(crate) fn product(self) -> Option<ascend_ops::Product> {
        use ascend_ops::Product;
        match self {
            SocFamily::AtlasA3 => Some(Product::AtlasA3),
            SocFamily::AtlasA2 => Some(Product::AtlasA2),
            SocFamily::Training910 => Some(Product::Training910),
            SocFamily::Inference310P => Some(Product::Inference310P),
            SocFamily::Atlas310B => Some(Product::Atlas310B),
            SocFamily::Other => None,
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
        // SAFETY: `context` is the live default context of this device: the device is
        // reset only when this `DeviceInner` is dropped.
        unsafe { sys::set_current_context(self.table(), self.context) }?;
        let _ = BOUND.try_with(|b| b.set(self.uid));
        Ok(())
    }

    /// Whether `other` is the same physical device of the same runtime.
    #[inline]
    pub(crate) fn same_as(&self, other: &DeviceInner) -> bool {
        self.key() == other.key()
    }

    /// What identifies the device (its runtime and id), for records that outlive the
    /// handles ([`Clock`](crate::clock::Clock)).
    pub(crate) fn key(&self) -> DeviceKey {
        DeviceKey {
            rt: std::ptr::from_ref(self.rt) as usize,
            id: self.id,
        }
    }

    /// `Ok` when `self`, the device of `argument`, is `expected` (the device of the stream
    /// or communicator it is used with); otherwise [`Error::DeviceMismatch`].
    #[inline]
    pub(crate) fn expect_same(&self, expected: &DeviceInner, argument: &'static str) -> Result<()> {
        if self.same_as(expected) {
            Ok(())
        } else {
            Err(device_mismatch(argument, expected, self))
        }
    }

    pub(crate) fn soc(&self) -> &str {
        &self.soc
    }

    fn lock_generator(&self) -> std::sync::MutexGuard<'_, Philox> {
        // The state is two integers, valid whatever a panicking holder left.
        self.generator
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// See [`Device::next_philox`].
    pub(crate) fn next_philox(&self) -> Philox {
        let mut g = self.lock_generator();
        let now = *g;
        g.offset = g.offset.wrapping_add(PHILOX_OFFSET_STEP);
        now
    }

    #[inline]
    pub(crate) fn family(&self) -> SocFamily {
        self.family
    }

    /// Counts a resource leaked on a release path (see [`Leaks`]).
    #[cold]
    pub(crate) fn note_leak(&self, what: &'static str, allocations: u64, bytes: u64, handles: u64) {
        if allocations == 0 && bytes == 0 && handles == 0 {
            return; // nothing was held, so nothing leaked
        }
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
        self.leaks.release_errors.fetch_add(1, Ordering::Relaxed);
    }
}

impl Drop for DeviceInner {
    fn drop(&mut self) {
        let t = self.table();
        // Every stream is gone, so the cached executors' launches have been ordered; the
        // parked ones go with the cache's emptying.
        self.executors.clear(self);
        // While the thread's binding may still name this device (no context call).
        let _ = self.cache.empty(self);
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
        if let Err(e) = unsafe { sys::reset_device(t, self.id) } {
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
        sys::set_device(t, id)?;
        // From here on the device is open: reset it on every error path.
        let reset = |e: Error| {
            // SAFETY: balances the successful aclrtSetDevice above; nothing was created.
            let _ = unsafe { sys::reset_device(t, id) };
            e
        };
        // aclrtSetDevice made the device's default context current on this thread. Without
        // the SoC name no operator rule can be applied, so the device is not usable.
        let context = sys::current_context(t).map_err(reset)?;
        let soc = sys::soc_name(t).map_err(reset)?;
        let uid = next_uid();
        let _ = BOUND.try_with(|b| b.set(uid));
        let generator = generator_of(DeviceKey {
            rt: std::ptr::from_ref(rt) as usize,
            id,
        });
        Ok(Device {
            inner: Arc::new(DeviceInner {
                rt,
                id,
                uid,
                context,
                family: SocFamily::of(&soc),
                soc,
                leaks: LeakCounters::default(),
                peers: AtomicU64::new(0),
                cache: rt.cache(id),
                executors: crate::protocol::cache::ExecutorCache::new(
                    crate::protocol::cache::default_capacity(),
                ),
                generator,
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

    /// The SoC name (`aclrtGetSocName`), e.g. `"Ascend910B4"`.
    pub fn soc_name(&self) -> &str {
        &self.inner.soc
    }

    /// The SoC's product family, which decides which operators and dtypes are available.
    pub fn soc_family(&self) -> SocFamily {
        self.inner.family
    }

    /// Free and total device memory.
    ///
    /// # Errors
    /// [`Error::Acl`] from `aclrtSetCurrentContext` or `aclrtGetMemInfo`.
    pub fn memory_info(&self) -> Result<MemoryInfo> {
        self.inner.bind()?;
        let (free, total) = sys::mem_info(self.inner.table())?;
        Ok(MemoryInfo { free, total })
    }

    /// The caching allocator's figures: bytes held by live tensors and stream
    /// workspaces, bytes reserved from the device (those plus the cache), the peak of the
    /// first, `aclrtMalloc` and `aclrtFree` calls, allocations served from the cache,
    /// cached blocks split to serve them, and the cache's free pieces (fragmentation).
    /// Every handle of the device shares the cache and these figures.
    ///
    /// ```
    /// # fn main() -> ascendcl::Result<()> {
    /// let device = ascendcl::Runtime::auto()?.device(0)?;
    /// let stats = device.memory_stats();
    /// assert!(stats.allocated <= stats.reserved);
    /// # Ok(()) }
    /// ```
    pub fn memory_stats(&self) -> crate::MemoryStats {
        self.inner.cache.stats()
    }

    /// Frees the cached memory with `aclrtFree`: every whole `aclrtMalloc` allocation none
    /// of whose pieces a live tensor or stream workspace holds, after waiting on the host
    /// for the queued work that may still use it. A block whose work cannot be proved
    /// finished is leaked and counted in [`leaks`](Self::leaks). Dropped plans waiting
    /// for their launches are released the same way.
    ///
    /// Call it to give memory back to other processes or to code that calls `aclrtMalloc`
    /// itself, or to see exactly which memory live tensors hold
    /// ([`memory_stats`](Self::memory_stats) `reserved` then counts only the allocations
    /// they hold pieces of). The allocator also empties the cache by itself before it
    /// reports out of memory.
    ///
    /// ```standalone_crate
    /// # fn main() -> ascendcl::Result<()> {
    /// let device = ascendcl::Runtime::auto()?.device(0)?;
    /// let s = device.stream()?;
    /// drop(ascendcl::DeviceTensor::<f32>::zeros(&s, &[1024])?);
    /// assert!(device.memory_stats().reserved > 0); // cached
    /// device.empty_cache();
    /// assert_eq!(device.memory_stats().reserved, 0);
    /// # Ok(()) }
    /// ```
    pub fn empty_cache(&self) {
        let _ = self.inner.cache.empty(&self.inner);
    }

    /// Turns the caching allocator of this device on or off (on by default).
    ///
    /// On, dropping a tensor never waits: its block returns to the cache with the queued
    /// work that may still use it, and a later tensor that fits takes it (or a piece of
    /// it), ordered after that work like any other use. Off, a drop waits for that work
    /// and frees the block's allocation once no piece of it is held; turning caching off
    /// empties the cache. Off suits code that must see each `aclrtFree` as it happens
    /// (leak hunts, sharing the device with code that allocates behind the crate).
    ///
    /// The cache belongs to the device: every handle of it (another `Runtime::device`
    /// call included) shares it, with its figures, so this turns caching on or off for
    /// all of them. (The examples of this and [`empty_cache`](Self::empty_cache) run in a
    /// process of their own for that reason.)
    ///
    /// ```standalone_crate
    /// # fn main() -> ascendcl::Result<()> {
    /// let device = ascendcl::Runtime::auto()?.device(0)?;
    /// let s = device.stream()?;
    /// drop(ascendcl::DeviceTensor::from_array(&s, &ndarray::arr1(&[1.0f32, 2.0]))?);
    /// let before = device.memory_stats();
    /// drop(ascendcl::DeviceTensor::from_array(&s, &ndarray::arr1(&[3.0f32, 4.0]))?);
    /// assert_eq!(device.memory_stats().device_allocations, before.device_allocations);
    /// device.set_caching(false);
    /// assert_eq!(device.memory_stats().reserved, 0);
    /// # Ok(()) }
    /// ```
    pub fn set_caching(&self, on: bool) {
        self.inner.cache.set_enabled(&self.inner, on);
    }

    /// Sets how many prepared executors this device handle keeps for one-off calls (0
    /// turns the cache off; the default is `ASCENDCL_EXECUTOR_CACHE`, else 0), evicting
    /// the least recently used beyond it.
    ///
    /// With the cache on, a one-off call whose operator, tensor dtypes, dims, strides and
    /// offsets, optional arguments (given or absent) and attribute values (bit for bit)
    /// match a recent call's launches that call's repeatable executor, rebinding only the
    /// device addresses, as a [`Plan`](crate::Plan) launch does: phase 1 runs once per
    /// key. Every call is still validated; a call with another key runs phase 1, which
    /// reports what it would for a fresh executor; a launch that fails drops its entry.
    /// An entry is used by one call at a time (two threads calling alike at once make
    /// two). Evicted entries, and those left when the last handle of the device (its
    /// streams and tensors included) is dropped, are released after their queued launches,
    /// as a dropped plan is. A hit does not allocate. Where the library lacks executor
    /// reuse (before CANN 8.0), calls stay plain whatever the capacity.
    ///
    /// ```
    /// # fn main() -> ascendcl::Result<()> {
    /// use ascendcl::DeviceTensor;
    /// let device = ascendcl::Runtime::auto()?.device(0)?;
    /// device.set_executor_cache_capacity(16);
    /// let s = device.stream()?;
    /// let x = DeviceTensor::from_array(&s, &ndarray::array![1.0f32, 2.0])?;
    /// let mut y = DeviceTensor::<f32>::zeros(&s, &[2])?;
    /// for _ in 0..3 {
    ///     ascendcl::add(&x, &x, 0.5, &mut y, &s)?;
    /// }
    /// let stats = device.executor_cache_stats();
    /// assert_eq!((stats.misses, stats.hits), (1, 2));
    /// # Ok(()) }
    /// ```
    pub fn set_executor_cache_capacity(&self, capacity: usize) {
        self.inner.executors.set_capacity(&self.inner, capacity);
    }

    /// The executor cache's hits, misses, evictions, invalidations, entries and capacity
    /// (see [`set_executor_cache_capacity`](Self::set_executor_cache_capacity)).
    pub fn executor_cache_stats(&self) -> crate::ExecutorCacheStats {
        self.inner.executors.stats()
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

    /// How many failures on this device's release paths no caller could be told of: a
    /// failed `aclrtFree`, `aclrtFreeHost`, `aclrtDestroyEvent`, `aclrtDestroyStream`,
    /// `aclDestroyTensor`, `aclDestroyAclOpExecutor` or `HcclCommDestroy` inside a `Drop`,
    /// a stream's drain that failed in its `Drop`, and an error parked on a stream that
    /// was dropped before any call returned it. Each is also reported through `tracing`.
    /// A resource whose release failed is still counted in [`leaks`](Self::leaks) (the
    /// runtime may still hold it).
    ///
    /// ```
    /// # fn main() -> ascendcl::Result<()> {
    /// let device = ascendcl::Runtime::auto()?.device(0)?;
    /// drop(device.stream()?);
    /// assert_eq!(device.release_errors(), 0);
    /// # Ok(()) }
    /// ```
    pub fn release_errors(&self) -> u64 {
        self.inner.leaks.release_errors.load(Ordering::Relaxed)
    }

    /// Seeds the device's random-number generator and rewinds its offset to 0, as
    /// `torch.npu.manual_seed`: the random operators ([`inplace_uniform`](crate::inplace_uniform),
    /// [`inplace_normal`](crate::inplace_normal), [`inplace_bernoulli`](crate::inplace_bernoulli),
    /// ...) then draw the same numbers again. One generator serves every handle of the
    /// device in the process; it is thread-safe (each call takes its pair atomically).
    ///
    /// ```
    /// # fn main() -> ascendcl::Result<()> {
    /// use ascendcl::{DeviceTensor, Runtime, inplace_uniform};
    /// let device = Runtime::auto()?.device(0)?;
    /// let stream = device.stream()?;
    /// let mut a = DeviceTensor::<f32>::zeros(&stream, [8])?;
    /// let mut b = DeviceTensor::<f32>::zeros(&stream, [8])?;
    /// device.manual_seed(7);
    /// inplace_uniform(&mut a, 0.0, 1.0, &stream)?;
    /// device.manual_seed(7);
    /// inplace_uniform(&mut b, 0.0, 1.0, &stream)?;
    /// assert_eq!(a.to_array::<ndarray::Ix1>(&stream)?, b.to_array::<ndarray::Ix1>(&stream)?);
    /// # Ok(()) }
    /// ```
    pub fn manual_seed(&self, seed: u64) {
        self.set_generator_state(Philox { seed, offset: 0 });
    }

    /// The generator's state: its seed and the offset the next random call will use.
    pub fn generator_state(&self) -> Philox {
        *self.inner.lock_generator()
    }

    /// Sets the generator's seed and offset (to replay from a saved
    /// [`generator_state`](Self::generator_state)).
    pub fn set_generator_state(&self, state: Philox) {
        *self.inner.lock_generator() = state;
    }

    /// Takes the generator's `(seed, offset)` for one random call and advances the offset
    /// by [`PHILOX_OFFSET_STEP`], as torch_npu does before each random operator. The
    /// random operators call it; a caller of the explicit-seed forms
    /// ([`inplace_uniform_seeded`](crate::inplace_uniform_seeded), ...) may too.
    pub fn next_philox(&self) -> Philox {
        self.inner.next_philox()
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

#[cold]
#[inline(never)]
fn device_mismatch(argument: &'static str, expected: &DeviceInner, found: &DeviceInner) -> Error {
    Error::DeviceMismatch {
        argument,
        expected: expected.id,
        found: found.id,
    }
}
