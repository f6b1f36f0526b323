//! `aclnnNLLLoss` (two outputs: the loss and the total weight) and
//! `aclnnNLLLossBackward`: the negative log-likelihood of integer class labels.

use crate::Reduction;
use crate::device::SocFamily;
use crate::element::DType;
use crate::error::{Error, Result};
use crate::protocol::{Arg, Attr, Call};
use crate::shape::Dims;

/// `self`, `weight` (and the gradient's `gradOutput`, `totalWeight`): FLOAT, FLOAT16
/// (BF16 on Atlas A2/A3); `target`: INT64, INT32 or UINT8; the outputs: any floating
/// type (the operators cast to them).
fn arg_dtypes(soc: SocFamily, arg: &Arg, dtype: DType) -> bool {
    let float = matches!(dtype, DType::F32 | DType::F16) || dtype == DType::BF16 && soc.has_bf16();
    match arg.name {
        "target" => matches!(dtype, DType::I64 | DType::I32 | DType::U8),
        "out" | "totalWeightOut" => float || dtype == DType::F64,
        _ => float,
    }
}

fn invalid(c: &Call<'_>, i: usize, what: &str) -> Error {
    Error::InvalidArgument(format!("{} {what}", c.label(i)))
}

/// The shapes the two share (positions of self, target, weight): self 1-D `[C]` with a
/// 0-D target, or 2-D `[N, C]` with a target `[N]`; weight `[C]`. Returns `(N, rank)`.
fn classes(c: &Call<'_>, x: usize, target: usize, weight: usize) -> Result<(usize, usize)> {
    let sx = Dims::new(c.label(x), c.dims(x))?;
    let st = c.dims(target);
    let (n, cls) = match (sx.ndim(), st.len()) {
        (1, 0) => (1, sx[0]),
        (2, 1) if st[0] == sx[0] => (sx[0], sx[1]),
        _ => {
            return Err(invalid(
                c,
                target,
                "must be 0-D for a 1-D self and [N] for a 2-D self [N, C]",
            ));
        }
    };
    if c.dims(weight) != [cls] {
        return Err(Error::ShapeMismatch {
            argument: c.label(weight),
            expected: vec![cls],
            actual: c.dims(weight).to_vec(),
        });
    }
    if c.dims(x).contains(&0) && cls == 0 && !st.contains(&0) && n > 0 {
        return Err(invalid(c, target, "is out of bounds: self has no classes"));
    }
    Ok((n, sx.ndim()))
}

fn reduction(c: &Call<'_>, i: usize) -> Result<i64> {
    match c.attr(i) {
        Some(Attr::I64(r @ 0..=2)) => Ok(r),
        _ => Err(invalid(c, i, "must be 0 (none), 1 (mean) or 2 (sum)")),
    }
}

/// Tensor `i` has shape `[n]` (`Some(n)`) or one element in at most one dim; a pending
/// one gets `[n]` or 0-D.
fn loss_shape(c: &Call<'_>, i: usize, per_sample: Option<usize>) -> Result<()> {
    if c.is_pending(i) {
        return c.infer(i, per_sample.as_slice());
    }
    let d = c.dims(i);
    let ok = match per_sample {
        Some(n) => d == [n],
        None => d.len() <= 1 && d.iter().product::<usize>() == 1,
    };
    if ok {
        Ok(())
    } else {
        Err(Error::ShapeMismatch {
            argument: c.label(i),
            expected: per_sample.map_or(vec![], |n| vec![n]),
            actual: d.to_vec(),
        })
    }
}

/// NLLLoss: self 0, target 1, weight 2, reduction 3, ignoreIndex 4, out 5, totalWeight 6.
fn forward_rule(c: &Call<'_>) -> Result<()> {
    let r = reduction(c, 3)?;
    let (n, rank) = classes(c, 0, 1, 2)?;
    loss_shape(c, 5, (r == 0 && rank == 2).then_some(n))?;
    loss_shape(c, 6, None)
}

/// NLLLossBackward: gradOutput 0, self 1, target 2, weight 3, reduction 4, ignoreIndex 5,
/// totalWeight 6, out 7.
fn backward_rule(c: &Call<'_>) -> Result<()> {
    let r = reduction(c, 4)?;
    let (n, rank) = classes(c, 1, 2, 3)?;
    let total = c.dims(6);
    if total.iter().product::<usize>() != 1 {
        return Err(invalid(c, 6, "must have one element"));
    }
    loss_shape(c, 0, (r == 0 && rank == 2).then_some(n))?;
    if c.is_pending(7) {
        return c.infer(7, c.dims(1));
    }
    if c.dims(7) != c.dims(1) {
        return Err(Error::ShapeMismatch {
            argument: c.label(7),
            expected: c.dims(1).to_vec(),
            actual: c.dims(7).to_vec(),
        });
    }
    Ok(())
}

crate::operator! {
    @verified
    /// `aclnnNLLLoss`: `l_n = −weight[y_n]·self[n, y_n]` for the targets `y_n` other than
    /// `ignoreIndex`, per sample or reduced, and the total weight `Σ weight[y_n]`. Every
    /// product but 310B.
    pub struct NllLoss: aclnnNLLLoss, aclnnNLLLossGetWorkspaceSize;
    products: |soc: SocFamily| soc != SocFamily::Atlas310B;
    arg_dtypes: arg_dtypes;
    rule: forward_rule;

    /// The negative log-likelihood of log-probabilities `x` at integer labels `target`
    /// into `out`, and the total weight of the counted labels into `total_weight`, queued
    /// on `stream` (`aclnnNLLLoss`). With [`log_softmax`](crate::log_softmax) before it,
    /// the cross-entropy.
    ///
    /// * `x` (self): `[N, C]` or `[C]` of `f32`, `f16` or `bf16` (Atlas A2/A3).
    /// * `target`: `[N]` (0-D for a `[C]` `x`) of `i64`, `i32` or `u8`, values in
    ///   `0..C` or `ignore_index` (others are undefined on the device; the simulator
    ///   ignores them).
    /// * `weight`: `[C]` of `x`'s type: class weights (mandatory: ones for none).
    /// * `reduction`: [`Reduction::None`] (`out` `[N]` for a 2-D `x`),
    ///   [`Reduction::Mean`] (`Σ l_n / Σ weight[y_n]`) or [`Reduction::Sum`] (`out` 0-D
    ///   or `[1]`).
    /// * `ignore_index`: a label that counts for nothing (torch's default is −100).
    /// * `out`, `total_weight` (totalWeightOut, one element): any floating type. The
    ///   device writes `total_weight` only for mean and sum. An empty `x` gives a NaN
    ///   mean, a zero sum and a zero total weight.
    ///
    /// # Errors
    /// [`Error::DeviceMismatch`],
    /// [`Error::UnsupportedOperator`],
    /// [`Error::UnsupportedDtype`],
    /// [`Error::TooManyDims`],
    /// [`Error::InvalidArgument`] (`target`'s shape),
    /// [`Error::ShapeMismatch`];
    /// [`Error::Aclnn`] from the library.
    ///
    /// ```
    /// # fn main() -> ascendcl::Result<()> {
    /// use ascendcl::{DeviceTensor, Reduction, Runtime, nll_loss_new};
    /// use ndarray::array;
    /// let stream = Runtime::auto()?.device(0)?.stream()?;
    /// let logp = DeviceTensor::from_array(&stream, &array![[-0.5f32, -1.0], [-2.0, -0.25]])?;
    /// let labels = DeviceTensor::from_array(&stream, &array![1i64, -100])?;
    /// let ones = DeviceTensor::from_array(&stream, &array![1.0f32, 1.0])?;
    /// let (loss, total): (DeviceTensor<f32>, DeviceTensor<f32>) =
    ///     nll_loss_new(&logp, &labels, &ones, Reduction::Mean, -100, &stream)?;
    /// assert_eq!(loss.to_array(&stream)?, ndarray::arr0(1.0f32).into_dyn());
    /// assert_eq!(total.to_array(&stream)?, ndarray::arr0(1.0f32).into_dyn());
    /// # Ok(()) }
    /// ```
    pub fn nll_loss<X, I, O>(
        x: input<X> = "self",
        target: input<I> = "target",
        weight: input<X> = "weight",
        reduction: attr<Reduction> = "reduction",
        ignore_index: attr<i64> = "ignoreIndex",
        out: output<O> = "out",
        total_weight: output<O> = "totalWeightOut",
    );

    /// A reusable [`nll_loss`] (a [`Plan`](crate::Plan)).
    pub type NllLossPlan;
    allocating: nll_loss_new;
}

crate::operator! {
    @verified
    /// `aclnnNLLLossBackward`: the gradient of [`nll_loss`] with respect to `self`. Atlas
    /// A2/A3 and the training series (910).
    pub struct NllLossBackward: aclnnNLLLossBackward, aclnnNLLLossBackwardGetWorkspaceSize;
    products: |soc: SocFamily| !matches!(soc, SocFamily::Atlas310B | SocFamily::Inference310P);
    arg_dtypes: arg_dtypes;
    rule: backward_rule;

    /// `out[n, c] = 0` except `out[n, y_n] = −weight[y_n]·g`, queued on `stream`
    /// (`aclnnNLLLossBackward`): `g` is `grad[n]` for [`Reduction::None`], `grad` for
    /// [`Reduction::Sum`] and `grad / total_weight` for [`Reduction::Mean`]; rows whose
    /// label is `ignore_index` are 0.
    ///
    /// * `grad` (gradOutput): `[N]` for none with a 2-D `x`, else one element;
    /// * `x`, `target`, `weight`, `reduction`, `ignore_index`: as given to [`nll_loss`];
    /// * `total_weight` (totalWeight): the forward's total weight, one element, `x`'s type;
    /// * `out`: `x`'s shape, any floating type.
    ///
    /// # Errors
    /// As [`nll_loss`].
    ///
    /// ```
    /// # fn main() -> ascendcl::Result<()> {
    /// use ascendcl::{DeviceTensor, Reduction, Runtime, nll_loss_backward_new};
    /// use ndarray::{arr0, array};
    /// let stream = Runtime::auto()?.device(0)?.stream()?;
    /// let logp = DeviceTensor::from_array(&stream, &array![[-0.5f32, -1.0], [-2.0, -0.25]])?;
    /// let labels = DeviceTensor::from_array(&stream, &array![1i32, 0])?;
    /// let w = DeviceTensor::from_array(&stream, &array![1.0f32, 3.0])?;
    /// let g = DeviceTensor::from_array(&stream, &arr0(1.0f32).into_dyn())?;
    /// let total = DeviceTensor::from_array(&stream, &arr0(4.0f32).into_dyn())?;
    /// let dx: DeviceTensor<f32> =
    ///     nll_loss_backward_new(&g, &logp, &labels, &w, Reduction::Mean, -100, &total, &stream)?;
    /// assert_eq!(dx.to_array(&stream)?, array![[0.0f32, -0.75], [-0.25, 0.0]].into_dyn());
    /// # Ok(()) }
    /// ```
    pub fn nll_loss_backward<X, I, O>(
        grad: input<X> = "gradOutput",
        x: input<X> = "self",
        target: input<I> = "target",
        weight: input<X> = "weight",
        reduction: attr<Reduction> = "reduction",
        ignore_index: attr<i64> = "ignoreIndex",
        total_weight: input<X> = "totalWeight",
        out: output<O> = "out",
    );

    /// A reusable [`nll_loss_backward`] (a [`Plan`](crate::Plan)).
    pub type NllLossBackwardPlan;
    allocating: nll_loss_backward_new;
}
