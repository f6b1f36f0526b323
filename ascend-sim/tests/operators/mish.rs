//! aclnnMish and aclnnInplaceMish: the vendor's phase-1 checks in order on five products,
//! and the compute against an f64 golden (f32 bit for bit against the kernel function),
//! contiguous or not, in place or not, labelled NCHW/NCDHW, 0-D and empty.

use crate::common;
use ascend_sim::{api, kernel::mish_f32};
use ascend_sys::*;
use common::*;
use half::{bf16, f16};
use std::ffi::c_void;
use std::ptr::null_mut;

const NCHW: i32 = 0;
const NCDHW: i32 = 30;

/// A contiguous tensor with a format label (NULL strides: contiguous, as in CANN).
fn labelled(dims: &[i64], dtype: i32, format: i32, data: *mut c_void) -> *mut aclTensor {
    // SAFETY: `dims` is a live slice of the stated length; a NULL stride is allowed.
    let t = unsafe {
        api::aclCreateTensor(
            dims.as_ptr(),
            dims.len() as u64,
            dtype,
            std::ptr::null(),
            0,
            format,
            dims.as_ptr(),
            dims.len() as u64,
            data,
        )
    };
    assert!(!t.is_null(), "{}", err_msg());
    t
}

fn mish_phase1(x: *mut aclTensor, out: *mut aclTensor) -> (i32, u64, *mut aclOpExecutor) {
    let (mut ws, mut ex) = (0u64, null_mut());
    // SAFETY: simulator handles or NULL; valid out-pointers.
    let rc = unsafe { api::aclnnMishGetWorkspaceSize(x, out, &mut ws, &mut ex) };
    (rc, ws, ex)
}

fn inplace_phase1(x: *mut aclTensor) -> (i32, u64, *mut aclOpExecutor) {
    let (mut ws, mut ex) = (0u64, null_mut());
    // SAFETY: a simulator handle or NULL; valid out-pointers.
    let rc = unsafe { api::aclnnInplaceMishGetWorkspaceSize(x, &mut ws, &mut ex) };
    (rc, ws, ex)
}

/// Phase 1 on metadata-only tensors; destroys what it made. Returns (status, ws, text).
fn check(x: (&[i64], i32), out: (&[i64], i32)) -> (i32, u64, String) {
    let (tx, to) = (
        tensor(x.0, x.1, null_mut()),
        tensor(out.0, out.1, null_mut()),
    );
    let (rc, ws, ex) = mish_phase1(tx, to);
    let msg = if rc == ACLNN_SUCCESS {
        // SAFETY: executor from phase 1.
        assert_eq!(unsafe { api::aclDestroyAclOpExecutor(ex) }, ACLNN_SUCCESS);
        String::new()
    } else {
        err_msg()
    };
    destroy_tensor(tx);
    destroy_tensor(to);
    (rc, ws, msg)
}

#[test]
fn products_and_dtypes() {
    for (d, soc) in FIVE_SOCS.iter().enumerate() {
        let soc = soc.to_string();
        on_device(d as i32, move || {
            let s: &[i64] = &[2, 3];
            for dt in [ACL_FLOAT, ACL_FLOAT16, ACL_BF16, ACL_DOUBLE, ACL_INT32] {
                let (rc, ws, msg) = check((s, dt), (s, dt));
                let bf16 = soc.starts_with("Ascend910B") || soc.starts_with("Ascend910_93");
                let want = if soc.starts_with("Ascend310") {
                    ACLNN_ERR_INNER_FIND_KERNEL_ERROR
                } else if dt == ACL_FLOAT || dt == ACL_FLOAT16 || (dt == ACL_BF16 && bf16) {
                    ACLNN_SUCCESS
                } else {
                    ACLNN_ERR_PARAM_INVALID
                };
                assert_eq!(rc, want, "{soc} dtype {dt}: {msg}");
                if want == ACLNN_SUCCESS {
                    assert_eq!(ws, 0);
                } else if want == ACLNN_ERR_INNER_FIND_KERNEL_ERROR {
                    assert!(
                        msg.contains(&format!("Mish is not supported on {soc}")),
                        "{msg}"
                    );
                } else {
                    assert!(msg.contains("self dtype"), "{msg}");
                }
            }
        });
    }
}

#[test]
fn checks_come_in_the_vendors_order() {
    on_device(0, || {
        let t = tensor(&[2], ACL_FLOAT, null_mut());
        let (mut ws, mut ex) = (0u64, null_mut());
        // SAFETY: NULLs are deliberate; the other arguments are valid.
        unsafe {
            for (x, o, name) in [(null_mut(), null_mut(), "self"), (t, null_mut(), "out")] {
                let rc = api::aclnnMishGetWorkspaceSize(x, o, &mut ws, &mut ex);
                assert_fails_with(
                    rc,
                    ACLNN_ERR_PARAM_NULLPTR,
                    &[&format!("{name} is nullptr")],
                );
            }
            let rc = api::aclnnMishGetWorkspaceSize(t, t, null_mut(), &mut ex);
            assert_fails_with(rc, ACLNN_ERR_PARAM_NULLPTR, &["workspaceSize is nullptr"]);
            let rc = api::aclnnInplaceMishGetWorkspaceSize(null_mut(), &mut ws, &mut ex);
            assert_fails_with(rc, ACLNN_ERR_PARAM_NULLPTR, &["selfRef is nullptr"]);
            let rc = api::aclnnInplaceMishGetWorkspaceSize(t, &mut ws, null_mut());
            assert_fails_with(rc, ACLNN_ERR_PARAM_NULLPTR, &["executor is nullptr"]);
        }
        destroy_tensor(t);
        let f = ACL_FLOAT;
        let nine: &[i64] = &[1, 1, 1, 1, 1, 1, 1, 1, 2];
        let eight: &[i64] = &[1, 1, 1, 1, 1, 1, 1, 2];
        // self's dtype, then out's, then equality; all before the dims.
        let (_, _, m) = check((nine, ACL_DOUBLE), (nine, ACL_INT32));
        assert!(m.contains("self dtype DOUBLE"), "{m}");
        let (_, _, m) = check((nine, f), (nine, ACL_INT32));
        assert!(m.contains("out dtype INT32 is not supported"), "{m}");
        let (_, _, m) = check((nine, f), (&[3], ACL_FLOAT16));
        assert!(
            m.contains("out dtype FLOAT16 is not self's dtype FLOAT"),
            "{m}"
        );
        // More than 8 dims, then the shape.
        let (rc, _, m) = check((nine, f), (&[3], f));
        assert_eq!(rc, ACLNN_ERR_PARAM_INVALID);
        assert!(m.contains("self has 9 dims"), "{m}");
        let (_, _, m) = check((eight, f), (nine, f));
        assert!(m.contains("out has 9 dims"), "{m}");
        let (rc, _, m) = check((&[2, 3], f), (&[3], f));
        assert_eq!(rc, ACLNN_ERR_PARAM_INVALID);
        assert!(
            m.contains("out shape [3] is not self's shape [2, 3]"),
            "{m}"
        );
        // No broadcasting, even where numpy would.
        let (rc, _, _) = check((&[1, 3], f), (&[2, 3], f));
        assert_eq!(rc, ACLNN_ERR_PARAM_INVALID);
        // 8 dims, 0-D and empty tensors are fine; empty needs no workspace.
        assert_eq!(check((eight, f), (eight, f)).0, ACLNN_SUCCESS);
        assert_eq!(check((&[], f), (&[], f)).0, ACLNN_SUCCESS);
        assert_eq!(check((&[2, 0, 3], f), (&[2, 0, 3], f)).0, ACLNN_SUCCESS);
    });
}

fn encode(dt: i32, v: &[f64]) -> Vec<u8> {
    v.iter()
        .flat_map(|&x| match dt {
            ACL_FLOAT => (x as f32).to_le_bytes().to_vec(),
            ACL_FLOAT16 => f16::from_f64(x).to_le_bytes().to_vec(),
            _ => bf16::from_f64(x).to_le_bytes().to_vec(),
        })
        .collect()
}

fn decode(dt: i32, b: &[u8]) -> Vec<f64> {
    let size = if dt == ACL_FLOAT { 4 } else { 2 };
    b.chunks(size)
        .map(|c| match dt {
            ACL_FLOAT => f32::from_le_bytes(c.try_into().unwrap()) as f64,
            ACL_FLOAT16 => f16::from_le_bytes(c.try_into().unwrap()).to_f64(),
            _ => bf16::from_le_bytes(c.try_into().unwrap()).to_f64(),
        })
        .collect()
}

fn golden(x: f64) -> f64 {
    let softplus = x.max(0.0) + (-x.abs()).exp().ln_1p();
    x * softplus.tanh()
}

/// Runs phase 1 (whose result it asserts) and phase 2 on the default stream.
fn run(
    phase1: (i32, u64, *mut aclOpExecutor),
    launch: unsafe extern "C" fn(*mut c_void, u64, *mut aclOpExecutor, aclrtStream) -> i32,
) {
    let (rc, ws, ex) = phase1;
    assert_eq!(rc, ACLNN_SUCCESS, "{}", err_msg());
    let w = if ws > 0 {
        malloc(ws as usize)
    } else {
        null_mut()
    };
    // SAFETY: executor of phase 1, a workspace of its size, the default stream.
    let rc = unsafe { launch(w, ws, ex, null_mut()) };
    assert_eq!(rc, ACLNN_SUCCESS, "{}", err_msg());
    assert_eq!(sync(null_mut()), ACL_SUCCESS, "{}", err_msg());
    if !w.is_null() {
        free(w);
    }
}

#[test]
fn results_meet_the_precision_standard_and_f32_is_the_kernel() {
    on_device(0, || {
        let mut rng = Rng(11);
        for (dt, lo, hi, thr) in [
            (ACL_FLOAT, -100.0, 100.0, 2f64.powi(-13)),
            (ACL_FLOAT16, -8.0, 8.0, 2f64.powi(-10)),
            (ACL_BF16, -8.0, 8.0, 2f64.powi(-7)),
        ] {
            let n = 1024 * 1024;
            let dims = [1024i64, 1024];
            let xs = decode(
                dt,
                &encode(dt, &(0..n).map(|_| rng.uniform(lo, hi)).collect::<Vec<_>>()),
            );
            let bytes = encode(dt, &xs);
            let (dx, dout) = (malloc(bytes.len()), malloc(bytes.len()));
            h2d(dx, &bytes);
            let (tx, to) = (tensor(&dims, dt, dx), tensor(&dims, dt, dout));
            run(mish_phase1(tx, to), api::aclnnMish);
            let out = decode(dt, &d2h::<u8>(dout, bytes.len()));
            let want: Vec<f64> = xs.iter().map(|&x| golden(x)).collect();
            assert_precision(&out, &want, thr, &format!("dtype {dt}"));
            if dt == ACL_FLOAT {
                for (o, &x) in out.iter().zip(&xs) {
                    assert_eq!(*o as f32, mish_f32(x as f32), "x = {x}");
                }
            }
            destroy_tensor(tx);
            destroy_tensor(to);
            free(dx);
            free(dout);
        }
    });
}

#[test]
fn special_values() {
    let _gate = crate::common::shared();
    assert_eq!(mish_f32(f32::INFINITY), f32::INFINITY);
    let z = mish_f32(f32::NEG_INFINITY);
    assert!(z == 0.0 && z.is_sign_negative());
    assert!(mish_f32(f32::NAN).is_nan());
    assert_eq!(mish_f32(0.0), 0.0);
    assert!(mish_f32(-200.0) == 0.0 && mish_f32(-200.0).is_sign_negative());
    assert_eq!(mish_f32(200.0), 200.0);
    assert!((mish_f32(1.0) as f64 - golden(1.0)).abs() < 1e-7);
    assert!((mish_f32(-1.0) as f64 - golden(-1.0)).abs() < 1e-7);
}

#[test]
fn views_labels_and_the_in_place_form() {
    on_device(4, || {
        let xs: Vec<f32> = (0..24).map(|i| i as f32 * 0.5 - 6.0).collect();
        // self transposed ([4, 6] over a [6, 4] storage): it needs a workspace region.
        let (dx, dout) = (malloc(96), malloc(4 * 30));
        h2d(dx, &xs);
        let tx = tensor_view(&[4, 6], &[1, 4], 0, &[6, 4], ACL_FLOAT, dx);
        let to = labelled(&[1, 1, 4, 6], ACL_FLOAT, NCHW, dout);
        let (rc, ws, ex) = mish_phase1(tx, tx);
        assert_eq!((rc, ws > 0), (ACLNN_SUCCESS, true), "{}", err_msg());
        // SAFETY: executor from phase 1.
        assert_eq!(unsafe { api::aclDestroyAclOpExecutor(ex) }, ACLNN_SUCCESS);
        let (rc, _, _) = mish_phase1(tx, to);
        assert_eq!(rc, ACLNN_ERR_PARAM_INVALID, "[4, 6] vs [1, 1, 4, 6]");
        // out: a view at offset 5 inside a larger buffer.
        let to4 = tensor_view(&[4, 6], &[6, 1], 5, &[30], ACL_FLOAT, dout);
        run(mish_phase1(tx, to4), api::aclnnMish);
        let out = d2h::<f32>(dout, 30);
        for i in 0..4 {
            for j in 0..6 {
                assert_eq!(out[5 + i * 6 + j], mish_f32(xs[i + 4 * j]));
            }
        }
        assert_eq!(out[0], 0.0, "before the view's offset");
        // In place on the transposed view: reads all of selfRef before writing it.
        run(inplace_phase1(tx), api::aclnnInplaceMish);
        let back = d2h::<f32>(dx, 24);
        for k in 0..24 {
            assert_eq!(back[k], mish_f32(xs[k]));
        }
        // An executor belongs to its form.
        let (rc, _, ex) = inplace_phase1(tx);
        assert_eq!(rc, ACLNN_SUCCESS);
        // SAFETY: a live executor, the default stream.
        let rc = unsafe { api::aclnnMish(null_mut(), 0, ex, null_mut()) };
        assert_fails_with(
            rc,
            ACLNN_ERR_PARAM_INVALID,
            &["launch it with aclnnInplaceMish"],
        );
        assert_released_by_failed_phase2(ex);
        for t in [tx, to, to4] {
            destroy_tensor(t);
        }
        free(dx);
        free(dout);
    });
}

#[test]
fn repeatable_in_place_executor_rebinds_self_ref_once_for_both_roles() {
    on_device(1, || {
        let t = tensor(&[2, 2], ACL_FLOAT16, null_mut());
        let (rc, ws, ex) = inplace_phase1(t);
        assert_eq!((rc, ws), (ACLNN_SUCCESS, 0));
        // SAFETY: live executor and tensor; the addresses are device allocations.
        unsafe {
            assert_eq!(api::aclSetAclOpExecutorRepeatable(ex), ACLNN_SUCCESS);
            for k in 0..3 {
                let v = [k as f64 - 1.0, 0.5, 2.0, -3.0];
                let d = malloc(8);
                h2d(d, &encode(ACL_FLOAT16, &v));
                assert_eq!(api::aclSetInputTensorAddr(ex, 0, t, d), ACLNN_SUCCESS);
                assert_eq!(
                    api::aclnnInplaceMish(null_mut(), 0, ex, null_mut()),
                    ACLNN_SUCCESS
                );
                assert_eq!(sync(null_mut()), ACL_SUCCESS);
                let got = decode(ACL_FLOAT16, &d2h::<u8>(d, 8));
                for (g, x) in got.iter().zip(v) {
                    assert_eq!(*g, f16::from_f32(mish_f32(x as f32)).to_f64(), "{x}");
                }
                free(d);
            }
            assert_eq!(
                api::aclSetOutputTensorAddr(ex, 1, t, null_mut()),
                ACLNN_ERR_PARAM_INVALID
            );
            assert_eq!(api::aclDestroyAclOpExecutor(ex), ACLNN_SUCCESS);
        }
        destroy_tensor(t);
        // An empty NCDHW-labelled selfRef: no launch, no workspace.
        let e = labelled(&[1, 0, 2, 2, 2], ACL_FLOAT, NCDHW, null_mut());
        run(inplace_phase1(e), api::aclnnInplaceMish);
        destroy_tensor(e);
    });
}

#[test]
fn nchw_f16_and_ncdhw_f32_compute_like_nd() {
    on_device(0, || {
        for (dims, dt, format) in [
            (&[2i64, 3, 2, 2][..], ACL_FLOAT16, NCHW),
            (&[1, 2, 3, 2, 2][..], ACL_FLOAT, NCDHW),
        ] {
            let xs: Vec<f64> = (0..24).map(|i| i as f64 * 0.75 - 9.0).collect();
            let bytes = encode(dt, &xs);
            let (dx, dout) = (malloc(bytes.len()), malloc(bytes.len()));
            h2d(dx, &bytes);
            let (tx, to) = (
                labelled(dims, dt, format, dx),
                labelled(dims, dt, format, dout),
            );
            run(mish_phase1(tx, to), api::aclnnMish);
            let out = decode(dt, &d2h::<u8>(dout, bytes.len()));
            for (o, &x) in out.iter().zip(&xs) {
                let want = decode(dt, &encode(dt, &[mish_f32(x as f32) as f64]))[0];
                assert_eq!(*o, want, "format {format}, x = {x}");
            }
            destroy_tensor(tx);
            destroy_tensor(to);
            free(dx);
            free(dout);
        }
    });
}
