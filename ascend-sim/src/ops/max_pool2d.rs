//! `aclnnMaxPool2dWithIndices` (ops-nn `pooling/max_pool3d_with_argmax_v2`): 2-D max
//! pooling with the flat position of each maximum in its input plane.
//!
//! Products: Atlas A2/A3 (and the 950): self and out FLOAT, FLOAT16 or BF16; indices
//! INT32 or INT64 (the backward takes INT32 only there). The training series and 310P
//! list no dtype and 310B has no kernel: every call is refused (161002).
//!
//! Phase-1 checks in the vendor's order, 161002 unless said otherwise:
//! 1. self, kernelSize, stride, padding, dilation, out, indices NULL: 161001;
//! 2. self's dtype (above), out's equal to self's, indices INT32 or INT64;
//! 3. self's and out's storage formats equal and not private; self 3-D or 4-D;
//! 4. kernelSize of 1 or 2 values, stride of 0 (the kernel), 1 or 2, padding and
//!    dilation of 1 or 2; kernel > 0, stride > 0, 0 ≤ padding ≤ kernel/2; dilation 1;
//! 5. C, H and W not 0; the output's H and W > 0 and out's shape the expected one
//!    (`⌊(H + 2p − d(k−1) − 1 [+ s−1 with ceilMode]) / s⌋ + 1`, with ceilMode one less when
//!    the last window starts past `H + p`); indices of out's shape;
//! 6. an empty self or out: success, workspace 0.
//!
//! The kernel: per plane and output position, the first maximum of its window (padding
//! never wins; a NaN is the maximum) and its index `h·W + w` in the unpadded plane.

use crate::catalog::{Entry, Slot};
use crate::nnopbase::{
    Attr, Decision, KernelCall, OpDef, OutParams, Phase1, TensorDesc, invalid, positions,
    release_on_fault, require_non_null,
};
use crate::slab::Dims64;
use crate::state::status_of;
use crate::stream::Scratch;
use crate::tables::{Family, dtype_name, format_name};
use ascend_sys::*;
use std::ffi::c_void;

positions!(SELF, OUT, INDICES);
// Attribute: the window (kernel, stride, padding per dim; 6 values).
positions!(WINDOW);

pub(crate) static OP: OpDef = OpDef {
    name: "MaxPool2dWithIndices",
    launch_api: "aclnnMaxPool2dWithIndices",
    args: &["self", "out", "indices"],
    inputs: &[SELF],
    outputs: &[OUT, INDICES],
    available: crate::nnopbase::every_product,
    kernel: run,
};

static PHASE1: Slot = Slot::new("aclnnMaxPool2dWithIndicesGetWorkspaceSize");
static PHASE2: Slot = Slot::new("aclnnMaxPool2dWithIndices");

/// The entry points, for the catalog.
pub(crate) static ENTRIES: &[Entry] = &[
    Entry {
        name: "aclnnMaxPool2dWithIndicesGetWorkspaceSize",
        address: || phase1 as *const c_void,
    },
    Entry {
        name: "aclnnMaxPool2dWithIndices",
        address: || phase2 as *const c_void,
    },
];

/// Simulated `aclnnMaxPool2dWithIndicesGetWorkspaceSize`.
///
/// # Safety
/// The C function's contract: each pointer NULL or valid for its access.
#[cfg_attr(
    feature = "c-exports",
    unsafe(export_name = "aclnnMaxPool2dWithIndicesGetWorkspaceSize")
)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn phase1(
    self_: *const aclTensor,
    kernel_size: *const aclIntArray,
    stride: *const aclIntArray,
    padding: *const aclIntArray,
    dilation: *const aclIntArray,
    ceil_mode: bool,
    out: *mut aclTensor,
    indices: *mut aclTensor,
    workspace_size: *mut u64,
    executor: *mut *mut aclOpExecutor,
) -> aclnnStatus {
    let code = crate::introspect::fault_code_at(PHASE1.index());
    crate::state::entry(&PHASE1, code, move || {
        // SAFETY: by the caller's C contract each out-parameter is NULL or writable and
        // unaliased until this call returns.
        let outs = unsafe { OutParams::new(workspace_size, executor) };
        let lists = [kernel_size, stride, padding, dilation];
        get_workspace_size(self_, lists, ceil_mode, out, indices, outs)
    })
}

/// Simulated `aclnnMaxPool2dWithIndices`.
///
/// # Safety
/// The C function's contract: each pointer NULL or valid for its access.
#[cfg_attr(
    feature = "c-exports",
    unsafe(export_name = "aclnnMaxPool2dWithIndices")
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

/// A pooling window per spatial dim (H, W).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Window {
    pub k: [i64; 2],
    pub s: [i64; 2],
    pub p: [i64; 2],
    pub d: [i64; 2],
}

impl Window {
    pub fn to_attr(self) -> Attr {
        Attr::Ints(Dims64::from_slice(&[
            self.k[0], self.k[1], self.s[0], self.s[1], self.p[0], self.p[1],
        ]))
    }

    pub fn from_attr(a: &Attr) -> Window {
        let mut w = Window {
            d: [1, 1],
            ..Window::default()
        };
        if let Attr::Ints(v) = a
            && v.len() == 6
        {
            w.k = [v[0], v[1]];
            w.s = [v[2], v[3]];
            w.p = [v[4], v[5]];
        }
        w
    }

    /// The output size along dim `i` of an input of `n` (torch's rule).
    pub fn out_size(&self, i: usize, n: i64, ceil: bool) -> i64 {
        let (k, s, p, d) = (self.k[i], self.s[i], self.p[i], self.d[i]);
        let span = n + 2 * p - d * (k - 1) - 1 + if ceil { s - 1 } else { 0 };
        let mut o = span.div_euclid(s) + 1;
        if ceil && (o - 1) * s >= n + p {
            o -= 1;
        }
        o
    }
}

/// Private (NPU-internal) storage formats the pooling refuses.
pub(super) fn is_private(f: aclFormat) -> bool {
    matches!(
        f,
        ACL_FORMAT_NC1HWC0
            | ACL_FORMAT_FRACTAL_Z
            | ACL_FORMAT_NC1HWC0_C04
            | ACL_FORMAT_FRACTAL_NZ
            | ACL_FORMAT_NDC1HWC0
            | ACL_FRACTAL_Z_3D
    )
}

/// The attribute checks both operators share (sizes, values, dilation 1), in order.
pub(super) fn window(p: &Phase1<'_>, lists: [*const aclIntArray; 4]) -> Result<Window, i32> {
    let names = ["kernelSize", "stride", "padding", "dilation"];
    let mut v: [Dims64; 4] = Default::default();
    for k in 0..4 {
        v[k] = p.int_array(lists[k], names[k])?;
    }
    let [ks, st, pd, dl] = &v;
    if !(1..=2).contains(&ks.len()) {
        return Err(invalid(format!(
            "kernelSize has {} values, not 1 or 2",
            ks.len()
        )));
    }
    if st.len() > 2 {
        return Err(invalid(format!(
            "stride has {} values, not 0, 1 or 2",
            st.len()
        )));
    }
    for (name, l) in [("padding", pd), ("dilation", dl)] {
        if !(1..=2).contains(&l.len()) {
            return Err(invalid(format!(
                "{name} has {} values, not 1 or 2",
                l.len()
            )));
        }
    }
    let two = |l: &Dims64| [l[0], l[l.len() - 1]];
    let k = two(ks);
    let s = if st.is_empty() { k } else { two(st) };
    let w = Window {
        k,
        s,
        p: two(pd),
        d: two(dl),
    };
    if w.k.iter().any(|&e| e <= 0) || w.s.iter().any(|&e| e <= 0) {
        return Err(invalid(format!(
            "kernelSize {:?} and stride {:?} must be positive",
            w.k, w.s
        )));
    }
    if (0..2).any(|i| w.p[i] < 0 || w.p[i] > w.k[i] / 2) {
        return Err(invalid(format!(
            "padding {:?} must be between 0 and half the kernel {:?}",
            w.p, w.k
        )));
    }
    if w.d != [1, 1] {
        return Err(invalid(format!(
            "dilation {:?} must be 1 on this product",
            w.d
        )));
    }
    Ok(w)
}

/// The expected output shape of `x` (C, H, W or N, C, H, W), after the C/H/W checks.
pub(super) fn expected(x: &TensorDesc, w: &Window, ceil: bool) -> Result<Dims64, i32> {
    let r = x.dims.len();
    let (c, h, wd) = (x.dims[r - 3], x.dims[r - 2], x.dims[r - 1]);
    if c == 0 || h == 0 || wd == 0 {
        return Err(invalid(format!(
            "self {:?} must have non-zero C, H and W",
            x.dims
        )));
    }
    let (oh, ow) = (w.out_size(0, h, ceil), w.out_size(1, wd, ceil));
    if oh <= 0 || ow <= 0 {
        return Err(invalid(format!(
            "the output size {oh}x{ow} of self {:?} is too small",
            x.dims
        )));
    }
    let mut out = x.dims.clone();
    out[r - 2] = oh;
    out[r - 1] = ow;
    Ok(out)
}

fn get_workspace_size(
    self_: *const aclTensor,
    lists: [*const aclIntArray; 4],
    ceil: bool,
    out: *const aclTensor,
    indices: *const aclTensor,
    outs: OutParams<'_>,
) -> aclnnStatus {
    status_of(|| {
        require_non_null(&[
            (self_ as usize, "self"),
            (lists[0] as usize, "kernelSize"),
            (lists[1] as usize, "stride"),
            (lists[2] as usize, "padding"),
            (lists[3] as usize, "dilation"),
            (out as usize, "out"),
            (indices as usize, "indices"),
        ])?;
        let outs = outs.slots()?;
        let p = Phase1::begin(&OP, &[self_, out, indices], outs)?;
        let (x, o, i) = (
            p.desc(SELF).clone(),
            p.desc(OUT).clone(),
            p.desc(INDICES).clone(),
        );
        if !matches!(p.family, Family::A2 | Family::A3) {
            return Err(invalid(format!(
                "MaxPool2dWithIndices is not implemented on {} (dtype {} not supported)",
                p.soc,
                dtype_name(x.dtype)
            )));
        }
        p.require_dtype(SELF, &[ACL_FLOAT16, ACL_FLOAT, ACL_BF16])?;
        if o.dtype != x.dtype {
            return Err(invalid(format!(
                "out dtype {} is not self's {}",
                dtype_name(o.dtype),
                dtype_name(x.dtype)
            )));
        }
        p.require_dtype(INDICES, &[ACL_INT32, ACL_INT64])?;
        if x.format != o.format || is_private(x.format) {
            return Err(invalid(format!(
                "self and out storage formats {} and {} must be equal and not private",
                format_name(x.format),
                format_name(o.format)
            )));
        }
        if !(3..=4).contains(&x.dims.len()) {
            return Err(invalid(format!(
                "self has {} dims, not 3 or 4",
                x.dims.len()
            )));
        }
        let w = window(&p, lists)?;
        let want = expected(&x, &w, ceil)?;
        if *o.dims != *want {
            return Err(invalid(format!(
                "out shape {:?} is not the expected {:?}",
                o.dims, want
            )));
        }
        if *i.dims != *o.dims {
            return Err(invalid(format!(
                "indices shape {:?} is not out's {:?}",
                i.dims, o.dims
            )));
        }
        let empty = x.is_empty() || o.is_empty();
        let mut decision = Decision::new(x.dtype, &o.dims, empty);
        decision.attrs[WINDOW] = w.to_attr();
        p.finish(decision)
    })
}

fn run(call: &KernelCall, _scratch: &mut Scratch) -> Result<(), String> {
    let w = Window::from_attr(&call.decision().attrs[WINDOW]);
    let xd = call.dims(SELF).to_vec();
    let od = call.dims(OUT).to_vec();
    let r = xd.len();
    let (h, wd) = (xd[r - 2], xd[r - 1]);
    let (oh, ow) = (od[r - 2], od[r - 1]);
    let planes: usize = xd[..r - 2].iter().product();
    let mut x = vec![0f32; xd.iter().product()];
    call.read(SELF, &xd, &mut x)?;
    let mut out = vec![0f32; planes * oh * ow];
    let mut at = vec![0f64; planes * oh * ow];
    for pl in 0..planes {
        let plane = &x[pl * h * wd..][..h * wd];
        for i in 0..oh {
            for j in 0..ow {
                let (mut best, mut arg) = (f32::NEG_INFINITY, -1i64);
                for a in 0..w.k[0] {
                    let y = i as i64 * w.s[0] - w.p[0] + a * w.d[0];
                    if y < 0 || y >= h as i64 {
                        continue;
                    }
                    for b in 0..w.k[1] {
                        let z = j as i64 * w.s[1] - w.p[1] + b * w.d[1];
                        if z < 0 || z >= wd as i64 {
                            continue;
                        }
                        let flat = y * wd as i64 + z;
                        let v = plane[flat as usize];
                        if arg < 0 || (!best.is_nan() && (v > best || v.is_nan())) {
                            (best, arg) = (v, flat);
                        }
                    }
                }
                let k = (pl * oh + i) * ow + j;
                out[k] = best;
                at[k] = arg.max(0) as f64;
            }
        }
    }
    call.write(OUT, &out)?;
    call.write_f64(INDICES, &at)
}
