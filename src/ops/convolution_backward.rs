//! `aclnnConvolutionBackward`: the gradients of a (transposed) convolution, each output
//! optional under `outputMask`.
//!
//! Written by hand rather than with `operator!`: its `groups` is a C `int` (the
//! declaration's attribute types stop at `int64_t`) and its three outputs are each
//! optional (NULL when the mask does not ask for it), which the declaration's roles and
//! its two-output allocating form do not cover. The protocol underneath is the same:
//! [`protocol::call`](crate::protocol::call) validates and runs it, [`Plan`]
//! keeps it.

use super::convolution::{cube_math, ints};
use crate::device::SocFamily;
use crate::element::DType;
use crate::error::{Error, Result};
use crate::protocol::{
    Arg, ArgKind, Attr, BoolList, CArg, CValue, Call, EntryPoints, IntList, Kind, Operator, Role,
    Value, label,
};
use crate::reference::ConvSpec;
use crate::{AsTensorView, CubeMath, DeviceTensor, Operand, Plan, Stream, TensorViewMut};
use ascend_sys::{aclBoolArray, aclIntArray, aclOpExecutor, aclTensor};
use std::ffi::c_void;
use std::ptr::NonNull;

/// `aclnnConvolutionBackward`: gradInput, gradWeight and gradBias of a 1-D, 2-D or 3-D
/// (transposed) convolution. Every product; FLOAT and FLOAT16, BF16 on Atlas A2/A3.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ConvolutionBackward;

const fn tensor(name: &'static str, label: &'static str, role: Role, optional: bool) -> Arg {
    Arg {
        name,
        label,
        kind: ArgKind::Tensor(role),
        optional,
    }
}

const fn attr(name: &'static str, label: &'static str, kind: Kind, optional: bool) -> Arg {
    Arg {
        name,
        label,
        kind: ArgKind::Attr(kind),
        optional,
    }
}

impl ConvolutionBackward {
    /// The C name of the operator (its phase 2).
    pub const NAME: &'static str = "aclnnConvolutionBackward";
    /// Its arguments, in the order of phase 1 (`groups` is carried as an `i64` and passed
    /// as the C `int` it is).
    pub const ARGS: &'static [Arg] = &[
        tensor("gradOutput", label("grad_out", "gradOutput", "grad_out (gradOutput)"), Role::Input, false),
        tensor("input", label("x", "input", "x (input)"), Role::Input, false),
        tensor("weight", "weight", Role::Input, false),
        attr("biasSizes", label("bias_sizes", "biasSizes", "bias_sizes (biasSizes)"), Kind::Ints, true),
        attr("stride", "stride", Kind::Ints, false),
        attr("padding", "padding", Kind::Ints, false),
        attr("dilation", "dilation", Kind::Ints, false),
        attr("transposed", "transposed", Kind::Bool, false),
        attr("outputPadding", label("output_padding", "outputPadding", "output_padding (outputPadding)"), Kind::Ints, false),
        attr("groups", "groups", Kind::I64, false),
        attr("outputMask", label("mask", "outputMask", "mask (outputMask)"), Kind::Bools, false),
        attr("cubeMathType", label("math", "cubeMathType", "math (cubeMathType)"), Kind::I8, false),
        tensor("gradInput", label("grad_input", "gradInput", "grad_input (gradInput)"), Role::Output, true),
        tensor("gradWeight", label("grad_weight", "gradWeight", "grad_weight (gradWeight)"), Role::Output, true),
        tensor("gradBias", label("grad_bias", "gradBias", "grad_bias (gradBias)"), Role::Output, true),
    ];

    /// Whether products of the family have the operator.
    pub fn available_on(_soc: SocFamily) -> bool {
        true
    }

    /// Whether a tensor argument may have `dtype` on the family.
    pub fn supports(soc: SocFamily, dtype: DType) -> bool {
        matches!(dtype, DType::F32 | DType::F16) || dtype == DType::BF16 && soc.has_bf16()
    }
}

// The compile-time check of the prototype against the header, as `operator!` makes it.
const _: () = {
    #[allow(dead_code)]
    fn prototypes_match_header() {
        let _: Phase1Fn = ascend_sys::aclnnConvolutionBackwardGetWorkspaceSize;
        let _: ascend_sys::OperatorLaunchFn = ascend_sys::aclnnConvolutionBackward;
    }
};

type Phase1Fn = unsafe extern "C" fn(
    *const aclTensor,
    *const aclTensor,
    *const aclTensor,
    *const aclIntArray,
    *const aclIntArray,
    *const aclIntArray,
    *const aclIntArray,
    bool,
    *const aclIntArray,
    i32,
    *const aclBoolArray,
    i8,
    *mut aclTensor,
    *mut aclTensor,
    *mut aclTensor,
    *mut u64,
    *mut *mut aclOpExecutor,
) -> i32;

/// The shape rule: the forward's geometry from input and weight, gradOutput of its
/// output's shape, each given output of its tensor's shape, cubeMathType 0 to 3.
fn rule(c: &Call<'_>) -> Result<()> {
    let (stride, padding, dilation, output_padding) =
        (ints(c, 4)?, ints(c, 5)?, ints(c, 6)?, ints(c, 8)?);
    let (Some(Attr::Bool(transposed)), Some(Attr::I64(groups))) = (c.attr(7), c.attr(9)) else {
        return Err(Error::InvalidArgument("transposed and groups are a bool and an i64".into()));
    };
    if i32::try_from(groups).is_err() {
        return Err(Error::InvalidArgument(format!("groups {groups} does not fit a C int")));
    }
    let spec = ConvSpec {
        stride: &stride,
        padding: &padding,
        dilation: &dilation,
        transposed,
        output_padding: &output_padding,
        groups,
    };
    let (x, w) = (c.dims(1), c.dims(2));
    let geo = crate::reference::convolution::geometry(x, w, &spec)?;
    let expect = |i: usize, want: &[usize]| -> Result<()> {
        if c.is_absent(i) || c.dims(i) == want {
            Ok(())
        } else {
            Err(Error::ShapeMismatch {
                argument: c.label(i),
                expected: want.to_vec(),
                actual: c.dims(i).to_vec(),
            })
        }
    };
    expect(0, &geo.out)?;
    expect(12, x)?;
    expect(13, w)?;
    expect(14, &[geo.out[1]])?;
    let Some(Attr::Bools(mask)) = c.attr(10) else {
        return Err(Error::InvalidArgument("outputMask is not a bool list".into()));
    };
    let mask = mask.get().unwrap_or(&[]);
    if mask.len() != 3 {
        return Err(Error::InvalidArgument(format!("{} needs 3 values", c.label(10))));
    }
    for (k, &asked) in mask.iter().enumerate() {
        if asked && c.is_absent(12 + k) {
            return Err(Error::InvalidArgument(format!(
                "{} asks for {}, which is absent",
                c.label(10),
                c.label(12 + k)
            )));
        }
    }
    if let Some(Attr::I8(m)) = c.attr(11)
        && !(0..=3).contains(&m)
    {
        return Err(Error::InvalidArgument(format!("{} {m} is not 0 to 3", c.label(11))));
    }
    cube_math(c, 11, 0, 1)
}

impl Operator for ConvolutionBackward {
    const NAME: &'static str = ConvolutionBackward::NAME;
    const ARGS: &'static [Arg] = ConvolutionBackward::ARGS;

    fn entry_points() -> &'static EntryPoints {
        static ENTRY: EntryPoints = EntryPoints::new(
            "aclnnConvolutionBackwardGetWorkspaceSize",
            "aclnnConvolutionBackward",
        );
        &ENTRY
    }

    fn available_on(soc: SocFamily) -> bool {
        ConvolutionBackward::available_on(soc)
    }

    fn supports(soc: SocFamily, dtype: DType) -> bool {
        ConvolutionBackward::supports(soc, dtype)
    }

    fn check(call: &Call<'_>) -> Result<()> {
        rule(call)
    }

    unsafe fn phase1(
        phase1: NonNull<c_void>,
        args: &[CArg],
        workspace_size: *mut u64,
        executor: *mut *mut aclOpExecutor,
    ) -> i32 {
        let &[go, x, w, bs, st, pd, dl, tr, op, gr, mk, cm, gi, gw, gb] = args else {
            return ascend_sys::ACLNN_ERR_PARAM_INVALID;
        };
        // The rule keeps groups within a C int.
        let groups = <i64 as CValue>::from_arg(gr) as i32;
        // SAFETY: `phase1` is aclnnConvolutionBackwardGetWorkspaceSize, whose prototype is
        // `Phase1Fn` (checked against the header above); the arguments are live handles and
        // values of the declared kinds (the caller's contract).
        unsafe {
            let f = std::mem::transmute::<*mut c_void, Phase1Fn>(phase1.as_ptr());
            f(
                CValue::from_arg(go),
                CValue::from_arg(x),
                CValue::from_arg(w),
                CValue::from_arg(bs),
                CValue::from_arg(st),
                CValue::from_arg(pd),
                CValue::from_arg(dl),
                CValue::from_arg(tr),
                CValue::from_arg(op),
                groups,
                CValue::from_arg(mk),
                CValue::from_arg(cm),
                CValue::from_arg(gi),
                CValue::from_arg(gw),
                CValue::from_arg(gb),
                workspace_size,
                executor,
            )
        }
    }
}

/// The attribute values of one call, in phase-1 order (biasSizes .. cubeMathType).
fn attrs<'a>(bias_sizes: Option<&[i64]>, spec: &ConvSpec<'_>, mask: [bool; 3], math: CubeMath) -> [Value<'a>; 9] {
    let ints = |v: &[i64]| Value::attr(Attr::Ints(IntList::from(v)));
    [
        Value::opt_attr(bias_sizes.map(|b| Attr::Ints(IntList::from(b)))),
        ints(spec.stride),
        ints(spec.padding),
        ints(spec.dilation),
        Value::attr(Attr::Bool(spec.transposed)),
        ints(spec.output_padding),
        Value::attr(Attr::I64(spec.groups)),
        Value::attr(Attr::Bools(BoolList::from(&mask))),
        Value::attr(Attr::I8(math.as_i8())),
    ]
}

fn opt_out<'a, T: Operand>(t: Option<TensorViewMut<'a, T>>) -> Value<'a> {
    match t {
        Some(v) => Value::output(v),
        None => Value::opt_input::<T>(None),
    }
}

/// The gradients of a convolution with respect to its input, weight and bias, queued on
/// `stream` (`aclnnConvolutionBackward`), as torch's `convolution_backward`.
///
/// * `grad_out` (gradOutput): the gradient of the forward's output; `x` (input) and
///   `weight`: the forward's operands; `spec`: the forward's attributes (see
///   [`convolution`](crate::convolution)); `bias_sizes`: `Some(&[Cout])` (needed by the
///   library when the input is empty and the bias gradient is asked for).
/// * `mask`: which of `grad_input` (x's shape), `grad_weight` (weight's shape) and
///   `grad_bias` (Cout) to compute; each asked one must be given, the others may be
///   `None` (a given output the mask does not ask for is left as it is).
/// * `math`: the `cubeMathType`, 0 to 3.
///
/// With an empty input or weight on Atlas A2/A3, the asked weight and bias gradients are
/// zeros.
///
/// # Errors
/// [`Error::DeviceMismatch`],
/// [`Error::UnsupportedDtype`],
/// [`Error::InvalidArgument`] (attributes, channels,
/// groups, the mask, `math`), [`Error::ShapeMismatch`];
/// [`Error::Aclnn`] from the library.
#[allow(clippy::too_many_arguments)]
pub fn convolution_backward<G: Operand, X: Operand, W: Operand, I: Operand, V: Operand, B: Operand>(
    grad_out: impl AsTensorView<Elem = G>,
    x: impl AsTensorView<Elem = X>,
    weight: impl AsTensorView<Elem = W>,
    bias_sizes: Option<&[i64]>,
    spec: &ConvSpec<'_>,
    mask: [bool; 3],
    math: CubeMath,
    grad_input: Option<TensorViewMut<'_, I>>,
    grad_weight: Option<TensorViewMut<'_, V>>,
    grad_bias: Option<TensorViewMut<'_, B>>,
    stream: &Stream,
) -> Result<()> {
    let [a0, a1, a2, a3, a4, a5, a6, a7, a8] = attrs(bias_sizes, spec, mask, math);
    crate::protocol::call::<ConvolutionBackward, 15>(
        stream,
        [
            Value::input(grad_out.as_tensor_view()),
            Value::input(x.as_tensor_view()),
            Value::input(weight.as_tensor_view()),
            a0,
            a1,
            a2,
            a3,
            a4,
            a5,
            a6,
            a7,
            a8,
            opt_out(grad_input),
            opt_out(grad_weight),
            opt_out(grad_bias),
        ],
    )
}

/// The gradients [`convolution_backward`] computes, as new tensors of `x`'s, `weight`'s
/// and `grad_out`'s element types: `None` where `mask` does not ask.
///
/// Written by hand (the declaration's allocating form makes at most two outputs): each
/// asked output is allocated with [`DeviceTensor::empty`] at the shape the forward's
/// geometry gives, then the non-allocating call fills it.
///
/// # Errors
/// As [`convolution_backward`]; [`Error::InvalidArgument`] when the geometry is invalid.
#[allow(clippy::type_complexity)]
pub fn convolution_backward_new<G: crate::Element, X: crate::Element, W: crate::Element>(
    grad_out: &DeviceTensor<G>,
    x: &DeviceTensor<X>,
    weight: &DeviceTensor<W>,
    spec: &ConvSpec<'_>,
    mask: [bool; 3],
    math: CubeMath,
    stream: &Stream,
) -> Result<(Option<DeviceTensor<X>>, Option<DeviceTensor<W>>, Option<DeviceTensor<G>>)> {
    let geo = crate::reference::convolution::geometry(x.shape(), weight.shape(), spec)?;
    let cout = geo.out[1];
    let mut gi = if mask[0] { Some(DeviceTensor::<X>::empty(stream, x.shape())?) } else { None };
    let mut gw = if mask[1] { Some(DeviceTensor::<W>::empty(stream, weight.shape())?) } else { None };
    let mut gb = if mask[2] { Some(DeviceTensor::<G>::empty(stream, [cout])?) } else { None };
    convolution_backward(
        grad_out,
        x,
        weight,
        Some(&[cout as i64]),
        spec,
        mask,
        math,
        gi.as_mut().map(DeviceTensor::view_mut),
        gw.as_mut().map(DeviceTensor::view_mut),
        gb.as_mut().map(DeviceTensor::view_mut),
        stream,
    )?;
    Ok((gi, gw, gb))
}

/// A reusable [`convolution_backward`] for fixed layouts, element types, attributes and
/// mask (a [`Plan`]); built on `Plan`, `Send + Sync`, launching needs
/// `&mut self`.
pub struct ConvolutionBackwardPlan<G, X, W, I, V, B>(Plan<ConvolutionBackward, (G, X, W, I, V, B)>);

impl<G: Operand, X: Operand, W: Operand, I: Operand, V: Operand, B: Operand>
    ConvolutionBackwardPlan<G, X, W, I, V, B>
{
    /// Validates like [`convolution_backward`] and runs phase 1 once for these layouts
    /// and attributes; nothing is computed.
    ///
    /// # Errors
    /// As [`convolution_backward`]; [`Error::Aclnn`] from phase 1 or
    /// `aclSetAclOpExecutorRepeatable`.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        grad_out: impl AsTensorView<Elem = G>,
        x: impl AsTensorView<Elem = X>,
        weight: impl AsTensorView<Elem = W>,
        bias_sizes: Option<&[i64]>,
        spec: &ConvSpec<'_>,
        mask: [bool; 3],
        math: CubeMath,
        grad_input: Option<TensorViewMut<'_, I>>,
        grad_weight: Option<TensorViewMut<'_, V>>,
        grad_bias: Option<TensorViewMut<'_, B>>,
        stream: &Stream,
    ) -> Result<Self> {
        let [a0, a1, a2, a3, a4, a5, a6, a7, a8] = attrs(bias_sizes, spec, mask, math);
        Plan::build(
            stream,
            [
                Value::input(grad_out.as_tensor_view()),
                Value::input(x.as_tensor_view()),
                Value::input(weight.as_tensor_view()),
                a0,
                a1,
                a2,
                a3,
                a4,
                a5,
                a6,
                a7,
                a8,
                opt_out(grad_input),
                opt_out(grad_weight),
                opt_out(grad_bias),
            ],
        )
        .map(Self)
    }

    /// Queues the planned call on `stream` for tensors with the planned layouts (the
    /// outputs given or absent as at `new`).
    ///
    /// # Errors
    /// [`Error::DeviceMismatch`],
    /// [`Error::PlanMismatch`];
    /// [`Error::Aclnn`] from the library.
    #[allow(clippy::too_many_arguments)]
    pub fn launch(
        &mut self,
        grad_out: impl AsTensorView<Elem = G>,
        x: impl AsTensorView<Elem = X>,
        weight: impl AsTensorView<Elem = W>,
        grad_input: Option<TensorViewMut<'_, I>>,
        grad_weight: Option<TensorViewMut<'_, V>>,
        grad_bias: Option<TensorViewMut<'_, B>>,
        stream: &Stream,
    ) -> Result<()> {
        let p = Value::PLANNED;
        self.0.run(
            stream,
            [
                Value::input(grad_out.as_tensor_view()),
                Value::input(x.as_tensor_view()),
                Value::input(weight.as_tensor_view()),
                Value::PLANNED,
                Value::PLANNED,
                Value::PLANNED,
                Value::PLANNED,
                Value::PLANNED,
                Value::PLANNED,
                Value::PLANNED,
                Value::PLANNED,
                p,
                opt_out(grad_input),
                opt_out(grad_weight),
                opt_out(grad_bias),
            ],
        )
    }
}

impl<G, X, W, I, V, B> std::fmt::Debug for ConvolutionBackwardPlan<G, X, W, I, V, B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}
