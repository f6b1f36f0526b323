//! Random numbers in place: `aclnnInplaceUniform`, `aclnnInplaceNormal`,
//! `aclnnInplaceBernoulli` and `aclnnInplaceBernoulliTensor`, each drawing from an explicit
//! `(seed, offset)` pair, as torch_npu passes its generator's.
//!
//! The plain forms ([`inplace_uniform`], ...) take the pair from the device's generator
//! ([`Device::manual_seed`](crate::Device::manual_seed)), which each call advances by
//! [`PHILOX_OFFSET_STEP`](crate::device::PHILOX_OFFSET_STEP), so successive calls draw
//! different numbers and a reseeded device draws the same ones again. The `_seeded` forms
//! take the pair from the caller.
//!
//! What numbers come out is the library's: the vendor's streams differ by product (the
//! hardware generators of Atlas A2/A3, Philox elsewhere). The simulator's are a documented
//! function of `(seed, offset, element index)`, independent of threads (see
//! [`reference::random`](crate::reference::random), which computes the same bits).
//!
//! `aclnnInplaceUniform` takes its seed and offset as `uint64_t` and `aclnnInplaceNormal`
//! its mean and std as `float`: C types the declaration macro has no attribute for, so
//! both are declared here by hand (their prototypes still checked against `ascend-sys`).

use crate::device::{Philox, SocFamily};
use crate::element::DType;
use crate::error::{Error, Result};
use crate::operand::Operand;
use crate::protocol::{
    Arg, ArgKind, Attr, CArg, CValue, Call, EntryPoints, Kind, Operator, Role, Scalar, Value,
};
use crate::stream::Stream;
use crate::AsTensorViewMut;
use ascend_sys::{aclOpExecutor, aclTensor, aclnnStatus};
use std::ffi::c_void;
use std::ptr::NonNull;

/// Uniform's dtypes this crate has types for: FLOAT, FLOAT16, DOUBLE, INT8, INT32, INT64,
/// UINT8, BF16 on Atlas A2/A3 (the vendor also takes INT16).
fn uniform_dtypes(soc: SocFamily, dtype: DType) -> bool {
    use DType::*;
    matches!(dtype, F32 | I32 | I64 | F16 | I8 | U8 | F64) || dtype == BF16 && soc.has_bf16()
}

/// Normal's dtypes: Uniform's and BOOL (the non-floating ones drawn in FLOAT and cast).
fn normal_dtypes(soc: SocFamily, dtype: DType) -> bool {
    dtype == DType::Bool || uniform_dtypes(soc, dtype)
}

/// Bernoulli's selfRef dtypes: Normal's on the training series and Atlas A2/A3, none on
/// the inference products (the vendor's list there is empty).
fn bernoulli_dtypes(soc: SocFamily, dtype: DType) -> bool {
    match soc {
        SocFamily::Inference310P | SocFamily::Atlas310B => false,
        _ => normal_dtypes(soc, dtype),
    }
}

/// Bernoulli's prob dtypes: FLOAT, FLOAT16, DOUBLE, BF16 on Atlas A2/A3.
fn prob_dtypes(soc: SocFamily, dtype: DType) -> bool {
    matches!(dtype, DType::F32 | DType::F16 | DType::F64) || dtype == DType::BF16 && soc.has_bf16()
}

const fn tensor_arg() -> Arg {
    Arg {
        name: "selfRef",
        label: "x (selfRef)",
        kind: ArgKind::Tensor(Role::InPlace),
        optional: false,
    }
}

const fn attr_arg(name: &'static str, kind: Kind) -> Arg {
    Arg {
        name,
        label: name,
        kind: ArgKind::Attr(kind),
        optional: false,
    }
}

/// The `f64` of an attribute argument.
fn f64_of(c: &Call<'_>, i: usize) -> f64 {
    match c.attr(i) {
        Some(Attr::F64(v)) => v,
        Some(Attr::Scalar(s)) => s.to_f64(),
        _ => f64::NAN,
    }
}

type UniformPhase1 = unsafe extern "C" fn(
    *const aclTensor,
    f64,
    f64,
    u64,
    u64,
    *mut u64,
    *mut *mut aclOpExecutor,
) -> aclnnStatus;
type NormalPhase1 = unsafe extern "C" fn(
    *const aclTensor,
    f32,
    f32,
    i64,
    i64,
    *mut u64,
    *mut *mut aclOpExecutor,
) -> aclnnStatus;

// The hand-written prototypes, checked against the header at compile time.
const _: () = {
    #[allow(dead_code)]
    fn prototypes_match_header() {
        let _: UniformPhase1 = ascend_sys::aclnnInplaceUniformGetWorkspaceSize;
        let _: ascend_sys::OperatorLaunchFn = ascend_sys::aclnnInplaceUniform;
        let _: NormalPhase1 = ascend_sys::aclnnInplaceNormalGetWorkspaceSize;
        let _: ascend_sys::OperatorLaunchFn = ascend_sys::aclnnInplaceNormal;
    }
};

/// `aclnnInplaceUniform`: `selfRef` filled with numbers uniform in `[from, to)`. Every
/// product but 310B; FLOAT, FLOAT16, DOUBLE, INT8/16/32/64, UINT8, BF16 on Atlas A2/A3.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct InplaceUniform;

impl Operator for InplaceUniform {
    const NAME: &'static str = "aclnnInplaceUniform";
    const ARGS: &'static [Arg] = &[
        tensor_arg(),
        attr_arg("from", Kind::F64),
        attr_arg("to", Kind::F64),
        attr_arg("seed", Kind::I64),
        attr_arg("offset", Kind::I64),
    ];

    fn entry_points() -> &'static EntryPoints {
        static ENTRY: EntryPoints =
            EntryPoints::new("aclnnInplaceUniformGetWorkspaceSize", "aclnnInplaceUniform");
        &ENTRY
    }

    fn available_on(soc: SocFamily) -> bool {
        soc != SocFamily::Atlas310B
    }

    fn supports(soc: SocFamily, dtype: DType) -> bool {
        uniform_dtypes(soc, dtype)
    }

    /// `from <= to` (equal allowed).
    fn check(c: &Call<'_>) -> Result<()> {
        let (from, to) = (f64_of(c, 1), f64_of(c, 2));
        if from > to {
            return Err(Error::InvalidArgument(format!(
                "from ({from}) is greater than to ({to})"
            )));
        }
        Ok(())
    }

    unsafe fn phase1(
        phase1: NonNull<c_void>,
        args: &[CArg],
        workspace_size: *mut u64,
        executor: *mut *mut aclOpExecutor,
    ) -> i32 {
        let &[x, from, to, seed, offset] = args else {
            return ascend_sys::ACLNN_ERR_PARAM_INVALID;
        };
        // SAFETY: `phase1` is aclnnInplaceUniformGetWorkspaceSize, whose prototype is
        // `UniformPhase1` (checked against the header above); the arguments are a live
        // tensor handle and values of the declared kinds (the caller's contract). The
        // seed and offset travel as i64 bits and are reinterpreted, not converted.
        unsafe {
            let f = std::mem::transmute::<*mut c_void, UniformPhase1>(phase1.as_ptr());
            f(
                <*const aclTensor as CValue>::from_arg(x),
                f64::from_arg(from),
                f64::from_arg(to),
                i64::from_arg(seed) as u64,
                i64::from_arg(offset) as u64,
                workspace_size,
                executor,
            )
        }
    }
}

/// `aclnnInplaceNormal`: `selfRef` filled with normal numbers of mean `mean` and standard
/// deviation `std`. Atlas A2/A3 and the training series; Uniform's dtypes and BOOL.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct InplaceNormal;

impl Operator for InplaceNormal {
    const NAME: &'static str = "aclnnInplaceNormal";
    const ARGS: &'static [Arg] = &[
        tensor_arg(),
        attr_arg("mean", Kind::F64),
        attr_arg("std", Kind::F64),
        attr_arg("seed", Kind::I64),
        attr_arg("offset", Kind::I64),
    ];

    fn entry_points() -> &'static EntryPoints {
        static ENTRY: EntryPoints =
            EntryPoints::new("aclnnInplaceNormalGetWorkspaceSize", "aclnnInplaceNormal");
        &ENTRY
    }

    fn available_on(soc: SocFamily) -> bool {
        !matches!(soc, SocFamily::Inference310P | SocFamily::Atlas310B)
    }

    fn supports(soc: SocFamily, dtype: DType) -> bool {
        normal_dtypes(soc, dtype)
    }

    /// `std >= 0`, as the float the library receives.
    fn check(c: &Call<'_>) -> Result<()> {
        let std = f64_of(c, 2) as f32;
        if std < 0.0 {
            return Err(Error::InvalidArgument(format!(
                "std ({std}) is negative"
            )));
        }
        Ok(())
    }

    unsafe fn phase1(
        phase1: NonNull<c_void>,
        args: &[CArg],
        workspace_size: *mut u64,
        executor: *mut *mut aclOpExecutor,
    ) -> i32 {
        let &[x, mean, std, seed, offset] = args else {
            return ascend_sys::ACLNN_ERR_PARAM_INVALID;
        };
        // SAFETY: `phase1` is aclnnInplaceNormalGetWorkspaceSize, whose prototype is
        // `NormalPhase1` (checked against the header above); the arguments are a live
        // tensor handle and values of the declared kinds. Mean and std are carried as
        // doubles and rounded to the C `float` here.
        unsafe {
            let f = std::mem::transmute::<*mut c_void, NormalPhase1>(phase1.as_ptr());
            f(
                <*const aclTensor as CValue>::from_arg(x),
                f64::from_arg(mean) as f32,
                f64::from_arg(std) as f32,
                i64::from_arg(seed),
                i64::from_arg(offset),
                workspace_size,
                executor,
            )
        }
    }
}

/// The device's next `(seed, offset)` for a call on `stream`.
fn next_pair(stream: &Stream) -> Philox {
    stream.inner.device.next_philox()
}

/// Fills `x` with numbers uniform in `[from, to)` drawn from `(seed, offset)`, queued on
/// `stream` (`aclnnInplaceUniform`).
///
/// * `x` (selfRef): any [`AsTensorViewMut`] of `f32`, `f16`, `f64`, `i8`, `i16`, `i32`,
///   `i64`, `u8`, or `bf16` (Atlas A2/A3 only), up to 8 dims, any strides; empty: nothing.
/// * `from <= to`. Each value is computed in double, then rounded to `x`'s type (a
///   low-precision type may round a value up to `to`; integers are truncated).
///
/// # Errors
/// [`Error::UnsupportedOperator`] (310B), [`Error::UnsupportedDtype`],
/// [`Error::InvalidArgument`] (`from > to`), [`Error::DeviceMismatch`];
/// [`Error::Aclnn`] from the library.
pub fn inplace_uniform_seeded<T: Operand>(
    mut x: impl AsTensorViewMut<Elem = T>,
    from: f64,
    to: f64,
    seed: u64,
    offset: u64,
    stream: &Stream,
) -> Result<()> {
    crate::protocol::call::<InplaceUniform, 5>(
        stream,
        [
            Value::output(x.as_tensor_view_mut()),
            Value::attr(Attr::F64(from)),
            Value::attr(Attr::F64(to)),
            Value::attr(Attr::I64(seed as i64)),
            Value::attr(Attr::I64(offset as i64)),
        ],
    )
}

/// [`inplace_uniform_seeded`] with the `(seed, offset)` of `stream`'s device, which this
/// call advances ([`Device::next_philox`](crate::Device::next_philox)) whether or not it
/// succeeds, as torch_npu's `uniform_` does.
///
/// ```
/// # fn main() -> ascendcl::Result<()> {
/// use ascendcl::{DeviceTensor, Runtime, inplace_uniform};
/// let device = Runtime::auto()?.device(0)?;
/// let stream = device.stream()?;
/// let mut w = DeviceTensor::<f32>::zeros(&stream, [64, 32])?;
/// inplace_uniform(&mut w, -0.5, 0.5, &stream)?;
/// let w = w.to_array::<ndarray::Ix2>(&stream)?;
/// assert!(w.iter().all(|&v| (-0.5..0.5).contains(&v)));
/// # Ok(()) }
/// ```
///
/// # Errors
/// As [`inplace_uniform_seeded`].
pub fn inplace_uniform<T: Operand>(
    x: impl AsTensorViewMut<Elem = T>,
    from: f64,
    to: f64,
    stream: &Stream,
) -> Result<()> {
    let p = next_pair(stream);
    inplace_uniform_seeded(x, from, to, p.seed, p.offset, stream)
}

/// Fills `x` with normal numbers of mean `mean` and standard deviation `std` drawn from
/// `(seed, offset)`, queued on `stream` (`aclnnInplaceNormal`).
///
/// * `x` (selfRef): as [`inplace_uniform_seeded`]'s, `bool` too (integer and `bool`
///   types receive the cast of the value); not on 310P and 310B.
/// * `std >= 0` (0: every value is `mean`). `mean` and `std` reach the library as C
///   `float`s.
///
/// # Errors
/// [`Error::UnsupportedOperator`], [`Error::UnsupportedDtype`],
/// [`Error::InvalidArgument`] (`std < 0`), [`Error::DeviceMismatch`];
/// [`Error::Aclnn`] from the library.
pub fn inplace_normal_seeded<T: Operand>(
    mut x: impl AsTensorViewMut<Elem = T>,
    mean: f32,
    std: f32,
    seed: i64,
    offset: i64,
    stream: &Stream,
) -> Result<()> {
    crate::protocol::call::<InplaceNormal, 5>(
        stream,
        [
            Value::output(x.as_tensor_view_mut()),
            Value::attr(Attr::F64(f64::from(mean))),
            Value::attr(Attr::F64(f64::from(std))),
            Value::attr(Attr::I64(seed)),
            Value::attr(Attr::I64(offset)),
        ],
    )
}

/// [`inplace_normal_seeded`] with the `(seed, offset)` of `stream`'s device, which this
/// call advances.
///
/// ```
/// # fn main() -> ascendcl::Result<()> {
/// use ascendcl::{DeviceTensor, Runtime, inplace_normal};
/// let stream = Runtime::auto()?.device(0)?.stream()?;
/// let mut w = DeviceTensor::<f32>::zeros(&stream, [4096])?;
/// inplace_normal(&mut w, 1.0, 0.5, &stream)?;
/// let w = w.to_array::<ndarray::Ix1>(&stream)?;
/// assert!((w.mean().unwrap() - 1.0).abs() < 0.05);
/// # Ok(()) }
/// ```
///
/// # Errors
/// As [`inplace_normal_seeded`].
pub fn inplace_normal<T: Operand>(
    x: impl AsTensorViewMut<Elem = T>,
    mean: f32,
    std: f32,
    stream: &Stream,
) -> Result<()> {
    let p = next_pair(stream);
    inplace_normal_seeded(x, mean, std, p.seed as i64, p.offset as i64, stream)
}

/// A floating prob scalar in [0, 1].
fn bernoulli_rule(c: &Call<'_>) -> Result<()> {
    let Some(Attr::Scalar(p)) = c.attr(1) else {
        return Ok(());
    };
    if matches!(p, Scalar::I64(_) | Scalar::Bool(_)) {
        return Err(Error::InvalidArgument(format!(
            "{}: {p:?} is not a floating-point probability",
            c.label(1)
        )));
    }
    let v = p.to_f64();
    if !(0.0..=1.0).contains(&v) {
        return Err(Error::InvalidArgument(format!(
            "{} ({v}) is outside [0, 1]",
            c.label(1)
        )));
    }
    Ok(())
}

/// Per argument: selfRef by the product's list, prob FLOAT, FLOAT16, DOUBLE (+ BF16).
fn bernoulli_arg_dtypes(soc: SocFamily, arg: &Arg, dtype: DType) -> bool {
    match arg.name {
        "prob" => prob_dtypes(soc, dtype),
        _ => bernoulli_dtypes(soc, dtype),
    }
}

/// prob broadcasts (numpy rules) to selfRef's shape: CANN leaves anything else undefined.
fn bernoulli_tensor_rule(c: &Call<'_>) -> Result<()> {
    let (x, p) = (c.dims(0), c.dims(1));
    let fits = p.len() <= x.len()
        && p.iter()
            .rev()
            .zip(x.iter().rev())
            .all(|(&a, &b)| a == b || a == 1);
    if fits {
        return Ok(());
    }
    Err(Error::NotBroadcastable {
        argument: c.label(1),
        shape: p.to_vec(),
        other: c.label(0),
        other_shape: x.to_vec(),
    })
}

crate::operator! {
    @verified
    /// `aclnnInplaceBernoulli`: `selfRef` filled with 0 and 1, 1 with probability `prob`.
    /// The training series and Atlas A2/A3 (the inference products refuse every dtype).
    pub struct InplaceBernoulli: aclnnInplaceBernoulli, aclnnInplaceBernoulliGetWorkspaceSize;
    products: |soc: SocFamily| !matches!(soc, SocFamily::Inference310P | SocFamily::Atlas310B);
    arg_dtypes: bernoulli_arg_dtypes;
    rule: bernoulli_rule;

    /// Fills `x` with 0 and 1, each element 1 with probability `p`, drawn from `(seed,
    /// offset)`, queued on `stream` (`aclnnInplaceBernoulli`).
    ///
    /// * `x` (selfRef): as [`inplace_normal_seeded`]'s (training series and Atlas A2/A3);
    ///   any strides, empty included.
    /// * `p` (prob): a floating [`Scalar`] in `[0, 1]`.
    ///
    /// # Errors
    /// [`Error::UnsupportedOperator`],
    /// [`Error::UnsupportedDtype`],
    /// [`Error::InvalidArgument`] (`p`);
    /// [`Error::Aclnn`] from the library.
    pub fn inplace_bernoulli_seeded<T>(
        x: inplace_const<T> = "selfRef",
        p: attr<Scalar> = "prob",
        seed: attr<i64> = "seed",
        offset: attr<i64> = "offset",
    );

    /// A reusable [`inplace_bernoulli_seeded`]: its `(seed, offset)` are fixed at `new`,
    /// so every launch draws the same mask.
    pub type InplaceBernoulliPlan;
}

crate::operator! {
    @verified
    /// `aclnnInplaceBernoulliTensor`: as [`InplaceBernoulli`] with one probability per
    /// element (a prob tensor broadcast to selfRef).
    pub struct InplaceBernoulliTensor: aclnnInplaceBernoulliTensor, aclnnInplaceBernoulliTensorGetWorkspaceSize;
    products: |soc: SocFamily| !matches!(soc, SocFamily::Inference310P | SocFamily::Atlas310B);
    arg_dtypes: bernoulli_arg_dtypes;
    rule: bernoulli_tensor_rule;

    /// Fills `x` with 0 and 1, element `i` 1 with probability `p[i]` (`p` broadcast to
    /// `x`'s shape), drawn from `(seed, offset)`, queued on `stream`
    /// (`aclnnInplaceBernoulliTensor`).
    ///
    /// * `x` (selfRef): as [`inplace_bernoulli_seeded`]'s.
    /// * `p` (prob): `f32`, `f16`, `f64` or `bf16` (Atlas A2/A3), broadcasting to `x`;
    ///   its values in `[0, 1]` (the simulator fails the launch on one outside; CANN
    ///   does not check).
    ///
    /// # Errors
    /// As [`inplace_bernoulli_seeded`]; [`Error::NotBroadcastable`].
    pub fn inplace_bernoulli_tensor_seeded<T, P>(
        x: inplace_const<T> = "selfRef",
        p: input<P> = "prob",
        seed: attr<i64> = "seed",
        offset: attr<i64> = "offset",
    );

    /// A reusable [`inplace_bernoulli_tensor_seeded`], its `(seed, offset)` fixed.
    pub type InplaceBernoulliTensorPlan;
}

/// [`inplace_bernoulli_seeded`] with the `(seed, offset)` of `stream`'s device, which
/// this call advances.
///
/// ```
/// # fn main() -> ascendcl::Result<()> {
/// use ascendcl::{DeviceTensor, Runtime, inplace_bernoulli};
/// let stream = Runtime::auto()?.device(0)?.stream()?;
/// let mut mask = DeviceTensor::<f32>::zeros(&stream, [1000])?;
/// inplace_bernoulli(&mut mask, 0.25, &stream)?;
/// let mask = mask.to_array::<ndarray::Ix1>(&stream)?;
/// assert!(mask.iter().all(|&v| v == 0.0 || v == 1.0));
/// # Ok(()) }
/// ```
///
/// # Errors
/// As [`inplace_bernoulli_seeded`].
pub fn inplace_bernoulli<T: Operand>(
    x: impl AsTensorViewMut<Elem = T>,
    p: f64,
    stream: &Stream,
) -> Result<()> {
    let pair = next_pair(stream);
    inplace_bernoulli_seeded(x, p, pair.seed as i64, pair.offset as i64, stream)
}

/// [`inplace_bernoulli_tensor_seeded`] with the `(seed, offset)` of `stream`'s device,
/// which this call advances.
///
/// # Errors
/// As [`inplace_bernoulli_tensor_seeded`].
pub fn inplace_bernoulli_tensor<T: Operand, P: Operand>(
    x: impl AsTensorViewMut<Elem = T>,
    p: impl crate::AsTensorView<Elem = P>,
    stream: &Stream,
) -> Result<()> {
    let pair = next_pair(stream);
    inplace_bernoulli_tensor_seeded(x, p, pair.seed as i64, pair.offset as i64, stream)
}
