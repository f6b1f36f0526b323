//! The binary family: `out = f(self, other)` elementwise over the broadcast shape of the
//! two inputs, computed in their promoted dtype, and the in-place twin
//! `selfRef = f(selfRef, other)` where the vendor has one.
//!
//! Phase 1 of every row: `workspaceSize` or `executor` NULL, then `self`, `other`, `alpha`
//! (rows that take one) or `out` NULL (161001); then the row's [`Check`]s in the row's
//! order, each failing with 161002; an empty `self` or `other` succeeds with workspace 0
//! and computes nothing. The rows differ in which dtypes they hold against their list
//! (`out`'s or not, `other` before `self`), in whether the shapes come before the dtypes,
//! and in their compute dtype ([`Compute`]), never in the codes.
//!
//! The kernel reads both inputs broadcast to `out`'s shape, casts them to the compute
//! dtype, evaluates the formula (FLOAT, FLOAT16 and BF16 in f32, rounded once to the
//! compute dtype; DOUBLE in f64; integers and BOOL by the row's integer formula, wrapped to
//! the compute dtype's width), casts to `out`'s dtype and writes through `out`'s view.

use crate::{Dtypes, Product, products};
use ascend_sys::*;

/// A tensor argument of a row, by role.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// `self` (`selfRef` in place).
    Self_,
    /// `other` (`exponent` for the power).
    Other,
    /// `out` (`selfRef` in place).
    Out,
}

/// One phase-1 check after the NULL checks, failing with 161002.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Check {
    /// The argument's dtype is in the row's list for the product.
    Dtype(Role),
    /// `self` and `other` are not both BOOL.
    NotBothBool,
    /// PromoteType(self, other) is defined.
    Promote,
    /// `alpha` casts to the promote (a BOOL promote takes a BOOL or integral alpha).
    Alpha,
    /// The promote casts to `out`'s dtype.
    CastOut,
    /// `self` and `other` have at most 8 dims (not checked in place where the row says so).
    MaxDims,
    /// `self` and `other` broadcast, and to `out`'s shape.
    Broadcast,
    /// No tensor is stored in a private format (`FRACTAL_NZ`, `NC1HWC0`, ...).
    Format,
    /// `out`'s dtype is in a list of its own.
    OutDtype(Dtypes),
    /// Neither input is BF16 on the training series (whose list lacks it).
    NoBf16On910,
    /// The compute dtype is in the row's list.
    PromoteIn,
    /// An empty `self` or `other` succeeds here, before the checks that follow.
    EmptySucceeds,
}

/// The dtype of the result before the cast to `out`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    /// The promote (arithmetic).
    Promote,
    /// BOOL (comparisons and logical operators): 1 where the formula gives 1.
    Bool,
}

/// The dtype the kernel computes in, from the promote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compute {
    /// The promote.
    Promote,
    /// The promote, a BOOL promote computed as this dtype.
    BoolAs(aclDataType),
    /// Both inputs cast to BOOL (nonzero is true).
    Bool,
    /// Division: a floating, complex or BOOL promote, or two INT32 inputs on Atlas A2/A3;
    /// otherwise FLOAT (the integer quotient is the FLOAT one cast to `out`).
    RealDiv,
}

/// The in-place twin's phase 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Inplace {
    /// `selfRef` passed as `self` and `out`, nothing of its own.
    Forward,
    /// `selfRef` and `other` NULL (161001), then their broadcast against `selfRef`'s shape
    /// (161002), before the out-of-place chain with `out = selfRef`.
    BroadcastFirst,
}

/// One operator of the family.
#[derive(Debug, Clone, Copy)]
pub struct Binary {
    /// The function's name in `ascendcl` (`sub`; the in-place form adds `_inplace`).
    pub rust_name: &'static str,
    /// The C name without `aclnn` (`Sub`).
    pub name: &'static str,
    /// The in-place twin's C name without `aclnn`, and its phase 1.
    pub inplace: Option<(&'static str, Inplace)>,
    /// The C name of the second input (`other`, `exponent`).
    pub other: &'static str,
    /// Whether the operator takes an `alpha` scalar after `other`.
    pub alpha: bool,
    /// The products whose phase 1 accepts the operator.
    pub products: &'static [Product],
    /// The dtypes of the arguments the row checks.
    pub dtypes: Dtypes,
    /// The phase-1 checks after the NULL checks, in the vendor's order.
    pub checks: &'static [Check],
    /// The compute dtype.
    pub compute: Compute,
    /// The result's dtype before the cast to `out`.
    pub output: Output,
    /// The formula `f(x, y, alpha)` as the kernel evaluates it in f32.
    pub f32: fn(f32, f32, f32) -> f32,
    /// The f32 formula over whole slices, `x[i] = f(x[i], y[i], alpha)`: one loop with the
    /// formula inlined, which the compiler vectorises (the kernel's FLOAT fast path).
    pub f32_slices: fn(&mut [f32], &[f32], f32),
    /// The same formula in f64: DOUBLE's kernel and the reference.
    pub f64: fn(f64, f64, f64) -> f64,
    /// The formula on integers (BOOL as 0 and 1), wrapping; `None`: integers are computed
    /// by the float formula and cast.
    pub integer: Option<fn(i64, i64, i64) -> i64>,
    /// Exact values `(x, y, alpha, f)` of the formula, for tests.
    pub golden: &'static [(f64, f64, f64, f64)],
}

impl Binary {
    /// Whether `product` has the operator.
    pub fn available_on(&self, product: Product) -> bool {
        self.products.contains(&product)
    }

    /// The dtype the kernel computes in for inputs of `x` and `y` promoting to `promote`.
    pub fn compute_dtype(
        &self,
        product: Product,
        promote: aclDataType,
        x: aclDataType,
        y: aclDataType,
    ) -> aclDataType {
        match self.compute {
            Compute::Promote => promote,
            Compute::BoolAs(dtype) if promote == ACL_BOOL => dtype,
            Compute::BoolAs(_) => promote,
            Compute::Bool => ACL_BOOL,
            Compute::RealDiv if is_floating(promote) || is_complex(promote) => promote,
            Compute::RealDiv
                if x == ACL_INT32
                    && y == ACL_INT32
                    && matches!(product, Product::AtlasA2 | Product::AtlasA3) =>
            {
                ACL_INT32
            }
            Compute::RealDiv => ACL_FLOAT,
        }
    }

    /// The dtype an allocated `out` takes for inputs of one dtype: the compute dtype on
    /// Atlas A2 (FLOAT for an integer division).
    pub fn default_out_dtype(&self, dtype: aclDataType) -> aclDataType {
        match self.output {
            Output::Bool => ACL_BOOL,
            Output::Promote => self.compute_dtype(Product::AtlasA2, dtype, dtype, dtype),
        }
    }

    /// Whether some tensor argument may have `dtype` on `product`: the row's list, an
    /// `out` list of its own, or BOOL for a BOOL result.
    pub fn allows_somewhere(&self, product: Product, dtype: aclDataType) -> bool {
        self.dtypes.allows(product, dtype)
            || self.output == Output::Bool && dtype == ACL_BOOL
            || self.checks.iter().any(|c| match c {
                Check::OutDtype(list) => list.allows(product, dtype),
                _ => false,
            })
    }

    /// Whether the row checks `role`'s dtype against its list.
    pub fn checks_dtype_of(&self, role: Role) -> bool {
        self.checks.contains(&Check::Dtype(role))
    }
}

/// Whether `dtype` is FLOAT, FLOAT16, BF16 or DOUBLE.
pub fn is_floating(dtype: aclDataType) -> bool {
    matches!(dtype, ACL_FLOAT | ACL_FLOAT16 | ACL_BF16 | ACL_DOUBLE)
}

/// Whether `dtype` is COMPLEX64 or COMPLEX128.
pub fn is_complex(dtype: aclDataType) -> bool {
    matches!(dtype, ACL_COMPLEX64 | ACL_COMPLEX128)
}

/// `base` to the integer power `exp`, wrapping; a negative power of a base other than ±1
/// is 0 (the integer part of its reciprocal power).
pub fn integer_pow(base: i64, exp: i64) -> i64 {
    if exp < 0 {
        return match base {
            1 => 1,
            -1 if exp % 2 == 0 => 1,
            -1 => -1,
            _ => 0,
        };
    }
    base.wrapping_pow(u32::try_from(exp).unwrap_or(u32::MAX))
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
/// `rust_name(CName, InplaceCName) ["other", alpha] { facts }` (the second input's C name,
/// and `alpha` for rows that take one), with its doc comment and, where the vendor's
/// header declares the in-place tensor `const`, a `[const_self_ref]` marker; [`ROWS`]
/// holds the facts as data.
#[macro_export]
macro_rules! binary_family {
    ($callback:path) => {
        $callback! {
            /// `out = self − alpha·other`.
            sub(Sub, InplaceSub) ["other", alpha] [] {
                products: ALL,
                dtypes: Dtypes::a2_a3(&[F32, I32, I64, F16, I16, I8, U8, F64, BOOL, C64, C128, BF16], &[F32, I32, I64, F16, I16, I8, U8, F64, BOOL, C64, C128]),
                checks: [Dtype(Self_), Dtype(Other), Promote, Alpha, CastOut, MaxDims, Broadcast],
                compute: Promote,
                output: Promote,
                inplace: Forward,
                real: |x, y, a| x - a * y,
                integer: |x, y, a| x.wrapping_sub(a.wrapping_mul(y)),
                golden: [(5.0, 2.0, 1.0, 3.0), (1.0, 0.5, 2.0, 0.0), (-1.5, 2.0, -0.5, -0.5)],
            }
            /// `out = self / other`, the true quotient (integers divide as FLOAT).
            div(Div, InplaceDiv) ["other"] [] {
                products: ALL,
                dtypes: Dtypes::a2_a3(&[F16, F32, I64, I32, I16, I8, U8, F64, BOOL, BF16, C64, C128], &[F16, F32, I64, I32, I16, I8, U8, F64, BOOL, C64, C128]),
                checks: [MaxDims, Broadcast, Dtype(Other), Dtype(Self_), Promote, CastOut, Format],
                compute: RealDiv,
                output: Promote,
                inplace: BroadcastFirst,
                real: |x, y, _a| x / y,
                integer: none,
                golden: [(1.0, 4.0, 1.0, 0.25), (-3.0, 2.0, 1.0, -1.5), (1.0, 0.0, 1.0, f64::INFINITY)],
            }
            /// `out = max(self, other)`; NaN if either is NaN.
            maximum(Maximum) ["other"] [] {
                products: ALL,
                dtypes: Dtypes::a2_a3(&[F32, F16, I32, I8, I64, BF16, I16, U8, F64, BOOL], &[F32, F16, I32, I8, I64, I16, U8, F64, BOOL]),
                checks: [Dtype(Self_), Dtype(Other), Dtype(Out), Promote, CastOut, MaxDims, Broadcast],
                compute: Promote,
                output: Promote,
                inplace: none,
                real: |x, y, _a| if x.is_nan() || x > y { x } else { y },
                integer: |x, y, _a| x.max(y),
                golden: [(1.0, 2.0, 1.0, 2.0), (-1.0, -3.0, 1.0, -1.0), (f64::NAN, 1.0, 1.0, f64::NAN)],
            }
            /// `out = min(self, other)`; NaN if either is NaN.
            minimum(Minimum) ["other"] [] {
                products: ALL,
                dtypes: Dtypes::a2_a3(&[F32, I32, I64, F16, I16, I8, U8, F64, BOOL, BF16], &[F32, I32, I64, F16, I16, I8, U8, F64, BOOL]),
                checks: [Dtype(Self_), Dtype(Other), Dtype(Out), Promote, CastOut, MaxDims, Broadcast],
                compute: Promote,
                output: Promote,
                inplace: none,
                real: |x, y, _a| if x.is_nan() || x < y { x } else { y },
                integer: |x, y, _a| x.min(y),
                golden: [(1.0, 2.0, 1.0, 1.0), (-1.0, -3.0, 1.0, -3.0), (1.0, f64::NAN, 1.0, f64::NAN)],
            }
            /// `out = selfᵉˣᵖᵒⁿᵉⁿᵗ` elementwise (integers: a negative power of a base other
            /// than ±1 is 0).
            pow_tensor_tensor(PowTensorTensor, InplacePowTensorTensor) ["exponent"] [const_self_ref] {
                products: ALL,
                dtypes: Dtypes::a2_a3(&[F32, I32, I64, F16, I8, U8, F64, BOOL, C64, C128, I16, BF16], &[F32, I32, I64, F16, I8, U8, F64, BOOL, C64, C128, I16]),
                checks: [NotBothBool, Dtype(Self_), Dtype(Other), Promote, CastOut, MaxDims, Broadcast],
                compute: Promote,
                output: Promote,
                inplace: Forward,
                real: |x, y, _a| x.powf(y),
                integer: |x, y, _a| $crate::binary::integer_pow(x, y),
                golden: [(2.0, 3.0, 1.0, 8.0), (4.0, 0.5, 1.0, 2.0), (2.0, -1.0, 1.0, 0.5)],
            }
            /// `out = (self == other)`, BOOL (or cast to `out`'s dtype).
            eq_tensor(EqTensor) ["other"] [bool_out] {
                products: ALL,
                dtypes: Dtypes::a2_a3(&[F32, I32, I64, F16, I16, I8, U8, BF16, BOOL, F64, C64, C128], &[F32, I32, I64, F16, I16, I8, U8, U64, U32, BOOL, F64, C64, C128]),
                checks: [Dtype(Out), NoBf16On910, Promote, PromoteIn, CastOut, MaxDims, Broadcast],
                compute: Promote,
                output: Bool,
                inplace: none,
                real: |x, y, _a| if x == y { 1.0 } else { 0.0 },
                integer: |x, y, _a| i64::from(x == y),
                golden: [(1.0, 1.0, 1.0, 1.0), (1.0, 2.0, 1.0, 0.0), (f64::NAN, f64::NAN, 1.0, 0.0)],
            }
            /// `out = (self > other)`, BOOL (or cast to `out`'s dtype).
            gt_tensor(GtTensor) ["other"] [bool_out] {
                products: ALL,
                dtypes: Dtypes::a2_a3(&[F32, I32, I64, F16, I16, I8, U8, F64, U32, U64, U16, BF16, BOOL], &[F32, I32, I64, F16, I16, I8, U8, F64, U32, U64, U16, BOOL]),
                checks: [OutDtype(Dtypes::a2_a3(&[F32, I32, I64, F16, I16, I8, U8, F64, U32, U64, BOOL, U16, C64, C128, BF16], &[F32, I32, I64, F16, I16, I8, U8, F64, U32, U64, BOOL, U16, C64, C128])), NoBf16On910, Promote, PromoteIn, CastOut, MaxDims, Broadcast],
                compute: BoolAs(I8),
                output: Bool,
                inplace: none,
                real: |x, y, _a| if x > y { 1.0 } else { 0.0 },
                integer: |x, y, _a| i64::from(x > y),
                golden: [(2.0, 1.0, 1.0, 1.0), (1.0, 1.0, 1.0, 0.0), (f64::NAN, 1.0, 1.0, 0.0)],
            }
            /// `out = (self ≥ other)`, BOOL (or cast to `out`'s dtype).
            ge_tensor(GeTensor) ["other"] [bool_out] {
                products: ALL,
                dtypes: Dtypes::a2_a3(&[F32, I32, F16, I8, F64, I16, I64, U64, U32, U16, U8, BF16], &[F32, I32, F16, I8, F64, I16, I64, U64, U32, U16, U8]),
                checks: [OutDtype(Dtypes::everywhere(&[F32, I32, F16, I8, F64, I16, I64, U64, U32, U16, U8, C128, C64, BOOL, BF16])), Promote, PromoteIn, CastOut, MaxDims, Broadcast],
                compute: BoolAs(I8),
                output: Bool,
                inplace: none,
                real: |x, y, _a| if x >= y { 1.0 } else { 0.0 },
                integer: |x, y, _a| i64::from(x >= y),
                golden: [(1.0, 1.0, 1.0, 1.0), (0.5, 1.0, 1.0, 0.0), (1.0, f64::NAN, 1.0, 0.0)],
            }
            /// `out = (self < other)`, BOOL (or cast to `out`'s dtype).
            lt_tensor(LtTensor) ["other"] [bool_out] {
                products: ALL,
                dtypes: Dtypes::a2_a3(&[F32, I32, I64, F16, I16, I8, U8, F64, U32, U64, BOOL, U16, BF16], &[F32, I32, I64, F16, I16, I8, U8, F64, U32, U64, BOOL, U16]),
                checks: [Dtype(Self_), Dtype(Other), Dtype(Out), Promote, CastOut, MaxDims, Broadcast],
                compute: BoolAs(U8),
                output: Bool,
                inplace: none,
                real: |x, y, _a| if x < y { 1.0 } else { 0.0 },
                integer: |x, y, _a| i64::from(x < y),
                golden: [(1.0, 2.0, 1.0, 1.0), (2.0, 2.0, 1.0, 0.0), (f64::NAN, 1.0, 1.0, 0.0)],
            }
            /// `out = (self ≤ other)`, BOOL (or cast to `out`'s dtype).
            le_tensor(LeTensor) ["other"] [bool_out] {
                products: ALL,
                dtypes: Dtypes::a2_a3(&[I8, U8, I16, U16, I32, I64, F16, F32, F64, BOOL, BF16], &[I8, U8, I16, U16, I32, I64, F16, F32, F64, BOOL]),
                checks: [EmptySucceeds, Dtype(Self_), Dtype(Other), OutDtype(Dtypes::a2_a3(&[F32, I32, I64, F16, I16, I8, U8, F64, U32, U64, BOOL, U16, C64, C128, BF16], &[F32, I32, I64, F16, I16, I8, U8, F64, U32, U64, BOOL, U16, C64, C128])), Promote, CastOut, MaxDims, Broadcast],
                compute: BoolAs(U8),
                output: Bool,
                inplace: none,
                real: |x, y, _a| if x <= y { 1.0 } else { 0.0 },
                integer: |x, y, _a| i64::from(x <= y),
                golden: [(2.0, 2.0, 1.0, 1.0), (3.0, 2.0, 1.0, 0.0), (1.0, f64::NAN, 1.0, 0.0)],
            }
            /// `out = self ∧ other`, each input nonzero as true.
            logical_and(LogicalAnd, InplaceLogicalAnd) ["other"] [bool_out] {
                products: ALL,
                dtypes: Dtypes::everywhere(&[F32, F16, I32, F64, BF16, I8, U8, I16, I64, BOOL, C64, C128]),
                checks: [Dtype(Self_), Dtype(Other), MaxDims, Broadcast],
                compute: Bool,
                output: Bool,
                inplace: Forward,
                real: |x, y, _a| if x != 0.0 && y != 0.0 { 1.0 } else { 0.0 },
                integer: |x, y, _a| i64::from(x != 0 && y != 0),
                golden: [(1.0, 2.0, 1.0, 1.0), (0.0, 2.0, 1.0, 0.0), (f64::NAN, 1.0, 1.0, 1.0)],
            }
            /// `out = self ∨ other`, each input nonzero as true.
            logical_or(LogicalOr, InplaceLogicalOr) ["other"] [bool_out] {
                products: ALL,
                dtypes: Dtypes::everywhere(&[F32, F16, I32, F64, BF16, I8, U8, I16, I64, BOOL, C64, C128]),
                checks: [Dtype(Self_), Dtype(Other), MaxDims, Broadcast],
                compute: Bool,
                output: Bool,
                inplace: Forward,
                real: |x, y, _a| if x != 0.0 || y != 0.0 { 1.0 } else { 0.0 },
                integer: |x, y, _a| i64::from(x != 0 || y != 0),
                golden: [(0.0, 2.0, 1.0, 1.0), (0.0, 0.0, 1.0, 0.0), (-0.0, 0.0, 1.0, 0.0)],
            }
        }
    };
}

/// Builds the rows' data.
macro_rules! define_rows {
    ($(
        $(#[$doc:meta])*
        $rust:ident($name:ident $(, $twin:ident)?) [$other:literal $(, $alpha:ident)?] [$($quirk:ident)?] {
            products: $products:ident,
            dtypes: $dtypes:expr,
            checks: [$($check:expr),* $(,)?],
            compute: $compute:expr,
            output: $output:ident,
            inplace: $inplace:ident,
            real: |$x:ident, $y:ident, $a:ident| $real:expr,
            integer: $(none)? $(|$ix:ident, $iy:ident, $ia:ident| $int:expr)?,
            golden: [$(($gx:expr, $gy:expr, $ga:expr, $gf:expr)),* $(,)?],
        }
    )*) => {
        /// Every row of the family, in the table's order.
        pub static ROWS: &[Binary] = &[$(
            Binary {
                rust_name: stringify!($rust),
                name: stringify!($name),
                inplace: define_rows!(@twin [$($twin)?] $inplace),
                other: $other,
                alpha: define_rows!(@alpha $($alpha)?),
                products: products::$products,
                dtypes: $dtypes,
                checks: {
                    #[allow(unused_imports)]
                    use {Check::*, Role::*};
                    &[$($check),*]
                },
                compute: { use Compute::*; $compute },
                output: Output::$output,
                f32: |$x: f32, $y: f32, $a: f32| -> f32 { $real },
                f32_slices: |xs: &mut [f32], ys: &[f32], $a: f32| {
                    for (x, &$y) in xs.iter_mut().zip(ys) {
                        let $x = *x;
                        *x = $real;
                    }
                },
                f64: |$x: f64, $y: f64, $a: f64| -> f64 { $real },
                integer: define_rows!(@integer $(|$ix, $iy, $ia| $int)?),
                golden: &[$(($gx, $gy, $ga, $gf)),*],
            },
        )*];
    };
    (@alpha) => { false };
    (@alpha alpha) => { true };
    (@integer) => { None };
    (@integer |$x:ident, $y:ident, $a:ident| $body:expr) => {
        Some(|$x: i64, $y: i64, $a: i64| -> i64 { $body })
    };
    (@twin [] none) => { None };
    (@twin [$twin:ident] $inplace:ident) => { Some((stringify!($twin), Inplace::$inplace)) };
}

use dt::*;

binary_family!(define_rows);

/// The row of the operator named `name` (`"Sub"`) or of its in-place twin
/// (`"InplaceSub"`).
pub fn row(name: &str) -> Option<&'static Binary> {
    ROWS.iter()
        .find(|r| r.name == name || r.inplace.is_some_and(|(twin, _)| twin == name))
}
