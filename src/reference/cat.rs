//! `aclnnCat` on the host: the tensors joined along one dim.

use crate::error::{Error, Result};
use ndarray::{ArrayD, ArrayViewD, Axis};

/// The tensors of `xs` joined along `dim` (negative: from the end), as `aclnnCat`: the
/// 1-D empty tensors (`[0]`) are dropped first; the others must share their rank and
/// their dims off `dim`.
///
/// # Errors
/// [`Error::InvalidArgument`] when nothing is left, for a `dim` outside the rank, or for
/// shapes that do not join.
pub fn cat<T: Clone>(xs: &[ArrayViewD<'_, T>], dim: isize) -> Result<ArrayD<T>> {
    let kept: Vec<ArrayViewD<'_, T>> = xs
        .iter()
        .filter(|x| x.shape() != [0])
        .map(|x| x.view())
        .collect();
    let r = kept
        .first()
        .ok_or_else(|| Error::InvalidArgument("cat: no tensor to join".into()))?
        .ndim() as isize;
    let d = if dim < 0 { dim + r } else { dim };
    if d < 0 || d >= r {
        return Err(Error::InvalidArgument(format!(
            "cat: dim {dim} outside rank {r}"
        )));
    }
    ndarray::concatenate(Axis(d as usize), &kept).map_err(|e| Error::InvalidArgument(e.to_string()))
}
