//! aclnnAdd and aclnnInplaceAdd: the vendor's checks in order (InplaceAdd's pre-check
//! before the out-parameters), dtypes per product, alpha's rules, shapes, empty tensors,
//! and the compute chain (Axpy, alpha as a tensor of the promote, NaN alpha).

use crate::common;
use crate::opkit;
use ascend_sim::api;
use ascend_sys::*;
use common::*;
use half::{bf16, f16};
use opkit::*;
use std::ptr::null_mut;

fn add(a: *mut aclTensor, b: *mut aclTensor, alpha: *const aclScalar, out: *mut aclTensor) -> Got {
    // SAFETY: simulator handles or NULL; out-pointers from `p1`.
    p1(|ws, ex| unsafe { api::aclnnAddGetWorkspaceSize(a, b, alpha, out, ws, ex) })
}

fn add_(a: *mut aclTensor, b: *mut aclTensor, alpha: *const aclScalar) -> Got {
    // SAFETY: as above.
    p1(|ws, ex| unsafe { api::aclnnInplaceAddGetWorkspaceSize(a, b, alpha, ws, ex) })
}

#[test]
fn checks_in_order() {
    let _gate = crate::common::shared();
    on(A2);
    alpha_chain::checks_in_order(api::aclnnAddGetWorkspaceSize);
}

#[test]
fn dtypes_per_product() {
    let _gate = crate::common::shared();
    on(A2);
    let one = f64_scalar(1.0);
    let b = |d| meta(&[2], d);
    assert_eq!(
        status(add(b(ACL_BF16), b(ACL_BF16), one, b(ACL_BF16))),
        ACLNN_SUCCESS
    );
    // No product is refused; off A2/A3 BF16 is not listed.
    for d in [TRAINING, P310] {
        set_device(d);
        refused(
            add(b(ACL_BF16), b(ACL_BF16), one, b(ACL_BF16)),
            ACLNN_ERR_PARAM_INVALID,
            &["self dtype BF16"],
        );
        assert_eq!(
            status(add(b(ACL_FLOAT16), b(ACL_INT64), one, b(ACL_FLOAT16))),
            ACLNN_SUCCESS
        );
    }
}

#[test]
fn inplace_checks_shape_before_the_out_parameters() {
    let _gate = crate::common::shared();
    on(A2);
    let one = f64_scalar(1.0);
    let (x, y) = (meta(&[3], ACL_FLOAT), meta(&[2, 3], ACL_FLOAT));
    let mut ex = null_mut();
    // SAFETY: deliberate NULLs.
    unsafe {
        // A broadcast that does not give selfRef's shape beats a NULL workspaceSize.
        let rc = api::aclnnInplaceAddGetWorkspaceSize(x, y, one, null_mut(), &mut ex);
        assert_fails_with(
            rc,
            ACLNN_ERR_PARAM_INVALID,
            &["selfRef shape [3]", "[2, 3]"],
        );
        let rc = api::aclnnInplaceAddGetWorkspaceSize(null_mut(), y, one, null_mut(), &mut ex);
        assert_fails_with(rc, ACLNN_ERR_PARAM_NULLPTR, &["selfRef is nullptr"]);
        let rc = api::aclnnInplaceAddGetWorkspaceSize(y, x, one, null_mut(), &mut ex);
        assert_fails_with(rc, ACLNN_ERR_PARAM_NULLPTR, &["workspaceSize is nullptr"]);
    }
    refused(
        add_(y, x, null_mut()),
        ACLNN_ERR_PARAM_NULLPTR,
        &["alpha is nullptr"],
    );
    assert_eq!(status(add_(y, x, one)), ACLNN_SUCCESS);
}

fn bits16(v: &[f32], f: fn(f32) -> u16) -> Vec<u16> {
    v.iter().map(|&x| f(x)).collect()
}

#[test]
fn results_follow_the_vendor_chain() {
    let _gate = crate::common::shared();
    on(A2);
    // f32, alpha -0.5: Axpy in f32, two roundings.
    let (a, b) = ([1.0f32, 0.1, -3.0, 1e8], [2.0f32, 0.3, 0.7, 3.0]);
    let (ta, pa) = f32_tensor(&[4], &a);
    let (tb, _) = f32_tensor(&[4], &b);
    let (to, po) = f32_tensor(&[4], &[0.0; 4]);
    run(add(ta, tb, f64_scalar(-0.5), to), api::aclnnAdd);
    let want: Vec<f32> = a.iter().zip(&b).map(|(x, y)| x + -0.5f32 * y).collect();
    assert_eq!(d2h::<f32>(po, 4), want);
    // NaN alpha counts as 1.
    run(add(ta, tb, f64_scalar(f64::NAN), to), api::aclnnAdd);
    let want: Vec<f32> = a.iter().zip(&b).map(|(x, y)| x + y).collect();
    assert_eq!(d2h::<f32>(po, 4), want);
    // Broadcast [2, 1] + [3] into a strided out (every other element).
    let (tc, _) = f32_tensor(&[2, 1], &[10.0, 20.0]);
    let (td, _) = f32_tensor(&[3], &[1.0, 2.0, 3.0]);
    let pw = upload(&[0f32; 12]);
    let strided = tensor_view(&[2, 3], &[6, 2], 0, &[12], ACL_FLOAT, pw);
    run(add(tc, td, f64_scalar(1.0), strided), api::aclnnAdd);
    let got: Vec<f32> = d2h(pw, 12);
    assert_eq!(got, [11., 0., 12., 0., 13., 0., 21., 0., 22., 0., 23., 0.]);
    // bf16 with alpha 3: alpha as a bf16 tensor, Mul then Add, each rounded to bf16.
    let xs = [1.0f32, 0.3, 100.0];
    let ys = [0.01f32, 0.7, 1.1];
    let bf = |v: f32| bf16::from_f32(v).to_bits();
    let px = upload(&bits16(&xs, bf));
    let py = upload(&bits16(&ys, bf));
    let pz = upload(&[0u16; 3]);
    let t = |p| tensor(&[3], ACL_BF16, p);
    run(add(t(px), t(py), f64_scalar(3.0), t(pz)), api::aclnnAdd);
    let r = |v: f32| bf16::from_f32(v).to_f32();
    let want: Vec<u16> = xs
        .iter()
        .zip(&ys)
        .map(|(&x, &y)| bf(r(r(x) + r(3.0 * r(y)))))
        .collect();
    assert_eq!(d2h::<u16>(pz, 3), want);
    // f16 with alpha 2: Axpy widened to f32, one rounding.
    let hf = |v: f32| f16::from_f32(v).to_bits();
    let (hx, hy, hz) = (
        upload(&bits16(&xs, hf)),
        upload(&bits16(&ys, hf)),
        upload(&[0u16; 3]),
    );
    let t = |p| tensor(&[3], ACL_FLOAT16, p);
    run(add(t(hx), t(hy), f64_scalar(2.0), t(hz)), api::aclnnAdd);
    let w = |v: f32| f16::from_f32(v).to_f32();
    let want: Vec<u16> = xs
        .iter()
        .zip(&ys)
        .map(|(&x, &y)| hf(w(x) + 2.0 * w(y)))
        .collect();
    assert_eq!(d2h::<u16>(hz, 3), want);
    // f16 + f32 into f32 (the mixed kernel), and int32 with alpha -2, wrapping.
    let (tf, _) = f32_tensor(&[3], &[0.5, 0.25, 1.0]);
    let (tr, pr) = f32_tensor(&[3], &[0.0; 3]);
    run(add(t(hx), tf, f64_scalar(1.0), tr), api::aclnnAdd);
    let want: Vec<f32> = xs
        .iter()
        .zip([0.5f32, 0.25, 1.0])
        .map(|(&x, y)| w(x) + y)
        .collect();
    assert_eq!(d2h::<f32>(pr, 3), want);
    let pi = upload(&[i32::MAX, 5, -7]);
    let pj = upload(&[-1i32, 4, 3]);
    let ti = |p| tensor(&[3], ACL_INT32, p);
    run(
        add(ti(pi), ti(pj), scalar(-2i64, ACL_INT64), ti(pi)),
        api::aclnnAdd,
    );
    assert_eq!(d2h::<i32>(pi, 3), vec![i32::MAX.wrapping_add(2), -3, -13]);
    // In place: selfRef += alpha·other, broadcast.
    run(
        add_(ta, td_like(&[1.0, 1.0, 1.0, 1.0]), f64_scalar(0.5)),
        api::aclnnInplaceAdd,
    );
    let want: Vec<f32> = a.iter().map(|x| x + 0.5).collect();
    assert_eq!(d2h::<f32>(pa, 4), want);
}

fn td_like(v: &[f32]) -> *mut aclTensor {
    f32_tensor(&[v.len() as i64], v).0
}

#[test]
fn complex_operands_add_in_complex_arithmetic() {
    let _gate = crate::common::shared();
    on(A2);
    let c = |d: &[i64]| meta(d, ACL_COMPLEX64);
    let wide = [2, 5, 6, 3];
    assert_eq!(
        status(add(c(&[6, 3]), c(&wide), f64_scalar(1.2), c(&wide))),
        ACLNN_SUCCESS
    );
    // In place, selfRef cannot hold the broadcast shape.
    refused(
        add_(c(&[6, 3]), c(&wide), f64_scalar(1.2)),
        ACLNN_ERR_PARAM_INVALID,
        &["[2, 5, 6, 3]"],
    );
    // [1+2i, -0.5+0.25i] + (0.5−1i)·(3−1i), other broadcast; each step rounded to f32 parts.
    let (x, y) = ([1.0f32, 2.0, -0.5, 0.25], [3.0f32, -1.0]);
    let (px, py, po) = (upload(&x), upload(&y), upload(&[0f32; 4]));
    let alpha = scalar([0.5f32, -1.0], ACL_COMPLEX64);
    run(
        add(
            tensor(&[2], ACL_COMPLEX64, px),
            tensor(&[1], ACL_COMPLEX64, py),
            alpha,
            tensor(&[2], ACL_COMPLEX64, po),
        ),
        api::aclnnAdd,
    );
    // (0.5−1i)(3−1i) = 1.5 − 1 + (−0.5 − 3)i = 0.5 − 3.5i.
    assert_eq!(d2h::<f32>(po, 4), [1.5, -1.5, 0.0, -3.25]);
    // A COMPLEX128 out of a COMPLEX64 promote holds the f32 parts; a FLOAT self promotes.
    let (pf, pw) = (upload(&[0.1f32]), upload(&[0f64; 2]));
    run(
        add(
            tensor(&[1], ACL_FLOAT, pf),
            tensor(&[1], ACL_COMPLEX64, py),
            f64_scalar(1.0),
            tensor(&[1], ACL_COMPLEX128, pw),
        ),
        api::aclnnAdd,
    );
    assert_eq!(d2h::<f64>(pw, 2), [f64::from(0.1f32 + 3.0), -1.0]);
}
