//! `ActivationOps`: the activations with an Ascend operator, replacing burn's
//! compositions (ReLU, its gradient, softmax and log-softmax are one kernel each). GELU
//! keeps burn's erf form: the vendor's `aclnnGelu` computes the tanh approximation.

use super::base::*;
use crate::Ascend;
use ascendcl as acl;
use burn_backend::ops::ActivationOps;
use burn_backend::tensor::FloatTensor;
use burn_backend::{DType, Scalar};

impl ActivationOps<Self> for Ascend {
    fn relu(tensor: FloatTensor<Self>) -> FloatTensor<Self> {
        inplace_or(
            "relu",
            tensor,
            |x, s| acl::relu_inplace(x, s),
            |x, s| acl::relu_new(x, s),
        )
    }

    fn relu_backward(output: FloatTensor<Self>, grad: FloatTensor<Self>) -> FloatTensor<Self> {
        let dtype = grad.dtype_burn();
        if matches!(dtype, DType::F32 | DType::F16) && output.dtype_burn() == dtype {
            // `grad` where `output > 0`, else 0: ReLU's gradient in one kernel.
            return on("relu_backward", &grad, |s, _| {
                acl::threshold_backward_new(
                    &grad.tensor,
                    &output.tensor,
                    scalar(Scalar::Float(0.0)),
                    s,
                )
            });
        }
        // grad · (output > 0): the mask cast to the gradient's dtype on the device.
        let mask = on("relu_backward", &output, |s, _| {
            acl::gt_scalar_new(&output.tensor, scalar(Scalar::Float(0.0)), s)
        });
        let mask = cast("relu_backward", mask, dtype);
        on("relu_backward", &grad, |s, _| {
            acl::mul_new(&grad.tensor, &mask.tensor, s)
        })
    }

    /// `aclnnSoftmax` along `dim`: one kernel where burn composes five.
    fn softmax(tensor: FloatTensor<Self>, dim: usize) -> FloatTensor<Self> {
        on("softmax", &tensor, |s, _| {
            acl::softmax_new(&tensor.tensor, dim as i64, s)
        })
    }

    /// `aclnnLogSoftmax` along `dim`.
    fn log_softmax(tensor: FloatTensor<Self>, dim: usize) -> FloatTensor<Self> {
        on("log_softmax", &tensor, |s, _| {
            acl::log_softmax_new(&tensor.tensor, dim as i64, s)
        })
    }

    fn sigmoid(tensor: FloatTensor<Self>) -> FloatTensor<Self> {
        inplace_or(
            "sigmoid",
            tensor,
            |x, s| acl::sigmoid_inplace(x, s),
            |x, s| acl::sigmoid_new(x, s),
        )
    }
}
