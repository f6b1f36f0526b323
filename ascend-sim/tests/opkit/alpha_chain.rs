//! The phase-1 checks aclnnAdd and aclnnSub share (ops-math's `add` and `sub` run the same
//! chain), in the vendor's order, for either operator's entry point.

use super::*;
use crate::common::*;
use ascend_sys::*;
use std::ptr::null_mut;

/// An out-of-place phase 1 of the chain: `(self, other, alpha, out, workspaceSize, executor)`.
pub type AlphaPhase1 = unsafe extern "C" fn(
    *const aclTensor,
    *const aclTensor,
    *const aclScalar,
    *mut aclTensor,
    *mut u64,
    *mut *mut aclOpExecutor,
) -> aclnnStatus;

/// Asserts the chain's checks in order through `phase1` on the current (Atlas A2) device:
/// NULLs, dtypes, alpha's rules, the promote against out, shapes, empty tensors.
pub fn checks_in_order(phase1: AlphaPhase1) {
    let op = |a: *mut aclTensor, b: *mut aclTensor, alpha: *const aclScalar, out| {
        // SAFETY: simulator handles or NULL; out-pointers from `p1`.
        p1(|ws, ex| unsafe { phase1(a, b, alpha, out, ws, ex) })
    };
    let one = f64_scalar(1.0);
    let f = |d: &[i64]| meta(d, ACL_FLOAT);
    // SAFETY: deliberate NULLs.
    refuses_null_workspace_size(|ex| unsafe {
        phase1(NULL_T, NULL_T, null_mut(), NULL_T, null_mut(), ex)
    });
    refused(
        op(NULL_T, f(&[2]), one, f(&[2])),
        ACLNN_ERR_PARAM_NULLPTR,
        &["self is nullptr"],
    );
    refused(
        op(f(&[2]), NULL_T, one, f(&[2])),
        ACLNN_ERR_PARAM_NULLPTR,
        &["other is nullptr"],
    );
    refused(
        op(f(&[2]), f(&[2]), null_mut(), f(&[2])),
        ACLNN_ERR_PARAM_NULLPTR,
        &["alpha is nullptr"],
    );
    refused(
        op(f(&[2]), f(&[2]), one, NULL_T),
        ACLNN_ERR_PARAM_NULLPTR,
        &["out is nullptr"],
    );
    // self's dtype before other's; out's is not held against the list.
    let u16t = meta(&[2], ACL_UINT16);
    refused(
        op(u16t, u16t, one, f(&[2])),
        ACLNN_ERR_PARAM_INVALID,
        &["self dtype UINT16"],
    );
    refused(
        op(f(&[2]), u16t, one, f(&[2])),
        ACLNN_ERR_PARAM_INVALID,
        &["other dtype UINT16"],
    );
    let u8t = meta(&[2], ACL_UINT8);
    let i1 = scalar(1i64, ACL_INT64);
    assert_eq!(
        status(op(u8t, u8t, i1, u16t)),
        ACLNN_SUCCESS,
        "{}",
        err_msg()
    );
    // alpha: a FLOAT alpha with INT32 tensors, a FLOAT alpha with a BOOL promote.
    let i32t = meta(&[2], ACL_INT32);
    refused(
        op(i32t, i32t, one, i32t),
        ACLNN_ERR_PARAM_INVALID,
        &["alpha dtype DOUBLE"],
    );
    let bt = meta(&[2], ACL_BOOL);
    refused(
        op(bt, bt, one, bt),
        ACLNN_ERR_PARAM_INVALID,
        &["alpha dtype DOUBLE", "BOOL"],
    );
    assert_eq!(
        status(op(bt, bt, scalar(true, ACL_BOOL), bt)),
        ACLNN_SUCCESS
    );
    assert_eq!(status(op(bt, bt, i1, bt)), ACLNN_SUCCESS);
    // The promote must cast to out: f32 to INT32 no, f16 to f32 yes.
    refused(
        op(f(&[2]), f(&[2]), one, i32t),
        ACLNN_ERR_PARAM_INVALID,
        &["promote dtype FLOAT", "INT32"],
    );
    let h = meta(&[2], ACL_FLOAT16);
    assert_eq!(status(op(h, h, one, f(&[2]))), ACLNN_SUCCESS);
    // Shapes.
    refused(
        op(f(&[1; 9]), f(&[1]), one, f(&[1; 9])),
        ACLNN_ERR_PARAM_INVALID,
        &["self has 9 dims"],
    );
    refused(
        op(f(&[1]), f(&[1; 9]), one, f(&[1; 9])),
        ACLNN_ERR_PARAM_INVALID,
        &["other has 9 dims"],
    );
    refused(
        op(f(&[2]), f(&[3]), one, f(&[3])),
        ACLNN_ERR_PARAM_INVALID,
        &["can not broadcast"],
    );
    refused(
        op(f(&[2, 1]), f(&[3]), one, f(&[2, 1])),
        ACLNN_ERR_PARAM_INVALID,
        &["out shape [2, 1]", "[2, 3]"],
    );
    assert_eq!(
        status(op(f(&[2, 1]), f(&[3]), one, f(&[2, 3]))),
        ACLNN_SUCCESS
    );
    // Empty: success, workspace 0 (1 vs 0 broadcasts to 0).
    let g = op(f(&[1, 0]), f(&[3, 1]), one, f(&[3, 0]));
    assert_eq!(g.1, 0);
    assert_eq!(status(g), ACLNN_SUCCESS);
}
