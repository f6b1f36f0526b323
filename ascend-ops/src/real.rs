//! The functions a row's formula may call on both `f32` (the simulated kernel's precision)
//! and `f64` (the reference's), beyond the inherent methods the two share.

/// Real functions with the same meaning on `f32` and `f64`.
pub trait Real: Copy {
    /// The error function.
    fn erf(self) -> Self;
}

impl Real for f32 {
    fn erf(self) -> f32 {
        libm::erff(self)
    }
}

impl Real for f64 {
    fn erf(self) -> f64 {
        libm::erf(self)
    }
}
