//! `QTensorOps`: quantization is outside this backend's scope (burn-tch leaves it out
//! too). Quantized tensors live on the host, in burn-ndarray's format, tagged with their
//! Ascend device; every method runs there and is counted as a host fallback.

use crate::fallback::{CPU, Host, host, nd, up};
use crate::{Ascend, AscendDevice};
use burn_backend::ops::QTensorOps;
use burn_backend::quantization::{QuantScheme, QuantizationParametersPrimitive};
use burn_backend::tensor::{Device, FloatTensor, IntTensor, QuantizedTensor};
use burn_backend::{
    DType, ExecutionError, FloatDType, QTensorPrimitive, Shape, Slice, TensorData, TensorMetadata,
};
use burn_ndarray::NdArrayQTensor;

/// A quantized tensor: burn-ndarray's, on the host, and the device it belongs to.
#[derive(Clone, Debug)]
pub struct AscendQTensor {
    pub(crate) inner: NdArrayQTensor,
    pub(crate) device: AscendDevice,
}

impl TensorMetadata for AscendQTensor {
    fn dtype(&self) -> DType {
        self.inner.dtype()
    }

    fn shape(&self) -> Shape {
        self.inner.shape()
    }

    fn rank(&self) -> usize {
        self.inner.rank()
    }
}

impl QTensorPrimitive for AscendQTensor {
    fn scheme(&self) -> &QuantScheme {
        self.inner.scheme()
    }
}

impl QTensorOps<Self> for Ascend {
    async fn q_into_data(tensor: QuantizedTensor<Self>) -> Result<TensorData, ExecutionError> {
        host("q_into_data");
        Host::q_into_data(tensor.inner).await
    }

    fn q_device(tensor: &QuantizedTensor<Self>) -> Device<Self> {
        tensor.device
    }

    fn q_to_device(tensor: QuantizedTensor<Self>, device: &Device<Self>) -> QuantizedTensor<Self> {
        AscendQTensor {
            inner: tensor.inner,
            device: *device,
        }
    }

    // BEGIN host fallbacks (generated from the required methods without a device form)
    fn q_from_data(data: TensorData, device: &Device<Self>) -> QuantizedTensor<Self> {
        host("q_from_data");
        let device = *device;
        AscendQTensor {
            inner: Host::q_from_data(data, &CPU),
            device,
        }
    }

    fn quantize(
        tensor: FloatTensor<Self>,
        scheme: &QuantScheme,
        qparams: QuantizationParametersPrimitive<Self>,
    ) -> QuantizedTensor<Self> {
        host("quantize");
        let device = tensor.device;
        AscendQTensor {
            inner: Host::quantize(
                nd(tensor),
                scheme,
                QuantizationParametersPrimitive {
                    scales: nd(qparams.scales),
                },
            ),
            device,
        }
    }

    fn dequantize(tensor: QuantizedTensor<Self>, dtype: FloatDType) -> FloatTensor<Self> {
        host("dequantize");
        let device = tensor.device;
        up(Host::dequantize(tensor.inner, dtype), &device)
    }

    fn q_reshape(tensor: QuantizedTensor<Self>, shape: Shape) -> QuantizedTensor<Self> {
        host("q_reshape");
        let device = tensor.device;
        AscendQTensor {
            inner: Host::q_reshape(tensor.inner, shape),
            device,
        }
    }

    fn q_expand(tensor: QuantizedTensor<Self>, shape: Shape) -> QuantizedTensor<Self> {
        host("q_expand");
        let device = tensor.device;
        AscendQTensor {
            inner: Host::q_expand(tensor.inner, shape),
            device,
        }
    }

    fn q_swap_dims(
        tensor: QuantizedTensor<Self>,
        dim1: usize,
        dim2: usize,
    ) -> QuantizedTensor<Self> {
        host("q_swap_dims");
        let device = tensor.device;
        AscendQTensor {
            inner: Host::q_swap_dims(tensor.inner, dim1, dim2),
            device,
        }
    }

    fn q_permute(tensor: QuantizedTensor<Self>, axes: &[usize]) -> QuantizedTensor<Self> {
        host("q_permute");
        let device = tensor.device;
        AscendQTensor {
            inner: Host::q_permute(tensor.inner, axes),
            device,
        }
    }

    fn q_flip(tensor: QuantizedTensor<Self>, axes: &[usize]) -> QuantizedTensor<Self> {
        host("q_flip");
        let device = tensor.device;
        AscendQTensor {
            inner: Host::q_flip(tensor.inner, axes),
            device,
        }
    }

    fn q_select(
        tensor: QuantizedTensor<Self>,
        dim: usize,
        indices: IntTensor<Self>,
    ) -> QuantizedTensor<Self> {
        host("q_select");
        let device = tensor.device;
        AscendQTensor {
            inner: Host::q_select(tensor.inner, dim, nd(indices)),
            device,
        }
    }

    fn q_slice(tensor: QuantizedTensor<Self>, slices: &[Slice]) -> QuantizedTensor<Self> {
        host("q_slice");
        let device = tensor.device;
        AscendQTensor {
            inner: Host::q_slice(tensor.inner, slices),
            device,
        }
    }
    // END host fallbacks
}
