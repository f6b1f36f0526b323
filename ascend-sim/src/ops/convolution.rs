//! `aclnnConvolution` (ops-nn `conv/convolution_forward`): 1-D, 2-D and 3-D convolution
//! and transposed convolution with groups and an optional bias.
//!
//! Phase-1 checks in the vendor's order (`CheckConvParams`), every failure 161002 unless
//! said otherwise:
//! 1. input, weight, stride, padding, dilation, output NULL, then `workspaceSize`,
//!    `executor`, then (transposed only) outputPadding NULL: 161001;
//! 2. dtypes: bias (when given) in {FLOAT, FLOAT16, BF16}; input, weight and output each in
//!    {FLOAT, FLOAT16} plus BF16 where the cube computes in f32 (Atlas A2/A3); they need
//!    not match;
//! 3. ranks: input, weight, output each 3, 4 or 5 dims, weight's and output's equal to
//!    input's; bias 1-D of weight[0] (transposed: weight[1]·groups) elements; stride and
//!    dilation of rank−2 values; padding of rank−2 values, or 2·(rank−2) (front and back
//!    per dim) for a 1-D or 2-D convolution and a 2-D transposed one; transposed:
//!    outputPadding of rank−2 values;
//! 4. formats: input's and output's equal; bias NCL, NCHW, NCDHW or ND; 1-D: input,
//!    weight and output NCL; 2-D: input and output NCHW, weight NCHW (or FRACTAL_Z when
//!    not transposed); 3-D: NCDHW or NDHWC. An ND 4-D tensor is refused, so callers
//!    describe 4-D tensors as NCHW (torch_npu picks the format from the rank);
//! 5. values: weight's spatial dims > 0; stride > 0; dilation > 0; a non-empty input
//!    padded must hold the dilated kernel; groups > 0; transposed: weight[0] == input C and
//!    each outputPadding ≥ 0 and below stride or dilation; otherwise weight[1]·groups ==
//!    input C; weight[0] divisible by groups; transposed with input C == 0 refused; the
//!    transposed pad rule `(k−1)·d − pad ≤ 255` (as the vendor indexes it);
//! 6. output's shape equal to the inferred one (with an empty input or weight, the output
//!    must be empty);
//! 7. cubeMathType in 0..4 and supported for the compute dtype (f32 and bf16 need the
//!    f32 cube of Atlas A2/A3 except with 1 or 2, bf16 always does);
//! 8. the Atlas 200I/500 A2 (310B) only has the 2-D non-transposed convolution.
//!
//! An empty input, weight or output: success, workspace 0, nothing computed.
//!
//! The kernel: per sample and group, im2col and the cube's GEMM (transposed: the GEMM
//! then col2im), operands rounded to the compute dtype (f32 inputs: HF32 with
//! cubeMathType 1 or 3 on Atlas A2/A3, f16 with 2, and with 1 on older products), f32
//! accumulation, the bias added, the output rounded to its dtype.

use super::conv_geom::{Geom, Spatial, front_pads, mm, spatial_of, total_pads, transpose};
use crate::catalog::{Entry, Slot};
use crate::nnopbase::{
    Attr, Decision, KernelCall, OpDef, OutParams, Phase1, invalid, positions, release_on_fault,
    require_non_null,
};
use crate::slab::Dims64;
use crate::state::status_of;
use crate::stream::Scratch;
use crate::tables::{Family, format_name};
use ascend_sys::*;
use std::ffi::c_void;

positions!(INPUT, WEIGHT, BIAS, OUTPUT);
// Attributes: stride and dilation, front padding, then groups / transposed / bias / rounding.
positions!(STRIDE_DIL, PAD, FLAGS);

pub(crate) static OP: OpDef = OpDef {
    name: "Convolution",
    launch_api: "aclnnConvolution",
    args: &["input", "weight", "bias", "output"],
    inputs: &[INPUT, WEIGHT, BIAS],
    outputs: &[OUTPUT],
    available: crate::nnopbase::every_product,
    kernel: run,
};

static PHASE1: Slot = Slot::new("aclnnConvolutionGetWorkspaceSize");
static PHASE2: Slot = Slot::new("aclnnConvolution");

/// The entry points, for the catalog.
pub(crate) static ENTRIES: &[Entry] = &[
    Entry {
        name: "aclnnConvolutionGetWorkspaceSize",
        address: || phase1 as *const c_void,
    },
    Entry {
        name: "aclnnConvolution",
        address: || phase2 as *const c_void,
    },
];

/// Simulated `aclnnConvolutionGetWorkspaceSize`.
///
/// # Safety
/// The C function's contract: each pointer NULL or valid for its access.
#[cfg_attr(
    feature = "c-exports",
    unsafe(export_name = "aclnnConvolutionGetWorkspaceSize")
)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn phase1(
    input: *const aclTensor,
    weight: *const aclTensor,
    bias: *const aclTensor,
    stride: *const aclIntArray,
    padding: *const aclIntArray,
    dilation: *const aclIntArray,
    transposed: bool,
    output_padding: *const aclIntArray,
    groups: i64,
    output: *mut aclTensor,
    cube_math_type: i8,
    workspace_size: *mut u64,
    executor: *mut *mut aclOpExecutor,
) -> aclnnStatus {
    let code = crate::introspect::fault_code_at(PHASE1.index());
    crate::state::entry(&PHASE1, code, move || {
        // SAFETY: by the caller's C contract each out-parameter is NULL or writable and
        // unaliased until this call returns.
        let outs = unsafe { OutParams::new(workspace_size, executor) };
        let a = ConvArgs {
            stride,
            padding,
            dilation,
            transposed,
            output_padding,
            groups,
            cube_math_type,
        };
        get_workspace_size(input, weight, bias, output, a, outs)
    })
}

/// Simulated `aclnnConvolution`.
///
/// # Safety
/// The C function's contract: each pointer NULL or valid for its access.
#[cfg_attr(feature = "c-exports", unsafe(export_name = "aclnnConvolution"))]
pub unsafe extern "C" fn phase2(
    workspace: *mut c_void,
    workspace_size: u64,
    executor: *mut aclOpExecutor,
    stream: aclrtStream,
) -> aclnnStatus {
    crate::state::entry_with_fault_effect(
        &PHASE2,
        crate::introspect::fault_code_at(PHASE2.index()),
        move || release_on_fault(executor),
        move || crate::nnopbase::phase2(&OP, workspace, workspace_size, executor, stream),
    )
}

/// The non-tensor arguments of phase 1.
#[derive(Clone, Copy)]
struct ConvArgs {
    stride: *const aclIntArray,
    padding: *const aclIntArray,
    dilation: *const aclIntArray,
    transposed: bool,
    output_padding: *const aclIntArray,
    groups: i64,
    cube_math_type: i8,
}

/// Input, weight and output dtypes on a product (`GetDtypeSupportListBySocVersion`).
pub(super) fn cube_dtypes(family: Family) -> &'static [aclDataType] {
    const ALL: &[aclDataType] = &[ACL_FLOAT, ACL_FLOAT16, ACL_BF16];
    if family.has_bf16() { ALL } else { &ALL[..2] }
}

/// The compute dtype of two operands (`GetUpperFloatDataType`).
pub(super) fn upper(a: aclDataType, b: aclDataType) -> aclDataType {
    if a == b { a } else { ACL_FLOAT }
}

/// `CheckCubeMathType`, then the operand rounding of the kernel: 0 none, 1 HF32, 2 f16.
pub(super) fn cube_math(family: Family, compute: aclDataType, cmt: i8) -> Result<i64, i32> {
    let fp32_cube = family.has_bf16();
    let refused = match cmt {
        0 | 3 | 4 => matches!(compute, ACL_FLOAT | ACL_BF16) && !fp32_cube,
        1 | 2 => compute == ACL_BF16 && !fp32_cube,
        _ => {
            return Err(invalid(format!(
                "The value of cubeMathType only support {{0: KEEP_DTYPE, 1: ALLOW_FP32_DOWN_PRECISION, 2: USE_FP16, 3: USE_HF32, 4: USE_FP32_ADD}}, but got {cmt}"
            )));
        }
    };
    if refused {
        return Err(invalid(
            "The soc version does not support bf16 / fp32 for calculations, please change the setting of cubeMathType or the Dtype of input tensor.".into(),
        ));
    }
    Ok(match (compute, cmt) {
        (ACL_FLOAT, 1 | 3) if fp32_cube => 1,
        (ACL_FLOAT, 1 | 2) => 2,
        _ => 0,
    })
}

/// The output shape `CalcOutputShape` infers (truncating division, as C++).
fn infer(x: &[i64], w: &[i64], transposed: bool, groups: i64, v: &Values) -> Vec<i64> {
    let s = x.len() - 2;
    let total = total_pads(&v.padding, s);
    let mut out = vec![x[0], if transposed { w[1] * groups } else { w[0] }];
    for d in 0..s {
        let (i, k) = (x[2 + d], w[2 + d]);
        let (st, dl) = (v.stride[d], v.dilation[d]);
        out.push(if transposed {
            (i - 1) * st - total[d] + dl * (k - 1) + v.output_padding[d] + 1
        } else {
            (i + total[d] - dl * (k - 1) - 1) / st + 1
        });
    }
    out
}

/// The attribute arrays, read.
struct Values {
    stride: Dims64,
    padding: Dims64,
    dilation: Dims64,
    output_padding: Dims64,
}

fn get_workspace_size(
    input: *const aclTensor,
    weight: *const aclTensor,
    bias: *const aclTensor,
    output: *const aclTensor,
    a: ConvArgs,
    outs: OutParams<'_>,
) -> aclnnStatus {
    status_of(|| {
        require_non_null(&[
            (input as usize, "input"),
            (weight as usize, "weight"),
            (a.stride as usize, "stride"),
            (a.padding as usize, "padding"),
            (a.dilation as usize, "dilation"),
            (output as usize, "output"),
        ])?;
        let outs = outs.slots()?;
        if a.transposed {
            require_non_null(&[(a.output_padding as usize, "outputPadding")])?;
        }
        let has_bias = !bias.is_null();
        // Without a bias the weight stands in its slot; the kernel never reads it there.
        let bias_slot = if has_bias { bias } else { weight };
        let p = Phase1::begin(&OP, &[input, weight, bias_slot, output], outs)?;
        let v = Values {
            stride: p.int_array(a.stride, "stride")?,
            padding: p.int_array(a.padding, "padding")?,
            dilation: p.int_array(a.dilation, "dilation")?,
            output_padding: if a.output_padding.is_null() {
                Dims64::zeroed(0)
            } else {
                p.int_array(a.output_padding, "outputPadding")?
            },
        };
        if has_bias {
            p.require_dtype(BIAS, &[ACL_FLOAT, ACL_FLOAT16, ACL_BF16])?;
        }
        let list = cube_dtypes(p.family);
        for arg in [INPUT, WEIGHT, OUTPUT] {
            p.require_dtype(arg, list)?;
        }
        let (x, w, o) = (
            p.desc(INPUT).clone(),
            p.desc(WEIGHT).clone(),
            p.desc(OUTPUT).clone(),
        );
        let b = has_bias.then(|| p.desc(BIAS).clone());
        let r = x.dims.len();
        for (name, t) in [("input", &x), ("weight", &w), ("output", &o)] {
            if !(3..=5).contains(&t.dims.len()) {
                return Err(invalid(format!(
                    "{name} has {} dims, not one of {{3, 4, 5}}",
                    t.dims.len()
                )));
            }
        }
        if w.dims.len() != r || o.dims.len() != r {
            return Err(invalid(format!(
                "input, weight and output must have the same number of dims, got {r}, {}, {}",
                w.dims.len(),
                o.dims.len()
            )));
        }
        let g = a.groups;
        if let Some(b) = &b {
            let want = if a.transposed {
                w.dims[1].wrapping_mul(g)
            } else {
                w.dims[0]
            };
            if b.dims.len() != 1 || b.dims[0] != want {
                return Err(invalid(format!(
                    "bias must be 1-D of {want} elements, got {:?}",
                    b.dims
                )));
            }
        }
        let s = r - 2;
        for (name, l) in [("stride", &v.stride), ("dilation", &v.dilation)] {
            if l.len() != s {
                return Err(invalid(format!("{name} has {} values, not {s}", l.len())));
            }
        }
        let two_sided = (r <= 4 && !a.transposed) || (r == 4 && a.transposed);
        if v.padding.len() != s && !(two_sided && v.padding.len() == 2 * s) {
            return Err(invalid(format!(
                "padding has {} values, not {s}{}",
                v.padding.len(),
                if two_sided {
                    format!(" or {}", 2 * s)
                } else {
                    String::new()
                }
            )));
        }
        if a.transposed && v.output_padding.len() != s {
            return Err(invalid(format!(
                "outputPadding has {} values, not {s}",
                v.output_padding.len()
            )));
        }
        check_formats(&x, &w, &o, b.as_ref(), a.transposed, r)?;
        check_values(&x.dims, &w.dims, &v, a, x.is_empty())?;
        let inferred = infer(&x.dims, &w.dims, a.transposed, g, &v);
        if *o.dims != *inferred {
            return Err(invalid(format!(
                "output shape {:?} is not the inferred {inferred:?}",
                o.dims
            )));
        }
        if (x.is_empty() || w.is_empty()) && !o.is_empty() {
            return Err(invalid(
                "if input or weight is empty, output must be empty".into(),
            ));
        }
        let compute = upper(x.dtype, w.dtype);
        let rounding = cube_math(p.family, compute, a.cube_math_type)?;
        if p.family == Family::Atlas310B && (a.transposed || r != 4) {
            return Err(invalid(format!(
                "{} only has the 2-D non-transposed convolution",
                p.soc
            )));
        }
        let empty = x.is_empty() || w.is_empty() || o.is_empty();
        let mut decision = Decision::new(compute, &o.dims, empty);
        let mut sp = Spatial::default();
        Spatial::set(&mut sp.stride, &v.stride);
        Spatial::set(&mut sp.dil, &v.dilation);
        Spatial::set(&mut sp.pad, &front_pads(&v.padding, s));
        let [sd, pad] = sp.to_attrs();
        decision.attrs[STRIDE_DIL] = sd;
        decision.attrs[PAD] = pad;
        decision.attrs[FLAGS] = Attr::Ints(Dims64::from_slice(&[
            g,
            i64::from(a.transposed),
            i64::from(has_bias),
            rounding,
        ]));
        p.finish(decision)
    })
}

fn check_formats(
    x: &crate::nnopbase::TensorDesc,
    w: &crate::nnopbase::TensorDesc,
    o: &crate::nnopbase::TensorDesc,
    b: Option<&crate::nnopbase::TensorDesc>,
    transposed: bool,
    r: usize,
) -> Result<(), i32> {
    let bad = |name: &str, f: aclFormat, want: &str| {
        invalid(format!("{name} format {} is not {want}", format_name(f)))
    };
    if x.format != o.format {
        return Err(invalid(format!(
            "input and output formats differ: {}, {}",
            format_name(x.format),
            format_name(o.format)
        )));
    }
    if let Some(b) = b
        && !matches!(
            b.format,
            ACL_FORMAT_NCL | ACL_FORMAT_NCHW | ACL_FORMAT_NCDHW | ACL_FORMAT_ND
        )
    {
        return Err(bad("bias", b.format, "one of NCL, NCHW, NCDHW, ND"));
    }
    match r {
        3 => {
            for (name, t) in [("input", x), ("weight", w), ("output", o)] {
                if t.format != ACL_FORMAT_NCL {
                    return Err(bad(name, t.format, "NCL"));
                }
            }
        }
        4 => {
            let weight_ok =
                w.format == ACL_FORMAT_NCHW || (!transposed && w.format == ACL_FORMAT_FRACTAL_Z);
            if transposed {
                if x.format != ACL_FORMAT_NCHW {
                    return Err(bad("input", x.format, "NCHW"));
                }
                if !weight_ok {
                    return Err(bad("weight", w.format, "NCHW"));
                }
            } else {
                if !weight_ok {
                    return Err(bad("weight", w.format, "NCHW or FRACTAL_Z"));
                }
                if x.format != ACL_FORMAT_NCHW {
                    return Err(bad("input", x.format, "NCHW"));
                }
            }
            if o.format != ACL_FORMAT_NCHW {
                return Err(bad("output", o.format, "NCHW"));
            }
        }
        _ => {
            for (name, t) in [("input", x), ("weight", w), ("output", o)] {
                if !matches!(t.format, ACL_FORMAT_NCDHW | ACL_FORMAT_NDHWC) {
                    return Err(bad(name, t.format, "NCDHW or NDHWC"));
                }
            }
        }
    }
    Ok(())
}

/// The vendor's `ValueChecker`, in order.
fn check_values(x: &[i64], w: &[i64], v: &Values, a: ConvArgs, x_empty: bool) -> Result<(), i32> {
    let s = x.len() - 2;
    if let Some(d) = (0..s).find(|&d| w[2 + d] <= 0) {
        return Err(invalid(format!(
            "shape[{}] of weight {w:?} must be greater than 0",
            d + 2
        )));
    }
    for (name, l) in [("stride", &v.stride), ("dilation", &v.dilation)] {
        if let Some(bad) = l.iter().find(|&&e| e <= 0) {
            return Err(invalid(format!(
                "{name} {:?} has {bad}: every value must be greater than 0",
                &**l
            )));
        }
    }
    if !a.transposed && !x_empty {
        let total = if s == 3 {
            v.padding.iter().map(|&p| 2 * p).collect()
        } else {
            total_pads(&v.padding, s)
        };
        for d in 0..s {
            if x[2 + d] + total[d] - v.dilation[d] * (w[2 + d] - 1) - 1 < 0 {
                return Err(invalid(format!(
                    "input {x:?} padded by {total:?} is smaller than the dilated kernel {w:?}"
                )));
            }
        }
    }
    let g = a.groups;
    if g <= 0 {
        return Err(invalid(format!("groups {g} must be greater than 0")));
    }
    if a.transposed {
        if w[0] != x[1] {
            return Err(invalid(format!(
                "transposed: weight[0] of {w:?} must equal input C of {x:?}"
            )));
        }
        for d in 0..v.output_padding.len() {
            let op = v.output_padding[d];
            if op >= v.stride[d] && op >= v.dilation[d] {
                return Err(invalid(format!(
                    "outputPadding[{d}] {op} must be less than stride[{d}] or dilation[{d}]"
                )));
            }
            if op < 0 {
                return Err(invalid(format!("outputPadding[{d}] {op} is negative")));
            }
        }
    } else if w[1] * g != x[1] {
        return Err(invalid(format!(
            "input C of {x:?} must equal weight[1] of {w:?} times groups {g}"
        )));
    }
    if w[0] % g != 0 {
        return Err(invalid(format!(
            "weight[0] of {w:?} is not divisible by groups {g}"
        )));
    }
    if a.transposed && x[1] == 0 {
        return Err(invalid("transposed: input C must be greater than 0".into()));
    }
    if a.transposed && !x_empty && !w.contains(&0) && !pad_binary_valid(w, v) {
        return Err(invalid(format!(
            "transposed: (kernel − 1)·dilation − padding must be at most 255 (weight {w:?}, dilation {:?}, padding {:?})",
            &*v.dilation, &*v.padding
        )));
    }
    Ok(())
}

/// The transposed convolution's pad limit, indexed as the vendor indexes it.
fn pad_binary_valid(w: &[i64], v: &Values) -> bool {
    const LIMIT: i64 = 255;
    let (dil, pad) = (&v.dilation, &v.padding);
    let second = |l: &Dims64, i: usize| if l.len() == 1 { l[0] } else { l[i] };
    match w.len() {
        3 => (w[2] - 1) * second(dil, 1) - second(pad, 1) <= LIMIT,
        4 => {
            (w[3] - 1) * second(dil, 1) - second(pad, 1) <= LIMIT
                && (w[2] - 1) * dil[0] - pad[0] <= LIMIT
        }
        _ => {
            let wv = (w[4] - 1) * second(dil, 2) - second(pad, 2);
            let hv = (w[3] - 1) * second(dil, 1) - second(pad, 1);
            (0..=LIMIT).contains(&wv) && (0..=LIMIT).contains(&hv)
        }
    }
}

/// The kernel's flags: groups, transposed, has a bias, operand rounding.
pub(super) fn flags(d: &Decision, k: usize) -> [i64; 4] {
    let mut f = [1, 0, 0, 0];
    if let Attr::Ints(v) = &d.attrs[k] {
        for (o, &x) in f.iter_mut().zip(v.iter()) {
            *o = x;
        }
    }
    f
}

/// Rounds operands as phase 1 decided (1: HF32, 2: f16; else as they are).
pub(super) fn round(v: &mut [f32], rounding: i64) {
    match rounding {
        1 => crate::cube::round_operands(v, ACL_FLOAT, true),
        2 => crate::cube::round_operands(v, ACL_FLOAT16, false),
        _ => {}
    }
}

fn run(call: &KernelCall, _scratch: &mut Scratch) -> Result<(), String> {
    let d = call.decision();
    let [groups, transposed, has_bias, rounding] = flags(d, FLAGS);
    let sp = Spatial::from_attrs(&d.attrs[STRIDE_DIL], &d.attrs[PAD]);
    let (xd, wd, od) = (
        call.dims(INPUT).to_vec(),
        call.dims(WEIGHT).to_vec(),
        call.dims(OUTPUT).to_vec(),
    );
    let mut x = vec![0f32; xd.iter().product()];
    let mut w = vec![0f32; wd.iter().product()];
    call.read(INPUT, &xd, &mut x)?;
    call.read(WEIGHT, &wd, &mut w)?;
    round(&mut x, rounding);
    round(&mut w, rounding);
    let mut out = vec![0f32; od.iter().product()];
    let (n, g) = (xd[0], groups.max(1) as usize);
    let transposed = transposed != 0;
    let (cin, cout) = (xd[1], od[1]);
    let (cig, cog) = (cin / g, cout / g);
    let mut geom = Geom {
        k: spatial_of(&wd),
        stride: sp.stride,
        dil: sp.dil,
        pad: sp.pad,
        ..Geom::default()
    };
    if transposed {
        // out (big) = col2im(Wgᵀ @ x_g), x the small space.
        geom.c = cog;
        geom.big = spatial_of(&od);
        geom.small = spatial_of(&xd);
        let (kv, ls, lb) = (geom.kvol(), geom.small_len(), geom.big_len());
        let (mut wt, mut col) = (vec![0f32; cog * kv * cig], vec![0f32; cog * kv * ls]);
        for gi in 0..g {
            transpose(
                &w[gi * cig * cog * kv..][..cig * cog * kv],
                cig,
                cog * kv,
                &mut wt,
            );
            for ni in 0..n {
                let xg = &x[(ni * cin + gi * cig) * ls..][..cig * ls];
                mm(&wt, xg, &mut col, cog * kv, cig, ls);
                let dst = &mut out[(ni * cout + gi * cog) * lb..][..cog * lb];
                geom.col2im(&col, dst);
            }
        }
    } else {
        // out_g (small) = W_g @ im2col(x_g), x the big space.
        geom.c = cig;
        geom.big = spatial_of(&xd);
        geom.small = spatial_of(&od);
        let (kv, ls, lb) = (geom.kvol(), geom.small_len(), geom.big_len());
        let mut col = vec![0f32; cig * kv * ls];
        for ni in 0..n {
            for gi in 0..g {
                geom.im2col(&x[(ni * cin + gi * cig) * lb..][..cig * lb], &mut col);
                let wg = &w[gi * cog * cig * kv..][..cog * cig * kv];
                let dst = &mut out[(ni * cout + gi * cog) * ls..][..cog * ls];
                mm(wg, &col, dst, cog, cig * kv, ls);
            }
        }
    }
    if has_bias != 0 {
        let mut b = vec![0f32; cout];
        call.read(BIAS, &[cout], &mut b)?;
        let l: usize = od[2..].iter().product();
        for (i, chunk) in out.chunks_exact_mut(l.max(1)).enumerate() {
            let bv = b[i % cout];
            chunk.iter_mut().for_each(|e| *e += bv);
        }
    }
    call.write(OUTPUT, &out)
}
