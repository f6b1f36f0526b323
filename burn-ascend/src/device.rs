//! The device type and the per-device context: the runtime, the device and its one
//! default stream, created on first use and shared by every thread.

use burn_backend::backend::{DeviceId, DeviceOps};
use std::sync::{Arc, Mutex, OnceLock};

/// An Ascend NPU (or, without CANN, a device of the simulator), by its index.
///
/// `AscendDevice::default()` is device 0.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct AscendDevice {
    /// The device index, as `aclrtSetDevice` takes it.
    pub id: usize,
}

impl AscendDevice {
    /// Device `id`.
    pub const fn new(id: usize) -> Self {
        Self { id }
    }
}

impl burn_backend::backend::Device for AscendDevice {
    fn from_id(device_id: DeviceId) -> Self {
        Self::new(usize::from(device_id.index_id))
    }

    fn to_id(&self) -> DeviceId {
        // burn packs the index in a u16; larger indices do not exist on any Ascend host.
        DeviceId::new(0, u16::try_from(self.id).unwrap_or(u16::MAX))
    }
}

impl DeviceOps for AscendDevice {}

/// A device's runtime objects: every operator of the backend is queued on `stream`.
pub(crate) struct Context {
    pub(crate) device: ascendcl::Device,
    pub(crate) stream: ascendcl::Stream,
    pub(crate) math: ascendcl::CubeMath,
}

/// The executor cache's capacity on each device: above the distinct calls of a training
/// step of the MLP (about 90) and CNN examples.
pub const EXECUTOR_CACHE_CAPACITY: usize = 256;

/// The runtime, chosen once per process as [`ascendcl::Runtime::auto`] chooses it.
pub(crate) fn runtime() -> &'static ascendcl::Runtime {
    static RUNTIME: OnceLock<ascendcl::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        ascendcl::Runtime::auto().unwrap_or_else(|e| panic!("burn-ascend: no runtime: {e}"))
    })
}

/// The context of `device`, made on first use. One stream per device serves every
/// thread, so tensors made by data-loader threads are ordered with the training thread's
/// work without events.
pub(crate) fn context(device: &AscendDevice) -> Arc<Context> {
    static CONTEXTS: Mutex<Vec<Option<Arc<Context>>>> = Mutex::new(Vec::new());
    let mut contexts = CONTEXTS.lock().unwrap_or_else(|p| p.into_inner());
    if contexts.len() <= device.id {
        contexts.resize_with(device.id + 1, || None);
    }
    if let Some(ctx) = &contexts[device.id] {
        return Arc::clone(ctx);
    }
    let id = i32::try_from(device.id).unwrap_or(i32::MAX);
    let dev = runtime()
        .device(id)
        .unwrap_or_else(|e| panic!("burn-ascend: device {}: {e}", device.id));
    let stream = dev
        .stream()
        .unwrap_or_else(|e| panic!("burn-ascend: stream of device {}: {e}", device.id));
    // burn calls every operator eagerly: the executor cache makes a call alike a recent
    // one cost about a plan launch. `ASCENDCL_EXECUTOR_CACHE` (0 turns it off) wins.
    if std::env::var_os("ASCENDCL_EXECUTOR_CACHE").is_none() {
        dev.set_executor_cache_capacity(EXECUTOR_CACHE_CAPACITY);
    }
    let math = ascendcl::CubeMath::default_for_device(&dev);
    let ctx = Arc::new(Context {
        device: dev,
        stream,
        math,
    });
    contexts[device.id] = Some(Arc::clone(&ctx));
    ctx
}

/// The executor cache's counters of `device` (hits and misses count the eager operator
/// calls the backend made), as [`ascendcl::Device::executor_cache_stats`] reports them.
pub fn executor_cache_stats(device: &AscendDevice) -> ascendcl::ExecutorCacheStats {
    context(device).device.executor_cache_stats()
}
