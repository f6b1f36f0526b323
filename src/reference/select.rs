//! The references of `aclnnSWhere` (`condition ? self : other`) and
//! `aclnnInplaceMaskedFillScalar` (`value` where a mask holds): selections, exact.

use super::exact::broadcast_to;
use crate::element::Element;
use crate::error::Result;
use crate::protocol::Scalar;
use crate::shape::broadcast;
use ndarray::{ArrayD, ArrayView, Dimension, Zip};

/// `condition ? x : other` of three broadcastable views, as a new array of the broadcast
/// shape: each element copied from `x` where `condition` is nonzero (true), else from
/// `other`. `x` and `other` share the compute type `T`: convert them to their promoted
/// type first (exact, as the library's conversion is), and [`cast`](super::cast) the
/// result for another output type.
///
/// # Errors
/// [`crate::Error::TooManyDims`] when an input has more than 8 dims,
/// [`crate::Error::NotBroadcastable`] when the shapes do not broadcast.
///
/// # Examples
/// ```
/// use ascendcl::reference::s_where;
/// use ndarray::array;
///
/// let cond = array![[1u8], [0]]; // broadcast along the rows
/// let got = s_where(cond.view(), array![1i64, 2, 3].view(), array![-1i64].view())?;
/// assert_eq!(got, array![[1i64, 2, 3], [-1, -1, -1]].into_dyn());
/// # Ok::<(), ascendcl::Error>(())
/// ```
pub fn s_where<C, T, DC, DX, DY>(
    condition: ArrayView<'_, C, DC>,
    x: ArrayView<'_, T, DX>,
    other: ArrayView<'_, T, DY>,
) -> Result<ArrayD<T>>
where
    C: Element,
    T: Element,
    DC: Dimension,
    DX: Dimension,
    DY: Dimension,
{
    let shape = broadcast(&[
        ("condition", condition.shape()),
        ("self", x.shape()),
        ("other", other.shape()),
    ])?;
    let shape = shape.as_slice();
    let c = broadcast_to("condition", &condition, shape)?;
    let a = broadcast_to("self", &x, shape)?;
    let b = broadcast_to("other", &other, shape)?;
    Ok(Zip::from(&c)
        .and(&a)
        .and(&b)
        .map_collect(|&c, &a, &b| if c.to_f64() != 0.0 { a } else { b }))
}

/// `x` with `value` where `mask` (broadcast to `x`'s shape) is true, as a new array.
/// `value` is converted once to `T` (rounded to nearest; to an integer type truncated
/// toward zero; nonzero to `bool` true). An `i64` value goes through `f64`, exact up to
/// 2^53; the device converts an INT64 scalar exactly.
///
/// # Errors
/// [`crate::Error::TooManyDims`] when an input has more than 8 dims,
/// [`crate::Error::NotBroadcastable`] when `mask` does not broadcast to `x`'s shape.
///
/// # Examples
/// ```
/// use ascendcl::reference::masked_fill_scalar;
/// use ndarray::array;
///
/// let x = array![[1i32, 2], [3, 4]];
/// let got = masked_fill_scalar(x.view(), array![true, false].view(), 7.9)?;
/// assert_eq!(got, array![[7, 2], [7, 4]].into_dyn());
/// # Ok::<(), ascendcl::Error>(())
/// ```
pub fn masked_fill_scalar<T, D, DM>(
    x: ArrayView<'_, T, D>,
    mask: ArrayView<'_, bool, DM>,
    value: impl Into<Scalar>,
) -> Result<ArrayD<T>>
where
    T: Element,
    D: Dimension,
    DM: Dimension,
{
    crate::shape::check_broadcast(
        &[("selfRef", x.shape()), ("mask", mask.shape())],
        &[("selfRef", x.shape())],
    )?;
    let v = T::from_f64(value.into().to_f64());
    let m = broadcast_to("mask", &mask, x.shape())?;
    let mut out = x.into_dyn().to_owned();
    Zip::from(&mut out).and(&m).for_each(|o, &m| {
        if m {
            *o = v;
        }
    });
    Ok(out)
}
