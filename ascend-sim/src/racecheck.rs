//! Racecheck: cross-stream data races found as the work runs.
//!
//! Every kernel (each tensor argument's bytes, read for an input, written for an output;
//! the workspace it uses, written), asynchronous copy (`dst` written, `src` read), the
//! synchronous `aclrtMemcpy` and `aclrtMemset` (made by the host) and every HCCL
//! collective (a rank's send buffer read, its receive buffer written; a broadcast's root
//! reads) declares which bytes of which device allocation, or of which `aclrtMallocHost`
//! buffer, it reads and writes. Before the work runs, each access is checked against the
//! earlier accesses to the same allocation: when two overlap, one of them writes and they
//! come from different actors (two streams, or a stream and the host), the earlier one
//! must *happen before* the new one.
//!
//! # Happens-before
//!
//! * **Stream order**: the tasks of one stream, as enqueued.
//! * **Events**: `aclrtRecordEvent` on one stream and `aclrtStreamWaitEvent` for that
//!   record on another order the work before the record before the work after the wait
//!   (a wait enqueued before any record orders nothing, as it waits for nothing).
//! * **Synchronisation**: `aclrtSynchronizeStream`, `aclrtSynchronizeEvent`, and the
//!   drain of `aclrtDestroyStream`, `aclrtResetDevice` and `aclFinalize` order the work
//!   they waited for before whatever the host does afterwards.
//! * **Host program order**: a synchronous copy or memset is ordered before the work
//!   enqueued after it returns.
//!
//! The order is tracked with vector clocks: one entry per live stream (up to 127 at once)
//! and one for the host. A destroyed stream's entry is reused by a later stream, which
//! continues its counter: the older stream's accesses then count as ordered before the
//! newer stream's work, and they are, since they had finished (the destroy drained them)
//! before that stream existed. The host is one actor for all its threads: a
//! synchronisation in one thread has really finished that work for every thread, and
//! threads that hand work to each other through host locks or channels order their calls
//! in a way the simulator cannot see. Races between host threads are a host sanitizer's
//! business.
//!
//! # A violation
//!
//! The work that runs second fails without running: a queued task makes its stream's next
//! `aclrtSynchronizeStream` fail with 507000 (`ACL_ERROR_RT_INTERNAL_ERROR`; a
//! collective's part still meets the other ranks, which must not time out for it), a
//! synchronous copy or memset fails at once with 507000, and either is a finding
//! ([`last_report`](crate::last_report)), counted by [`violations`]. The message names
//! both accesses (entry point, argument, stream, read or write, byte range) and the
//! allocation:
//!
//! ```text
//! racecheck: aclnnInplaceMish on stream 0x57000000000002 writes bytes [0x7fc5a7200040,
//! 0x7fc5a7200048) (selfRef) of the device allocation [0x7fc5a7200040, 0x7fc5a7200060),
//! which aclrtMemcpyAsync on stream 0x57000000000003 read at [0x7fc5a7200040,
//! 0x7fc5a7200048) (src) with no happens-before order between the two (...)
//! ```
//!
//! # Cost and switch
//!
//! It is on by default. Each queued task carries its clock in the queue's ring, and an
//! allocation remembers at most 32 accesses (an access ordered after an earlier one over
//! the same bytes replaces it), so steady-state launches allocate nothing; a launch costs
//! a few percent more on the simulator. `ASCEND_SIM_RACECHECK=0` at `aclInit` or
//! [`set_enabled`] turns it off; work enqueued while it is off is never checked.
//!
//! # What it cannot see, and why
//!
//! * Host loads and stores to `aclrtMallocHost` memory through ordinary pointers (filling
//!   a pinned buffer while a queued copy still reads it): they are plain memory accesses
//!   of the caller's process and never reach the simulator. Only copies and memsets on
//!   pinned memory are accounted.
//! * Pageable host memory (heap, stack): the simulator does not know its extent, so it
//!   cannot tell two host buffers apart.
//! * Raw device pointers a user computes: the simulator does not know how a tensor's data
//!   address was derived, only the bytes its view reaches, from its first to its last
//!   element. That is exact for contiguous views and coarser for strided ones: two
//!   interleaved strided views written from two streams are reported although their
//!   elements are disjoint.
//! * Streams beyond 127 alive at once get no entry, and their work is not checked.
//! * A collective orders each rank's stream with its own buffers only; the rendezvous of
//!   all ranks is not an edge between their streams.
//! * Per allocation, only the latest 32 unordered accesses are remembered; a race with an
//!   older one goes unreported.

use crate::mem::Alloc;
use crate::state::lock;
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// Actor slots: the host and up to `SLOTS - 1` live streams.
pub(crate) const SLOTS: usize = 128;
/// Accesses remembered per allocation.
pub(crate) const RECORDS: usize = 32;
const HOST: usize = 0;

static ENABLED: AtomicBool = AtomicBool::new(true);
/// Bumped whenever the check is turned on, so that records and stamps made before (or
/// while it was off, without edges) are not compared with newer ones. 0 marks a task that
/// is not checked.
static GENERATION: AtomicU32 = AtomicU32::new(1);

/// Turns the racecheck on or off for work enqueued from now on, as
/// `ASCEND_SIM_RACECHECK` does at `aclInit` (benchmarks turn it off). Work enqueued while
/// it is off is never checked, and turning it back on forgets the accesses made before.
///
/// ```
/// ascend_sim::racecheck::set_enabled(false);
/// assert!(!ascend_sim::racecheck::enabled());
/// ascend_sim::racecheck::set_enabled(true);
/// assert!(ascend_sim::racecheck::enabled());
/// ```
pub fn set_enabled(on: bool) {
    if on && !ENABLED.load(Ordering::SeqCst) {
        GENERATION.fetch_add(1, Ordering::SeqCst);
    }
    ENABLED.store(on, Ordering::SeqCst);
}

/// Whether the racecheck checks work enqueued now.
pub fn enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

/// Races reported since process start.
static VIOLATIONS: AtomicU64 = AtomicU64::new(0);

/// How many races the racecheck has reported since the process started (each also failed
/// its work and is a finding): a test that must stay race-free compares it before and
/// after.
pub fn violations() -> u64 {
    VIOLATIONS.load(Ordering::SeqCst)
}

fn generation() -> u32 {
    GENERATION.load(Ordering::SeqCst)
}

/// Who performed an access, for messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Who {
    Host,
    /// A stream of `aclrtCreateStream` (its handle).
    Stream(usize),
    /// The default stream of a context (the context's handle).
    Default(usize),
}

impl fmt::Display for Who {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Who::Host => f.write_str("the host (a synchronous call)"),
            Who::Stream(h) => write!(f, "stream {h:#x}"),
            Who::Default(c) => write!(f, "the default stream of context {c:#x}"),
        }
    }
}

/// A vector clock: per actor slot, the latest of its steps known to have happened.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct Clock([u32; SLOTS]);

impl Default for Clock {
    fn default() -> Self {
        Clock([0; SLOTS])
    }
}

impl Clock {
    fn join(&mut self, other: &Clock) {
        for (a, b) in self.0.iter_mut().zip(other.0.iter()) {
            *a = (*a).max(*b);
        }
    }
}

/// The clock of one task, with the actor that runs it.
#[derive(Clone, Copy)]
pub(crate) struct Stamp {
    /// [`GENERATION`] when it was made; 0: not checked.
    generation: u32,
    actor: u16,
    who: Who,
    clock: Clock,
}

impl Stamp {
    /// A task that is not checked.
    pub(crate) const UNCHECKED: Stamp = Stamp {
        generation: 0,
        actor: 0,
        who: Who::Host,
        clock: Clock([0; SLOTS]),
    };
}

struct Registry {
    host: Clock,
    /// Each stream slot's latest step, kept while the slot is free.
    last: [u32; SLOTS],
    used: [bool; SLOTS],
}

/// Bumped (under the registry's lock) whenever the host clock changes, so a stream
/// whose tail already joined the current host clock skips joining it again.
static HOST_VERSION: AtomicU64 = AtomicU64::new(1);

static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    host: Clock([0; SLOTS]),
    last: [0; SLOTS],
    used: [false; SLOTS],
});

/// A stream as an actor: its slot (`None`: all taken, not checked) and name.
pub(crate) struct Actor {
    slot: Option<u16>,
    who: Who,
    /// The [`HOST_VERSION`] of the host clock last joined into the actor's tail (0:
    /// none). Written under the caller's lock of that tail.
    joined: AtomicU64,
}

impl Actor {
    /// Takes a free slot for a new stream; `start` receives the stream's initial clock.
    pub(crate) fn new(who: Who, start: &mut Clock) -> Actor {
        let mut reg = lock(&REGISTRY);
        let slot = (1..SLOTS).find(|&s| !reg.used[s]);
        if let Some(s) = slot {
            reg.used[s] = true;
            *start = Clock::default();
            start.0[s] = reg.last[s];
        }
        Actor {
            slot: slot.map(|s| s as u16),
            who,
            joined: AtomicU64::new(0),
        }
    }

    /// Gives the slot back once the stream's worker has run its last task; `clock` is
    /// the stream's final clock.
    pub(crate) fn release(&self, clock: &Clock) {
        if let Some(s) = self.slot {
            let mut reg = lock(&REGISTRY);
            let s = usize::from(s);
            reg.last[s] = reg.last[s].max(clock.0[s]);
            reg.used[s] = false;
        }
    }

    /// The stamp of the next task of this stream, whose clock is `tail` (updated): after
    /// everything the host has done and, with `join`, after the event record it waits for.
    pub(crate) fn advance(&self, tail: &mut Clock, join: Option<&Clock>) -> Stamp {
        let Some(slot) = self.slot.filter(|_| enabled()) else {
            return Stamp::UNCHECKED;
        };
        // The host clock only grows, and each change bumps its version: a tail that joined
        // this version already holds it.
        if self.joined.load(Ordering::Relaxed) != HOST_VERSION.load(Ordering::Acquire) {
            let reg = lock(&REGISTRY);
            tail.join(&reg.host);
            self.joined
                .store(HOST_VERSION.load(Ordering::Relaxed), Ordering::Relaxed);
        }
        if let Some(j) = join {
            tail.join(j);
        }
        let own = &mut tail.0[usize::from(slot)];
        *own = own.saturating_add(1);
        Stamp {
            generation: generation(),
            actor: slot,
            who: self.who,
            clock: *tail,
        }
    }
}

/// The host has waited for the work whose clock is `clock` (a stream or event
/// synchronisation).
pub(crate) fn host_learns(clock: &Clock) {
    if enabled() {
        let mut reg = lock(&REGISTRY);
        reg.host.join(clock);
        HOST_VERSION.fetch_add(1, Ordering::Release);
    }
}

/// The host's clock for a synchronous access made now.
fn host_stamp() -> Stamp {
    let mut reg = lock(&REGISTRY);
    let own = &mut reg.host.0[HOST];
    *own = own.saturating_add(1);
    HOST_VERSION.fetch_add(1, Ordering::Release);
    Stamp {
        generation: generation(),
        actor: HOST as u16,
        who: Who::Host,
        clock: reg.host,
    }
}

/// One remembered access.
#[derive(Clone, Copy)]
struct Record {
    lo: usize,
    hi: usize,
    write: bool,
    generation: u32,
    actor: u16,
    epoch: u32,
    who: Who,
    api: &'static str,
    what: &'static str,
}

/// The accesses remembered for one allocation.
#[derive(Default)]
pub(crate) struct Shadow {
    records: Mutex<Vec<Record>>,
}

/// The memory an access touches: its allocation's shadow and extent.
#[derive(Clone, Copy)]
pub(crate) struct Region<'a> {
    pub shadow: &'a Shadow,
    pub start: usize,
    pub size: usize,
    /// "device allocation" or "aclrtMallocHost buffer".
    pub kind: &'static str,
}

/// One access of a task: bytes `[lo, hi)` (addresses) of `region`.
#[derive(Clone, Copy)]
pub(crate) struct Access<'a> {
    pub region: Region<'a>,
    pub lo: usize,
    pub hi: usize,
    pub write: bool,
    /// The argument (`self`, `dst`, `recvBuf`, ...).
    pub what: &'static str,
}

/// Most accesses of one task (an operator's arguments and workspace).
pub(crate) const MAX_ACCESSES: usize = 6;

/// The accesses of one task, on the stack.
pub(crate) type Accesses<'a> = [Option<Access<'a>>; MAX_ACCESSES];

/// Checks a queued task's accesses against the earlier ones, remembering them; `Err`: the
/// first unordered conflict, as the task's failure.
pub(crate) fn check(
    stamp: &Stamp,
    api: &'static str,
    accesses: &[Option<Access<'_>>],
) -> Result<(), String> {
    if stamp.generation == 0 || stamp.generation != generation() {
        return Ok(());
    }
    for a in accesses.iter().flatten() {
        check_one(stamp, api, a)?;
    }
    Ok(())
}

/// [`check`] for an access the host makes now (`aclrtMemcpy`, `aclrtMemset`).
pub(crate) fn check_host(api: &'static str, accesses: &[Option<Access<'_>>]) -> Result<(), String> {
    if !enabled() {
        return Ok(());
    }
    check(&host_stamp(), api, accesses)
}

fn check_one(stamp: &Stamp, api: &'static str, a: &Access<'_>) -> Result<(), String> {
    if a.hi <= a.lo {
        return Ok(());
    }
    let current = stamp.generation;
    let ordered = |r: &Record| {
        r.generation != current
            || r.actor == stamp.actor
            || r.epoch <= stamp.clock.0[usize::from(r.actor)]
    };
    let mut records = lock(&a.region.shadow.records);
    if let Some(r) = records
        .iter()
        .find(|r| (r.write || a.write) && r.lo < a.hi && a.lo < r.hi && !ordered(r))
    {
        VIOLATIONS.fetch_add(1, Ordering::SeqCst);
        return Err(message(stamp, api, a, r));
    }
    // An access that is ordered after an earlier one over the same bytes (and writes, or
    // the earlier one only read) stands for it: whatever is unordered with the earlier
    // access is unordered with this one too.
    records.retain(|r| {
        !(r.generation != current
            || (ordered(r) && a.lo <= r.lo && r.hi <= a.hi && (a.write || !r.write)))
    });
    if records.len() >= RECORDS {
        records.remove(0);
    } else if records.capacity() == 0 {
        records.reserve_exact(RECORDS);
    }
    records.push(Record {
        lo: a.lo,
        hi: a.hi,
        write: a.write,
        generation: current,
        actor: stamp.actor,
        epoch: stamp.clock.0[usize::from(stamp.actor)],
        who: stamp.who,
        api,
        what: a.what,
    });
    Ok(())
}

fn message(stamp: &Stamp, api: &'static str, a: &Access<'_>, r: &Record) -> String {
    let verb = |w: bool| if w { "writes" } else { "reads" };
    let past = |w: bool| if w { "wrote" } else { "read" };
    let reg = &a.region;
    format!(
        "racecheck: {api} on {} {} bytes [{:#x}, {:#x}) ({}) of the {} [{:#x}, {:#x}), which {} on {} {} at [{:#x}, {:#x}) ({}) with no happens-before order between the two (neither stream order, an event recorded on one stream and waited for on the other, nor a host synchronisation orders them)",
        stamp.who,
        verb(a.write),
        a.lo,
        a.hi,
        a.what,
        reg.kind,
        reg.start,
        reg.start + reg.size,
        r.api,
        r.who,
        past(r.write),
        r.lo,
        r.hi,
        r.what,
    )
}

/// One access of a queued task that holds its allocation.
pub(crate) struct Held {
    pub alloc: Arc<Alloc>,
    pub lo: usize,
    pub hi: usize,
    pub write: bool,
    pub what: &'static str,
}

/// The accesses of work that is not an operator or a copy (a collective's part).
pub(crate) struct Touch {
    pub api: &'static str,
    pub held: [Option<Held>; 2],
}

impl Touch {
    pub(crate) fn accesses(&self) -> Accesses<'_> {
        let mut out: Accesses<'_> = [None; MAX_ACCESSES];
        for (slot, h) in out.iter_mut().zip(self.held.iter().flatten()) {
            *slot = Some(Access {
                region: h.alloc.region(),
                lo: h.lo,
                hi: h.hi,
                write: h.write,
                what: h.what,
            });
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn access(shadow: &Shadow, lo: usize, hi: usize, write: bool) -> Accesses<'_> {
        let mut out: Accesses<'_> = [None; MAX_ACCESSES];
        out[0] = Some(Access {
            region: Region {
                shadow,
                start: 0,
                size: 64,
                kind: "device allocation",
            },
            lo,
            hi,
            write,
            what: "x",
        });
        out
    }

    fn len(shadow: &Shadow) -> usize {
        lock(&shadow.records).len()
    }

    #[test]
    fn records_are_replaced_by_ordered_accesses_and_bounded() {
        let shadow = Shadow::default();
        let (mut ta, mut tb) = (Clock::default(), Clock::default());
        let a = Actor::new(Who::Stream(1), &mut ta);
        let b = Actor::new(Who::Stream(2), &mut tb);
        // One stream writing the same bytes again and again keeps one record.
        for _ in 0..100 {
            let st = a.advance(&mut ta, None);
            check(&st, "k", &access(&shadow, 0, 16, true)).unwrap();
        }
        assert_eq!(len(&shadow), 1);
        // A read keeps the write it follows; a read ordered after it stands for it.
        let st = a.advance(&mut ta, None);
        check(&st, "k", &access(&shadow, 0, 16, false)).unwrap();
        assert_eq!(len(&shadow), 2);
        let st = b.advance(&mut tb, Some(&ta));
        check(&st, "k", &access(&shadow, 0, 16, false)).unwrap();
        assert_eq!(len(&shadow), 2, "the write and b's read");
        // Unordered reads stay side by side.
        let st = a.advance(&mut ta, None);
        check(&st, "k", &access(&shadow, 0, 16, false)).unwrap();
        assert_eq!(len(&shadow), 3);
        // A write of b ordered after a's read is unordered with nothing: it replaces both.
        let st = b.advance(&mut tb, Some(&ta));
        check(&st, "k", &access(&shadow, 0, 32, true)).unwrap();
        assert_eq!(len(&shadow), 1);
        // Unordered disjoint reads pile up to the bound, the oldest forgotten first.
        for i in 0..2 * RECORDS {
            let st = if i % 2 == 0 {
                a.advance(&mut ta, None)
            } else {
                b.advance(&mut tb, None)
            };
            check(&st, "k", &access(&shadow, 32 + i, 33 + i, false)).unwrap();
        }
        assert_eq!(len(&shadow), RECORDS);
        let st = a.advance(&mut ta, None);
        let e = check(&st, "k", &access(&shadow, 73, 74, true)).unwrap_err();
        assert!(e.contains("stream 0x2 read at [0x49, 0x4a)"), "{e}");
        // b's read of [33, 34) was forgotten: the documented limit.
        check(&st, "k", &access(&shadow, 33, 34, true)).unwrap();
        a.release(&ta);
        b.release(&tb);
    }
}
