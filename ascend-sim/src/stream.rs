//! Asynchronous streams (one worker thread each) and events.
//!
//! The queue is a grow-only ring of [`Task`]s behind one mutex: copies are stored by value,
//! operator kernel calls in boxes recycled through a per-stream free list (moved as one
//! pointer; so are the boxes of consumed executors' layouts), the worker keeps grow-only scratch buffers for the kernel's temporaries, and
//! neither side issues a wake-up unless the other is actually waiting (each polls briefly
//! before it sleeps). After warm-up a stream of kernel calls touches no allocator.

use crate::copy::{CopyPlan, run_copy};
use crate::nnopbase::{KernelCall, Prepared};
use crate::racecheck::{self, Actor, Clock, Stamp, Touch, Who};
use crate::state::{lock, report};
use std::collections::VecDeque;
use std::mem::MaybeUninit;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// A unit of queued work; `Err` is a sanitizer finding that fails the next synchronize.
pub(crate) enum Task {
    /// An operator's phase 2, in a recycled box ([`StreamShared::boxed_call`]); it
    /// carries its operator's kernel.
    Kernel(Box<KernelCall>),
    /// An `aclrtMemcpyAsync` of `count` bytes.
    Copy(CopyPlan, usize),
    /// Anything else (event records and waits, test gates).
    Fn(Box<dyn FnOnce() -> Result<(), String> + Send>),
    /// Work on device memory that is not an operator or a copy (a collective's part),
    /// with the accesses it makes.
    Touching(Box<dyn FnOnce() -> Result<(), String> + Send>, Touch),
}

/// How long a worker that ran out of work polls for more before it sleeps, and how long a
/// synchronising thread polls for completion before it sleeps. A futex wake-up costs tens
/// of microseconds on a busy machine, more than a short copy or kernel; a device does not
/// fall asleep between two copies either.
const WORKER_SPIN: Duration = Duration::from_micros(50);
const WAITER_SPIN: Duration = Duration::from_micros(200);

/// Polls `ready` (yielding the core between polls) for at most `limit`.
fn spin_until(limit: Duration, ready: impl Fn() -> bool) -> bool {
    let start = Instant::now();
    loop {
        if ready() {
            return true;
        }
        if start.elapsed() >= limit {
            return false;
        }
        std::thread::yield_now();
    }
}

thread_local! {
    /// Whether this thread stands for the device (a stream worker or a kernel's helper).
    static ON_DEVICE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether the calling thread is one of the simulator's device threads. Their heap use
/// is the simulated device's, not the host program's: a kernel's GEMM packing buffer
/// (`matrixmultiply` allocates one per call and takes no buffer) is device memory on
/// hardware. Free of allocation, so a counting global allocator may call it.
pub(crate) fn on_device_thread() -> bool {
    ON_DEVICE.try_with(std::cell::Cell::get).unwrap_or(false)
}

/// Marks the calling thread as a device thread for the rest of its life.
pub(crate) fn mark_device_thread() {
    let _ = ON_DEVICE.try_with(|d| d.set(true));
}

/// Runs host code (a user's stream callback) on a device thread, unmarked while it runs.
pub(crate) fn as_host<R>(f: impl FnOnce() -> R) -> R {
    let was = on_device_thread();
    let _ = ON_DEVICE.try_with(|d| d.set(false));
    let r = f();
    let _ = ON_DEVICE.try_with(|d| d.set(was));
    r
}

/// Tasks queued before the first growth of a stream's ring, and the kernel-call boxes
/// (and layout boxes) a stream starts with: like a hardware queue's slots, they exist from the stream's creation,
/// so work that never keeps more queued makes no host allocation however far the worker
/// falls behind (a pool grown on demand would allocate the first time a loaded machine
/// lets the queue run deeper than before).
const INITIAL_QUEUE: usize = 64;

/// Grow-only f32 temporaries of one worker.
#[derive(Default)]
pub(crate) struct Scratch {
    bufs: Vec<Vec<f32>>,
    wide: Vec<Vec<f64>>,
    bytes: Vec<u8>,
}

/// `N` distinct buffers of `n` elements from `pool`, grown as needed.
fn take<T: Copy + Default, const N: usize>(pool: &mut Vec<Vec<T>>, n: usize) -> [&mut [T]; N] {
    if pool.len() < N {
        pool.resize_with(N, Vec::new);
    }
    let mut bufs = pool.iter_mut();
    std::array::from_fn(|_| match bufs.next() {
        Some(b) => {
            if b.len() < n {
                b.resize(n, T::default());
            }
            &mut b[..n]
        }
        None => &mut [],
    })
}

impl Scratch {
    /// `n` bytes (contents unspecified; callers overwrite them).
    pub fn bytes(&mut self, n: usize) -> &mut [u8] {
        if self.bytes.len() < n {
            self.bytes.resize(n, 0);
        }
        &mut self.bytes[..n]
    }

    /// `N` distinct buffers of `n` elements (contents unspecified; callers overwrite
    /// them).
    pub fn get<const N: usize>(&mut self, n: usize) -> [&mut [f32]; N] {
        take(&mut self.bufs, n)
    }

    /// `N` distinct f64 buffers of `n` elements.
    pub fn wide<const N: usize>(&mut self, n: usize) -> [&mut [f64]; N] {
        take(&mut self.wide, n)
    }
}

/// Most empty kernel-call boxes a stream keeps for reuse.
const POOL_MAX: usize = 1024;

/// Drops the kernel call and keeps its box for the next one.
fn empty_box(b: Box<KernelCall>) -> Box<MaybeUninit<KernelCall>> {
    let raw = Box::into_raw(b);
    // SAFETY: `raw` is a valid, uniquely owned `KernelCall` from a `Box`; it is dropped exactly
    // once, and its allocation (same layout for `MaybeUninit<KernelCall>`) is handed back to a
    // `Box` that treats it as uninitialised.
    unsafe {
        std::ptr::drop_in_place(raw);
        Box::from_raw(raw.cast::<MaybeUninit<KernelCall>>())
    }
}

/// What a finished kernel call leaves for its stream to reuse: its box and the box of its
/// executor's layouts (a consumed executor's).
type Spare = (Option<Box<MaybeUninit<KernelCall>>>, Option<Box<Prepared>>);

/// Runs a task once the racecheck found its accesses ordered after the conflicting ones.
fn run_task(
    task: Task,
    stamp: &Stamp,
    scratch: &mut Scratch,
    spare: &mut Spare,
) -> Result<(), String> {
    match task {
        Task::Kernel(mut call) => {
            let r = racecheck::check(stamp, call.api(), &call.accesses())
                .and_then(|()| call.run(scratch));
            spare.1 = call.take_prepared();
            spare.0 = Some(empty_box(call));
            r
        }
        Task::Copy(plan, count) => {
            const API: &str = "aclrtMemcpyAsync";
            racecheck::check(stamp, API, &plan.accesses(count))?;
            // SAFETY: the caller of aclrtMemcpyAsync keeps host buffers valid until the
            // stream has executed the copy (documented CANN contract).
            unsafe { run_copy(&plan, count) }.map_err(|m| format!("{API}: {m}"))
        }
        Task::Fn(f) => f(),
        Task::Touching(f, touch) => {
            // The work runs even when the check fails: a collective's part is awaited by
            // the other ranks, which must not time out for this rank's misuse.
            let checked = racecheck::check(stamp, touch.api, &touch.accesses());
            let r = f();
            checked.and(r)
        }
    }
}

struct Queue {
    /// Each task with its racecheck clock.
    tasks: VecDeque<(Task, Stamp)>,
    /// The racecheck clock of the latest task enqueued.
    clock: Clock,
    submitted: u64,
    completed: u64,
    /// First error since the last synchronize.
    error: Option<String>,
    stop: bool,
    /// The worker is gone: tasks cannot run any more.
    dead: bool,
    /// The worker is blocked waiting for work.
    worker_idle: bool,
    /// Threads blocked in `synchronize`.
    waiters: u32,
    /// Empty kernel-call boxes (boxed on purpose: a call moves through the queue as one
    /// pointer).
    #[allow(clippy::vec_box)]
    pool: Vec<Box<MaybeUninit<KernelCall>>>,
    /// Boxes for the layouts of consumed executors' kernel calls, reused likewise.
    #[allow(clippy::vec_box)]
    preps: Vec<Box<Prepared>>,
}

/// The part of a stream shared with its worker and with synchronizing threads.
pub(crate) struct StreamShared {
    q: Mutex<Queue>,
    /// Signalled when work arrives (only if the worker is idle).
    work: Condvar,
    /// Signalled when work completes (only if someone waits).
    done: Condvar,
    /// Copies of the queue's `submitted` and `completed`, written under its lock, read
    /// without it by the polls above.
    submitted: AtomicU64,
    completed: AtomicU64,
    /// The stream as a racecheck actor.
    actor: Actor,
}

impl StreamShared {
    fn lock(&self) -> MutexGuard<'_, Queue> {
        lock(&self.q)
    }

    /// `call` in a box from the stream's free list (allocated only when it is empty).
    pub fn boxed_call(&self, call: KernelCall) -> Box<KernelCall> {
        let b = self.lock().pool.pop().unwrap_or_else(Box::new_uninit);
        Box::write(b, call)
    }

    /// A box for a consumed executor's layouts (allocated only when the list is empty).
    pub fn spare_prepared(&self) -> Box<Prepared> {
        let b = self.lock().preps.pop();
        b.unwrap_or_else(|| Box::new(Prepared::unused()))
    }

    /// Enqueues a task.
    pub fn submit(&self, task: Task) {
        drop(self.push(task, None));
    }

    /// Enqueues a task that is ordered (for the racecheck) after the work whose clock is
    /// `after`, and returns the stream's clock at the task.
    pub fn submit_ordered(&self, task: Task, after: Option<&Clock>) -> Clock {
        self.push(task, after).clock
    }

    /// Enqueues a task as [`StreamShared::submit_ordered`]; the queue stays locked for
    /// a caller that reads its clock.
    fn push(&self, task: Task, after: Option<&Clock>) -> MutexGuard<'_, Queue> {
        let mut q = self.lock();
        q.submitted += 1;
        self.submitted.store(q.submitted, Ordering::Release);
        if q.dead || q.stop {
            // The worker is gone (cannot happen while the stream is registered); account
            // the task as finished so synchronize does not hang.
            q.completed += 1;
            self.completed.store(q.completed, Ordering::Release);
            q.error
                .get_or_insert_with(|| "stream worker is gone; task dropped".into());
            if q.waiters > 0 {
                self.done.notify_all();
            }
            return q;
        }
        let stamp = self.actor.advance(&mut q.clock, after);
        q.tasks.push_back((task, stamp));
        if q.worker_idle {
            q.worker_idle = false;
            self.work.notify_one();
        }
        q
    }

    /// Waits for every task submitted so far; returns (and clears) the first error.
    pub fn synchronize(&self) -> Option<String> {
        let (target, clock) = {
            let mut q = self.lock();
            if q.completed >= q.submitted {
                racecheck::host_learns(&q.clock);
                return q.error.take();
            }
            (q.submitted, q.clock)
        };
        spin_until(WAITER_SPIN, || {
            self.completed.load(Ordering::Acquire) >= target
        });
        let mut q = self.lock();
        while q.completed < target {
            q.waiters += 1;
            q = self.done.wait(q).unwrap_or_else(|e| e.into_inner());
            q.waiters -= 1;
        }
        racecheck::host_learns(&clock);
        q.error.take()
    }

    /// Waits for every task submitted so far, leaving the error and the racecheck's
    /// happens-before alone (see [`crate::testing::wait_unordered`]).
    pub fn wait_unordered(&self) {
        let mut q = self.lock();
        let target = q.submitted;
        while q.completed < target {
            q.waiters += 1;
            q = self.done.wait(q).unwrap_or_else(|e| e.into_inner());
            q.waiters -= 1;
        }
    }

    fn worker(&self) {
        mark_device_thread();
        let mut scratch = Scratch::default();
        let mut q = self.lock();
        loop {
            let Some((task, stamp)) = q.tasks.pop_front() else {
                if q.stop {
                    break;
                }
                drop(q);
                let more = spin_until(WORKER_SPIN, || {
                    self.submitted.load(Ordering::Acquire) > self.completed.load(Ordering::Acquire)
                });
                q = self.lock();
                if more || !q.tasks.is_empty() || q.stop {
                    continue;
                }
                q.worker_idle = true;
                q = self.work.wait(q).unwrap_or_else(|e| e.into_inner());
                continue;
            };
            drop(q);
            let mut spare = (None, None);
            let result = match catch_unwind(AssertUnwindSafe(|| {
                run_task(task, &stamp, &mut scratch, &mut spare)
            })) {
                Ok(r) => r,
                Err(_) => Err("internal simulator panic in queued work".into()),
            };
            q = self.lock();
            if let Some(b) = spare.0
                && q.pool.len() < POOL_MAX
            {
                q.pool.push(b);
            }
            if let Some(b) = spare.1
                && q.preps.len() < POOL_MAX
            {
                q.preps.push(b);
            }
            q.completed += 1;
            self.completed.store(q.completed, Ordering::Release);
            if let Err(msg) = result {
                report(msg.clone());
                q.error.get_or_insert(msg);
            }
            if q.waiters > 0 {
                self.done.notify_all();
            }
        }
        q.dead = true;
    }
}

/// A stream: its shared part and its worker thread.
pub(crate) struct StreamHandle {
    pub shared: Arc<StreamShared>,
    worker: Option<JoinHandle<()>>,
}

impl StreamHandle {
    /// Starts a stream with a small worker thread; `who` names it in racecheck messages.
    pub fn spawn(label: String, who: Who) -> Result<StreamHandle, String> {
        let mut clock = Clock::default();
        let actor = Actor::new(who, &mut clock);
        let shared = Arc::new(StreamShared {
            q: Mutex::new(Queue {
                tasks: VecDeque::with_capacity(INITIAL_QUEUE),
                clock,
                submitted: 0,
                completed: 0,
                error: None,
                stop: false,
                dead: false,
                worker_idle: false,
                waiters: 0,
                pool: (0..INITIAL_QUEUE).map(|_| Box::new_uninit()).collect(),
                preps: (0..INITIAL_QUEUE)
                    .map(|_| Box::new(Prepared::unused()))
                    .collect(),
            }),
            work: Condvar::new(),
            done: Condvar::new(),
            submitted: AtomicU64::new(0),
            completed: AtomicU64::new(0),
            actor,
        });
        let worker_shared = Arc::clone(&shared);
        let worker = match std::thread::Builder::new()
            .name(label)
            .stack_size(256 * 1024)
            .spawn(move || worker_shared.worker())
        {
            Ok(w) => w,
            Err(e) => {
                shared.actor.release(&shared.lock().clock);
                return Err(format!("cannot start a stream worker thread: {e}"));
            }
        };
        Ok(StreamHandle {
            shared,
            worker: Some(worker),
        })
    }

    /// Drains the queue, stops the worker and joins it. Returns a pending error.
    pub fn shutdown(mut self) -> Option<String> {
        let err = self.shared.synchronize();
        self.stop();
        err
    }

    fn stop(&mut self) {
        {
            let mut q = self.shared.lock();
            q.stop = true;
            q.worker_idle = false;
            self.shared.work.notify_one();
        }
        if let Some(w) = self.worker.take() {
            let _ = w.join();
        }
    }
}

impl Drop for StreamHandle {
    fn drop(&mut self) {
        self.stop();
        // The worker has run its last task: the slot may serve another stream.
        let q = self.shared.lock();
        self.shared.actor.release(&q.clock);
    }
}

#[derive(Default)]
struct EventState {
    recorded: u64,
    completed: u64,
    /// The racecheck clock of the latest record enqueued.
    clock: Clock,
}

/// An event: how many records were enqueued and how many have executed.
#[derive(Default)]
pub(crate) struct EventShared {
    st: Mutex<EventState>,
    cv: Condvar,
}

impl EventShared {
    /// Enqueues a record on `stream`.
    pub fn record(self: &Arc<Self>, stream: &StreamShared) {
        // Held while enqueueing, so that the clock kept is the latest record's. The worker
        // takes this lock without the queue's, so the order is never reversed.
        let mut s = lock(&self.st);
        s.recorded += 1;
        let target = s.recorded;
        let ev = Arc::clone(self);
        s.clock = stream.submit_ordered(
            Task::Fn(Box::new(move || {
                let mut s = lock(&ev.st);
                s.completed = s.completed.max(target);
                ev.cv.notify_all();
                Ok(())
            })),
            None,
        );
    }

    /// Enqueues on `stream` a wait for the latest record enqueued so far (none: no wait).
    pub fn wait_on(self: &Arc<Self>, stream: &StreamShared) {
        let (target, clock) = {
            let s = lock(&self.st);
            (s.recorded, s.clock)
        };
        let ev = Arc::clone(self);
        let wait = Task::Fn(Box::new(move || {
            ev.wait_for(target);
            Ok(())
        }));
        stream.submit_ordered(wait, Some(&clock));
    }

    /// Blocks until the latest record enqueued so far has executed.
    pub fn synchronize(&self) {
        let (target, clock) = {
            let s = lock(&self.st);
            (s.recorded, s.clock)
        };
        self.wait_for(target);
        racecheck::host_learns(&clock);
    }

    fn wait_for(&self, target: u64) {
        let mut s = lock(&self.st);
        while s.completed < target {
            s = self.cv.wait(s).unwrap_or_else(|e| e.into_inner());
        }
    }
}

/// A gate that a queued task waits on (see [`crate::testing::hold_stream`]).
#[derive(Default)]
pub(crate) struct Gate {
    open: Mutex<bool>,
    cv: Condvar,
}

impl Gate {
    pub fn open(&self) {
        *lock(&self.open) = true;
        self.cv.notify_all();
    }

    pub fn wait(&self) {
        let mut o = lock(&self.open);
        while !*o {
            o = self.cv.wait(o).unwrap_or_else(|e| e.into_inner());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;

    /// A stream's worker is a device thread; the thread that queues work is not, and a
    /// host section on the worker is not either.
    #[test]
    fn the_worker_is_a_device_thread() {
        assert!(!on_device_thread());
        let h = StreamHandle::spawn("test".into(), Who::Stream(1)).unwrap();
        let seen = Arc::new([AtomicBool::new(false), AtomicBool::new(true)]);
        let s = Arc::clone(&seen);
        h.shared.submit(Task::Fn(Box::new(move || {
            s[0].store(on_device_thread(), Ordering::SeqCst);
            s[1].store(as_host(on_device_thread), Ordering::SeqCst);
            Ok(())
        })));
        assert_eq!(h.shutdown(), None);
        assert!(
            seen[0].load(Ordering::SeqCst),
            "the worker is a device thread"
        );
        assert!(!seen[1].load(Ordering::SeqCst), "host code on it is not");
        assert!(!on_device_thread());
    }
}
