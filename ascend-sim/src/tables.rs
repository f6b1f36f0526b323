//! The vendor's enumerations and product tables: `aclDataType` and `aclFormat` values with
//! their names, dtype categories and castability, and the SoC names the simulator knows,
//! grouped into product families.
//!
//! Operators ask these tables (a SoC's family, whether a dtype has a name); they hold no
//! operator's own rules.

use ascend_sys::aclDataType;
use std::ffi::CStr;

/// Every `aclDataType` of the vendor's runtime header (CANN 8.x), with its name and its
/// element size in bytes (`0`: no fixed byte size, such as STRING or the sub-byte types).
const DTYPES: &[(aclDataType, &str, usize)] = &[
    (-1, "DT_UNDEFINED", 0),
    (0, "FLOAT", 4),
    (1, "FLOAT16", 2),
    (2, "INT8", 1),
    (3, "INT32", 4),
    (4, "UINT8", 1),
    (6, "INT16", 2),
    (7, "UINT16", 2),
    (8, "UINT32", 4),
    (9, "INT64", 8),
    (10, "UINT64", 8),
    (11, "DOUBLE", 8),
    (12, "BOOL", 1),
    (13, "STRING", 0),
    (16, "COMPLEX64", 8),
    (17, "COMPLEX128", 16),
    (27, "BF16", 2),
    (29, "INT4", 0),
    (30, "UINT1", 0),
    (33, "COMPLEX32", 4),
    (34, "HIFLOAT8", 1),
    (35, "FLOAT8_E5M2", 1),
    (36, "FLOAT8_E4M3FN", 1),
    (37, "FLOAT8_E8M0", 1),
    (38, "FLOAT6_E3M2", 0),
    (39, "FLOAT6_E2M3", 0),
    (40, "FLOAT4_E2M1", 0),
    (41, "FLOAT4_E1M2", 0),
];

/// Every `aclFormat` of the vendor's runtime header (CANN 8.x), with its name.
const FORMATS: &[(i32, &str)] = &[
    (-1, "UNDEFINED"),
    (0, "NCHW"),
    (1, "NHWC"),
    (2, "ND"),
    (3, "NC1HWC0"),
    (4, "FRACTAL_Z"),
    (12, "NC1HWC0_C04"),
    (16, "HWCN"),
    (27, "NDHWC"),
    (29, "FRACTAL_NZ"),
    (30, "NCDHW"),
    (32, "NDC1HWC0"),
    (33, "FRACTAL_Z_3D"),
    (35, "NC"),
    (47, "NCL"),
    (50, "FRACTAL_NZ_C0_16"),
    (51, "FRACTAL_NZ_C0_32"),
    (52, "FRACTAL_NZ_C0_2"),
    (53, "FRACTAL_NZ_C0_4"),
    (54, "FRACTAL_NZ_C0_8"),
];

/// The vendor's name of a dtype (`aclDataType(n)` for a value outside the enum).
pub(crate) fn dtype_name(dt: aclDataType) -> String {
    match DTYPES.iter().find(|d| d.0 == dt) {
        Some(d) => d.1.into(),
        None => format!("aclDataType({dt})"),
    }
}

/// Whether `dt` is a value of the vendor's `aclDataType` enum.
pub(crate) fn is_known_dtype(dt: aclDataType) -> bool {
    DTYPES.iter().any(|d| d.0 == dt)
}

/// Bytes per element of a dtype that has a fixed byte size.
pub(crate) fn dtype_size(dt: aclDataType) -> Option<usize> {
    DTYPES
        .iter()
        .find(|d| d.0 == dt)
        .map(|d| d.2)
        .filter(|&s| s > 0)
}

/// Whether `format` is a value of the vendor's `aclFormat` enum.
pub(crate) fn is_known_format(format: i32) -> bool {
    FORMATS.iter().any(|f| f.0 == format)
}

/// The vendor's name of a format (`aclFormat(n)` for a value outside the enum).
pub(crate) fn format_name(format: i32) -> String {
    match FORMATS.iter().find(|f| f.0 == format) {
        Some(f) => f.1.into(),
        None => format!("aclFormat({format})"),
    }
}

/// The names of the `aclFormat` values, for messages.
pub(crate) fn format_list() -> String {
    let names: Vec<String> = FORMATS.iter().map(|f| format!("{} {}", f.1, f.0)).collect();
    names.join(", ")
}

#[derive(PartialEq, Eq, PartialOrd, Ord)]
enum Category {
    Bool,
    Integral,
    Floating,
    Complex,
    Other,
}

fn category(dt: aclDataType) -> Category {
    use ascend_sys::*;
    match dt {
        ACL_BOOL => Category::Bool,
        ACL_INT8 | ACL_INT16 | ACL_INT32 | ACL_INT64 | ACL_UINT8 | ACL_UINT16 | ACL_UINT32
        | ACL_UINT64 => Category::Integral,
        ACL_FLOAT | ACL_FLOAT16 | ACL_BF16 | ACL_DOUBLE => Category::Floating,
        ACL_COMPLEX64 | ACL_COMPLEX128 => Category::Complex,
        _ => Category::Other,
    }
}

/// Whether `from` may be cast to `to` (the PyTorch `canCast` rule aclnn uses: no
/// complex -> non-complex, no floating -> integral, no non-bool -> bool).
pub(crate) fn can_cast(from: aclDataType, to: aclDataType) -> bool {
    let (f, t) = (category(from), category(to));
    if f == Category::Other || t == Category::Other {
        return from == to;
    }
    if t == Category::Bool {
        return f == Category::Bool;
    }
    f <= t || t == Category::Complex
}

/// Whether `dt` is a signed or unsigned integer dtype (BOOL is not).
pub(crate) fn is_integral(dt: aclDataType) -> bool {
    category(dt) == Category::Integral
}

/// nnopbase's `PromoteType(a, b)` (`None`: UNDEFINED). Symmetric except for the wide
/// unsigned integers with complex, which promote only in that order.
pub(crate) fn promote_type(a: aclDataType, b: aclDataType) -> Option<aclDataType> {
    use ascend_sys::*;
    if a == b {
        return is_known_dtype(a).then_some(a);
    }
    let wide_unsigned = |d| matches!(d, ACL_UINT16 | ACL_UINT32 | ACL_UINT64);
    if wide_unsigned(a) || wide_unsigned(b) {
        return match (a, b) {
            (ACL_UINT16 | ACL_UINT32, ACL_COMPLEX64) => Some(ACL_COMPLEX64),
            (ACL_UINT64, ACL_COMPLEX64) => Some(ACL_COMPLEX128),
            (_, ACL_COMPLEX128) if wide_unsigned(a) => Some(ACL_COMPLEX128),
            _ => None,
        };
    }
    // Rank within the promotion lattice of the remaining dtypes.
    let kind = |d| match d {
        ACL_BOOL => Some(0),
        ACL_UINT8 | ACL_INT8 | ACL_INT16 | ACL_INT32 | ACL_INT64 => Some(1),
        ACL_FLOAT16 | ACL_BF16 | ACL_FLOAT | ACL_DOUBLE => Some(2),
        ACL_COMPLEX64 | ACL_COMPLEX128 => Some(3),
        _ => None,
    };
    let (ka, kb) = (kind(a)?, kind(b)?);
    if ka != kb {
        let (hi, lo) = if ka > kb { (a, b) } else { (b, a) };
        // A complex64 with a double needs double parts.
        return Some(if hi == ACL_COMPLEX64 && lo == ACL_DOUBLE {
            ACL_COMPLEX128
        } else {
            hi
        });
    }
    let int_rank = |d| match d {
        ACL_INT8 => 0,
        ACL_INT16 => 1,
        ACL_INT32 => 2,
        _ => 3,
    };
    Some(match ka {
        1 => match (a, b) {
            (ACL_UINT8, ACL_INT8) | (ACL_INT8, ACL_UINT8) => ACL_INT16,
            (ACL_UINT8, x) | (x, ACL_UINT8) => x,
            _ if int_rank(a) >= int_rank(b) => a,
            _ => b,
        },
        2 => match (a, b) {
            (ACL_DOUBLE, _) | (_, ACL_DOUBLE) => ACL_DOUBLE,
            _ => ACL_FLOAT,
        },
        _ => ACL_COMPLEX128,
    })
}

/// A product family: what decides which operators and dtypes a SoC has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Family {
    /// Atlas A3 (`Ascend910_93*`).
    A3,
    /// Atlas A2 (`Ascend910B1`..`B4`).
    A2,
    /// Atlas training series (Ascend 910).
    Training,
    /// Atlas inference series (`Ascend310P*`).
    Inference310P,
    /// Atlas 200I/500 A2 (`Ascend310B*`).
    Atlas310B,
}

/// Every SoC name `ASCEND_SIM_DEVICES` accepts, with its family.
pub(crate) const SOCS: &[(&CStr, Family)] = &[
    (c"Ascend910_9391", Family::A3),
    (c"Ascend910_9392", Family::A3),
    (c"Ascend910_9381", Family::A3),
    (c"Ascend910_9382", Family::A3),
    (c"Ascend910_9372", Family::A3),
    (c"Ascend910_9362", Family::A3),
    (c"Ascend910B1", Family::A2),
    (c"Ascend910B2", Family::A2),
    (c"Ascend910B2C", Family::A2),
    (c"Ascend910B3", Family::A2),
    (c"Ascend910B4", Family::A2),
    (c"Ascend910B4-1", Family::A2),
    (c"Ascend910A", Family::Training),
    (c"Ascend910ProA", Family::Training),
    (c"Ascend910ProB", Family::Training),
    (c"Ascend910PremiumA", Family::Training),
    (c"Ascend310P1", Family::Inference310P),
    (c"Ascend310P3", Family::Inference310P),
    (c"Ascend310P5", Family::Inference310P),
    (c"Ascend310P7", Family::Inference310P),
    (c"Ascend310B1", Family::Atlas310B),
    (c"Ascend310B2", Family::Atlas310B),
    (c"Ascend310B3", Family::Atlas310B),
    (c"Ascend310B4", Family::Atlas310B),
];

impl Family {
    /// Atlas A2 and A3, whose vector units compute in bf16.
    /// The product line of the operator tables (`ascend-ops`).
    pub fn product(self) -> ascend_ops::Product {
        match self {
            Family::A3 => ascend_ops::Product::AtlasA3,
            Family::A2 => ascend_ops::Product::AtlasA2,
            Family::Training => ascend_ops::Product::Training910,
            Family::Inference310P => ascend_ops::Product::Inference310P,
            Family::Atlas310B => ascend_ops::Product::Atlas310B,
        }
    }

    pub fn has_bf16(self) -> bool {
        matches!(self, Family::A2 | Family::A3)
    }
}

/// The names of [`SOCS`], for messages.
pub(crate) fn soc_list() -> String {
    let names: Vec<&str> = SOCS.iter().filter_map(|s| s.0.to_str().ok()).collect();
    names.join(", ")
}

/// The floating-point dtypes most elementwise operators accept on a family: FLOAT and
/// FLOAT16 everywhere, BF16 on Atlas A2 / A3.
pub(crate) fn float_dtypes(family: Family) -> &'static [aclDataType] {
    use ascend_sys::*;
    if family.has_bf16() {
        &[ACL_FLOAT, ACL_FLOAT16, ACL_BF16]
    } else {
        &[ACL_FLOAT, ACL_FLOAT16]
    }
}

/// The numeric dtypes, then BF16 (Atlas A2 / A3), then the wide unsigned integers that
/// some operators add on Atlas A2 / A3: the lists below are prefixes of it.
const NUMERIC: &[aclDataType] = {
    use ascend_sys::*;
    &[
        ACL_FLOAT,
        ACL_FLOAT16,
        ACL_DOUBLE,
        ACL_INT8,
        ACL_INT16,
        ACL_INT32,
        ACL_INT64,
        ACL_UINT8,
        ACL_BOOL,
        ACL_COMPLEX64,
        ACL_COMPLEX128,
        ACL_BF16,
        ACL_UINT16,
        ACL_UINT32,
        ACL_UINT64,
    ]
};

/// The numeric dtypes most arithmetic operators accept on a family: FLOAT, FLOAT16,
/// DOUBLE, INT8, INT16, INT32, INT64, UINT8, BOOL, COMPLEX64, COMPLEX128, and BF16 on
/// Atlas A2 / A3.
pub(crate) fn numeric_dtypes(family: Family) -> &'static [aclDataType] {
    if family.has_bf16() {
        &NUMERIC[..12]
    } else {
        &NUMERIC[..11]
    }
}

/// [`numeric_dtypes`], plus UINT16, UINT32 and UINT64 on Atlas A2 / A3.
pub(crate) fn numeric_and_unsigned_dtypes(family: Family) -> &'static [aclDataType] {
    if family.has_bf16() {
        NUMERIC
    } else {
        numeric_dtypes(family)
    }
}

/// `[A, B, ...]` with the vendor's dtype names, for messages.
pub(crate) fn dtype_list(list: &[aclDataType]) -> String {
    let names: Vec<String> = list.iter().map(|&t| dtype_name(t)).collect();
    format!("[{}]", names.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_are_consistent() {
        assert_eq!(DTYPES.len(), 28);
        assert_eq!(FORMATS.len(), 20);
        assert!(is_known_format(16) && !is_known_format(5));
        assert_eq!(dtype_name(27), "BF16");
        assert_eq!(dtype_name(5), "aclDataType(5)");
        assert_eq!(dtype_size(13), None);
        assert_eq!(dtype_size(17), Some(16));
        assert!(SOCS.iter().all(|s| s.0.to_str().is_ok()));
        assert!(soc_list().starts_with("Ascend910_9391, "));
        assert!(can_cast(ascend_sys::ACL_INT32, ascend_sys::ACL_FLOAT));
        assert!(!can_cast(ascend_sys::ACL_FLOAT, ascend_sys::ACL_INT32));
    }

    #[test]
    fn promotion_follows_the_vendor_table() {
        use ascend_sys::*;
        let p = promote_type;
        assert_eq!(p(ACL_FLOAT16, ACL_BF16), Some(ACL_FLOAT));
        assert_eq!(p(ACL_BF16, ACL_INT64), Some(ACL_BF16));
        assert_eq!(p(ACL_INT8, ACL_UINT8), Some(ACL_INT16));
        assert_eq!(p(ACL_UINT8, ACL_INT32), Some(ACL_INT32));
        assert_eq!(p(ACL_BOOL, ACL_UINT8), Some(ACL_UINT8));
        assert_eq!(p(ACL_INT64, ACL_INT16), Some(ACL_INT64));
        assert_eq!(p(ACL_DOUBLE, ACL_FLOAT16), Some(ACL_DOUBLE));
        assert_eq!(p(ACL_DOUBLE, ACL_COMPLEX64), Some(ACL_COMPLEX128));
        assert_eq!(p(ACL_FLOAT, ACL_COMPLEX64), Some(ACL_COMPLEX64));
        assert_eq!(p(ACL_UINT16, ACL_INT64), None);
        assert_eq!(p(ACL_UINT64, ACL_COMPLEX64), Some(ACL_COMPLEX128));
        assert_eq!(p(ACL_COMPLEX64, ACL_UINT16), None);
        assert_eq!(p(ACL_UINT32, ACL_UINT32), Some(ACL_UINT32));
        assert_eq!(p(35, ACL_FLOAT), None);
    }
}
