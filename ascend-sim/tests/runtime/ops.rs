//! MishBackward phase 2 and the compute: results against an f64 golden within the CANN
//! precision standard (f32, f16, bf16, mixed, broadcast, strided views), workspace checks,
//! executor reuse rules, and data-address checks.

use crate::common;
use ascend_sim::{api, kernel::mish_grad_f32, testing};
use ascend_sys::*;
use common::*;
use half::{bf16, f16};
use std::ffi::c_void;
use std::ptr::null_mut;

#[derive(Clone, Copy, Debug)]
enum Dt {
    F32,
    F16,
    Bf16,
}

impl Dt {
    fn acl(self) -> aclDataType {
        match self {
            Dt::F32 => ACL_FLOAT,
            Dt::F16 => ACL_FLOAT16,
            Dt::Bf16 => ACL_BF16,
        }
    }
    fn size(self) -> usize {
        match self {
            Dt::F32 => 4,
            _ => 2,
        }
    }
    fn encode(self, v: &[f64]) -> Vec<u8> {
        v.iter()
            .flat_map(|&x| match self {
                Dt::F32 => (x as f32).to_le_bytes().to_vec(),
                Dt::F16 => f16::from_f64(x).to_le_bytes().to_vec(),
                Dt::Bf16 => bf16::from_f64(x).to_le_bytes().to_vec(),
            })
            .collect()
    }
    fn decode(self, b: &[u8]) -> Vec<f64> {
        b.chunks(self.size())
            .map(|c| match self {
                Dt::F32 => f32::from_le_bytes(c.try_into().unwrap()) as f64,
                Dt::F16 => f16::from_le_bytes(c.try_into().unwrap()).to_f64(),
                Dt::Bf16 => bf16::from_le_bytes(c.try_into().unwrap()).to_f64(),
            })
            .collect()
    }
    /// Rounds to the dtype (what the device sees).
    fn round(self, v: &[f64]) -> Vec<f64> {
        self.decode(&self.encode(v))
    }
    fn threshold(self) -> f64 {
        match self {
            Dt::F32 => 2f64.powi(-13),
            Dt::F16 => 2f64.powi(-10),
            Dt::Bf16 => 2f64.powi(-7),
        }
    }
}

fn upload(bytes: &[u8]) -> *mut c_void {
    let p = malloc(bytes.len().max(1));
    h2d(p, bytes);
    p
}

/// Runs MishBackward on contiguous inputs of the given shapes/dtypes; returns
/// (inputs as seen by the device, output).
fn run(
    shapes: [&[i64]; 3],
    dts: [Dt; 3],
    rng: &mut Rng,
    lo: f64,
    hi: f64,
) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let n = |s: &[i64]| s.iter().product::<i64>() as usize;
    let g: Vec<f64> = dts[0].round(
        &(0..n(shapes[0]))
            .map(|_| rng.uniform(-2.0, 2.0))
            .collect::<Vec<_>>(),
    );
    let x: Vec<f64> = dts[1].round(
        &(0..n(shapes[1]))
            .map(|_| rng.uniform(lo, hi))
            .collect::<Vec<_>>(),
    );
    let (dg, dx) = (upload(&dts[0].encode(&g)), upload(&dts[1].encode(&x)));
    let out_bytes = n(shapes[2]) * dts[2].size();
    let dout = malloc(out_bytes.max(1));
    let (tg, tx, tout) = (
        tensor(shapes[0], dts[0].acl(), dg),
        tensor(shapes[1], dts[1].acl(), dx),
        tensor(shapes[2], dts[2].acl(), dout),
    );
    run_mish_backward(tg, tx, tout);
    let out = dts[2].decode(&d2h::<u8>(dout, out_bytes));
    for t in [tg, tx, tout] {
        destroy_tensor(t);
    }
    for p in [dg, dx, dout] {
        free(p);
    }
    (g, x, out)
}

/// Golden on the broadcast shape (`out` row-major; inputs broadcast numpy-style).
fn broadcast_index(i: usize, out: &[i64], inp: &[i64]) -> usize {
    let mut rem = i;
    let mut idx = vec![0usize; out.len()];
    for k in (0..out.len()).rev() {
        idx[k] = rem % out[k] as usize;
        rem /= out[k] as usize;
    }
    let lead = out.len() - inp.len();
    let mut lin = 0;
    for (j, &d) in inp.iter().enumerate() {
        let v = if d == 1 { 0 } else { idx[j + lead] };
        lin = lin * d as usize + v;
    }
    lin
}

#[test]
fn precision_against_golden_for_every_dtype_combination() {
    let _gate = crate::common::shared();
    setup();
    let mut rng = Rng(0x5eed);
    let dts = [Dt::F32, Dt::F16, Dt::Bf16];
    for &a in &dts {
        for &b in &dts {
            for &o in &dts {
                // f16 outputs below 6e-5 are subnormal (inherently imprecise): keep
                // their inputs (and those of an f16 compute) where mish' stays in f16's normal range.
                let f16_compute = matches!((a, b), (Dt::F16, Dt::F16));
                let wide = if matches!(o, Dt::F16) || f16_compute {
                    8.0
                } else {
                    30.0
                };
                for (lo, hi) in [(-8.0, 8.0), (-wide, wide)] {
                    let shapes: [&[i64]; 3] = [&[3, 1, 40], &[5, 1], &[3, 5, 40]];
                    let (g, x, out) = run(shapes, [a, b, o], &mut rng, lo, hi);
                    let want: Vec<f64> = (0..out.len())
                        .map(|i| {
                            golden(
                                g[broadcast_index(i, shapes[2], shapes[0])],
                                x[broadcast_index(i, shapes[2], shapes[1])],
                            )
                        })
                        .collect();
                    let thr = [a, b, o].iter().map(|d| d.threshold()).fold(0.0, f64::max);
                    assert_precision(
                        &out,
                        &want,
                        thr,
                        &format!("{:?} x in [{lo}, {hi})", [a, b, o]),
                    );
                }
            }
        }
    }
}

#[test]
fn f32_matches_the_kernel_function_bit_for_bit() {
    let _gate = crate::common::shared();
    setup();
    let mut rng = Rng(42);
    let (g, x, out) = run(
        [&[1000], &[1000], &[1000]],
        [Dt::F32; 3],
        &mut rng,
        -100.0,
        100.0,
    );
    for i in 0..1000 {
        assert_eq!(
            out[i] as f32,
            mish_grad_f32(g[i] as f32, x[i] as f32),
            "x={}",
            x[i]
        );
    }
}

#[test]
fn special_values_agree_with_the_golden() {
    let _gate = crate::common::shared();
    setup();
    let xs = [
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        -100.0,
        -88.0,
        0.0,
        -0.0,
        100.0,
        1e-30,
    ];
    let g = vec![1.5f32; xs.len()];
    let out = mish_backward_f32(&g, &xs, &[xs.len() as i64]);
    for (i, &x) in xs.iter().enumerate() {
        let want = golden(1.5, x as f64);
        if want.is_nan() {
            assert!(out[i].is_nan());
        } else {
            assert!(
                (out[i] as f64 - want).abs() <= 1e-6 * want.abs().max(1e-30),
                "x={x}: {} vs {want}",
                out[i]
            );
            assert_eq!(
                out[i].is_sign_negative(),
                want.is_sign_negative() && want != 0.0
                    || out[i] == 0.0 && out[i].is_sign_negative(),
                "x={x}"
            );
        }
    }
}

#[test]
fn strided_views_offsets_and_in_place() {
    let _gate = crate::common::shared();
    setup();
    // self is a transposed view with an offset; gradInput is a strided view into a larger buffer.
    let xs: Vec<f32> = (0..20).map(|i| i as f32 * 0.25 - 2.0).collect(); // storage [20]
    let gs: Vec<f32> = (0..6).map(|i| 1.0 + i as f32).collect();
    let (dx, dg, dout) = (malloc(80), malloc(24), malloc(4 * 12));
    h2d(dx, &xs);
    h2d(dg, &gs);
    // x view: dims [2,3], strides [1,2], offset 4 -> x[i][j] = xs[4 + i + 2j]
    let tx = tensor_view(&[2, 3], &[1, 2], 4, &[20], ACL_FLOAT, dx);
    let tg = tensor(&[2, 3], ACL_FLOAT, dg);
    // out view: dims [2,3], strides [6,2], offset 1 within 12 elements
    let tout = tensor_view(&[2, 3], &[6, 2], 1, &[12], ACL_FLOAT, dout);
    let (rc, ws, ex) = phase1(tg, tx, tout);
    assert_eq!(rc, ACLNN_SUCCESS);
    assert!(ws > 0, "non-contiguous input and output need temporaries");
    let w = malloc(ws as usize);
    launch_and_sync(w, ws, ex);
    let out = d2h::<f32>(dout, 12);
    for i in 0..2 {
        for j in 0..3 {
            let want = mish_grad_f32(gs[i * 3 + j], xs[4 + i + 2 * j]);
            assert_eq!(out[1 + 6 * i + 2 * j], want);
        }
    }
    assert_eq!(out[0], 0.0, "untouched element");
    // In place: gradInput aliases gradOutput.
    let tin = tensor(&[2, 3], ACL_FLOAT, dg);
    let (rc, ws2, ex) = phase1(tg, tx, tin);
    assert_eq!(rc, ACLNN_SUCCESS);
    launch_and_sync(w, ws2.max(ws), ex);
    let res = d2h::<f32>(dg, 6);
    for i in 0..2 {
        for j in 0..3 {
            assert_eq!(
                res[i * 3 + j],
                mish_grad_f32(gs[i * 3 + j], xs[4 + i + 2 * j])
            );
        }
    }
    for t in [tx, tg, tout, tin] {
        destroy_tensor(t);
    }
    for p in [dx, dg, dout, w] {
        free(p);
    }
}

/// A broadcast setup needing workspace: returns (tensors, buffers, ws size, executor).
fn broadcast_case() -> (
    [*mut aclTensor; 3],
    [*mut c_void; 3],
    u64,
    *mut aclOpExecutor,
) {
    let (dg, dx, dout) = (malloc(4 * 8), malloc(4 * 2), malloc(4 * 8));
    h2d(dg, &[1.0f32; 8]);
    h2d(dx, &[0.5f32, -0.5]);
    let ts = [
        tensor(&[4, 2], ACL_FLOAT, dg),
        tensor(&[2], ACL_FLOAT, dx),
        tensor(&[4, 2], ACL_FLOAT, dout),
    ];
    let (rc, ws, ex) = phase1(ts[0], ts[1], ts[2]);
    assert_eq!(rc, ACLNN_SUCCESS);
    assert!(ws > 0);
    (ts, [dg, dx, dout], ws, ex)
}

fn cleanup(ts: [*mut aclTensor; 3], bufs: [*mut c_void; 3]) {
    for t in ts {
        destroy_tensor(t);
    }
    for b in bufs {
        free(b);
    }
}

/// Asserts that phase 2 of `ex` (no workspace, default stream) is rejected with
/// `ACLNN_ERR_PARAM_INVALID` and a message containing every one of `fragments`, and that
/// the rejection released `ex` (nnopbase releases a non-repeatable executor whatever
/// phase 2 returns).
#[track_caller]
fn assert_phase2_rejects(ex: *mut aclOpExecutor, fragments: &[&str]) {
    assert_fails_with(
        phase2(null_mut(), 0, ex, null_mut()),
        ACLNN_ERR_PARAM_INVALID,
        fragments,
    );
    assert_released_by_failed_phase2(ex);
}

#[test]
fn workspace_checks() {
    let _gate = crate::common::shared();
    setup();
    let (ts, bufs, ws, ex) = broadcast_case();
    let fresh = || {
        let (rc, size, ex) = phase1(ts[0], ts[1], ts[2]);
        assert_eq!((rc, size), (ACLNN_SUCCESS, ws));
        ex
    };
    // Null with a non-zero size: nnopbase's first check, which releases the executor.
    assert_fails_with(
        phase2(null_mut(), ws, ex, null_mut()),
        ACLNN_ERR_PARAM_NULLPTR,
        &["workspace is nullptr but workspaceSize is"],
    );
    assert_double_release(ex, &["NULL workspace with a non-zero workspaceSize"]);
    // Null with size 0 although phase 1 asked for bytes.
    let ex = fresh();
    assert_fails_with(
        phase2(null_mut(), 0, ex, null_mut()),
        ACLNN_ERR_PARAM_NULLPTR,
        &["bytes are required"],
    );
    assert_released_by_failed_phase2(ex);
    // Too small (size argument).
    let launch = |w: *mut c_void, size: u64| {
        let ex = fresh();
        let rc = phase2(w, size, ex, null_mut());
        (rc, ex)
    };
    let w = malloc(ws as usize);
    let (rc, ex) = launch(w, ws - 1);
    assert_fails_with(rc, ACLNN_ERR_PARAM_INVALID, &["smaller than"]);
    assert_released_by_failed_phase2(ex);
    // Too small (allocation lies about its size).
    let small = malloc(ws as usize - 32);
    let (rc, ex) = launch(small, ws);
    assert_fails_with(rc, ACLNN_ERR_PARAM_INVALID, &["overruns"]);
    assert_released_by_failed_phase2(ex);
    // Host memory.
    let mut host = vec![0u8; ws as usize];
    let (rc, ex) = launch(host.as_mut_ptr().cast(), ws);
    assert_fails_with(rc, ACLNN_ERR_PARAM_INVALID, &["host memory"]);
    assert_released_by_failed_phase2(ex);
    // Freed.
    free(small);
    let (rc, ex) = launch(small, ws);
    assert_eq!(rc, ACLNN_ERR_PARAM_INVALID);
    assert_released_by_failed_phase2(ex);
    // A good workspace.
    launch_and_sync(w, ws, fresh());
    let out = d2h::<f32>(bufs[2], 8);
    assert_eq!(out[0], mish_grad_f32(1.0, 0.5));
    assert_eq!(out[7], mish_grad_f32(1.0, -0.5));
    free(w);
    cleanup(ts, bufs);
}

#[test]
fn workspace_freed_while_queued_is_reported() {
    let _gate = crate::common::shared();
    setup();
    let (ts, bufs, ws, ex) = broadcast_case();
    let s = create_stream();
    let w = malloc(ws as usize);
    let hold = testing::hold_stream(s).unwrap();
    assert_eq!(phase2(w, ws, ex, s), ACLNN_SUCCESS);
    assert_freed_while_queued_is_reported(w, hold, s, &["workspace allocation"]);
    destroy_stream(s);
    cleanup(ts, bufs);
}

/// A relaunched repeatable executor binds the allocations its addresses lie in at that
/// phase 2, whatever an earlier launch found there: memory freed since is refused, and a
/// new allocation (wherever the arena puts it, the old address included) is checked as
/// itself, its size included.
#[test]
fn relaunch_binds_the_allocations_live_now() {
    let _gate = crate::common::shared();
    setup();
    let want = mish_grad_f32(1.0, 1.0);
    let (dx, dout) = (upload(&Dt::F32.encode(&[1.0; 4])), malloc(16));
    let tx = tensor(&[4], ACL_FLOAT, dx);
    let tout = tensor(&[4], ACL_FLOAT, dout);
    let (rc, _, ex) = phase1(tx, tx, tout);
    assert_eq!(rc, ACLNN_SUCCESS);
    // SAFETY: live executor and tensors; the simulator checks every address.
    unsafe {
        assert_eq!(api::aclSetAclOpExecutorRepeatable(ex), ACLNN_SUCCESS);
        launch_and_sync(null_mut(), 0, ex);
        assert_eq!(d2h::<f32>(dout, 4), vec![want; 4]);
        free(dout);
        let gone = ["gradInput", "not inside any live device allocation"];
        let rc = phase2(null_mut(), 0, ex, null_mut());
        assert_fails_with(rc, ACLNN_ERR_PARAM_INVALID, &gone);
        let dout2 = malloc(16);
        let rebind = |p| api::aclSetOutputTensorAddr(ex, 0, tout, p);
        assert_eq!(rebind(dout2), ACLNN_SUCCESS);
        launch_and_sync(null_mut(), 0, ex);
        assert_eq!(d2h::<f32>(dout2, 4), vec![want; 4]);
        // 8 bytes cannot hold the 16 the view reaches.
        free(dout2);
        let small = malloc(8);
        assert_eq!(rebind(small), ACLNN_SUCCESS);
        let rc = phase2(null_mut(), 0, ex, null_mut());
        assert_fails_with(
            rc,
            ACLNN_ERR_PARAM_INVALID,
            &["gradInput", "allocation of 8 bytes"],
        );
        assert_eq!(api::aclDestroyAclOpExecutor(ex), ACLNN_SUCCESS);
        free(small);
    }
    destroy_tensor(tx);
    destroy_tensor(tout);
    free(dx);
}

#[test]
fn executor_is_consumed_unless_repeatable() {
    let _gate = crate::common::shared();
    setup();
    let x = [1.0f32; 4];
    let (dx, dout) = (upload(&Dt::F32.encode(&[1.0; 4])), malloc(16));
    let _ = x;
    let tx = tensor(&[4], ACL_FLOAT, dx);
    let tout = tensor(&[4], ACL_FLOAT, dout);
    let (rc, ws, ex) = phase1(tx, tx, tout);
    assert_eq!((rc, ws), (ACLNN_SUCCESS, 0));
    assert_eq!(phase2(null_mut(), 0, ex, null_mut()), ACLNN_SUCCESS);
    assert_eq!(
        phase2(null_mut(), 0, ex, null_mut()),
        ACLNN_ERR_PARAM_INVALID
    );
    assert!(err_msg().contains("consumed"), "{}", err_msg());
    // SAFETY: stale executors are rejected, never dereferenced.
    unsafe {
        assert_eq!(
            api::aclSetAclOpExecutorRepeatable(ex),
            ACLNN_ERR_PARAM_INVALID
        );
        assert_eq!(api::aclDestroyAclOpExecutor(ex), ACLNN_ERR_PARAM_INVALID);
        // nnopbase's executor API answers NULL with ACLNN_ERR_INNER_NULLPTR.
        assert_eq!(
            api::aclDestroyAclOpExecutor(null_mut()),
            ACLNN_ERR_INNER_NULLPTR
        );
    }
    // Never launched, non-repeatable: destroy releases it.
    let (_, _, ex) = phase1(tx, tx, tout);
    // SAFETY: live executor.
    assert_eq!(unsafe { api::aclDestroyAclOpExecutor(ex) }, ACLNN_SUCCESS);
    // Repeatable: runs many times with rebound addresses, then must be destroyed.
    let (_, _, ex) = phase1(tx, tx, tout);
    // SAFETY: live executor and tensors; addresses are device allocations.
    unsafe {
        assert_eq!(api::aclSetAclOpExecutorRepeatable(ex), ACLNN_SUCCESS);
        for k in 0..3 {
            let (dx2, dout2) = (upload(&Dt::F32.encode(&[k as f64; 4])), malloc(16));
            assert_eq!(api::aclSetInputTensorAddr(ex, 0, tx, dx2), ACLNN_SUCCESS);
            assert_eq!(api::aclSetInputTensorAddr(ex, 1, tx, dx2), ACLNN_SUCCESS);
            assert_eq!(
                api::aclSetOutputTensorAddr(ex, 0, tout, dout2),
                ACLNN_SUCCESS
            );
            launch_and_sync(null_mut(), 0, ex);
            let v = d2h::<f32>(dout2, 4);
            assert_eq!(v[3], mish_grad_f32(k as f32, k as f32));
            free(dx2);
            free(dout2);
        }
        // Misuse of the address setters.
        let d = malloc(64);
        assert_eq!(
            api::aclSetInputTensorAddr(ex, 2, tx, d),
            ACLNN_ERR_PARAM_INVALID
        );
        assert_eq!(
            api::aclSetOutputTensorAddr(ex, 1, tout, d),
            ACLNN_ERR_PARAM_INVALID
        );
        assert_eq!(
            api::aclSetInputTensorAddr(ex, 0, tx, d.cast::<u8>().add(4).cast()),
            ACLNN_ERR_PARAM_INVALID
        );
        assert!(err_msg().contains("aligned"), "{}", err_msg());
        assert_eq!(
            api::aclSetOutputTensorAddr(ex, 0, tx, d),
            ACLNN_ERR_PARAM_INVALID
        );
        assert_eq!(
            api::aclSetInputTensorAddr(ex, 0, null_mut(), d),
            ACLNN_ERR_INNER_NULLPTR
        );
        assert_eq!(
            api::aclSetInputTensorAddr(null_mut(), 0, tx, d),
            ACLNN_ERR_INNER_NULLPTR
        );
        // The freed addresses are still bound: phase 2 catches them.
        assert_eq!(
            phase2(null_mut(), 0, ex, null_mut()),
            ACLNN_ERR_PARAM_INVALID
        );
        free(d);
        assert_eq!(api::aclDestroyAclOpExecutor(ex), ACLNN_SUCCESS);
        assert_eq!(
            phase2(null_mut(), 0, ex, null_mut()),
            ACLNN_ERR_PARAM_INVALID
        );
        // Repeatable only before the first launch.
        let (_, _, ex) = phase1(tx, tx, tout);
        // Rebind to live memory first (the tensors were rebound above).
        assert_eq!(api::aclSetInputTensorAddr(ex, 0, tx, dx), ACLNN_SUCCESS);
        assert_eq!(api::aclSetInputTensorAddr(ex, 1, tx, dx), ACLNN_SUCCESS);
        assert_eq!(
            api::aclSetOutputTensorAddr(ex, 0, tout, dout),
            ACLNN_SUCCESS
        );
        let (_, _, ex2) = phase1(tx, tx, tout);
        assert_eq!(
            phase2(null_mut(), 0, ex2, null_mut()),
            ACLNN_SUCCESS,
            "{}",
            err_msg()
        );
        assert_eq!(
            api::aclSetAclOpExecutorRepeatable(ex2),
            ACLNN_ERR_PARAM_INVALID
        );
        assert_eq!(api::aclDestroyAclOpExecutor(ex), ACLNN_SUCCESS);
    }
    assert_eq!(sync(null_mut()), ACL_SUCCESS);
    destroy_tensor(tx);
    destroy_tensor(tout);
    free(dx);
    free(dout);
}

#[test]
fn tensor_data_must_be_live_device_memory_inside_bounds() {
    let _gate = crate::common::shared();
    setup();
    let d = malloc(16);
    let t = tensor(&[4], ACL_FLOAT, d);
    // Host memory as tensor data.
    let mut host = [0f32; 4];
    let th = tensor(&[4], ACL_FLOAT, host.as_mut_ptr().cast());
    let (rc, _, ex) = phase1(th, t, t);
    assert_eq!(rc, ACLNN_SUCCESS);
    assert_phase2_rejects(ex, &["gradOutput data", "host memory"]);
    // A view reaching outside its allocation (offset 1 on a 4-element buffer).
    let tv = tensor_view(&[4], &[1], 1, &[5], ACL_FLOAT, d);
    let (_, _, ex) = phase1(t, tv, t);
    assert_phase2_rejects(ex, &["self", "reaches bytes"]);
    // A view outside its declared storage.
    let ts = tensor_view(&[4], &[1], 0, &[3], ACL_FLOAT, d);
    let (_, _, ex) = phase1(t, t, ts);
    assert_phase2_rejects(ex, &["storage"]);
    // A tensor destroyed between the phases.
    let t2 = tensor(&[4], ACL_FLOAT, d);
    let (_, _, ex) = phase1(t, t2, t);
    destroy_tensor(t2);
    assert_phase2_rejects(ex, &["destroyed before aclnnMishBackward"]);
    // Input freed while the launch is queued.
    let s = create_stream();
    let hold = testing::hold_stream(s).unwrap();
    let (_, _, ex) = phase1(t, t, t);
    assert_eq!(phase2(null_mut(), 0, ex, s), ACLNN_SUCCESS);
    assert_freed_while_queued_is_reported(d, hold, s, &[]);
    destroy_stream(s);
    for t in [t, th, tv, ts] {
        destroy_tensor(t);
    }
}

#[test]
fn ten_million_elements() {
    let _gate = crate::common::shared();
    setup();
    let n = 10_000_000usize;
    let g = vec![1.0f32; n];
    let x: Vec<f32> = (0..n).map(|i| (i % 2000) as f32 * 0.01 - 10.0).collect();
    let start = std::time::Instant::now();
    let out = mish_backward_f32(&g, &x, &[n as i64]);
    let took = start.elapsed();
    for i in (0..n).step_by(99_991) {
        assert_eq!(out[i], mish_grad_f32(1.0, x[i]));
    }
    assert!(took.as_secs() < 60, "{took:?}");
}

#[test]
fn a_workspace_overlapping_an_operand_is_refused() {
    let _gate = crate::common::shared();
    // The workspace handed to phase 2 is gradOutput's own allocation.
    setup();
    let big = malloc(4096);
    h2d(big, &[1.0f32, 2.0, 3.0, 4.0]);
    let (x, o) = (malloc(4), malloc(16));
    h2d(x, &[5.0f32]);
    let (tg, tx, to) = (
        tensor(&[4], ACL_FLOAT, big),
        tensor(&[1], ACL_FLOAT, x),
        tensor(&[4], ACL_FLOAT, o),
    );
    let (rc, ws, ex) = phase1(tg, tx, to);
    assert_eq!(rc, ACLNN_SUCCESS);
    assert!(ws > 0 && ws <= 2048, "self is broadcast: {ws}");
    assert_fails_with(
        phase2(big, ws, ex, null_mut()),
        ACLNN_ERR_PARAM_INVALID,
        &["the workspace", "overlaps the bytes", "of gradOutput"],
    );
    assert_released_by_failed_phase2(ex);
    // The same allocation past gradOutput's bytes is a fine workspace.
    let (rc, _, ex) = phase1(tg, tx, to);
    assert_eq!(rc, ACLNN_SUCCESS);
    // SAFETY: stays inside the 4096-byte allocation.
    let past = unsafe { big.cast::<u8>().add(1024) }.cast();
    launch_and_sync(past, ws, ex);
    assert_eq!(
        d2h::<f32>(big, 4),
        [1.0, 2.0, 3.0, 4.0],
        "gradOutput intact"
    );
    assert_eq!(d2h::<f32>(o, 4)[3], mish_grad_f32(4.0, 5.0));
    for t in [tg, tx, to] {
        destroy_tensor(t);
    }
    for p in [big, x, o] {
        free(p);
    }
}
