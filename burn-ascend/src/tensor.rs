//! The primitive: an [`ascendcl::Tensor`] (run-time dtype, shared storage, views) and its
//! device, with the dtype conversions between burn and the crate and the transfers.

use crate::device::{AscendDevice, Context, context};
use burn_backend::BoolStore;
use burn_backend::{DType, Shape, TensorData, TensorMetadata};
use std::sync::Arc;

/// burn's tensor primitive on Ascend: float, int and bool tensors alike. Cloning shares
/// the storage; reshapes, permutes, slices and expands of it are views (no kernel).
#[derive(Clone)]
pub struct AscendTensor {
    pub(crate) tensor: ascendcl::Tensor,
    pub(crate) device: AscendDevice,
}

impl std::fmt::Debug for AscendTensor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AscendTensor")
            .field("dtype", &self.tensor.dtype())
            .field("shape", &self.tensor.shape())
            .field("device", &self.device.id)
            .finish()
    }
}

impl TensorMetadata for AscendTensor {
    fn dtype(&self) -> DType {
        to_burn(self.tensor.dtype())
    }

    fn shape(&self) -> Shape {
        Shape::from(self.tensor.shape().to_vec())
    }

    fn rank(&self) -> usize {
        self.tensor.ndim()
    }
}

/// Unwraps a crate result; burn's contract has no error channel for tensor operations,
/// so a failure panics with the crate's message, naming the burn method.
pub(crate) fn ok<T>(what: &str, r: ascendcl::Result<T>) -> T {
    match r {
        Ok(v) => v,
        Err(e) => panic!("burn-ascend: {what}: {e}"),
    }
}

/// The crate's dtype of a burn dtype. `Flex32` is stored as f32; the unsigned and 16-bit
/// integer types other than u8 have no Ascend storage type the operators accept.
pub(crate) fn to_acl(dtype: DType) -> ascendcl::DType {
    use ascendcl::DType as A;
    match dtype {
        DType::F64 => A::F64,
        DType::F32 | DType::Flex32 => A::F32,
        DType::F16 => A::F16,
        DType::BF16 => A::BF16,
        DType::I64 => A::I64,
        DType::I32 => A::I32,
        DType::I8 => A::I8,
        DType::U8 => A::U8,
        DType::Bool(_) => A::Bool,
        other => panic!("burn-ascend: dtype {other:?} is not supported on Ascend"),
    }
}

/// burn's dtype of a crate dtype.
pub(crate) fn to_burn(dtype: ascendcl::DType) -> DType {
    use ascendcl::DType as A;
    match dtype {
        A::F64 => DType::F64,
        A::F32 => DType::F32,
        A::F16 => DType::F16,
        A::BF16 => DType::BF16,
        A::I64 => DType::I64,
        A::I32 => DType::I32,
        A::I8 => DType::I8,
        A::U8 => DType::U8,
        A::Bool => DType::Bool(BoolStore::Native),
    }
}

impl AscendTensor {
    pub(crate) fn new(tensor: ascendcl::Tensor, device: AscendDevice) -> Self {
        Self { tensor, device }
    }

    pub(crate) fn ctx(&self) -> Arc<Context> {
        context(&self.device)
    }

    pub(crate) fn acl_dtype(&self) -> ascendcl::DType {
        self.tensor.dtype()
    }

    pub(crate) fn dims(&self) -> &[usize] {
        self.tensor.shape()
    }

    /// Uploads `data` (converted first when its dtype has no Ascend storage: `Flex32`,
    /// non-native bool stores) to a new contiguous tensor on `device`.
    pub(crate) fn from_data(data: TensorData, device: &AscendDevice) -> Self {
        let acl = to_acl(data.dtype);
        let data = match data.dtype {
            DType::Flex32 => data.convert_dtype(DType::F32),
            DType::Bool(BoolStore::U8 | BoolStore::U32) => {
                data.convert_dtype(DType::Bool(BoolStore::Native))
            }
            _ => data,
        };
        let ctx = context(device);
        let shape = data.shape.to_vec();
        let t = ok(
            "from_data",
            ascendcl::Tensor::from_bytes(&ctx.stream, data.as_bytes(), acl, shape.as_slice()),
        );
        Self::new(t, *device)
    }

    /// Downloads the tensor (any layout) into row-major `TensorData`, after the work
    /// queued on the device's stream.
    pub(crate) fn to_data(&self) -> TensorData {
        let ctx = self.ctx();
        let bytes = ok("into_data", self.tensor.to_bytes(&ctx.stream));
        TensorData::from_bytes_vec(bytes, self.tensor.shape().to_vec(), self.dtype())
    }
}
