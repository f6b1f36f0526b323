//! Asynchronous streams (one worker thread each) and events.

use crate::state::{lock, report};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::mpsc::{Sender, channel};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;

/// A unit of queued work; `Err` is a sanitizer finding that fails the next synchronize.
pub(crate) type Task = Box<dyn FnOnce() -> Result<(), String> + Send>;

enum Msg {
    Run(Task),
    Stop,
}

#[derive(Default)]
struct Progress {
    submitted: u64,
    completed: u64,
    /// First error since the last synchronize.
    error: Option<String>,
}

/// The part of a stream shared with its worker and with synchronizing threads.
pub(crate) struct StreamShared {
    tx: Mutex<Sender<Msg>>,
    progress: Mutex<Progress>,
    cv: Condvar,
}

impl StreamShared {
    /// Enqueues a task.
    pub fn submit(&self, task: Task) {
        lock(&self.progress).submitted += 1;
        if lock(&self.tx).send(Msg::Run(task)).is_err() {
            // The worker is gone (cannot happen while the stream is registered); account
            // the task as finished so synchronize does not hang.
            let mut p = lock(&self.progress);
            p.completed += 1;
            p.error
                .get_or_insert_with(|| "stream worker is gone; task dropped".into());
            self.cv.notify_all();
        }
    }

    /// Waits for every task submitted so far; returns (and clears) the first error.
    pub fn synchronize(&self) -> Option<String> {
        let mut p = lock(&self.progress);
        let target = p.submitted;
        while p.completed < target {
            p = self.cv.wait(p).unwrap_or_else(|e| e.into_inner());
        }
        p.error.take()
    }
}

/// A stream: its shared part and its worker thread.
pub(crate) struct StreamHandle {
    pub shared: Arc<StreamShared>,
    worker: Option<JoinHandle<()>>,
}

impl StreamHandle {
    /// Starts a stream with a small worker thread.
    pub fn spawn(label: String) -> Result<StreamHandle, String> {
        let (tx, rx) = channel::<Msg>();
        let shared = Arc::new(StreamShared {
            tx: Mutex::new(tx),
            progress: Mutex::new(Progress::default()),
            cv: Condvar::new(),
        });
        let worker_shared = Arc::clone(&shared);
        let worker = std::thread::Builder::new()
            .name(label)
            .stack_size(256 * 1024)
            .spawn(move || {
                while let Ok(Msg::Run(task)) = rx.recv() {
                    let result = match catch_unwind(AssertUnwindSafe(task)) {
                        Ok(r) => r,
                        Err(_) => Err("internal simulator panic in queued work".into()),
                    };
                    let mut p = lock(&worker_shared.progress);
                    p.completed += 1;
                    if let Err(msg) = result {
                        report(msg.clone());
                        p.error.get_or_insert(msg);
                    }
                    worker_shared.cv.notify_all();
                }
            })
            .map_err(|e| format!("cannot start a stream worker thread: {e}"))?;
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
        // Sending fails only if the worker already exited, which is fine.
        let _ = lock(&self.shared.tx).send(Msg::Stop);
        if let Some(w) = self.worker.take() {
            let _ = w.join();
        }
    }
}

impl Drop for StreamHandle {
    fn drop(&mut self) {
        self.stop();
    }
}

#[derive(Default)]
struct EventState {
    recorded: u64,
    completed: u64,
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
        let target = {
            let mut s = lock(&self.st);
            s.recorded += 1;
            s.recorded
        };
        let ev = Arc::clone(self);
        stream.submit(Box::new(move || {
            let mut s = lock(&ev.st);
            s.completed = s.completed.max(target);
            ev.cv.notify_all();
            Ok(())
        }));
    }

    /// Enqueues on `stream` a wait for the latest record enqueued so far (none: no wait).
    pub fn wait_on(self: &Arc<Self>, stream: &StreamShared) {
        let target = lock(&self.st).recorded;
        let ev = Arc::clone(self);
        stream.submit(Box::new(move || {
            ev.wait_for(target);
            Ok(())
        }));
    }

    /// Blocks until the latest record enqueued so far has executed.
    pub fn synchronize(&self) {
        let target = lock(&self.st).recorded;
        self.wait_for(target);
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
