//! The references of the binary family (`aclnnSub`, `aclnnDiv`, ...): each row's formula
//! in f64 on every element of the broadcast shape of two views of one element type,
//! rounded once to it. A row of [`ascend_ops::binary`] gives each function its formula, so
//! the reference and the simulated kernel read the same facts.

use super::exact::{broadcast_to, zip2};
use super::mish_backward::Broadcast;
use crate::element::Element;
use crate::error::Result;
use crate::shape::check_broadcast;
use ndarray::{Array, ArrayView, DimMax, Dimension};

/// `f(self, other, alpha)` of the row `name` over the broadcast shape, in f64, rounded
/// once to `O`.
fn apply<T, O, DA, DB>(
    name: &str,
    a: ArrayView<'_, T, DA>,
    b: ArrayView<'_, T, DB>,
    alpha: f64,
) -> Result<Array<O, Broadcast<DA, DB>>>
where
    T: Element,
    O: Element,
    DA: Dimension + DimMax<DB>,
    DB: Dimension,
{
    let f: fn(f64, f64, f64) -> f64 = ascend_ops::binary::row(name).map_or(|x, _, _| x, |r| r.f64);
    // The device takes alpha as 1 unless it is above or below 1: only NaN changes.
    let alpha = if alpha.is_nan() { 1.0 } else { alpha };
    let shape = check_broadcast(&[("self", a.shape()), ("other", b.shape())], &[])?;
    let mut out = super::zeros::<O, Broadcast<DA, DB>>(&shape)?;
    let a = broadcast_to("self", &a, &shape)?;
    let b = broadcast_to("other", &b, &shape)?;
    zip2(a, b, out.view_mut().into_dyn(), |x, y| f(x, y, alpha));
    Ok(out)
}

/// One reference function per row of the family.
macro_rules! reference_binary {
    ($(
        $(#[$doc:meta])*
        $rust:ident($name:ident $(, $inplace:ident)?) $inputs:tt [$($quirk:ident)?] { $($facts:tt)* }
    )*) => { $(
        reference_binary!(@one $inputs [$($quirk)?] [$(#[$doc])*] $rust $name);
    )* };
    (@one [$other:literal] [bool_out] [$(#[$doc:meta])*] $rust:ident $name:ident) => {
        #[doc = concat!("The reference of `aclnn", stringify!($name), "`: ")]
        $(#[$doc])*
        ///
        /// Evaluated in f64 over the broadcast shape of the two views, as a new `bool`
        /// array.
        ///
        /// # Errors
        /// [`Error::TooManyDims`](crate::Error::TooManyDims) above 8 dims,
        /// [`Error::NotBroadcastable`](crate::Error::NotBroadcastable) when the shapes do
        /// not broadcast, [`Error::InvalidArgument`](crate::Error::InvalidArgument) when
        /// the output would not fit in memory.
        pub fn $rust<T, DA, DB>(
            a: ArrayView<'_, T, DA>,
            b: ArrayView<'_, T, DB>,
        ) -> Result<Array<bool, Broadcast<DA, DB>>>
        where
            T: Element,
            DA: Dimension + DimMax<DB>,
            DB: Dimension,
        {
            apply(stringify!($name), a, b, 1.0)
        }
    };
    (@one [$other:literal] [$($quirk:ident)?] [$(#[$doc:meta])*] $rust:ident $name:ident) => {
        #[doc = concat!("The reference of `aclnn", stringify!($name), "`: ")]
        $(#[$doc])*
        ///
        /// Evaluated in f64 over the broadcast shape of the two views and rounded once to
        /// their element type (integers: truncated toward zero and saturated, as the
        /// device's cast).
        ///
        /// # Errors
        /// [`Error::TooManyDims`](crate::Error::TooManyDims) above 8 dims,
        /// [`Error::NotBroadcastable`](crate::Error::NotBroadcastable) when the shapes do
        /// not broadcast, [`Error::InvalidArgument`](crate::Error::InvalidArgument) when
        /// the output would not fit in memory.
        pub fn $rust<T, DA, DB>(
            a: ArrayView<'_, T, DA>,
            b: ArrayView<'_, T, DB>,
        ) -> Result<Array<T, Broadcast<DA, DB>>>
        where
            T: Element,
            DA: Dimension + DimMax<DB>,
            DB: Dimension,
        {
            apply(stringify!($name), a, b, 1.0)
        }
    };
    (@one [$other:literal, alpha] [$($quirk:ident)?] [$(#[$doc:meta])*] $rust:ident $name:ident) => {
        #[doc = concat!("The reference of `aclnn", stringify!($name), "`: ")]
        $(#[$doc])*
        ///
        /// Evaluated in f64 over the broadcast shape of the two views and rounded once to
        /// their element type; a NaN `alpha` counts as 1, as on the device.
        ///
        /// # Errors
        /// [`Error::TooManyDims`](crate::Error::TooManyDims) above 8 dims,
        /// [`Error::NotBroadcastable`](crate::Error::NotBroadcastable) when the shapes do
        /// not broadcast, [`Error::InvalidArgument`](crate::Error::InvalidArgument) when
        /// the output would not fit in memory.
        pub fn $rust<T, DA, DB>(
            a: ArrayView<'_, T, DA>,
            b: ArrayView<'_, T, DB>,
            alpha: impl Into<crate::protocol::Scalar>,
        ) -> Result<Array<T, Broadcast<DA, DB>>>
        where
            T: Element,
            DA: Dimension + DimMax<DB>,
            DB: Dimension,
        {
            apply(stringify!($name), a, b, alpha.into().to_f64())
        }
    };
}

ascend_ops::binary_family!(reference_binary);

#[cfg(test)]
mod tests {
    use ndarray::array;

    #[test]
    fn each_function_evaluates_its_rows_exact_values() {
        for row in ascend_ops::binary::ROWS {
            for &(x, y, alpha, want) in row.golden {
                let (a, b) = (array![x as f32], array![y as f32]);
                let got: f32 = super::apply(row.name, a.view(), b.view(), alpha).unwrap()[0];
                assert!(
                    got.to_bits() == (want as f32).to_bits() || got.is_nan() && want.is_nan(),
                    "{}({x}, {y}, {alpha}): {got}",
                    row.name
                );
            }
        }
    }

    #[test]
    fn broadcast_and_integers_follow_the_rows() {
        let d = super::div(array![[7i32], [-7]].view(), array![2i32, 4].view()).unwrap();
        assert_eq!(d, array![[3, 1], [-3, -1]]);
        let s = super::sub(array![5i64].view(), array![2i64, 3].view(), 2).unwrap();
        assert_eq!(s, array![1, -1]);
        let p = super::pow_tensor_tensor(array![2i32, 2].view(), array![10i32, -1].view()).unwrap();
        assert_eq!(p, array![1024, 0]);
    }
}
