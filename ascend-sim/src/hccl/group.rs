//! A group of ranks (the devices of one communicator) and its two meeting points:
//!
//! * **the call**: a rank calling its `k`-th collective waits on the host until every rank
//!   has called its `k`-th one; then they are compared (the same collective, count, dtype,
//!   reduction and root, else `HCCL_E_PARA` on every rank) and each call enqueues its part.
//!   A rank that does not come within the timeout fails every waiting call (and its own,
//!   later) with `HCCL_E_TIMEOUT`.
//! * **the execution**: each rank's stream task for collective `k` waits until every rank's
//!   stream has reached it; the last one to arrive moves the data for all of them. A
//!   stream that does not arrive within the timeout fails the others' tasks, which makes
//!   their streams' next synchronisation fail and records `HCCL_E_TIMEOUT` as the ranks'
//!   asynchronous error.
//!
//! Waiting happens on the group's own lock and condition variable, never under the
//! simulator's global state lock, so other threads' runtime calls proceed meanwhile.
//!
//! Across processes, the process that made the root info holds the group and its meetings
//! (the hub); a rank of another process has a group of its own whose [`Link`] carries its
//! calls and its parts to the hub, where a thread per connection meets the other ranks on
//! its behalf. A rank whose process goes away fails the meetings it has not reached at
//! once, with `HCCL_E_REMOTE` naming it.

use super::movement::{self, Desc, Part};
use super::p2p::{Pairs, Side};
use super::remote::Link;
use crate::state::lock;
use ascend_sys::hccl::*;
use std::collections::BTreeMap;
use std::net::Shutdown;
use std::os::unix::net::UnixStream;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// A failure of a collective: its status and text.
pub(crate) type Failure = (HcclResult, String);

/// Rank `rank`'s arrival at collective `seq` on its stream: what it asked for and its
/// buffers.
pub(crate) struct Arrival {
    pub seq: u64,
    pub rank: usize,
    pub desc: Desc,
    pub part: Part,
}

/// The ranks of one communicator and their meeting points.
pub(crate) struct Group {
    /// Process-unique number, for messages.
    pub id: u64,
    /// The device of each rank.
    pub devices: Vec<usize>,
    state: Mutex<GroupState>,
    cv: Condvar,
    /// The point-to-point transfers between its ranks.
    pub pairs: Pairs,
    /// In another process than the hub: the connections of its one local rank.
    pub remote: Option<Link>,
    /// In the hub: the connections it serves for ranks of other processes.
    served: Mutex<Vec<UnixStream>>,
}

struct GroupState {
    /// The number of the next collective each rank calls.
    next_call: Vec<u64>,
    calls: BTreeMap<u64, Meeting<Desc>>,
    execs: BTreeMap<u64, Meeting<Part>>,
    /// Each rank's first asynchronous error (`HCCL_SUCCESS`: none).
    async_errors: Vec<HcclResult>,
    /// Each rank's collectives enqueued and not yet executed.
    queued: Vec<u64>,
    /// Ranks of other processes that went away, and why.
    gone: Vec<Option<String>>,
    /// Ranks whose communicator was destroyed (in the hub: seen from its goodbye).
    destroyed: Vec<bool>,
}

/// Where the ranks meet for one collective.
struct Meeting<T> {
    items: Vec<Option<T>>,
    arrived: usize,
    /// Set once, by the last rank to arrive or by the first to give up waiting.
    outcome: Option<Result<(), Failure>>,
    /// Ranks that have read the outcome.
    left: usize,
}

impl<T> Meeting<T> {
    fn new(n: usize) -> Self {
        Meeting {
            items: (0..n).map(|_| None).collect(),
            arrived: 0,
            outcome: None,
            left: 0,
        }
    }

    /// The ranks that have not arrived, for a message.
    fn missing(&self) -> String {
        let absent = (0..self.items.len()).filter(|&r| self.items[r].is_none());
        let count = (self.items.len() - self.arrived) as u64;
        super::rank_list(absent.map(|r| r as u64), count)
    }
}

/// Forgets a meeting once every rank has come and gone. One that timed out stays, so that a
/// rank arriving late fails at once instead of waiting for ranks that have moved on.
fn leave<T>(meetings: &mut BTreeMap<u64, Meeting<T>>, seq: u64, n: usize) {
    if let Some(m) = meetings.get_mut(&seq) {
        m.left += 1;
        if m.arrived == n && m.left == n {
            meetings.remove(&seq);
        }
    }
}

impl Group {
    pub(crate) fn new(id: u64, devices: Vec<usize>) -> Group {
        Group::with_link(id, devices, None)
    }

    /// A group in a rank's process other than the hub's: `id` and `devices` are the
    /// hub's, `link` reaches it.
    pub(crate) fn with_link(id: u64, devices: Vec<usize>, link: Option<Link>) -> Group {
        let n = devices.len();
        Group {
            id,
            devices,
            state: Mutex::new(GroupState {
                next_call: vec![0; n],
                calls: BTreeMap::new(),
                execs: BTreeMap::new(),
                async_errors: vec![HCCL_SUCCESS; n],
                queued: vec![0; n],
                gone: vec![None; n],
                destroyed: vec![false; n],
            }),
            cv: Condvar::new(),
            pairs: Pairs::default(),
            remote: link,
            served: Mutex::new(Vec::new()),
        }
    }

    pub(crate) fn size(&self) -> usize {
        self.devices.len()
    }

    fn lock(&self) -> MutexGuard<'_, GroupState> {
        lock(&self.state)
    }

    /// Waits on the group's condition variable until `deadline`; `false` once it passed.
    fn wait<'a>(
        &self,
        g: MutexGuard<'a, GroupState>,
        deadline: Instant,
    ) -> (MutexGuard<'a, GroupState>, bool) {
        let now = Instant::now();
        if now >= deadline {
            return (g, false);
        }
        let (g, _) = self
            .cv
            .wait_timeout(g, deadline - now)
            .unwrap_or_else(|e| e.into_inner());
        (g, true)
    }

    /// The host-side meeting of `rank`'s next collective: waits for every rank's call and
    /// compares them. Returns the collective's number, under which its part is then
    /// enqueued ([`Group::enqueued`]) and executed ([`Group::execute`]).
    pub(crate) fn call(&self, rank: usize, desc: Desc, timeout: Duration) -> Result<u64, Failure> {
        if let Some(link) = &self.remote {
            return link.call(rank, &desc, timeout);
        }
        let n = self.size();
        let mut g = self.lock();
        let seq = g.next_call[rank];
        g.next_call[rank] += 1;
        let m = g.calls.entry(seq).or_insert_with(|| Meeting::new(n));
        if m.outcome.is_none() {
            m.items[rank] = Some(desc);
            m.arrived += 1;
            if m.arrived == n {
                m.outcome = Some(self.compare(seq, &m.items));
                self.cv.notify_all();
            }
        }
        let what = || format!("collective #{seq} of communicator group {}", self.id);
        let deadline = Instant::now() + timeout;
        self.outcome(g, calls, seq, deadline, what, |missing| {
            format!(
                "{}: rank(s) {missing} did not call it within {} ms (rank {rank} called {}); with one process driving several devices, drive each rank from its own thread",
                what(),
                timeout.as_millis(),
                desc.kind.api(),
            )
        })
        .map(|()| seq)
    }

    /// Every rank must have called the same collective with the same parameters.
    fn compare(&self, seq: u64, items: &[Option<Desc>]) -> Result<(), Failure> {
        let Some(Some(first)) = items.first() else {
            return Ok(());
        };
        for (rank, d) in items.iter().enumerate().skip(1) {
            let Some(d) = d else { continue };
            let diff = if d.kind != first.kind {
                Some(format!(
                    "{} and rank 0 called {}",
                    d.kind.api(),
                    first.kind.api()
                ))
            } else if d.count != first.count {
                Some(format!(
                    "count {} where rank 0 has {}",
                    d.count, first.count
                ))
            } else if d.dtype != first.dtype {
                Some(format!(
                    "dtype {} where rank 0 has {}",
                    movement::dtype_name(d.dtype),
                    movement::dtype_name(first.dtype)
                ))
            } else if d.op != first.op {
                let name = |op: Option<u32>| op.map_or("none".into(), movement::op_name);
                Some(format!(
                    "op {} where rank 0 has {}",
                    name(d.op),
                    name(first.op)
                ))
            } else if d.root != first.root {
                Some(format!(
                    "root {} where rank 0 has {}",
                    d.root.unwrap_or(0),
                    first.root.unwrap_or(0)
                ))
            } else {
                None
            };
            if let Some(diff) = diff {
                return Err((
                    HCCL_E_PARA,
                    format!(
                        "collective #{seq} of communicator group {}: the ranks disagree: rank {rank} called {} with {diff}; every rank must make the same call",
                        self.id,
                        d.kind.api()
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Notes that `rank` enqueued a part (executed later by [`Group::execute`]).
    pub(crate) fn enqueued(&self, rank: usize) {
        self.lock().queued[rank] += 1;
    }

    /// `rank`'s collectives enqueued and not yet executed.
    pub(crate) fn queued(&self, rank: usize) -> u64 {
        self.lock().queued[rank]
    }

    /// `rank`'s first asynchronous error (`HCCL_SUCCESS`: none).
    pub(crate) fn async_error(&self, rank: usize) -> HcclResult {
        self.lock().async_errors[rank]
    }

    /// The stream side of a rank's side of a transfer (runs on the rank's stream worker);
    /// see [`Pairs::execute`].
    pub(crate) fn transfer(&self, side: Side, timeout: Duration) -> Result<(), String> {
        let rank = side.rank();
        let outcome = match &self.remote {
            Some(link) => link.transfer(side, timeout),
            None => self.pairs.execute(self.id, side, timeout),
        };
        let mut g = self.lock();
        self.finish(&mut g, rank, outcome)
    }

    /// Keeps (a handle of) a connection served for a rank of another process, to shut it
    /// down with the group.
    pub(crate) fn served(&self, conn: UnixStream) {
        lock(&self.served).push(conn);
    }

    /// `rank` destroyed its communicator.
    pub(crate) fn destroyed(&self, rank: usize) {
        let mut g = self.lock();
        if let Some(slot) = g.destroyed.get_mut(rank) {
            *slot = true;
        }
        self.cv.notify_all();
    }

    /// The hub's last communicator in the group was destroyed. The ranks of other processes
    /// may still move data through the hub (HCCL has no hub: one rank's destroy does not end
    /// the others' transfers), so it waits, up to `limit`, until each rank has destroyed its
    /// communicator or gone away. Then the connections it served are shut down, so that
    /// their threads end and a rank still there learns it.
    pub(crate) fn close_served(&self, limit: Duration) {
        let deadline = Instant::now() + limit;
        let mut g = self.lock();
        while g
            .destroyed
            .iter()
            .zip(&g.gone)
            .any(|(d, gone)| !d && gone.is_none())
        {
            match self.wait(g, deadline) {
                (next, true) => g = next,
                (_, false) => break,
            }
        }
        for c in lock(&self.served).drain(..) {
            let _ = c.shutdown(Shutdown::Both);
        }
    }

    /// `rank`'s process went away (its connection closed without a goodbye): meetings it
    /// has not reached fail at once.
    pub(crate) fn depart(&self, rank: usize, why: String) {
        let mut g = self.lock();
        if let Some(slot) = g.gone.get_mut(rank) {
            slot.get_or_insert(why);
        }
        self.cv.notify_all();
    }

    /// A rank's queued part has run with `outcome`: it counts as executed, and a failure
    /// becomes the rank's asynchronous error (the first one stays).
    fn finish(
        &self,
        g: &mut GroupState,
        rank: usize,
        outcome: Result<(), Failure>,
    ) -> Result<(), String> {
        g.queued[rank] = g.queued[rank].saturating_sub(1);
        match outcome {
            Ok(()) => Ok(()),
            Err((code, text)) => {
                if g.async_errors[rank] == HCCL_SUCCESS {
                    g.async_errors[rank] = code;
                }
                Err(format!("{text} ({})", result_name(code)))
            }
        }
    }

    /// The stream side of collective `seq` for `rank` (runs on the rank's stream worker):
    /// waits for every rank's stream, then the last to arrive moves the data for all.
    pub(crate) fn execute(&self, arrival: Arrival, timeout: Duration) -> Result<(), String> {
        let rank = arrival.rank;
        let outcome = match &self.remote {
            Some(link) => link.execute(&arrival, self.size(), timeout),
            None => self.meet(arrival, timeout),
        };
        let mut g = self.lock();
        self.finish(&mut g, rank, outcome)
    }

    /// The meeting of [`Group::execute`] in the hub, also on behalf of a rank of another
    /// process.
    pub(crate) fn meet(&self, arrival: Arrival, timeout: Duration) -> Result<(), Failure> {
        let (seq, desc) = (arrival.seq, arrival.desc);
        let n = self.size();
        let mut g = self.lock();
        let m = g.execs.entry(seq).or_insert_with(|| Meeting::new(n));
        if m.outcome.is_none() {
            m.items[arrival.rank] = Some(arrival.part);
            m.arrived += 1;
            if m.arrived == n {
                let parts: Vec<Part> = m
                    .items
                    .iter_mut()
                    .map(|p| p.take().unwrap_or_default())
                    .collect();
                // The others wait for the outcome; the data moves without the group's lock.
                drop(g);
                let moved = movement::run(&desc, &parts).map_err(|m| {
                    (
                        HCCL_E_MEMORY,
                        format!(
                            "{} #{seq} of communicator group {}: {m}",
                            desc.kind.api(),
                            self.id
                        ),
                    )
                });
                drop(parts);
                g = self.lock();
                if let Some(m) = g.execs.get_mut(&seq) {
                    m.outcome = Some(moved);
                }
                self.cv.notify_all();
            }
        }
        let what = || {
            format!(
                "{} #{seq} of communicator group {}",
                desc.kind.api(),
                self.id
            )
        };
        let deadline = Instant::now() + timeout;
        self.outcome(g, execs, seq, deadline, what, |missing| {
            format!(
                "{}: the stream(s) of rank(s) {missing} did not reach it within {} ms (a stream blocked behind other work, or waiting for this one)",
                what(),
                timeout.as_millis()
            )
        })
    }

    /// Waits for the outcome of meeting `seq` (`what` names it in messages, made only for a
    /// failure) and leaves it. A rank that went away fails it at once (`HCCL_E_REMOTE`);
    /// one that has not come by `deadline` fails it with `HCCL_E_TIMEOUT` and the text
    /// `late` makes of the missing ranks. Once everyone arrived, the last one is moving the
    /// data: that is waited for. A failed meeting drops the parts already delivered, since
    /// nothing will move.
    fn outcome<T>(
        &self,
        mut g: MutexGuard<'_, GroupState>,
        meetings: Meetings<T>,
        seq: u64,
        deadline: Instant,
        what: impl Fn() -> String,
        late: impl Fn(&str) -> String,
    ) -> Result<(), Failure> {
        let n = self.size();
        loop {
            let (all, gone) = meetings(&mut g);
            let m = all
                .get_mut(&seq)
                .expect("a meeting stays until every rank left");
            if let Some(outcome) = m.outcome.clone() {
                leave(all, seq, n);
                return outcome;
            }
            if m.arrived < n
                && let Some(text) = departed(gone, &m.items)
            {
                m.items.iter_mut().for_each(|p| *p = None);
                m.outcome = Some(Err((HCCL_E_REMOTE, format!("{}: {text}", what()))));
                self.cv.notify_all();
                continue;
            }
            let (guard, in_time) = self.wait(g, deadline);
            g = guard;
            let m = meetings(&mut g).0.get_mut(&seq).expect("as above");
            if !in_time && m.outcome.is_none() && m.arrived < n {
                let text = late(&m.missing());
                m.items.iter_mut().for_each(|p| *p = None);
                m.outcome = Some(Err((HCCL_E_TIMEOUT, text)));
                self.cv.notify_all();
            }
        }
    }
}

/// The meetings of one phase and the ranks gone, borrowed together from the group state.
type Meetings<T> = fn(&mut GroupState) -> (&mut BTreeMap<u64, Meeting<T>>, &[Option<String>]);

fn calls(g: &mut GroupState) -> (&mut BTreeMap<u64, Meeting<Desc>>, &[Option<String>]) {
    (&mut g.calls, &g.gone)
}

fn execs(g: &mut GroupState) -> (&mut BTreeMap<u64, Meeting<Part>>, &[Option<String>]) {
    (&mut g.execs, &g.gone)
}

/// Why the first rank that has not arrived at a meeting with `items` will never come.
fn departed<T>(gone: &[Option<String>], items: &[Option<T>]) -> Option<String> {
    items
        .iter()
        .zip(gone)
        .enumerate()
        .find_map(|(rank, (item, why))| match (item, why) {
            (None, Some(why)) => Some(format!("rank {rank} will not come: {why}")),
            _ => None,
        })
}
