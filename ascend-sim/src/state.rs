//! Process-global state, handles, per-thread error text, sanitizer reports, call counts and
//! fault injection.

use crate::mem::{Alloc, Arena, HostAlloc};
use crate::nnopbase::{Attrs, Executor, TensorDesc};
use crate::slab::{IdMap, Slab};
use crate::stream::{EventShared, StreamHandle};
use crate::{SYMBOL_COUNT, SYMBOLS, Sym};
use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::ffi::{CStr, CString, c_char};
use std::mem::MaybeUninit;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex, MutexGuard};

/// Locks a mutex, ignoring poisoning: every critical section of the simulator leaves its
/// data structurally valid (no `unsafe` invariants span a lock), so a panic elsewhere must
/// not turn into a second panic or into UB.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Lifecycle of the process-wide ACL instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Life {
    NotInitialized,
    Active,
    Finalized,
}

/// One simulated device.
pub(crate) struct Device {
    pub soc: &'static CStr,
    pub family: crate::tables::Family,
    pub arena: Arena,
    /// `aclrtSetDevice` reference count.
    pub refcount: u64,
    /// The default context's id while the device is set.
    pub default_ctx: Option<u64>,
    /// The devices whose memory this one may copy from and to
    /// (`aclrtDeviceEnablePeerAccess`), until its reset.
    pub peers: Vec<usize>,
}

/// A context (default or explicit).
pub(crate) struct Context {
    pub device: usize,
    pub explicit: bool,
    /// The lazily created default stream (`stream == NULL`).
    pub default_stream: Option<StreamHandle>,
}

/// A stream created by `aclrtCreateStream`.
pub(crate) struct StreamRec {
    pub ctx: u64,
    pub device: usize,
    pub handle: StreamHandle,
}

/// An event created by `aclrtCreateEvent`.
pub(crate) struct EventRec {
    pub device: usize,
    pub shared: Arc<EventShared>,
}

/// Everything the simulator knows, behind one lock.
pub(crate) struct State {
    pub life: Life,
    pub devices: Vec<Device>,
    pub next_id: u64,
    pub contexts: IdMap<u64, Context>,
    pub streams: IdMap<u64, StreamRec>,
    pub events: IdMap<u64, EventRec>,
    /// Tensors and executors: generation-checked slabs (allocation-free steady state).
    pub tensors: Slab<TensorDesc>,
    pub executors: Slab<Executor>,
    /// Scalars, arrays and lists (`aclCreateScalar` ...), slabs like tensors.
    pub attrs: Attrs,
    /// Live device allocations by start address.
    pub allocs: BTreeMap<usize, Arc<Alloc>>,
    /// Allocations `aclrtResetDevice` invalidated, by start address: end and device (their
    /// ranges are never handed out again, for use-after-reset messages).
    pub released: BTreeMap<usize, (usize, usize)>,
    /// Allocations (and bytes) and events a reset invalidated while they were alive: still
    /// counted as live, that is leaked.
    pub reset_leaks: crate::Counters,
    /// Live `aclrtMallocHost` buffers by address.
    pub host_allocs: BTreeMap<usize, Arc<HostAlloc>>,
    /// Why a context, stream or event id is no longer valid, for precise messages
    /// (tensors and executors keep theirs in their slab).
    pub dead: IdMap<u64, &'static str>,
    /// Live `aclrtMemPool`s.
    pub pools: IdMap<u64, crate::pool::Pool>,
}

impl State {
    fn new() -> Self {
        State {
            life: Life::NotInitialized,
            devices: Vec::new(),
            next_id: 1,
            contexts: IdMap::default(),
            streams: IdMap::default(),
            events: IdMap::default(),
            tensors: Slab::new(),
            executors: Slab::new(),
            attrs: Attrs::new(),
            allocs: BTreeMap::new(),
            released: BTreeMap::new(),
            reset_leaks: crate::Counters::default(),
            host_allocs: BTreeMap::new(),
            dead: IdMap::default(),
            pools: IdMap::default(),
        }
    }

    pub fn fresh_id(&mut self) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    /// Fails with 100001 unless `aclInit` ran and `aclFinalize` did not.
    pub fn require_active(&self) -> Result<(), i32> {
        match self.life {
            Life::Active => Ok(()),
            Life::NotInitialized => Err(fail(
                ascend_sys::ACL_ERROR_UNINITIALIZE,
                "aclInit has not been called".into(),
            )),
            Life::Finalized => Err(fail(
                ascend_sys::ACL_ERROR_UNINITIALIZE,
                "aclFinalize has already been called; ACL cannot be used again in this process"
                    .into(),
            )),
        }
    }

    /// The calling thread's current context, validated: `(ctx id, device)`.
    pub fn current_ctx(&self) -> Result<(u64, usize), i32> {
        let id = CURRENT_CTX.with(Cell::get);
        if id == 0 {
            return Err(fail(
                ascend_sys::ACL_ERROR_RT_CONTEXT_NULL,
                "no current context on this thread (call aclrtSetDevice or aclrtSetCurrentContext first)"
                    .into(),
            ));
        }
        match self.contexts.get(&id) {
            Some(ctx) => Ok((id, ctx.device)),
            None => Err(fail(
                ascend_sys::ACL_ERROR_RT_CONTEXT_NULL,
                format!(
                    "no usable context: the current context of this thread was {}",
                    self.dead.get(&id).copied().unwrap_or("destroyed")
                ),
            )),
        }
    }

    /// The current context's device, without recording an error.
    pub fn current_device_quiet(&self) -> Option<usize> {
        let id = CURRENT_CTX.with(Cell::get);
        self.contexts.get(&id).map(|c| c.device)
    }

    /// Counts live objects.
    pub fn counters(&self) -> crate::Counters {
        let dev_bytes: u64 = self.allocs.values().map(|a| a.size as u64).sum();
        let host_bytes: u64 = self.host_allocs.values().map(|h| h.size as u64).sum();
        let leaked = &self.reset_leaks;
        crate::Counters {
            allocations: (self.allocs.len() + self.host_allocs.len()) as u64 + leaked.allocations,
            allocated_bytes: dev_bytes + host_bytes + leaked.allocated_bytes,
            tensors: self.tensors.len() as u64,
            executors: self.executors.len() as u64,
            streams: self.streams.len() as u64,
            events: self.events.len() as u64 + leaked.events,
            contexts: self.contexts.values().filter(|c| c.explicit).count() as u64,
            scalars: self.attrs.scalars.len() as u64,
            arrays: self.attrs.array_count() as u64,
            lists: self.attrs.list_count() as u64,
        }
    }

    /// Finds the live allocation containing `addr`.
    pub fn alloc_at(&self, addr: usize) -> Option<&Arc<Alloc>> {
        let (_, a) = self.allocs.range(..=addr).next_back()?;
        (addr < a.start + a.size.max(1)).then_some(a)
    }

    /// Whether `addr` lies in some device's reserved address range.
    pub fn is_device_addr(&self, addr: usize) -> bool {
        self.devices.iter().any(|d| d.arena.contains(addr))
    }
}

/// The global state.
pub(crate) static STATE: LazyLock<Mutex<State>> = LazyLock::new(|| Mutex::new(State::new()));

/// Locks the global state.
pub(crate) fn state() -> MutexGuard<'static, State> {
    lock(&STATE)
}

thread_local! {
    /// The calling thread's current context id (0: none).
    pub(crate) static CURRENT_CTX: Cell<u64> = const { Cell::new(0) };
    /// The API function being executed on this thread, for message prefixes.
    static CURRENT_API: Cell<&'static str> = const { Cell::new("") };
    /// The report most recently handed out to this thread (keeps the pointer valid).
    static REPORT_COPY: RefCell<CString> = RefCell::new(CString::default());
}

/// Latest sanitizer finding, process-wide.
static LAST_REPORT: Mutex<Option<String>> = Mutex::new(None);

fn to_cstring(s: String) -> CString {
    CString::new(s.replace('\0', "\\0")).unwrap_or_default()
}

/// The symbolic name of a status of the running entry point (HCCL's for `Hccl*`).
fn code_name(code: i32) -> &'static str {
    if CURRENT_API.with(Cell::get).starts_with("Hccl") {
        ascend_sys::hccl::result_name(code as ascend_sys::hccl::HcclResult)
    } else {
        ascend_sys::status_name(code)
    }
}

/// Records `msg` as the calling thread's error text (prefixed with the API name) and
/// returns `code`.
pub(crate) fn fail(code: i32, msg: String) -> i32 {
    let api = CURRENT_API.with(Cell::get);
    let text = format!("{api} failed with {} ({code}): {msg}", code_name(code));
    crate::errmsg::record(text);
    code
}

/// Like [`fail`], and also records the text as the latest sanitizer finding.
pub(crate) fn finding(code: i32, msg: String) -> i32 {
    let api = CURRENT_API.with(Cell::get);
    report(format!(
        "{api} failed with {} ({code}): {msg}",
        code_name(code)
    ));
    fail(code, msg)
}

/// Records a sanitizer finding (no error code attached).
pub(crate) fn report(text: String) {
    if crate::config::verbose() {
        eprintln!("ascend-sim: {text}");
    }
    *lock(&LAST_REPORT) = Some(text);
}

pub(crate) fn last_report() -> Option<String> {
    lock(&LAST_REPORT).clone()
}

pub(crate) fn clear_last_report() {
    *lock(&LAST_REPORT) = None;
}

/// `ascendSimLastReport`: a pointer valid until this thread calls it again.
pub(crate) fn last_report_ptr() -> *const c_char {
    let text = last_report().unwrap_or_default();
    REPORT_COPY.with(|c| {
        let mut c = c.borrow_mut();
        *c = to_cstring(text);
        c.as_ptr()
    })
}

// ---------------------------------------------------------------------------------------
// Call counts and fault injection.

/// Counters of the listed symbols, then of the catalogued ones.
const COUNTERS: usize = SYMBOL_COUNT + crate::catalog::CAPACITY;
static CALLS: [AtomicU64; COUNTERS] = [const { AtomicU64::new(0) }; COUNTERS];
/// Absolute call number at which the symbol fails (0: no fault armed).
static FAULT_AT: [AtomicU64; COUNTERS] = [const { AtomicU64::new(0) }; COUNTERS];

/// A simulated symbol's counter index: a listed [`Sym`], or a catalogued entry point's.
pub(crate) trait Counted: Copy {
    fn index(self) -> usize;
}

impl Counted for Sym {
    fn index(self) -> usize {
        self as usize
    }
}

impl Counted for &crate::catalog::Slot {
    fn index(self) -> usize {
        crate::catalog::Slot::index(self)
    }
}

pub(crate) fn symbol_index(name: &str) -> Option<usize> {
    SYMBOLS
        .iter()
        .position(|s| *s == name)
        .or_else(|| crate::catalog::index_of(name))
}

pub(crate) fn call_count(name: &str) -> u64 {
    symbol_index(name).map_or(0, |i| CALLS[i].load(Ordering::SeqCst))
}

/// Arms a fault: the `nth` call from now fails (`nth == 0` disarms).
pub(crate) fn set_fault(name: &str, nth: u64) -> bool {
    let Some(i) = symbol_index(name) else {
        return false;
    };
    let at = if nth == 0 {
        0
    } else {
        CALLS[i].load(Ordering::SeqCst) + nth
    };
    FAULT_AT[i].store(at, Ordering::SeqCst);
    true
}

/// Arms a fault counted from process start (`ASCEND_SIM_FAULT`).
pub(crate) fn set_fault_absolute(i: usize, nth: u64) {
    FAULT_AT[i].store(nth, Ordering::SeqCst);
}

/// A C return value: whether it reports a failure.
pub(crate) trait Outcome: Copy {
    /// `Some(status)` for a failed status, `Some(None)` for a NULL pointer, else `None`.
    fn failure(self) -> Option<Option<i32>>;
}

impl Outcome for i32 {
    fn failure(self) -> Option<Option<i32>> {
        (self != ascend_sys::ACL_SUCCESS).then_some(Some(self))
    }
}

/// `HcclResult` (HCCL_SUCCESS is 0).
impl Outcome for u32 {
    fn failure(self) -> Option<Option<i32>> {
        (self != 0).then_some(Some(self as i32))
    }
}

impl<T> Outcome for *mut T {
    fn failure(self) -> Option<Option<i32>> {
        self.is_null().then_some(None)
    }
}

impl<T> Outcome for *const T {
    fn failure(self) -> Option<Option<i32>> {
        self.is_null().then_some(None)
    }
}

/// The wrapper of every API entry point: counts the call, fires an armed fault, catches
/// panics so that none crosses the C boundary, and makes sure a failure leaves its own
/// `aclGetRecentErrMsg` text.
pub(crate) fn entry<R: Outcome>(sym: impl Counted, failure: R, body: impl FnOnce() -> R) -> R {
    entry_with_fault_effect(sym, failure, || {}, body)
}

/// [`entry`] for a function whose failure has an effect on CANN that an injected fault
/// must have too (`on_fault`, run when the fault fires).
pub(crate) fn entry_with_fault_effect<R: Outcome>(
    sym: impl Counted,
    failure: R,
    on_fault: impl FnOnce(),
    body: impl FnOnce() -> R,
) -> R {
    let i = sym.index();
    let name = crate::catalog::name_of(i);
    let n = CALLS[i].fetch_add(1, Ordering::SeqCst) + 1;
    let previous = CURRENT_API.with(|c| c.replace(name));
    let outer_call = crate::errmsg::begin_call();
    let result = if FAULT_AT[i]
        .compare_exchange(n, 0, Ordering::SeqCst, Ordering::SeqCst)
        .is_ok()
    {
        let code = crate::introspect::fault_code_at(i);
        fail(
            code,
            format!("injected fault (call #{n} of {name}, ASCEND_SIM_FAULT / ascendSimSetFault)"),
        );
        if catch_unwind(AssertUnwindSafe(on_fault)).is_err() {
            finding(
                ascend_sys::ACL_ERROR_INTERNAL_ERROR,
                "internal simulator panic (bug in ascend-sim)".into(),
            );
        }
        failure
    } else {
        match catch_unwind(AssertUnwindSafe(body)) {
            Ok(r) => r,
            Err(_) => {
                finding(
                    ascend_sys::ACL_ERROR_INTERNAL_ERROR,
                    "internal simulator panic (bug in ascend-sim)".into(),
                );
                failure
            }
        }
    };
    // aclGetRecentErrMsg's NULL means "no text", not a failure of its own.
    if i != Sym::aclGetRecentErrMsg as usize && !crate::errmsg::call_has_text() {
        match result.failure() {
            Some(Some(code)) => {
                fail(code, "no more precise reason was recorded".into());
            }
            Some(None) => crate::errmsg::record(format!("{name} returned NULL")),
            None => {}
        }
    }
    crate::errmsg::end_call(outer_call);
    CURRENT_API.with(|c| c.set(previous));
    result
}

/// Runs an introspection entry point without counting, catching panics.
pub(crate) fn guard<R: Copy>(failure: R, body: impl FnOnce() -> R) -> R {
    catch_unwind(AssertUnwindSafe(body)).unwrap_or(failure)
}

// ---------------------------------------------------------------------------------------
// Steps the implementations of the entry points share.

// One status helper serves the runtime and the nn libraries because both spell success 0.
const _: () = assert!(ascend_sys::ACL_SUCCESS == ascend_sys::ACLNN_SUCCESS);

/// The C status of an entry point's body. `fail` or `finding` recorded the text of an
/// `Err` where the check failed, so it is only passed on here.
pub(crate) fn status_of(body: impl FnOnce() -> Result<(), i32>) -> i32 {
    match body() {
        Ok(()) => ascend_sys::ACL_SUCCESS,
        Err(code) => code,
    }
}

/// Locks the global state for a runtime call, which is valid only between `aclInit` and
/// `aclFinalize`.
pub(crate) fn active_state() -> Result<MutexGuard<'static, State>, i32> {
    let st = state();
    st.require_active()?;
    Ok(st)
}

/// Where a C out-parameter points (`None` for NULL), as possibly uninitialised memory:
/// callers commonly pass the address of a variable they have not set yet.
///
/// # Safety
/// `ptr` is NULL or, for `'a`, aligned, writable for a `T` and not accessed through any
/// other pointer.
pub(crate) unsafe fn out_slot<'a, T>(ptr: *mut T) -> Option<&'a mut MaybeUninit<T>> {
    // SAFETY: a non-null `ptr` is aligned, writable and unaliased for `'a` by the caller's
    // contract, and `MaybeUninit` asserts nothing about what it holds now.
    unsafe { ptr.cast::<MaybeUninit<T>>().as_mut() }
}

/// [`out_slot`], failing on NULL with the runtime's parameter error.
///
/// # Safety
/// As for [`out_slot`].
pub(crate) unsafe fn out_param<'a, T>(
    ptr: *mut T,
    name: &str,
) -> Result<&'a mut MaybeUninit<T>, i32> {
    // SAFETY: the caller upholds the same contract.
    unsafe { out_slot(ptr) }.ok_or_else(|| null_param_error(name))
}

/// The address an input pointer carries, failing on NULL like [`out_param`].
pub(crate) fn non_null_address<T>(ptr: *const T, name: &str) -> Result<usize, i32> {
    if ptr.is_null() {
        Err(null_param_error(name))
    } else {
        Ok(ptr as usize)
    }
}

/// The runtime's status and text for a NULL pointer argument.
fn null_param_error(name: &str) -> i32 {
    fail(
        ascend_sys::ACL_ERROR_INVALID_PARAM,
        format!("{name} is NULL"),
    )
}

// ---------------------------------------------------------------------------------------
// Handles: fake pointers `tag << 48 | id`, non-canonical on x86-64 and AArch64, so the
// host can never dereference one, and no handle is ever valid twice (runtime ids are never
// reused; tensor and executor ids carry a slab generation), so a stale handle is always
// recognised.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Context = 0xC7,
    Stream = 0x57,
    Event = 0xE7,
    Tensor = 0x7E,
    Executor = 0xEC,
    Scalar = 0x5C,
    IntArray = 0x1A,
    FloatArray = 0xFA,
    BoolArray = 0xBA,
    TensorList = 0x71,
    ScalarList = 0x51,
    MemPool = 0x9A,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Context => "context",
            Kind::Stream => "stream",
            Kind::Event => "event",
            Kind::Tensor => "aclTensor",
            Kind::Executor => "aclOpExecutor",
            Kind::Scalar => "aclScalar",
            Kind::IntArray => "aclIntArray",
            Kind::FloatArray => "aclFloatArray",
            Kind::BoolArray => "aclBoolArray",
            Kind::TensorList => "aclTensorList",
            Kind::ScalarList => "aclScalarList",
            Kind::MemPool => "aclrtMemPool",
        }
    }
}

const ID_MASK: usize = (1 << 48) - 1;

pub(crate) fn encode<T>(kind: Kind, id: u64) -> *mut T {
    (((kind as usize) << 48) | (id as usize & ID_MASK)) as *mut T
}

/// Decodes a handle of `kind`; `Err` carries a description for messages.
pub(crate) fn decode<T>(kind: Kind, p: *const T) -> Result<u64, String> {
    let v = p as usize;
    if v == 0 {
        return Err(format!("{} handle is NULL", kind.name()));
    }
    if v >> 48 != kind as usize {
        return Err(format!(
            "{v:#x} is not a {} handle of this simulator (foreign or corrupted pointer)",
            kind.name()
        ));
    }
    Ok((v & ID_MASK) as u64)
}

impl State {
    /// Message for a handle id that is not live.
    pub fn stale(&self, kind: Kind, id: u64) -> String {
        format!(
            "{} handle {:#x} is stale ({})",
            kind.name(),
            ((kind as usize) << 48) | id as usize,
            match kind {
                Kind::Tensor => self.tensors.why_dead(id),
                Kind::Executor => self.executors.why_dead(id),
                Kind::Scalar
                | Kind::IntArray
                | Kind::FloatArray
                | Kind::BoolArray
                | Kind::TensorList
                | Kind::ScalarList => self.attrs.why_dead(kind, id),
                _ => self.dead.get(&id).copied().unwrap_or("never created"),
            }
        )
    }
}
