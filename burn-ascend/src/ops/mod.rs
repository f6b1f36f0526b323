//! The backend's operations, one module per burn trait; `base` holds what they share.

pub(crate) mod activation;
pub(crate) mod base;
pub(crate) mod bool;
pub(crate) mod float;
pub(crate) mod int;
pub(crate) mod module;
pub(crate) mod qtensor;
pub(crate) mod transaction;

use crate::AscendDevice;
use crate::fallback::{host, nd, up};
use crate::tensor::{AscendTensor, ok};
use base::*;
use burn_backend::{Shape, Slice};
use burn_ndarray::NdArrayTensor;

/// Moves a tensor to another device through the host (a download and an upload: runtime
/// transfers, not operators); on its own device, the tensor itself.
pub(crate) fn to_device(t: AscendTensor, device: &AscendDevice) -> AscendTensor {
    if t.device == *device {
        return t;
    }
    AscendTensor::from_data(t.to_data(), device)
}

/// A view with axes `a` and `b` swapped.
pub(crate) fn swap_dims(t: AscendTensor, a: usize, b: usize) -> AscendTensor {
    let v = ok("swap_dims", t.tensor.transpose(a, b));
    AscendTensor::new(v, t.device)
}

/// A permuted view.
pub(crate) fn permute(t: AscendTensor, axes: &[usize]) -> AscendTensor {
    let v = ok("permute", t.tensor.permute(axes));
    AscendTensor::new(v, t.device)
}

/// A view of a contiguous tensor; a device copy of a strided one.
pub(crate) fn reshape(t: AscendTensor, shape: Shape) -> AscendTensor {
    let ctx = t.ctx();
    let v = ok("reshape", t.tensor.reshape(&shape[..], &ctx.stream));
    AscendTensor::new(v, t.device)
}

/// A broadcast view (stride 0 along the expanded axes).
pub(crate) fn expand(t: AscendTensor, shape: Shape) -> AscendTensor {
    let device = t.device;
    let v = ok("expand", t.tensor.expand(&shape[..]));
    AscendTensor::new(v, device)
}

/// A strided view for positive steps; negative steps (reversals) on the host.
pub(crate) fn slice(
    t: AscendTensor,
    slices: &[Slice],
    on_host: fn(NdArrayTensor, &[Slice]) -> NdArrayTensor,
) -> AscendTensor {
    if forward_slices(slices) {
        let v = slice_view("slice", &t.tensor, slices);
        return AscendTensor::new(v, t.device);
    }
    host("slice (negative step)");
    let device = t.device;
    up(on_host(nd(t), slices), &device)
}

/// `slice_assign` of any kind: a device copy into the view for positive steps, the host
/// otherwise.
pub(crate) fn slice_assign_any(
    what: &'static str,
    t: AscendTensor,
    slices: &[Slice],
    value: AscendTensor,
    on_host: fn(NdArrayTensor, &[Slice], NdArrayTensor) -> NdArrayTensor,
) -> AscendTensor {
    if forward_slices(slices) {
        return slice_assign(what, t, slices, value);
    }
    host(what);
    let device = t.device;
    up(on_host(nd(t), slices, nd(value)), &device)
}

/// The sum of every element, shape `[1]` as burn returns it (`aclnnReduceSum`).
pub(crate) fn sum_all(what: &str, t: AscendTensor) -> AscendTensor {
    let dims = all_dims(&t);
    let ctx = t.ctx();
    let s: ascendcl::Tensor = ok(
        what,
        ascendcl::reduce_sum_new(&t.tensor, &dims[..], false, &ctx.stream),
    );
    let s = ok(what, s.reshape([1usize].as_slice(), &ctx.stream));
    AscendTensor::new(s, t.device)
}

/// The sum along `dim`, kept as a size-1 axis (`aclnnReduceSum`).
pub(crate) fn sum_dim(what: &str, t: AscendTensor, dim: usize) -> AscendTensor {
    on(what, &t, |s, _| {
        ascendcl::reduce_sum_new(&t.tensor, &[dim as i64][..], true, s)
    })
}

/// The maximum along `dim` and its index, kept as a size-1 axis (`aclnnMaxDim`).
///
/// The vendor's kernel takes INT64 of the integers: narrower ones are widened on the
/// device first, and the maxima narrowed back (exact: they are input values).
pub(crate) fn max_dim(what: &str, t: AscendTensor, dim: usize) -> (AscendTensor, AscendTensor) {
    use burn_backend::DType;
    let dtype = t.dtype_burn();
    if matches!(dtype, DType::I32 | DType::I16 | DType::I8 | DType::U8) {
        let (v, i) = max_dim(what, base::cast(what, t, DType::I64), dim);
        return (base::cast(what, v, dtype), i);
    }
    let ctx = t.ctx();
    let (v, i): (ascendcl::Tensor, ascendcl::Tensor) = ok(
        what,
        ascendcl::max_dim_new(&t.tensor, dim as i64, true, &ctx.stream),
    );
    (
        AscendTensor::new(v, t.device),
        AscendTensor::new(i, t.device),
    )
}
