//! The references of `aclnnConvolution` and `aclnnConvolutionBackward`: direct sums in
//! f64 over 1-D, 2-D and 3-D (transposed) convolutions with groups.

use crate::element::Element;
use crate::error::{Error, Result};
use ndarray::{ArrayD, ArrayView, Dimension, IxDyn};

/// The attributes of a convolution, as `aclnnConvolution` takes them (one value per
/// spatial dim, or for `padding` of a 1-D or 2-D convolution optionally a front and a
/// back value per dim: `[top, bottom, left, right]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConvSpec<'a> {
    /// The step between output positions, per spatial dim.
    pub stride: &'a [i64],
    /// The zero padding (see above).
    pub padding: &'a [i64],
    /// The spacing of the kernel taps.
    pub dilation: &'a [i64],
    /// A transposed convolution (the gradient of a convolution with respect to its input).
    pub transposed: bool,
    /// Extra size at the back of a transposed convolution's output.
    pub output_padding: &'a [i64],
    /// Channel groups.
    pub groups: i64,
}

impl ConvSpec<'static> {
    /// Stride 1, no padding, dilation 1, not transposed, one group, for `spatial` dims
    /// (1 to 3).
    pub fn unit(spatial: usize) -> ConvSpec<'static> {
        const ONES: &[i64] = &[1, 1, 1];
        const ZEROS: &[i64] = &[0, 0, 0];
        let s = spatial.min(3);
        ConvSpec {
            stride: &ONES[..s],
            padding: &ZEROS[..s],
            dilation: &ONES[..s],
            transposed: false,
            output_padding: &ZEROS[..s],
            groups: 1,
        }
    }
}

/// The spatial geometry of a checked convolution: per spatial dim, front padding and
/// the relation "big position = small position · stride − pad + tap · dilation".
#[derive(Debug, Clone)]
pub(crate) struct Geometry {
    pub out: Vec<usize>,
    pub stride: Vec<usize>,
    pub dilation: Vec<usize>,
    pub pad: Vec<usize>,
}

fn invalid(what: String) -> Error {
    Error::InvalidArgument(what)
}

/// The output shape of a convolution of input dims `x` and weight dims `w` under `spec`,
/// with the checks of `aclnnConvolution` that do not concern dtypes or formats.
///
/// # Errors
/// [`Error::InvalidArgument`] naming what is wrong.
pub(crate) fn geometry(x: &[usize], w: &[usize], spec: &ConvSpec<'_>) -> Result<Geometry> {
    let r = x.len();
    if !(3..=5).contains(&r) || w.len() != r {
        return Err(invalid(format!(
            "input {x:?} and weight {w:?} must both have 3, 4 or 5 dims"
        )));
    }
    let s = r - 2;
    let two_sided = (r <= 4 && !spec.transposed) || (r == 4 && spec.transposed);
    let lens_ok = spec.stride.len() == s
        && spec.dilation.len() == s
        && (spec.padding.len() == s || two_sided && spec.padding.len() == 2 * s)
        && (!spec.transposed || spec.output_padding.len() == s);
    if !lens_ok {
        return Err(invalid(format!(
            "stride, dilation{} need {s} values and padding {s}{}",
            if spec.transposed {
                ", outputPadding"
            } else {
                ""
            },
            if two_sided {
                format!(" or {}", 2 * s)
            } else {
                String::new()
            }
        )));
    }
    if spec.stride.iter().chain(spec.dilation).any(|&v| v <= 0) {
        return Err(invalid("stride and dilation must be positive".into()));
    }
    if spec.padding.iter().any(|&v| v < 0) {
        return Err(invalid("padding must not be negative".into()));
    }
    if let Some(d) = (0..s).find(|&d| w[2 + d] == 0) {
        return Err(invalid(format!(
            "weight {w:?} has an empty kernel dim {}",
            d + 2
        )));
    }
    let g = spec.groups;
    if g <= 0 {
        return Err(invalid(format!("groups {g} must be positive")));
    }
    let g = g as usize;
    let (cin, cout) = if spec.transposed {
        if w[0] != x[1] {
            return Err(invalid(format!(
                "transposed: weight[0] of {w:?} must be input's channels {}",
                x[1]
            )));
        }
        (x[1], w[1] * g)
    } else {
        if w[1] * g != x[1] {
            return Err(invalid(format!(
                "input's channels {} must be weight[1] of {w:?} times groups {g}",
                x[1]
            )));
        }
        (x[1], w[0])
    };
    if !w[0].is_multiple_of(g) || (spec.transposed && cin == 0) {
        return Err(invalid(format!(
            "weight[0] of {w:?} must be a multiple of groups {g} (and a transposed input needs channels)"
        )));
    }
    let pair = spec.padding.len() == 2 * s && s != spec.padding.len();
    let (front, total): (Vec<i64>, Vec<i64>) = (0..s)
        .map(|d| {
            if pair {
                (
                    spec.padding[2 * d],
                    spec.padding[2 * d] + spec.padding[2 * d + 1],
                )
            } else {
                (spec.padding[d], 2 * spec.padding[d])
            }
        })
        .unzip();
    let mut out = vec![x[0], cout];
    for d in 0..s {
        let (i, k) = (x[2 + d] as i64, w[2 + d] as i64);
        let (st, dl) = (spec.stride[d], spec.dilation[d]);
        let o = if spec.transposed {
            let op = spec.output_padding[d];
            if op < 0 || (op >= st && op >= dl) {
                return Err(invalid(format!(
                    "outputPadding[{d}] {op} must be below stride or dilation"
                )));
            }
            (i - 1) * st - total[d] + dl * (k - 1) + op + 1
        } else {
            let span = i + total[d] - dl * (k - 1) - 1;
            if span < 0 && x.iter().all(|&e| e > 0) {
                return Err(invalid(format!(
                    "input {x:?} padded is smaller than the dilated kernel {w:?}"
                )));
            }
            span / st + 1
        };
        if o < 0 {
            return Err(invalid(format!("the output would have a negative dim {o}")));
        }
        out.push(o as usize);
    }
    let _ = cin;
    Ok(Geometry {
        out,
        stride: spec.stride.iter().map(|&v| v as usize).collect(),
        dilation: spec.dilation.iter().map(|&v| v as usize).collect(),
        pad: front.iter().map(|&v| v as usize).collect(),
    })
}

/// Row-major strides of `dims`.
fn strides(dims: &[usize]) -> Vec<usize> {
    let mut s = vec![1; dims.len()];
    for d in (0..dims.len().saturating_sub(1)).rev() {
        s[d] = s[d + 1] * dims[d + 1];
    }
    s
}

/// Every (small position, tap) pair of one spatial layout whose big position is inside
/// `big`: calls `f(small offset, tap offset, big offset)` (offsets within one channel).
fn taps(
    small: &[usize],
    kernel: &[usize],
    big: &[usize],
    g: &Geometry,
    mut f: impl FnMut(usize, usize, usize),
) {
    let (ss, ks, bs) = (strides(small), strides(kernel), strides(big));
    let (ns, nk): (usize, usize) = (small.iter().product(), kernel.iter().product());
    for o in 0..ns {
        'tap: for k in 0..nk {
            let mut at = 0;
            for d in 0..small.len() {
                let (od, kd) = ((o / ss[d]) % small[d], (k / ks[d]) % kernel[d]);
                let p = (od * g.stride[d] + kd * g.dilation[d]).checked_sub(g.pad[d]);
                match p {
                    Some(p) if p < big[d] => at += p * bs[d],
                    _ => continue 'tap,
                }
            }
            f(o, k, at);
        }
    }
}

fn to_f64<T: Element, D: Dimension>(a: &ArrayView<'_, T, D>) -> Vec<f64> {
    a.iter().map(|e| e.to_f64()).collect()
}

/// The convolution of `x` (N, C, spatial...) with `weight` ((Cout, C/groups, kernel...),
/// transposed: (C, Cout/groups, kernel...)) plus an optional `bias` (Cout), as
/// `aclnnConvolution` computes it, summed in f64. An empty input gives an empty (or
/// zero) output of the inferred shape.
///
/// # Errors
/// [`Error::InvalidArgument`] for ranks, attribute lengths and values, channels and
/// groups as `aclnnConvolution` checks them; [`Error::ShapeMismatch`] naming `bias`.
///
/// # Examples
/// ```
/// use ascendcl::reference::{ConvSpec, convolution};
/// use ndarray::Array;
///
/// let x = Array::from_shape_vec((1, 1, 1, 3), vec![1.0f32, 2.0, 3.0]).unwrap();
/// let w = Array::from_shape_vec((1, 1, 1, 2), vec![1.0f32, -1.0]).unwrap();
/// let y = convolution(x.view(), w.view(), None::<ndarray::ArrayView1<f32>>, &ConvSpec::unit(2))?;
/// assert_eq!(y.into_raw_vec_and_offset().0, vec![-1.0, -1.0]);
/// # Ok::<(), ascendcl::Error>(())
/// ```
pub fn convolution<T: Element, W: Element, B: Element, D: Dimension, E: Dimension>(
    x: ArrayView<'_, T, D>,
    weight: ArrayView<'_, W, E>,
    bias: Option<ArrayView<'_, B, ndarray::Ix1>>,
    spec: &ConvSpec<'_>,
) -> Result<ArrayD<f64>> {
    let (xd, wd) = (x.shape().to_vec(), weight.shape().to_vec());
    let geo = geometry(&xd, &wd, spec)?;
    let (xv, wv) = (to_f64(&x), to_f64(&weight));
    let od = geo.out.clone();
    let mut out = vec![0f64; od.iter().product()];
    let g = spec.groups as usize;
    let (n, cin, cout) = (xd[0], xd[1], od[1]);
    let (cig, cog) = (cin / g, cout / g);
    let kernel = &wd[2..];
    let kv: usize = kernel.iter().product();
    let (xs, os) = (&xd[2..], &od[2..]);
    let (lx, lo): (usize, usize) = (xs.iter().product(), os.iter().product());
    for b in 0..n {
        for gi in 0..g {
            for ci in 0..cig {
                let c = gi * cig + ci;
                let xbase = (b * cin + c) * lx;
                for co in 0..cog {
                    let oc = gi * cog + co;
                    let obase = (b * cout + oc) * lo;
                    if spec.transposed {
                        let wbase = (c * cog + co) * kv;
                        taps(xs, kernel, os, &geo, |i, k, o| {
                            out[obase + o] += xv[xbase + i] * wv[wbase + k];
                        });
                    } else {
                        let wbase = (oc * cig + ci) * kv;
                        taps(os, kernel, xs, &geo, |o, k, i| {
                            out[obase + o] += xv[xbase + i] * wv[wbase + k];
                        });
                    }
                }
            }
        }
    }
    if let Some(bias) = bias {
        if bias.len() != cout {
            return Err(Error::ShapeMismatch {
                argument: "bias",
                expected: vec![cout],
                actual: bias.shape().to_vec(),
            });
        }
        for (i, v) in out.iter_mut().enumerate() {
            *v += bias[(i / lo.max(1)) % cout].to_f64();
        }
    }
    ArrayD::from_shape_vec(IxDyn(&od), out).map_err(|e| Error::InvalidArgument(e.to_string()))
}

/// The gradients of [`convolution`] with respect to its input, weight and bias, given
/// the gradient of its output (`grad_out`, of the output's shape), summed in f64.
///
/// # Errors
/// As [`convolution`]; [`Error::ShapeMismatch`] naming `gradOutput` when it does not
/// have the output's shape.
///
/// # Examples
/// ```
/// use ascendcl::reference::{ConvSpec, convolution_backward};
/// use ndarray::Array;
///
/// let x = Array::from_shape_vec((1, 1, 1, 3), vec![1.0f32, 2.0, 3.0]).unwrap();
/// let w = Array::from_shape_vec((1, 1, 1, 2), vec![1.0f32, -1.0]).unwrap();
/// let dy = Array::from_shape_vec((1, 1, 1, 2), vec![1.0f32, 1.0]).unwrap();
/// let (dx, dw, db) = convolution_backward(dy.view(), x.view(), w.view(), &ConvSpec::unit(2))?;
/// assert_eq!(dx.into_raw_vec_and_offset().0, vec![1.0, 0.0, -1.0]);
/// assert_eq!(dw.into_raw_vec_and_offset().0, vec![3.0, 5.0]);
/// assert_eq!(db.into_raw_vec_and_offset().0, vec![2.0]);
/// # Ok::<(), ascendcl::Error>(())
/// ```
#[allow(clippy::type_complexity)]
pub fn convolution_backward<
    G: Element,
    T: Element,
    W: Element,
    D: Dimension,
    E: Dimension,
    F: Dimension,
>(
    grad_out: ArrayView<'_, G, F>,
    x: ArrayView<'_, T, D>,
    weight: ArrayView<'_, W, E>,
    spec: &ConvSpec<'_>,
) -> Result<(ArrayD<f64>, ArrayD<f64>, ArrayD<f64>)> {
    let (xd, wd) = (x.shape().to_vec(), weight.shape().to_vec());
    let geo = geometry(&xd, &wd, spec)?;
    if grad_out.shape() != geo.out.as_slice() {
        return Err(Error::ShapeMismatch {
            argument: "gradOutput",
            expected: geo.out.clone(),
            actual: grad_out.shape().to_vec(),
        });
    }
    let (xv, wv, gv) = (to_f64(&x), to_f64(&weight), to_f64(&grad_out));
    let od = geo.out.clone();
    let mut gx = vec![0f64; xv.len()];
    let mut gw = vec![0f64; wv.len()];
    let mut gb = vec![0f64; od[1]];
    let g = spec.groups as usize;
    let (n, cin, cout) = (xd[0], xd[1], od[1]);
    let (cig, cog) = (cin / g, cout / g);
    let kernel = &wd[2..];
    let kv: usize = kernel.iter().product();
    let (xs, os) = (&xd[2..], &od[2..]);
    let (lx, lo): (usize, usize) = (xs.iter().product(), os.iter().product());
    for b in 0..n {
        for gi in 0..g {
            for ci in 0..cig {
                let c = gi * cig + ci;
                let xbase = (b * cin + c) * lx;
                for co in 0..cog {
                    let oc = gi * cog + co;
                    let obase = (b * cout + oc) * lo;
                    let wbase = if spec.transposed {
                        (c * cog + co) * kv
                    } else {
                        (oc * cig + ci) * kv
                    };
                    let mut visit = |i: usize, k: usize, o: usize| {
                        let dy = gv[obase + o];
                        gx[xbase + i] += dy * wv[wbase + k];
                        gw[wbase + k] += dy * xv[xbase + i];
                    };
                    if spec.transposed {
                        taps(xs, kernel, os, &geo, &mut visit);
                    } else {
                        taps(os, kernel, xs, &geo, |o, k, i| visit(i, k, o));
                    }
                }
            }
        }
    }
    for (i, v) in gv.iter().enumerate() {
        gb[(i / lo.max(1)) % cout] += v;
    }
    let shaped = |d: &[usize], v: Vec<f64>| {
        ArrayD::from_shape_vec(IxDyn(d), v).map_err(|e| Error::InvalidArgument(e.to_string()))
    };
    Ok((shaped(&xd, gx)?, shaped(&wd, gw)?, shaped(&[cout], gb)?))
}
