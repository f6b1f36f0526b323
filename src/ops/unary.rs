//! The unary family (`aclnnExp`, ...): `out = f(self)` elementwise, and the in-place twins.
//!
//! Every operator here is a row of [`ascend_ops::unary`], which states its products,
//! its dtypes per product, the dtypes it computes as FLOAT and its formula; this module
//! turns each row into a function, an in-place function, an allocating form and plans.
//!
//! For a row `exp(Exp, InplaceExp)`:
//!
//! | item | what it does |
//! |---|---|
//! | `exp(&x, &mut out, &stream)` | `out = f(x)`: `x` any [`AsTensorView`](crate::AsTensorView), `out` the same shape, of a dtype the result casts to |
//! | `exp_new(&x, &stream)` | the same into a new tensor, whose element type the caller names or infers |
//! | `exp_inplace(x, &stream)` | `x = f(x)`, any [`AsTensorViewMut`](crate::AsTensorViewMut) |
//! | `ExpPlan`, `InplaceExpPlan` | the reusable forms ([`Plan`](crate::Plan)) |
//! | `Exp`, `InplaceExp` | the marker types ([`Operator`](crate::protocol::Operator)) |
//!
//! The result dtype is `self`'s, or FLOAT for the dtypes the row computes as FLOAT (e.g.
//! Exp of INT64); it must cast to `out`'s dtype. Half types are computed in f32 and rounded
//! once. Empty tensors succeed without computing anything; at most 8 dims.
//!
//! ```
//! # fn main() -> ascendcl::Result<()> {
//! use ascendcl::{DeviceTensor, Runtime, exp, exp_inplace, exp_new};
//! use ndarray::array;
//! let stream = Runtime::auto()?.device(0)?.stream()?;
//! let x = DeviceTensor::from_array(&stream, &array![0.0f32, 1.0])?;
//! let mut y = DeviceTensor::<f32>::zeros(&stream, [2])?;
//! exp(&x, &mut y, &stream)?;
//! let z: DeviceTensor<f32> = exp_new(&x, &stream)?;
//! exp_inplace(&mut y, &stream)?; // e^(e^x)
//! let z: ndarray::Array1<f32> = z.to_array(&stream)?;
//! assert!((z[1] - std::f32::consts::E).abs() < 1e-6);
//! # Ok(()) }
//! ```

use crate::device::SocFamily;
use crate::element::DType;
use ascend_ops::unary::{Inplace, Out, Unary};

/// The row of `name` (every generated operator names a row of the table).
fn row(name: &str) -> Option<&'static Unary> {
    ascend_ops::unary::row(name)
}

/// Whether the product has the row's kernel (an unknown SoC: left to the library).
fn available(name: &str, soc: SocFamily) -> bool {
    match (row(name), soc.product()) {
        (Some(row), Some(product)) => row.available_on(product),
        _ => true,
    }
}

/// Whether a tensor argument may have `dtype` on the product: `self`'s list or, for the
/// out-of-place form, `out`'s (the library checks which argument has which, and whether
/// the result casts to `out`). The in-place form's own list applies too.
fn supports(name: &str, inplace: bool, soc: SocFamily, dtype: DType) -> bool {
    let (Some(row), Some(product)) = (row(name), soc.product()) else {
        return true;
    };
    let dtype = dtype.acl();
    if inplace {
        let own = match row.inplace {
            Some((_, Inplace::Checked(list))) => list.allows(product, dtype),
            _ => true,
        };
        return own && row.dtypes.allows(product, dtype);
    }
    row.dtypes.allows(product, dtype)
        || match row.out {
            Out::InList(list) | Out::InListCastable(list) => list.allows(product, dtype),
            _ => false,
        }
}

/// The out-of-place rule: `self` and `out` have one shape; an output whose dtype is left
/// to the call (a [`Tensor`](crate::Tensor) result) takes the row's default output dtype
/// for `self`'s (FLOAT for the integers the row computes as FLOAT).
fn rule(name: &str, c: &crate::protocol::Call<'_>) -> crate::Result<()> {
    if let (Some(out), Some(row), Some(x)) = (c.pending(), row(name), c.dtype(0)) {
        let acl = row.default_out_dtype(x.acl());
        if let Some(d) = DTYPES.into_iter().find(|d| d.acl() == acl) {
            c.infer_dtype(out, d);
        }
    }
    crate::protocol::rules::same(c)
}

/// The dtypes of this crate, for mapping the table's `aclDataType`s back.
const DTYPES: [DType; 9] = [
    DType::F32,
    DType::F16,
    DType::BF16,
    DType::F64,
    DType::I32,
    DType::I64,
    DType::I8,
    DType::U8,
    DType::Bool,
];

/// Each row, with the roles its header gives the written tensors.
macro_rules! declare_unary {
    ($(
        $(#[$doc:meta])*
        $rust:ident($name:ident $(, $inplace:ident)?) $([$quirk:ident])? { $($facts:tt)* }
    )*) => { $(
        declare_unary!(@roles [$($quirk)?] [$(#[$doc])*] $rust $name [$($inplace)?]);
    )* };
    (@roles [] $($rest:tt)*) => { declare_unary!(@row output inplace $($rest)*); };
    (@roles [const_out] $($rest:tt)*) => { declare_unary!(@row output_const inplace $($rest)*); };
    (@roles [const_self_ref] $($rest:tt)*) => { declare_unary!(@row output inplace_const $($rest)*); };
    (@roles [rank_if_strided] $($rest:tt)*) => { declare_unary!(@row output inplace $($rest)*); };
    (@row $out_role:ident $twin_role:ident [$(#[$doc:meta])*] $rust:ident $name:ident [$($inplace:ident)?]) => {
        paste::paste! {
        crate::operator! {
            @verified
            #[doc = concat!("`aclnn", stringify!($name), "`, a row of the [unary family](crate::ops::unary).")]
            pub struct $name: [<aclnn $name>], [<aclnn $name GetWorkspaceSize>];
            products: |soc| available(stringify!($name), soc);
            dtypes: |soc, dtype| supports(stringify!($name), false, soc, dtype);
            rule: |c: &crate::protocol::Call<'_>| rule(stringify!($name), c);

            $(#[$doc])*
            ///
            #[doc = concat!(
                "Queued on `stream` (`aclnn", stringify!($name), "`); `x` (self) and `out` ",
                "have the same shape, in any layout. See the [unary family](crate::ops::unary) ",
                "for dtypes, products and the allocating and in-place forms."
            )]
            ///
            /// # Errors
            /// [`Error::DeviceMismatch`](crate::Error::DeviceMismatch),
            /// [`Error::UnsupportedOperator`](crate::Error::UnsupportedOperator),
            /// [`Error::UnsupportedDtype`](crate::Error::UnsupportedDtype),
            /// [`Error::ShapeMismatch`](crate::Error::ShapeMismatch);
            /// [`Error::Aclnn`](crate::Error::Aclnn) from the library (an `out` dtype the
            /// result does not cast to).
            pub fn $rust<T, O>(x: input<T> = "self", out: $out_role<O> = "out");

            #[doc = concat!("A reusable [`", stringify!($rust), "`] for fixed layouts (a [`Plan`](crate::Plan)).")]
            pub type [<$name Plan>];
            allocating: [<$rust _new>];
        }

        $(
            crate::operator! {
                @verified
                #[doc = concat!("`aclnn", stringify!($inplace), "`, a row of the [unary family](crate::ops::unary).")]
                pub struct $inplace: [<aclnn $inplace>], [<aclnn $inplace GetWorkspaceSize>];
                products: |soc| available(stringify!($name), soc);
                dtypes: |soc, dtype| supports(stringify!($name), true, soc, dtype);
                rule: crate::protocol::rules::same;

                #[doc = concat!(
                    "`x = ", stringify!($rust), "(x)` in place, queued on `stream` (`aclnn",
                    stringify!($inplace), "`): as [`", stringify!($rust), "`] with `out` = `x`, ",
                    "any [`AsTensorViewMut`](crate::AsTensorViewMut)."
                )]
                ///
                /// # Errors
                #[doc = concat!("As [`", stringify!($rust), "`].")]
                pub fn [<$rust _inplace>]<T>(x: $twin_role<T> = "selfRef");

                #[doc = concat!("A reusable [`", stringify!($rust), "_inplace`] (a [`Plan`](crate::Plan)).")]
                pub type [<$inplace Plan>];
            }
        )?
    }
    };
}

ascend_ops::unary_family!(declare_unary);
