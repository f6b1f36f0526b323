//! aclnnAddmm: the vendor's checks in order (beta before alpha), the cube rule, self's
//! broadcast, out's two compared dims, cubeMathType 4, empty tensors, and the graph paths
//! (alpha 0 and beta 0 never read their operand; the fused bias row).

use crate::common;
use crate::opkit;
use ascend_sim::api;
use ascend_sys::*;
use common::*;
use opkit::*;
use std::ptr::null_mut;

#[allow(clippy::too_many_arguments)]
fn addmm(
    s: *mut aclTensor,
    a: *mut aclTensor,
    b: *mut aclTensor,
    beta: *const aclScalar,
    alpha: *const aclScalar,
    out: *mut aclTensor,
    cmt: i8,
) -> Got {
    // SAFETY: simulator handles or NULL; out-pointers from `p1`.
    p1(|ws, ex| unsafe { api::aclnnAddmmGetWorkspaceSize(s, a, b, beta, alpha, out, cmt, ws, ex) })
}

#[test]
fn checks_in_order() {
    let _gate = crate::common::shared();
    on(A2);
    let one = f64_scalar(1.0);
    let f = |d: &[i64]| meta(d, ACL_FLOAT);
    let (a, b, o) = (f(&[2, 3]), f(&[3, 4]), f(&[2, 4]));
    // SAFETY: deliberate NULLs.
    refuses_null_workspace_size(|ex| unsafe {
        api::aclnnAddmmGetWorkspaceSize(null_mut(), a, b, one, one, o, 0, null_mut(), ex)
    });
    refused(
        addmm(NULL_T, a, b, one, one, o, 0),
        ACLNN_ERR_PARAM_NULLPTR,
        &["self is nullptr"],
    );
    refused(
        addmm(f(&[4]), NULL_T, b, one, one, o, 0),
        ACLNN_ERR_PARAM_NULLPTR,
        &["mat1 is nullptr"],
    );
    refused(
        addmm(f(&[4]), a, NULL_T, one, one, o, 0),
        ACLNN_ERR_PARAM_NULLPTR,
        &["mat2 is nullptr"],
    );
    refused(
        addmm(f(&[4]), a, b, null_mut(), null_mut(), o, 0),
        ACLNN_ERR_PARAM_NULLPTR,
        &["beta is nullptr"],
    );
    refused(
        addmm(f(&[4]), a, b, one, null_mut(), o, 0),
        ACLNN_ERR_PARAM_NULLPTR,
        &["alpha is nullptr"],
    );
    refused(
        addmm(f(&[4]), a, b, one, one, NULL_T, 0),
        ACLNN_ERR_PARAM_NULLPTR,
        &["out is nullptr"],
    );
    // Rule check, self's dtype too; scalars' dtypes never checked.
    let i = meta(&[4], ACL_INT32);
    refused(
        addmm(i, a, b, one, one, o, 0),
        ACLNN_ERR_PARAM_INVALID,
        &["self: dtype INT32"],
    );
    let weird = scalar(3u16, ACL_UINT16);
    assert_eq!(
        status(addmm(f(&[4]), a, b, weird, weird, o, 0)),
        ACLNN_SUCCESS
    );
    // Shapes.
    refused(
        addmm(f(&[4]), f(&[2, 3, 1]), b, one, one, o, 0),
        ACLNN_ERR_PARAM_INVALID,
        &["must be 2-D"],
    );
    refused(
        addmm(f(&[4]), f(&[2, 2]), b, one, one, o, 0),
        ACLNN_ERR_PARAM_INVALID,
        &["mat1[1] == mat2[0]"],
    );
    refused(
        addmm(f(&[1, 2, 4]), a, b, one, one, o, 0),
        ACLNN_ERR_PARAM_INVALID,
        &["broadcast to [2, 4]"],
    );
    refused(
        addmm(f(&[3]), a, b, one, one, o, 0),
        ACLNN_ERR_PARAM_INVALID,
        &["broadcast to [2, 4]"],
    );
    assert_eq!(
        status(addmm(f(&[2, 1]), a, b, one, one, o, 0)),
        ACLNN_SUCCESS
    );
    // A 0-D self needs a storage dim.
    refused(
        addmm(f(&[]), a, b, one, one, o, 0),
        ACLNN_ERR_PARAM_INVALID,
        &["storage []"],
    );
    let s0 = tensor_view(&[], &[], 0, &[1], ACL_FLOAT, null_mut());
    assert_eq!(status(addmm(s0, a, b, one, one, o, 0)), ACLNN_SUCCESS);
    refused(
        addmm(f(&[4]), a, b, one, one, f(&[4, 2]), 0),
        ACLNN_ERR_PARAM_INVALID,
        &["out shape [4, 2]"],
    );
    // A self stored FRACTAL_NZ is refused after the matrices' shapes.
    let dims = [4i64];
    // SAFETY: live slices of the stated lengths.
    let nz = unsafe {
        api::aclCreateTensor(
            dims.as_ptr(),
            1,
            ACL_FLOAT,
            dims.as_ptr(),
            0,
            ACL_FORMAT_FRACTAL_NZ,
            dims.as_ptr(),
            1,
            null_mut(),
        )
    };
    refused(
        addmm(nz, f(&[2, 2]), b, one, one, o, 0),
        ACLNN_ERR_PARAM_INVALID,
        &["mat1[1] == mat2[0]"],
    );
    refused(
        addmm(nz, a, b, one, one, o, 0),
        ACLNN_ERR_PARAM_INVALID,
        &["self stored FRACTAL_NZ"],
    );
    // Only out's dims 0 and 1 are compared; the ViewCopy then refuses the third.
    refused(
        addmm(f(&[4]), a, b, one, one, f(&[2, 4, 1]), 0),
        ACLNN_ERR_INNER_NULLPTR,
        &["ViewCopy"],
    );
    refused(
        addmm(f(&[4]), a, b, one, one, o, 5),
        ACLNN_ERR_PARAM_INVALID,
        &["cubeMathType 5"],
    );
    assert_eq!(status(addmm(f(&[4]), a, b, one, one, o, 4)), ACLNN_SUCCESS);
    // mat1[0] == 0: out must be empty; then success with workspace 0.
    let a0 = f(&[0, 3]);
    refused(
        addmm(f(&[4]), a0, b, one, one, o, 0),
        ACLNN_ERR_PARAM_INVALID,
        &["out shape [2, 4]"],
    );
    let g = addmm(f(&[4]), a0, b, one, one, f(&[0, 4]), 0);
    assert_eq!((g.0, g.1), (ACLNN_SUCCESS, 0));
    status(g);
    // Off A2/A3 cubeMathType 4 is refused.
    set_device(TRAINING);
    let h = |d: &[i64]| meta(d, ACL_FLOAT16);
    refused(
        addmm(h(&[4]), h(&[2, 3]), h(&[3, 4]), one, one, h(&[2, 4]), 4),
        ACLNN_ERR_PARAM_INVALID,
        &["cubeMathType 4"],
    );
    assert_eq!(
        status(addmm(
            h(&[4]),
            h(&[2, 3]),
            h(&[3, 4]),
            one,
            one,
            h(&[2, 4]),
            0
        )),
        ACLNN_SUCCESS
    );
}

fn t(dims: &[i64], v: &[f32]) -> *mut aclTensor {
    f32_tensor(dims, v).0
}

#[test]
fn graph_paths() {
    let _gate = crate::common::shared();
    on(A2);
    let a = [1., 2., 3., 4., 5., 6.];
    let b = [1., 0., 0., 1., 1., 1.];
    let mm = [4., 5., 10., 11.];
    let run_addmm = |s: *mut aclTensor, a: &[f32], beta: f64, alpha: f64| {
        let (o, po) = f32_tensor(&[2, 2], &[0.0; 4]);
        run(
            addmm(
                s,
                t(&[2, 3], a),
                t(&[3, 2], &b),
                f64_scalar(beta),
                f64_scalar(alpha),
                o,
                0,
            ),
            api::aclnnAddmm,
        );
        d2h::<f32>(po, 4)
    };
    // Bias row, alpha = beta = 1.
    assert_eq!(
        run_addmm(t(&[2], &[0.5, -1.0]), &a, 1.0, 1.0),
        [4.5, 4., 10.5, 10.]
    );
    // A full (2,2) self with beta 2, alpha 0.5.
    let s = t(&[2, 2], &[1., 2., 3., 4.]);
    let want: Vec<f32> = mm
        .iter()
        .zip([1f32, 2., 3., 4.])
        .map(|(m, s)| 2.0 * s + 0.5 * m)
        .collect();
    assert_eq!(run_addmm(s, &a, 2.0, 0.5), want);
    // alpha 0: the product is never computed, NaN in mat1 does not propagate.
    let nan = [f32::NAN; 6];
    assert_eq!(
        run_addmm(t(&[2, 1], &[3., 7.]), &nan, 1.5, 0.0),
        [4.5, 4.5, 10.5, 10.5]
    );
    // beta 0 (within FLT_EPSILON): self is never read.
    assert_eq!(run_addmm(t(&[2], &[f32::NAN; 2]), &a, 1e-9, 1.0), mm);
    assert_eq!(
        run_addmm(t(&[2], &[f32::NAN; 2]), &a, 0.0, 2.0),
        mm.map(|m| 2.0 * m)
    );
}
