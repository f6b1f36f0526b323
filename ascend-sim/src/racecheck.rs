//! Racecheck: every kernel, copy, memset and collective declares the byte ranges of the
//! allocations it reads and writes, and before the work runs each range is checked
//! against the earlier accesses to the same allocation: two accesses conflict when they
//! overlap and one of them writes, and a conflicting access of another actor must
//! *happen before* the new one. A violation fails the work with a message naming both
//! accesses, their streams, the ranges and the allocation.
//!
//! # Happens-before
//!
//! Vector clocks, one entry per actor. The actors are the streams (each holds one of
//! [`SLOTS`]` - 1` slots while it lives) and the host (slot 0). The edges:
//!
//! * **stream order**: the tasks of one stream are ordered as enqueued;
//! * **host program order**: a task is ordered after every host access (a synchronous
//!   `aclrtMemcpy` or `aclrtMemset`) and every host synchronisation made before it was
//!   enqueued;
//! * **events**: `aclrtRecordEvent` captures its stream's clock at that point of the queue;
//!   `aclrtStreamWaitEvent` makes the waiting stream's later tasks inherit the clock of
//!   the latest record enqueued so far (the record the wait waits for);
//! * **synchronisation**: `aclrtSynchronizeStream` (also the drain of `aclrtDestroyStream`,
//!   `aclrtResetDevice` and `aclFinalize`) and `aclrtSynchronizeEvent` give the host the
//!   stream's or the event's clock.
//!
//! The host is one actor, not one per thread: two host threads that hand work to each
//! other through a mutex or a channel order their calls in a way the simulator cannot
//! see, and a host synchronisation in one thread really has finished the work it waited
//! for, for every thread. Races between host threads are a host sanitizer's business.
//!
//! A stream's slot goes back to the pool when the stream is destroyed, after its queue was
//! drained, and the next stream continues the slot's counter, so the older stream's
//! accesses are seen as ordered before the newer stream's work, which they are: they had
//! finished before that stream existed. A slot's counter saturates at `u32::MAX`.
//!
//! # What it cannot see
//!
//! * Host reads and writes of `aclrtMallocHost` memory through ordinary pointers (filling
//!   a pinned buffer while a queued copy reads it): they are plain loads and stores of the
//!   user's process, no call of the simulator. Only copies and memsets are accounted.
//! * Pageable host memory (heap, stack): the simulator does not know its extent.
//! * Device addresses the user computes and hands to a kernel through a tensor are
//!   accounted as the bytes the tensor's view spans (first to last element), which is
//!   exact for contiguous views and coarser for strided ones: two interleaved strided
//!   views of one buffer written from two streams are reported although their elements
//!   are disjoint.
//! * Streams beyond the first [`SLOTS`]` - 1` alive at once get no slot: their work is not
//!   checked.
//! * A collective orders each rank's stream with its own buffers; that every rank's later
//!   work follows every rank's earlier work (the rendezvous) is not an edge.
//! * Per allocation, the latest [`RECORDS`] unordered accesses are remembered; an older
//!   one is forgotten (its race may go unreported).
//!
//! # Cost
//!
//! A task carries its clock in the queue's ring (no allocation); an allocation's records
//! live in one vector that reaches [`RECORDS`] entries at most, and accesses of one
//! stream replace its earlier ones over the same range, so steady-state launches allocate
//! nothing. `ASCEND_SIM_RACECHECK=0` or [`set_enabled`] turns it off.

use crate::mem::Alloc;
use crate::state::lock;
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
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

/// Turns the racecheck on or off (`ASCEND_SIM_RACECHECK`). Work enqueued while it is off
/// is not checked, and accesses made before it is turned back on are forgotten.
pub(crate) fn set_enabled(on: bool) {
    if on && !ENABLED.load(Ordering::SeqCst) {
        GENERATION.fetch_add(1, Ordering::SeqCst);
    }
    ENABLED.store(on, Ordering::SeqCst);
}

pub(crate) fn enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
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

static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    host: Clock([0; SLOTS]),
    last: [0; SLOTS],
    used: [false; SLOTS],
});

/// A stream as an actor: its slot (`None`: all taken, not checked) and name.
pub(crate) struct Actor {
    slot: Option<u16>,
    who: Who,
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
        tail.join(&lock(&REGISTRY).host);
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
        lock(&REGISTRY).host.join(clock);
    }
}

/// The host's clock for a synchronous access made now.
fn host_stamp() -> Stamp {
    let mut reg = lock(&REGISTRY);
    let own = &mut reg.host.0[HOST];
    *own = own.saturating_add(1);
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
    accesses: &Accesses<'_>,
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
pub(crate) fn check_host(api: &'static str, accesses: &Accesses<'_>) -> Result<(), String> {
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
