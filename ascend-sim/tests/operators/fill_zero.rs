//! aclnnInplaceZero and aclnnInplaceFillScalar: the vendor's checks in order, dtypes per
//! product, empty tensors, strided views, and the scalar's conversion.

use crate::common;
use crate::opkit;
use ascend_sim::api;
use ascend_sys::*;
use common::*;
use half::{bf16, f16};
use opkit::*;
use std::ptr::null_mut;

fn zero(t: *mut aclTensor) -> Got {
    // SAFETY: simulator handles or NULL; out-pointers from `p1`.
    p1(|ws, ex| unsafe { api::aclnnInplaceZeroGetWorkspaceSize(t, ws, ex) })
}

fn fill(t: *mut aclTensor, v: *const aclScalar) -> Got {
    // SAFETY: as above.
    p1(|ws, ex| unsafe { api::aclnnInplaceFillScalarGetWorkspaceSize(t, v, ws, ex) })
}

#[test]
fn zero_checks_in_order() {
    let _gate = crate::common::shared();
    on(A2);
    let t = meta(&[2], ACL_FLOAT);
    // SAFETY: deliberate NULLs.
    refuses_null_workspace_size(|ex| unsafe {
        api::aclnnInplaceZeroGetWorkspaceSize(null_mut(), null_mut(), ex)
    });
    refused(
        zero(NULL_T),
        ACLNN_ERR_PARAM_NULLPTR,
        &["selfRef is nullptr"],
    );
    refused(
        zero(meta(&[2], ACL_UINT32)),
        ACLNN_ERR_PARAM_INVALID,
        &["selfRef dtype UINT32"],
    );
    refused(
        zero(meta(&[2], ACL_STRING)),
        ACLNN_ERR_PARAM_INVALID,
        &["STRING"],
    );
    // BF16 everywhere; no dim limit; empty: workspace 0.
    for d in [A2, TRAINING, P310] {
        set_device(d);
        assert_eq!(
            status(zero(meta(&[2], ACL_BF16))),
            ACLNN_SUCCESS,
            "{}",
            err_msg()
        );
    }
    set_device(A2);
    assert_eq!(status(zero(meta(&[1; 12], ACL_FLOAT))), ACLNN_SUCCESS);
    let g = zero(meta(&[3, 0], ACL_INT32));
    assert_eq!(g.1, 0);
    assert_eq!(status(g), ACLNN_SUCCESS);
    destroy_tensor(t);
}

#[test]
fn zero_writes_only_the_view() {
    let _gate = crate::common::shared();
    on(A2);
    let v: Vec<f32> = (1..=12).map(|k| k as f32).collect();
    let p = upload(&v);
    // Every other column of a 3x4 row-major matrix.
    let t = tensor_view(&[3, 2], &[4, 2], 1, &[12], ACL_FLOAT, p);
    run(zero(t), api::aclnnInplaceZero);
    let got: Vec<f32> = d2h(p, 12);
    let want = [1., 0., 3., 0., 5., 0., 7., 0., 9., 0., 11., 0.];
    assert_eq!(got, want);
    // Complex and bool too.
    let c = upload(&[7u8; 32]);
    run(zero(tensor(&[2], ACL_COMPLEX128, c)), api::aclnnInplaceZero);
    assert_eq!(d2h::<u8>(c, 32), vec![0u8; 32]);
}

#[test]
fn fill_checks_in_order() {
    let _gate = crate::common::shared();
    on(A2);
    let s = f64_scalar(1.0);
    // SAFETY: deliberate NULLs.
    refuses_null_workspace_size(|ex| unsafe {
        api::aclnnInplaceFillScalarGetWorkspaceSize(null_mut(), null_mut(), null_mut(), ex)
    });
    refused(
        fill(NULL_T, s),
        ACLNN_ERR_PARAM_NULLPTR,
        &["selfRef is nullptr"],
    );
    refused(
        fill(meta(&[2], ACL_FLOAT), null_mut()),
        ACLNN_ERR_PARAM_NULLPTR,
        &["value is nullptr"],
    );
    // UINT16 is listed on A2 but does not promote with an INT64 scalar.
    let i = scalar(3i64, ACL_INT64);
    refused(
        fill(meta(&[2], ACL_UINT16), i),
        ACLNN_ERR_PARAM_INVALID,
        &["can not promote"],
    );
    assert_eq!(
        status(fill(meta(&[2], ACL_UINT16), scalar(3u16, ACL_UINT16))),
        ACLNN_SUCCESS
    );
    // The dtype check comes before promotion: off A2/A3 UINT16 and BF16 are not listed.
    for d in [TRAINING, P310] {
        set_device(d);
        refused(
            fill(meta(&[2], ACL_UINT16), i),
            ACLNN_ERR_PARAM_INVALID,
            &["selfRef dtype UINT16"],
        );
        refused(
            fill(meta(&[2], ACL_BF16), s),
            ACLNN_ERR_PARAM_INVALID,
            &["BF16"],
        );
        assert_eq!(status(fill(meta(&[2], ACL_FLOAT16), s)), ACLNN_SUCCESS);
    }
    set_device(A2);
    assert_eq!(status(fill(meta(&[2], ACL_BF16), s)), ACLNN_SUCCESS);
    refused(
        fill(meta(&[1; 9], ACL_FLOAT), s),
        ACLNN_ERR_PARAM_INVALID,
        &["9 dims"],
    );
    let g = fill(meta(&[0, 4], ACL_FLOAT), s);
    assert_eq!(g.1, 0);
    assert_eq!(status(g), ACLNN_SUCCESS);
    // A destroyed scalar is a stale handle.
    let gone = f64_scalar(2.0);
    destroy_scalar(gone);
    refused(
        fill(meta(&[2], ACL_FLOAT), gone),
        ACLNN_ERR_PARAM_INVALID,
        &["aclScalar handle", "stale"],
    );
    destroy_scalar(s);
    destroy_scalar(i);
}

#[test]
fn fill_converts_the_value_once_and_keeps_it_from_phase_1() {
    let _gate = crate::common::shared();
    on(A2);
    let p = upload(&[0f32; 6]);
    let t = tensor_view(&[2, 2], &[3, 1], 1, &[6], ACL_FLOAT, p);
    let s = f64_scalar(0.1);
    let g = fill(t, s);
    // Destroyed between the phases: the value was taken at phase 1.
    destroy_scalar(s);
    run(g, api::aclnnInplaceFillScalar);
    let got: Vec<f32> = d2h(p, 6);
    assert_eq!(got, [0., 0.1, 0.1, 0., 0.1, 0.1]);
    // f64 0.1 to f16 and bf16: one rounding to nearest even.
    let h = upload(&[0u16; 3]);
    let s = f64_scalar(0.1);
    run(
        fill(tensor(&[3], ACL_FLOAT16, h), s),
        api::aclnnInplaceFillScalar,
    );
    assert_eq!(d2h::<u16>(h, 3), vec![f16::from_f64(0.1).to_bits(); 3]);
    run(
        fill(tensor(&[3], ACL_BF16, h), s),
        api::aclnnInplaceFillScalar,
    );
    assert_eq!(d2h::<u16>(h, 3), vec![bf16::from_f64(0.1).to_bits(); 3]);
    // A float value into an integer tensor truncates toward zero; bool reads nonzero.
    let i = upload(&[0i32; 2]);
    run(
        fill(tensor(&[2], ACL_INT32, i), f64_scalar(-2.7)),
        api::aclnnInplaceFillScalar,
    );
    assert_eq!(d2h::<i32>(i, 2), vec![-2, -2]);
    let b = upload(&[0u8; 2]);
    run(
        fill(tensor(&[2], ACL_BOOL, b), scalar(5i32, ACL_INT32)),
        api::aclnnInplaceFillScalar,
    );
    assert_eq!(d2h::<u8>(b, 2), vec![1, 1]);
    // A 0-D tensor has one element.
    let z = upload(&[0f32]);
    run(
        fill(tensor(&[], ACL_FLOAT, z), scalar(3.5f32, ACL_FLOAT)),
        api::aclnnInplaceFillScalar,
    );
    assert_eq!(d2h::<f32>(z, 1), vec![3.5]);
}
