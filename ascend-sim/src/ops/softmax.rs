//! `aclnnSoftmax` (ops-nn `activation/softmax_v2`) and `aclnnLogSoftmax`
//! (`activation/log_softmax_v2`): `exp(x − max) / Σ exp(x − max)` along `dim`, and its
//! logarithm `x − max − ln Σ exp(x − max)`.
//!
//! Softmax's phase-1 checks in the vendor's order:
//! 1. self or out NULL: 161001; then `workspaceSize` or `executor` NULL: 161001;
//! 2. an empty self: success, workspace 0, nothing computed (out's shape unchecked);
//! 3. self's, then out's dtype outside FLOAT, FLOAT16, DOUBLE (plus BF16 on Atlas A2 /
//!    A3): 161002;
//! 4. `dim` outside [−r, r−1], r = max(rank, 1): 161002;
//! 5. self above 8 dims, then out's shape not self's: 161002.
//!
//! LogSoftmax's, in the vendor's order:
//! 1. self or out NULL: 161001; then `workspaceSize` or `executor` NULL: 161001;
//! 2. `dim` outside [−r, r−1]: 161002 (before the dtypes);
//! 3. BF16 in self or out on a product without it, then self's, then out's dtype outside
//!    FLOAT, FLOAT16, DOUBLE, BF16: 161002 (the vendor's cast checks pass for any pair
//!    of these);
//! 4. self or out above 8 dims, then out's shape not self's: 161002;
//! 5. an empty self: success, workspace 0.
//!
//! Softmax is on every product, LogSoftmax on every product but 310B. Softmax computes in
//! self's dtype and casts to out's; LogSoftmax casts self to out's dtype first and
//! computes in it. The vector kernels widen FLOAT16 and BF16 to f32 in their registers
//! and round the result once to the dtype; DOUBLE runs on the AI CPU in f64. The
//! simulator does the same: the row's maximum, `exp(x − max)` and their sum in f32 (f64
//! for DOUBLE), one rounding to the compute dtype, then the cast to out's dtype. A NaN in
//! a row makes the whole row NaN, as does a +∞ (∞ − ∞).

use super::MAX_DIMS;
use crate::catalog::{Entry, Slot};
use crate::nnopbase::{
    Attr, Decision, KernelCall, OpDef, OutParams, Phase1, invalid, positions, release_on_fault,
    require_non_null,
};
use crate::state::status_of;
use crate::stream::Scratch;
use crate::strided::DType;
use crate::tables::{Family, dtype_name};
use ascend_sys::*;
use std::ffi::c_void;

positions!(SELF, OUT);
// Attribute: the normalised dim (0 for a 0-D self).
positions!(pub(super) DIM);

fn not_310b(f: Family) -> bool {
    f != Family::Atlas310B
}

pub(crate) static SOFTMAX: OpDef = OpDef {
    name: "Softmax",
    launch_api: "aclnnSoftmax",
    args: &["self", "out"],
    inputs: &[SELF],
    outputs: &[OUT],
    available: crate::nnopbase::every_product,
    kernel: run_softmax,
};

pub(crate) static LOG_SOFTMAX: OpDef = OpDef {
    name: "LogSoftmax",
    launch_api: "aclnnLogSoftmax",
    args: &["self", "out"],
    inputs: &[SELF],
    outputs: &[OUT],
    available: not_310b,
    kernel: run_log_softmax,
};

static P1_SOFTMAX: Slot = Slot::new("aclnnSoftmaxGetWorkspaceSize");
static P2_SOFTMAX: Slot = Slot::new("aclnnSoftmax");
static P1_LOG: Slot = Slot::new("aclnnLogSoftmaxGetWorkspaceSize");
static P2_LOG: Slot = Slot::new("aclnnLogSoftmax");

/// The entry points, for the catalog.
pub(crate) static ENTRIES: &[Entry] = &[
    Entry {
        name: "aclnnSoftmaxGetWorkspaceSize",
        address: || softmax_phase1 as *const c_void,
    },
    Entry {
        name: "aclnnSoftmax",
        address: || softmax_phase2 as *const c_void,
    },
    Entry {
        name: "aclnnLogSoftmaxGetWorkspaceSize",
        address: || log_softmax_phase1 as *const c_void,
    },
    Entry {
        name: "aclnnLogSoftmax",
        address: || log_softmax_phase2 as *const c_void,
    },
];

/// FLOAT, FLOAT16, DOUBLE, and BF16 on Atlas A2 / A3.
fn softmax_dtypes(family: Family) -> &'static [aclDataType] {
    const ALL: &[aclDataType] = &[ACL_FLOAT, ACL_FLOAT16, ACL_DOUBLE, ACL_BF16];
    if family.has_bf16() { ALL } else { &ALL[..3] }
}

/// Fails with 161002 unless `dim` is in [−r, r−1], r = max(rank, 1); the dim normalised.
pub(super) fn normal_dim(dim: i64, rank: usize) -> Result<usize, i32> {
    let r = (rank as i64).max(1);
    if dim >= r || dim < -r {
        return Err(invalid(format!(
            "provided dim {dim} not in the range of input size {r}."
        )));
    }
    Ok(dim.rem_euclid(r) as usize)
}

/// Fails with 161002 unless arguments `a` and `b` have one shape.
pub(super) fn require_same_shape(p: &Phase1<'_>, a: usize, b: usize) -> Result<(), i32> {
    let (x, y) = (p.desc(a), p.desc(b));
    if x.dims != y.dims {
        return Err(invalid(format!(
            "{} shape {:?} is not {} shape {:?}",
            p.op().args[b],
            y.dims,
            p.op().args[a],
            x.dims
        )));
    }
    Ok(())
}

/// Simulated `aclnnSoftmaxGetWorkspaceSize`.
///
/// # Safety
/// The C function's contract: each pointer NULL or valid for its access.
#[cfg_attr(
    feature = "c-exports",
    unsafe(export_name = "aclnnSoftmaxGetWorkspaceSize")
)]
pub unsafe extern "C" fn softmax_phase1(
    self_: *const aclTensor,
    dim: i64,
    out: *mut aclTensor,
    workspace_size: *mut u64,
    executor: *mut *mut aclOpExecutor,
) -> aclnnStatus {
    let code = crate::introspect::fault_code_at(P1_SOFTMAX.index());
    crate::state::entry(&P1_SOFTMAX, code, move || {
        // SAFETY: by the caller's C contract each out-parameter is NULL or writable and
        // unaliased until this call returns.
        let outs = unsafe { OutParams::new(workspace_size, executor) };
        status_of(|| {
            require_non_null(&[(self_ as usize, "self"), (out as usize, "out")])?;
            let p = Phase1::begin(&SOFTMAX, &[self_, out], outs.slots()?)?;
            let x = p.desc(SELF).clone();
            if x.is_empty() {
                return p.finish(Decision::new(x.dtype, &x.dims, true));
            }
            p.require_dtype(SELF, softmax_dtypes(p.family))?;
            p.require_dtype(OUT, softmax_dtypes(p.family))?;
            let d = normal_dim(dim, x.dims.len())?;
            p.require_max_dims(SELF, MAX_DIMS)?;
            require_same_shape(&p, SELF, OUT)?;
            let mut decision = Decision::new(x.dtype, &x.dims, false);
            decision.attrs[DIM] = Attr::Int(d as i64);
            p.finish(decision)
        })
    })
}

/// Simulated `aclnnLogSoftmaxGetWorkspaceSize`.
///
/// # Safety
/// The C function's contract: each pointer NULL or valid for its access.
#[cfg_attr(
    feature = "c-exports",
    unsafe(export_name = "aclnnLogSoftmaxGetWorkspaceSize")
)]
pub unsafe extern "C" fn log_softmax_phase1(
    self_: *const aclTensor,
    dim: i64,
    out: *mut aclTensor,
    workspace_size: *mut u64,
    executor: *mut *mut aclOpExecutor,
) -> aclnnStatus {
    let code = crate::introspect::fault_code_at(P1_LOG.index());
    crate::state::entry(&P1_LOG, code, move || {
        // SAFETY: by the caller's C contract each out-parameter is NULL or writable and
        // unaliased until this call returns.
        let outs = unsafe { OutParams::new(workspace_size, executor) };
        status_of(|| {
            require_non_null(&[(self_ as usize, "self"), (out as usize, "out")])?;
            let p = Phase1::begin(&LOG_SOFTMAX, &[self_, out], outs.slots()?)?;
            let (x, o) = (p.desc(SELF).clone(), p.desc(OUT).clone());
            let d = normal_dim(dim, x.dims.len())?;
            if !p.family.has_bf16() && (x.dtype == ACL_BF16 || o.dtype == ACL_BF16) {
                return Err(invalid(format!(
                    "BF16 is not supported on {}: self {}, out {}",
                    p.soc,
                    dtype_name(x.dtype),
                    dtype_name(o.dtype)
                )));
            }
            let all = softmax_dtypes(Family::A2);
            p.require_dtype(SELF, all)?;
            p.require_dtype(OUT, all)?;
            p.require_max_dims(SELF, MAX_DIMS)?;
            p.require_max_dims(OUT, MAX_DIMS)?;
            require_same_shape(&p, SELF, OUT)?;
            let mut decision = Decision::new(o.dtype, &x.dims, x.is_empty());
            decision.attrs[DIM] = Attr::Int(d as i64);
            p.finish(decision)
        })
    })
}

/// Simulated `aclnnSoftmax`.
///
/// # Safety
/// The C function's contract: each pointer NULL or valid for its access.
#[cfg_attr(feature = "c-exports", unsafe(export_name = "aclnnSoftmax"))]
pub unsafe extern "C" fn softmax_phase2(
    workspace: *mut c_void,
    workspace_size: u64,
    executor: *mut aclOpExecutor,
    stream: aclrtStream,
) -> aclnnStatus {
    crate::state::entry_with_fault_effect(
        &P2_SOFTMAX,
        crate::introspect::fault_code_at(P2_SOFTMAX.index()),
        move || release_on_fault(executor),
        move || crate::nnopbase::phase2(&SOFTMAX, workspace, workspace_size, executor, stream),
    )
}

/// Simulated `aclnnLogSoftmax`.
///
/// # Safety
/// The C function's contract: each pointer NULL or valid for its access.
#[cfg_attr(feature = "c-exports", unsafe(export_name = "aclnnLogSoftmax"))]
pub unsafe extern "C" fn log_softmax_phase2(
    workspace: *mut c_void,
    workspace_size: u64,
    executor: *mut aclOpExecutor,
    stream: aclrtStream,
) -> aclnnStatus {
    crate::state::entry_with_fault_effect(
        &P2_LOG,
        crate::introspect::fault_code_at(P2_LOG.index()),
        move || release_on_fault(executor),
        move || crate::nnopbase::phase2(&LOG_SOFTMAX, workspace, workspace_size, executor, stream),
    )
}

/// The arithmetic a softmax kernel runs in: f32 (the vector units) or f64 (the AI CPU).
pub(super) trait Real:
    Copy
    + Send
    + Sync
    + PartialOrd
    + std::ops::Add<Output = Self>
    + std::ops::Sub<Output = Self>
    + std::ops::Mul<Output = Self>
    + std::ops::Div<Output = Self>
{
    const ZERO: Self;
    const NEG_INF: Self;
    fn exp(self) -> Self;
    fn ln(self) -> Self;
    fn max(self, other: Self) -> Self;
}

impl Real for f32 {
    const ZERO: f32 = 0.0;
    const NEG_INF: f32 = f32::NEG_INFINITY;
    fn exp(self) -> f32 {
        f32::exp(self)
    }
    fn ln(self) -> f32 {
        f32::ln(self)
    }
    fn max(self, other: f32) -> f32 {
        f32::max(self, other)
    }
}

impl Real for f64 {
    const ZERO: f64 = 0.0;
    const NEG_INF: f64 = f64::NEG_INFINITY;
    fn exp(self) -> f64 {
        f64::exp(self)
    }
    fn ln(self) -> f64 {
        f64::ln(self)
    }
    fn max(self, other: f64) -> f64 {
        f64::max(self, other)
    }
}

/// `(outer, len, inner)` of `dims` split at `dim` (a 0-D tensor is one row of one).
pub(super) fn split(dims: &[usize], dim: usize) -> (usize, usize, usize) {
    if dims.is_empty() {
        return (1, 1, 1);
    }
    (
        dims[..dim].iter().product(),
        dims[dim],
        dims[dim + 1..].iter().product(),
    )
}

/// Threads for `len` elements: one below 64 Ki elements, else up to 8.
fn threads_for(len: usize) -> usize {
    static THREADS: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    if len < 1 << 16 {
        return 1;
    }
    *THREADS.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get().min(8)))
}

/// Runs `f` over whole blocks of `block` elements of `a` and the matching blocks of `b`
/// (each call gets a run of consecutive blocks), split across threads for large arrays.
pub(super) fn par_blocks<R: Real>(
    a: &mut [R],
    b: &[R],
    block: usize,
    f: impl Fn(&mut [R], &[R]) + Sync,
) {
    let threads = threads_for(a.len());
    let blocks = a.len() / block.max(1);
    if threads < 2 || blocks < 2 {
        f(a, b);
        return;
    }
    let per = blocks.div_ceil(threads) * block;
    let f = &f;
    std::thread::scope(|s| {
        for (k, chunk) in a.chunks_mut(per).enumerate() {
            let other = b.get(k * per..k * per + chunk.len()).unwrap_or(&[]);
            s.spawn(move || {
                crate::stream::mark_device_thread();
                f(chunk, other)
            });
        }
    });
}

/// Softmax (or its logarithm) of each block of `x` in place: `len` rows of `inner`
/// contiguous elements, reduced along the rows. With `inner` 1 each block is one
/// contiguous row; otherwise the reduction walks the rows and every step is a loop over
/// `inner` contiguous columns (`m` and `s` hold the columns' maxima and sums).
fn softmax_blocks<R: Real>(x: &mut [R], len: usize, inner: usize, log: bool) {
    if inner == 1 {
        for row in x.chunks_mut(len) {
            let m = row.iter().fold(R::NEG_INF, |m, &v| m.max(v));
            let mut s = R::ZERO;
            for v in row.iter_mut() {
                let d = *v - m;
                let e = d.exp();
                s = s + e;
                *v = if log { d } else { e };
            }
            if log {
                let l = s.ln();
                row.iter_mut().for_each(|v| *v = *v - l);
            } else {
                row.iter_mut().for_each(|v| *v = *v / s);
            }
        }
        return;
    }
    let (mut m, mut s) = (vec![R::NEG_INF; inner], vec![R::ZERO; inner]);
    for block in x.chunks_mut(len * inner) {
        m.iter_mut().for_each(|v| *v = R::NEG_INF);
        s.iter_mut().for_each(|v| *v = R::ZERO);
        for row in block.chunks(inner) {
            for (m, &v) in m.iter_mut().zip(row) {
                *m = m.max(v);
            }
        }
        for row in block.chunks_mut(inner) {
            for ((v, &m), s) in row.iter_mut().zip(&m).zip(s.iter_mut()) {
                let d = *v - m;
                let e = d.exp();
                *s = *s + e;
                *v = if log { d } else { e };
            }
        }
        if log {
            s.iter_mut().for_each(|v| *v = v.ln());
        }
        for row in block.chunks_mut(inner) {
            for (v, &s) in row.iter_mut().zip(&s) {
                *v = if log { *v - s } else { *v / s };
            }
        }
    }
}

/// Reads argument `arg` over its own shape as f32, whatever its dtype.
pub(super) fn read_f32(call: &KernelCall, arg: usize, dst: &mut [f32]) -> Result<(), String> {
    let dims = call.dims(arg).to_vec();
    if DType::from_acl(call.dtype(arg)?).is_some() {
        return call.read(arg, &dims, dst);
    }
    let mut wide = vec![0.0f64; dst.len()];
    call.read_f64(arg, &dims, &mut wide)?;
    for (d, w) in dst.iter_mut().zip(&wide) {
        *d = *w as f32;
    }
    Ok(())
}

/// Writes f32 values `src` through argument `arg`, whatever its dtype (one rounding).
pub(super) fn write_f32(call: &KernelCall, arg: usize, src: &[f32]) -> Result<(), String> {
    if DType::from_acl(call.dtype(arg)?).is_some() {
        return call.write(arg, src);
    }
    let wide: Vec<f64> = src.iter().map(|&v| f64::from(v)).collect();
    call.write_f64(arg, &wide)
}

fn run_softmax(call: &KernelCall, scratch: &mut Scratch) -> Result<(), String> {
    run(call, scratch, false)
}

fn run_log_softmax(call: &KernelCall, scratch: &mut Scratch) -> Result<(), String> {
    run(call, scratch, true)
}

fn run(call: &KernelCall, scratch: &mut Scratch, log: bool) -> Result<(), String> {
    let d = call.decision();
    let dims = call.dims(SELF).to_vec();
    let (_, len, inner) = split(&dims, d.attr_i64(DIM) as usize);
    let n = d.numel();
    match DType::from_acl(d.compute) {
        Some(compute) => {
            let [x, none] = scratch.get::<2>(n);
            read_f32(call, SELF, x)?;
            if compute != DType::F32 {
                // LogSoftmax's cast of self to out's dtype (a no-op for Softmax).
                x.iter_mut().for_each(|v| *v = compute.round(*v));
            }
            par_blocks(x, &none[..0], len * inner, |x, _| {
                softmax_blocks(x, len, inner, log)
            });
            if compute != DType::F32 {
                x.iter_mut().for_each(|v| *v = compute.round(*v));
            }
            write_f32(call, OUT, x)
        }
        None => {
            let [x] = scratch.wide::<1>(n);
            call.read_f64(SELF, &dims, x)?;
            par_blocks(x, &[], len * inner, |x, _| {
                softmax_blocks(x, len, inner, log)
            });
            call.write_f64(OUT, x)
        }
    }
}
