//! The references of the indexing operators: `aclnnGather`, `aclnnIndexSelect`,
//! `aclnnScatterAdd`, `aclnnEmbedding`, `aclnnEmbeddingDenseBackward`. Plain loops over
//! `ndarray` views; indices as `i64` (convert `i32` ones with `mapv(i64::from)`). An index
//! outside `[0, size)` is an error naming it (CANN does not check them).

use crate::error::{Error, Result};
use ndarray::{ArrayD, ArrayViewD, Axis, Dimension, IxDyn};

fn bad_index(what: &str, v: i64, size: usize) -> Error {
    Error::InvalidArgument(format!("{what} value {v} is outside [0, {size})"))
}

fn checked(v: i64, size: usize, what: &str) -> Result<usize> {
    usize::try_from(v)
        .ok()
        .filter(|&u| u < size)
        .ok_or_else(|| bad_index(what, v, size))
}

fn dim_of(dim: i64, r: usize) -> Result<usize> {
    let ri = r.max(1) as i64;
    if dim < -ri || dim >= ri {
        return Err(Error::InvalidArgument(format!(
            "dim {dim} is outside [{}, {}]",
            -ri,
            ri - 1
        )));
    }
    Ok(dim.rem_euclid(ri) as usize)
}

/// `torch.gather(x, dim, index)`: `out[p] = x[p with p[dim] = index[p]]`, of index's
/// shape (a 0-D `x` and `index` act as 1-D of one element).
///
/// ```
/// use ascendcl::reference::index::gather;
/// use ndarray::array;
/// let x = array![[1, 2], [3, 4]].into_dyn();
/// let out = gather(x.view(), 1, array![[1i64, 1], [0, 1]].into_dyn().view())?;
/// assert_eq!(out, array![[2, 2], [3, 4]].into_dyn());
/// # Ok::<(), ascendcl::Error>(())
/// ```
///
/// # Errors
/// [`Error::InvalidArgument`] for `dim`, ranks that differ, or an index out of range.
pub fn gather<T: Copy>(
    x: ArrayViewD<'_, T>,
    dim: i64,
    index: ArrayViewD<'_, i64>,
) -> Result<ArrayD<T>> {
    let d = dim_of(dim, x.ndim())?;
    if x.ndim().max(1) != index.ndim().max(1) {
        return Err(Error::InvalidArgument("gather: ranks differ".into()));
    }
    let size = x.shape().get(d).copied().unwrap_or(1);
    let mut out = Vec::with_capacity(index.len());
    for (p, &v) in index.indexed_iter() {
        let u = checked(v, size, "index")?;
        if x.ndim() == 0 {
            out.push(x[IxDyn(&[])]);
            continue;
        }
        let mut at = if p.ndim() == 0 {
            vec![0]
        } else {
            p.slice().to_vec()
        };
        at[d] = u;
        out.push(
            *x.get(IxDyn(&at))
                .ok_or_else(|| bad_index("index", v, size))?,
        );
    }
    ArrayD::from_shape_vec(index.raw_dim(), out).map_err(|e| Error::InvalidArgument(e.to_string()))
}

/// `torch.index_select(x, dim, index)`: the slices of `x` along `dim` at `index` (0-D or
/// 1-D); a 0-D `x` gives itself for a one-element index.
///
/// # Errors
/// [`Error::InvalidArgument`] for `dim`, an index of more than 1 dim or out of range.
pub fn index_select<T: Copy>(
    x: ArrayViewD<'_, T>,
    dim: i64,
    index: ArrayViewD<'_, i64>,
) -> Result<ArrayD<T>> {
    let d = dim_of(dim, x.ndim())?;
    if index.ndim() > 1 {
        return Err(Error::InvalidArgument(
            "index_select: index has more than 1 dim".into(),
        ));
    }
    if x.ndim() == 0 {
        let v = index.iter().next().copied().unwrap_or(0);
        checked(v, 1, "index")?;
        return Ok(x.to_owned());
    }
    let size = x.shape()[d];
    let at = index
        .iter()
        .map(|&v| checked(v, size, "index"))
        .collect::<Result<Vec<_>>>()?;
    Ok(x.select(Axis(d), &at))
}

/// `torch.scatter_add(x, dim, index, src)` (`out = x`, then `out[p with p[dim] =
/// index[p]] += src[p]` for every position `p` of index), in `f64`.
///
/// # Errors
/// [`Error::InvalidArgument`] for `dim`, ranks that differ, index larger than src, or an
/// index out of range.
pub fn scatter_add(
    x: ArrayViewD<'_, f64>,
    dim: i64,
    index: ArrayViewD<'_, i64>,
    src: ArrayViewD<'_, f64>,
) -> Result<ArrayD<f64>> {
    let d = dim_of(dim, x.ndim())?;
    if x.ndim() != index.ndim() || src.ndim() != index.ndim() {
        return Err(Error::InvalidArgument("scatter_add: ranks differ".into()));
    }
    let mut out = x.to_owned();
    if x.ndim() == 0 {
        if let (Some(&v), Some(&s)) = (index.iter().next(), src.iter().next()) {
            checked(v, 1, "index")?;
            out[IxDyn(&[])] += s;
        }
        return Ok(out);
    }
    let size = x.shape()[d];
    for (p, &v) in index.indexed_iter() {
        let s = *src
            .get(p.clone())
            .ok_or_else(|| Error::InvalidArgument("scatter_add: index larger than src".into()))?;
        let mut at = p.slice().to_vec();
        at[d] = checked(v, size, "index")?;
        *out.get_mut(IxDyn(&at))
            .ok_or_else(|| bad_index("index", v, size))? += s;
    }
    Ok(out)
}

/// `torch.nn.functional.embedding(indices, weight)`: `out[p, :] = weight[indices[p], :]`,
/// of shape `indices.shape + [weight.shape[1]]`.
///
/// # Errors
/// [`Error::InvalidArgument`] for a `weight` that is not 2-D or an index out of range.
pub fn embedding<T: Copy>(
    weight: ArrayViewD<'_, T>,
    indices: ArrayViewD<'_, i64>,
) -> Result<ArrayD<T>> {
    if weight.ndim() != 2 {
        return Err(Error::InvalidArgument(
            "embedding: weight is not 2-D".into(),
        ));
    }
    let (rows, cols) = (weight.shape()[0], weight.shape()[1]);
    let mut out = Vec::with_capacity(indices.len() * cols);
    for &v in &indices {
        let r = checked(v, rows, "indices")?;
        out.extend(weight.index_axis(Axis(0), r).iter().copied());
    }
    let mut shape = indices.shape().to_vec();
    shape.push(cols);
    ArrayD::from_shape_vec(IxDyn(&shape), out).map_err(|e| Error::InvalidArgument(e.to_string()))
}

/// The gradient of [`embedding`] with respect to `weight` (`aclnnEmbeddingDenseBackward`):
/// `out[r, :] = Σ grad[p, :]` over the positions `p` with `indices[p] == r`, `out` of
/// shape `[num_weights, grad.shape[-1]]`, in `f64`. Rows equal to `padding_idx` get no
/// gradient; with `scale_grad_by_freq` each contribution is divided by the number of
/// times its index occurs in `indices`.
///
/// # Errors
/// [`Error::InvalidArgument`] when `grad`'s leading dims do not hold one row per index,
/// or an index is out of range.
pub fn embedding_dense_backward(
    grad: ArrayViewD<'_, f64>,
    indices: ArrayViewD<'_, i64>,
    num_weights: usize,
    padding_idx: Option<usize>,
    scale_grad_by_freq: bool,
) -> Result<ArrayD<f64>> {
    let cols = grad.shape().last().copied().unwrap_or(1);
    let rows = grad.len().checked_div(cols).unwrap_or(0);
    if cols != 0 && rows != indices.len() {
        return Err(Error::InvalidArgument(format!(
            "embedding_dense_backward: {rows} gradient rows for {} indices",
            indices.len()
        )));
    }
    let g = grad
        .to_shape((rows, cols))
        .map_err(|e| Error::InvalidArgument(e.to_string()))?;
    let at = indices
        .iter()
        .map(|&v| checked(v, num_weights, "indices"))
        .collect::<Result<Vec<_>>>()?;
    let mut count = vec![0usize; num_weights];
    for &r in &at {
        count[r] += 1;
    }
    let mut out = ArrayD::<f64>::zeros(IxDyn(&[num_weights, cols]));
    for (k, &r) in at.iter().enumerate() {
        if Some(r) == padding_idx || cols == 0 {
            continue;
        }
        let scale = if scale_grad_by_freq {
            1.0 / count[r] as f64
        } else {
            1.0
        };
        for c in 0..cols {
            out[[r, c]] += g[[k, c]] * scale;
        }
    }
    Ok(out)
}
