//! `aclnnMaxPool2dWithIndices` and `aclnnMaxPool2dWithIndicesBackward`: 2-D max pooling
//! with the positions of the maxima, and its gradient.

use crate::device::SocFamily;
use crate::element::DType;
use crate::error::{Error, Result};
use crate::protocol::{Arg, Attr, Call, IntList};

/// The pooling products: Atlas A2/A3 (the library's 950 too); the training series, 310P
/// and 310B have no kernel.
fn products(soc: SocFamily) -> bool {
    matches!(soc, SocFamily::AtlasA2 | SocFamily::AtlasA3 | SocFamily::Other)
}

/// self and out FLOAT, FLOAT16, BF16; indices INT32 or INT64.
fn forward_dtypes(_soc: SocFamily, arg: &Arg, dtype: DType) -> bool {
    match arg.name {
        "indices" => matches!(dtype, DType::I32 | DType::I64),
        _ => matches!(dtype, DType::F32 | DType::F16 | DType::BF16),
    }
}

/// Atlas A2/A3: self, gradOutput and gradInput FLOAT; indices INT32 (or INT8).
fn backward_dtypes(_soc: SocFamily, arg: &Arg, dtype: DType) -> bool {
    match arg.name {
        "indices" => matches!(dtype, DType::I32 | DType::I8),
        _ => dtype == DType::F32,
    }
}

fn ints(c: &Call<'_>, i: usize) -> Result<Vec<i64>> {
    super::convolution::ints(c, i)
}

/// The pooled shape of tensor `x` under the window attributes starting at `first`.
fn pooled(c: &Call<'_>, x: usize, first: usize) -> Result<Vec<usize>> {
    let (k, s, p, d) = (ints(c, first)?, ints(c, first + 1)?, ints(c, first + 2)?, ints(c, first + 3)?);
    let Some(Attr::Bool(ceil)) = c.attr(first + 4) else {
        return Err(Error::InvalidArgument("ceilMode is not a bool".into()));
    };
    Ok(crate::reference::max_pool::pool(c.dims(x), &k, &s, &p, &d, ceil)?.out)
}

fn expect(c: &Call<'_>, i: usize, want: &[usize]) -> Result<()> {
    if c.is_pending(i) {
        return c.infer(i, want);
    }
    if c.dims(i) == want {
        Ok(())
    } else {
        Err(Error::ShapeMismatch {
            argument: c.label(i),
            expected: want.to_vec(),
            actual: c.dims(i).to_vec(),
        })
    }
}

fn forward_rule(c: &Call<'_>) -> Result<()> {
    crate::protocol::rules::same_dtype(c, 0, &[6])?;
    let want = pooled(c, 0, 1)?;
    expect(c, 6, &want)?;
    expect(c, 7, &want)
}

fn backward_rule(c: &Call<'_>) -> Result<()> {
    crate::protocol::rules::same_dtype(c, 1, &[0, 8])?;
    expect(c, 8, c.dims(1))?;
    let want = pooled(c, 1, 3)?;
    expect(c, 0, &want)?;
    expect(c, 2, &want)
}

crate::operator! {
    @verified
    /// `aclnnMaxPool2dWithIndices`: 2-D max pooling and the flat position `h·W + w` of
    /// each maximum in its input plane. Atlas A2/A3 only; FLOAT, FLOAT16, BF16; indices
    /// INT32 or INT64 (the backward takes INT32 there: use `i32` indices for a pair).
    pub struct MaxPool2dWithIndices: aclnnMaxPool2dWithIndices, aclnnMaxPool2dWithIndicesGetWorkspaceSize;
    products: products;
    arg_dtypes: forward_dtypes;
    rule: forward_rule;

    /// `out, indices = max_pool2d(x)`, queued on `stream` (`aclnnMaxPool2dWithIndices`),
    /// as torch's `max_pool2d_with_indices`.
    ///
    /// * `x` (self): (C, H, W) or (N, C, H, W) of `f32`, `f16` or `bf16`, C, H, W not 0.
    /// * `kernel_size`: 1 or 2 positive values; `stride`: none (the kernel), 1 or 2;
    ///   `padding`: 1 or 2 values, each at most half the kernel; `dilation`: 1 (the only
    ///   value Atlas A2/A3 take), as 1 or 2 values.
    /// * `ceil_mode`: round the output size up (torch's rule: a last window starting in
    ///   the right padding is dropped).
    /// * `out`: of `x`'s type and the pooled shape; `indices`: `i32` or `i64`, the same
    ///   shape. An empty batch computes nothing.
    ///
    /// # Errors
    /// [`Error::UnsupportedOperator`] off Atlas A2/A3,
    /// [`Error::UnsupportedDtype`],
    /// [`Error::InvalidArgument`] (the window),
    /// [`Error::ShapeMismatch`]; [`Error::Aclnn`].
    ///
    /// ```
    /// # fn main() -> ascendcl::Result<()> {
    /// use ascendcl::{DeviceTensor, Runtime, max_pool2d_with_indices_new};
    /// use ndarray::array;
    /// let stream = Runtime::auto()?.device(0)?.stream()?;
    /// let x = DeviceTensor::from_array(&stream, &array![[[1.0f32, 5.0], [7.0, 2.0]]])?;
    /// let (m, at): (DeviceTensor<f32>, DeviceTensor<i32>) =
    ///     max_pool2d_with_indices_new(&x, &[2, 2], &[2, 2], &[0, 0], &[1, 1], false, &stream)?;
    /// assert_eq!(m.to_array(&stream)?, array![[[7.0f32]]].into_dyn());
    /// assert_eq!(at.to_array(&stream)?, array![[[2i32]]].into_dyn());
    /// # Ok(()) }
    /// ```
    pub fn max_pool2d_with_indices<T, I>(
        x: input<T> = "self",
        kernel_size: attr<IntList> = "kernelSize",
        stride: attr<IntList> = "stride",
        padding: attr<IntList> = "padding",
        dilation: attr<IntList> = "dilation",
        ceil_mode: attr<bool> = "ceilMode",
        out: output<T> = "out",
        indices: output<I> = "indices",
    );

    /// A reusable [`max_pool2d_with_indices`] for fixed layouts, types and window (a
    /// [`Plan`](crate::Plan)).
    pub type MaxPool2dWithIndicesPlan;
    allocating: max_pool2d_with_indices_new;
}

crate::operator! {
    @verified
    /// `aclnnMaxPool2dWithIndicesBackward`: the gradient of 2-D max pooling through the
    /// forward's indices. Atlas A2/A3 only, FLOAT with INT32 (or INT8) indices.
    pub struct MaxPool2dWithIndicesBackward: aclnnMaxPool2dWithIndicesBackward, aclnnMaxPool2dWithIndicesBackwardGetWorkspaceSize;
    products: products;
    arg_dtypes: backward_dtypes;
    rule: backward_rule;

    /// `grad_input = 0; grad_input[plane, indices] += grad_out`, queued on `stream`
    /// (`aclnnMaxPool2dWithIndicesBackward`).
    ///
    /// * `grad_out` (gradOutput): `f32`, of the pooled shape; `x` (self): the forward's
    ///   input; `indices`: the forward's `i32` indices; the window as the forward's.
    /// * `grad_input`: `f32`, of `x`'s shape (overlapping windows accumulate).
    ///
    /// # Errors
    /// As [`max_pool2d_with_indices`].
    pub fn max_pool2d_with_indices_backward<T, I>(
        grad_out: input<T> = "gradOutput",
        x: input<T> = "self",
        indices: input<I> = "indices",
        kernel_size: attr<IntList> = "kernelSize",
        stride: attr<IntList> = "stride",
        padding: attr<IntList> = "padding",
        dilation: attr<IntList> = "dilation",
        ceil_mode: attr<bool> = "ceilMode",
        grad_input: output<T> = "gradInput",
    );

    /// A reusable [`max_pool2d_with_indices_backward`] (a [`Plan`](crate::Plan)).
    pub type MaxPool2dWithIndicesBackwardPlan;
    allocating: max_pool2d_with_indices_backward_new;
}
