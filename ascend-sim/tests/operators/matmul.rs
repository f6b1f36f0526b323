//! aclnnMatmul: the vendor's checks in order, the A2 and default cubeMathType rules, shapes
//! (1-D operands, batch broadcasting), the unchecked out (561103 on a wrong count), empty
//! and K = 0 inputs, and results through transposed and strided views.

use crate::common;
use crate::opkit;
use ascend_sim::api;
use ascend_sys::*;
use common::*;
use half::{bf16, f16};
use opkit::*;
use std::ptr::null_mut;

fn mm(a: *mut aclTensor, b: *mut aclTensor, out: *mut aclTensor, cmt: i8) -> Got {
    // SAFETY: simulator handles or NULL; out-pointers from `p1`.
    p1(|ws, ex| unsafe { api::aclnnMatmulGetWorkspaceSize(a, b, out, cmt, ws, ex) })
}

fn with_format(dims: &[i64], dtype: aclDataType, format: aclFormat) -> *mut aclTensor {
    let s = contiguous_strides(dims);
    // SAFETY: live slices of the stated lengths.
    unsafe {
        api::aclCreateTensor(
            dims.as_ptr(),
            dims.len() as u64,
            dtype,
            s.as_ptr(),
            0,
            format,
            dims.as_ptr(),
            dims.len() as u64,
            null_mut(),
        )
    }
}

#[test]
fn checks_in_order() {
    let _gate = crate::common::shared();
    on(A2);
    let f = |d: &[i64]| meta(d, ACL_FLOAT);
    // SAFETY: deliberate NULLs.
    refuses_null_workspace_size(|ex| unsafe {
        api::aclnnMatmulGetWorkspaceSize(null_mut(), null_mut(), null_mut(), 0, null_mut(), ex)
    });
    refused(
        mm(NULL_T, NULL_T, NULL_T, 0),
        ACLNN_ERR_PARAM_NULLPTR,
        &["self is nullptr"],
    );
    refused(
        mm(f(&[2, 2]), NULL_T, NULL_T, 0),
        ACLNN_ERR_PARAM_NULLPTR,
        &["mat2 is nullptr"],
    );
    refused(
        mm(f(&[2, 2]), f(&[2, 2]), NULL_T, 0),
        ACLNN_ERR_PARAM_NULLPTR,
        &["out is nullptr"],
    );
    // The rule check, all three dtypes examined, before any shape.
    let i = meta(&[2, 2], ACL_INT32);
    refused(
        mm(f(&[7]), f(&[2, 2]), i, 0),
        ACLNN_ERR_PARAM_INVALID,
        &["dtype INT32"],
    );
    refused(
        mm(f(&[2, 2]), f(&[2, 2]), f(&[2, 2]), 5),
        ACLNN_ERR_PARAM_INVALID,
        &["cubeMathType 5"],
    );
    assert_eq!(
        status(mm(f(&[2, 2]), f(&[2, 2]), f(&[2, 2]), -1)),
        ACLNN_SUCCESS
    );
    // FRACTAL_NZ: mat2 with f16 and bf16 inputs, then (after shapes) self or out.
    let h = meta(&[2, 2], ACL_FLOAT16);
    let nz = |d| with_format(&[2, 2], d, ACL_FORMAT_FRACTAL_NZ);
    refused(
        mm(h, nz(ACL_BF16), f(&[2, 2]), 0),
        ACLNN_ERR_PARAM_INVALID,
        &["mat2 stored FRACTAL_NZ"],
    );
    assert_eq!(status(mm(h, nz(ACL_FLOAT16), f(&[2, 2]), 0)), ACLNN_SUCCESS);
    refused(
        mm(f(&[2, 3]), nz(ACL_FLOAT16), f(&[2, 2]), 0),
        ACLNN_ERR_PARAM_INVALID,
        &["K 3 != 2"],
    );
    refused(
        mm(nz(ACL_FLOAT), f(&[2, 2]), f(&[2, 2]), 0),
        ACLNN_ERR_PARAM_INVALID,
        &["self stored FRACTAL_NZ"],
    );
    refused(
        mm(f(&[2, 2]), f(&[2, 2]), nz(ACL_FLOAT), 0),
        ACLNN_ERR_PARAM_INVALID,
        &["out stored FRACTAL_NZ"],
    );
    // Shapes: 1..6 dims, K, batch broadcast.
    refused(
        mm(f(&[]), f(&[2]), f(&[]), 0),
        ACLNN_ERR_PARAM_INVALID,
        &["self has 0 dims"],
    );
    refused(
        mm(f(&[2]), f(&[1; 7]), f(&[1]), 0),
        ACLNN_ERR_PARAM_INVALID,
        &["mat2 has 7 dims"],
    );
    refused(
        mm(f(&[2, 3, 4]), f(&[3, 4, 5]), f(&[2, 3, 5]), 0),
        ACLNN_ERR_PARAM_INVALID,
        &["batch dims"],
    );
    refused(
        mm(f(&[3]), f(&[2, 4, 3]), f(&[2, 3]), 0),
        ACLNN_ERR_PARAM_INVALID,
        &["K 3 != 4"],
    );
    assert_eq!(
        status(mm(f(&[3]), f(&[2, 3, 4]), f(&[2, 4]), 0)),
        ACLNN_SUCCESS
    );
    // out: any shape with the right count; another count fails in Reshape.
    assert_eq!(
        status(mm(f(&[2, 3]), f(&[3, 4]), f(&[8]), 0)),
        ACLNN_SUCCESS
    );
    assert_eq!(
        status(mm(f(&[2, 3]), f(&[3, 4]), h_out(), 0)),
        ACLNN_SUCCESS
    );
    refused(
        mm(f(&[2, 3]), f(&[3, 4]), f(&[2, 3]), 0),
        ACLNN_ERR_INNER_NULLPTR,
        &["Reshape"],
    );
    refused(
        mm(f(&[2, 3]), f(&[3, 4]), f(&[0]), 0),
        ACLNN_ERR_INNER_NULLPTR,
        &["Reshape"],
    );
    // Empty out with an empty input: workspace 0.
    let g = mm(f(&[0, 3]), f(&[3, 4]), f(&[0, 4]), 0);
    assert_eq!((g.0, g.1), (ACLNN_SUCCESS, 0));
    status(g);
}

/// An f16 out of 8 elements: out's dtype is not checked against the inputs'.
fn h_out() -> *mut aclTensor {
    meta(&[2, 4], ACL_FLOAT16)
}

#[test]
fn the_default_rule_off_atlas_a2() {
    let _gate = crate::common::shared();
    for d in [TRAINING, P310] {
        on(d);
        let f = |d: &[i64]| meta(d, ACL_FLOAT);
        let h = |d: &[i64]| meta(d, ACL_FLOAT16);
        for cmt in [0, 3, -1, 4] {
            refused(
                mm(f(&[2, 2]), h(&[2, 2]), f(&[2, 2]), cmt),
                ACLNN_ERR_PARAM_INVALID,
                &["cubeMathType"],
            );
        }
        for cmt in [1, 2] {
            assert_eq!(
                status(mm(f(&[2, 2]), f(&[2, 2]), f(&[2, 2]), cmt)),
                ACLNN_SUCCESS
            );
        }
        assert_eq!(
            status(mm(h(&[2, 2]), h(&[2, 2]), h(&[2, 2]), 3)),
            ACLNN_SUCCESS
        );
        refused(
            mm(h(&[2, 2]), h(&[2, 2]), h(&[2, 2]), 4),
            ACLNN_ERR_PARAM_INVALID,
            &["cubeMathType 4"],
        );
        let b = meta(&[2, 2], ACL_BF16);
        refused(mm(b, b, b, 0), ACLNN_ERR_PARAM_INVALID, &["dtype BF16"]);
    }
}

fn mat(dims: &[i64], v: &[f32]) -> *mut aclTensor {
    f32_tensor(dims, v).0
}

#[test]
fn products_and_shapes() {
    let _gate = crate::common::shared();
    on(A2);
    // (2,3)·(3,2).
    let a = [1., 2., 3., 4., 5., 6.];
    let b = [7., 8., 9., 10., 11., 12.];
    let (to, po) = f32_tensor(&[2, 2], &[0.0; 4]);
    run(
        mm(mat(&[2, 3], &a), mat(&[3, 2], &b), to, 0),
        api::aclnnMatmul,
    );
    assert_eq!(d2h::<f32>(po, 4), [58., 64., 139., 154.]);
    // The transposed view of a (3,2) buffer as self (2,3): strides (1, 2).
    let pt = upload(&[1f32, 4., 2., 5., 3., 6.]);
    let at = tensor_view(&[2, 3], &[1, 2], 0, &[6], ACL_FLOAT, pt);
    run(mm(at, mat(&[3, 2], &b), to, 0), api::aclnnMatmul);
    assert_eq!(d2h::<f32>(po, 4), [58., 64., 139., 154.]);
    // 1-D · 1-D is a 0-D dot; (3)·(3,2) drops the unsqueezed dim.
    let (t0, p0) = f32_tensor(&[], &[0.0]);
    run(
        mm(mat(&[3], &[1., 2., 3.]), mat(&[3], &[4., 5., 6.]), t0, 0),
        api::aclnnMatmul,
    );
    assert_eq!(d2h::<f32>(p0, 1), [32.]);
    let (t2, p2) = f32_tensor(&[2], &[0.0; 2]);
    run(
        mm(mat(&[3], &[1., 2., 3.]), mat(&[3, 2], &b), t2, 0),
        api::aclnnMatmul,
    );
    assert_eq!(d2h::<f32>(p2, 2), [58., 64.]);
    // Batch broadcast: (2,1,2,3)·(3,3,2) → (2,3,2,2); each batch of self times each of mat2.
    let sa: Vec<f32> = (0..12).map(|x| x as f32).collect();
    let sb: Vec<f32> = (0..18).map(|x| (x % 5) as f32).collect();
    let (tb, pb) = f32_tensor(&[2, 3, 2, 2], &[0.0; 24]);
    run(
        mm(mat(&[2, 1, 2, 3], &sa), mat(&[3, 3, 2], &sb), tb, 0),
        api::aclnnMatmul,
    );
    let got: Vec<f32> = d2h(pb, 24);
    for (i, j, r, c) in (0..2).flat_map(|i| {
        (0..3).flat_map(move |j| (0..2).flat_map(move |r| (0..2).map(move |c| (i, j, r, c))))
    }) {
        let want: f32 = (0..3)
            .map(|k| sa[i * 6 + r * 3 + k] * sb[j * 6 + k * 2 + c])
            .sum();
        assert_eq!(got[((i * 3 + j) * 2 + r) * 2 + c], want, "{i} {j} {r} {c}");
    }
    // K = 0 with a non-empty out: zeros; the empty inputs' NULL data is never looked at.
    let (tz, pz) = f32_tensor(&[2, 3], &[9.0; 6]);
    run(
        mm(meta(&[2, 0], ACL_FLOAT), meta(&[0, 3], ACL_FLOAT), tz, 0),
        api::aclnnMatmul,
    );
    assert_eq!(d2h::<f32>(pz, 6), [0.0; 6]);
}

#[test]
fn compute_dtypes_follow_cube_math_type() {
    let _gate = crate::common::shared();
    // 1 + 2^-12 is not an f16 (nor an HF32 with 10 mantissa bits); squared in f32 it is.
    let x = 1.0f32 + 2f32.powi(-12);
    let run_f32 = |cmt: i8| {
        let (to, po) = f32_tensor(&[1, 1], &[0.0]);
        run(
            mm(mat(&[1, 1], &[x]), mat(&[1, 1], &[x]), to, cmt),
            api::aclnnMatmul,
        );
        d2h::<f32>(po, 1)[0]
    };
    on(A2);
    assert_eq!(run_f32(0), x * x);
    assert_eq!(run_f32(4), x * x);
    assert_eq!(run_f32(2), 1.0, "operands cast to f16 first");
    assert_eq!(run_f32(1), 1.0, "operands rounded to HF32");
    set_device(TRAINING);
    assert_eq!(run_f32(1), 1.0, "f16 compute on the training series");
    set_device(A2);
    // f16·f16 into f16: f32 accumulation, one rounding at the end.
    let h = |v: f32| f16::from_f32(v).to_bits();
    let k = 64;
    let ones = upload(&vec![h(1.0 + 2f32.powi(-10)); k]);
    let ph = upload(&[0u16]);
    let ta = tensor(&[1, k as i64], ACL_FLOAT16, ones);
    let tb = tensor(&[k as i64, 1], ACL_FLOAT16, ones);
    run(
        mm(ta, tb, tensor(&[1, 1], ACL_FLOAT16, ph), 0),
        api::aclnnMatmul,
    );
    let v = f16::from_f32(1.0 + 2f32.powi(-10)).to_f32();
    assert_eq!(d2h::<u16>(ph, 1)[0], h(v * v * k as f32));
    // bf16·bf16 into f32: no intermediate bf16 rounding.
    let b = |v: f32| bf16::from_f32(v).to_bits();
    let pb = upload(&[b(1.5), b(1.0078125)]);
    let (to, po) = f32_tensor(&[1, 1], &[0.0]);
    run(
        mm(
            tensor(&[1, 2], ACL_BF16, pb),
            tensor(&[2, 1], ACL_BF16, pb),
            to,
            0,
        ),
        api::aclnnMatmul,
    );
    assert_eq!(d2h::<f32>(po, 1)[0], 1.5 * 1.5 + 1.0078125 * 1.0078125);
}
