//! The tensor–scalar family (`aclnnAdds`, ...): `out = self ∘ other` elementwise with a
//! scalar `other`, and the in-place twins.
//!
//! Every operator here is a row of [`ascend_ops::scalar`], which states its dtypes per
//! product and which of the vendor's promote rules it follows; this module turns each row
//! into a function, an in-place function, an allocating form and plans.
//!
//! For a row `adds(Adds, InplaceAdds)`:
//!
//! | item | what it does |
//! |---|---|
//! | `adds(&x, other, alpha, &mut out, &stream)` | `out = x + alpha·other`: `x` any [`AsTensorView`](crate::AsTensorView), `out` of its shape |
//! | `adds_new(&x, other, alpha, &stream)` | the same into a new tensor, whose element type the caller names or infers |
//! | `adds_inplace(x, other, alpha, &stream)` | `x = x + alpha·other`, any [`AsTensorViewMut`](crate::AsTensorViewMut) |
//! | `AddsPlan`, `InplaceAddsPlan` | the reusable forms ([`Plan`](crate::Plan)) |
//! | `Adds`, `InplaceAdds` | the marker types ([`Operator`](crate::protocol::Operator)) |
//!
//! The comparisons (`eq_scalar`, `ne_scalar`, `gt_scalar`, `ge_scalar`, `lt_scalar`,
//! `le_scalar`) give BOOL, cast to `out`'s
//! dtype (usually `bool`; the in-place forms write 0 or 1 into `x`'s own dtype).
//!
//! `pow_tensor_scalar` raises `x` to the scalar exponent. Integers raise exactly
//! (wrapping), and a negative exponent gives 1 for 1, ±1 for −1 and 0 otherwise; an
//! exponent of 2 squares `i8` and `u8` in `i32` before the cast to `out` (`100i8²` is
//! `10000` in an `i32` out); a `bool` `x` raises in `i64`, so its `out` must not be
//! `bool` (CANN refuses the in-place form of a `bool` tensor).
//!
//! Scalars are plain numbers (`impl Into<Scalar>`: `0.5` is a DOUBLE scalar, `2` an INT64
//! one, `true` a BOOL one), and their dtype takes part in the vendor's promotion: a
//! floating `x` computes in its own dtype whatever the scalar (Muls: bf16 in f32); an
//! integer `x` with an integer scalar computes in its own dtype (wrapping); an integer
//! `x` with a floating scalar computes in the promoted floating type (a DOUBLE scalar
//! with an f32 `out` computes in f32), which must cast to `out`'s dtype. Divs divides
//! integers in f32 (INT32 by an INT32 scalar on Atlas A2/A3 in INT32, truncated). Half
//! types compute in f32 and round once. Empty tensors succeed without computing
//! anything.
//!
//! ```
//! # fn main() -> ascendcl::Result<()> {
//! use ascendcl::{DeviceTensor, Runtime, adds, muls_inplace, divs_new, pow_tensor_scalar_new};
//! use ndarray::array;
//! let stream = Runtime::auto()?.device(0)?.stream()?;
//! let x = DeviceTensor::from_array(&stream, &array![1.0f32, 2.0])?;
//! let mut y = DeviceTensor::<f32>::zeros(&stream, [2])?;
//! adds(&x, 10.0, 0.5, &mut y, &stream)?; // x + 0.5·10
//! muls_inplace(&mut y, 2, &stream)?;
//! let z: DeviceTensor<f32> = divs_new(&y, 4.0, &stream)?;
//! assert_eq!(z.to_array::<ndarray::Ix1>(&stream)?.to_vec(), vec![3.0, 3.5]);
//! let p: DeviceTensor<f32> = pow_tensor_scalar_new(&x, 3, &stream)?; // x³
//! assert_eq!(p.to_array::<ndarray::Ix1>(&stream)?.to_vec(), vec![1.0, 8.0]);
//! # Ok(()) }
//! ```

use crate::device::SocFamily;
use crate::element::DType;
use crate::protocol::Scalar;
use ascend_ops::scalar::{Rule, ScalarOp};

/// The row of `name` (every generated operator names a row of the table).
fn row(name: &str) -> Option<&'static ScalarOp> {
    ascend_ops::scalar::row(name)
}

/// Whether the product has the row's kernel (an unknown SoC: left to the library).
fn available(name: &str, soc: SocFamily) -> bool {
    match (row(name), soc.product()) {
        (Some(row), Some(product)) => row.available_on(product),
        _ => true,
    }
}

/// Whether a tensor argument may have `dtype` on the product: `self`'s list; `out` may
/// have any dtype the library accepts (it checks the cast), but for Muls, whose `out` is
/// held against the same list.
fn supports(name: &str, inplace: bool, soc: SocFamily, dtype: DType) -> bool {
    let (Some(row), Some(product)) = (row(name), soc.product()) else {
        return true;
    };
    let listed = row.accepts_self(product, dtype.acl());
    listed || !inplace && row.rule != Rule::Muls
}

/// The same-shape rule; an output whose dtype is left to the call (a
/// [`Tensor`](crate::Tensor) result) of a comparison is BOOL.
fn rule(name: &str, c: &crate::protocol::Call<'_>) -> crate::Result<()> {
    if let (Some(out), Some(row)) = (c.pending(), row(name))
        && row.compares()
    {
        c.infer_dtype(out, DType::Bool);
    }
    crate::protocol::rules::same(c)
}

/// Each row, with its alpha and the roles its header gives the written tensors.
macro_rules! declare_scalar {
    ($(
        $(#[$doc:meta])*
        $rust:ident($name:ident, $inplace:ident) [$($marker:ident)*] { $($facts:tt)* }
    )*) => { $(
        declare_scalar!(@row [$($marker)*] [$(#[$doc])*] $rust $name $inplace);
    )* };
    (@row [alpha const_self_ref] $($rest:tt)*) => {
        declare_scalar!(@emit inplace_const output [alpha: attr<Scalar> = "alpha",] $($rest)*);
    };
    (@row [alpha] $($rest:tt)*) => {
        declare_scalar!(@emit inplace output [alpha: attr<Scalar> = "alpha",] $($rest)*);
    };
    (@row [compare const_self_ref] $($rest:tt)*) => {
        declare_scalar!(@emit inplace_const output [] $($rest)*);
    };
    (@row [const_self_ref const_out] $($rest:tt)*) => {
        declare_scalar!(@emit inplace_const output_const [] $($rest)*);
    };
    (@row [$($marker:ident)*] $($rest:tt)*) => {
        declare_scalar!(@emit inplace output [] $($rest)*);
    };
    (@emit $twin_role:ident $out_role:ident [$($alpha:tt)*] [$(#[$doc:meta])*] $rust:ident $name:ident $inplace:ident) => {
        paste::paste! {
        crate::operator! {
            @verified
            #[doc = concat!("`aclnn", stringify!($name), "`, a row of the [tensor–scalar family](crate::ops::scalar).")]
            pub struct $name: [<aclnn $name>], [<aclnn $name GetWorkspaceSize>];
            products: |soc| available(stringify!($name), soc);
            dtypes: |soc, dtype| supports(stringify!($name), false, soc, dtype);
            rule: |c| rule(stringify!($name), c);

            $(#[$doc])*
            ///
            #[doc = concat!(
                "Queued on `stream` (`aclnn", stringify!($name), "`); `x` (self) and `out` ",
                "have the same shape, in any layout; `other` is a plain number. See the ",
                "[tensor–scalar family](crate::ops::scalar) for the compute dtype and the ",
                "allocating and in-place forms."
            )]
            ///
            /// # Errors
            /// [`Error::DeviceMismatch`](crate::Error::DeviceMismatch),
            /// [`Error::UnsupportedOperator`](crate::Error::UnsupportedOperator),
            /// [`Error::UnsupportedDtype`](crate::Error::UnsupportedDtype),
            /// [`Error::ShapeMismatch`](crate::Error::ShapeMismatch);
            /// [`Error::Aclnn`](crate::Error::Aclnn) from the library (a compute dtype that
            /// does not cast to `out`'s).
            pub fn $rust<T, O>(
                x: input<T> = "self",
                other: attr<Scalar> = "other",
                $($alpha)*
                out: $out_role<O> = "out",
            );

            #[doc = concat!("A reusable [`", stringify!($rust), "`] for fixed layouts and scalars (a [`Plan`](crate::Plan)).")]
            pub type [<$name Plan>];
            allocating: [<$rust _new>];
        }

        crate::operator! {
            @verified
            #[doc = concat!("`aclnn", stringify!($inplace), "`, a row of the [tensor–scalar family](crate::ops::scalar).")]
            pub struct $inplace: [<aclnn $inplace>], [<aclnn $inplace GetWorkspaceSize>];
            products: |soc| available(stringify!($name), soc);
            dtypes: |soc, dtype| supports(stringify!($name), true, soc, dtype);
            rule: crate::protocol::rules::same;

            #[doc = concat!(
                "`x = ", stringify!($rust), "(x, ...)` in place, queued on `stream` (`aclnn",
                stringify!($inplace), "`): as [`", stringify!($rust), "`] with `out` = `x`, ",
                "any [`AsTensorViewMut`](crate::AsTensorViewMut)."
            )]
            ///
            /// # Errors
            #[doc = concat!("As [`", stringify!($rust), "`].")]
            pub fn [<$rust _inplace>]<T>(
                x: $twin_role<T> = "selfRef",
                other: attr<Scalar> = "other",
                $($alpha)*
            );

            #[doc = concat!("A reusable [`", stringify!($rust), "_inplace`] (a [`Plan`](crate::Plan)).")]
            pub type [<$inplace Plan>];
        }
        }
    };
}

ascend_ops::scalar_family!(declare_scalar);
