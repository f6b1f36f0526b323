//! The functions a row's formula may call on both `f32` (the simulated kernel's precision)
//! and `f64` (the reference's), beyond the inherent methods the two share.

/// Real functions with the same meaning on `f32` and `f64`.
pub trait Real: Copy {
    /// The error function.
    fn erf(self) -> Self;
    /// Gelu in the tanh approximation as the vendor's kernel evaluates it,
    /// `x / (1 + e^(−1.5957691·(x + 0.044715·x³)))`; −∞ gives its limit −0.
    fn gelu_tanh(self) -> Self;
}

impl Real for f32 {
    fn erf(self) -> f32 {
        libm::erff(self)
    }
    fn gelu_tanh(self) -> f32 {
        // 1.595_769 is the f32 nearest the kernel's 1.5957691.
        if self == f32::NEG_INFINITY {
            return -0.0;
        }
        self / (1.0 + (-1.595_769 * (self + 0.044_715 * self * self * self)).exp())
    }
}

impl Real for f64 {
    fn erf(self) -> f64 {
        libm::erf(self)
    }
    fn gelu_tanh(self) -> f64 {
        if self == f64::NEG_INFINITY {
            return -0.0;
        }
        self / (1.0 + (-1.595_769_1 * (self + 0.044_715 * self * self * self)).exp())
    }
}
