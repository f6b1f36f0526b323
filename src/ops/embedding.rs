//! `aclnnEmbedding` (torch.nn.functional.embedding): the rows of a weight table an `i64`
//! or `i32` index names, and `aclnnEmbeddingDenseBackward`: its gradient with respect to
//! the weight, the gradient rows summed into the rows they were read from.

use super::gather::{data_dtypes, expect_out};
use crate::device::SocFamily;
use crate::element::DType;
use crate::error::{Error, Result};
use crate::protocol::{Arg, Attr, Call, rules};

/// `indices` `i64` or `i32`; `weight` and `out` any type this crate has, BF16 on Atlas
/// A2/A3 (the vendor's list also has I16 and complex types, which it has not).
fn embedding_dtypes(soc: SocFamily, arg: &Arg, dtype: DType) -> bool {
    match arg.name {
        "indices" => matches!(dtype, DType::I64 | DType::I32),
        _ => data_dtypes(soc, dtype),
    }
}

/// `grad` and `out` `f32` or `f16`, `bf16` on Atlas A2/A3; `indices` any type of the
/// vendor's list this crate has (the library casts floats and bools to integers).
fn backward_dtypes(soc: SocFamily, arg: &Arg, dtype: DType) -> bool {
    match arg.name {
        "indices" => dtype != DType::BF16,
        _ => match dtype {
            DType::F32 | DType::F16 => true,
            DType::BF16 => soc.has_bf16(),
            _ => false,
        },
    }
}

/// Embedding's rule, in the vendor's order: out of weight's dtype; out's rank indices'
/// plus one and its leading dims indices' shape; unless weight or indices is empty,
/// out's shape `indices.shape + weight.shape[1..]` (the library's copy of the gathered
/// rows fails otherwise). An allocated out takes that shape, so weight must be 2-D.
fn embedding_rule(c: &Call<'_>) -> Result<()> {
    const WEIGHT: usize = 0;
    const INDICES: usize = 1;
    const OUT: usize = 2;
    rules::same_dtype(c, WEIGHT, &[OUT])?;
    let (w, i) = (c.dims(WEIGHT), c.dims(INDICES));
    let want: Vec<usize> = i.iter().chain(w.iter().skip(1)).copied().collect();
    if c.is_pending(OUT) {
        if w.len() != 2 {
            return Err(Error::InvalidArgument(format!(
                "{} has {} dims: it must be 2-D",
                c.label(WEIGHT),
                w.len()
            )));
        }
        return c.infer(OUT, &want);
    }
    let o = c.dims(OUT);
    if o.len() != i.len() + 1 || o[..i.len()] != *i {
        return Err(Error::ShapeMismatch {
            argument: c.label(OUT),
            expected: want,
            actual: o.to_vec(),
        });
    }
    if w.contains(&0) || i.contains(&0) {
        return Ok(());
    }
    expect_out(c, OUT, &want)
}

/// Attribute `i` as a `u64`.
fn u64_attr(c: &Call<'_>, i: usize) -> Result<u64> {
    match c.attr(i) {
        Some(Attr::U64(v)) => Ok(v),
        _ => Err(Error::InvalidArgument(format!(
            "{} is not a u64",
            c.label(i)
        ))),
    }
}

/// EmbeddingDenseBackward's rule, in the vendor's order: unless grad's last dim is 0,
/// grad's leading dims hold one row per index; out 2-D of `[numWeights, grad.shape[-1]]`.
/// A 0-D grad counts as one row of one element.
fn dense_backward_rule(c: &Call<'_>) -> Result<()> {
    const GRAD: usize = 0;
    const INDICES: usize = 1;
    const NUM_WEIGHTS: usize = 2;
    const OUT: usize = 5;
    let (g, i) = (c.dims(GRAD), c.dims(INDICES));
    let cols = g.last().copied().unwrap_or(1);
    let rows: usize = g.iter().take(g.len().saturating_sub(1)).product();
    if cols != 0 && rows != i.iter().product::<usize>() {
        return Err(Error::InvalidArgument(format!(
            "{} {:?} has {rows} rows for the {} elements of {} {:?}: it must have one per index",
            c.label(GRAD),
            g,
            i.iter().product::<usize>(),
            c.label(INDICES),
            i
        )));
    }
    let n = usize::try_from(u64_attr(c, NUM_WEIGHTS)?).map_err(|_| {
        Error::InvalidArgument(format!("{} does not fit in memory", c.label(NUM_WEIGHTS)))
    })?;
    expect_out(c, OUT, &[n, cols])
}

crate::operator! {
    @verified
    /// `aclnnEmbedding`: `out[p, :] = weight[indices[p], :]`
    /// (torch.nn.functional.embedding). Every product; BF16 on Atlas A2/A3.
    pub struct Embedding: aclnnEmbedding, aclnnEmbeddingGetWorkspaceSize;
    products: |_soc: SocFamily| true;
    arg_dtypes: embedding_dtypes;
    rule: embedding_rule;

    /// Looks up the rows of `weight` that `indices` names into `out`, queued on `stream`
    /// (`aclnnEmbedding`): `out[p, :] = weight[indices[p], :]` for every position `p` of
    /// `indices`. Rows are copied bit for bit; repeated indices are allowed.
    ///
    /// * `weight`: 2-D `[rows, width]`, any element type but `bf16` off Atlas A2/A3.
    /// * `indices`: `i64` or `i32`, up to 7 dims, 0-D too; its values in `[0, rows)`.
    ///   CANN does not check them; the simulator fails the launch (at the next
    ///   synchronisation) naming the first outside.
    /// * `out`: of `weight`'s type and shape `indices.shape + [width]`.
    ///
    /// ```
    /// # fn main() -> ascendcl::Result<()> {
    /// use ascendcl::{DeviceTensor, Runtime, embedding_new};
    /// use ndarray::array;
    /// let stream = Runtime::auto()?.device(0)?.stream()?;
    /// let table = DeviceTensor::from_array(&stream, &array![[0.0f32, 0.5], [1.0, 1.5], [2.0, 2.5]])?;
    /// let ids = DeviceTensor::from_array(&stream, &array![[2i64, 0], [1, 2]])?;
    /// let out: DeviceTensor<f32> = embedding_new(&table, &ids, &stream)?;
    /// assert_eq!(
    ///     out.to_array::<ndarray::Ix3>(&stream)?,
    ///     array![[[2.0f32, 2.5], [0.0, 0.5]], [[1.0, 1.5], [2.0, 2.5]]]
    /// );
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// [`Error::UnsupportedDtype`],
    /// [`Error::InvalidArgument`] (out's dtype, a `weight` not 2-D for `embedding_new`),
    /// [`Error::ShapeMismatch`],
    /// [`Error::DeviceMismatch`];
    /// [`Error::Aclnn`] from the library.
    pub fn embedding<T, I>(
        weight: input<T> = "weight",
        indices: input<I> = "indices",
        out: output_const<T> = "out",
    );

    /// A reusable [`embedding`] for fixed layouts and element types.
    pub type EmbeddingPlan;
    allocating: embedding_new;
}

crate::operator! {
    @verified
    /// `aclnnEmbeddingDenseBackward`: the gradient of [`embedding`] with respect to its
    /// weight. The vendor's documentation lists Atlas A2/A3 and the training series; its
    /// code runs on every product, BF16 on A2/A3.
    pub struct EmbeddingDenseBackward: aclnnEmbeddingDenseBackward,
        aclnnEmbeddingDenseBackwardGetWorkspaceSize;
    products: |_soc: SocFamily| true;
    arg_dtypes: backward_dtypes;
    rule: dense_backward_rule;

    /// Sums the rows of `grad` into the rows of `out` that `indices` names, queued on
    /// `stream` (`aclnnEmbeddingDenseBackward`): `out[r, :] = Σ grad[p, :]` over the
    /// positions `p` with `indices[p] == r`; the other rows are zero.
    ///
    /// * `grad`: `f32`, `f16`, or `bf16` on Atlas A2/A3, up to 8 dims, its leading dims
    ///   holding one row per element of `indices` (`grad.shape[..-1]` is usually
    ///   `indices.shape`).
    /// * `indices`: any element type but `bf16` (floats and bools are truncated to
    ///   integers by the library), values in `[0, num_weights)`: CANN does not check them;
    ///   the simulator fails the launch naming the first outside.
    /// * `num_weights`: the rows of the weight, `out.shape[0]`.
    /// * `padding_idx`: a row that receives no gradient; `u64::MAX` (C's −1) for none.
    /// * `scale_grad_by_freq`: divide each contribution by the number of times its
    ///   index occurs in `indices`.
    /// * `out`: of `grad`'s type (the library also takes another float type, which this
    ///   signature does not), shape `[num_weights, grad.shape[-1]]`. Empty `grad` or
    ///   `indices` zero it.
    ///
    /// ```
    /// # fn main() -> ascendcl::Result<()> {
    /// use ascendcl::{DeviceTensor, Runtime, embedding_dense_backward_new};
    /// use ndarray::array;
    /// let stream = Runtime::auto()?.device(0)?.stream()?;
    /// let grad = DeviceTensor::from_array(&stream, &array![[1.0f32, 2.0], [3.0, 4.0], [5.0, 6.0]])?;
    /// let ids = DeviceTensor::from_array(&stream, &array![2i64, 0, 2])?;
    /// let out: DeviceTensor<f32> = embedding_dense_backward_new(&grad, &ids, 4u64, u64::MAX, false, &stream)?;
    /// assert_eq!(
    ///     out.to_array::<ndarray::Ix2>(&stream)?,
    ///     array![[3.0f32, 4.0], [0.0, 0.0], [6.0, 8.0], [0.0, 0.0]]
    /// );
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// [`Error::UnsupportedDtype`],
    /// [`Error::InvalidArgument`] (grad's rows against indices),
    /// [`Error::ShapeMismatch`],
    /// [`Error::DeviceMismatch`];
    /// [`Error::Aclnn`] from the library.
    pub fn embedding_dense_backward<T, I>(
        grad: input<T> = "grad",
        indices: input<I> = "indices",
        num_weights: attr<u64> = "numWeights",
        padding_idx: attr<u64> = "paddingIdx",
        scale_grad_by_freq: attr<bool> = "scaleGradByFreq",
        out: output_const<T> = "out",
    );

    /// A reusable [`embedding_dense_backward`] for fixed layouts, element types and
    /// attributes.
    pub type EmbeddingDenseBackwardPlan;
    allocating: embedding_dense_backward_new;
}
