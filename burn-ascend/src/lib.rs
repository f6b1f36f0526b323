//! A [burn](https://burn.dev) backend running on Huawei Ascend NPUs through
//! [`ascendcl`]: on CANN when an installation is found, on the `ascend-sim` simulator
//! otherwise (as [`ascendcl::Runtime::auto`] chooses).
//!
//! ```
//! use burn::tensor::Tensor;
//! use burn_ascend::{Ascend, AscendDevice};
//!
//! let device = AscendDevice::default(); // device 0
//! let a = Tensor::<Ascend, 2>::from_data([[1.0f32, 2.0], [3.0, 4.0]], &device);
//! let b = a.clone().matmul(a.clone()) + a;
//! assert_eq!(b.into_data().to_vec::<f32>().unwrap(), vec![8.0, 12.0, 18.0, 26.0]);
//! ```
//!
//! * **The primitive** is [`ascendcl::Tensor`]: a run-time dtype over shared device
//!   storage, so burn's clones, reshapes of contiguous tensors, permutes, slices with
//!   positive steps and expands are views (no kernel), and a tensor burn may write
//!   (`can_mut`: unique storage, no broadcast axis) takes the in-place form of an operator.
//! * **Where each method runs**: on the device where the crate has an operator (the
//!   unary, binary and tensor–scalar families, matmul, reduce-sum, clamp, max-dim,
//!   comparisons, logical ops, copy and fill, gather and scatter-add, float random
//!   numbers, 2-D convolution and max pooling with their gradients); otherwise on the host through burn-ndarray,
//!   counted by [`fallback_count`] and reported as a `tracing` event (target
//!   `burn_ascend::fallback`, field `method`).
//! * **Streams**: one default stream per device, shared by every thread, so tensors made
//!   by data-loader threads are ordered with the training thread's work.
//! * **Errors**: burn's tensor API has no error channel, so a failing call panics with
//!   the crate's error message (`burn-ascend: <method>: <error>`), as every burn backend
//!   does. A dtype without Ascend storage (u16, u32, u64, i16) panics likewise.
//! * **Quantization** runs on the host in burn-ndarray's format (no quantized Ascend
//!   kernel is wrapped), every method counted as a fallback.

mod device;
mod fallback;
mod ops;
mod tensor;

pub use device::{AscendDevice, EXECUTOR_CACHE_CAPACITY, executor_cache_stats};
pub use fallback::{fallback_count, fallback_counts};
pub use ops::qtensor::AscendQTensor;
pub use tensor::AscendTensor;

use burn_backend::backend::{Backend, BackendTypes, DTypeUsage, DTypeUsageSet, ExecutionError};
use burn_backend::{DType, TensorMetadata};

/// The Ascend backend: `Tensor<Ascend, D>`, or `Tensor<Autodiff<Ascend>, D>` to train.
#[derive(Clone, Copy, Debug, Default)]
pub struct Ascend;

impl BackendTypes for Ascend {
    type Device = AscendDevice;
    type FloatTensorPrimitive = AscendTensor;
    type FloatElem = f32;
    type IntTensorPrimitive = AscendTensor;
    type IntElem = i64;
    type BoolTensorPrimitive = AscendTensor;
    type BoolElem = bool;
    type QuantizedTensorPrimitive = AscendQTensor;
}

impl Backend for Ascend {
    fn name(device: &Self::Device) -> String {
        let ctx = device::context(device);
        format!("ascend<{}:{}>", ctx.device.backend(), ctx.device.soc_name())
    }

    /// Seeds the device's generator (`ascendcl::Device::manual_seed`), which float
    /// `random` draws from on the device, and the host generator of the int `random`
    /// fallback.
    fn seed(device: &Self::Device, seed: u64) {
        device::context(device).device.manual_seed(seed);
        fallback::Host::seed(&fallback::CPU, seed);
    }

    fn sync(device: &Self::Device) -> Result<(), ExecutionError> {
        let ctx = device::context(device);
        ctx.stream
            .synchronize()
            .map_err(|e| ExecutionError::WithContext {
                reason: format!("burn-ascend: sync: {e}"),
            })
    }

    fn dtype_usage(device: &Self::Device, dtype: DType) -> DTypeUsageSet {
        let ctx = device::context(device);
        let bf16 = matches!(
            ctx.device.soc_family(),
            ascendcl::SocFamily::AtlasA2 | ascendcl::SocFamily::AtlasA3
        );
        match dtype {
            DType::F32 | DType::F16 | DType::Flex32 => {
                DTypeUsage::general() | DTypeUsage::Accelerated
            }
            DType::BF16 if bf16 => DTypeUsage::general() | DTypeUsage::Accelerated,
            DType::F64 | DType::I64 | DType::I32 | DType::I8 | DType::U8 => DTypeUsage::general(),
            DType::Bool(burn_backend::BoolStore::Native) => DTypeUsage::general(),
            _ => DTypeUsageSet::empty(),
        }
    }

    fn device_count(_type_id: u16) -> usize {
        device::runtime()
            .device_count()
            .ok()
            .and_then(|n| usize::try_from(n).ok())
            .unwrap_or(0)
    }
}

#[allow(dead_code)]
fn _metadata_is_implemented(t: &AscendTensor) -> DType {
    t.dtype()
}
