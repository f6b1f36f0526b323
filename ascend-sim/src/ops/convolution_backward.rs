//! `aclnnConvolutionBackward` (ops-nn `conv/convolution_backward`): the gradients of a
//! (transposed) convolution with respect to its input, weight and bias, each computed
//! when `outputMask` asks for it.
//!
//! Phase-1 checks in the vendor's order (`ConvolutionBackwardChecker::CheckParams`),
//! failures 161002 unless said otherwise:
//! 1. `workspaceSize` or `executor` NULL; gradOutput, input, weight, stride, padding,
//!    dilation, outputPadding (even when not transposed), outputMask NULL: 161001;
//!    outputMask not of 3 values: 161002; an output the mask asks for NULL: 161001;
//! 2. dtypes of gradOutput, input, weight and each non-NULL output in {FLOAT, FLOAT16},
//!    plus BF16 on Atlas A2/A3;
//! 3. storage formats of gradOutput, input, weight, gradInput, gradWeight: ND or NCL for 3
//!    dims, NCHW for 4, NCDHW for 5, other ranks refused; on Atlas A2/A3 a non-transposed
//!    gradBias must be ND;
//! 4. stride ≥ 1, padding ≥ 0, dilation ≥ 1; transposed: outputPadding ≥ 0 (3-D: below
//!    the stride); otherwise every outputPadding 0; groups ≥ 1;
//! 5. cubeMathType in 0..3 and supported for the promoted dtype (as `aclnnConvolution`);
//! 6. Atlas A2/A3 with an empty input or weight: the empty path (7); otherwise
//! 7. shapes: gradOutput's, input's and weight's ranks equal; gradOutput and weight not
//!    empty; gradInput of input's shape, gradWeight of weight's; gradBias 1-D of
//!    gradOutput's channels; stride and dilation of rank−2 values, padding and
//!    outputPadding of rank−2 (or 4 for 2-D); channels: gradOutput's (transposed: input's)
//!    equal weight[0], input's (transposed: gradOutput's) a multiple groups of weight[1];
//!    3-D: gradOutput's spatial dims the forward's. The vendor leaves 1-D and 2-D spatial
//!    dims to its kernels; the simulator refuses any that is not the forward's (161002),
//!    which it could not compute.
//! 8. the empty path: gradBias asked: biasSizes non-NULL of one value, gradOutput's
//!    channels (transposed weight[1]·groups); gradInput asked: input of rank > 2 with N or
//!    C 0; attribute lengths, groups, and the padded input against the kernel. Then
//!    gradWeight and gradBias, when asked and not empty, are zeros.
//!
//! The kernel, per sample and group, on the cube's GEMM: gradInput = col2im(Wᵀ·dY)
//! (transposed: W·im2col(dY)); gradWeight = Σ dY·im2col(X)ᵀ (transposed: X·im2col(dY)ᵀ);
//! gradBias = Σ dY over the batch and spatial dims. Operands round as `aclnnConvolution`
//! rounds them.

use super::conv_geom::{Geom, Spatial, front_pads, mm, spatial_of, transpose};
use super::convolution::{cube_dtypes, cube_math, round};
use super::convolution_backward_checks::{
    Values, check_empty, check_format, check_params, check_shapes,
};
use crate::catalog::{Entry, Slot};
use crate::nnopbase::{
    Attr, Decision, KernelCall, OpDef, OutParams, Phase1, TensorDesc, invalid, positions,
    release_on_fault, require_non_null,
};
use crate::slab::Dims64;
use crate::state::status_of;
use crate::stream::Scratch;
use crate::tables::format_name;
use ascend_sys::*;
use std::ffi::c_void;

positions!(GRAD_OUT, INPUT, WEIGHT, GRAD_INPUT, GRAD_WEIGHT, GRAD_BIAS);
// Attributes: stride and dilation, front padding, then groups / transposed / rounding /
// the outputs to write (bits 1, 2, 4) / the empty path.
positions!(STRIDE_DIL, PAD, FLAGS);

pub(crate) static OP: OpDef = OpDef {
    name: "ConvolutionBackward",
    launch_api: "aclnnConvolutionBackward",
    args: &[
        "gradOutput",
        "input",
        "weight",
        "gradInput",
        "gradWeight",
        "gradBias",
    ],
    inputs: &[GRAD_OUT, INPUT, WEIGHT],
    outputs: &[GRAD_INPUT, GRAD_WEIGHT, GRAD_BIAS],
    available: crate::nnopbase::every_product,
    kernel: run,
};

static PHASE1: Slot = Slot::new("aclnnConvolutionBackwardGetWorkspaceSize");
static PHASE2: Slot = Slot::new("aclnnConvolutionBackward");

/// The entry points, for the catalog.
pub(crate) static ENTRIES: &[Entry] = &[
    Entry {
        name: "aclnnConvolutionBackwardGetWorkspaceSize",
        address: || phase1 as *const c_void,
    },
    Entry {
        name: "aclnnConvolutionBackward",
        address: || phase2 as *const c_void,
    },
];

/// The non-tensor arguments of phase 1.
#[derive(Clone, Copy)]
pub(super) struct Attrs {
    pub bias_sizes: *const aclIntArray,
    pub stride: *const aclIntArray,
    pub padding: *const aclIntArray,
    pub dilation: *const aclIntArray,
    pub transposed: bool,
    pub output_padding: *const aclIntArray,
    pub groups: i32,
    pub mask: *const aclBoolArray,
    pub cube_math_type: i8,
}

/// Simulated `aclnnConvolutionBackwardGetWorkspaceSize`.
///
/// # Safety
/// The C function's contract: each pointer NULL or valid for its access.
#[cfg_attr(
    feature = "c-exports",
    unsafe(export_name = "aclnnConvolutionBackwardGetWorkspaceSize")
)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn phase1(
    grad_output: *const aclTensor,
    input: *const aclTensor,
    weight: *const aclTensor,
    bias_sizes: *const aclIntArray,
    stride: *const aclIntArray,
    padding: *const aclIntArray,
    dilation: *const aclIntArray,
    transposed: bool,
    output_padding: *const aclIntArray,
    groups: i32,
    output_mask: *const aclBoolArray,
    cube_math_type: i8,
    grad_input: *mut aclTensor,
    grad_weight: *mut aclTensor,
    grad_bias: *mut aclTensor,
    workspace_size: *mut u64,
    executor: *mut *mut aclOpExecutor,
) -> aclnnStatus {
    let code = crate::introspect::fault_code_at(PHASE1.index());
    crate::state::entry(&PHASE1, code, move || {
        // SAFETY: by the caller's C contract each out-parameter is NULL or writable and
        // unaliased until this call returns.
        let outs = unsafe { OutParams::new(workspace_size, executor) };
        let a = Attrs {
            bias_sizes,
            stride,
            padding,
            dilation,
            transposed,
            output_padding,
            groups,
            mask: output_mask,
            cube_math_type,
        };
        get_workspace_size(
            [grad_output, input, weight],
            [grad_input, grad_weight, grad_bias],
            a,
            outs,
        )
    })
}

/// Simulated `aclnnConvolutionBackward`.
///
/// # Safety
/// The C function's contract: each pointer NULL or valid for its access.
#[cfg_attr(
    feature = "c-exports",
    unsafe(export_name = "aclnnConvolutionBackward")
)]
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

const OUT_NAMES: [&str; 3] = ["gradInput", "gradWeight", "gradBias"];

fn get_workspace_size(
    ins: [*const aclTensor; 3],
    outs_t: [*mut aclTensor; 3],
    a: Attrs,
    outs: OutParams<'_>,
) -> aclnnStatus {
    status_of(|| {
        let outs = outs.slots()?;
        require_non_null(&[
            (ins[0] as usize, "gradOutput"),
            (ins[1] as usize, "input"),
            (ins[2] as usize, "weight"),
            (a.stride as usize, "stride"),
            (a.padding as usize, "padding"),
            (a.dilation as usize, "dilation"),
            (a.output_padding as usize, "outputPadding"),
            (a.mask as usize, "outputMask"),
        ])?;
        let mask = live_bools(a.mask, "outputMask")?;
        if mask.len() != 3 {
            return Err(invalid(format!(
                "outputMask has {} values, not 3",
                mask.len()
            )));
        }
        for ((&asked, &t), name) in mask.iter().zip(&outs_t).zip(OUT_NAMES) {
            if asked {
                require_non_null(&[(t as usize, name)])?;
            }
        }
        let present: Vec<bool> = outs_t.iter().map(|t| !t.is_null()).collect();
        // An absent output's slot holds a present one (or gradOutput when none is): the
        // kernel writes only the outputs the mask asks for.
        let stand_in = outs_t
            .iter()
            .find(|t| !t.is_null())
            .map_or(ins[0], |&t| t.cast_const());
        let slot = |k: usize| {
            if present[k] {
                outs_t[k].cast_const()
            } else {
                stand_in
            }
        };
        let p = Phase1::begin(
            &OP,
            &[ins[0], ins[1], ins[2], slot(0), slot(1), slot(2)],
            outs,
        )?;
        let list = cube_dtypes(p.family);
        for arg in [GRAD_OUT, INPUT, WEIGHT] {
            p.require_dtype(arg, list)?;
        }
        for (k, _) in present.iter().enumerate().filter(|(_, p)| **p) {
            p.require_dtype(GRAD_INPUT + k, list)?;
        }
        let d = |k: usize| p.desc(k).clone();
        let (go, x, w) = (d(GRAD_OUT), d(INPUT), d(WEIGHT));
        let od: [Option<TensorDesc>; 3] =
            std::array::from_fn(|k| present[k].then(|| d(GRAD_INPUT + k)));
        for (name, t) in [
            ("gradOutput", Some(&go)),
            ("input", Some(&x)),
            ("weight", Some(&w)),
        ]
        .into_iter()
        .chain([
            ("gradInput", od[0].as_ref()),
            ("gradWeight", od[1].as_ref()),
        ]) {
            if let Some(t) = t {
                check_format(name, t)?;
            }
        }
        let a2 = p.family.has_bf16();
        if let (false, true, Some(b)) = (a.transposed, a2, &od[2])
            && b.format != ACL_FORMAT_ND
        {
            return Err(invalid(format!(
                "gradBias format {} is not ND",
                format_name(b.format)
            )));
        }
        let v = Values {
            stride: p.int_array(a.stride, "stride")?,
            padding: p.int_array(a.padding, "padding")?,
            dilation: p.int_array(a.dilation, "dilation")?,
            output_padding: p.int_array(a.output_padding, "outputPadding")?,
        };
        check_params(&v, a, x.dims.len())?;
        let promoted = if go.dtype == x.dtype && x.dtype == w.dtype {
            x.dtype
        } else {
            ACL_FLOAT
        };
        if !(0..=3).contains(&a.cube_math_type) {
            return Err(invalid(format!(
                "The value of cubeMathType only support {{0: KEEP_DTYPE, 1: ALLOW_FP32_DOWN_PRECISION, 2: USE_FP16, 3: USE_HF32}}, but got {}",
                a.cube_math_type
            )));
        }
        let rounding = cube_math(p.family, promoted, a.cube_math_type)?;
        let empty_path = (x.is_empty() || w.is_empty()) && a2;
        if empty_path {
            check_empty(&p, &go, &x, &w, &v, a, &mask)?;
        } else {
            check_shapes(&go, &x, &w, &od, &v, a)?;
        }
        let g = i64::from(a.groups);
        let mut bits = 0i64;
        for (k, ((&asked, &given), d)) in mask.iter().zip(&present).zip(&od).enumerate() {
            if asked && given && !d.as_ref().is_some_and(TensorDesc::is_empty) {
                bits |= 1 << k;
            }
        }
        let nothing = bits == 0 || (go.is_empty() && !empty_path);
        let mut decision = Decision::new(go.dtype, &go.dims, nothing);
        let s = x.dims.len() - 2;
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
            rounding,
            bits,
            i64::from(empty_path),
        ]));
        p.finish(decision)
    })
}

fn read(call: &KernelCall, arg: usize, rounding: i64) -> Result<(Vec<usize>, Vec<f32>), String> {
    let dims = call.dims(arg).to_vec();
    let mut v = vec![0f32; dims.iter().product()];
    call.read(arg, &dims, &mut v)?;
    round(&mut v, rounding);
    Ok((dims, v))
}

fn run(call: &KernelCall, _scratch: &mut Scratch) -> Result<(), String> {
    let dcs = call.decision();
    let f = flags5(dcs);
    let [groups, transposed, rounding, bits, empty_path] = f;
    let want = |k: usize| bits & (1 << k) != 0;
    if empty_path != 0 {
        for k in [1, 2] {
            if want(k) {
                let n: usize = call.dims(GRAD_INPUT + k).iter().product();
                call.write(GRAD_INPUT + k, &vec![0.0; n])?;
            }
        }
        return Ok(());
    }
    let sp = Spatial::from_attrs(&dcs.attrs[STRIDE_DIL], &dcs.attrs[PAD]);
    let (gd, gy) = read(call, GRAD_OUT, rounding)?;
    let (xd, x) = read(call, INPUT, rounding)?;
    let (wd, w) = read(call, WEIGHT, rounding)?;
    let g = groups.max(1) as usize;
    let n = xd[0];
    // The forward's big (input) and small (output) spaces: transposed swaps them.
    let (big_d, small_d) = if transposed != 0 {
        (&gd, &xd)
    } else {
        (&xd, &gd)
    };
    let (cb, cs) = (big_d[1] / g, small_d[1] / g);
    let geom = Geom {
        c: cb,
        big: spatial_of(big_d),
        small: spatial_of(small_d),
        k: spatial_of(&wd),
        stride: sp.stride,
        dil: sp.dil,
        pad: sp.pad,
    };
    let (kv, lb, ls) = (geom.kvol(), geom.big_len(), geom.small_len());
    // Per group, the weight as a [small channels × big channels·taps] matrix: the
    // forward's W_g, or the transposed forward's (which is stored [big·… ] the other way).
    // Both layouts, (Cout, Cin/g, k) and transposed (Cin, Cout/g, k), hold per group a
    // [small channels × big channels·taps] block.
    let wmat = |gi: usize| &w[gi * cs * cb * kv..][..cs * cb * kv];
    let (big, small) = if transposed != 0 {
        (&gy, &x)
    } else {
        (&x, &gy)
    };
    // d(big) and d(small) gradients, then which argument each is.
    let mut d_big = vec![
        0f32;
        if transposed == 0 && want(0) {
            big.len()
        } else {
            0
        }
    ];
    let mut d_small = vec![
        0f32;
        if transposed != 0 && want(0) {
            small.len()
        } else {
            0
        }
    ];
    let mut gw = vec![0f32; if want(1) { w.len() } else { 0 }];
    let mut col = vec![0f32; cb * kv * ls];
    let mut col_t = vec![0f32; ls * cb * kv];
    let mut tmp = vec![0f32; cs * cb * kv];
    let mut wt = vec![0f32; cb * kv * cs];
    for gi in 0..g {
        let wg = wmat(gi);
        transpose(wg, cs, cb * kv, &mut wt);
        for ni in 0..n {
            let bg = &big[(ni * g * cb + gi * cb) * lb..][..cb * lb];
            let sg = &small[(ni * g * cs + gi * cs) * ls..][..cs * ls];
            if transposed == 0 {
                // small = W·im2col(big): d(big) = col2im(Wᵀ·d(small)), dW = d(small)·im2col(big)ᵀ.
                if want(0) {
                    mm(&wt, sg, &mut col, cb * kv, cs, ls);
                    geom.col2im(&col, &mut d_big[(ni * g * cb + gi * cb) * lb..][..cb * lb]);
                }
                if want(1) {
                    geom.im2col_t(bg, &mut col_t);
                    mm(sg, &col_t, &mut tmp, cs, ls, cb * kv);
                    for (o, t) in gw[gi * cs * cb * kv..][..cs * cb * kv].iter_mut().zip(&tmp) {
                        *o += t;
                    }
                }
            } else {
                // big = col2im(Wᵀ·small): d(small) = W·im2col(d(big)), dW = small·im2col(d(big))ᵀ.
                if want(0) {
                    geom.im2col(bg, &mut col);
                    mm(
                        wg,
                        &col,
                        &mut d_small[(ni * g * cs + gi * cs) * ls..][..cs * ls],
                        cs,
                        cb * kv,
                        ls,
                    );
                }
                if want(1) {
                    geom.im2col_t(bg, &mut col_t);
                    mm(sg, &col_t, &mut tmp, cs, ls, cb * kv);
                    for (o, t) in gw[gi * cs * cb * kv..][..cs * cb * kv].iter_mut().zip(&tmp) {
                        *o += t;
                    }
                }
            }
        }
    }
    if want(0) {
        call.write(GRAD_INPUT, if transposed == 0 { &d_big } else { &d_small })?;
    }
    if want(1) {
        call.write(GRAD_WEIGHT, &gw)?;
    }
    if want(2) {
        let c = gd[1];
        let l: usize = gd[2..].iter().product();
        let mut gb = vec![0f64; c];
        for (i, chunk) in gy.chunks_exact(l.max(1)).enumerate() {
            gb[i % c.max(1)] += chunk.iter().map(|&v| f64::from(v)).sum::<f64>();
        }
        let gb: Vec<f32> = gb.iter().map(|&v| v as f32).collect();
        call.write(GRAD_BIAS, &gb)?;
    }
    Ok(())
}

/// The values of a live bool-array argument (161002 for a foreign or stale handle).
fn live_bools(p: *const aclBoolArray, name: &str) -> Result<Vec<bool>, i32> {
    use crate::state::{Kind, decode, finding};
    let st = crate::state::state();
    let id = decode(Kind::BoolArray, p)
        .map_err(|m| finding(ACLNN_ERR_PARAM_INVALID, format!("{name}: {m}")))?;
    st.attrs.bool_arrays.get(id).cloned().ok_or_else(|| {
        finding(
            ACLNN_ERR_PARAM_INVALID,
            format!("{name}: {}", st.stale(Kind::BoolArray, id)),
        )
    })
}

/// The five kernel flags.
fn flags5(d: &Decision) -> [i64; 5] {
    let mut f = [1, 0, 0, 0, 0];
    if let Attr::Ints(v) = &d.attrs[FLAGS] {
        for (o, &x) in f.iter_mut().zip(v.iter()) {
            *o = x;
        }
    }
    f
}
