//! The unary family: `out = f(self)` elementwise, `out` of `self`'s shape, and the
//! in-place twin `selfRef = f(selfRef)` where the vendor has one.
//!
//! Phase 1 of every row: `self` or `out` NULL (161001); `self`'s dtype outside the row's
//! list for the product, then `out`'s dtype against the row's [`Out`] rule (161002);
//! `self` above 8 dims or `out`'s shape not `self`'s (161002); an empty `self` succeeds
//! with workspace 0 and computes nothing. The vendor's operators differ in the order of
//! these checks, never in their codes. An in-place twin either checks `selfRef` against
//! a list of its own first ([`Inplace::Checked`]) or passes it as `self` and `out`
//! ([`Inplace::Forward`]).
//!
//! The kernel reads `self` contiguous, gives integer and bool inputs the row's
//! [`Integers`] treatment, evaluates the formula (half types in f32, rounded once; DOUBLE
//! in f64), casts to `out`'s dtype and writes through `out`'s view.

use crate::{Dtypes, Product, products};
use ascend_sys::*;
pub use num_complex::Complex64;

/// What the vendor's code requires of `out`'s dtype.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Out {
    /// The result dtype casts to `out`'s (`CanCast`).
    Castable,
    /// `out`'s dtype is in the list; nothing else (a complex `self` may write FLOAT).
    InList(Dtypes),
    /// `out`'s dtype is in the list and `self`'s casts to it.
    InListCastable(Dtypes),
    /// `out`'s dtype is in `self`'s list and the result dtype casts to it.
    InSelfListCastable,
    /// `out`'s dtype is `self`'s.
    Same,
    /// `out`'s dtype is `self`'s, or for a complex `self` the real dtype of its parts.
    Magnitude,
}

/// How integer and bool inputs are computed.
#[derive(Debug, Clone, Copy)]
pub enum Integers {
    /// Cast to FLOAT first (the result dtype is FLOAT).
    ToFloat,
    /// Cast to FLOAT first, but INT64 to DOUBLE.
    ToFloatInt64ToDouble,
    /// Cast to `out`'s dtype first.
    ToOut,
    /// The integer formula in `self`'s dtype.
    Kernel(fn(i64) -> i64),
    /// No kernel: the values are copied (`floor` of an integer is itself).
    Identity,
}

/// The in-place twin's own check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Inplace {
    /// `selfRef`'s dtype must be in this list, checked first.
    Checked(Dtypes),
    /// `selfRef` is passed as `self` and `out`, with no check of its own.
    Forward,
}

/// One operator of the family.
#[derive(Debug, Clone, Copy)]
pub struct Unary {
    /// The function's name in `ascendcl` (`exp`; the in-place form adds `_inplace`).
    pub rust_name: &'static str,
    /// The C name without `aclnn` (`Exp`).
    pub name: &'static str,
    /// The in-place twin's C name without `aclnn` (`InplaceExp`), and its check.
    pub inplace: Option<(&'static str, Inplace)>,
    /// The products whose phase 1 accepts the operator. The vendor's code has dtype
    /// lists for every architecture even where its documentation lists fewer products,
    /// and CANN runs what the code accepts.
    pub products: &'static [Product],
    /// `self`'s dtypes.
    pub dtypes: Dtypes,
    /// The rule on `out`'s dtype.
    pub out: Out,
    /// The treatment of integer and bool inputs.
    pub integers: Integers,
    /// The formula as the kernel evaluates it in f32 (FLOAT, FLOAT16, BF16).
    pub f32: fn(f32) -> f32,
    /// The same formula in f64: DOUBLE's kernel and the reference.
    pub f64: fn(f64) -> f64,
    /// The formula on complex numbers, for rows whose complex dtypes are computed (in
    /// f64, each part rounded to the dtype's).
    pub complex: Option<fn(Complex64) -> Complex64>,
    /// Exact values `(x, f(x))` of the formula, for tests.
    pub golden: &'static [(f64, f64)],
    /// Whether the vendor checks out's shape before the rank, and the rank (8 dims) only
    /// of non-contiguous tensors (the `[rank_if_strided]` marker; LogicalNot).
    pub rank_if_strided: bool,
}

impl Unary {
    /// Whether `product` has the operator.
    pub fn available_on(&self, product: Product) -> bool {
        self.products.contains(&product)
    }

    /// The dtype the kernel computes in for a `self` of `dtype` and an `out` of
    /// `out_dtype`.
    pub fn compute_dtype(&self, dtype: aclDataType, out_dtype: aclDataType) -> aclDataType {
        if is_floating_or_complex(dtype) {
            return dtype;
        }
        match self.integers {
            Integers::ToFloat => ACL_FLOAT,
            Integers::ToFloatInt64ToDouble if dtype == ACL_INT64 => ACL_DOUBLE,
            Integers::ToFloatInt64ToDouble => ACL_FLOAT,
            Integers::ToOut => out_dtype,
            Integers::Kernel(_) | Integers::Identity => dtype,
        }
    }
}

impl Unary {
    /// The dtype an allocated `out` takes for a `self` of `dtype`: the compute dtype (FLOAT
    /// for integers the row casts to `out`'s dtype), or the real dtype of a complex
    /// magnitude.
    pub fn default_out_dtype(&self, dtype: aclDataType) -> aclDataType {
        match (self.out, dtype) {
            (Out::Magnitude, ACL_COMPLEX64) => ACL_FLOAT,
            (Out::Magnitude, ACL_COMPLEX128) => ACL_DOUBLE,
            _ => self.compute_dtype(dtype, ACL_FLOAT),
        }
    }
}

/// Whether `dtype` is FLOAT, FLOAT16, BF16, DOUBLE or a complex dtype.
pub fn is_floating_or_complex(dtype: aclDataType) -> bool {
    matches!(
        dtype,
        ACL_FLOAT | ACL_FLOAT16 | ACL_BF16 | ACL_DOUBLE | ACL_COMPLEX64 | ACL_COMPLEX128
    )
}

/// Short names for the rows.
mod dt {
    pub(super) use ascend_sys::{
        ACL_BF16 as BF16, ACL_BOOL as BOOL, ACL_COMPLEX64 as C64, ACL_COMPLEX128 as C128,
        ACL_DOUBLE as F64, ACL_FLOAT as F32, ACL_FLOAT16 as F16, ACL_INT8 as I8, ACL_INT16 as I16,
        ACL_INT32 as I32, ACL_INT64 as I64, ACL_UINT8 as U8, ACL_UINT16 as U16, ACL_UINT32 as U32,
        ACL_UINT64 as U64,
    };
}

/// Hands the family's rows to `$callback`, each as
/// `rust_name(CName, InplaceCName) { facts }` or `rust_name(CName) { facts }`, with its
/// doc comment and, where the vendor's header declares a written tensor `const`, a
/// `[const_out]` or `[const_self_ref]` marker; [`ROWS`] holds the facts as data.
#[macro_export]
macro_rules! unary_family {
    ($callback:path) => {
        $callback! {
            /// `out = eˣ`.
            exp(Exp, InplaceExp) {
                products: ALL,
                dtypes: Dtypes::a2_a3(&[F32, F16, BF16, F64, C64, C128, BOOL, I64], &[F32, F16, F64, C64, C128, BOOL, I64]),
                out: Castable,
                integers: ToFloat,
                inplace: Checked(Dtypes::a2_a3(&[F32, F16, BF16, F64, C64, C128], &[F32, F16, F64, C64, C128])),
                real: |x| x.exp(),
                complex: |z| z.exp(),
                golden: [(0.0, 1.0), (1.0, std::f64::consts::E), (-2.0, 0.1353352832366127)],
            }
            /// `out = eˣ − 1`, accurate near 0.
            expm1(Expm1, InplaceExpm1) {
                products: ALL,
                dtypes: Dtypes::a2_a3(&[F32, F16, BF16, I64, BOOL], &[F32, F16, I64, BOOL]),
                out: Castable,
                integers: ToFloat,
                inplace: Checked(Dtypes::a2_a3(&[F32, F16, BF16], &[F32, F16])),
                real: |x| x.exp_m1(),
                complex: none,
                golden: [(1e-5, 1.0000050000166667e-5), (1.0, 1.718281828459045)],
            }
            /// `out = ln(1 + self)`, accurate near 0.
            log1p(Log1p, InplaceLog1p) {
                products: ALL,
                dtypes: Dtypes::a2_a3(&[F32, F16, F64, I8, I16, I32, I64, BOOL, U8, BF16], &[F32, F16, F64, I8, I16, I32, I64, BOOL, U8]),
                out: InList(Dtypes::a2_a3(&[F32, F16, F64, BF16], &[F32, F16, F64])),
                integers: ToOut,
                inplace: Checked(Dtypes::a2_a3(&[F32, F16, F64, BF16], &[F32, F16, F64])),
                real: |x| x.ln_1p(),
                complex: none,
                golden: [(1e-5, 9.999950000333332e-6), (1.0, std::f64::consts::LN_2)],
            }
            /// `out = ln(self)`.
            log(Log, InplaceLog) {
                products: ALL,
                dtypes: Dtypes::a2_a3(&[F32, F16, BF16, F64, C64, C128, BOOL, I64, I32, I16, I8, U8], &[F32, F16, F64, C64, C128, BOOL, I64, I32, I16, I8, U8]),
                out: InListCastable(Dtypes::a2_a3(&[F32, F16, BF16, F64, C64, C128], &[F32, F16, F64, C64, C128])),
                integers: ToFloat,
                inplace: Checked(Dtypes::a2_a3(&[F32, F16, BF16, F64, C64, C128], &[F32, F16, F64, C64, C128])),
                real: |x| x.ln(),
                complex: |z| z.ln(),
                golden: [(1.0, 0.0), (2.0, std::f64::consts::LN_2), (0.0, f64::NEG_INFINITY)],
            }
            /// `out = √self`.
            sqrt(Sqrt, InplaceSqrt) {
                products: ALL,
                dtypes: Dtypes::not_910(&[C64, C128, F32, F16, BF16, F64, I32, I64, I16, I8, U8, BOOL], &[C64, C128, F32, F16, F64, I32, I64, I16, I8, U8, BOOL]),
                out: Castable,
                integers: ToFloatInt64ToDouble,
                inplace: Checked(Dtypes::a2_a3(&[F32, F16, F64, C64, C128, BF16], &[F32, F16, F64, C64, C128])),
                real: |x| x.sqrt(),
                complex: |z| z.sqrt(),
                golden: [(4.0, 2.0), (2.0, std::f64::consts::SQRT_2)],
            }
            /// `out = 1/√self`.
            rsqrt(Rsqrt, InplaceRsqrt) {
                products: ALL,
                dtypes: Dtypes::a2_a3(&[F32, F16, F64, I8, I16, I32, I64, BOOL, C64, C128, U8, BF16], &[F32, F16, F64, I8, I16, I32, I64, BOOL, C64, C128, U8]),
                out: InList(Dtypes::everywhere(&[F32, F16, F64, C64, C128, BF16])),
                integers: ToOut,
                inplace: Checked(Dtypes::a2_a3(&[F32, F16, F64, C64, C128, BF16], &[F32, F16, F64, C64, C128])),
                real: |x| 1.0 / x.sqrt(),
                complex: |z| z.sqrt().inv(),
                golden: [(4.0, 0.5), (2.0, std::f64::consts::FRAC_1_SQRT_2)],
            }
            /// `out = −self`.
            neg(Neg, InplaceNeg) {
                products: ALL,
                dtypes: Dtypes::a2_a3(&[I8, I32, I64, F16, F32, F64, C64, C128, BF16], &[I8, I32, I64, F16, F32, F64, C64, C128]),
                out: Castable,
                integers: Kernel(|x| x.wrapping_neg()),
                inplace: Forward,
                real: |x| -x,
                complex: |z| -z,
                golden: [(2.5, -2.5), (0.0, -0.0)],
            }
            /// `out = |self|`.
            abs(Abs) {
                products: ALL,
                dtypes: Dtypes::a2_a3(&[F64, F32, F16, I64, I32, I16, I8, U8, BOOL, BF16, C64], &[F64, F32, F16, I64, I32, I16, I8, U8, BOOL]),
                out: Magnitude,
                integers: Kernel(|x| x.wrapping_abs()),
                inplace: none,
                real: |x| x.abs(),
                complex: |z| Complex64::new(z.norm(), 0.0),
                golden: [(-3.0, 3.0), (-0.0, 0.0)],
            }
            /// `out = 1/self`.
            reciprocal(Reciprocal, InplaceReciprocal) [const_self_ref] {
                products: ALL,
                dtypes: Dtypes::a2_a3(&[F32, F16, F64, I8, I16, I32, I64, BOOL, C64, C128, U8, BF16], &[F32, F16, F64, I8, I16, I32, I64, BOOL, C64, C128, U8]),
                out: InList(Dtypes::a2_a3(&[F32, F16, F64, C64, C128, BF16], &[F32, F16, F64, C64, C128])),
                integers: ToFloat,
                inplace: Checked(Dtypes::a2_a3(&[F32, F16, F64, C64, C128, BF16], &[F32, F16, F64, C64, C128])),
                real: |x| 1.0 / x,
                complex: |z| z.inv(),
                golden: [(4.0, 0.25), (-0.5, -2.0), (0.0, f64::INFINITY)],
            }
            /// `out = 1/(1 + e⁻ˢᵉˡᶠ)`.
            sigmoid(Sigmoid, InplaceSigmoid) {
                products: ALL,
                dtypes: Dtypes::a2_a3(&[F32, F16, F64, I8, I16, I32, I64, BOOL, C64, C128, BF16, U8], &[F32, F16, F64, I8, I16, I32, I64, BOOL, C64, C128, U8]),
                out: InList(Dtypes::everywhere(&[F32, F16, F64, C64, C128, BF16])),
                integers: ToOut,
                inplace: Checked(Dtypes::a2_a3(&[F32, F16, F64, C64, C128, BF16], &[F32, F16, F64, C64, C128])),
                real: |x| 1.0 / (1.0 + (-x).exp()),
                complex: |z| (Complex64::new(1.0, 0.0) + (-z).exp()).inv(),
                golden: [(0.0, 0.5), (2.0, 0.8807970779778823)],
            }
            /// `out = tanh(self)`.
            tanh(Tanh, InplaceTanh) {
                products: ALL,
                dtypes: Dtypes::a2_a3(&[F32, F16, BOOL, U8, I8, I16, I32, I64, BF16], &[F32, F16, BOOL, U8, I8, I16, I32, I64]),
                out: InSelfListCastable,
                integers: ToFloat,
                inplace: Checked(Dtypes::a2_a3(&[F32, F16, BF16], &[F32, F16])),
                real: |x| x.tanh(),
                complex: none,
                golden: [(0.5, 0.46211715726000974), (-1.0, -0.7615941559557649)],
            }
            /// `out = max(self, 0)`.
            relu(Relu, InplaceRelu) [const_out] {
                products: ALL,
                dtypes: Dtypes::a2_a3(&[F32, F16, I8, U8, I32, I64, BF16], &[F32, F16, I8, U8, I32, I64]),
                out: Same,
                integers: Kernel(|x| x.max(0)),
                inplace: Forward,
                real: |x| if x < 0.0 { 0.0 } else { x },
                complex: none,
                golden: [(-1.0, 0.0), (2.0, 2.0)],
            }
            /// `out = sin(self)`.
            sin(Sin, InplaceSin) {
                products: ALL,
                dtypes: Dtypes::a2_a3(&[F32, F16, F64, I8, I16, I32, I64, BOOL, C64, C128, U8, BF16], &[F32, F16, F64, I8, I16, I32, I64, BOOL, C64, C128, U8]),
                out: InList(Dtypes::everywhere(&[F32, F16, F64, C64, C128, BF16])),
                integers: ToFloat,
                inplace: Checked(Dtypes::a2_a3(&[F32, F16, F64, C64, C128, BF16], &[F32, F16, F64, C64, C128])),
                real: |x| x.sin(),
                complex: |z| z.sin(),
                golden: [(1.0, 0.8414709848078965), (0.0, 0.0)],
            }
            /// `out = cos(self)`.
            cos(Cos, InplaceCos) {
                products: ALL,
                dtypes: Dtypes::a2_a3(&[F32, F16, F64, I8, I16, I32, I64, BOOL, C64, C128, U8, BF16], &[F32, F16, F64, I8, I16, I32, I64, BOOL, C64, C128, U8]),
                out: InList(Dtypes::a2_a3(&[F32, F16, F64, C64, C128, BF16], &[F32, F16, F64, C64, C128])),
                integers: ToFloat,
                inplace: Checked(Dtypes::a2_a3(&[F32, F16, F64, C64, C128, BF16], &[F32, F16, F64, C64, C128])),
                real: |x| x.cos(),
                complex: |z| z.cos(),
                golden: [(1.0, 0.5403023058681398), (0.0, 1.0)],
            }
            /// `out = erf(self)`, the error function.
            erf(Erf, InplaceErf) {
                products: ALL,
                dtypes: Dtypes::a2_a3(&[F64, F32, F16, BF16, BOOL, I64], &[F64, F32, F16, BOOL, I64]),
                out: Castable,
                integers: ToFloat,
                inplace: Checked(Dtypes::a2_a3(&[F64, F32, F16, BF16], &[F64, F32, F16])),
                real: |x| Real::erf(x),
                complex: none,
                golden: [(0.5, 0.5204998778130465), (-1.0, -0.8427007929497149)],
            }
            /// `out = ⌊self⌋`.
            floor(Floor, InplaceFloor) {
                products: ALL,
                dtypes: Dtypes::a2_a3(&[I64, I32, I16, I8, U64, U32, U16, U8, F64, F32, F16, BF16], &[I64, I32, I16, I8, U64, U32, U16, U8, F64, F32, F16]),
                out: Same,
                integers: Identity,
                inplace: Forward,
                real: |x| x.floor(),
                complex: none,
                golden: [(-1.5, -2.0), (2.7, 2.0)],
            }
            /// `out = ⌈self⌉`.
            ceil(Ceil, InplaceCeil) {
                products: ALL,
                dtypes: Dtypes::a2_a3(&[F64, F32, F16, BF16], &[F64, F32, F16]),
                out: Same,
                integers: Identity,
                inplace: Forward,
                real: |x| x.ceil(),
                complex: none,
                golden: [(-1.5, -1.0), (2.1, 3.0)],
            }
            /// `out = self` rounded to the nearest integer, ties to even.
            round(Round, InplaceRound) [const_self_ref] {
                products: ALL,
                dtypes: Dtypes::not_910(&[BF16, F16, F32, F64, I32, I64], &[F16, F32, F64, I32, I64]),
                out: Same,
                integers: Identity,
                inplace: Forward,
                real: |x| x.round_ties_even(),
                complex: none,
                golden: [(2.5, 2.0), (1.5, 2.0), (-0.5, -0.0), (-2.7, -3.0)],
            }
            /// `out = !self`: 1 where self is 0, else 0 (NaN is true), cast to out's dtype.
            logical_not(LogicalNot, InplaceLogicalNot) [rank_if_strided] {
                products: ALL,
                dtypes: Dtypes::everywhere(&[U8, I8, I16, I32, I64, F16, F32, F64, BOOL, BF16]),
                out: InList(Dtypes::everywhere(&[U8, I8, I16, I32, I64, F16, F32, F64, BOOL, BF16])),
                integers: Kernel(|x| i64::from(x == 0)),
                inplace: Forward,
                real: |x| if x == 0.0 { 1.0 } else { 0.0 },
                complex: none,
                golden: [(0.0, 1.0), (2.5, 0.0), (-0.0, 1.0)],
            }
            /// `out = gelu(self)` in the tanh approximation the vendor's kernel computes,
            /// `x / (1 + e^(−1.5957691·(x + 0.044715·x³)))` (= `0.5·x·(1 + tanh(√(2/π)·(x +
            /// 0.044715·x³)))`); −∞ gives its limit −0 (the literal formula gives NaN there).
            gelu(Gelu) {
                products: ALL,
                dtypes: Dtypes::a2_a3(&[F32, F16, BF16], &[F32, F16]),
                out: Same,
                integers: ToFloat,
                inplace: none,
                real: |x| x.gelu_tanh(),
                complex: none,
                golden: [(1.0, 0.8411919875929503), (-1.0, -0.15880801240704964), (0.5, 0.34571400865983687), (3.0, 2.996362607587982)],
            }
        }
    };
}

/// Builds the rows' data.
macro_rules! define_rows {
    ($(
        $(#[$doc:meta])*
        $rust:ident($name:ident $(, $twin:ident)?) $([$quirk:ident])? {
            products: $products:ident,
            dtypes: $dtypes:expr,
            out: $out:expr,
            integers: $integers:expr,
            inplace: $inplace:ident $(($inplace_list:expr))?,
            real: |$x:ident| $real:expr,
            complex: $(none)? $(|$z:ident| $complex_body:expr)?,
            golden: [$(($gx:expr, $gy:expr)),* $(,)?],
        }
    )*) => {
        /// Every row of the family, in the table's order.
        pub static ROWS: &[Unary] = &[$(
            Unary {
                rust_name: stringify!($rust),
                name: stringify!($name),
                inplace: define_rows!(@twin [$($twin)?] $inplace $(($inplace_list))?),
                products: products::$products,
                dtypes: $dtypes,
                out: { use Out::*; $out },
                integers: { use Integers::*; $integers },
                f32: |$x: f32| -> f32 {
                    #[allow(unused_imports)]
                    use $crate::real::Real;
                    $real
                },
                f64: |$x: f64| -> f64 {
                    #[allow(unused_imports)]
                    use $crate::real::Real;
                    $real
                },
                complex: define_rows!(@complex $(|$z| $complex_body)?),
                golden: &[$(($gx, $gy)),*],
                rank_if_strided: define_rows!(@rank $($quirk)?),
            },
        )*];
    };
    (@rank rank_if_strided) => { true };
    (@rank $($quirk:ident)?) => { false };
    (@complex) => { None };
    (@complex | $z:ident | $body:expr) => { Some(|$z: Complex64| -> Complex64 { $body }) };
    (@twin [] none) => { None };
    (@twin [$twin:ident] Forward) => { Some((stringify!($twin), Inplace::Forward)) };
    (@twin [$twin:ident] Checked($list:expr)) => { Some((stringify!($twin), Inplace::Checked($list))) };
}

use dt::*;

unary_family!(define_rows);

/// The row of the operator named `name` (`"Exp"`) or of its in-place twin
/// (`"InplaceExp"`).
pub fn row(name: &str) -> Option<&'static Unary> {
    ROWS.iter()
        .find(|r| r.name == name || r.inplace.is_some_and(|(twin, _)| twin == name))
}
