//! Operators a user simulates (`ascend_sim::custom`): registration (found by name, listed,
//! idempotent, refused for a name the simulator has, safe from many threads), the phase-1
//! checks the declaration adds to the shared steps, the kernel queued in order on the
//! stream with the executor protocol of shipped operators, and call counts and faults
//! under the C names.

#[path = "../common/mod.rs"]
mod common;
mod registration;
mod running;

use ascend_sim::custom::{Checks, Kernel, RegisterError, Role};
use ascend_sim::sys::*;
use ascend_sim::{api, call_count, register, set_fault, simulated_symbols, symbol};
use common::*;
use std::ffi::c_void;
use std::ptr::{null, null_mut};

ascend_sim::simulated_operator! {
    /// `out = negate ? -(alpha·self + other + bias) : alpha·self + other + bias`, each
    /// element `times` times added: a test operator with every kind of value argument.
    static AXPY: aclnnUserAxpy, aclnnUserAxpyGetWorkspaceSize(
        self_: input = "self",
        other: input,
        alpha: scalar,
        bias: double,
        negate: bool,
        times: int,
        out: output,
    );
    checks: |c: &Checks<'_>| {
        c.require_dtype("self", &[ACL_FLOAT, ACL_FLOAT16])?;
        c.require_same_dtype("other", "self")?;
        c.require_same_shape("other", "self")?;
        if c.int("times")? < 1 {
            return Err(c.invalid(format!("times {} should be at least 1", c.int("times")?)));
        }
        c.require_cast(c.scalar_dtype("alpha")?, c.dtype("self")?)
    };
    output: |c: &Checks<'_>| {
        c.require_same_dtype("out", "self")?;
        c.require_same_shape("out", "self")
    };
    kernel: |k: &mut Kernel<'_>| {
        let (x, y) = (k.read_f64("self")?, k.read_f64("other")?);
        let (alpha, bias) = (k.scalar("alpha")?, k.scalar("bias")?);
        let (negate, times) = (k.flag("negate")?, k.int("times")?);
        let sign = if negate { -1.0 } else { 1.0 };
        let out: Vec<f64> = x
            .iter()
            .zip(&y)
            .map(|(x, y)| sign * (times as f64) * (alpha * x + y + bias))
            .collect();
        k.write_f64("out", &out)
    };
}

ascend_sim::simulated_operator! {
    /// `selfRef = 2·selfRef`, in place, read and written as stored f32.
    static DOUBLE: aclnnUserInplaceDouble, aclnnUserInplaceDoubleGetWorkspaceSize(
        self_ref: inplace = "selfRef",
    );
    output: |c: &Checks<'_>| c.require_dtype("selfRef", &[ACL_FLOAT]);
    kernel: |k: &mut Kernel<'_>| {
        let x: Vec<f32> = k.read("selfRef")?;
        k.write("selfRef", &x.iter().map(|v| 2.0 * v).collect::<Vec<_>>())
    };
}

ascend_sim::simulated_operator! {
    /// A kernel that writes one value too few: the stream reports it.
    static SHORT: aclnnUserShort, aclnnUserShortGetWorkspaceSize(self_: input = "self", out: output);
    output: |c: &Checks<'_>| c.require_same_shape("out", "self");
    kernel: |k: &mut Kernel<'_>| k.write_f64("out", &vec![0.0; k.len("out")? - 1]);
}

fn scalar_f32(v: f32) -> *mut aclScalar {
    let mut v = v;
    // SAFETY: `v` is a live f32 the simulator copies.
    let s = unsafe { api::aclCreateScalar((&raw mut v).cast(), ACL_FLOAT) };
    assert!(!s.is_null(), "{}", err_msg());
    s
}

fn destroy_scalar(s: *mut aclScalar) {
    // SAFETY: `s` came from aclCreateScalar.
    assert_eq!(unsafe { api::aclDestroyScalar(s) }, ACLNN_SUCCESS);
}

/// Phase 1 of AXPY through its generated C function: `(status, workspace, executor)`.
fn axpy_phase1(
    x: *mut aclTensor,
    y: *mut aclTensor,
    alpha: *mut aclScalar,
    (bias, negate, times): (f64, bool, i64),
    out: *mut aclTensor,
) -> (i32, u64, *mut aclOpExecutor) {
    let (mut ws, mut ex) = (0u64, null_mut());
    // SAFETY: simulator handles or NULL, and valid out-pointers.
    let rc = unsafe {
        aclnnUserAxpyGetWorkspaceSize(x, y, alpha, bias, negate, times, out, &mut ws, &mut ex)
    };
    (rc, ws, ex)
}

fn axpy_phase2(ex: *mut aclOpExecutor, s: aclrtStream) -> i32 {
    // SAFETY: the executor is a simulator handle; no workspace is needed.
    unsafe { aclnnUserAxpy(null_mut(), 0, ex, s) }
}

/// Device buffers and tensors of one AXPY call over `x` and `y` (f32, shape [n]).
struct Axpy {
    bufs: [*mut c_void; 3],
    tensors: [*mut aclTensor; 3],
    alpha: *mut aclScalar,
}

impl Axpy {
    fn new(x: &[f32], y: &[f32], alpha: f32) -> Axpy {
        let n = x.len();
        let bufs = [malloc(4 * n), malloc(4 * n), malloc(4 * n)];
        h2d(bufs[0], x);
        h2d(bufs[1], y);
        let dims = [n as i64];
        let tensors = bufs.map(|b| tensor(&dims, ACL_FLOAT, b));
        Axpy {
            bufs,
            tensors,
            alpha: scalar_f32(alpha),
        }
    }

    fn phase1(&self, values: (f64, bool, i64)) -> (i32, u64, *mut aclOpExecutor) {
        let [x, y, out] = self.tensors;
        axpy_phase1(x, y, self.alpha, values, out)
    }

    fn out(&self, n: usize) -> Vec<f32> {
        d2h(self.bufs[2], n)
    }
}

impl Drop for Axpy {
    fn drop(&mut self) {
        self.tensors.iter().for_each(|&t| destroy_tensor(t));
        self.bufs.iter().for_each(|&b| free(b));
        destroy_scalar(self.alpha);
    }
}

fn expected(x: &[f32], y: &[f32], alpha: f32, (bias, negate, times): (f64, bool, i64)) -> Vec<f32> {
    let sign = if negate { -1.0 } else { 1.0 };
    x.iter()
        .zip(y)
        .map(|(&x, &y)| {
            (sign * times as f64 * (f64::from(alpha) * f64::from(x) + f64::from(y) + bias)) as f32
        })
        .collect()
}
