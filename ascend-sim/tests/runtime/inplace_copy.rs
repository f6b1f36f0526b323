//! aclnnInplaceCopy: the vendor's checks in order, and the chain contiguous(src) -> cast
//! (round to nearest even) -> broadcast -> copy into selfRef's view, for float, integer,
//! bool, complex and FP8 tensors, overlapping or not.

use crate::common;
use ascend_sim::api;
use ascend_sys::*;
use common::*;
use half::{bf16, f16};
use std::ffi::c_void;
use std::ptr::null_mut;

const FP8_E4M3FN: i32 = 36;
const FP8_E5M2: i32 = 35;

fn copy_phase1(dst: *mut aclTensor, src: *mut aclTensor) -> (i32, u64, *mut aclOpExecutor) {
    let (mut ws, mut ex) = (0u64, null_mut());
    // SAFETY: simulator handles or NULL; valid out-pointers.
    let rc = unsafe { api::aclnnInplaceCopyGetWorkspaceSize(dst, src, &mut ws, &mut ex) };
    (rc, ws, ex)
}

/// Phase 1 (asserted to succeed) and phase 2 on the default stream.
fn copy(dst: *mut aclTensor, src: *mut aclTensor) -> u64 {
    let (rc, ws, ex) = copy_phase1(dst, src);
    assert_eq!(rc, ACLNN_SUCCESS, "{}", err_msg());
    let w = if ws > 0 {
        malloc(ws as usize)
    } else {
        null_mut()
    };
    // SAFETY: executor of phase 1, a workspace of its size, the default stream.
    let rc = unsafe { api::aclnnInplaceCopy(w, ws, ex, null_mut()) };
    assert_eq!(rc, ACLNN_SUCCESS, "{}", err_msg());
    assert_eq!(sync(null_mut()), ACL_SUCCESS, "{}", err_msg());
    if !w.is_null() {
        free(w);
    }
    ws
}

/// Phase 1 on metadata-only tensors; returns (status, ws, text) and cleans up.
fn check(dst: (&[i64], i32), src: (&[i64], i32)) -> (i32, u64, String) {
    let (td, ts) = (
        tensor(dst.0, dst.1, null_mut()),
        tensor(src.0, src.1, null_mut()),
    );
    let (rc, ws, ex) = copy_phase1(td, ts);
    let msg = if rc == ACLNN_SUCCESS {
        // SAFETY: executor from phase 1.
        assert_eq!(unsafe { api::aclDestroyAclOpExecutor(ex) }, ACLNN_SUCCESS);
        String::new()
    } else {
        err_msg()
    };
    destroy_tensor(td);
    destroy_tensor(ts);
    (rc, ws, msg)
}

fn upload<T: Copy>(v: &[T]) -> *mut c_void {
    let p = malloc(std::mem::size_of_val(v).max(1));
    h2d(p, v);
    p
}

#[test]
fn checks_come_in_the_vendors_order() {
    let _gate = crate::common::shared();
    setup();
    let t = tensor(&[2], ACL_FLOAT, null_mut());
    let mut ex = null_mut();
    let mut ws = 0u64;
    // SAFETY: NULLs are deliberate; the other arguments are valid.
    unsafe {
        let rc = api::aclnnInplaceCopyGetWorkspaceSize(null_mut(), null_mut(), null_mut(), &mut ex);
        assert_fails_with(rc, ACLNN_ERR_PARAM_NULLPTR, &["workspaceSize is nullptr"]);
        let rc = api::aclnnInplaceCopyGetWorkspaceSize(null_mut(), t, &mut ws, &mut ex);
        assert_fails_with(rc, ACLNN_ERR_PARAM_NULLPTR, &["selfRef is nullptr"]);
        let rc = api::aclnnInplaceCopyGetWorkspaceSize(t, null_mut(), &mut ws, &mut ex);
        assert_fails_with(rc, ACLNN_ERR_PARAM_NULLPTR, &["src is nullptr"]);
    }
    destroy_tensor(t);
    let accepted = [
        2, 3, 9, 4, 6, 7, 8, 10, 1, 0, 27, 11, 12, 16, 17, 34, 35, 36, 37,
    ];
    for dt in [
        -1, 0, 1, 2, 3, 4, 6, 7, 8, 9, 10, 11, 12, 13, 16, 17, 27, 29, 30, 33, 34, 35, 36, 37, 38,
        39, 40, 41,
    ] {
        let (rc, ws, msg) = check((&[2, 3], dt), (&[2, 3], dt));
        if accepted.contains(&dt) {
            assert_eq!((rc, ws), (ACLNN_SUCCESS, 0), "dtype {dt}: {msg}");
        } else {
            assert_eq!(rc, ACLNN_ERR_PARAM_INVALID, "dtype {dt}");
            assert!(msg.contains("selfRef dtype"), "{msg}");
        }
    }
    let (_, _, msg) = check((&[3], ACL_FLOAT), (&[3], ACL_STRING));
    assert!(msg.contains("src dtype STRING"), "{msg}");
    let nine: &[i64] = &[1, 1, 1, 1, 1, 1, 1, 1, 2];
    let (rc, _, msg) = check((nine, ACL_FLOAT), (&[9], ACL_STRING));
    assert_eq!(rc, ACLNN_ERR_PARAM_INVALID);
    assert!(msg.contains("src dtype"), "dtypes before dims: {msg}");
    let (_, _, msg) = check((nine, ACL_FLOAT), (&[2], ACL_FLOAT));
    assert!(msg.contains("selfRef has 9 dims"), "{msg}");
    let f = ACL_FLOAT;
    for (dst, src, ok) in [
        (&[2i64, 3][..], &[3i64][..], true),
        (&[2, 3], &[2, 1], true),
        (&[2, 3], &[], true),
        (&[3], &[2, 3], false),
        (&[2, 3], &[4], false),
        (&[1, 3], &[2, 3], false),
    ] {
        let (rc, ws, msg) = check((dst, f), (src, f));
        if ok {
            assert_eq!(rc, ACLNN_SUCCESS, "{src:?} -> {dst:?}: {msg}");
            assert!(ws > 0, "a broadcast src goes through the workspace");
        } else {
            assert_eq!(rc, ACLNN_ERR_PARAM_INVALID, "{src:?} -> {dst:?}");
            assert!(msg.contains("can not broadcast to selfRef shape"), "{msg}");
        }
    }
    // Empty: success, no workspace, even with a cast; a cast the simulator lacks is said.
    assert_eq!(
        check((&[0, 3], ACL_INT8), (&[3], FP8_E5M2)).0,
        ACLNN_SUCCESS
    );
    let (rc, _, msg) = check((&[3], ACL_FLOAT), (&[3], FP8_E5M2));
    assert_eq!(rc, ACLNN_ERR_INNER);
    assert!(
        msg.contains("does not model a cast from FLOAT8_E5M2 to FLOAT"),
        "{msg}"
    );
}

#[test]
fn float_casts_round_to_nearest_even_with_broadcast_into_a_strided_view() {
    let _gate = crate::common::shared();
    setup();
    // Ties and near-ties for f16 and bf16, and values that overflow f16.
    let src: Vec<f32> = vec![
        1.0 + 2f32.powi(-11),
        1.0 + 3.0 * 2f32.powi(-11),
        1.0 + 2f32.powi(-8),
        -(1.0 + 3.0 * 2f32.powi(-8)),
        70000.0,
        f32::NAN,
    ];
    let ds = upload(&src);
    let ts = tensor(&[6], ACL_FLOAT, ds);
    for (dt, enc) in [
        (
            ACL_FLOAT16,
            (|x: f32| f16::from_f32(x).to_bits()) as fn(f32) -> u16,
        ),
        (ACL_BF16, |x: f32| bf16::from_f32(x).to_bits()),
    ] {
        // selfRef: [2, 6] at stride [14, 2], offset 1, in a 28-element buffer.
        let dd = upload(&[0u16; 28]);
        let td = tensor_view(&[2, 6], &[14, 2], 1, &[28], dt, dd);
        assert!(copy(td, ts) > 0);
        let out = d2h::<u16>(dd, 28);
        for r in 0..2 {
            for c in 0..6 {
                assert_eq!(
                    out[1 + 14 * r + 2 * c],
                    enc(src[c]),
                    "dtype {dt} [{r}, {c}]"
                );
            }
        }
        let touched: Vec<usize> = (0..2)
            .flat_map(|r| (0..6).map(move |c| 1 + 14 * r + 2 * c))
            .collect();
        for (k, &v) in out.iter().enumerate() {
            if !touched.contains(&k) {
                assert_eq!(v, 0, "element {k} is outside the view");
            }
        }
        // And back to f32, exactly.
        let back = malloc(24);
        let tb = tensor(&[6], ACL_FLOAT, back);
        let row = tensor_view(&[6], &[2], 1, &[28], dt, dd);
        copy(tb, row);
        let got = d2h::<f32>(back, 6);
        for c in 0..6 {
            let want = if dt == ACL_FLOAT16 {
                f16::from_bits(enc(src[c])).to_f32()
            } else {
                bf16::from_bits(enc(src[c])).to_f32()
            };
            assert!(got[c] == want || (got[c].is_nan() && want.is_nan()), "{c}");
        }
        for t in [td, tb, row] {
            destroy_tensor(t);
        }
        free(dd);
        free(back);
    }
    destroy_tensor(ts);
    free(ds);
}

#[test]
fn f16_to_bf16_and_same_dtype_copies_of_transposed_views() {
    let _gate = crate::common::shared();
    setup();
    let xs: Vec<f16> = (0..12)
        .map(|i| f16::from_f32(i as f32 * 1.375 - 7.0))
        .collect();
    let dx = upload(&xs);
    // src: the [4, 3] transpose of a [3, 4] buffer.
    let tx = tensor_view(&[4, 3], &[1, 4], 0, &[3, 4], ACL_FLOAT16, dx);
    let (d16, dbf) = (malloc(24), malloc(24));
    let (t16, tbf) = (
        tensor(&[4, 3], ACL_FLOAT16, d16),
        tensor(&[4, 3], ACL_BF16, dbf),
    );
    copy(t16, tx);
    copy(tbf, tx);
    let (a, b) = (d2h::<u16>(d16, 12), d2h::<u16>(dbf, 12));
    for i in 0..4 {
        for j in 0..3 {
            let x = xs[i + 4 * j];
            assert_eq!(a[i * 3 + j], x.to_bits());
            assert_eq!(b[i * 3 + j], bf16::from_f32(x.to_f32()).to_bits());
        }
    }
    for t in [tx, t16, tbf] {
        destroy_tensor(t);
    }
    for p in [dx, d16, dbf] {
        free(p);
    }
}

#[test]
fn overlapping_src_and_self_ref_read_everything_first() {
    let _gate = crate::common::shared();
    setup();
    let v: Vec<i32> = (0..8).collect();
    let d = upload(&v);
    let all = tensor(&[8], ACL_INT32, d);
    let reversed = tensor_view(&[8], &[-1], 7, &[8], ACL_INT32, d);
    copy(all, reversed);
    assert_eq!(d2h::<i32>(d, 8), (0..8).rev().collect::<Vec<_>>());
    destroy_tensor(all);
    destroy_tensor(reversed);
    free(d);
}

#[test]
fn integer_bool_complex_and_fp8_copies() {
    let _gate = crate::common::shared();
    setup();
    let f = [-2.7f32, 300.5, 0.0, f32::NAN];
    let df = upload(&f);
    let tf = tensor(&[4], ACL_FLOAT, df);
    let (di, db, du) = (malloc(32), malloc(4), malloc(4));
    let (ti, tb, tu) = (
        tensor(&[4], ACL_INT64, di),
        tensor(&[4], ACL_BOOL, db),
        tensor(&[4], ACL_UINT8, du),
    );
    copy(ti, tf);
    copy(tb, tf);
    copy(tu, ti);
    assert_eq!(d2h::<i64>(di, 4), [-2, 300, 0, 0]);
    assert_eq!(d2h::<u8>(db, 4), [1, 1, 0, 1]);
    assert_eq!(d2h::<u8>(du, 4), [254, 44, 0, 0]);
    // INT64 -> FLOAT rounds once, to nearest even.
    let big = [(1i64 << 40) + 1, -(1i64 << 62) - 1];
    let dbig = upload(&big);
    let tbig = tensor(&[2], ACL_INT64, dbig);
    let tf2 = tensor(&[2], ACL_FLOAT, df);
    copy(tf2, tbig);
    assert_eq!(d2h::<f32>(df, 2), [big[0] as f32, big[1] as f32]);
    // COMPLEX64 -> FLOAT keeps the real part; FLOAT -> COMPLEX128 adds a zero imaginary.
    let c = [1.5f32, -4.0, -0.25, 9.0];
    let dc = upload(&c);
    let tc = tensor(&[2], ACL_COMPLEX64, dc);
    copy(tf2, tc);
    assert_eq!(d2h::<f32>(df, 2), [1.5, -0.25]);
    let dz = malloc(32);
    let tz = tensor(&[2], ACL_COMPLEX128, dz);
    copy(tz, tf2);
    assert_eq!(d2h::<f64>(dz, 4), [1.5, 0.0, -0.25, 0.0]);
    // FP8 to FP8: the bytes, broadcast.
    let b8 = [0x38u8, 0xC1];
    let d8 = upload(&b8);
    let t8 = tensor(&[1, 2], FP8_E4M3FN, d8);
    let dout8 = malloc(6);
    let tout8 = tensor(&[3, 2], FP8_E4M3FN, dout8);
    copy(tout8, t8);
    assert_eq!(d2h::<u8>(dout8, 6), [0x38, 0xC1, 0x38, 0xC1, 0x38, 0xC1]);
    for t in [tf, ti, tb, tu, tbig, tf2, tc, tz, t8, tout8] {
        destroy_tensor(t);
    }
    for p in [df, di, db, du, dbig, dc, dz, d8, dout8] {
        free(p);
    }
}

#[test]
fn a_repeatable_copy_rebinds_src_and_self_ref() {
    let _gate = crate::common::shared();
    setup();
    let t_dst = tensor(&[3], ACL_FLOAT, null_mut());
    let t_src = tensor(&[3], ACL_FLOAT16, null_mut());
    let (rc, ws, ex) = copy_phase1(t_dst, t_src);
    assert_eq!(rc, ACLNN_SUCCESS);
    let w = malloc(ws as usize);
    // SAFETY: live executor and tensors; device addresses from aclrtMalloc.
    unsafe {
        assert_eq!(api::aclSetAclOpExecutorRepeatable(ex), ACLNN_SUCCESS);
        for k in 0..2 {
            let src: Vec<f16> = (0..3)
                .map(|i| f16::from_f32((i + k) as f32 * 0.5))
                .collect();
            let (ds, dd) = (upload(&src), malloc(12));
            assert_eq!(api::aclSetInputTensorAddr(ex, 1, t_src, ds), ACLNN_SUCCESS);
            assert_eq!(api::aclSetOutputTensorAddr(ex, 0, t_dst, dd), ACLNN_SUCCESS);
            assert_eq!(api::aclnnInplaceCopy(w, ws, ex, null_mut()), ACLNN_SUCCESS);
            assert_eq!(sync(null_mut()), ACL_SUCCESS);
            let got = d2h::<f32>(dd, 3);
            assert_eq!(got, [0, 1, 2].map(|i| src[i].to_f32()));
            free(ds);
            free(dd);
        }
        assert_eq!(
            api::aclSetInputTensorAddr(ex, 2, t_src, w),
            ACLNN_ERR_PARAM_INVALID
        );
        assert_err_msg_contains(&["InplaceCopy has inputs 0 (selfRef), 1 (src)"]);
        assert_eq!(api::aclDestroyAclOpExecutor(ex), ACLNN_SUCCESS);
    }
    free(w);
    destroy_tensor(t_dst);
    destroy_tensor(t_src);
}
