//! The phase-1 checks of `aclnnConvolutionBackward` past the NULL, dtype and format
//! checks: the attributes' values, the shapes, and the empty-tensor path of Atlas A2/A3,
//! in the vendor's order (see `convolution_backward`).

use super::convolution_backward::Attrs;
use crate::nnopbase::{Phase1, TensorDesc, invalid};
use crate::slab::Dims64;
use crate::tables::format_name;
use ascend_sys::*;

const OUT_NAMES: [&str; 3] = ["gradInput", "gradWeight", "gradBias"];

pub(super) struct Values {
    pub stride: Dims64,
    pub padding: Dims64,
    pub dilation: Dims64,
    pub output_padding: Dims64,
}

pub(super) fn check_format(name: &str, t: &TensorDesc) -> Result<(), i32> {
    let ok = match t.dims.len() {
        3 => matches!(t.format, ACL_FORMAT_ND | ACL_FORMAT_NCL),
        4 => t.format == ACL_FORMAT_NCHW,
        5 => t.format == ACL_FORMAT_NCDHW,
        r => {
            return Err(invalid(format!("{name} has {r} dims, not 3, 4 or 5")));
        }
    };
    if ok {
        Ok(())
    } else {
        Err(invalid(format!(
            "{name} format {} does not fit its {} dims (ND or NCL, NCHW, NCDHW)",
            format_name(t.format),
            t.dims.len()
        )))
    }
}

/// The vendor's `CheckConvParams`.
pub(super) fn check_params(v: &Values, a: Attrs, rank: usize) -> Result<(), i32> {
    if v.stride.iter().any(|&s| s < 1) {
        return Err(invalid(format!(
            "stride {:?} must be at least 1",
            &*v.stride
        )));
    }
    if v.padding.iter().any(|&s| s < 0) {
        return Err(invalid(format!(
            "padding {:?} must not be negative",
            &*v.padding
        )));
    }
    if v.dilation.iter().any(|&s| s < 1) {
        return Err(invalid(format!(
            "dilation {:?} must be at least 1",
            &*v.dilation
        )));
    }
    let op = &v.output_padding;
    if a.transposed {
        if op.iter().any(|&s| s < 0) {
            return Err(invalid(format!(
                "outputPadding {:?} must not be negative",
                &**op
            )));
        }
        if rank == 5 && op.iter().zip(v.stride.iter()).any(|(o, s)| o >= s) {
            return Err(invalid(format!(
                "outputPadding {:?} must be below the stride",
                &**op
            )));
        }
    } else if op.iter().any(|&s| s != 0) {
        return Err(invalid(format!(
            "when transposed=false, the value of outputPadding must be 0, got {:?}",
            &**op
        )));
    }
    if a.groups < 1 {
        return Err(invalid(format!("groups {} must be at least 1", a.groups)));
    }
    Ok(())
}

/// The forward's spatial output size for one dim (`in + 2·pad − dil·(k−1) − 1) / stride + 1`).
fn forward_size(i: i64, k: i64, s: i64, p_total: i64, d: i64) -> i64 {
    (i + p_total - d * (k - 1) - 1).div_euclid(s) + 1
}

pub(super) fn check_shapes(
    go: &TensorDesc,
    x: &TensorDesc,
    w: &TensorDesc,
    od: &[Option<TensorDesc>; 3],
    v: &Values,
    a: Attrs,
) -> Result<(), i32> {
    let r = x.dims.len();
    if go.dims.len() != r || w.dims.len() != r {
        return Err(invalid(format!(
            "gradOutput, input and weight must have the same rank, got {}, {r}, {}",
            go.dims.len(),
            w.dims.len()
        )));
    }
    if go.is_empty() || w.is_empty() {
        return Err(invalid(
            "[gradOutput,weight] do not support empty tensors".into(),
        ));
    }
    for (k, want) in [(0, x), (1, w)] {
        if let Some(t) = &od[k]
            && t.dims != want.dims
        {
            return Err(invalid(format!(
                "{} shape {:?} is not {:?}",
                OUT_NAMES[k], t.dims, want.dims
            )));
        }
    }
    if let Some(b) = &od[2]
        && (b.dims.len() != 1 || b.dims[0] != go.dims[1])
    {
        return Err(invalid(format!(
            "gradBias shape {:?} is not [{}]",
            b.dims, go.dims[1]
        )));
    }
    let s = r - 2;
    for (name, l) in [("stride", &v.stride), ("dilation", &v.dilation)] {
        if l.len() != s {
            return Err(invalid(format!("{name} has {} values, not {s}", l.len())));
        }
    }
    for (name, l) in [
        ("padding", &v.padding),
        ("outputPadding", &v.output_padding),
    ] {
        if l.len() != s && !(r == 4 && l.len() == 4) {
            return Err(invalid(format!("{name} has {} values, not {s}", l.len())));
        }
    }
    // The forward's input and output: transposed swaps them.
    let (fin, fout) = if a.transposed { (go, x) } else { (x, go) };
    if fout.dims[1] != w.dims[0] {
        return Err(invalid(format!(
            "the shape dim of [gradOutShape[1], weight[0]] must be the same: {:?}, {:?}",
            fout.dims, w.dims
        )));
    }
    let (cin, wc) = (fin.dims[1], w.dims[1]);
    if wc == 0 || cin % wc != 0 || cin / wc != i64::from(a.groups) {
        return Err(invalid(format!(
            "the input channels {cin} must be weight[1] {wc} times groups {}",
            a.groups
        )));
    }
    if cin == i64::from(a.groups) {
        let oc = fout.dims[1];
        if oc < cin || oc % cin != 0 {
            return Err(invalid(format!(
                "depthwise: the output channels {oc} must be a multiple of groups {cin}"
            )));
        }
    }
    let total = super::conv_geom::total_pads(&v.padding, s);
    for (d, &pad) in total.iter().enumerate() {
        let (i, k) = (fin.dims[2 + d], w.dims[2 + d]);
        if i + pad - (k - 1) * v.dilation[d] - 1 < 0 {
            return Err(invalid(format!(
                "(in_dim + pad_dim * 2) should be >= ((weight_shape - 1) * dilation + 1) at dim {}",
                d + 2
            )));
        }
        let want = forward_size(i, k, v.stride[d], pad, v.dilation[d]);
        let mut want = want;
        if a.transposed {
            // The transposed forward's output size adds the output padding.
            let op = if v.output_padding.len() == s {
                v.output_padding[d]
            } else {
                v.output_padding[2 * d]
            };
            want = (fout.dims[2 + d] - 1) * v.stride[d] - pad + v.dilation[d] * (k - 1) + op + 1;
            if fin.dims[2 + d] != want {
                return Err(invalid(format!(
                    "gradOutput spatial dim {} is {}, the forward gives {want}",
                    d + 2,
                    fin.dims[2 + d]
                )));
            }
        } else if fout.dims[2 + d] != want {
            return Err(invalid(format!(
                "gradOutput spatial dim {} is {}, the forward gives {want}",
                d + 2,
                fout.dims[2 + d]
            )));
        }
    }
    Ok(())
}

/// The vendor's `CheckEmptyTensor` on Atlas A2/A3.
#[allow(clippy::too_many_arguments)]
pub(super) fn check_empty(
    p: &Phase1<'_>,
    go: &TensorDesc,
    x: &TensorDesc,
    w: &TensorDesc,
    v: &Values,
    a: Attrs,
    mask: &[bool],
) -> Result<(), i32> {
    let g = i64::from(a.groups);
    if mask[2] {
        if a.bias_sizes.is_null() {
            return Err(invalid(
                "biasSizes is nullptr with an empty input and gradBias asked".into(),
            ));
        }
        let bs = p.int_array(a.bias_sizes, "biasSizes")?;
        if bs.len() != 1 {
            return Err(invalid(format!("biasSizes has {} values, not 1", bs.len())));
        }
        let want = if a.transposed {
            w.dims.get(1).copied().unwrap_or(0) * g
        } else {
            go.dims.get(1).copied().unwrap_or(0)
        };
        if bs[0] != want {
            return Err(invalid(format!("biasSizes[0] {} is not {want}", bs[0])));
        }
    }
    if mask[0] && (x.dims.len() <= 2 || (x.dims[0] != 0 && x.dims[1] != 0)) {
        return Err(invalid(format!(
            "inputShape[0] or inputShape[1] should be 0, got {:?}",
            x.dims
        )));
    }
    let r = x.dims.len();
    let s = r.saturating_sub(2);
    let fits = |l: &Dims64| l.len() == s || (r == 4 && l.len() == 4);
    if v.stride.len() != s || v.dilation.len() != s || !fits(&v.padding) || !fits(&v.output_padding)
    {
        return Err(invalid(format!(
            "stride, dilation, padding, outputPadding need {s} values"
        )));
    }
    let (fin, fout) = if a.transposed { (go, x) } else { (x, go) };
    if g == 0 || w.dims[0] % g != 0 {
        return Err(invalid(format!(
            "weight[0] {} is not divisible by groups {g}",
            w.dims[0]
        )));
    }
    if !(a.transposed && fout.dims[0] == 0) {
        let (cin, wc) = (fin.dims[1], w.dims[1]);
        if (cin != 0 || wc != 0) && (wc == 0 || cin % wc != 0 || cin / wc != g) {
            return Err(invalid(format!(
                "the dim of input[1] {cin} must equal weight[1] {wc} times groups {g}"
            )));
        }
    }
    if a.transposed {
        if w.dims[0] <= 0 || w.dims[0] != x.dims[1] {
            return Err(invalid(format!(
                "transposed: weight[0] {} must be positive and input's channels {}",
                w.dims[0], x.dims[1]
            )));
        }
    } else {
        for d in 0..s {
            if x.dims[2 + d] + 2 * v.padding[d] - ((w.dims[2 + d] - 1) * v.dilation[d] + 1) < 0 {
                return Err(invalid(format!(
                    "(in_dim + pad_dim * 2) should be >= ((weight_shape - 1) * dilation + 1) at dim {}",
                    d + 2
                )));
            }
        }
    }
    Ok(())
}
