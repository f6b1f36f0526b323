//! Attribute enums that aclnn operators take as plain integers. Both are `Copy` values,
//! `Send + Sync` like every public type of the crate.

/// Declares an attribute enum whose discriminants are the vendor's values, stored as
/// `$repr` (the C argument's type), with `ALL` (every value, in vendor order), `as_i8`,
/// `as_i64` and `TryFrom<i64>` (the value itself back when it names none).
macro_rules! vendor_enum {
    ($(#[$doc:meta])* pub enum $name:ident: $repr:ty {
        $($(#[$vdoc:meta])* $variant:ident = $value:literal,)+
    }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[repr($repr)]
        pub enum $name {
            $($(#[$vdoc])* $variant = $value,)+
        }

        impl $name {
            #[doc = concat!("Every value, in vendor order (", stringify!($($value),+), ").")]
            pub const ALL: [$name; [$($value),+].len()] = [$($name::$variant),+];

            /// The vendor value as an `i8` (every value fits).
            pub const fn as_i8(self) -> i8 {
                self as $repr as i8
            }

            /// The vendor value as an `i64`.
            pub const fn as_i64(self) -> i64 {
                self as $repr as i64
            }
        }

        impl TryFrom<i64> for $name {
            type Error = i64;

            /// The enum for a vendor value; the value itself back when it names none.
            fn try_from(v: i64) -> Result<Self, i64> {
                Self::ALL.into_iter().find(|e| e.as_i64() == v).ok_or(v)
            }
        }
    };
}

vendor_enum! {
    /// How a cube (matrix) operator may trade precision for speed: the `int8_t cubeMathType`
    /// argument of `aclnnMatmul`, `aclnnAddmm` and the other cube operators.
    ///
    /// The discriminants are the vendor's values, so [`CubeMath::as_i8`] is what the C call
    /// receives.
    ///
    /// # Examples
    /// ```
    /// use ascendcl::CubeMath;
    ///
    /// assert_eq!(CubeMath::UseFp16.as_i8(), 2);
    /// assert_eq!(CubeMath::try_from(3), Ok(CubeMath::UseHf32));
    /// assert!(CubeMath::try_from(5).is_err());
    /// assert_eq!(CubeMath::ALL.len(), 5);
    /// ```
    pub enum CubeMath: i8 {
        /// Compute in the inputs' dtype (`KEEP_DTYPE`); f32 stays f32 where the SoC can.
        KeepDtype = 0,
        /// The SoC may lower f32 to a faster format (HF32 on Atlas A2/A3, f16 on the
        /// training series and 310P) (`ALLOW_FP32_DOWN_PRECISION`).
        AllowFp32DownPrecision = 1,
        /// Round f32 inputs to f16 and compute in f16 (`USE_FP16`).
        UseFp16 = 2,
        /// Compute f32 inputs in HF32 (`USE_HF32`).
        UseHf32 = 3,
        /// f16/bf16 inputs accumulated in f32 (`USE_FP32_ADD`); SoC-dependent.
        UseFp32Add = 4,
    }
}

vendor_enum! {
    /// How a loss reduces its elementwise values: the `int64_t reduction` argument of
    /// `aclnnMseLoss`, `aclnnMseLossBackward` and the other loss operators.
    ///
    /// # Examples
    /// ```
    /// use ascendcl::Reduction;
    ///
    /// assert_eq!(Reduction::Mean.as_i64(), 1);
    /// assert_eq!(Reduction::try_from(2), Ok(Reduction::Sum));
    /// ```
    pub enum Reduction: i64 {
        /// No reduction: the output has the broadcast shape of the inputs.
        None = 0,
        /// The mean over all elements: a 0-D output.
        Mean = 1,
        /// The sum over all elements: a 0-D output.
        Sum = 2,
    }
}

impl CubeMath {
    /// What torch_npu passes by default on a product family: [`KeepDtype`](Self::KeepDtype)
    /// on Atlas A2/A3 (and families this crate does not know), [`UseFp16`](Self::UseFp16)
    /// on the training series (910) and the inference series (310P), where an f32 matmul
    /// needs a lower precision.
    ///
    /// ```
    /// use ascendcl::{CubeMath, SocFamily};
    /// assert_eq!(CubeMath::default_for(SocFamily::AtlasA2), CubeMath::KeepDtype);
    /// assert_eq!(CubeMath::default_for(SocFamily::Training910), CubeMath::UseFp16);
    /// ```
    pub fn default_for(soc: crate::SocFamily) -> CubeMath {
        use crate::SocFamily as F;
        match soc {
            F::Training910 | F::Inference310P => CubeMath::UseFp16,
            F::AtlasA3 | F::AtlasA2 | F::Atlas310B | F::Other => CubeMath::KeepDtype,
        }
    }

    /// [`CubeMath::default_for`] the device's family.
    pub fn default_for_device(device: &crate::Device) -> CubeMath {
        CubeMath::default_for(device.soc_family())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_the_vendors() {
        let cube: Vec<i8> = CubeMath::ALL.iter().map(|m| m.as_i8()).collect();
        assert_eq!(cube, [0, 1, 2, 3, 4]);
        let red: Vec<i64> = Reduction::ALL.iter().map(|r| r.as_i64()).collect();
        assert_eq!(red, [0, 1, 2]);
        assert_eq!(Reduction::Sum.as_i8(), 2);
        assert_eq!(CubeMath::UseFp32Add.as_i64(), 4);
    }

    #[test]
    fn try_from_round_trips_and_refuses_others() {
        for m in CubeMath::ALL {
            assert_eq!(CubeMath::try_from(m.as_i64()), Ok(m));
        }
        for r in Reduction::ALL {
            assert_eq!(Reduction::try_from(r.as_i64()), Ok(r));
        }
        assert_eq!(CubeMath::try_from(-1), Err(-1));
        assert_eq!(Reduction::try_from(3), Err(3));
    }
}
