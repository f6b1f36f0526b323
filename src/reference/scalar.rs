//! The references of the tensor–scalar family (`aclnnAdds`, ...): each row's formula in
//! f64 on every element with the scalar term, as the device computes it: `self`, `other`
//! and `alpha` converted to the compute dtype, the result rounded once to it and then
//! converted to the element type. A row of [`ascend_ops::scalar`] gives each function its
//! formula, so the reference and the simulated kernel read the same facts.

use super::exact::round_to;
use crate::element::{DType, Element};
use crate::error::Result;
use crate::protocol::Scalar;
use crate::shape::Dims;
use ascend_ops::scalar::Rule;
use ndarray::{Array, ArrayView, Dimension};

/// The dtype the device computes `self` of `T` with a scalar `other` in, where it is one
/// of the element types: a floating `self` its own (Muls: bf16 in f32); an integer or
/// bool `self` with an integer scalar its own (Divs: f32, but BOOL by a BOOL scalar);
/// otherwise f32 (a floating scalar). PowTensorScalar raises a bool `self` in i64 (its
/// PromoteType with an INT64 exponent).
fn compute<T: Element>(rule: Rule, other: Scalar) -> DType {
    let float_scalar = matches!(other, Scalar::F64(_) | Scalar::F32(_));
    match T::DTYPE {
        DType::BF16 if rule == Rule::Muls => DType::F32,
        DType::Bool if rule == Rule::Pow && !float_scalar => DType::I64,
        d if d.is_float() => d,
        DType::Bool if matches!(other, Scalar::Bool(_)) => DType::Bool,
        DType::Bool if rule != Rule::Divs && !float_scalar => DType::Bool,
        d if rule != Rule::Divs && !float_scalar => d,
        _ => DType::F32,
    }
}

/// The row `name`'s formula on every element of `x` with `other` (and `alpha`).
fn apply<T: Element, D: Dimension>(
    name: &str,
    x: ArrayView<'_, T, D>,
    other: Scalar,
    alpha: Scalar,
) -> Result<Array<T, D>> {
    Dims::new("self", x.shape())?;
    let Some(row) = ascend_ops::scalar::row(name) else {
        return Err(crate::Error::InvalidArgument(format!("no row {name}")));
    };
    let c = compute::<T>(row.rule, other);
    // The compute dtype is one of the element types; `term` rounds only to it.
    let term = row.term(c.acl(), other.to_f64(), alpha.to_f64(), |_, v| {
        round_to(c, v)
    });
    // Integers compute with the row's integer formula where it has one (Pow's negative
    // exponents are not the real formula's).
    let int = row.int.filter(|_| !c.is_float() && c != DType::Bool);
    let mut out = super::zeros::<T, D>(x.shape())?;
    out.zip_mut_with(&x, |o, &v| {
        let v = round_to(c, v.to_f64());
        let y = match int {
            Some(g) => g(v as i64, term as i64) as f64,
            None => (row.f64)(v, term),
        };
        *o = T::from_f64(round_to(c, y));
    });
    Ok(out)
}

/// The comparison of row `name` of every element of `x` with `other`: a floating `x`
/// compares in its own type, with `other` rounded to it (GtScalar, GeScalar: unless that
/// moves it by more than f32's epsilon, when the comparison is exact); other types
/// exactly, but in f32 with a floating scalar for LtScalar and LeScalar.
fn compare<T: Element, D: Dimension>(
    name: &str,
    x: ArrayView<'_, T, D>,
    other: Scalar,
) -> Result<Array<bool, D>> {
    Dims::new("self", x.shape())?;
    let Some(row) = ascend_ops::scalar::row(name) else {
        return Err(crate::Error::InvalidArgument(format!("no row {name}")));
    };
    let value = other.to_f64();
    let rounded = round_to(T::DTYPE, value);
    let exact = |v: f64| v;
    let in_f32 = |v: f64| round_to(DType::F32, v);
    // LtScalar and LeScalar compare an integer or bool self with a floating scalar in f32.
    let float_scalar = matches!(other, Scalar::F64(_) | Scalar::F32(_));
    let (cast, term): (&dyn Fn(f64) -> f64, f64) = match (T::DTYPE.is_float(), row.rule) {
        (false, Rule::Less | Rule::LessEqual) if float_scalar => (&in_f32, in_f32(value)),
        (false, _) => (&exact, value),
        (true, Rule::Greater | Rule::GreaterEqual)
            if (rounded - value).abs() > f64::from(f32::EPSILON) =>
        {
            (&exact, value)
        }
        (true, _) => (&exact, rounded),
    };
    let mut out = super::zeros::<bool, D>(x.shape())?;
    out.zip_mut_with(&x, |o, &v| *o = (row.f64)(cast(v.to_f64()), term) != 0.0);
    Ok(out)
}

/// One reference function per row of the family.
macro_rules! reference_scalar {
    ($(
        $(#[$doc:meta])*
        $rust:ident($name:ident, $inplace:ident) [$($marker:ident)*] { $($facts:tt)* }
    )*) => { $(
        reference_scalar!(@one [$($marker)*] [$(#[$doc])*] $rust $name);
    )* };
    (@one [alpha $($quirk:ident)?] [$(#[$doc:meta])*] $rust:ident $name:ident) => {
        #[doc = concat!("The reference of `aclnn", stringify!($name), "`: ")]
        $(#[$doc])*
        ///
        /// In f64 from the values converted to the compute dtype, rounded once to it, as a
        /// new array of `x`'s shape. Integer results are exact where they fit (the device
        /// wraps on overflow, the reference saturates).
        ///
        /// # Errors
        /// [`Error::TooManyDims`](crate::Error::TooManyDims) above 8 dims,
        /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) when the output would
        /// not fit in memory.
        pub fn $rust<T: Element, D: Dimension>(
            x: ArrayView<'_, T, D>,
            other: impl Into<Scalar>,
            alpha: impl Into<Scalar>,
        ) -> Result<Array<T, D>> {
            apply(stringify!($name), x, other.into(), alpha.into())
        }
    };
    (@one [compare $($quirk:ident)*] [$(#[$doc:meta])*] $rust:ident $name:ident) => {
        #[doc = concat!("The reference of `aclnn", stringify!($name), "`: ")]
        $(#[$doc])*
        ///
        /// Compared exactly, with `other` converted as the device converts it (to a
        /// floating `x`'s type), as a new `bool` array of `x`'s shape.
        ///
        /// # Errors
        /// [`Error::TooManyDims`](crate::Error::TooManyDims) above 8 dims,
        /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) when the output would
        /// not fit in memory.
        pub fn $rust<T: Element, D: Dimension>(
            x: ArrayView<'_, T, D>,
            other: impl Into<Scalar>,
        ) -> Result<Array<bool, D>> {
            compare(stringify!($name), x, other.into())
        }
    };
    (@one [$(const_self_ref)? $(const_out)?] [$(#[$doc:meta])*] $rust:ident $name:ident) => {
        #[doc = concat!("The reference of `aclnn", stringify!($name), "`: ")]
        $(#[$doc])*
        ///
        /// In f64 from the values converted to the compute dtype, rounded once to it, as a
        /// new array of `x`'s shape.
        ///
        /// # Errors
        /// [`Error::TooManyDims`](crate::Error::TooManyDims) above 8 dims,
        /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) when the output would
        /// not fit in memory.
        pub fn $rust<T: Element, D: Dimension>(
            x: ArrayView<'_, T, D>,
            other: impl Into<Scalar>,
        ) -> Result<Array<T, D>> {
            apply(stringify!($name), x, other.into(), Scalar::I64(1))
        }
    };
}

ascend_ops::scalar_family!(reference_scalar);

#[cfg(test)]
mod tests {
    use ndarray::array;

    #[test]
    fn each_function_evaluates_its_rows_exact_values() {
        for row in ascend_ops::scalar::ROWS {
            for &(x, other, alpha, want) in row.golden {
                let got = super::apply::<f32, _>(
                    row.name,
                    array![x as f32].view(),
                    other.into(),
                    alpha.into(),
                )
                .unwrap()[0];
                assert_eq!(got.to_bits(), (want as f32).to_bits(), "{}({x})", row.name);
            }
        }
    }

    #[test]
    fn integers_stay_integers_and_divs_truncates() {
        let x = array![7i32, -7];
        assert_eq!(super::muls(x.view(), 3).unwrap(), array![21, -21]);
        assert_eq!(super::subs(x.view(), 2, 3).unwrap(), array![1, -13]);
        assert_eq!(super::divs(x.view(), 2).unwrap(), array![3, -3]);
    }
}
