//! The references of `aclnnSoftmax`, `aclnnLogSoftmax`, `aclnnSoftmaxBackward` and
//! `aclnnLogSoftmaxBackward`: along one dim, evaluated in f64 and rounded once.

use crate::element::Element;
use crate::error::{Error, Result};
use crate::shape::{Dims, check_same};
use ndarray::{ArrayD, ArrayView, Axis, Dimension};

/// `dim` normalised against a rank `r` (`[−max(r,1), max(r,1)−1]`).
fn axis(dim: i64, rank: usize) -> Result<usize> {
    let r = (rank as i64).max(1);
    if dim < -r || dim >= r {
        return Err(Error::InvalidArgument(format!(
            "dim {dim} is outside [{}, {}]",
            -r,
            r - 1
        )));
    }
    Ok(dim.rem_euclid(r) as usize)
}

/// Applies `f(inputs, out)` to every lane along `dim` of the f64 copies of `inputs` (one
/// shape), and rounds the results once to `T`. A 0-D input is one lane of one.
fn lanes<T: Element, D: Dimension>(
    inputs: &[(&'static str, ArrayView<'_, T, D>)],
    dim: i64,
    f: impl Fn(&[&[f64]], &mut [f64]),
) -> Result<ArrayD<T>> {
    let shape = inputs[0].1.shape().to_vec();
    for (name, x) in inputs {
        Dims::new(name, x.shape())?;
    }
    let named: Vec<crate::shape::Named<'_>> =
        inputs.iter().map(|(name, x)| (*name, x.shape())).collect();
    check_same(&named)?;
    let d = axis(dim, shape.len())?;
    let wide: Vec<ArrayD<f64>> = inputs
        .iter()
        .map(|(_, x)| {
            let mut w = x.view().into_dyn().mapv(|v| v.to_f64());
            if w.ndim() == 0 {
                w.insert_axis_inplace(Axis(0));
            }
            w
        })
        .collect();
    let mut out = wide[0].clone();
    let len = out.shape()[d];
    let (mut ins, mut res) = (vec![vec![0.0; len]; wide.len()], vec![0.0; len]);
    let mut lanes_in: Vec<_> = wide.iter().map(|w| w.lanes(Axis(d)).into_iter()).collect();
    for mut lane in out.lanes_mut(Axis(d)) {
        for (buf, it) in ins.iter_mut().zip(lanes_in.iter_mut()) {
            if let Some(l) = it.next() {
                buf.iter_mut().zip(l.iter()).for_each(|(b, &v)| *b = v);
            }
        }
        let views: Vec<&[f64]> = ins.iter().map(Vec::as_slice).collect();
        f(&views, &mut res);
        lane.iter_mut().zip(&res).for_each(|(o, &r)| *o = r);
    }
    let out = out
        .into_shape_with_order(shape)
        .map_err(|e| Error::InvalidArgument(e.to_string()))?;
    Ok(out.mapv(T::from_f64))
}

/// `x − max` of a lane and `ln Σ exp(x − max)`.
fn shifted(x: &[f64], shift: &mut [f64]) -> f64 {
    let m = x.iter().fold(f64::NEG_INFINITY, |m, &v| m.max(v));
    let mut s = 0.0;
    for (d, &v) in shift.iter_mut().zip(x) {
        *d = v - m;
        s += d.exp();
    }
    s.ln()
}

/// The softmax of `x` along `dim`, as `aclnnSoftmax` computes it in `x`'s type:
/// `exp(x − max) / Σ exp(x − max)` per lane, `dim` in `[−r, r−1]` (`r` = max(rank, 1);
/// a 0-D `x` gives 1). A NaN or +∞ in a lane makes the lane NaN (as on the device). For
/// another output type, [`cast`](super::cast) the result.
///
/// # Accuracy
/// f64 evaluation (relative error a few 2⁻⁵³), rounded once to `T`.
///
/// # Errors
/// [`Error::TooManyDims`] above 8 dims, [`Error::InvalidArgument`] for `dim`.
///
/// # Examples
/// ```
/// use ascendcl::reference::softmax;
/// use ndarray::array;
/// let p = softmax(array![[0.0f32, 0.0], [0.0, 2.0f32.ln()]].view(), -1)?;
/// assert_eq!(p, array![[0.5f32, 0.5], [1.0 / 3.0, 2.0 / 3.0]].into_dyn());
/// # Ok::<(), ascendcl::Error>(())
/// ```
pub fn softmax<T: Element, D: Dimension>(x: ArrayView<'_, T, D>, dim: i64) -> Result<ArrayD<T>> {
    lanes(&[("self", x)], dim, |x, out| {
        let l = shifted(x[0], out);
        out.iter_mut().for_each(|v| *v = (*v - l).exp());
    })
}

/// The log-softmax of `x` along `dim`: `x − max − ln Σ exp(x − max)` per lane, in `x`'s
/// type. `aclnnLogSoftmax` computes in its output's type: for an output of another type,
/// [`cast`](super::cast) `x` to it first. Accuracy and errors as [`softmax`].
///
/// # Examples
/// ```
/// use ascendcl::reference::log_softmax;
/// use ndarray::array;
/// let y = log_softmax(array![1.0f64, 1.0].view(), 0)?;
/// assert_eq!(y, array![-std::f64::consts::LN_2, -std::f64::consts::LN_2].into_dyn());
/// # Ok::<(), ascendcl::Error>(())
/// ```
pub fn log_softmax<T: Element, D: Dimension>(
    x: ArrayView<'_, T, D>,
    dim: i64,
) -> Result<ArrayD<T>> {
    lanes(&[("self", x)], dim, |x, out| {
        let l = shifted(x[0], out);
        out.iter_mut().for_each(|v| *v -= l);
    })
}

/// The gradient of [`softmax`] (`aclnnSoftmaxBackward`): `output · (grad − Σ grad·output)`
/// per lane along `dim`, `output` being the softmax. `grad` and `output` have one shape.
/// Accuracy as [`softmax`].
///
/// # Errors
/// As [`softmax`], plus [`Error::ShapeMismatch`] for `output`.
///
/// # Examples
/// ```
/// use ascendcl::reference::softmax_backward;
/// use ndarray::array;
/// let dx = softmax_backward(array![1.0f32, 0.0].view(), array![0.5f32, 0.5].view(), 0)?;
/// assert_eq!(dx, array![0.25f32, -0.25].into_dyn());
/// # Ok::<(), ascendcl::Error>(())
/// ```
pub fn softmax_backward<T: Element, D: Dimension>(
    grad: ArrayView<'_, T, D>,
    output: ArrayView<'_, T, D>,
    dim: i64,
) -> Result<ArrayD<T>> {
    lanes(
        &[("gradOutput", grad.view()), ("output", output.view())],
        dim,
        |v, out| {
            let (g, y) = (v[0], v[1]);
            let s: f64 = g.iter().zip(y).map(|(g, y)| g * y).sum();
            for ((o, &g), &y) in out.iter_mut().zip(g).zip(y) {
                *o = y * (g - s);
            }
        },
    )
}

/// The gradient of [`log_softmax`] (`aclnnLogSoftmaxBackward`):
/// `grad − exp(output) · Σ grad` per lane along `dim`, `output` being the log-softmax.
/// As [`softmax_backward`] otherwise.
///
/// # Errors
/// As [`softmax_backward`].
///
/// # Examples
/// ```
/// use ascendcl::reference::log_softmax_backward;
/// use ndarray::array;
/// let y = array![0.5f64.ln(), 0.5f64.ln()];
/// let dx = log_softmax_backward(array![1.0f64, 0.0].view(), y.view(), 0)?;
/// assert!((dx[[0]] - 0.5).abs() < 1e-15 && (dx[[1]] + 0.5).abs() < 1e-15);
/// # Ok::<(), ascendcl::Error>(())
/// ```
pub fn log_softmax_backward<T: Element, D: Dimension>(
    grad: ArrayView<'_, T, D>,
    output: ArrayView<'_, T, D>,
    dim: i64,
) -> Result<ArrayD<T>> {
    lanes(
        &[("gradOutput", grad.view()), ("output", output.view())],
        dim,
        |v, out| {
            let (g, y) = (v[0], v[1]);
            let s: f64 = g.iter().sum();
            for ((o, &g), &y) in out.iter_mut().zip(g).zip(y) {
                *o = g - y.exp() * s;
            }
        },
    )
}
