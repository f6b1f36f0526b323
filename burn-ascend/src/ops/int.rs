//! `IntTensorOps`: arithmetic (except burn's integer division and remainder), sums,
//! comparisons, casts and views on the device; the rest on the host.

use super::base::*;
use super::float::{binary, compare_scalar, with_scalar};
use crate::Ascend;
use crate::fallback::{CPU, Host, host, nd, up};
use crate::tensor::{AscendTensor, ok};
use ascendcl as acl;
use burn_backend::ops::IntTensorOps;
use burn_backend::tensor::{BoolTensor, Device, FloatTensor, IntTensor};
use burn_backend::{
    BoolDType, Distribution, ExecutionError, FloatDType, IntDType, Scalar, Shape, Slice, TensorData,
};

impl IntTensorOps<Self> for Ascend {
    fn int_empty(shape: Shape, device: &Device<Self>, dtype: IntDType) -> IntTensor<Self> {
        empty(&shape, dtype.into(), device)
    }

    fn int_zeros(shape: Shape, device: &Device<Self>, dtype: IntDType) -> IntTensor<Self> {
        zeros(&shape, dtype.into(), device)
    }

    fn int_ones(shape: Shape, device: &Device<Self>, dtype: IntDType) -> IntTensor<Self> {
        full(&shape, Scalar::Int(1), dtype.into(), device)
    }

    fn int_full(
        shape: Shape,
        fill_value: Scalar,
        device: &Device<Self>,
        dtype: IntDType,
    ) -> IntTensor<Self> {
        full(&shape, fill_value, dtype.into(), device)
    }

    async fn int_into_data(tensor: IntTensor<Self>) -> Result<TensorData, ExecutionError> {
        Ok(tensor.to_data())
    }

    fn int_from_data(data: TensorData, device: &Device<Self>) -> IntTensor<Self> {
        AscendTensor::from_data(data, device)
    }

    fn int_device(tensor: &IntTensor<Self>) -> Device<Self> {
        tensor.device
    }

    fn int_to_device(tensor: IntTensor<Self>, device: &Device<Self>) -> IntTensor<Self> {
        crate::ops::to_device(tensor, device)
    }

    fn int_reshape(tensor: IntTensor<Self>, shape: Shape) -> IntTensor<Self> {
        crate::ops::reshape(tensor, shape)
    }

    fn int_slice(tensor: IntTensor<Self>, slices: &[Slice]) -> IntTensor<Self> {
        crate::ops::slice(tensor, slices, Host::int_slice)
    }

    fn int_slice_assign(
        tensor: IntTensor<Self>,
        slices: &[Slice],
        value: IntTensor<Self>,
    ) -> IntTensor<Self> {
        crate::ops::slice_assign_any(
            "int_slice_assign",
            tensor,
            slices,
            value,
            Host::int_slice_assign,
        )
    }

    fn int_cat(tensors: Vec<IntTensor<Self>>, dim: usize) -> IntTensor<Self> {
        cat("int_cat", tensors, dim)
    }

    fn int_into_float(tensor: IntTensor<Self>, out_dtype: FloatDType) -> FloatTensor<Self> {
        cast("int_into_float", tensor, out_dtype.into())
    }

    fn int_cast(tensor: IntTensor<Self>, dtype: IntDType) -> IntTensor<Self> {
        cast("int_cast", tensor, dtype.into())
    }

    fn int_swap_dims(tensor: IntTensor<Self>, dim1: usize, dim2: usize) -> IntTensor<Self> {
        crate::ops::swap_dims(tensor, dim1, dim2)
    }

    fn int_permute(tensor: IntTensor<Self>, axes: &[usize]) -> IntTensor<Self> {
        crate::ops::permute(tensor, axes)
    }

    fn int_expand(tensor: IntTensor<Self>, shape: Shape) -> IntTensor<Self> {
        crate::ops::expand(tensor, shape)
    }

    fn int_add(lhs: IntTensor<Self>, rhs: IntTensor<Self>) -> IntTensor<Self> {
        binary!("int_add", lhs, rhs, add_new, add_inplace, 1)
    }

    fn int_sub(lhs: IntTensor<Self>, rhs: IntTensor<Self>) -> IntTensor<Self> {
        binary!("int_sub", lhs, rhs, sub_new, sub_inplace, 1)
    }

    fn int_mul(lhs: IntTensor<Self>, rhs: IntTensor<Self>) -> IntTensor<Self> {
        binary!("int_mul", lhs, rhs, mul_new, mul_inplace)
    }

    fn int_add_scalar(lhs: IntTensor<Self>, rhs: Scalar) -> IntTensor<Self> {
        with_scalar!("int_add_scalar", lhs, rhs, adds_new, adds_inplace, 1)
    }

    fn int_sub_scalar(lhs: IntTensor<Self>, rhs: Scalar) -> IntTensor<Self> {
        with_scalar!("int_sub_scalar", lhs, rhs, subs_new, subs_inplace, 1)
    }

    fn int_mul_scalar(lhs: IntTensor<Self>, rhs: Scalar) -> IntTensor<Self> {
        with_scalar!("int_mul_scalar", lhs, rhs, muls_new, muls_inplace)
    }

    fn int_neg(tensor: IntTensor<Self>) -> IntTensor<Self> {
        inplace_or(
            "int_neg",
            tensor,
            |x, s| acl::neg_inplace(x, s),
            |x, s| acl::neg_new(x, s),
        )
    }

    fn int_abs(tensor: IntTensor<Self>) -> IntTensor<Self> {
        on("int_abs", &tensor, |s, _| acl::abs_new(&tensor.tensor, s))
    }

    fn int_clamp(tensor: IntTensor<Self>, min: Scalar, max: Scalar) -> IntTensor<Self> {
        on("int_clamp", &tensor, |s, _| {
            acl::clamp_new(&tensor.tensor, Some(scalar(min)), Some(scalar(max)), s)
        })
    }

    fn int_clamp_min(tensor: IntTensor<Self>, min: Scalar) -> IntTensor<Self> {
        on("int_clamp_min", &tensor, |s, _| {
            acl::clamp_new(&tensor.tensor, Some(scalar(min)), None, s)
        })
    }

    fn int_clamp_max(tensor: IntTensor<Self>, max: Scalar) -> IntTensor<Self> {
        on("int_clamp_max", &tensor, |s, _| {
            acl::clamp_new(&tensor.tensor, None, Some(scalar(max)), s)
        })
    }

    fn int_sum(tensor: IntTensor<Self>) -> IntTensor<Self> {
        crate::ops::sum_all("int_sum", tensor)
    }

    fn int_sum_dim(tensor: IntTensor<Self>, dim: usize) -> IntTensor<Self> {
        crate::ops::sum_dim("int_sum_dim", tensor, dim)
    }

    fn int_max_dim(tensor: IntTensor<Self>, dim: usize) -> IntTensor<Self> {
        crate::ops::max_dim("int_max_dim", tensor, dim).0
    }

    fn int_max_dim_with_indices(
        tensor: IntTensor<Self>,
        dim: usize,
    ) -> (IntTensor<Self>, IntTensor<Self>) {
        crate::ops::max_dim("int_max_dim_with_indices", tensor, dim)
    }

    fn int_argmax(tensor: IntTensor<Self>, dim: usize) -> IntTensor<Self> {
        crate::ops::max_dim("int_argmax", tensor, dim).1
    }

    fn int_equal(lhs: IntTensor<Self>, rhs: IntTensor<Self>, _out: BoolDType) -> BoolTensor<Self> {
        on("int_equal", &lhs, |s, _| {
            acl::eq_tensor_new(&lhs.tensor, &rhs.tensor, s)
        })
    }

    fn int_greater(
        lhs: IntTensor<Self>,
        rhs: IntTensor<Self>,
        _out: BoolDType,
    ) -> BoolTensor<Self> {
        on("int_greater", &lhs, |s, _| {
            acl::gt_tensor_new(&lhs.tensor, &rhs.tensor, s)
        })
    }

    fn int_greater_equal(
        lhs: IntTensor<Self>,
        rhs: IntTensor<Self>,
        _out: BoolDType,
    ) -> BoolTensor<Self> {
        on("int_greater_equal", &lhs, |s, _| {
            acl::ge_tensor_new(&lhs.tensor, &rhs.tensor, s)
        })
    }

    fn int_lower(lhs: IntTensor<Self>, rhs: IntTensor<Self>, _out: BoolDType) -> BoolTensor<Self> {
        on("int_lower", &lhs, |s, _| {
            acl::lt_tensor_new(&lhs.tensor, &rhs.tensor, s)
        })
    }

    fn int_lower_equal(
        lhs: IntTensor<Self>,
        rhs: IntTensor<Self>,
        _out: BoolDType,
    ) -> BoolTensor<Self> {
        on("int_lower_equal", &lhs, |s, _| {
            acl::le_tensor_new(&lhs.tensor, &rhs.tensor, s)
        })
    }

    fn int_equal_elem(lhs: IntTensor<Self>, rhs: Scalar, _out: BoolDType) -> BoolTensor<Self> {
        let v = scalar(rhs);
        on("int_equal_elem", &lhs, |s, _| {
            acl::eq_scalar_new(&lhs.tensor, v, s)
        })
    }

    fn int_not_equal_elem(lhs: IntTensor<Self>, rhs: Scalar, _out: BoolDType) -> BoolTensor<Self> {
        let v = scalar(rhs);
        on("int_not_equal_elem", &lhs, |s, _| {
            acl::ne_scalar_new(&lhs.tensor, v, s)
        })
    }

    fn int_greater_elem(lhs: IntTensor<Self>, rhs: Scalar, _out: BoolDType) -> BoolTensor<Self> {
        let v = scalar(rhs);
        on("int_greater_elem", &lhs, |s, _| {
            acl::gt_scalar_new(&lhs.tensor, v, s)
        })
    }

    fn int_greater_equal_elem(
        lhs: IntTensor<Self>,
        rhs: Scalar,
        _out: BoolDType,
    ) -> BoolTensor<Self> {
        compare_scalar!("int_greater_equal_elem", lhs, rhs, ge_tensor_new)
    }

    fn int_lower_elem(lhs: IntTensor<Self>, rhs: Scalar, _out: BoolDType) -> BoolTensor<Self> {
        compare_scalar!("int_lower_elem", lhs, rhs, lt_tensor_new)
    }

    fn int_lower_equal_elem(
        lhs: IntTensor<Self>,
        rhs: Scalar,
        _out: BoolDType,
    ) -> BoolTensor<Self> {
        compare_scalar!("int_lower_equal_elem", lhs, rhs, le_tensor_new)
    }

    fn int_mask_where(
        tensor: IntTensor<Self>,
        mask: BoolTensor<Self>,
        value: IntTensor<Self>,
    ) -> IntTensor<Self> {
        mask_where("int_mask_where", &tensor, &mask, &value)
    }

    fn int_mask_fill(
        tensor: IntTensor<Self>,
        mask: BoolTensor<Self>,
        value: Scalar,
    ) -> IntTensor<Self> {
        if mask_fill_on_device(&tensor) {
            return mask_fill("int_mask_fill", tensor, &mask, value);
        }
        host("int_mask_fill");
        let device = tensor.device;
        up(Host::int_mask_fill(nd(tensor), nd(mask), value), &device)
    }

    // BEGIN host fallbacks (generated from the required methods without a device form)
    fn int_gather(
        dim: usize,
        tensor: IntTensor<Self>,
        indices: IntTensor<Self>,
    ) -> IntTensor<Self> {
        gather("int_gather", tensor, dim, indices)
    }

    fn int_scatter_add(
        dim: usize,
        tensor: IntTensor<Self>,
        indices: IntTensor<Self>,
        value: IntTensor<Self>,
    ) -> IntTensor<Self> {
        scatter_add("int_scatter_add", tensor, dim, indices, value)
    }

    fn int_scatter_nd(
        data: IntTensor<Self>,
        indices: IntTensor<Self>,
        values: IntTensor<Self>,
        reduction: burn_backend::tensor::IndexingUpdateOp,
    ) -> IntTensor<Self> {
        host("int_scatter_nd");
        let device = data.device;
        up(
            Host::int_scatter_nd(nd(data), nd(indices), nd(values), reduction),
            &device,
        )
    }

    fn int_gather_nd(data: IntTensor<Self>, indices: IntTensor<Self>) -> IntTensor<Self> {
        host("int_gather_nd");
        let device = data.device;
        up(Host::int_gather_nd(nd(data), nd(indices)), &device)
    }

    fn int_select(
        tensor: IntTensor<Self>,
        dim: usize,
        indices: IntTensor<Self>,
    ) -> IntTensor<Self> {
        select("int_select", tensor, dim, indices)
    }

    fn int_select_add(
        tensor: IntTensor<Self>,
        dim: usize,
        indices: IntTensor<Self>,
        value: IntTensor<Self>,
    ) -> IntTensor<Self> {
        select_add("int_select_add", tensor, dim, indices, value)
    }

    fn int_div(lhs: IntTensor<Self>, rhs: IntTensor<Self>) -> IntTensor<Self> {
        host("int_div");
        let device = lhs.device;
        up(Host::int_div(nd(lhs), nd(rhs)), &device)
    }

    fn int_div_scalar(lhs: IntTensor<Self>, rhs: Scalar) -> IntTensor<Self> {
        host("int_div_scalar");
        let device = lhs.device;
        up(Host::int_div_scalar(nd(lhs), rhs), &device)
    }

    fn int_remainder(lhs: IntTensor<Self>, rhs: IntTensor<Self>) -> IntTensor<Self> {
        host("int_remainder");
        let device = lhs.device;
        up(Host::int_remainder(nd(lhs), nd(rhs)), &device)
    }

    fn int_remainder_scalar(lhs: IntTensor<Self>, rhs: Scalar) -> IntTensor<Self> {
        host("int_remainder_scalar");
        let device = lhs.device;
        up(Host::int_remainder_scalar(nd(lhs), rhs), &device)
    }

    fn int_matmul(lhs: IntTensor<Self>, rhs: IntTensor<Self>) -> IntTensor<Self> {
        host("int_matmul");
        let device = lhs.device;
        up(Host::int_matmul(nd(lhs), nd(rhs)), &device)
    }

    fn int_prod(tensor: IntTensor<Self>) -> IntTensor<Self> {
        host("int_prod");
        let device = tensor.device;
        up(Host::int_prod(nd(tensor)), &device)
    }

    fn int_prod_dim(tensor: IntTensor<Self>, dim: usize) -> IntTensor<Self> {
        host("int_prod_dim");
        let device = tensor.device;
        up(Host::int_prod_dim(nd(tensor), dim), &device)
    }

    fn int_mean_dim(tensor: IntTensor<Self>, dim: usize) -> IntTensor<Self> {
        host("int_mean_dim");
        let device = tensor.device;
        up(Host::int_mean_dim(nd(tensor), dim), &device)
    }

    fn int_cumsum(tensor: IntTensor<Self>, dim: usize) -> IntTensor<Self> {
        host("int_cumsum");
        let device = tensor.device;
        up(Host::int_cumsum(nd(tensor), dim), &device)
    }

    fn int_cumprod(tensor: IntTensor<Self>, dim: usize) -> IntTensor<Self> {
        host("int_cumprod");
        let device = tensor.device;
        up(Host::int_cumprod(nd(tensor), dim), &device)
    }

    fn int_cummin(tensor: IntTensor<Self>, dim: usize) -> IntTensor<Self> {
        host("int_cummin");
        let device = tensor.device;
        up(Host::int_cummin(nd(tensor), dim), &device)
    }

    fn int_cummax(tensor: IntTensor<Self>, dim: usize) -> IntTensor<Self> {
        host("int_cummax");
        let device = tensor.device;
        up(Host::int_cummax(nd(tensor), dim), &device)
    }

    fn int_argtopk(tensor: IntTensor<Self>, dim: usize, k: usize) -> IntTensor<Self> {
        host("int_argtopk");
        let device = tensor.device;
        up(Host::int_argtopk(nd(tensor), dim, k), &device)
    }

    fn int_argmin(tensor: IntTensor<Self>, dim: usize) -> IntTensor<Self> {
        host("int_argmin");
        let device = tensor.device;
        up(Host::int_argmin(nd(tensor), dim), &device)
    }

    fn int_flip(tensor: IntTensor<Self>, axes: &[usize]) -> IntTensor<Self> {
        host("int_flip");
        let device = tensor.device;
        up(Host::int_flip(nd(tensor), axes), &device)
    }

    fn int_random(
        shape: Shape,
        distribution: Distribution,
        device: &Device<Self>,
        dtype: IntDType,
    ) -> IntTensor<Self> {
        host("int_random");
        let device = *device;
        up(Host::int_random(shape, distribution, &CPU, dtype), &device)
    }

    fn bitwise_and(lhs: IntTensor<Self>, rhs: IntTensor<Self>) -> IntTensor<Self> {
        host("bitwise_and");
        let device = lhs.device;
        up(Host::bitwise_and(nd(lhs), nd(rhs)), &device)
    }

    fn bitwise_and_scalar(lhs: IntTensor<Self>, rhs: Scalar) -> IntTensor<Self> {
        host("bitwise_and_scalar");
        let device = lhs.device;
        up(Host::bitwise_and_scalar(nd(lhs), rhs), &device)
    }

    fn bitwise_or(lhs: IntTensor<Self>, rhs: IntTensor<Self>) -> IntTensor<Self> {
        host("bitwise_or");
        let device = lhs.device;
        up(Host::bitwise_or(nd(lhs), nd(rhs)), &device)
    }

    fn bitwise_or_scalar(lhs: IntTensor<Self>, rhs: Scalar) -> IntTensor<Self> {
        host("bitwise_or_scalar");
        let device = lhs.device;
        up(Host::bitwise_or_scalar(nd(lhs), rhs), &device)
    }

    fn bitwise_xor(lhs: IntTensor<Self>, rhs: IntTensor<Self>) -> IntTensor<Self> {
        host("bitwise_xor");
        let device = lhs.device;
        up(Host::bitwise_xor(nd(lhs), nd(rhs)), &device)
    }

    fn bitwise_xor_scalar(lhs: IntTensor<Self>, rhs: Scalar) -> IntTensor<Self> {
        host("bitwise_xor_scalar");
        let device = lhs.device;
        up(Host::bitwise_xor_scalar(nd(lhs), rhs), &device)
    }

    fn bitwise_not(tensor: IntTensor<Self>) -> IntTensor<Self> {
        host("bitwise_not");
        let device = tensor.device;
        up(Host::bitwise_not(nd(tensor)), &device)
    }

    fn bitwise_left_shift(lhs: IntTensor<Self>, rhs: IntTensor<Self>) -> IntTensor<Self> {
        host("bitwise_left_shift");
        let device = lhs.device;
        up(Host::bitwise_left_shift(nd(lhs), nd(rhs)), &device)
    }

    fn bitwise_left_shift_scalar(lhs: IntTensor<Self>, rhs: Scalar) -> IntTensor<Self> {
        host("bitwise_left_shift_scalar");
        let device = lhs.device;
        up(Host::bitwise_left_shift_scalar(nd(lhs), rhs), &device)
    }

    fn bitwise_right_shift(lhs: IntTensor<Self>, rhs: IntTensor<Self>) -> IntTensor<Self> {
        host("bitwise_right_shift");
        let device = lhs.device;
        up(Host::bitwise_right_shift(nd(lhs), nd(rhs)), &device)
    }

    fn bitwise_right_shift_scalar(lhs: IntTensor<Self>, rhs: Scalar) -> IntTensor<Self> {
        host("bitwise_right_shift_scalar");
        let device = lhs.device;
        up(Host::bitwise_right_shift_scalar(nd(lhs), rhs), &device)
    }

    fn int_unfold(
        tensor: IntTensor<Self>,
        dim: usize,
        size: usize,
        step: usize,
    ) -> IntTensor<Self> {
        host("int_unfold");
        let device = tensor.device;
        up(Host::int_unfold(nd(tensor), dim, size, step), &device)
    }
    // END host fallbacks
}
