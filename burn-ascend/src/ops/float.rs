//! `FloatTensorOps`: the families, matmul, reductions, comparisons and views on the
//! device; the rest on the host (the generated block at the end).

use super::base::*;
use crate::Ascend;
use crate::fallback::{Host, host, nd, up, up_as};
use crate::tensor::{AscendTensor, ok};
use ascendcl as acl;
use burn_backend::ops::FloatTensorOps;
use burn_backend::tensor::{BoolTensor, Device, FloatTensor, IntTensor};
use burn_backend::{
    BoolDType, Distribution, ExecutionError, FloatDType, IntDType, Scalar, Shape, Slice,
    TensorData, TensorMetadata,
};

/// The allocating or in-place form of a unary family operator.
macro_rules! unary {
    ($what:literal, $t:expr, $new:ident, $inplace:ident) => {
        inplace_or(
            $what,
            $t,
            |x, s| acl::$inplace(x, s),
            |x, s| acl::$new(x, s),
        )
    };
    ($what:literal, $t:expr, $new:ident) => {{
        let t = $t;
        on($what, &t, |s, _| acl::$new(&t.tensor, s))
    }};
}

/// A binary family operator, in place on `lhs` when burn may write it.
macro_rules! binary {
    ($what:literal, $lhs:expr, $rhs:expr, $new:ident, $inplace:ident $(, $alpha:expr)?) => {{
        let (mut lhs, rhs) = ($lhs, $rhs);
        if binary_inplace_ok(&lhs, &rhs) {
            let ctx = lhs.ctx();
            ok($what, acl::$inplace(&mut lhs.tensor, &rhs.tensor, $($alpha,)? &ctx.stream));
            lhs
        } else {
            on($what, &lhs, |s, _| acl::$new(&lhs.tensor, &rhs.tensor, $($alpha,)? s))
        }
    }};
}

/// A tensor–scalar family operator, in place when burn may write the tensor.
macro_rules! with_scalar {
    ($what:literal, $t:expr, $v:expr, $new:ident, $inplace:ident $(, $alpha:expr)?) => {{
        let v = scalar($v);
        inplace_or(
            $what,
            $t,
            |x, s| acl::$inplace(x, v, $($alpha,)? s),
            |x, s| acl::$new(x, v, $($alpha,)? s),
        )
    }};
}

/// A comparison against a scalar through a 0-d tensor of the same dtype (broadcast).
macro_rules! compare_scalar {
    ($what:literal, $t:expr, $v:expr, $new:ident) => {{
        let t = $t;
        let v = scalar_tensor($v, t.acl_dtype(), &t.device);
        on($what, &t, |s, _| acl::$new(&t.tensor, &v, s))
    }};
}
pub(crate) use {binary, compare_scalar, with_scalar};

impl FloatTensorOps<Self> for Ascend {
    fn float_from_data(data: TensorData, device: &Device<Self>) -> FloatTensor<Self> {
        AscendTensor::from_data(data, device)
    }

    async fn float_into_data(tensor: FloatTensor<Self>) -> Result<TensorData, ExecutionError> {
        Ok(tensor.to_data())
    }

    fn float_device(tensor: &FloatTensor<Self>) -> Device<Self> {
        tensor.device
    }

    fn float_to_device(tensor: FloatTensor<Self>, device: &Device<Self>) -> FloatTensor<Self> {
        crate::ops::to_device(tensor, device)
    }

    fn float_empty(shape: Shape, device: &Device<Self>, dtype: FloatDType) -> FloatTensor<Self> {
        empty(&shape, dtype.into(), device)
    }

    fn float_zeros(shape: Shape, device: &Device<Self>, dtype: FloatDType) -> FloatTensor<Self> {
        zeros(&shape, dtype.into(), device)
    }

    fn float_ones(shape: Shape, device: &Device<Self>, dtype: FloatDType) -> FloatTensor<Self> {
        full(&shape, Scalar::Float(1.0), dtype.into(), device)
    }

    fn float_full(
        shape: Shape,
        fill_value: Scalar,
        device: &Device<Self>,
        dtype: FloatDType,
    ) -> FloatTensor<Self> {
        full(&shape, fill_value, dtype.into(), device)
    }

    fn float_random(
        shape: Shape,
        distribution: Distribution,
        device: &Device<Self>,
        dtype: FloatDType,
    ) -> FloatTensor<Self> {
        random("float_random", &shape, distribution, device, dtype.into())
    }

    fn float_into_int(tensor: FloatTensor<Self>, out_dtype: IntDType) -> IntTensor<Self> {
        // burn truncates toward zero, as the device's cast does.
        cast("float_into_int", tensor, out_dtype.into())
    }

    fn float_cast(tensor: FloatTensor<Self>, dtype: FloatDType) -> FloatTensor<Self> {
        cast("float_cast", tensor, dtype.into())
    }

    fn float_add(lhs: FloatTensor<Self>, rhs: FloatTensor<Self>) -> FloatTensor<Self> {
        binary!("float_add", lhs, rhs, add_new, add_inplace, 1)
    }

    fn float_sub(lhs: FloatTensor<Self>, rhs: FloatTensor<Self>) -> FloatTensor<Self> {
        binary!("float_sub", lhs, rhs, sub_new, sub_inplace, 1)
    }

    fn float_mul(lhs: FloatTensor<Self>, rhs: FloatTensor<Self>) -> FloatTensor<Self> {
        binary!("float_mul", lhs, rhs, mul_new, mul_inplace)
    }

    fn float_div(lhs: FloatTensor<Self>, rhs: FloatTensor<Self>) -> FloatTensor<Self> {
        binary!("float_div", lhs, rhs, div_new, div_inplace)
    }

    fn float_add_scalar(lhs: FloatTensor<Self>, rhs: Scalar) -> FloatTensor<Self> {
        with_scalar!("float_add_scalar", lhs, rhs, adds_new, adds_inplace, 1)
    }

    fn float_sub_scalar(lhs: FloatTensor<Self>, rhs: Scalar) -> FloatTensor<Self> {
        with_scalar!("float_sub_scalar", lhs, rhs, subs_new, subs_inplace, 1)
    }

    fn float_mul_scalar(lhs: FloatTensor<Self>, rhs: Scalar) -> FloatTensor<Self> {
        with_scalar!("float_mul_scalar", lhs, rhs, muls_new, muls_inplace)
    }

    fn float_div_scalar(lhs: FloatTensor<Self>, rhs: Scalar) -> FloatTensor<Self> {
        with_scalar!("float_div_scalar", lhs, rhs, divs_new, divs_inplace)
    }

    fn float_matmul(lhs: FloatTensor<Self>, rhs: FloatTensor<Self>) -> FloatTensor<Self> {
        on("float_matmul", &lhs, |s, math| {
            acl::matmul_new(&lhs.tensor, &rhs.tensor, *math, s)
        })
    }

    fn float_neg(tensor: FloatTensor<Self>) -> FloatTensor<Self> {
        unary!("float_neg", tensor, neg_new, neg_inplace)
    }

    fn float_recip(tensor: FloatTensor<Self>) -> FloatTensor<Self> {
        unary!("float_recip", tensor, reciprocal_new, reciprocal_inplace)
    }

    fn float_exp(tensor: FloatTensor<Self>) -> FloatTensor<Self> {
        unary!("float_exp", tensor, exp_new, exp_inplace)
    }

    fn float_log(tensor: FloatTensor<Self>) -> FloatTensor<Self> {
        unary!("float_log", tensor, log_new, log_inplace)
    }

    fn float_sqrt(tensor: FloatTensor<Self>) -> FloatTensor<Self> {
        unary!("float_sqrt", tensor, sqrt_new, sqrt_inplace)
    }

    fn float_abs(tensor: FloatTensor<Self>) -> FloatTensor<Self> {
        unary!("float_abs", tensor, abs_new)
    }

    fn float_cos(tensor: FloatTensor<Self>) -> FloatTensor<Self> {
        unary!("float_cos", tensor, cos_new, cos_inplace)
    }

    fn float_sin(tensor: FloatTensor<Self>) -> FloatTensor<Self> {
        unary!("float_sin", tensor, sin_new, sin_inplace)
    }

    fn float_tanh(tensor: FloatTensor<Self>) -> FloatTensor<Self> {
        unary!("float_tanh", tensor, tanh_new, tanh_inplace)
    }

    fn float_erf(tensor: FloatTensor<Self>) -> FloatTensor<Self> {
        unary!("float_erf", tensor, erf_new, erf_inplace)
    }

    fn float_round(tensor: FloatTensor<Self>) -> FloatTensor<Self> {
        unary!("float_round", tensor, round_new, round_inplace)
    }

    fn float_floor(tensor: FloatTensor<Self>) -> FloatTensor<Self> {
        unary!("float_floor", tensor, floor_new, floor_inplace)
    }

    fn float_ceil(tensor: FloatTensor<Self>) -> FloatTensor<Self> {
        unary!("float_ceil", tensor, ceil_new, ceil_inplace)
    }

    fn float_powf(lhs: FloatTensor<Self>, rhs: FloatTensor<Self>) -> FloatTensor<Self> {
        on("float_powf", &lhs, |s, _| {
            acl::pow_tensor_tensor_new(&lhs.tensor, &rhs.tensor, s)
        })
    }

    fn float_powi_scalar_impl(lhs: FloatTensor<Self>, rhs: Scalar) -> FloatTensor<Self> {
        if matches!(rhs.try_as_integer(), Some(Scalar::Int(2))) {
            return on("float_powi_scalar", &lhs, |s, _| {
                acl::mul_new(&lhs.tensor, &lhs.tensor, s)
            });
        }
        Self::float_powf_scalar_impl(lhs, rhs)
    }

    fn float_powf_scalar_impl(tensor: FloatTensor<Self>, value: Scalar) -> FloatTensor<Self> {
        on("float_powf_scalar", &tensor, |s, _| {
            acl::pow_tensor_scalar_new(&tensor.tensor, scalar(value), s)
        })
    }

    fn float_clamp(tensor: FloatTensor<Self>, min: Scalar, max: Scalar) -> FloatTensor<Self> {
        on("float_clamp", &tensor, |s, _| {
            acl::clamp_new(&tensor.tensor, Some(scalar(min)), Some(scalar(max)), s)
        })
    }

    fn float_clamp_min(tensor: FloatTensor<Self>, min: Scalar) -> FloatTensor<Self> {
        on("float_clamp_min", &tensor, |s, _| {
            acl::clamp_new(&tensor.tensor, Some(scalar(min)), None, s)
        })
    }

    fn float_clamp_max(tensor: FloatTensor<Self>, max: Scalar) -> FloatTensor<Self> {
        on("float_clamp_max", &tensor, |s, _| {
            acl::clamp_new(&tensor.tensor, None, Some(scalar(max)), s)
        })
    }

    fn float_swap_dims(tensor: FloatTensor<Self>, dim1: usize, dim2: usize) -> FloatTensor<Self> {
        crate::ops::swap_dims(tensor, dim1, dim2)
    }

    fn float_permute(tensor: FloatTensor<Self>, axes: &[usize]) -> FloatTensor<Self> {
        crate::ops::permute(tensor, axes)
    }

    fn float_reshape(tensor: FloatTensor<Self>, shape: Shape) -> FloatTensor<Self> {
        crate::ops::reshape(tensor, shape)
    }

    fn float_expand(tensor: FloatTensor<Self>, shape: Shape) -> FloatTensor<Self> {
        crate::ops::expand(tensor, shape)
    }

    fn float_slice(tensor: FloatTensor<Self>, slices: &[Slice]) -> FloatTensor<Self> {
        crate::ops::slice(tensor, slices, Host::float_slice)
    }

    fn float_slice_assign(
        tensor: FloatTensor<Self>,
        slices: &[Slice],
        value: FloatTensor<Self>,
    ) -> FloatTensor<Self> {
        crate::ops::slice_assign_any(
            "float_slice_assign",
            tensor,
            slices,
            value,
            Host::float_slice_assign,
        )
    }

    fn float_cat(tensors: Vec<FloatTensor<Self>>, dim: usize) -> FloatTensor<Self> {
        cat("float_cat", tensors, dim)
    }

    fn float_equal(
        lhs: FloatTensor<Self>,
        rhs: FloatTensor<Self>,
        _out: BoolDType,
    ) -> BoolTensor<Self> {
        on("float_equal", &lhs, |s, _| {
            acl::eq_tensor_new(&lhs.tensor, &rhs.tensor, s)
        })
    }

    fn float_greater(
        lhs: FloatTensor<Self>,
        rhs: FloatTensor<Self>,
        _out: BoolDType,
    ) -> BoolTensor<Self> {
        on("float_greater", &lhs, |s, _| {
            acl::gt_tensor_new(&lhs.tensor, &rhs.tensor, s)
        })
    }

    fn float_greater_equal(
        lhs: FloatTensor<Self>,
        rhs: FloatTensor<Self>,
        _out: BoolDType,
    ) -> BoolTensor<Self> {
        on("float_greater_equal", &lhs, |s, _| {
            acl::ge_tensor_new(&lhs.tensor, &rhs.tensor, s)
        })
    }

    fn float_lower(
        lhs: FloatTensor<Self>,
        rhs: FloatTensor<Self>,
        _out: BoolDType,
    ) -> BoolTensor<Self> {
        on("float_lower", &lhs, |s, _| {
            acl::lt_tensor_new(&lhs.tensor, &rhs.tensor, s)
        })
    }

    fn float_lower_equal(
        lhs: FloatTensor<Self>,
        rhs: FloatTensor<Self>,
        _out: BoolDType,
    ) -> BoolTensor<Self> {
        on("float_lower_equal", &lhs, |s, _| {
            acl::le_tensor_new(&lhs.tensor, &rhs.tensor, s)
        })
    }

    fn float_equal_elem(lhs: FloatTensor<Self>, rhs: Scalar, _out: BoolDType) -> BoolTensor<Self> {
        let v = scalar(rhs);
        on("float_equal_elem", &lhs, |s, _| {
            acl::eq_scalar_new(&lhs.tensor, v, s)
        })
    }

    fn float_not_equal_elem(
        lhs: FloatTensor<Self>,
        rhs: Scalar,
        _out: BoolDType,
    ) -> BoolTensor<Self> {
        let v = scalar(rhs);
        on("float_not_equal_elem", &lhs, |s, _| {
            acl::ne_scalar_new(&lhs.tensor, v, s)
        })
    }

    fn float_greater_elem(
        lhs: FloatTensor<Self>,
        rhs: Scalar,
        _out: BoolDType,
    ) -> BoolTensor<Self> {
        let v = scalar(rhs);
        on("float_greater_elem", &lhs, |s, _| {
            acl::gt_scalar_new(&lhs.tensor, v, s)
        })
    }

    fn float_greater_equal_elem(
        lhs: FloatTensor<Self>,
        rhs: Scalar,
        _out: BoolDType,
    ) -> BoolTensor<Self> {
        compare_scalar!("float_greater_equal_elem", lhs, rhs, ge_tensor_new)
    }

    fn float_lower_elem(lhs: FloatTensor<Self>, rhs: Scalar, _out: BoolDType) -> BoolTensor<Self> {
        compare_scalar!("float_lower_elem", lhs, rhs, lt_tensor_new)
    }

    fn float_lower_equal_elem(
        lhs: FloatTensor<Self>,
        rhs: Scalar,
        _out: BoolDType,
    ) -> BoolTensor<Self> {
        compare_scalar!("float_lower_equal_elem", lhs, rhs, le_tensor_new)
    }

    fn float_sum(tensor: FloatTensor<Self>) -> FloatTensor<Self> {
        crate::ops::sum_all("float_sum", tensor)
    }

    fn float_sum_dim(tensor: FloatTensor<Self>, dim: usize) -> FloatTensor<Self> {
        crate::ops::sum_dim("float_sum_dim", tensor, dim)
    }

    fn float_mean_dim(tensor: FloatTensor<Self>, dim: usize) -> FloatTensor<Self> {
        let n = tensor.dims()[dim] as f64;
        let sum = crate::ops::sum_dim("float_mean_dim", tensor, dim);
        Self::float_div_scalar(sum, Scalar::Float(n))
    }

    fn float_max_dim(tensor: FloatTensor<Self>, dim: usize) -> FloatTensor<Self> {
        crate::ops::max_dim("float_max_dim", tensor, dim).0
    }

    fn float_max_dim_with_indices(
        tensor: FloatTensor<Self>,
        dim: usize,
        indices_dtype: IntDType,
    ) -> (FloatTensor<Self>, IntTensor<Self>) {
        let (v, i) = crate::ops::max_dim("float_max_dim_with_indices", tensor, dim);
        (
            v,
            cast("float_max_dim_with_indices", i, indices_dtype.into()),
        )
    }

    fn float_argmax(tensor: FloatTensor<Self>, dim: usize, out_dtype: IntDType) -> IntTensor<Self> {
        let (_, i) = crate::ops::max_dim("float_argmax", tensor, dim);
        cast("float_argmax", i, out_dtype.into())
    }

    fn float_mask_where(
        tensor: FloatTensor<Self>,
        mask: BoolTensor<Self>,
        value: FloatTensor<Self>,
    ) -> FloatTensor<Self> {
        mask_where("float_mask_where", &tensor, &mask, &value)
    }

    fn float_mask_fill(
        tensor: FloatTensor<Self>,
        mask: BoolTensor<Self>,
        value: Scalar,
    ) -> FloatTensor<Self> {
        if mask_fill_on_device(&tensor) {
            return mask_fill("float_mask_fill", tensor, &mask, value);
        }
        host("float_mask_fill");
        let device = tensor.device;
        let dtype = tensor.dtype();
        up_as(
            Host::float_mask_fill(nd(tensor), nd(mask), value),
            &device,
            dtype,
        )
    }

    // BEGIN host fallbacks (generated from the required methods without a device form)
    fn float_remainder(lhs: FloatTensor<Self>, rhs: FloatTensor<Self>) -> FloatTensor<Self> {
        host("float_remainder");
        let device = lhs.device;
        let dtype = lhs.dtype();
        up_as(Host::float_remainder(nd(lhs), nd(rhs)), &device, dtype)
    }

    fn float_remainder_scalar(lhs: FloatTensor<Self>, rhs: Scalar) -> FloatTensor<Self> {
        host("float_remainder_scalar");
        let device = lhs.device;
        let dtype = lhs.dtype();
        up_as(Host::float_remainder_scalar(nd(lhs), rhs), &device, dtype)
    }

    fn float_cross(
        lhs: FloatTensor<Self>,
        rhs: FloatTensor<Self>,
        dim: usize,
    ) -> FloatTensor<Self> {
        host("float_cross");
        let device = lhs.device;
        let dtype = lhs.dtype();
        up_as(Host::float_cross(nd(lhs), nd(rhs), dim), &device, dtype)
    }

    fn float_flip(tensor: FloatTensor<Self>, axes: &[usize]) -> FloatTensor<Self> {
        host("float_flip");
        let device = tensor.device;
        let dtype = tensor.dtype();
        up_as(Host::float_flip(nd(tensor), axes), &device, dtype)
    }

    fn float_gather(
        dim: usize,
        tensor: FloatTensor<Self>,
        indices: IntTensor<Self>,
    ) -> FloatTensor<Self> {
        gather("float_gather", tensor, dim, indices)
    }

    fn float_scatter_add(
        dim: usize,
        tensor: FloatTensor<Self>,
        indices: IntTensor<Self>,
        value: FloatTensor<Self>,
    ) -> FloatTensor<Self> {
        scatter_add("float_scatter_add", tensor, dim, indices, value)
    }

    /// burn's default (`exp(Σ log x)`) is NaN for negative elements: the host computes
    /// the product.
    fn float_prod(tensor: FloatTensor<Self>) -> FloatTensor<Self> {
        host("float_prod");
        let device = tensor.device;
        let dtype = tensor.dtype();
        up_as(Host::float_prod(nd(tensor)), &device, dtype)
    }

    /// As [`float_prod`](Self::float_prod), along `dim`.
    fn float_prod_dim(tensor: FloatTensor<Self>, dim: usize) -> FloatTensor<Self> {
        host("float_prod_dim");
        let device = tensor.device;
        let dtype = tensor.dtype();
        up_as(Host::float_prod_dim(nd(tensor), dim), &device, dtype)
    }

    fn float_scatter_nd(
        data: FloatTensor<Self>,
        indices: IntTensor<Self>,
        values: FloatTensor<Self>,
        reduction: burn_backend::tensor::IndexingUpdateOp,
    ) -> FloatTensor<Self> {
        host("float_scatter_nd");
        let device = data.device;
        let dtype = data.dtype();
        up_as(
            Host::float_scatter_nd(nd(data), nd(indices), nd(values), reduction),
            &device,
            dtype,
        )
    }

    fn float_gather_nd(data: FloatTensor<Self>, indices: IntTensor<Self>) -> FloatTensor<Self> {
        host("float_gather_nd");
        let device = data.device;
        let dtype = data.dtype();
        up_as(Host::float_gather_nd(nd(data), nd(indices)), &device, dtype)
    }

    fn float_select(
        tensor: FloatTensor<Self>,
        dim: usize,
        indices: IntTensor<Self>,
    ) -> FloatTensor<Self> {
        select("float_select", tensor, dim, indices)
    }

    fn float_select_add(
        tensor: FloatTensor<Self>,
        dim: usize,
        indices: IntTensor<Self>,
        value: FloatTensor<Self>,
    ) -> FloatTensor<Self> {
        select_add("float_select_add", tensor, dim, indices, value)
    }

    fn float_cumsum(tensor: FloatTensor<Self>, dim: usize) -> FloatTensor<Self> {
        host("float_cumsum");
        let device = tensor.device;
        let dtype = tensor.dtype();
        up_as(Host::float_cumsum(nd(tensor), dim), &device, dtype)
    }

    fn float_cumprod(tensor: FloatTensor<Self>, dim: usize) -> FloatTensor<Self> {
        host("float_cumprod");
        let device = tensor.device;
        let dtype = tensor.dtype();
        up_as(Host::float_cumprod(nd(tensor), dim), &device, dtype)
    }

    fn float_cummin(tensor: FloatTensor<Self>, dim: usize) -> FloatTensor<Self> {
        host("float_cummin");
        let device = tensor.device;
        let dtype = tensor.dtype();
        up_as(Host::float_cummin(nd(tensor), dim), &device, dtype)
    }

    fn float_cummax(tensor: FloatTensor<Self>, dim: usize) -> FloatTensor<Self> {
        host("float_cummax");
        let device = tensor.device;
        let dtype = tensor.dtype();
        up_as(Host::float_cummax(nd(tensor), dim), &device, dtype)
    }

    fn float_log1p(tensor: FloatTensor<Self>) -> FloatTensor<Self> {
        host("float_log1p");
        let device = tensor.device;
        let dtype = tensor.dtype();
        up_as(Host::float_log1p(nd(tensor)), &device, dtype)
    }

    fn float_tan(tensor: FloatTensor<Self>) -> FloatTensor<Self> {
        host("float_tan");
        let device = tensor.device;
        let dtype = tensor.dtype();
        up_as(Host::float_tan(nd(tensor)), &device, dtype)
    }

    fn float_cosh(tensor: FloatTensor<Self>) -> FloatTensor<Self> {
        host("float_cosh");
        let device = tensor.device;
        let dtype = tensor.dtype();
        up_as(Host::float_cosh(nd(tensor)), &device, dtype)
    }

    fn float_sinh(tensor: FloatTensor<Self>) -> FloatTensor<Self> {
        host("float_sinh");
        let device = tensor.device;
        let dtype = tensor.dtype();
        up_as(Host::float_sinh(nd(tensor)), &device, dtype)
    }

    fn float_acos(tensor: FloatTensor<Self>) -> FloatTensor<Self> {
        host("float_acos");
        let device = tensor.device;
        let dtype = tensor.dtype();
        up_as(Host::float_acos(nd(tensor)), &device, dtype)
    }

    fn float_acosh(tensor: FloatTensor<Self>) -> FloatTensor<Self> {
        host("float_acosh");
        let device = tensor.device;
        let dtype = tensor.dtype();
        up_as(Host::float_acosh(nd(tensor)), &device, dtype)
    }

    fn float_asin(tensor: FloatTensor<Self>) -> FloatTensor<Self> {
        host("float_asin");
        let device = tensor.device;
        let dtype = tensor.dtype();
        up_as(Host::float_asin(nd(tensor)), &device, dtype)
    }

    fn float_asinh(tensor: FloatTensor<Self>) -> FloatTensor<Self> {
        host("float_asinh");
        let device = tensor.device;
        let dtype = tensor.dtype();
        up_as(Host::float_asinh(nd(tensor)), &device, dtype)
    }

    fn float_atan(tensor: FloatTensor<Self>) -> FloatTensor<Self> {
        host("float_atan");
        let device = tensor.device;
        let dtype = tensor.dtype();
        up_as(Host::float_atan(nd(tensor)), &device, dtype)
    }

    fn float_atanh(tensor: FloatTensor<Self>) -> FloatTensor<Self> {
        host("float_atanh");
        let device = tensor.device;
        let dtype = tensor.dtype();
        up_as(Host::float_atanh(nd(tensor)), &device, dtype)
    }

    fn float_atan2(lhs: FloatTensor<Self>, rhs: FloatTensor<Self>) -> FloatTensor<Self> {
        host("float_atan2");
        let device = lhs.device;
        let dtype = lhs.dtype();
        up_as(Host::float_atan2(nd(lhs), nd(rhs)), &device, dtype)
    }

    fn float_trunc(tensor: FloatTensor<Self>) -> FloatTensor<Self> {
        host("float_trunc");
        let device = tensor.device;
        let dtype = tensor.dtype();
        up_as(Host::float_trunc(nd(tensor)), &device, dtype)
    }

    fn float_argtopk(
        tensor: FloatTensor<Self>,
        dim: usize,
        k: usize,
        out_dtype: IntDType,
    ) -> IntTensor<Self> {
        host("float_argtopk");
        let device = tensor.device;
        up(Host::float_argtopk(nd(tensor), dim, k, out_dtype), &device)
    }

    fn float_argmin(tensor: FloatTensor<Self>, dim: usize, out_dtype: IntDType) -> IntTensor<Self> {
        host("float_argmin");
        let device = tensor.device;
        up(Host::float_argmin(nd(tensor), dim, out_dtype), &device)
    }

    fn float_unfold(
        tensor: FloatTensor<Self>,
        dim: usize,
        size: usize,
        step: usize,
    ) -> FloatTensor<Self> {
        host("float_unfold");
        let device = tensor.device;
        let dtype = tensor.dtype();
        up_as(
            Host::float_unfold(nd(tensor), dim, size, step),
            &device,
            dtype,
        )
    }
    // END host fallbacks
}
