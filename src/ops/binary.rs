//! The binary family (`aclnnSub`, `aclnnDiv`, ...): `out = f(self, other)` elementwise
//! with broadcast and promotion, and the in-place twins.
//!
//! Every operator here is a row of [`ascend_ops::binary`], which states its products, its
//! dtypes per product, its phase-1 checks in the vendor's order, its compute dtype and its
//! formula; this module turns each row into a function, an in-place function, an
//! allocating form and plans.
//!
//! For a row `div(Div, InplaceDiv)`:
//!
//! | item | what it does |
//! |---|---|
//! | `div(&a, &b, &mut out, &stream)` | `out = f(a, b)`: `a`, `b` any [`AsTensorView`](crate::AsTensorView)s that broadcast together, `out` of the broadcast shape |
//! | `div_new(&a, &b, &stream)` | the same into a new tensor, whose element type the caller names or infers |
//! | `div_inplace(a, &b, &stream)` | `a = f(a, b)`, `b` broadcast to `a`'s shape |
//! | `DivPlan`, `InplaceDivPlan` | the reusable forms ([`Plan`](crate::Plan)) |
//! | `Div`, `InplaceDiv` | the marker types ([`Operator`](crate::protocol::Operator)) |
//!
//! Comparisons (`eq_tensor`, `gt_tensor`, ...) and the logical operators (`logical_and`,
//! `logical_or`) give BOOL, cast to `out`'s dtype (`bool` for a `DeviceTensor<bool>`).
//! Rows with an `alpha` (Sub) take it after `other`, as `impl Into<Scalar>`. The inputs are
//! computed in their promoted type ([`DType::promote`](crate::DType::promote)), which must
//! cast to `out`'s dtype (not a floating promote into an integer `out`); half types are
//! computed in f32 and rounded once; integers wrap to their width (division divides as
//! FLOAT). Empty inputs succeed without computing anything; at most 8 dims.
//!
//! ```
//! # fn main() -> ascendcl::Result<()> {
//! use ascendcl::{DeviceTensor, Runtime, div_new, maximum, sub};
//! use ndarray::array;
//! let stream = Runtime::auto()?.device(0)?.stream()?;
//! let a = DeviceTensor::from_array(&stream, &array![[1.0f32, 4.0], [9.0, -2.0]])?;
//! let b = DeviceTensor::from_array(&stream, &array![2.0f32, 4.0])?; // broadcast
//! let mut out = DeviceTensor::<f32>::zeros(&stream, [2, 2])?;
//! sub(&a, &b, 0.5, &mut out, &stream)?; // a − 0.5·b
//! assert_eq!(out.to_array(&stream)?, array![[0.0f32, 2.0], [8.0, -4.0]].into_dyn());
//! let q: DeviceTensor<f32> = div_new(&a, &b, &stream)?;
//! assert_eq!(q.to_array(&stream)?, array![[0.5f32, 1.0], [4.5, -0.5]].into_dyn());
//! maximum(&a, &b, &mut out, &stream)?;
//! assert_eq!(out.to_array(&stream)?, array![[2.0f32, 4.0], [9.0, 4.0]].into_dyn());
//! # Ok(()) }
//! ```

use crate::device::SocFamily;
use crate::element::DType;
use ascend_ops::binary::Binary;

/// The row of `name` (every generated operator names a row of the table).
fn row(name: &str) -> Option<&'static Binary> {
    ascend_ops::binary::row(name)
}

/// Whether the product has the row's kernel (an unknown SoC: left to the library).
fn available(name: &str, soc: SocFamily) -> bool {
    match (row(name), soc.product()) {
        (Some(row), Some(product)) => row.available_on(product),
        _ => true,
    }
}

/// Whether a tensor argument may have `dtype` on the product: the row's list, `out`'s own
/// list or BOOL for a comparison (the library checks which argument holds which, and
/// whether the result casts to `out`).
fn supports(name: &str, soc: SocFamily, dtype: DType) -> bool {
    match (row(name), soc.product()) {
        (Some(row), Some(product)) => row.allows_somewhere(product, dtype.acl()),
        _ => true,
    }
}

/// The broadcast rule; an output whose dtype is left to the call (a
/// [`Tensor`](crate::Tensor) result) of a comparison or logical row is BOOL.
fn rule(name: &str, c: &crate::protocol::Call<'_>) -> crate::Result<()> {
    if let (Some(out), Some(row)) = (c.pending(), row(name))
        && row.output == ascend_ops::binary::Output::Bool
    {
        c.infer_dtype(out, DType::Bool);
    }
    crate::protocol::rules::broadcast(c)
}

/// Each row, with the roles its header gives its arguments.
macro_rules! declare_binary {
    ($(
        $(#[$doc:meta])*
        $rust:ident($name:ident $(, $inplace:ident)?) $inputs:tt [$($quirk:ident)?] { $($facts:tt)* }
    )*) => { $(
        declare_binary!(@roles [$($quirk)?] $inputs [$(#[$doc])*] $rust $name [$($inplace)?]);
    )* };
    (@roles [] $($rest:tt)*) => { declare_binary!(@row inplace "selfRef" $($rest)*); };
    (@roles [const_self_ref] $($rest:tt)*) => { declare_binary!(@row inplace_const "self" $($rest)*); };
    (@roles [bool_out] $($rest:tt)*) => { declare_binary!(@row inplace "selfRef" $($rest)*); };
    (@row $twin_role:ident $twin_name:literal [$other:literal $(, $alpha:ident)?] [$(#[$doc:meta])*] $rust:ident $name:ident [$($inplace:ident)?]) => {
        paste::paste! {
        crate::operator! {
            @verified
            #[doc = concat!("`aclnn", stringify!($name), "`, a row of the [binary family](crate::ops::binary).")]
            pub struct $name: [<aclnn $name>], [<aclnn $name GetWorkspaceSize>];
            products: |soc| available(stringify!($name), soc);
            dtypes: |soc, dtype| supports(stringify!($name), soc, dtype);
            rule: |c| rule(stringify!($name), c);

            $(#[$doc])*
            ///
            #[doc = concat!(
                "Queued on `stream` (`aclnn", stringify!($name), "`); `a` (self) and `b` (",
                $other, ") broadcast together (numpy rules) to `out`'s shape, in any layout. ",
                "See the [binary family](crate::ops::binary) for dtypes, products and the ",
                "allocating and in-place forms."
            )]
            ///
            /// # Errors
            /// [`Error::DeviceMismatch`](crate::Error::DeviceMismatch),
            /// [`Error::UnsupportedOperator`](crate::Error::UnsupportedOperator),
            /// [`Error::UnsupportedDtype`](crate::Error::UnsupportedDtype),
            /// [`Error::NotBroadcastable`](crate::Error::NotBroadcastable),
            /// [`Error::ShapeMismatch`](crate::Error::ShapeMismatch);
            /// [`Error::Aclnn`](crate::Error::Aclnn) from the library (a promote that does
            /// not cast to `out`'s dtype).
            pub fn $rust<A, B, O>(
                a: input<A> = "self",
                b: input<B> = $other,
                $($alpha: attr<crate::protocol::Scalar> = "alpha",)?
                out: output<O> = "out"
            );

            #[doc = concat!("A reusable [`", stringify!($rust), "`] for fixed layouts and element types (a [`Plan`](crate::Plan)).")]
            pub type [<$name Plan>];
            allocating: [<$rust _new>];
        }

        }
        declare_binary!(@twin $twin_role $twin_name [$other $(, $alpha)?] $rust $name [$($inplace)?]);
    };
    (@twin $twin_role:ident $twin_name:literal $inputs:tt $rust:ident $name:ident []) => {};
    (@twin $twin_role:ident $twin_name:literal [$other:literal $(, $alpha:ident)?] $rust:ident $name:ident [$inplace:ident]) => {
        paste::paste! {
            crate::operator! {
                @verified
                #[doc = concat!("`aclnn", stringify!($inplace), "`, a row of the [binary family](crate::ops::binary).")]
                pub struct $inplace: [<aclnn $inplace>], [<aclnn $inplace GetWorkspaceSize>];
                products: |soc| available(stringify!($name), soc);
                dtypes: |soc, dtype| supports(stringify!($name), soc, dtype);
                rule: crate::protocol::rules::broadcast;

                #[doc = concat!(
                    "`a = ", stringify!($rust), "(a, b)` in place, queued on `stream` (`aclnn",
                    stringify!($inplace), "`): as [`", stringify!($rust), "`] with `out` = `a`, ",
                    "and `b` broadcast to `a`'s shape."
                )]
                ///
                /// # Errors
                #[doc = concat!("As [`", stringify!($rust), "`].")]
                pub fn [<$rust _inplace>]<A, B>(
                    a: $twin_role<A> = $twin_name,
                    b: input<B> = $other
                    $(, $alpha: attr<crate::protocol::Scalar> = "alpha")?
                );

                #[doc = concat!("A reusable [`", stringify!($rust), "_inplace`] (a [`Plan`](crate::Plan)).")]
                pub type [<$inplace Plan>];
            }
        }
    };
}

ascend_ops::binary_family!(declare_binary);
