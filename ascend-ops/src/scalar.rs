//! The tensor–scalar family: `out = self ∘ other` elementwise with a scalar `other`
//! (`aclScalar`), `out` of `self`'s shape, and the in-place twin `selfRef = selfRef ∘
//! other`. Adds and Subs also take a scalar `alpha` (`self ± alpha·other`).
//!
//! Each operator's vendor code states its own phase-1 checks and its own compute dtype
//! (the "promote" of `self` with the scalar, which reads the scalar's dtype and sometimes
//! `out`'s); the rows name which of the vendor's rules applies ([`Rule`]), and the
//! simulator implements each rule once (see `ascend-sim`'s `ops::scalar`).
//!
//! The kernel reads `self`, casts it to the compute dtype, combines each element with the
//! scalar term (`alpha·other`, computed once, rounded as the vendor's code rounds it),
//! rounds once to the compute dtype (half types computed in f32, DOUBLE in f64, integers
//! exactly and wrapping to their width), casts to `out`'s dtype and writes through `out`'s
//! view.

use crate::{Dtypes, Product, products};
use ascend_sys::{ACL_BF16, ACL_FLOAT, ACL_FLOAT16, aclDataType};

/// Whether alpha counts as 1 (the vendor's `IsEqualToOne`: unless it is above or below 1,
/// so NaN counts as 1).
pub fn is_one(alpha: f64) -> bool {
    use std::cmp::Ordering::{Greater, Less};
    !matches!(alpha.partial_cmp(&1.0), Some(Less | Greater))
}

/// Which vendor rule (checks and compute dtype) a row follows; Ascend 950's RegBase
/// variants are not modelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// aclnnAdds (ops-math `math/add`): NULL checks of self, other, alpha, out (161001);
    /// self's dtype in the list; the promote (self floating: self's dtype; a DOUBLE
    /// scalar with a FLOAT out: FLOAT; a floating scalar or a BOOL self: PromoteType;
    /// otherwise self's dtype) defined; alpha castable to it (integral for BOOL); the
    /// promote castable to out; self at most 8 dims; out of self's shape (161002). alpha
    /// ≠ 1 runs Axpy in f32 for FLOAT, FLOAT16 and INT32, else `alpha·other` in the
    /// promote.
    Adds,
    /// aclnnSubs (`math/sub`): Adds' checks and promote; Axpy (with −alpha) for FLOAT,
    /// FLOAT16 and BF16.
    Subs,
    /// aclnnMuls (`math/mul`): NULL checks of self, other, out; self's, then out's dtype in
    /// the list; out of self's shape (no rank check; the promote is not checked outside
    /// RegBase). Compute: self floating: its dtype, BF16 in FLOAT; a DOUBLE scalar with a
    /// BOOL self or a FLOAT out: FLOAT; a floating scalar or a BOOL self: PromoteType;
    /// otherwise self's dtype. aclnnInplaceMuls checks selfRef, other for NULL and
    /// selfRef's dtype only.
    Muls,
    /// aclnnDivs (`math/div`): NULL checks of self, other, out; other's, then self's dtype
    /// in the list; self at most 8 dims and out of self's shape; self's dtype castable to
    /// out's. Compute: self's dtype when floating (or INT32 with an INT32 scalar on Atlas
    /// A2/A3), BOOL for BOOL by BOOL, FLOAT otherwise; on Atlas A2/A3 the mixed pairs of
    /// FLOAT16/BF16/FLOAT with a FLOAT/FLOAT16/BF16 (or BF16 with DOUBLE) scalar divide in
    /// FLOAT.
    Divs,
    /// aclnnEqScalar and aclnnNeScalar (`math/equal`, `math/not_equal`): NULL checks of
    /// self, other, out; self's, other's, then out's dtype in the list; PromoteType(self,
    /// other) defined (Ne: the compute dtype), self and other castable to it, BOOL
    /// castable to out; self and out at most 8 dims, out of self's shape. Compare in: a
    /// complex self's dtype; a floating self's with a real scalar; PromoteType for a BOOL
    /// self or a floating or complex scalar; otherwise self's dtype. The BOOL result is
    /// cast to out's dtype.
    Equality,
    /// aclnnGtScalar (`math/greater`): as [`Rule::Equality`] but with its own out list,
    /// and no cast checks of self and other: compare in PromoteType(self, other) (BOOL:
    /// INT8), or in a floating self's dtype when a DOUBLE scalar converts to it within
    /// f32's epsilon.
    Greater,
    /// aclnnGeScalar (`math/greater_equal`): NULL checks of self, other, out; out's dtype in
    /// its own list (no check of self's or other's dtype); [`Rule::Greater`]'s compare
    /// dtype defined and in the row's list (a BOOL self compares in INT8, so it passes);
    /// BOOL castable to out; self and out at most 8 dims, out of self's shape.
    GreaterEqual,
    /// aclnnLtScalar (`math/less`): other, then self NULL is an inner error (561103: the
    /// scalar becomes a tensor before the checks), out NULL 161001; self's, the converted
    /// scalar's (a floating self's dtype; FLOAT for a DOUBLE scalar; else its own) and
    /// out's dtype in the list; PromoteType(self, converted) defined; BOOL castable to
    /// out; self at most 8 dims, out of self's shape. Compare in that PromoteType (BOOL:
    /// UINT8).
    Less,
    /// aclnnLeScalar (`math/less_equal`): [`Rule::Equality`]'s checks with the cast checks
    /// against the compare dtype: a floating self's dtype; FLOAT for a DOUBLE scalar;
    /// otherwise PromoteType(self, other) (BOOL compares in FLOAT).
    LessEqual,
    /// aclnnLeakyRelu (ops-nn `activation/leaky_relu`): NULL checks of self, negativeSlope,
    /// out; self's dtype; self castable to out; self at most 8 dims, out of self's shape.
    LeakyRelu,
    /// aclnnPowTensorScalar (`math/pow`): NULL checks of self, exponent, out; self's, then
    /// the exponent's dtype in the list (one list; BF16 only on Atlas A2/A3);
    /// PromoteType(self, exponent) defined and castable to out; the compute dtype (a
    /// DOUBLE exponent with a FLOAT out: FLOAT; a complex exponent: PromoteType; a
    /// floating self: its own; a floating exponent or a BOOL self: PromoteType; otherwise
    /// self's) defined, not BOOL with a BOOL exponent, castable to out; self at most 8
    /// dims, out of self's shape. The in-place twin is the same call with out = self (so
    /// a BOOL self is always refused: no promote casts to BOOL). An exponent of 2 squares
    /// INT8, UINT8 and INT16 in INT32 before the cast to out; integers follow
    /// [`int_pow`].
    Pow,
}

/// Integer `base^exp` as the vendor's integer Pow kernel (AI CPU) computes it: a
/// non-negative exponent by repeated squaring, wrapping to 64 bits (the caller wraps to the
/// compute dtype's width, which is the same modulo its width); a negative one gives 1 for
/// a base of 1, ±1 for −1 (by the exponent's parity) and 0 otherwise (0 included: "1/a
/// rounds down to 0").
pub fn int_pow(base: i64, exp: i64) -> i64 {
    if exp < 0 {
        return match base {
            1 => 1,
            -1 if exp % 2 != 0 => -1,
            -1 => 1,
            _ => 0,
        };
    }
    let (mut acc, mut b, mut e) = (1i64, base, exp);
    while e != 0 {
        if e & 1 == 1 {
            acc = acc.wrapping_mul(b);
        }
        b = b.wrapping_mul(b);
        e >>= 1;
    }
    acc
}

/// One operator of the family.
#[derive(Debug, Clone, Copy)]
pub struct ScalarOp {
    /// The function's name in `ascendcl` (`adds`; the in-place form adds `_inplace`).
    pub rust_name: &'static str,
    /// The C name without `aclnn` (`Adds`).
    pub name: &'static str,
    /// The in-place twin's C name without `aclnn` (`InplaceAdds`).
    pub inplace: Option<&'static str>,
    /// Whether the operator takes `alpha` after `other`.
    pub alpha: bool,
    /// The products whose phase 1 accepts the operator (the vendor's code has no gate).
    pub products: &'static [Product],
    /// `self`'s dtypes (and `out`'s, for [`Rule::Muls`] and [`Rule::Equality`]; `other`'s,
    /// for [`Rule::Divs`] and the comparisons).
    pub dtypes: Dtypes,
    /// `out`'s own list, where the rule has one ([`Rule::Greater`],
    /// [`Rule::GreaterEqual`]).
    pub out_dtypes: Option<Dtypes>,
    /// Whether self and other must cast to the compare dtype rather than to
    /// PromoteType(self, other) (the `casts_to_compute` marker: NeScalar, LeScalar).
    pub casts_to_compute: bool,
    /// The vendor's checks and compute dtype.
    pub rule: Rule,
    /// `self ∘ term` in f32 (FLOAT, FLOAT16, BF16 compute); a comparison gives 0 or 1.
    pub f32: fn(f32, f32) -> f32,
    /// [`f32`](Self::f32) over a slice in place, the formula inlined in one loop (the
    /// simulator's one-pass kernel, which a call through a function pointer per element
    /// would keep from vectorising).
    pub f32_slice: fn(&mut [f32], f32),
    /// `self ∘ term` in f64: DOUBLE's kernel, BOOL's, and the reference.
    pub f64: fn(f64, f64) -> f64,
    /// `self ∘ term` on integers (wrapping), `None` where integers compute in FLOAT.
    pub int: Option<fn(i64, i64) -> i64>,
    /// Exact values `(self, other, alpha, out)`, for tests.
    pub golden: &'static [(f64, f64, f64, f64)],
}

impl ScalarOp {
    /// Whether the result is a comparison's BOOL (cast to `out`'s dtype), not a value of
    /// the compute dtype.
    pub fn compares(&self) -> bool {
        use Rule::*;
        matches!(
            self.rule,
            Equality | Greater | GreaterEqual | Less | LessEqual
        )
    }

    /// Whether `self` may have `dtype` on `product`: the row's list, and for
    /// [`Rule::GreaterEqual`], which checks only the compare dtype against it, BOOL too
    /// (a BOOL self compares in INT8 or a wider type).
    pub fn accepts_self(&self, product: Product, dtype: aclDataType) -> bool {
        self.dtypes.allows(product, dtype)
            || self.rule == Rule::GreaterEqual && dtype == ascend_sys::ACL_BOOL
    }

    /// Whether `product` has the operator.
    pub fn available_on(&self, product: Product) -> bool {
        self.products.contains(&product)
    }

    /// The term combined with every element when computing in `compute`: `other`
    /// converted to `compute`, and for Adds and Subs with an alpha other than 1, `alpha`
    /// times it as the vendor's code rounds it: Axpy's f32 product for the dtypes that run
    /// Axpy (Adds: FLOAT, FLOAT16; Subs: FLOAT, FLOAT16, BF16), else a product of both
    /// converted to `compute`, rounded to it. `round(dtype, v)` converts a value to a
    /// dtype (the caller's cast), so the simulator and the reference share this rule.
    pub fn term(
        &self,
        compute: aclDataType,
        other: f64,
        alpha: f64,
        round: impl Fn(aclDataType, f64) -> f64,
    ) -> f64 {
        let c = round(compute, other);
        let axpy: &[aclDataType] = match self.rule {
            Rule::Adds => &[ACL_FLOAT, ACL_FLOAT16],
            Rule::Subs => &[ACL_FLOAT, ACL_FLOAT16, ACL_BF16],
            _ => return c,
        };
        if is_one(alpha) {
            c
        } else if axpy.contains(&compute) {
            f64::from(alpha as f32 * c as f32)
        } else {
            round(compute, round(compute, alpha) * c)
        }
    }
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
/// `rust_name(CName, InplaceCName) [markers] { facts }`, with its doc comment; the markers
/// are `alpha` (first, when the operator takes one) or `compare` (first, for a comparison,
/// whose result is BOOL), `const_self_ref` (the vendor's header declares the in-place
/// twin's `selfRef` `const`), `const_out` (after it: the header declares `out` `const`
/// too), `greater` or `ge_out` (out has GtScalar's or GeScalar's own
/// list) and `casts_to_compute` (see [`ScalarOp::casts_to_compute`]); [`ROWS`] holds the
/// facts as data.
#[macro_export]
macro_rules! scalar_family {
    ($callback:path) => {
        $callback! {
            /// `out = self + alpha·other`.
            adds(Adds, InplaceAdds) [alpha const_self_ref] {
                rule: Adds,
                dtypes: Dtypes::a2_a3(&[F32, I32, I64, F16, I16, I8, U8, F64, BOOL, BF16, C64, C128], &[F32, I32, I64, F16, I16, I8, U8, F64, BOOL, C64, C128]),
                real: |x, t| x + t,
                int: |x, t| x.wrapping_add(t),
                golden: [(1.5, 2.0, 1.0, 3.5), (1.0, 2.0, 0.5, 2.0), (-3.0, 1.0, -2.0, -5.0)],
            }
            /// `out = self − alpha·other`.
            subs(Subs, InplaceSubs) [alpha] {
                rule: Subs,
                dtypes: Dtypes::a2_a3(&[F32, I32, I64, F16, I16, I8, U8, F64, BF16, BOOL, C64, C128], &[F32, I32, I64, F16, I16, I8, U8, F64, BOOL, C64, C128]),
                real: |x, t| x - t,
                int: |x, t| x.wrapping_sub(t),
                golden: [(1.5, 2.0, 1.0, -0.5), (1.0, 2.0, 0.5, 0.0), (-3.0, 1.0, -2.0, -1.0)],
            }
            /// `out = self·other`.
            muls(Muls, InplaceMuls) [] {
                rule: Muls,
                dtypes: Dtypes::a2_a3(&[F32, F16, I32, F64, I8, U8, I16, I64, BOOL, C128, C64, BF16], &[F32, F16, I32, F64, I8, U8, I16, I64, BOOL, C128, C64]),
                real: |x, t| x * t,
                int: |x, t| x.wrapping_mul(t),
                golden: [(1.5, 2.0, 1.0, 3.0), (-0.25, 4.0, 1.0, -1.0)],
            }
            /// `out = self / other` (true division).
            divs(Divs, InplaceDivs) [] {
                rule: Divs,
                dtypes: Dtypes::a2_a3(&[F16, F32, I64, I32, I16, I8, U8, F64, BOOL, BF16, C64, C128], &[F16, F32, I64, I32, I16, I8, U8, F64, BOOL, C64, C128]),
                real: |x, t| x / t,
                int: none,
                golden: [(3.0, 2.0, 1.0, 1.5), (1.0, 0.0, 1.0, f64::INFINITY), (-1.0, 4.0, 1.0, -0.25)],
            }
            /// `out = (self == other)`, BOOL cast to `out`'s dtype.
            eq_scalar(EqScalar, InplaceEqScalar) [compare const_self_ref] {
                rule: Equality,
                dtypes: Dtypes::not_910(&[F32, I32, I64, F16, I16, I8, U8, BOOL, F64, C64, C128, BF16], &[F32, I32, I64, F16, I16, I8, U8, U64, U32, BOOL, F64, C64, C128]),
                real: |x, t| if x == t { 1.0 } else { 0.0 },
                int: none,
                golden: [(2.0, 2.0, 1.0, 1.0), (2.0, 2.5, 1.0, 0.0), (-0.0, 0.0, 1.0, 1.0)],
            }
            /// `out = (self != other)`, BOOL cast to `out`'s dtype.
            ne_scalar(NeScalar, InplaceNeScalar) [compare casts_to_compute] {
                rule: Equality,
                dtypes: Dtypes::a2_a3(&[F32, I32, I64, F16, I16, I8, U8, BOOL, F64, C64, C128, BF16], &[F32, I32, I64, F16, I16, I8, U8, BOOL, F64, C64, C128]),
                real: |x, t| if x != t { 1.0 } else { 0.0 },
                int: none,
                golden: [(2.0, 2.0, 1.0, 0.0), (2.0, 2.5, 1.0, 1.0)],
            }
            /// `out = (self > other)`, BOOL cast to `out`'s dtype.
            gt_scalar(GtScalar, InplaceGtScalar) [compare greater] {
                rule: Greater,
                dtypes: Dtypes::a2_a3(&[F32, I32, I64, F16, I16, I8, U8, F64, U64, U16, U32, BOOL, BF16], &[F32, I32, I64, F16, I16, I8, U8, F64, U64, U16, U32, BOOL]),
                real: |x, t| if x > t { 1.0 } else { 0.0 },
                int: none,
                golden: [(2.0, 2.0, 1.0, 0.0), (2.5, 2.0, 1.0, 1.0), (-3.0, -2.0, 1.0, 0.0)],
            }
            /// `out = (self >= other)`, BOOL cast to `out`'s dtype.
            ge_scalar(GeScalar, InplaceGeScalar) [compare ge_out] {
                rule: GreaterEqual,
                dtypes: Dtypes::a2_a3(&[F32, I32, F16, I8, F64, I16, I64, U64, U32, U16, U8, BF16], &[F32, I32, F16, I8, F64, I16, I64, U64, U32, U16, U8]),
                real: |x, t| if x >= t { 1.0 } else { 0.0 },
                int: none,
                golden: [(2.0, 2.0, 1.0, 1.0), (2.5, 2.0, 1.0, 1.0), (-3.0, -2.0, 1.0, 0.0)],
            }
            /// `out = (self < other)`, BOOL cast to `out`'s dtype.
            lt_scalar(LtScalar, InplaceLtScalar) [compare const_self_ref] {
                rule: Less,
                dtypes: Dtypes::a2_a3(&[F32, I32, I64, F16, I16, I8, U8, F64, U32, U64, BOOL, U16, BF16], &[F32, I32, I64, F16, I16, I8, U8, F64, U32, U64, BOOL, U16]),
                real: |x, t| if x < t { 1.0 } else { 0.0 },
                int: none,
                golden: [(2.0, 2.0, 1.0, 0.0), (1.5, 2.0, 1.0, 1.0), (-3.0, -4.0, 1.0, 0.0)],
            }
            /// `out = (self <= other)`, BOOL cast to `out`'s dtype.
            le_scalar(LeScalar, InplaceLeScalar) [compare casts_to_compute] {
                rule: LessEqual,
                dtypes: Dtypes::a2_a3(&[I8, U8, I16, U16, I32, I64, F16, F32, F64, BOOL, BF16], &[I8, U8, I16, U16, I32, I64, F16, F32, F64, BOOL]),
                real: |x, t| if x <= t { 1.0 } else { 0.0 },
                int: none,
                golden: [(2.0, 2.0, 1.0, 1.0), (2.5, 2.0, 1.0, 0.0), (-3.0, -2.0, 1.0, 1.0)],
            }
            /// `out = self` where `self ≥ 0`, else `other·self` (`other`: the negative slope).
            leaky_relu(LeakyRelu, InplaceLeakyRelu) [] {
                rule: LeakyRelu,
                dtypes: Dtypes::a2_a3(&[F32, F16, F64, BF16], &[F32, F16, F64]),
                real: |x, t| if x < 0.0 { x * t } else { x },
                int: none,
                golden: [(2.0, 0.5, 1.0, 2.0), (-2.0, 0.25, 1.0, -0.5), (-1.0, -2.0, 1.0, 2.0)],
            }
            /// `out = self^other` (`other`: the exponent).
            pow_tensor_scalar(PowTensorScalar, InplacePowTensorScalar) [const_self_ref const_out] {
                rule: Pow,
                dtypes: Dtypes::a2_a3(&[F32, I32, I64, F16, I8, U8, F64, BOOL, I16, C64, C128, BF16], &[F32, I32, I64, F16, I8, U8, F64, BOOL, I16, C64, C128]),
                real: |x, t| x.powf(t),
                int: |x, t| int_pow(x, t),
                golden: [(2.0, 3.0, 1.0, 8.0), (4.0, 0.5, 1.0, 2.0), (-2.0, -1.0, 1.0, -0.5), (0.0, 0.0, 1.0, 1.0), (-3.0, 2.0, 1.0, 9.0)],
            }
        }
    };
}

/// Builds the rows' data.
macro_rules! define_rows {
    ($(
        $(#[$doc:meta])*
        $rust:ident($name:ident $(, $twin:ident)?) [$($marker:ident)*] {
            rule: $rule:ident,
            dtypes: $dtypes:expr,
            real: |$x:ident, $t:ident| $real:expr,
            int: $(none)? $(|$ix:ident, $it:ident| $int:expr)?,
            golden: [$(($gx:expr, $gc:expr, $ga:expr, $gy:expr)),* $(,)?],
        }
    )*) => {
        /// Every row of the family, in the table's order.
        pub static ROWS: &[ScalarOp] = &[$(
            ScalarOp {
                rust_name: stringify!($rust),
                name: stringify!($name),
                inplace: define_rows!(@twin $($twin)?),
                alpha: define_rows!(@alpha $($marker)*),
                products: products::ALL,
                dtypes: $dtypes,
                out_dtypes: define_rows!(@out $($marker)*),
                casts_to_compute: define_rows!(@casts $($marker)*),
                rule: Rule::$rule,
                f32: |$x: f32, $t: f32| -> f32 { $real },
                f32_slice: |values: &mut [f32], $t: f32| {
                    for value in values {
                        let $x = *value;
                        *value = $real;
                    }
                },
                f64: |$x: f64, $t: f64| -> f64 { $real },
                int: define_rows!(@int $(|$ix, $it| $int)?),
                golden: &[$(($gx, $gc, $ga, $gy)),*],
            },
        )*];
    };
    (@twin) => { None };
    (@twin $twin:ident) => { Some(stringify!($twin)) };
    (@alpha) => { false };
    (@alpha alpha $($rest:ident)*) => { true };
    (@alpha $other:ident $($rest:ident)*) => { define_rows!(@alpha $($rest)*) };
    (@out) => { None };
    (@out greater $($rest:ident)*) => { Some(GT_OUT) };
    (@out ge_out $($rest:ident)*) => { Some(GE_OUT) };
    (@out $other:ident $($rest:ident)*) => { define_rows!(@out $($rest)*) };
    (@casts) => { false };
    (@casts casts_to_compute $($rest:ident)*) => { true };
    (@casts $other:ident $($rest:ident)*) => { define_rows!(@casts $($rest)*) };
    (@int) => { None };
    (@int | $x:ident, $t:ident | $body:expr) => { Some(|$x: i64, $t: i64| -> i64 { $body }) };
}

use dt::*;

/// aclnnGtScalar's out list (its own `OUT_DTYPE_SUPPORT_*_LIST`).
const GT_OUT: Dtypes = Dtypes::a2_a3(
    &[
        F32, I32, I64, F16, I16, I8, U8, F64, U64, U16, U32, BOOL, C64, C128, BF16,
    ],
    &[
        F32, I32, I64, F16, I16, I8, U8, F64, U64, U16, U32, BOOL, C64, C128,
    ],
);

/// aclnnGeScalar's out list (`OUT_DTYPE_SUPPORT_LIST`, BF16 on every product).
const GE_OUT: Dtypes = Dtypes::everywhere(&[
    F32, I32, F16, I8, F64, I16, I64, U64, U32, U16, U8, C128, C64, BOOL, BF16,
]);

scalar_family!(define_rows);

/// The row of the operator named `name` (`"Adds"`) or of its in-place twin
/// (`"InplaceAdds"`).
pub fn row(name: &str) -> Option<&'static ScalarOp> {
    ROWS.iter()
        .find(|r| r.name == name || r.inplace == Some(name))
}
