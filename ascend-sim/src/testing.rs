//! Helpers for tests of code running on the simulator.

pub use crate::cdylib::cdylib_path;
use crate::state::{Kind, decode, state};
use crate::stream::Gate;
use ascend_sys::aclrtStream;
use std::sync::Arc;

/// Whether the calling thread is one of the simulator's device threads (a stream's worker
/// or a kernel's helper thread; not while it runs a user's `aclrtLaunchCallback`, which is
/// host code). Their heap use stands for the device's own memory, which CANN's callers
/// never see as host allocations; a counting global allocator of a test asks this to
/// count the host program's allocations only. It allocates nothing.
///
/// ```
/// assert!(!ascend_sim::testing::on_device_thread());
/// ```
pub fn on_device_thread() -> bool {
    crate::stream::on_device_thread()
}

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

/// Waits until `stream` (created with `aclrtCreateStream`) has run the work queued so
/// far, *without* ordering the caller after it as `aclrtSynchronizeStream` does: for
/// tests of the racecheck that need work to have run while the host does not know it
/// (on hardware the host could observe that only through memory the simulator does
/// not see). Returns at once for an unknown stream.
pub fn wait_unordered(stream: aclrtStream) {
    let shared = {
        let st = state();
        let Ok(id) = decode(Kind::Stream, stream) else {
            return;
        };
        match st.streams.get(&id) {
            Some(s) => Arc::clone(&s.handle.shared),
            None => return,
        }
    };
    shared.wait_unordered();
}

/// Makes the next `HcclGetRootInfo` of the calling thread name its socket with `token`
/// instead of a random one, so that a test can take the name first (a socket name is
/// otherwise impossible to guess before it is bound).
pub fn next_root_info_token(token: u64) {
    crate::hccl::set_next_token(token);
}

/// Sets this process's frame limit of HCCL messages between processes (64 MiB by default;
/// every process of a job must use the same), so that a test moves small buffers in as
/// many frames as a collective of gigabytes takes.
pub fn set_hccl_frame_limit(bytes: usize) {
    crate::hccl::set_frame_limit(bytes);
}
