//! `ActivationOps`: the activations with an Ascend operator, replacing burn's
//! compositions (ReLU's mask fill is one kernel instead of a compare and a fill).

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
        // grad · (output > 0): the mask cast to the gradient's dtype on the device.
        let dtype = grad.dtype_burn();
        let mask = on("relu_backward", &output, |s, _| {
            acl::gt_scalar_new(&output.tensor, scalar(Scalar::Float(0.0)), s)
        });
        let mask = cast("relu_backward", mask, dtype);
        on("relu_backward", &grad, |s, _| {
            acl::mul_new(&grad.tensor, &mask.tensor, s)
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

#[allow(dead_code)]
const _: Option<DType> = None;
