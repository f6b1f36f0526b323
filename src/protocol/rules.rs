//! What an operator declares (its arguments, rules and entry points), and the checks
//! every call runs from that declaration before any FFI call.

use super::entry::EntryPoints;
use super::entry::MAX_ARGS;
use crate::device::{DeviceInner, SocFamily};
use crate::element::DType;
use crate::error::{Error, Result};
use crate::shape;
use crate::stream::Stream;
use crate::tensor::RawTensor;

/// How an operator uses one tensor argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    /// Read (`const aclTensor *`).
    Input,
    /// Written (`aclTensor *`).
    Output,
    /// Read and written (`aclTensor *selfRef`).
    InPlace,
}

impl Role {
    /// Whether the operator reads the argument (an input or in-place argument).
    pub fn reads(self) -> bool {
        matches!(self, Role::Input | Role::InPlace)
    }

    /// Whether the operator writes the argument (an output or in-place argument).
    pub fn writes(self) -> bool {
        matches!(self, Role::Output | Role::InPlace)
    }
}

/// One tensor argument of an operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Arg {
    /// Its C name, as errors name it (`"self"`, `"grad_output"`, ...).
    pub name: &'static str,
    /// How the operator uses it.
    pub role: Role,
}

/// An operator's shape rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ShapeRule {
    /// The inputs broadcast together (numpy rules); every output has the broadcast shape.
    Broadcast,
    /// Every argument has the shape of the first.
    Same,
}

/// An aclnn operator, declared once with [`operator!`](super::operator).
pub(crate) trait Operator: 'static {
    /// The C name of phase 2 (`aclnnXxx`), the operator's name in errors.
    const NAME: &'static str;
    /// The tensor arguments, in the order of phase 1.
    const ARGS: &'static [Arg];
    /// The shape rule.
    const SHAPE: ShapeRule;
    /// The two C entry points.
    fn entry_points() -> &'static EntryPoints;
    /// Whether the product family has the operator.
    fn available_on(soc: SocFamily) -> bool;
    /// Whether an argument may have `dtype` on the product family.
    fn supports(soc: SocFamily, dtype: DType) -> bool;
}

/// Validates a call in the vendor's order, in Rust, with typed errors: every tensor on the
/// stream's device, the operator on the SoC, each argument's dtype, then the shape rule.
#[inline]
pub(crate) fn validate<O: Operator, const N: usize>(
    stream: &Stream,
    args: &[RawTensor<'_>; N],
) -> Result<()> {
    const { assert!(N <= MAX_ARGS) };
    debug_assert_eq!(N, O::ARGS.len());
    let device = &stream.inner.device;
    for (arg, t) in O::ARGS.iter().zip(args) {
        t.buf.device.expect_same(device, arg.name)?;
    }
    let soc = device.family();
    if !O::available_on(soc) {
        return Err(unsupported_operator(O::NAME, device));
    }
    for (arg, t) in O::ARGS.iter().zip(args) {
        if !O::supports(soc, t.dtype) {
            return Err(unsupported_dtype(arg.name, t.dtype, O::NAME, device));
        }
    }
    // Equal shapes (the common case) pass both rules: equal shapes broadcast to
    // themselves, and a `Dims` never has more than 8 dims.
    let first = &args[0].layout.dims;
    if args.iter().all(|t| t.layout.dims == *first) {
        return Ok(());
    }
    check_shapes(O::ARGS, O::SHAPE, args)
}

/// The shape rule on differing shapes.
#[cold]
#[inline(never)]
fn check_shapes(args: &[Arg], rule: ShapeRule, tensors: &[RawTensor<'_>]) -> Result<()> {
    let empty: (&'static str, &[usize]) = ("", &[]);
    let mut all = [empty; MAX_ARGS];
    for ((slot, arg), t) in all.iter_mut().zip(args).zip(tensors) {
        *slot = (arg.name, t.layout.dims.as_slice());
    }
    let all = &all[..args.len()];
    match rule {
        ShapeRule::Same => shape::check_same(all).map(drop),
        ShapeRule::Broadcast => {
            let (mut inputs, mut outputs) = ([empty; MAX_ARGS], [empty; MAX_ARGS]);
            let (mut ni, mut no) = (0, 0);
            for (arg, named) in args.iter().zip(all) {
                if arg.role.reads() {
                    inputs[ni] = *named;
                    ni += 1;
                }
                if arg.role.writes() {
                    outputs[no] = *named;
                    no += 1;
                }
            }
            shape::check_broadcast(&inputs[..ni], &outputs[..no]).map(drop)
        }
    }
}

#[cold]
#[inline(never)]
fn unsupported_operator(operator: &'static str, device: &DeviceInner) -> Error {
    Error::UnsupportedOperator {
        operator,
        soc: device.soc().to_owned(),
        missing_symbol: None,
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
