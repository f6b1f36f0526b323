//! `BoolTensorOps`: creation, logic, comparisons, casts and views on the device; the
//! rest on the host.

use super::base::*;
use crate::Ascend;
use crate::fallback::{Host, host, nd, up};
use crate::tensor::AscendTensor;
use ascendcl as acl;
use burn_backend::ops::BoolTensorOps;
use burn_backend::tensor::{BoolTensor, Device, FloatTensor, IntTensor};
use burn_backend::{
    BoolDType, BoolStore, DType, ExecutionError, FloatDType, IntDType, Scalar, Shape, Slice,
    TensorData,
};

const BOOL: DType = DType::Bool(BoolStore::Native);

impl BoolTensorOps<Self> for Ascend {
    fn bool_empty(shape: Shape, device: &Device<Self>, _dtype: BoolDType) -> BoolTensor<Self> {
        empty(&shape, BOOL, device)
    }

    fn bool_zeros(shape: Shape, device: &Device<Self>, _dtype: BoolDType) -> BoolTensor<Self> {
        zeros(&shape, BOOL, device)
    }

    fn bool_ones(shape: Shape, device: &Device<Self>, _dtype: BoolDType) -> BoolTensor<Self> {
        full(&shape, Scalar::Bool(true), BOOL, device)
    }

    async fn bool_into_data(tensor: BoolTensor<Self>) -> Result<TensorData, ExecutionError> {
        Ok(tensor.to_data())
    }

    fn bool_from_data(data: TensorData, device: &Device<Self>) -> BoolTensor<Self> {
        AscendTensor::from_data(data, device)
    }

    fn bool_into_int(tensor: BoolTensor<Self>, out_dtype: IntDType) -> IntTensor<Self> {
        cast("bool_into_int", tensor, out_dtype.into())
    }

    fn bool_into_float(tensor: BoolTensor<Self>, out_dtype: FloatDType) -> FloatTensor<Self> {
        cast("bool_into_float", tensor, out_dtype.into())
    }

    fn bool_device(tensor: &BoolTensor<Self>) -> Device<Self> {
        tensor.device
    }

    fn bool_to_device(tensor: BoolTensor<Self>, device: &Device<Self>) -> BoolTensor<Self> {
        crate::ops::to_device(tensor, device)
    }

    fn bool_reshape(tensor: BoolTensor<Self>, shape: Shape) -> BoolTensor<Self> {
        crate::ops::reshape(tensor, shape)
    }

    fn bool_slice(tensor: BoolTensor<Self>, slices: &[Slice]) -> BoolTensor<Self> {
        crate::ops::slice(tensor, slices, Host::bool_slice)
    }

    fn bool_slice_assign(
        tensor: BoolTensor<Self>,
        slices: &[Slice],
        value: BoolTensor<Self>,
    ) -> BoolTensor<Self> {
        crate::ops::slice_assign_any(
            "bool_slice_assign",
            tensor,
            slices,
            value,
            Host::bool_slice_assign,
        )
    }

    fn bool_cat(tensors: Vec<BoolTensor<Self>>, dim: usize) -> BoolTensor<Self> {
        cat("bool_cat", tensors, dim)
    }

    fn bool_swap_dims(tensor: BoolTensor<Self>, dim1: usize, dim2: usize) -> BoolTensor<Self> {
        crate::ops::swap_dims(tensor, dim1, dim2)
    }

    fn bool_permute(tensor: BoolTensor<Self>, axes: &[usize]) -> BoolTensor<Self> {
        crate::ops::permute(tensor, axes)
    }

    fn bool_expand(tensor: BoolTensor<Self>, shape: Shape) -> BoolTensor<Self> {
        crate::ops::expand(tensor, shape)
    }

    fn bool_not(tensor: BoolTensor<Self>) -> BoolTensor<Self> {
        inplace_or(
            "bool_not",
            tensor,
            |x, s| acl::logical_not_inplace(x, s),
            |x, s| acl::logical_not_new(x, s),
        )
    }

    fn bool_and(lhs: BoolTensor<Self>, rhs: BoolTensor<Self>) -> BoolTensor<Self> {
        on("bool_and", &lhs, |s, _| {
            acl::logical_and_new(&lhs.tensor, &rhs.tensor, s)
        })
    }

    fn bool_or(lhs: BoolTensor<Self>, rhs: BoolTensor<Self>) -> BoolTensor<Self> {
        on("bool_or", &lhs, |s, _| {
            acl::logical_or_new(&lhs.tensor, &rhs.tensor, s)
        })
    }

    fn bool_equal(lhs: BoolTensor<Self>, rhs: BoolTensor<Self>) -> BoolTensor<Self> {
        on("bool_equal", &lhs, |s, _| {
            acl::eq_tensor_new(&lhs.tensor, &rhs.tensor, s)
        })
    }

    fn bool_equal_elem(lhs: BoolTensor<Self>, rhs: Scalar) -> BoolTensor<Self> {
        let v = scalar(rhs);
        on("bool_equal_elem", &lhs, |s, _| {
            acl::eq_scalar_new(&lhs.tensor, v, s)
        })
    }

    fn bool_mask_where(
        tensor: BoolTensor<Self>,
        mask: BoolTensor<Self>,
        value: BoolTensor<Self>,
    ) -> BoolTensor<Self> {
        mask_where("bool_mask_where", &tensor, &mask, &value)
    }

    fn bool_mask_fill(
        tensor: BoolTensor<Self>,
        mask: BoolTensor<Self>,
        value: Scalar,
    ) -> BoolTensor<Self> {
        if mask_fill_on_device(&tensor) {
            return mask_fill("bool_mask_fill", tensor, &mask, value);
        }
        host("bool_mask_fill");
        let device = tensor.device;
        up(Host::bool_mask_fill(nd(tensor), nd(mask), value), &device)
    }

    // BEGIN host fallbacks (generated from the required methods without a device form)
    fn bool_gather(
        dim: usize,
        tensor: BoolTensor<Self>,
        indices: IntTensor<Self>,
    ) -> BoolTensor<Self> {
        host("bool_gather");
        let device = tensor.device;
        up(Host::bool_gather(dim, nd(tensor), nd(indices)), &device)
    }

    fn bool_scatter_or(
        dim: usize,
        tensor: BoolTensor<Self>,
        indices: IntTensor<Self>,
        value: BoolTensor<Self>,
    ) -> BoolTensor<Self> {
        host("bool_scatter_or");
        let device = tensor.device;
        up(
            Host::bool_scatter_or(dim, nd(tensor), nd(indices), nd(value)),
            &device,
        )
    }

    fn bool_select(
        tensor: BoolTensor<Self>,
        dim: usize,
        indices: IntTensor<Self>,
    ) -> BoolTensor<Self> {
        host("bool_select");
        let device = tensor.device;
        up(Host::bool_select(nd(tensor), dim, nd(indices)), &device)
    }

    fn bool_select_or(
        tensor: BoolTensor<Self>,
        dim: usize,
        indices: IntTensor<Self>,
        value: BoolTensor<Self>,
    ) -> BoolTensor<Self> {
        host("bool_select_or");
        let device = tensor.device;
        up(
            Host::bool_select_or(nd(tensor), dim, nd(indices), nd(value)),
            &device,
        )
    }

    fn bool_flip(tensor: BoolTensor<Self>, axes: &[usize]) -> BoolTensor<Self> {
        host("bool_flip");
        let device = tensor.device;
        up(Host::bool_flip(nd(tensor), axes), &device)
    }

    fn bool_unfold(
        tensor: BoolTensor<Self>,
        dim: usize,
        size: usize,
        step: usize,
    ) -> BoolTensor<Self> {
        host("bool_unfold");
        let device = tensor.device;
        up(Host::bool_unfold(nd(tensor), dim, size, step), &device)
    }
    // END host fallbacks
}
