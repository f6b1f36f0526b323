//! The Mish family under the property harness (`props.rs`): `mish`, `mish_inplace` and
//! `mish_backward` as [`Elementwise`] operators, and `mish_backward`'s two regions where
//! the vendor's f32 formula inherently cannot meet the precision standard.
//!
//! # `mish_backward`'s regions
//! With `grad` and `x` the inputs and `P` the compute type:
//! * **Root** ([`ROOT`]): `|x − X_ROOT| < ROOT_HALF_WIDTH` (2^-8), any `P`.
//!   mish' has its zero at x ≈ −1.19242 (slope ≈ 0.27) and the vendor's f32 formula
//!   `t − x(t²−1)σ(x)` cancels there: its absolute error (measured ≤ 1.25·2^-24 for
//!   grad = 1) is a relative error above 10·T = 10·2^-13 within about 1.4e-4 of the root,
//!   and above T (which alone breaks MERE for a small tensor) within about 2.3e-3; the
//!   window covers the latter with margin. For P = f16 the f32 error (up to 1e-3
//!   relative there) can flip the final rounding to f16, and when the result is an f16
//!   *subnormal* (|grad·mish'| < 6.1e-5, common next to the root) one subnormal ulp
//!   (6e-8) is a relative error of several percent — so the window applies to every `P`
//!   (found by this suite: grad 0.385, x = −1.1923828 in f16, 84 vs 83 subnormal ulps).
//!   Asserted instead: for a finite
//!   gradient `|a − g| ≤ 2^-22·|grad| + ulp_O(g)`; the reference NaN exactly where the
//!   result is NaN; for an infinite gradient the result is ±inf or NaN (the sign of
//!   mish' itself is not resolved by f32 there).
//! * **Subnormal exp** ([`SUB_EXP`]): `x < X_SUBNORMAL_EXP` (ln 2^-126 ≈ −87.3365,
//!   where `exp(x)` is subnormal or zero in f32) and either `P ≠ f16` or the gradient is
//!   not finite. There mish'(x) ≈ (1+x)·e^x is computed from a subnormal `e` with few
//!   significant bits (and as 0 below x ≈ −103.97), so with a huge gradient
//!   (f32/bf16 up to 3.4e38) a normal result keeps only a few bits. Asserted instead: for
//!   a finite gradient `|a − g| ≤ |grad|·(|x| + 2)·2^-148 + ulp_O(g)` (measured ≤ 0.48 of
//!   the first term) and NaN agreement; for an infinite gradient the result is the
//!   reference's infinity or NaN (`inf · 0` where the f32 mish' underflowed to 0). With
//!   `P = f16` and a finite gradient (|grad| ≤ 65504) the error is far below f16's
//!   resolution, so those elements stay in the standard region.
//! * **Overflow edge** (inside the standard region, counted separately): where the exact
//!   value lies just past the overflow threshold, a last-bit difference of the f32
//!   formula decides between ±inf and ±MAX. Allowed: reference ±inf and result ±MAX of
//!   `P` or `O` with the same sign, or the reverse; anything else is an infinity mismatch.
//!
//! `proof_properties` pins both regions down separately with dense sweeps.
#![allow(dead_code)]

use super::props::{DevView, Elementwise, Host, Region, Typed, typed, ulp};
use ascendcl::{
    DType, InplaceMish, Mish, MishBackward, SocFamily, Stream, TensorViewMut, mish, mish_backward,
    mish_inplace, reference,
};
use ndarray::ArrayD;

pub use super::props::X_ROOT;

/// Half-width of the [`ROOT`] window.
pub const ROOT_HALF_WIDTH: f64 = 1.0 / 256.0;
/// ln(2^-126): below it `exp(x)` is subnormal (or 0) in f32.
pub const X_SUBNORMAL_EXP: f64 = -87.336_544_750_553_1;
/// Next to the root of mish'.
pub const ROOT: Region = Region(1);
/// Where `exp(x)` is subnormal in f32.
pub const SUB_EXP: Region = Region(2);

/// The region of `grad · mish'(x)` computed in `p`.
pub fn region(p: DType, grad: f64, x: f64) -> Region {
    if (x - X_ROOT).abs() < ROOT_HALF_WIDTH {
        ROOT
    } else if x < X_SUBNORMAL_EXP && (p != DType::F16 || !grad.is_finite()) {
        SUB_EXP
    } else {
        Region::STANDARD
    }
}

/// `aclnnMishBackward`: `grad_input = grad_output · mish'(self)`, broadcasting.
pub struct MishBackwardOp;

impl Elementwise for MishBackwardOp {
    const NAME: &'static str = "mish_backward";
    const INPUTS: &'static [&'static str] = &["grad_output", "self"];
    const WIDE: &'static [bool] = &[false, true];
    const BROADCASTS: bool = true;
    const REGIONS: &'static [&'static str] = &["root-region", "subnormal-exp-region"];
    const OVERFLOW_EDGE: bool = true;
    const SPECIALS: &'static [u32] = &[20, 20, 300, 1000];

    fn accepts(soc: SocFamily, dtypes: &[DType]) -> bool {
        dtypes.iter().all(|d| MishBackward::supports(soc, *d))
    }

    fn region(p: DType, x: &[f64]) -> Region {
        region(p, x[0], x[1])
    }

    /// With an infinite gradient the sign (and NaN-ness) of `inf · mish'` is not resolved
    /// by f32 in either region; [`Self::judge_region`] asserts what is.
    fn nan_exempt(region: Region, x: &[f64]) -> bool {
        region != Region::STANDARD && !x[0].is_finite()
    }

    fn judge_region(
        region: Region,
        coarse: DType,
        x: &[f64],
        a: f64,
        e: f64,
    ) -> Result<(), &'static str> {
        let (grad, xv) = (x[0], x[1]);
        match region {
            ROOT if grad.is_finite() => {
                if !e.is_nan() && (a - e).abs() > 2f64.powi(-22) * grad.abs() + ulp(coarse, e) {
                    return Err("root-region bound 2^-22|grad| + ulp broken");
                }
            }
            ROOT => {
                if !(a.is_infinite() || a.is_nan()) {
                    return Err("root region, infinite grad, finite result");
                }
            }
            SUB_EXP if grad.is_finite() => {
                let bound = grad.abs() * (xv.abs() + 2.0) * 2f64.powi(-148) + ulp(coarse, e);
                if !(e.is_nan() || (a - e).abs() <= bound || a == e) {
                    return Err("subnormal-exp bound |grad|(|x| + 2)2^-148 + ulp broken");
                }
            }
            SUB_EXP => {
                if !(a == e || a.is_nan()) {
                    return Err("subnormal-exp region, infinite grad");
                }
            }
            _ => return Err("not a region of mish_backward"),
        }
        Ok(())
    }

    fn reference<O: Typed>(x: &[Host]) -> ascendcl::Result<ArrayD<O>> {
        typed!(Host, &x[0], |g| typed!(Host, &x[1], |x| {
            reference::mish_backward(g.view(), x.view()).map(|r| reference::cast(&r))
        }))
    }

    fn launch<O: Typed>(
        x: Vec<DevView<'_>>,
        out: TensorViewMut<'_, O>,
        stream: &Stream,
    ) -> ascendcl::Result<()> {
        let [g, x] = <[DevView<'_>; 2]>::try_from(x).map_err(|_| arity())?;
        typed!(DevView, g, |g| typed!(DevView, x, |x| mish_backward(
            g, x, out, stream
        )))
    }
}

/// `aclnnMish`: `out = mish(self)`, of one element type and shape.
pub struct MishOp;

impl Elementwise for MishOp {
    const NAME: &'static str = "mish";
    const INPUTS: &'static [&'static str] = &["self"];
    const WIDE: &'static [bool] = &[true];
    const BROADCASTS: bool = false;

    fn accepts(soc: SocFamily, dtypes: &[DType]) -> bool {
        dtypes[0] == dtypes[1] && Mish::supports(soc, dtypes[0])
    }

    fn reference<O: Typed>(x: &[Host]) -> ascendcl::Result<ArrayD<O>> {
        mish_reference(x)
    }

    fn launch<O: Typed>(
        x: Vec<DevView<'_>>,
        out: TensorViewMut<'_, O>,
        stream: &Stream,
    ) -> ascendcl::Result<()> {
        let [x] = <[DevView<'_>; 1]>::try_from(x).map_err(|_| arity())?;
        mish(O::of_dev(x).ok_or_else(arity)?, out, stream)
    }
}

/// `aclnnInplaceMish`: `selfRef = mish(selfRef)`.
pub struct MishInplaceOp;

impl Elementwise for MishInplaceOp {
    const NAME: &'static str = "mish_inplace";
    const INPUTS: &'static [&'static str] = &["selfRef"];
    const WIDE: &'static [bool] = &[true];
    const BROADCASTS: bool = false;
    const IN_PLACE: bool = true;

    fn accepts(soc: SocFamily, dtypes: &[DType]) -> bool {
        dtypes[0] == dtypes[1] && InplaceMish::supports(soc, dtypes[0])
    }

    fn reference<O: Typed>(x: &[Host]) -> ascendcl::Result<ArrayD<O>> {
        mish_reference(x)
    }

    fn launch<O: Typed>(
        _: Vec<DevView<'_>>,
        out: TensorViewMut<'_, O>,
        stream: &Stream,
    ) -> ascendcl::Result<()> {
        mish_inplace(out, stream)
    }
}

/// `reference::mish` of the one input, whose type `accepts` made the output's.
fn mish_reference<O: Typed>(x: &[Host]) -> ascendcl::Result<ArrayD<O>> {
    let x = O::of_host(&x[0]).ok_or_else(arity)?;
    reference::mish(x.view())
}

fn arity() -> ascendcl::Error {
    ascendcl::Error::InvalidArgument("the harness passed inputs the operator does not take".into())
}
