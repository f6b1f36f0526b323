//! Helpers for tests of code running on the simulator.

pub use crate::cdylib::cdylib_path;
use crate::state::{Kind, decode, state};
use crate::stream::Gate;
use ascend_sys::aclrtStream;
use std::sync::Arc;

/// Keeps a stream busy until released (or dropped): work queued after it waits.
/// `Send + Sync`.
pub struct StreamHold {
    gate: Arc<Gate>,
}

impl StreamHold {
    /// Lets the stream continue.
    pub fn release(self) {}
}

impl Drop for StreamHold {
    fn drop(&mut self) {
        self.gate.open();
    }
}

impl std::fmt::Debug for StreamHold {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StreamHold")
    }
}

/// Enqueues on `stream` (created with `aclrtCreateStream`; not the default stream) a
/// task that blocks until the returned hold is released, so tests can control what is
/// still queued. `None` if the handle is not a live stream.
pub fn hold_stream(stream: aclrtStream) -> Option<StreamHold> {
    let st = state();
    let id = decode(Kind::Stream, stream).ok()?;
    let s = st.streams.get(&id)?;
    let gate = Arc::new(Gate::default());
    let g = Arc::clone(&gate);
    s.handle
        .shared
        .submit(crate::stream::Task::Fn(Box::new(move || {
            g.wait();
            Ok(())
        })));
    Some(StreamHold { gate })
}
