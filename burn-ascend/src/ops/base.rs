//! Helpers every operator family uses: running a crate operator on a tensor's device,
//! scalars, views, in-place reuse, casts, concatenation and slice assignment.

use crate::device::{AscendDevice, context};
use crate::tensor::{AscendTensor, ok, to_acl};
use ascendcl::Tensor;
use ascendcl::protocol::Scalar as AclScalar;
use burn_backend::{DType, Scalar, Slice};

/// burn's scalar as the crate's (unsigned values beyond i64 saturate).
pub(crate) fn scalar(s: Scalar) -> AclScalar {
    match s {
        Scalar::Float(v) => AclScalar::F64(v),
        Scalar::Int(v) => AclScalar::I64(v),
        Scalar::UInt(v) => AclScalar::I64(i64::try_from(v).unwrap_or(i64::MAX)),
        Scalar::Bool(v) => AclScalar::Bool(v),
    }
}

/// burn's `mask_where` (`value` where `mask` holds, else `tensor`) as one SWhere.
pub(crate) fn mask_where(
    what: &str,
    tensor: &AscendTensor,
    mask: &AscendTensor,
    value: &AscendTensor,
) -> AscendTensor {
    on(what, tensor, |s, _| {
        ascendcl::s_where_new(&mask.tensor, &value.tensor, &tensor.tensor, s)
    })
}

/// Whether aclnnInplaceMaskedFillScalar takes `t`'s dtype on its device (not DOUBLE
/// nor UINT8: those run on the host).
pub(crate) fn mask_fill_on_device(t: &AscendTensor) -> bool {
    use ascendcl::InplaceMaskedFillScalar as Op;
    let soc = t.ctx().device.soc_family();
    Op::supports_arg(soc, &Op::ARGS[0], t.tensor.dtype())
}

/// burn's `mask_fill` as one InplaceMaskedFillScalar into a writable copy of `tensor`.
pub(crate) fn mask_fill(
    what: &str,
    tensor: AscendTensor,
    mask: &AscendTensor,
    value: Scalar,
) -> AscendTensor {
    let mut t = owned(what, tensor);
    let ctx = t.ctx();
    ok(
        what,
        ascendcl::masked_fill_scalar_inplace(
            &mut t.tensor,
            &mask.tensor,
            scalar(value),
            &ctx.stream,
        ),
    );
    t
}

/// Runs `f` on the stream of `t`'s device; its result stays on that device.
pub(crate) fn on(
    what: &str,
    t: &AscendTensor,
    f: impl FnOnce(&ascendcl::Stream, &ascendcl::CubeMath) -> ascendcl::Result<Tensor>,
) -> AscendTensor {
    let ctx = t.ctx();
    AscendTensor::new(ok(what, f(&ctx.stream, &ctx.math)), t.device)
}

/// Runs an in-place form on `t` when burn may write it (unique storage, no broadcast),
/// else the allocating form.
pub(crate) fn inplace_or(
    what: &str,
    mut t: AscendTensor,
    inplace: impl FnOnce(&mut Tensor, &ascendcl::Stream) -> ascendcl::Result<()>,
    new: impl FnOnce(&Tensor, &ascendcl::Stream) -> ascendcl::Result<Tensor>,
) -> AscendTensor {
    let ctx = t.ctx();
    if t.tensor.can_mut() {
        ok(what, inplace(&mut t.tensor, &ctx.stream));
        t
    } else {
        AscendTensor::new(ok(what, new(&t.tensor, &ctx.stream)), t.device)
    }
}

/// Whether `lhs` can take a binary result in place: writable, of the result's shape (rhs
/// broadcasts to it) and of the same dtype as `rhs`.
pub(crate) fn binary_inplace_ok(lhs: &AscendTensor, rhs: &AscendTensor) -> bool {
    lhs.tensor.can_mut()
        && lhs.acl_dtype() == rhs.acl_dtype()
        && broadcast_shape(lhs.dims(), rhs.dims()).as_deref() == Some(lhs.dims())
}

/// numpy's broadcast of two shapes.
pub(crate) fn broadcast_shape(a: &[usize], b: &[usize]) -> Option<Vec<usize>> {
    let n = a.len().max(b.len());
    let mut out = vec![0; n];
    for (i, o) in out.iter_mut().enumerate() {
        let x = if i + a.len() >= n {
            a[i + a.len() - n]
        } else {
            1
        };
        let y = if i + b.len() >= n {
            b[i + b.len() - n]
        } else {
            1
        };
        *o = match (x, y) {
            (x, y) if x == y => x,
            (1, y) => y,
            (x, 1) => x,
            _ => return None,
        };
    }
    Some(out)
}

/// A 0-d tensor holding `value` as `dtype` on `device`: an allocation and a fill kernel,
/// no upload, so comparisons and powers with a scalar broadcast it on the device.
pub(crate) fn scalar_tensor(
    value: Scalar,
    dtype: ascendcl::DType,
    device: &AscendDevice,
) -> Tensor {
    let ctx = context(device);
    let mut t = ok(
        "scalar",
        Tensor::empty(&ctx.stream, Vec::<usize>::new().as_slice(), dtype),
    );
    ok(
        "scalar",
        ascendcl::fill_inplace(&mut t, scalar(value), &ctx.stream),
    );
    t
}

/// A new tensor of `shape` and `dtype` filled with `value` on `device` (a fill kernel).
pub(crate) fn full(
    shape: &[usize],
    value: Scalar,
    dtype: DType,
    device: &AscendDevice,
) -> AscendTensor {
    let ctx = context(device);
    let mut t = ok("full", Tensor::empty(&ctx.stream, shape, to_acl(dtype)));
    if !t.is_empty() {
        ok(
            "full",
            ascendcl::fill_inplace(&mut t, scalar(value), &ctx.stream),
        );
    }
    AscendTensor::new(t, *device)
}

/// A new tensor of `shape` filled with zeros (a memset).
pub(crate) fn zeros(shape: &[usize], dtype: DType, device: &AscendDevice) -> AscendTensor {
    let ctx = context(device);
    AscendTensor::new(
        ok("zeros", Tensor::zeros(&ctx.stream, shape, to_acl(dtype))),
        *device,
    )
}

/// An uninitialised tensor (no kernel).
pub(crate) fn empty(shape: &[usize], dtype: DType, device: &AscendDevice) -> AscendTensor {
    let ctx = context(device);
    AscendTensor::new(
        ok("empty", Tensor::empty(&ctx.stream, shape, to_acl(dtype))),
        *device,
    )
}

/// `t` converted to `dtype` on the device (`aclnnInplaceCopy` into a new tensor); the
/// same tensor when the dtype already matches.
pub(crate) fn cast(what: &str, t: AscendTensor, dtype: DType) -> AscendTensor {
    let acl = to_acl(dtype);
    if t.acl_dtype() == acl {
        return t;
    }
    on(what, &t, |s, _| ascendcl::cast_to(&t.tensor, acl, s))
}

/// A writable copy of `t` (itself when burn may write it).
pub(crate) fn owned(what: &str, t: AscendTensor) -> AscendTensor {
    if t.tensor.can_mut() && t.tensor.is_contiguous() {
        return t;
    }
    // A copy, even of a contiguous tensor: its storage is shared with another tensor
    // (`Tensor::contiguous` would hand back that storage).
    let mut out = empty(t.dims(), t.dtype_burn(), &t.device);
    let ctx = t.ctx();
    ok(
        what,
        ascendcl::inplace_copy(&mut out.tensor, &t.tensor, &ctx.stream),
    );
    out
}

/// Whether every slice has a positive step (a view); negative steps reverse, which a
/// strided view of the crate cannot express.
pub(crate) fn forward_slices(slices: &[Slice]) -> bool {
    slices.iter().all(|s| s.step > 0)
}

/// The view of `t` selected by `slices` (positive steps only).
pub(crate) fn slice_view(what: &str, t: &Tensor, slices: &[Slice]) -> Tensor {
    let mut v = t.clone();
    for (axis, s) in slices.iter().enumerate() {
        let size = v.shape()[axis];
        let r = s.to_range(size);
        let end = r.end.max(r.start);
        let step = usize::try_from(s.step).unwrap_or(1);
        v = ok(what, v.slice(axis, r.start..end, step));
    }
    v
}

/// `slice_assign` on the device: `value` copied into the view `slices` of a writable
/// `tensor`.
pub(crate) fn slice_assign(
    what: &str,
    tensor: AscendTensor,
    slices: &[Slice],
    value: AscendTensor,
) -> AscendTensor {
    let out = owned(what, tensor);
    let ctx = out.ctx();
    let mut view = slice_view(what, &out.tensor, slices);
    if !view.is_empty() {
        ok(
            what,
            ascendcl::inplace_copy(&mut view, &value.tensor, &ctx.stream),
        );
    }
    drop(view);
    out
}

/// `cat` on the device: each input copied into its window of one new tensor.
pub(crate) fn cat(what: &str, tensors: Vec<AscendTensor>, dim: usize) -> AscendTensor {
    let first = &tensors[0];
    let mut shape = first.dims().to_vec();
    shape[dim] = tensors.iter().map(|t| t.dims()[dim]).sum();
    let out = empty(&shape, first.dtype_burn(), &first.device);
    let ctx = out.ctx();
    let mut start = 0;
    for t in &tensors {
        let len = t.dims()[dim];
        if len > 0 && !t.tensor.is_empty() {
            let mut window = ok(what, out.tensor.narrow(dim, start, len));
            ok(
                what,
                ascendcl::inplace_copy(&mut window, &t.tensor, &ctx.stream),
            );
        }
        start += len;
    }
    out
}

/// The dims of a reduction over every axis.
pub(crate) fn all_dims(t: &AscendTensor) -> Vec<i64> {
    (0..t.dims().len() as i64).collect()
}

impl AscendTensor {
    pub(crate) fn dtype_burn(&self) -> DType {
        crate::tensor::to_burn(self.acl_dtype())
    }
}

/// `aclnnGather`: `out[i][j] = t[index[i][j]][j]` along `dim` (burn's `gather`).
pub(crate) fn gather(what: &str, t: AscendTensor, dim: usize, index: AscendTensor) -> AscendTensor {
    on(what, &t, |s, _| {
        ascendcl::gather_new(&t.tensor, dim as i64, &index.tensor, s)
    })
}

/// `aclnnScatterAdd`: `t` with `value` added at `index` along `dim` (burn's
/// `scatter_add`).
pub(crate) fn scatter_add(
    what: &str,
    t: AscendTensor,
    dim: usize,
    index: AscendTensor,
    value: AscendTensor,
) -> AscendTensor {
    on(what, &t, |s, _| {
        ascendcl::scatter_add_new(&t.tensor, dim as i64, &index.tensor, &value.tensor, s)
    })
}

/// `aclnnIndexSelect`: the slices of `t` at `index` along `dim` (burn's `select`).
pub(crate) fn select(what: &str, t: AscendTensor, dim: usize, index: AscendTensor) -> AscendTensor {
    on(what, &t, |s, _| {
        ascendcl::index_select_new(&t.tensor, dim as i64, &index.tensor, s)
    })
}

/// burn's `select_add` (slice `index[i]` of `t` along `dim` gets slice `i` of `value`)
/// as one `aclnnScatterAdd`: the 1-D `index` is viewed along `dim` and broadcast to
/// `value`'s shape, without a copy.
pub(crate) fn select_add(
    what: &str,
    t: AscendTensor,
    dim: usize,
    index: AscendTensor,
    value: AscendTensor,
) -> AscendTensor {
    let ctx = t.ctx();
    let mut along = vec![1; value.dims().len()];
    along[dim] = index.dims().iter().product();
    let spread =
        ok(what, index.tensor.reshape(along, &ctx.stream)).broadcast_to(value.dims().to_vec());
    let spread = AscendTensor::new(ok(what, spread), index.device);
    scatter_add(what, t, dim, spread, value)
}

/// A new tensor drawn from `distribution` on the device's generator
/// (`aclnnInplaceUniform`, `aclnnInplaceNormal`, `aclnnInplaceBernoulli`, each advancing
/// the device's `(seed, offset)`; [`Backend::seed`](burn_backend::Backend::seed) sets it).
pub(crate) fn random(
    what: &str,
    shape: &[usize],
    distribution: burn_backend::Distribution,
    device: &AscendDevice,
    dtype: DType,
) -> AscendTensor {
    use burn_backend::Distribution as D;
    let mut t = empty(shape, dtype, device);
    let ctx = t.ctx();
    let x = &mut t.tensor;
    let s = &ctx.stream;
    ok(
        what,
        match distribution {
            D::Default => ascendcl::inplace_uniform(x, 0.0, 1.0, s),
            D::Uniform(low, high) => ascendcl::inplace_uniform(x, low, high, s),
            D::Normal(mean, std) => ascendcl::inplace_normal(x, mean as f32, std as f32, s),
            D::Bernoulli(p) => ascendcl::inplace_bernoulli(x, p, s),
        },
    );
    t
}
