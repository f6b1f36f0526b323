//! The references of the unary family (`aclnnExp`, ...): each row's formula in f64 on
//! every element, rounded once to the element type. A row of
//! [`ascend_ops::unary`] gives each function its formula, so the reference and the
//! simulated kernel read the same facts.

use crate::element::Element;
use crate::error::Result;
use crate::shape::Dims;
use ndarray::{Array, ArrayView, Dimension};

/// `f(x)` of every element of `x` by the formula of the row `name`, in f64, rounded once
/// to `T` (integers: truncated toward zero and saturated, as the device's cast), as a new
/// array of `x`'s shape.
fn apply<T: Element, D: Dimension>(name: &str, x: ArrayView<'_, T, D>) -> Result<Array<T, D>> {
    Dims::new("self", x.shape())?;
    let f = ascend_ops::unary::row(name).map(|r| r.f64).unwrap_or(|v| v);
    let mut out = super::zeros::<T, D>(x.shape())?;
    out.zip_mut_with(&x, |o, &v| *o = T::from_f64(f(v.to_f64())));
    Ok(out)
}

/// One reference function per row of the family.
macro_rules! reference_unary {
    ($(
        $(#[$doc:meta])*
        $rust:ident($name:ident $(, $inplace:ident)?) $([$quirk:ident])? { $($facts:tt)* }
    )*) => { $(
        #[doc = concat!("The reference of `aclnn", stringify!($name), "`: ")]
        $(#[$doc])*
        ///
        /// Evaluated in f64 and rounded once to the element type, as a new array of
        /// `x`'s shape and dimension type.
        ///
        /// # Errors
        /// [`Error::TooManyDims`](crate::Error::TooManyDims) above 8 dims,
        /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) when the output would
        /// not fit in memory.
        pub fn $rust<T: Element, D: Dimension>(x: ArrayView<'_, T, D>) -> Result<Array<T, D>> {
            apply(stringify!($name), x)
        }
    )* };
}

ascend_ops::unary_family!(reference_unary);

#[cfg(test)]
mod tests {
    use ndarray::array;

    #[test]
    fn each_function_evaluates_its_rows_exact_values() {
        for row in ascend_ops::unary::ROWS {
            for &(x, want) in row.golden {
                let x = x as f32;
                let got = super::apply::<f32, _>(row.name, array![x].view()).unwrap()[0];
                // The golden inputs are exact in f32, so the result is `want` rounded once.
                assert_eq!(got.to_bits(), (want as f32).to_bits(), "{}({x})", row.name);
            }
        }
    }

    #[test]
    fn half_types_round_once_from_the_f64_value() {
        let y = super::exp(array![half::f16::from_f32(1.0)].view()).unwrap();
        assert_eq!(y[0], half::f16::from_f64(std::f64::consts::E));
    }
}
