//! The references of `aclnnMaxPool2dWithIndices` and its backward.

use crate::element::Element;
use crate::error::{Error, Result};
use ndarray::{ArrayD, ArrayView, Dimension, IxDyn};

/// A checked pooling window per spatial dim (H, W) and the output shape.
#[derive(Debug, Clone)]
pub(crate) struct Pool {
    pub k: [usize; 2],
    pub s: [usize; 2],
    pub p: [usize; 2],
    pub d: [usize; 2],
    pub out: Vec<usize>,
}

/// The window of `kernel` (1 or 2 values), `stride` (none: the kernel), `padding` and
/// `dilation` (1 or 2 values) over input dims `x` ((N,) C, H, W), and the output shape,
/// with the checks of `aclnnMaxPool2dWithIndices` (dilation 1, as Atlas A2/A3 require).
///
/// # Errors
/// [`Error::InvalidArgument`] naming what is wrong.
pub(crate) fn pool(
    x: &[usize],
    kernel: &[i64],
    stride: &[i64],
    padding: &[i64],
    dilation: &[i64],
    ceil: bool,
) -> Result<Pool> {
    let bad = |m: String| Error::InvalidArgument(m);
    if !(3..=4).contains(&x.len()) {
        return Err(bad(format!("self {x:?} must have 3 or 4 dims")));
    }
    let sizes_ok = (1..=2).contains(&kernel.len())
        && stride.len() <= 2
        && (1..=2).contains(&padding.len())
        && (1..=2).contains(&dilation.len());
    if !sizes_ok {
        return Err(bad(
            "kernelSize, padding and dilation take 1 or 2 values, stride 0 to 2".into(),
        ));
    }
    let two = |l: &[i64]| [l[0], l[l.len() - 1]];
    let k = two(kernel);
    let s = if stride.is_empty() { k } else { two(stride) };
    let (p, d) = (two(padding), two(dilation));
    if k.iter().chain(&s).any(|&v| v <= 0) {
        return Err(bad(format!(
            "kernelSize {k:?} and stride {s:?} must be positive"
        )));
    }
    if (0..2).any(|i| p[i] < 0 || p[i] > k[i] / 2) {
        return Err(bad(format!(
            "padding {p:?} must be between 0 and half the kernel {k:?}"
        )));
    }
    if d != [1, 1] {
        return Err(bad(format!("dilation {d:?} must be 1 on Atlas A2/A3")));
    }
    let r = x.len();
    if x[r - 3] == 0 || x[r - 2] == 0 || x[r - 1] == 0 {
        return Err(bad(format!("self {x:?} must have non-zero C, H and W")));
    }
    let mut out = x.to_vec();
    for i in 0..2 {
        let n = x[r - 2 + i] as i64;
        let span = n + 2 * p[i] - d[i] * (k[i] - 1) - 1 + if ceil { s[i] - 1 } else { 0 };
        let mut o = span.div_euclid(s[i]) + 1;
        if ceil && (o - 1) * s[i] >= n + p[i] {
            o -= 1;
        }
        if o <= 0 {
            return Err(bad(format!(
                "the pooled size of self {x:?} is not positive"
            )));
        }
        out[r - 2 + i] = o as usize;
    }
    let u = |a: [i64; 2]| [a[0] as usize, a[1] as usize];
    Ok(Pool {
        k: u(k),
        s: u(s),
        p: u(p),
        d: u(d),
        out,
    })
}

/// 2-D max pooling of `x` ((N,) C, H, W) and the flat index `h·W + w` of each maximum in
/// its input plane, as `aclnnMaxPool2dWithIndices` gives them: the first maximum of a
/// window wins, padding never does, a NaN is the maximum.
///
/// # Errors
/// [`Error::InvalidArgument`] for the window (see the operator).
///
/// # Examples
/// ```
/// use ascendcl::reference::max_pool2d_with_indices;
/// use ndarray::Array;
///
/// let x = Array::from_shape_vec((1, 2, 2), vec![1.0f32, 4.0, 3.0, 2.0]).unwrap();
/// let (m, at) = max_pool2d_with_indices(x.view(), &[2], &[], &[0], &[1], false)?;
/// assert_eq!(m.into_raw_vec_and_offset().0, vec![4.0]);
/// assert_eq!(at.into_raw_vec_and_offset().0, vec![1]);
/// # Ok::<(), ascendcl::Error>(())
/// ```
pub fn max_pool2d_with_indices<T: Element, D: Dimension>(
    x: ArrayView<'_, T, D>,
    kernel: &[i64],
    stride: &[i64],
    padding: &[i64],
    dilation: &[i64],
    ceil: bool,
) -> Result<(ArrayD<T>, ArrayD<i64>)> {
    let xd = x.shape().to_vec();
    let g = pool(&xd, kernel, stride, padding, dilation, ceil)?;
    let r = xd.len();
    let (h, w) = (xd[r - 2], xd[r - 1]);
    let (oh, ow) = (g.out[r - 2], g.out[r - 1]);
    let xs: Vec<T> = x.iter().copied().collect();
    let planes = xs.len() / (h * w).max(1);
    let mut vals = Vec::with_capacity(planes * oh * ow);
    let mut at = Vec::with_capacity(planes * oh * ow);
    for pl in 0..planes {
        for i in 0..oh {
            for j in 0..ow {
                let mut best: Option<(f64, usize)> = None;
                for a in 0..g.k[0] {
                    let Some(y) = (i * g.s[0] + a * g.d[0]).checked_sub(g.p[0]) else {
                        continue;
                    };
                    if y >= h {
                        continue;
                    }
                    for b in 0..g.k[1] {
                        let Some(z) = (j * g.s[1] + b * g.d[1]).checked_sub(g.p[1]) else {
                            continue;
                        };
                        if z >= w {
                            continue;
                        }
                        let v = xs[pl * h * w + y * w + z].to_f64();
                        match best {
                            Some((m, _)) if m.is_nan() || !(v > m || v.is_nan()) => {}
                            _ => best = Some((v, y * w + z)),
                        }
                    }
                }
                let (_, flat) = best.unwrap_or((0.0, 0));
                vals.push(xs[pl * h * w + flat]);
                at.push(flat as i64);
            }
        }
    }
    let shaped = |e: ndarray::ShapeError| Error::InvalidArgument(e.to_string());
    Ok((
        ArrayD::from_shape_vec(IxDyn(&g.out), vals).map_err(shaped)?,
        ArrayD::from_shape_vec(IxDyn(&g.out), at).map_err(shaped)?,
    ))
}

/// The gradient of [`max_pool2d_with_indices`]: zeros of `x_shape`, plus each element of
/// `grad_out` at its index in its plane (overlapping windows accumulate), in f64.
///
/// # Errors
/// [`Error::ShapeMismatch`] when `grad_out` and `indices` do not have the same shape,
/// [`Error::InvalidArgument`] for an index outside its plane or a rank other than 3 or 4.
///
/// # Examples
/// ```
/// use ascendcl::reference::max_pool2d_with_indices_backward;
/// use ndarray::array;
///
/// let g = array![[[1.0f32, 2.0]]];
/// let at = array![[[3i64, 3]]];
/// let dx = max_pool2d_with_indices_backward(g.view(), &[1, 2, 2], at.view())?;
/// assert_eq!(dx.into_raw_vec_and_offset().0, vec![0.0, 0.0, 0.0, 3.0]);
/// # Ok::<(), ascendcl::Error>(())
/// ```
pub fn max_pool2d_with_indices_backward<T: Element, I: Element, D: Dimension, E: Dimension>(
    grad_out: ArrayView<'_, T, D>,
    x_shape: &[usize],
    indices: ArrayView<'_, I, E>,
) -> Result<ArrayD<f64>> {
    if grad_out.shape() != indices.shape() {
        return Err(Error::ShapeMismatch {
            argument: "indices",
            expected: grad_out.shape().to_vec(),
            actual: indices.shape().to_vec(),
        });
    }
    let r = x_shape.len();
    if !(3..=4).contains(&r) || grad_out.ndim() != r {
        return Err(Error::InvalidArgument(format!(
            "self {x_shape:?} and gradOutput {:?} must have 3 or 4 dims",
            grad_out.shape()
        )));
    }
    let plane = x_shape[r - 2] * x_shape[r - 1];
    let per = grad_out.shape()[r - 2] * grad_out.shape()[r - 1];
    let mut out = vec![0f64; x_shape.iter().product()];
    for (k, (g, i)) in grad_out.iter().zip(indices.iter()).enumerate() {
        let i = i.to_f64() as i64;
        if i < 0 || i as usize >= plane {
            return Err(Error::InvalidArgument(format!(
                "index {i} is outside a plane of {plane}"
            )));
        }
        out[(k / per.max(1)) * plane + i as usize] += g.to_f64();
    }
    ArrayD::from_shape_vec(IxDyn(x_shape), out).map_err(|e| Error::InvalidArgument(e.to_string()))
}
