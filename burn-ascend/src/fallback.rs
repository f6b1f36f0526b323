//! Host fallbacks: the methods with no Ascend operator run on burn-ndarray. Each one is
//! counted ([`fallback_count`]) and reported as a `tracing` event (target
//! `burn_ascend::fallback`, field `method`), and moves its tensors through host memory.

use crate::device::AscendDevice;
use crate::tensor::AscendTensor;
use burn_backend::ops::FloatTensorOps;
use burn_backend::{DType, TensorMetadata};
use burn_ndarray::{NdArray, NdArrayDevice, NdArrayTensor};
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};

/// The CPU backend the fallbacks run on (burn-ndarray's defaults).
pub(crate) type Host = NdArray<f32, i64, i8>;

/// The CPU device.
pub(crate) const CPU: NdArrayDevice = NdArrayDevice::Cpu;

static FALLBACKS: AtomicU64 = AtomicU64::new(0);

/// How many backend methods ran on the host since the process started (every thread,
/// every device). A training step with no host fallback leaves it unchanged.
///
/// ```
/// let before = burn_ascend::fallback_count();
/// // ... a training step ...
/// assert_eq!(burn_ascend::fallback_count() - before, 0);
/// ```
pub fn fallback_count() -> u64 {
    FALLBACKS.load(Ordering::Relaxed)
}

/// Counts and reports one host fallback of `method`.
pub(crate) fn host(method: &'static str) {
    FALLBACKS.fetch_add(1, Ordering::Relaxed);
    *PER_METHOD
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .entry(method)
        .or_insert(0) += 1;
    tracing::info!(target: "burn_ascend::fallback", method, "host fallback");
}

/// Drives a future that is ready at once (burn-ndarray's reads never wait).
pub(crate) fn ready<F: Future>(f: F) -> F::Output {
    let mut f = std::pin::pin!(f);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    match f.as_mut().poll(&mut cx) {
        std::task::Poll::Ready(v) => v,
        // burn-ndarray's futures are `async fn`s with no await point.
        std::task::Poll::Pending => panic!("burn-ascend: a host read did not complete"),
    }
}

/// Downloads a tensor to burn-ndarray. Half types are widened to f32, which
/// burn-ndarray computes in (the result is narrowed back by [`up_as`]).
pub(crate) fn nd(t: AscendTensor) -> NdArrayTensor {
    let data = t.to_data();
    let data = match data.dtype {
        DType::F16 | DType::BF16 => data.convert_dtype(DType::F32),
        _ => data,
    };
    NdArrayTensor::from_data(data)
}

/// Uploads a burn-ndarray result to `device`.
pub(crate) fn up(t: NdArrayTensor, device: &AscendDevice) -> AscendTensor {
    let data = match ready(Host::float_into_data(t)) {
        Ok(d) => d,
        Err(e) => panic!("burn-ascend: host fallback: {e}"),
    };
    AscendTensor::from_data(data, device)
}

/// Uploads a burn-ndarray result to `device` as `dtype` (the input's half type).
pub(crate) fn up_as(t: NdArrayTensor, device: &AscendDevice, dtype: DType) -> AscendTensor {
    if t.dtype() == dtype {
        return up(t, device);
    }
    let data = match ready(Host::float_into_data(t)) {
        Ok(d) => d.convert_dtype(dtype),
        Err(e) => panic!("burn-ascend: host fallback: {e}"),
    };
    AscendTensor::from_data(data, device)
}

/// Host fallbacks per method since the process started, most frequent first.
pub fn fallback_counts() -> Vec<(&'static str, u64)> {
    let map = PER_METHOD.lock().unwrap_or_else(|p| p.into_inner());
    let mut v: Vec<_> = map.iter().map(|(k, n)| (*k, *n)).collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    v
}

static PER_METHOD: std::sync::Mutex<std::collections::BTreeMap<&'static str, u64>> =
    std::sync::Mutex::new(std::collections::BTreeMap::new());
