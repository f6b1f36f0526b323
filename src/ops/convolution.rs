//! `aclnnConvolution`: 1-D, 2-D and 3-D convolution and transposed convolution.

use crate::CubeMath;
use crate::device::SocFamily;
use crate::element::DType;
use crate::error::{Error, Result};
use crate::protocol::{Arg, Attr, Call, IntList};
use crate::reference::ConvSpec;

/// `input`, `weight` and `output`: FLOAT and FLOAT16, plus BF16 where the cube computes
/// in f32 (Atlas A2/A3); `bias`: FLOAT, FLOAT16 or BF16.
fn arg_dtypes(soc: SocFamily, arg: &Arg, dtype: DType) -> bool {
    match dtype {
        DType::F32 | DType::F16 => true,
        DType::BF16 => arg.name == "bias" || soc.has_bf16(),
        _ => false,
    }
}

/// The integer list of attribute `i`.
pub(crate) fn ints<'c>(c: &Call<'c>, i: usize) -> Result<Vec<i64>> {
    match c.attr(i) {
        Some(Attr::Ints(l)) => Ok(l.get().unwrap_or(&[]).to_vec()),
        _ => Err(Error::InvalidArgument(format!("{} is not an int list", c.label(i)))),
    }
}

/// `cubeMathType` as the vendor's `CheckCubeMathType` takes it for the compute dtype of
/// inputs `a` and `b` (f32 unless both have one dtype): f32 and bf16 need the f32 cube
/// of Atlas A2/A3, except that 1 and 2 accept f32 everywhere.
pub(crate) fn cube_math(c: &Call<'_>, math: usize, a: usize, b: usize) -> Result<()> {
    let Some(Attr::I8(m)) = c.attr(math) else {
        return Err(Error::InvalidArgument(format!("{} is not an i8", c.label(math))));
    };
    let compute = match (c.dtype(a), c.dtype(b)) {
        (Some(x), Some(y)) if x == y => x,
        _ => DType::F32,
    };
    let fp32_cube = c.soc().has_bf16() || c.soc() == SocFamily::Other;
    let refused = match m {
        0 | 3 | 4 => matches!(compute, DType::F32 | DType::BF16) && !fp32_cube,
        1 | 2 => compute == DType::BF16 && !fp32_cube,
        _ => {
            return Err(Error::InvalidArgument(format!(
                "{} {m} is not a cube math type (0 to 4)",
                c.label(math)
            )));
        }
    };
    if refused {
        return Err(Error::InvalidArgument(format!(
            "{} {m} is refused for {compute:?} on this product, whose cube has no f32 (use UseFp16 or AllowFp32DownPrecision)",
            c.label(math)
        )));
    }
    Ok(())
}

/// The shape rule, in the vendor's order as far as Rust sees it: bias, attribute
/// lengths and values, channels and groups, then the output's shape (inferred for the
/// allocating form), then cubeMathType and the 310B limit.
fn rule(c: &Call<'_>) -> Result<()> {
    let (stride, padding, dilation, output_padding) = (ints(c, 3)?, ints(c, 4)?, ints(c, 5)?, ints(c, 7)?);
    let (Some(Attr::Bool(transposed)), Some(Attr::I64(groups))) = (c.attr(6), c.attr(8)) else {
        return Err(Error::InvalidArgument("transposed and groups are a bool and an i64".into()));
    };
    let spec = ConvSpec {
        stride: &stride,
        padding: &padding,
        dilation: &dilation,
        transposed,
        output_padding: &output_padding,
        groups,
    };
    let (x, w) = (c.dims(0), c.dims(1));
    let geo = crate::reference::convolution::geometry(x, w, &spec)?;
    if !c.is_absent(2) {
        let want = geo.out[1];
        if c.dims(2) != [want] {
            return Err(Error::ShapeMismatch {
                argument: c.label(2),
                expected: vec![want],
                actual: c.dims(2).to_vec(),
            });
        }
    }
    if c.is_pending(9) {
        c.infer(9, &geo.out)?;
    } else if c.dims(9) != geo.out.as_slice() {
        return Err(Error::ShapeMismatch {
            argument: c.label(9),
            expected: geo.out.clone(),
            actual: c.dims(9).to_vec(),
        });
    }
    cube_math(c, 10, 0, 1)?;
    if c.soc() == SocFamily::Atlas310B && (transposed || x.len() != 4) {
        return Err(Error::InvalidArgument(
            "the Atlas 200I/500 A2 (310B) only has the 2-D non-transposed convolution".into(),
        ));
    }
    Ok(())
}

crate::operator! {
    @verified
    /// `aclnnConvolution`: 1-D, 2-D and 3-D convolution, or transposed convolution, with
    /// channel groups and an optional bias. Every product (the 200I/500 A2, 310B, only the
    /// 2-D non-transposed one); FLOAT and FLOAT16, BF16 on Atlas A2/A3.
    pub struct Convolution: aclnnConvolution, aclnnConvolutionGetWorkspaceSize;
    products: |_soc: SocFamily| true;
    arg_dtypes: arg_dtypes;
    rule: rule;

    /// `out = conv(x, weight) + bias`, queued on `stream` (`aclnnConvolution`), as torch's
    /// `convolution`.
    ///
    /// * `x` (input): (N, C, L), (N, C, H, W) or (N, C, D, H, W), any
    ///   [`AsTensorView`](crate::AsTensorView) of `f32`, `f16` or `bf16` (Atlas A2/A3).
    /// * `weight`: (Cout, C/groups, kernel...), transposed (C, Cout/groups, kernel...),
    ///   the same rank; its element type need not be `x`'s.
    /// * `bias`: `None`, or Cout values.
    /// * `stride`, `dilation`: one positive value per spatial dim; `padding`: one value per
    ///   spatial dim, or a front and a back value per dim for 1-D and 2-D (`[top, bottom,
    ///   left, right]`).
    /// * `transposed`, `output_padding` (one value per spatial dim, each below the stride or
    ///   the dilation; read only when transposed), `groups` (dividing both channel counts).
    /// * `out` (output): (N, Cout, out...) with out = ⌊(in + pads − dilation·(k−1) − 1) /
    ///   stride⌋ + 1, transposed (in − 1)·stride − pads + dilation·(k−1) + output_padding
    ///   + 1.
    /// * `math`: the `cubeMathType` ([`CubeMath::default_for_device`]).
    ///
    /// The crate describes 3-, 4- and 5-D tensors as NCL, NCHW and NCDHW, as torch_npu
    /// does: the operator refuses ND. An empty input computes nothing.
    ///
    /// # Errors
    /// [`Error::DeviceMismatch`],
    /// [`Error::UnsupportedDtype`],
    /// [`Error::InvalidArgument`] (ranks, attributes,
    /// channels, groups, `math`), [`Error::ShapeMismatch`]
    /// (`bias`, `out`); [`Error::Aclnn`] from the library.
    ///
    /// ```
    /// # fn main() -> ascendcl::Result<()> {
    /// use ascendcl::{CubeMath, DeviceTensor, Runtime, TensorView, convolution_new};
    /// use ndarray::Array;
    /// let device = Runtime::auto()?.device(0)?;
    /// let stream = device.stream()?;
    /// let x = Array::from_shape_vec((1, 1, 2, 3), vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap();
    /// let w = Array::from_shape_vec((1, 1, 1, 2), vec![1.0f32, -1.0]).unwrap();
    /// let x = DeviceTensor::from_array(&stream, &x)?;
    /// let w = DeviceTensor::from_array(&stream, &w)?;
    /// let y: DeviceTensor<f32> = convolution_new(
    ///     &x, &w, None::<TensorView<'_, f32>>, &[1, 1], &[0, 0], &[1, 1], false, &[0, 0], 1,
    ///     CubeMath::default_for_device(&device), &stream,
    /// )?;
    /// assert_eq!(y.to_array(&stream)?, ndarray::array![[[[-1.0f32, -1.0], [-1.0, -1.0]]]].into_dyn());
    /// # Ok(()) }
    /// ```
    pub fn convolution<T, W, B, O>(
        x: input<T> = "input",
        weight: input<W> = "weight",
        bias: opt_input<B> = "bias",
        stride: attr<IntList> = "stride",
        padding: attr<IntList> = "padding",
        dilation: attr<IntList> = "dilation",
        transposed: attr<bool> = "transposed",
        output_padding: attr<IntList> = "outputPadding",
        groups: attr<i64> = "groups",
        out: output<O> = "output",
        math: attr<CubeMath> = "cubeMathType",
    );

    /// A reusable [`convolution`] for fixed layouts, element types and attributes (a
    /// [`Plan`](crate::Plan)).
    pub type ConvolutionPlan;
    allocating: convolution_new;
}
