//! `aclnnSoftmax`, `aclnnLogSoftmax` and their gradients `aclnnSoftmaxBackward`,
//! `aclnnLogSoftmaxBackward`: along one dim.

use crate::device::SocFamily;
use crate::element::DType;
use crate::error::{Error, Result};
use crate::protocol::{Arg, Attr, Call};
use crate::shape::Dims;

/// FLOAT, FLOAT16, DOUBLE everywhere; BF16 on Atlas A2/A3.
fn forward_dtypes(soc: SocFamily, dtype: DType) -> bool {
    matches!(dtype, DType::F32 | DType::F16 | DType::F64) || dtype == DType::BF16 && soc.has_bf16()
}

/// `gradOutput` and `output`: FLOAT, FLOAT16 (BF16 on Atlas A2/A3); `out`: any floating
/// type (the operator casts to it).
fn backward_dtypes(soc: SocFamily, arg: &Arg, dtype: DType) -> bool {
    let bf16 = dtype == DType::BF16 && soc.has_bf16();
    match arg.name {
        "out" => matches!(dtype, DType::F32 | DType::F16 | DType::F64) || bf16,
        _ => matches!(dtype, DType::F32 | DType::F16) || bf16,
    }
}

/// Not on the Atlas 200I/500 A2 (310B).
fn not_310b(soc: SocFamily) -> bool {
    soc != SocFamily::Atlas310B
}

/// The rule of the four: tensor `x` (the first) within 8 dims, i64 attribute `dim` in
/// `[−r, r−1]` with `r = max(rank, 1)`, every other tensor of `x`'s shape (a pending
/// output gets it). With `empty_first` (Softmax and the gradients) an empty `x` (or any
/// empty input of a gradient) passes before anything else is checked, as the operators
/// return first.
fn along_dim(c: &Call<'_>, dim: usize, empty_first: bool) -> Result<()> {
    let x = Dims::new(c.label(0), c.dims(0))?;
    if let Some(out) = c.pending() {
        c.infer(out, &x)?;
    }
    let empty = |i: usize| c.dims(i).contains(&0);
    let inputs = (0..c.args().len()).filter(|&i| c.args()[i].role().is_some_and(|r| r.reads()));
    if empty_first && inputs.clone().any(empty) {
        return Ok(());
    }
    let Some(Attr::I64(d)) = c.attr(dim) else {
        return Err(Error::InvalidArgument(format!(
            "{} is not an i64",
            c.label(dim)
        )));
    };
    let r = (x.ndim() as i64).max(1);
    if d < -r || d >= r {
        return Err(Error::InvalidArgument(format!(
            "{} {d} is outside [{}, {}]",
            c.label(dim),
            -r,
            r - 1
        )));
    }
    crate::protocol::rules::same(c)
}

crate::operator! {
    @verified
    /// `aclnnSoftmax`: `out = exp(self − max) / Σ exp(self − max)` along `dim`. Every
    /// product.
    pub struct Softmax: aclnnSoftmax, aclnnSoftmaxGetWorkspaceSize;
    products: |_soc: SocFamily| true;
    dtypes: forward_dtypes;
    rule: |c: &Call<'_>| along_dim(c, 1, true);

    /// The softmax of `x` along `dim` into `out`, queued on `stream` (`aclnnSoftmax`).
    ///
    /// * `x` (self): any [`AsTensorView`](crate::AsTensorView) of `f32`, `f16`, `f64` or
    ///   `bf16` (Atlas A2/A3), up to 8 dims, 0-D (`dim` −1 or 0) and empty included.
    /// * `dim`: in `-rank..rank`.
    /// * `out`: `x`'s shape, any of the four types: the device computes in `x`'s type
    ///   (f32 arithmetic for `f16`/`bf16`, rounded once) and casts to `out`'s. An empty
    ///   `x` computes nothing (`out` is not checked).
    ///
    /// A NaN or a +∞ in a row makes the row NaN.
    ///
    /// # Errors
    /// [`Error::DeviceMismatch`],
    /// [`Error::UnsupportedDtype`],
    /// [`Error::TooManyDims`],
    /// [`Error::InvalidArgument`] (`dim`),
    /// [`Error::ShapeMismatch`] (`out`);
    /// [`Error::Aclnn`] from the library.
    ///
    /// ```
    /// # fn main() -> ascendcl::Result<()> {
    /// use ascendcl::{DeviceTensor, Runtime, softmax, softmax_new};
    /// use ndarray::array;
    /// let stream = Runtime::auto()?.device(0)?.stream()?;
    /// let x = DeviceTensor::from_array(&stream, &array![[0.0f32, 0.0], [1.0, 1.0]])?;
    /// let mut p = DeviceTensor::<f32>::zeros(&stream, [2, 2])?;
    /// softmax(&x, -1, &mut p, &stream)?;
    /// assert_eq!(p.to_array(&stream)?, array![[0.5f32, 0.5], [0.5, 0.5]].into_dyn());
    /// let q: DeviceTensor<f32> = softmax_new(&x, 0, &stream)?;
    /// assert!((q.to_array::<ndarray::Ix2>(&stream)?[[1, 0]] - 0.731_058_6).abs() < 1e-6);
    /// # Ok(()) }
    /// ```
    pub fn softmax<X, O>(
        x: input<X> = "self",
        dim: attr<i64> = "dim",
        out: output<O> = "out",
    );

    /// A reusable [`softmax`] for fixed layouts, element types and `dim` (a
    /// [`Plan`](crate::Plan)).
    pub type SoftmaxPlan;
    allocating: softmax_new;
}

crate::operator! {
    @verified
    /// `aclnnLogSoftmax`: `out = self − max − ln Σ exp(self − max)` along `dim`. Every
    /// product but 310B.
    pub struct LogSoftmax: aclnnLogSoftmax, aclnnLogSoftmaxGetWorkspaceSize;
    products: not_310b;
    dtypes: forward_dtypes;
    rule: |c: &Call<'_>| along_dim(c, 1, false);

    /// The log-softmax of `x` along `dim` into `out`, queued on `stream`
    /// (`aclnnLogSoftmax`).
    ///
    /// * `x` (self), `out`: `f32`, `f16`, `f64` or `bf16` (Atlas A2/A3), one shape, up to
    ///   8 dims, 0-D and empty included. The device casts `x` to `out`'s type first and
    ///   computes in it (f32 arithmetic for `f16`/`bf16`).
    /// * `dim`: in `-rank..rank` (checked even for an empty `x`).
    ///
    /// # Errors
    /// As [`softmax`], plus
    /// [`Error::UnsupportedOperator`] on 310B.
    ///
    /// ```
    /// # fn main() -> ascendcl::Result<()> {
    /// use ascendcl::{DeviceTensor, Runtime, log_softmax};
    /// use ndarray::array;
    /// let stream = Runtime::auto()?.device(0)?.stream()?;
    /// let x = DeviceTensor::from_array(&stream, &array![1.0f32, 1.0])?;
    /// let mut y = DeviceTensor::<f32>::zeros(&stream, [2])?;
    /// log_softmax(&x, 0, &mut y, &stream)?;
    /// assert!((y.to_array::<ndarray::Ix1>(&stream)?[0] + std::f32::consts::LN_2).abs() < 1e-6);
    /// # Ok(()) }
    /// ```
    pub fn log_softmax<X, O>(
        x: input<X> = "self",
        dim: attr<i64> = "dim",
        out: output<O> = "out",
    );

    /// A reusable [`log_softmax`] (a [`Plan`](crate::Plan)).
    pub type LogSoftmaxPlan;
    allocating: log_softmax_new;
}

crate::operator! {
    @verified
    /// `aclnnSoftmaxBackward`: `out = output · (gradOutput − Σ gradOutput·output)` along
    /// `dim`. Every product but 310B.
    pub struct SoftmaxBackward: aclnnSoftmaxBackward, aclnnSoftmaxBackwardGetWorkspaceSize;
    products: not_310b;
    arg_dtypes: backward_dtypes;
    rule: |c: &Call<'_>| along_dim(c, 2, true);

    /// The gradient of [`softmax`](crate::softmax) with respect to its input, queued on
    /// `stream` (`aclnnSoftmaxBackward`).
    ///
    /// * `grad` (gradOutput): the gradient of the softmax's result; `output`: that result;
    ///   one type (`f32`, `f16`, `bf16` on Atlas A2/A3; no `f64`) and one shape.
    /// * `out`: their shape, any floating type (the device casts to it). Empty inputs
    ///   compute nothing.
    ///
    /// # Errors
    /// As [`softmax`](crate::softmax).
    ///
    /// ```
    /// # fn main() -> ascendcl::Result<()> {
    /// use ascendcl::{DeviceTensor, Runtime, softmax_backward};
    /// use ndarray::array;
    /// let stream = Runtime::auto()?.device(0)?.stream()?;
    /// let y = DeviceTensor::from_array(&stream, &array![0.5f32, 0.5])?;
    /// let g = DeviceTensor::from_array(&stream, &array![1.0f32, 0.0])?;
    /// let mut dx = DeviceTensor::<f32>::zeros(&stream, [2])?;
    /// softmax_backward(&g, &y, 0, &mut dx, &stream)?;
    /// assert_eq!(dx.to_array(&stream)?, array![0.25f32, -0.25].into_dyn());
    /// # Ok(()) }
    /// ```
    pub fn softmax_backward<X, O>(
        grad: input<X> = "gradOutput",
        output: input<X> = "output",
        dim: attr<i64> = "dim",
        out: output<O> = "out",
    );

    /// A reusable [`softmax_backward`] (a [`Plan`](crate::Plan)).
    pub type SoftmaxBackwardPlan;
    allocating: softmax_backward_new;
}

crate::operator! {
    @verified
    /// `aclnnLogSoftmaxBackward`: `out = gradOutput − exp(output) · Σ gradOutput` along
    /// `dim`. Every product but 310B.
    pub struct LogSoftmaxBackward: aclnnLogSoftmaxBackward, aclnnLogSoftmaxBackwardGetWorkspaceSize;
    products: not_310b;
    arg_dtypes: backward_dtypes;
    rule: |c: &Call<'_>| along_dim(c, 2, true);

    /// The gradient of [`log_softmax`] with respect to its input,
    /// queued on `stream` (`aclnnLogSoftmaxBackward`); arguments as
    /// [`softmax_backward`], `output` being the log-softmax.
    ///
    /// # Errors
    /// As [`softmax`].
    ///
    /// ```
    /// # fn main() -> ascendcl::Result<()> {
    /// use ascendcl::{DeviceTensor, Runtime, log_softmax_backward};
    /// use ndarray::array;
    /// let stream = Runtime::auto()?.device(0)?.stream()?;
    /// let ln_half = 0.5f32.ln();
    /// let y = DeviceTensor::from_array(&stream, &array![ln_half, ln_half])?;
    /// let g = DeviceTensor::from_array(&stream, &array![1.0f32, 0.0])?;
    /// let mut dx = DeviceTensor::<f32>::zeros(&stream, [2])?;
    /// log_softmax_backward(&g, &y, 0, &mut dx, &stream)?;
    /// assert_eq!(dx.to_array(&stream)?, array![0.5f32, -0.5].into_dyn());
    /// # Ok(()) }
    /// ```
    pub fn log_softmax_backward<X, O>(
        grad: input<X> = "gradOutput",
        output: input<X> = "output",
        dim: attr<i64> = "dim",
        out: output<O> = "out",
    );

    /// A reusable [`log_softmax_backward`] (a [`Plan`](crate::Plan)).
    pub type LogSoftmaxBackwardPlan;
    allocating: log_softmax_backward_new;
}
