//! The references of `aclnnNLLLoss` and `aclnnNLLLossBackward`.

use crate::attrs::Reduction;
use crate::element::Element;
use crate::error::{Error, Result};
use ndarray::{ArrayD, ArrayView, Dimension, IxDyn};

/// `(N, C)` and the class of each sample (`None` when it is `ignore_index` or outside
/// `0..C`), after the operators' shape rules.
fn labels<T: Element, I: Element>(
    x: &ArrayView<'_, T, IxDyn>,
    target: &ArrayView<'_, I, IxDyn>,
    weight: &ArrayView<'_, T, IxDyn>,
    ignore_index: i64,
) -> Result<(usize, usize, Vec<Option<usize>>)> {
    let (n, c) = match (x.shape(), target.shape()) {
        (&[c], &[]) => (1, c),
        (&[n, c], &[m]) if n == m => (n, c),
        (xs, ts) => {
            return Err(Error::InvalidArgument(format!(
                "target of shape {ts:?} does not label self of shape {xs:?}: [N] for [N, C], \
                 0-D for [C]"
            )));
        }
    };
    if weight.shape() != [c] {
        return Err(Error::ShapeMismatch {
            argument: "weight",
            expected: vec![c],
            actual: weight.shape().to_vec(),
        });
    }
    let ys = target
        .iter()
        .map(|t| {
            let k = t.to_f64() as i64;
            (k != ignore_index && (0..c as i64).contains(&k)).then_some(k as usize)
        })
        .collect();
    Ok((n, c, ys))
}

/// The negative log-likelihood as `aclnnNLLLoss` computes it: `l_n = −weight[y_n]·x[n,
/// y_n]` for each sample whose label `y_n` is not `ignore_index` (0 for the others), and
/// the total weight `Σ weight[y_n]` over those; returned as `(out, total_weight)`: `out`
/// is the `l_n` (`[N]`, or 0-D for a 1-D `x`) for [`Reduction::None`], `Σ l_n / Σ
/// weight[y_n]` for [`Reduction::Mean`], `Σ l_n` for [`Reduction::Sum`] (0-D);
/// `total_weight` 0-D (the device writes it only for mean and sum). `x` is `[N, C]` with
/// `target` `[N]`, or `[C]` with a 0-D `target`; `weight` is `[C]`. Labels outside `0..C`
/// count as ignored (the simulator's choice; undefined on the device). No samples give
/// an empty `out`, a NaN mean, a zero sum.
///
/// # Accuracy
/// f64 products and sums (exact for f16 and bf16 inputs, a few 2⁻⁵³ relative otherwise),
/// rounded once to `T`.
///
/// # Errors
/// [`Error::InvalidArgument`] for `target`'s shape, [`Error::ShapeMismatch`] for
/// `weight`'s.
///
/// # Examples
/// ```
/// use ascendcl::{Reduction, reference::nll_loss};
/// use ndarray::{arr0, array};
/// let logp = array![[-0.5f32, -1.0], [-2.0, -0.25]];
/// let w = array![1.0f32, 3.0];
/// let (loss, total) = nll_loss(logp.view(), array![1i64, 0].view(), w.view(), Reduction::Sum, -100)?;
/// assert_eq!((loss, total), (arr0(5.0f32).into_dyn(), arr0(4.0f32).into_dyn()));
/// # Ok::<(), ascendcl::Error>(())
/// ```
pub fn nll_loss<T: Element, I: Element, D: Dimension, E: Dimension, F: Dimension>(
    x: ArrayView<'_, T, D>,
    target: ArrayView<'_, I, E>,
    weight: ArrayView<'_, T, F>,
    reduction: Reduction,
    ignore_index: i64,
) -> Result<(ArrayD<T>, ArrayD<T>)> {
    let (x, target, weight) = (x.into_dyn(), target.into_dyn(), weight.into_dyn());
    let (_, c, ys) = labels(&x, &target, &weight, ignore_index)?;
    let xs: Vec<f64> = x.iter().map(|v| v.to_f64()).collect();
    let (mut sum, mut total) = (0.0f64, 0.0f64);
    let losses: Vec<f64> = ys
        .iter()
        .enumerate()
        .map(|(n, y)| match *y {
            Some(k) => {
                let w = weight[[k]].to_f64();
                total += w;
                let l = -w * xs[n * c + k];
                sum += l;
                l
            }
            None => 0.0,
        })
        .collect();
    let zero_d = |v: f64| ArrayD::from_elem(IxDyn(&[]), T::from_f64(v));
    let out = match reduction {
        Reduction::None if x.ndim() == 2 => ArrayD::from_shape_vec(
            IxDyn(&[losses.len()]),
            losses.into_iter().map(T::from_f64).collect(),
        )
        .map_err(|e| Error::InvalidArgument(e.to_string()))?,
        Reduction::None => zero_d(losses.first().copied().unwrap_or(0.0)),
        Reduction::Mean => zero_d(if ys.is_empty() { f64::NAN } else { sum / total }),
        Reduction::Sum => zero_d(sum),
    };
    Ok((out, zero_d(total)))
}

/// The gradient of [`nll_loss`] with respect to `x` (`aclnnNLLLossBackward`): zeros of
/// `x`'s shape except `−weight[y_n]·g` at `[n, y_n]`, where `g` is `grad[n]` for
/// [`Reduction::None`] (`grad` `[N]`, or one element for a 1-D `x`), the one element of
/// `grad` for [`Reduction::Sum`], and that divided by the one element of `total_weight`
/// for [`Reduction::Mean`]. Ignored labels give zero rows. Computed in f64, rounded once.
///
/// # Errors
/// As [`nll_loss`], plus [`Error::ShapeMismatch`] for `grad` or `total_weight`.
///
/// # Examples
/// ```
/// use ascendcl::{Reduction, reference::nll_loss_backward};
/// use ndarray::{arr0, array};
/// let logp = array![[-0.5f32, -1.0], [-2.0, -0.25]];
/// let dx = nll_loss_backward(
///     arr0(1.0f32).view(), logp.view(), array![1i64, 0].view(), array![1.0f32, 3.0].view(),
///     Reduction::Mean, -100, arr0(4.0f32).view(),
/// )?;
/// assert_eq!(dx, array![[0.0f32, -0.75], [-0.25, 0.0]].into_dyn());
/// # Ok::<(), ascendcl::Error>(())
/// ```
#[allow(clippy::too_many_arguments)]
pub fn nll_loss_backward<
    T: Element,
    I: Element,
    D: Dimension,
    E: Dimension,
    F: Dimension,
    G: Dimension,
    H: Dimension,
>(
    grad: ArrayView<'_, T, G>,
    x: ArrayView<'_, T, D>,
    target: ArrayView<'_, I, E>,
    weight: ArrayView<'_, T, F>,
    reduction: Reduction,
    ignore_index: i64,
    total_weight: ArrayView<'_, T, H>,
) -> Result<ArrayD<T>> {
    let (x, target, weight) = (x.into_dyn(), target.into_dyn(), weight.into_dyn());
    let (n, c, ys) = labels(&x, &target, &weight, ignore_index)?;
    let per_sample = reduction == Reduction::None && x.ndim() == 2;
    let want = if per_sample { n } else { 1 };
    if grad.len() != want || (per_sample && grad.ndim() != 1) {
        return Err(Error::ShapeMismatch {
            argument: "gradOutput",
            expected: if per_sample { vec![n] } else { vec![] },
            actual: grad.shape().to_vec(),
        });
    }
    let total = match total_weight.iter().next() {
        Some(t) if total_weight.len() == 1 => t.to_f64(),
        _ => {
            return Err(Error::ShapeMismatch {
                argument: "totalWeight",
                expected: vec![],
                actual: total_weight.shape().to_vec(),
            });
        }
    };
    let g: Vec<f64> = grad.iter().map(|v| v.to_f64()).collect();
    let mut out = vec![0.0f64; x.len()];
    for (i, y) in ys.iter().enumerate() {
        if let Some(k) = *y {
            let scale = match reduction {
                Reduction::None => g[if per_sample { i } else { 0 }],
                Reduction::Mean => g[0] / total,
                Reduction::Sum => g[0],
            };
            out[i * c + k] = -weight[[k]].to_f64() * scale;
        }
    }
    ArrayD::from_shape_vec(IxDyn(x.shape()), out.into_iter().map(T::from_f64).collect())
        .map_err(|e| Error::InvalidArgument(e.to_string()))
}
