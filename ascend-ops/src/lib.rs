//! The aclnn operator families as tables: one row per operator, read by every layer.
//!
//! A row states what the vendor documents and implements for one operator: its C names,
//! the products that have it, the dtypes its arguments accept on each product, how the
//! output's dtype follows from the input's, the order of its phase-1 checks, and the
//! formula its kernel evaluates. `ascend-sim` builds the operator's phase 1, kernel and
//! exports from the row, `ascendcl` its functions, plans and docs, and
//! `ascendcl::reference` its f64 reference, so that adding an operator is adding a row.
//!
//! Each family is a macro that hands its rows to a callback (`unary_family!(my_macro)`
//! expands to `my_macro! { rows }`), so that each layer generates its own items from the
//! same text; [`unary::ROWS`] and [`binary::ROWS`] hold the rows as data for code that
//! iterates over them.

#![warn(missing_docs)]
#![forbid(unsafe_code)]

pub mod binary;
pub mod real;
pub mod scalar;
pub mod unary;

use ascend_sys::aclDataType;

/// The product lines the vendor's documentation distinguishes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Product {
    /// Atlas A3 training and inference series (`Ascend910_93*`).
    AtlasA3,
    /// Atlas A2 training and inference series (`Ascend910B*`).
    AtlasA2,
    /// Atlas training series (the first Ascend 910).
    Training910,
    /// Atlas inference series (`Ascend310P*`).
    Inference310P,
    /// Atlas 200I/500 A2 (`Ascend310B*`).
    Atlas310B,
}

/// The products the vendor's documentation lists for an operator (Ascend 950 is not
/// modelled).
pub mod products {
    use super::Product::{self, *};

    /// Every product.
    pub const ALL: &[Product] = &[AtlasA3, AtlasA2, Training910, Inference310P, Atlas310B];
    /// Atlas A3 and A2.
    pub const A2_A3: &[Product] = &[AtlasA3, AtlasA2];
    /// Atlas A3, A2 and the training series.
    pub const TRAINING: &[Product] = &[AtlasA3, AtlasA2, Training910];
    /// Atlas A3, A2, the training series and the inference series (not 310B).
    pub const NOT_310B: &[Product] = &[AtlasA3, AtlasA2, Training910, Inference310P];
    /// Every product but the inference series (310P).
    pub const NOT_310P: &[Product] = &[AtlasA3, AtlasA2, Training910, Atlas310B];
}

/// A dtype list as the vendor's code selects it by architecture: most lists add BF16 on
/// Atlas A2/A3 (`DTYPE_SUPPORT_LIST_910B` against `_910`); a few give the wide list to
/// every architecture but the training series' (`DAV_1001`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dtypes {
    /// On Atlas A2 and A3.
    pub a2_a3: &'static [aclDataType],
    /// On the training series (Ascend 910).
    pub training: &'static [aclDataType],
    /// On the inference series (310P) and the 200I/500 A2 (310B).
    pub inference: &'static [aclDataType],
}

impl Dtypes {
    /// `wide` on Atlas A2/A3, `narrow` elsewhere.
    pub const fn a2_a3(wide: &'static [aclDataType], narrow: &'static [aclDataType]) -> Dtypes {
        Dtypes {
            a2_a3: wide,
            training: narrow,
            inference: narrow,
        }
    }

    /// `narrow` on the training series, `wide` elsewhere.
    pub const fn not_910(wide: &'static [aclDataType], narrow: &'static [aclDataType]) -> Dtypes {
        Dtypes {
            a2_a3: wide,
            training: narrow,
            inference: wide,
        }
    }

    /// The same list everywhere.
    pub const fn everywhere(list: &'static [aclDataType]) -> Dtypes {
        Dtypes {
            a2_a3: list,
            training: list,
            inference: list,
        }
    }

    /// The list that applies on `product`.
    pub fn on(&self, product: Product) -> &'static [aclDataType] {
        match product {
            Product::AtlasA2 | Product::AtlasA3 => self.a2_a3,
            Product::Training910 => self.training,
            Product::Inference310P | Product::Atlas310B => self.inference,
        }
    }

    /// Whether `dtype` is in the list that applies on `product`.
    pub fn allows(&self, product: Product, dtype: aclDataType) -> bool {
        self.on(product).contains(&dtype)
    }
}
