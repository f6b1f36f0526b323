//! What an operator declares ([`Operator`]), the checks every call runs from it before any
//! FFI call (`validate`), and the shape rules an operator picks from, each a function of
//! the call ([`Call`]).
//!
//! A rule takes the positions of its arguments in the declaration (phase 1's order), so
//! one rule serves every operator of its shape. Errors name arguments by their labels
//! (`"x (self)"`).

use super::args::{ArgKind, Call, Given, Inferred, Value};
use super::attr::{Attr, CArg, Kind};
use super::entry::EntryPoints;
use crate::device::{DeviceInner, SocFamily};
use crate::element::DType;
use crate::error::{Error, Result};
use crate::shape::{self, Dims, MAX_DIMS, Named};
use crate::stream::Stream;
use ascend_sys::aclOpExecutor;
use std::ffi::c_void;
use std::ptr::NonNull;

pub use super::args::{Arg, Role};

/// An aclnn operator, declared once with [`operator!`](crate::operator): implemented by the
/// declaration, never by hand.
pub trait Operator: 'static {
    /// The C name of phase 2 (`aclnnXxx`), the operator's name in errors.
    const NAME: &'static str;
    /// The arguments, in the order of phase 1.
    const ARGS: &'static [Arg];
    /// The two C entry points.
    #[doc(hidden)]
    fn entry_points() -> &'static EntryPoints;
    /// Whether the product family has the operator.
    fn available_on(soc: SocFamily) -> bool;
    /// Whether some tensor argument may have `dtype` on the product family.
    fn supports(soc: SocFamily, dtype: DType) -> bool;
    /// Whether tensor argument `arg` may have `dtype` on the product family (the
    /// declaration's `arg_dtypes:`; with `dtypes:`, [`supports`](Self::supports) for
    /// every argument).
    fn supports_arg(soc: SocFamily, arg: &Arg, dtype: DType) -> bool {
        let _ = arg;
        Self::supports(soc, dtype)
    }
    /// The operator's rule on the whole call (shapes, attributes, dtypes across arguments).
    ///
    /// # Errors
    /// A typed error naming the first argument that breaks it.
    fn check(call: &Call<'_>) -> Result<()>;
    /// Calls phase 1 at `phase1` with the C arguments in declaration order, then the two
    /// out-pointers.
    ///
    /// # Safety
    /// `phase1` is this operator's phase 1, whose prototype the declaration states; `args`
    /// hold live handles and values of the kinds declared.
    #[doc(hidden)]
    unsafe fn phase1(
        phase1: NonNull<c_void>,
        args: &[CArg],
        workspace_size: *mut u64,
        executor: *mut *mut aclOpExecutor,
    ) -> i32;
}

/// Validates a call in the vendor's order, in Rust, with typed errors: every tensor on the
/// stream's device, the operator on the SoC, each attribute of its declared kind, each
/// tensor's dtype (by the argument's rule), only optional arguments absent, then the
/// operator's rule.
#[inline]
pub(crate) fn validate<O: Operator>(stream: &Stream, values: &[Value<'_>]) -> Result<()> {
    validate_into::<O>(stream, values, &Inferred::default())
}

/// [`validate`], putting the shape the rule computes for each pending output (an
/// allocating variant, [`Value::pending`]) into `inferred` at its position, and their
/// dtype when the caller left it to the call: the promoted dtype of the tensors read, or
/// the one the rule states.
#[inline]
pub(crate) fn validate_into<O: Operator>(
    stream: &Stream,
    values: &[Value<'_>],
    inferred: &Inferred<'_>,
) -> Result<()> {
    let device = &stream.inner.device;
    for (arg, v) in O::ARGS.iter().zip(values) {
        let mut same = Ok(());
        v.each_tensor(|t| {
            if same.is_ok() {
                same = t.buf.device.expect_same(device, arg.label);
            }
        });
        same?;
    }
    let soc = device.family();
    if !O::available_on(soc) {
        return Err(unsupported_operator(O::NAME, device));
    }
    // A promote that fails is reported after the rule, which may state the dtype itself
    // from fewer inputs (a selection's result ignores its condition's dtype).
    let promoted = values
        .iter()
        .any(|v| matches!(v.0, Given::Pending(None)))
        .then(|| promoted_input::<O>(values));
    if let Some(Ok(d)) = promoted {
        inferred.dtype.set(Some(d));
    }
    for (arg, v) in O::ARGS.iter().zip(values) {
        match (&v.0, arg.kind) {
            (Given::Tensor(t), ArgKind::Tensor(role)) => {
                if !O::supports_arg(soc, arg, t.dtype) {
                    return Err(unsupported_dtype(arg.label, t.dtype, O::NAME, device));
                }
                if role.writes() && t.layout.is_broadcast() {
                    return Err(invalid(
                        arg.label,
                        "is broadcast (stride 0 along a dim of more than one element): an \
                         output would write its elements more than once",
                    ));
                }
            }
            (Given::List(l), ArgKind::List(_)) => {
                for k in 0..l.len() {
                    let dtype = l.element(k).dtype;
                    if !O::supports_arg(soc, arg, dtype) {
                        return Err(unsupported_dtype(arg.label, dtype, O::NAME, device));
                    }
                }
            }
            (Given::Pending(dtype), ArgKind::Tensor(_)) => {
                let dtype = dtype.or(inferred.dtype.get()).unwrap_or(DType::F32);
                if !O::supports_arg(soc, arg, dtype) {
                    return Err(unsupported_dtype(arg.label, dtype, O::NAME, device));
                }
            }
            (Given::DTypeOfOutput, ArgKind::Attr(Kind::DType)) => {}
            (Given::Attr(attr), ArgKind::Attr(kind)) => {
                if attr.kind() != kind {
                    return Err(invalid(arg.label, "has another kind than declared"));
                }
                if let Attr::Ints(list) = attr
                    && list.get().is_none()
                {
                    return Err(invalid(
                        arg.label,
                        "has more elements than an IntList holds",
                    ));
                }
                if let Attr::Bools(list) = attr
                    && list.get().is_none()
                {
                    return Err(invalid(
                        arg.label,
                        "has more elements than a BoolList holds",
                    ));
                }
            }
            (Given::Absent, _) if arg.optional => {}
            _ => return Err(invalid(arg.label, "is missing")),
        }
    }
    let call = Call {
        args: O::ARGS,
        values,
        soc,
        inferred,
    };
    let chosen = inferred.dtype.get();
    O::check(&call)?;
    if let (Some(Err(e)), None) = (promoted, inferred.dtype.get()) {
        return Err(e);
    }
    // The rule may have chosen another dtype for a run-time-dtype output.
    match (
        inferred.dtype.get(),
        values
            .iter()
            .position(|v| matches!(v.0, Given::Pending(None))),
    ) {
        (Some(d), Some(out)) if Some(d) != chosen && !O::supports(soc, d) => {
            Err(unsupported_dtype(O::ARGS[out].label, d, O::NAME, device))
        }
        _ => Ok(()),
    }
}

/// The dtype of a pending output left to the call: the tensors read, promoted together
/// ([`DType::promote`]).
///
/// # Errors
/// [`Error::InvalidArgument`] naming the output when no tensor is read, or when two
/// dtypes promote to one this crate has no element type for (INT8 with UINT8: INT16).
#[cold]
fn promoted_input<O: Operator>(values: &[Value<'_>]) -> Result<DType> {
    let out = values
        .iter()
        .position(|v| matches!(v.0, Given::Pending(None)))
        .unwrap_or(0);
    let label = O::ARGS.get(out).map_or("out", |a| a.label);
    let mut read = Vec::new();
    for (a, v) in O::ARGS.iter().zip(values) {
        if a.role().is_some_and(Role::reads) {
            v.each_tensor(|t| read.push(t.dtype));
        }
    }
    let mut dtypes = read.into_iter();
    let first = dtypes
        .next()
        .ok_or_else(|| invalid(label, "has no input to take its dtype from: name its type"))?;
    dtypes.try_fold(first, |acc, d| {
        acc.promote(d).ok_or_else(|| {
            Error::InvalidArgument(format!(
                "{label}: inputs of dtypes {acc} and {d} promote to INT16, which this crate has \
                 no element type for; name the output's type"
            ))
        })
    })
}

/// Every tensor has the shape of the first (equal shapes pass at once); a pending
/// output gets it.
///
/// # Errors
/// [`Error::TooManyDims`], [`Error::ShapeMismatch`] naming the first that differs.
#[inline]
pub fn same(c: &Call<'_>) -> Result<()> {
    if let Some(out) = c.pending() {
        let first = c.values.iter().find_map(Value::tensor);
        c.infer(out, first.map_or(&[][..], |t| t.layout.dims.as_slice()))?;
    }
    if all_equal(c) {
        return Ok(());
    }
    shape::check_same_of(c.tensors().map(|(_, named)| named)).map(drop)
}

/// The tensors read broadcast together (numpy rules) and every tensor written has the
/// broadcast shape (equal shapes pass at once); a pending output gets it.
///
/// # Errors
/// [`Error::TooManyDims`], [`Error::NotBroadcastable`], [`Error::ShapeMismatch`].
#[inline]
pub fn broadcast(c: &Call<'_>) -> Result<()> {
    let with = |keep: fn(Role) -> bool| {
        c.tensors()
            .filter(move |(role, _)| keep(*role))
            .map(|(_, named)| named)
    };
    if let Some(out) = c.pending() {
        c.infer(out, &shape::broadcast_of(with(Role::reads))?)?;
    }
    if all_equal(c) {
        return Ok(());
    }
    shape::check_broadcast_of(with(Role::reads), with(Role::writes)).map(drop)
}

/// The matrix product of tensors `a` and `b` into `out` (numpy `matmul`): `a` and `b` have
/// 1 to 6 dims; the contracted sizes agree (`a[-1]` with `b[0]` for a 1-D or 2-D `b`, else
/// `b[-2]`); their batch dims broadcast; `out` has the product's shape, in which the dim
/// added to a 1-D operand is dropped.
///
/// # Errors
/// [`Error::InvalidArgument`] for a rank outside 1..=6, [`Error::ShapeMismatch`] for the
/// contracted size and `out`, [`Error::NotBroadcastable`] for the batch dims.
pub fn matmul(c: &Call<'_>, a: usize, b: usize, out: usize) -> Result<()> {
    let want = matmul_shape(c, a, b)?;
    expect_shape(c, out, &want)
}

/// The matmul shape of `a` and `b` (see [`matmul`]).
fn matmul_shape(c: &Call<'_>, a: usize, b: usize) -> Result<Dims> {
    let (sa, sb) = (c.dims(a), c.dims(b));
    for (i, s) in [(a, sa), (b, sb)] {
        if s.is_empty() || s.len() > 6 {
            return Err(invalid(c.label(i), "must have 1 to 6 dims"));
        }
    }
    let k = sa[sa.len() - 1];
    let kb = if sb.len() <= 2 {
        sb[0]
    } else {
        sb[sb.len() - 2]
    };
    if k != kb {
        return Err(contracted(c.named(b), kb, k));
    }
    let mut out = [0usize; MAX_DIMS];
    let mut n = 0;
    if sa.len() == 2 && sb.len() == 2 {
        // No batch dims (the common case): nothing to broadcast.
    } else if sa.len() >= 2 && sb.len() >= 2 {
        let batch = shape::broadcast(&[
            (c.label(a), &sa[..sa.len() - 2]),
            (c.label(b), &sb[..sb.len() - 2]),
        ])?;
        for d in batch.iter() {
            out[n] = *d;
            n += 1;
        }
    } else {
        // One operand is 1-D: the batch dims are the other's.
        let other = if sa.len() >= 3 { sa } else { sb };
        for d in other.iter().take(other.len().saturating_sub(2)) {
            out[n] = *d;
            n += 1;
        }
    }
    if sa.len() >= 2 {
        out[n] = sa[sa.len() - 2];
        n += 1;
    }
    if sb.len() >= 2 {
        out[n] = sb[sb.len() - 1];
        n += 1;
    }
    Dims::new("out", &out[..n])
}

/// `out = bias + a @ b` with 2-D `a` (m, k) and `b` (k, n): `bias` has at most 2 dims and
/// broadcasts to (m, n); `out` is (m, n).
///
/// # Errors
/// As [`matmul`]; [`Error::NotBroadcastable`] / [`Error::ShapeMismatch`] for `bias`.
pub fn bias_matmul(c: &Call<'_>, bias: usize, a: usize, b: usize, out: usize) -> Result<()> {
    for i in [a, b] {
        if c.dims(i).len() != 2 {
            return Err(invalid(c.label(i), "must have 2 dims"));
        }
    }
    let want = matmul_shape(c, a, b)?;
    if c.dims(bias).len() > 2 {
        return Err(invalid(c.label(bias), "must have at most 2 dims"));
    }
    shape::check_broadcast(&[c.named(bias), ("out", &want)], &[("out", &want)])
        .map_err(|_| not_broadcastable_to(c.named(bias), &want))?;
    expect_shape(c, out, &want)
}

/// A sum over the dims listed in int-list attribute `dims` (all dims when empty; each in
/// `-r..r`, `r` = max(rank, 1), none twice) of tensor `x` into `out`, whose shape drops
/// them, or keeps them as 1 when bool attribute `keep_dims` is true.
///
/// # Errors
/// [`Error::TooManyDims`], [`Error::InvalidArgument`] for a dim out of range or repeated,
/// [`Error::ShapeMismatch`] for `out`.
pub fn reduce(c: &Call<'_>, x: usize, dims: usize, keep_dims: usize, out: usize) -> Result<()> {
    let sx = Dims::new(c.label(x), c.dims(x))?;
    let (Some(Attr::Ints(list)), Some(Attr::Bool(keep))) = (c.attr(dims), c.attr(keep_dims)) else {
        return Err(invalid(c.label(dims), "is not an int list with a bool"));
    };
    let list = list.get().unwrap_or(&[]);
    let r = sx.ndim().max(1) as i64;
    let mut reduced = [list.is_empty(); MAX_DIMS];
    for &d in list {
        if d < -r || d >= r {
            return Err(invalid(c.label(dims), "holds a dim outside -rank..rank"));
        }
        // In range, so the index is below max(rank, 1) <= 8.
        let i = d.rem_euclid(r) as usize;
        if std::mem::replace(&mut reduced[i], true) {
            return Err(invalid(c.label(dims), "holds a dim twice"));
        }
    }
    let mut want = [0usize; MAX_DIMS];
    let mut n = 0;
    for (i, d) in sx.iter().enumerate() {
        if !reduced[i] {
            want[n] = *d;
            n += 1;
        } else if keep {
            want[n] = 1;
            n += 1;
        }
    }
    expect_shape(c, out, &want[..n])
}

/// A reduction of tensor `x` along the one dim in i64 attribute `dim` (in `-r..r`, `r` =
/// rank; a 0-D `x` takes -1 and 0), dropped or kept as 1 by bool attribute `keep_dim`,
/// into each of tensors `outs` (values and indices, say): each has the reduced shape, or
/// one element when the reduced shape has one (a 0-D and a `[1]` match, as CANN's
/// `CheckShapeAndScalarSame`). With an empty `x` the outputs' shapes are not checked (the
/// operator returns before).
///
/// # Errors
/// [`Error::TooManyDims`], [`Error::InvalidArgument`] for `dim` out of range,
/// [`Error::ShapeMismatch`] naming the first output whose shape differs.
pub fn reduce_dim(
    c: &Call<'_>,
    x: usize,
    dim: usize,
    keep_dim: usize,
    outs: &[usize],
) -> Result<()> {
    let sx = Dims::new(c.label(x), c.dims(x))?;
    for &o in outs {
        Dims::new(c.label(o), c.dims(o))?;
    }
    let (Some(Attr::I64(d)), Some(Attr::Bool(keep))) = (c.attr(dim), c.attr(keep_dim)) else {
        return Err(invalid(c.label(dim), "is not an i64 with a bool"));
    };
    let r = sx.ndim() as i64;
    let (lo, hi) = if r == 0 { (-1, 0) } else { (-r, r - 1) };
    if d < lo || d > hi {
        return Err(Error::InvalidArgument(format!(
            "{} {d} is outside [{lo}, {hi}]",
            c.label(dim)
        )));
    }
    let mut want = [0usize; MAX_DIMS];
    let mut n = 0;
    for (i, &s) in sx.iter().enumerate() {
        // In range, so the index of the reduced dim is below the rank.
        if i as i64 != d.rem_euclid(r.max(1)) {
            want[n] = s;
            n += 1;
        } else if keep {
            want[n] = 1;
            n += 1;
        }
    }
    let want = &want[..n];
    let empty = sx.contains(&0);
    for &o in outs {
        if c.is_pending(o) {
            c.infer(o, want)?;
        } else if !(empty || c.dims(o) == want || one_element(c.dims(o)) && one_element(want)) {
            expect_shape(c, o, want)?;
        }
    }
    Ok(())
}

fn one_element(dims: &[usize]) -> bool {
    dims.iter().product::<usize>() == 1
}

/// A loss of tensors `x` and `target`, which broadcast together, into `out`: of the
/// broadcast shape for i64 attribute `reduction` 0 (none), 0-D for 1 (mean) and 2 (sum).
///
/// # Errors
/// [`Error::NotBroadcastable`], [`Error::InvalidArgument`] for another reduction,
/// [`Error::ShapeMismatch`] for `out`.
pub fn loss(c: &Call<'_>, x: usize, target: usize, reduction: usize, out: usize) -> Result<()> {
    let b = shape::broadcast(&[c.named(x), c.named(target)])?;
    match c.attr(reduction) {
        Some(Attr::I64(0)) => expect_shape(c, out, &b),
        Some(Attr::I64(1 | 2)) => expect_shape(c, out, &[]),
        _ => Err(invalid(
            c.label(reduction),
            "must be 0 (none), 1 (mean) or 2 (sum)",
        )),
    }
}

/// The `cubeMathType` (i8 attribute `math`) of a cube operator with input tensors
/// `inputs`. Atlas A2/A3 take all five values. The training series (910), the inference
/// series (310P) and 310B compute an f32 product only in f16: with an f32 input they refuse
/// `KeepDtype` (0) and `UseHf32` (3), and they have no `UseFp32Add` (4).
///
/// # Errors
/// [`Error::InvalidArgument`] naming `math`.
pub fn cube_math(c: &Call<'_>, math: usize, inputs: &[usize]) -> Result<()> {
    let Some(Attr::I8(m)) = c.attr(math) else {
        return Err(invalid(c.label(math), "is not an i8"));
    };
    let f32_input = inputs.iter().any(|&i| c.dtype(i) == Some(DType::F32));
    let half_only = matches!(
        c.soc(),
        SocFamily::Training910 | SocFamily::Inference310P | SocFamily::Atlas310B
    );
    match m {
        0..=4 if !half_only => Ok(()),
        4 => Err(invalid(
            c.label(math),
            "UseFp32Add needs Atlas A2/A3 (the training series and 310P lack it)",
        )),
        0 | 3 if f32_input => Err(invalid(
            c.label(math),
            "KeepDtype and UseHf32 are refused with f32 inputs on the training series \
             (910) and 310P, which compute f32 in f16: use UseFp16 or \
             AllowFp32DownPrecision (CubeMath::default_for gives torch_npu's choice)",
        )),
        0..=3 => Ok(()),
        _ => Err(invalid(c.label(math), "is not a cube math type (0 to 4)")),
    }
}

/// Tensors `args` have the dtype of tensor `of`; an output among them whose dtype is
/// left to the call (a [`Tensor`](crate::Tensor) result) takes `of`'s, not the promote of
/// the inputs (an index's dtype must not leak into a gathered result).
///
/// # Errors
/// [`Error::InvalidArgument`] naming the first that differs.
pub fn same_dtype(c: &Call<'_>, of: usize, args: &[usize]) -> Result<()> {
    if let Some(d) = c.dtype(of) {
        for &i in args {
            c.infer_dtype(i, d);
        }
    }
    for &i in args {
        if c.dtype(i) != c.dtype(of) {
            return Err(Error::InvalidArgument(format!(
                "{} must have the dtype of {}",
                c.label(i),
                c.label(of)
            )));
        }
    }
    Ok(())
}

/// Whether every tensor has the shape of the first: a `Dims` never has more than 8 dims,
/// so equal shapes pass every dim check too.
#[inline]
fn all_equal(c: &Call<'_>) -> bool {
    let mut tensors = c.values.iter().filter_map(Value::tensor);
    let Some(first) = tensors.next() else {
        return true;
    };
    tensors.all(|t| t.layout.dims == first.layout.dims)
}

/// Tensor `out` has shape `want`; a pending output gets it.
fn expect_shape(c: &Call<'_>, out: usize, want: &[usize]) -> Result<()> {
    if c.is_pending(out) {
        return c.infer(out, want);
    }
    let got = c.named(out);
    if got.1 == want {
        Ok(())
    } else {
        Err(Error::ShapeMismatch {
            argument: got.0,
            expected: want.to_vec(),
            actual: got.1.to_vec(),
        })
    }
}

#[cold]
fn contracted(b: Named<'_>, got: usize, want: usize) -> Error {
    Error::InvalidArgument(format!(
        "{} {:?} has contracted size {got}, but the other operand's is {want}",
        b.0, b.1
    ))
}

#[cold]
fn not_broadcastable_to(a: Named<'_>, to: &[usize]) -> Error {
    Error::NotBroadcastable {
        argument: a.0,
        shape: a.1.to_vec(),
        other: "out",
        other_shape: to.to_vec(),
    }
}

#[cold]
#[inline(never)]
fn invalid(label: &'static str, what: &str) -> Error {
    Error::InvalidArgument(format!("{label} {what}"))
}

#[cold]
#[inline(never)]
fn unsupported_operator(operator: &'static str, device: &DeviceInner) -> Error {
    Error::UnsupportedOperator {
        operator,
        soc: device.soc().to_owned(),
        missing_symbol: None,
        backend: device.rt.backend,
    }
}

#[cold]
#[inline(never)]
fn unsupported_dtype(
    argument: &'static str,
    dtype: DType,
    operator: &'static str,
    device: &DeviceInner,
) -> Error {
    Error::UnsupportedDtype {
        argument,
        dtype,
        operator,
        soc: device.soc().to_owned(),
    }
}
