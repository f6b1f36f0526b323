//! aclnnMul and aclnnInplaceMul: the vendor's checks in order, dtypes per product (out's
//! dtype checked too), the in-place form without the dim limit, empty tensors, results.

use crate::common;
use crate::opkit;
use ascend_sim::api;
use ascend_sys::*;
use common::*;
use half::bf16;
use opkit::*;
use std::ptr::null_mut;

fn mul(a: *mut aclTensor, b: *mut aclTensor, out: *mut aclTensor) -> Got {
    // SAFETY: simulator handles or NULL; out-pointers from `p1`.
    p1(|ws, ex| unsafe { api::aclnnMulGetWorkspaceSize(a, b, out, ws, ex) })
}

fn mul_(a: *mut aclTensor, b: *mut aclTensor) -> Got {
    // SAFETY: as above.
    p1(|ws, ex| unsafe { api::aclnnInplaceMulGetWorkspaceSize(a, b, ws, ex) })
}

#[test]
fn checks_in_order() {
    let _gate = crate::common::shared();
    on(A2);
    let f = |d: &[i64]| meta(d, ACL_FLOAT);
    // SAFETY: deliberate NULLs.
    refuses_null_workspace_size(|ex| unsafe {
        api::aclnnMulGetWorkspaceSize(null_mut(), null_mut(), null_mut(), null_mut(), ex)
    });
    refused(
        mul(NULL_T, f(&[2]), f(&[2])),
        ACLNN_ERR_PARAM_NULLPTR,
        &["self is nullptr"],
    );
    refused(
        mul(f(&[2]), NULL_T, f(&[2])),
        ACLNN_ERR_PARAM_NULLPTR,
        &["other is nullptr"],
    );
    refused(
        mul(f(&[2]), f(&[2]), NULL_T),
        ACLNN_ERR_PARAM_NULLPTR,
        &["out is nullptr"],
    );
    let u16t = meta(&[2], ACL_UINT16);
    refused(
        mul(u16t, f(&[2]), f(&[2])),
        ACLNN_ERR_PARAM_INVALID,
        &["self dtype UINT16"],
    );
    refused(
        mul(f(&[2]), u16t, f(&[2])),
        ACLNN_ERR_PARAM_INVALID,
        &["other dtype UINT16"],
    );
    // Unlike Add, out's dtype is held against the list.
    let u8t = meta(&[2], ACL_UINT8);
    refused(
        mul(u8t, u8t, u16t),
        ACLNN_ERR_PARAM_INVALID,
        &["out dtype UINT16"],
    );
    refused(
        mul(f(&[2]), f(&[2]), meta(&[2], ACL_INT64)),
        ACLNN_ERR_PARAM_INVALID,
        &["can not cast to out"],
    );
    refused(
        mul(f(&[1; 9]), f(&[1]), f(&[1; 9])),
        ACLNN_ERR_PARAM_INVALID,
        &["self has 9 dims"],
    );
    refused(
        mul(f(&[2, 3]), f(&[2]), f(&[2, 3])),
        ACLNN_ERR_PARAM_INVALID,
        &["can not broadcast"],
    );
    refused(
        mul(f(&[3]), f(&[2, 1]), f(&[3])),
        ACLNN_ERR_PARAM_INVALID,
        &["out shape [3]"],
    );
    let g = mul(f(&[0, 3]), f(&[3]), f(&[0, 3]));
    assert_eq!(g.1, 0);
    assert_eq!(status(g), ACLNN_SUCCESS);
    for d in [TRAINING, P310] {
        set_device(d);
        let b = meta(&[2], ACL_BF16);
        refused(mul(b, b, b), ACLNN_ERR_PARAM_INVALID, &["self dtype BF16"]);
        assert_eq!(status(mul(f(&[2]), f(&[2]), f(&[2]))), ACLNN_SUCCESS);
    }
}

#[test]
fn inplace_has_no_dim_limit_and_checks_against_selfref() {
    let _gate = crate::common::shared();
    on(A2);
    let f = |d: &[i64]| meta(d, ACL_FLOAT);
    refused(
        mul_(NULL_T, f(&[2])),
        ACLNN_ERR_PARAM_NULLPTR,
        &["selfRef is nullptr"],
    );
    refused(
        mul_(f(&[2]), NULL_T),
        ACLNN_ERR_PARAM_NULLPTR,
        &["other is nullptr"],
    );
    assert_eq!(
        status(mul_(f(&[1; 10]), f(&[1]))),
        ACLNN_SUCCESS,
        "{}",
        err_msg()
    );
    refused(
        mul_(f(&[3]), f(&[2, 3])),
        ACLNN_ERR_PARAM_INVALID,
        &["selfRef shape [3]"],
    );
    refused(
        mul_(meta(&[2], ACL_INT32), f(&[2])),
        ACLNN_ERR_PARAM_INVALID,
        &["can not cast to selfRef"],
    );
}

#[test]
fn results() {
    let _gate = crate::common::shared();
    on(A2);
    let (ta, _) = f32_tensor(&[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 0.1]);
    let (tb, _) = f32_tensor(&[3], &[0.5, -1.0, 0.3]);
    let (to, po) = f32_tensor(&[2, 3], &[0.0; 6]);
    run(mul(ta, tb, to), api::aclnnMul);
    let want = [0.5f32, -2.0, 3.0 * 0.3, 2.0, -5.0, 0.1f32 * 0.3];
    assert_eq!(d2h::<f32>(po, 6), want);
    // A transposed view as other: [[1, 2], [3, 4]]ᵀ.
    let tt = tensor_view(
        &[2, 2],
        &[1, 2],
        0,
        &[4],
        ACL_FLOAT,
        upload(&[1f32, 2., 3., 4.]),
    );
    let (tq, pq) = f32_tensor(&[2, 2], &[1.0; 4]);
    run(mul_(tq, tt), api::aclnnInplaceMul);
    assert_eq!(d2h::<f32>(pq, 4), [1., 3., 2., 4.]);
    // bf16 · bf16, rounded once to bf16; int8 wraps; bool is a logical and.
    let r = |v: f32| bf16::from_f32(v);
    let pb = upload(&[r(1.1).to_bits(), r(3.3).to_bits()]);
    let pc = upload(&[r(2.7).to_bits(), r(-0.9).to_bits()]);
    let pz = upload(&[0u16; 2]);
    let t = |p| tensor(&[2], ACL_BF16, p);
    run(mul(t(pb), t(pc), t(pz)), api::aclnnMul);
    let want = [
        r(r(1.1).to_f32() * r(2.7).to_f32()).to_bits(),
        r(r(3.3).to_f32() * r(-0.9).to_f32()).to_bits(),
    ];
    assert_eq!(d2h::<u16>(pz, 2), want);
    let pi = upload(&[100i8, -3]);
    let ti = tensor(&[2], ACL_INT8, pi);
    run(
        mul_(ti, tensor(&[2], ACL_INT8, upload(&[3i8, 5]))),
        api::aclnnInplaceMul,
    );
    assert_eq!(d2h::<i8>(pi, 2), vec![44, -15]);
    let pl = upload(&[1u8, 1, 0]);
    let tl = tensor(&[3], ACL_BOOL, pl);
    run(
        mul_(tl, tensor(&[3], ACL_BOOL, upload(&[1u8, 0, 1]))),
        api::aclnnInplaceMul,
    );
    assert_eq!(d2h::<u8>(pl, 3), vec![1, 0, 0]);
}

#[test]
fn complex_operands_multiply_in_complex_arithmetic() {
    let _gate = crate::common::shared();
    on(A2);
    let c = || meta(&[2, 3], ACL_COMPLEX64);
    assert_eq!(status(mul(c(), c(), c())), ACLNN_SUCCESS);
    // (1+2i)(3−1i) = 5 + 5i; (−0.5+0.25i)(3−1i) = −1.25 + 1.25i.
    let (x, y) = ([1.0f32, 2.0, -0.5, 0.25], [3.0f32, -1.0]);
    let (px, py, po, pr) = (
        upload(&x),
        upload(&y),
        upload(&[0f32; 4]),
        upload(&[0f32; 2]),
    );
    let t = |d: &[i64], p| tensor(d, ACL_COMPLEX64, p);
    run(mul(t(&[2], px), t(&[1], py), t(&[2], po)), api::aclnnMul);
    assert_eq!(d2h::<f32>(po, 4), [5.0, 5.0, -1.25, 1.25]);
    // A complex promote does not cast to a real out.
    refused(
        mul(t(&[2], px), t(&[1], py), tensor(&[2], ACL_FLOAT, pr)),
        ACLNN_ERR_PARAM_INVALID,
        &["COMPLEX64 can not cast to out dtype FLOAT"],
    );
    run(mul_(t(&[2], px), t(&[1], py)), api::aclnnInplaceMul);
    assert_eq!(d2h::<f32>(px, 4), [5.0, 5.0, -1.25, 1.25]);
}
