//! aclnnMseLoss and aclnnMseLossBackward: the vendor's checks in order (promotion before
//! the dtypes; exact dtypes for the backward), reductions, out's shape per reduction,
//! empty inputs (NaN mean, 0 sum), broadcasting, and the kernels' f32 arithmetic.

use crate::common;
use crate::opkit;
use ascend_sim::api;
use ascend_sys::*;
use common::*;
use half::f16;
use opkit::*;
use std::ptr::null_mut;

fn loss(x: *mut aclTensor, y: *mut aclTensor, red: i64, out: *mut aclTensor) -> Got {
    // SAFETY: simulator handles or NULL; out-pointers from `p1`.
    p1(|ws, ex| unsafe { api::aclnnMseLossGetWorkspaceSize(x, y, red, out, ws, ex) })
}

fn grad(
    g: *mut aclTensor,
    x: *mut aclTensor,
    y: *mut aclTensor,
    red: i64,
    out: *mut aclTensor,
) -> Got {
    // SAFETY: as above.
    p1(|ws, ex| unsafe { api::aclnnMseLossBackwardGetWorkspaceSize(g, x, y, red, out, ws, ex) })
}

#[test]
fn loss_checks_in_order() {
    let _gate = crate::common::shared();
    on(A2);
    let f = |d: &[i64]| meta(d, ACL_FLOAT);
    // SAFETY: deliberate NULLs.
    refuses_null_workspace_size(|ex| unsafe {
        api::aclnnMseLossGetWorkspaceSize(null_mut(), null_mut(), 1, null_mut(), null_mut(), ex)
    });
    nullptr(loss(NULL_T, f(&[2]), 1, f(&[])), "self is nullptr");
    nullptr(loss(f(&[2]), NULL_T, 1, f(&[])), "target is nullptr");
    nullptr(loss(f(&[2]), f(&[2]), 1, NULL_T), "out is nullptr");
    // The promote first: f64 with f32 promotes to DOUBLE, not listed.
    invalid(
        loss(meta(&[2], ACL_DOUBLE), f(&[2]), 1, meta(&[], ACL_INT32)),
        "promote dtype",
    );
    // f16 with INT32 promotes to f16 (listed), then target's own dtype is refused.
    invalid(
        loss(meta(&[2], ACL_FLOAT16), meta(&[2], ACL_INT32), 1, f(&[])),
        "target dtype INT32",
    );
    invalid(
        loss(f(&[2]), f(&[2]), 1, meta(&[], ACL_INT32)),
        "out dtype INT32",
    );
    invalid(loss(f(&[2]), f(&[2]), 3, f(&[])), "reduction 3");
    invalid(loss(f(&[2]), f(&[2]), -1, f(&[])), "reduction -1");
    invalid(loss(f(&[1; 9]), f(&[1]), 0, f(&[1; 9])), "self has 9 dims");
    invalid(loss(f(&[2]), f(&[3]), 0, f(&[3])), "can not broadcast");
    invalid(
        loss(f(&[2, 1]), f(&[3]), 0, f(&[3])),
        "broadcast shape [2, 3]",
    );
    invalid(loss(f(&[2]), f(&[2]), 1, f(&[1])), "should be 0-D");
    assert_eq!(status(loss(f(&[2, 1]), f(&[3]), 2, f(&[]))), ACLNN_SUCCESS);
    // Self and target may differ in dtype.
    assert_eq!(
        status(loss(
            meta(&[2], ACL_FLOAT16),
            f(&[2]),
            1,
            meta(&[], ACL_FLOAT16)
        )),
        ACLNN_SUCCESS
    );
    set_device(TRAINING);
    let b = meta(&[2], ACL_BF16);
    invalid(loss(b, b, 1, meta(&[], ACL_BF16)), "promote dtype");
}

#[test]
fn loss_values() {
    let _gate = crate::common::shared();
    on(A2);
    let (x, _) = f32_tensor(&[2, 2], &[1.0, 2.0, 3.0, 4.0]);
    let (y, _) = f32_tensor(&[2], &[0.5, 0.0]);
    let scalar_out = |red: i64, x, y| {
        let (o, po) = f32_tensor(&[], &[7.0]);
        run(loss(x, y, red, o), api::aclnnMseLoss);
        d2h::<f32>(po, 1)[0]
    };
    assert_eq!(scalar_out(2, x, y), 0.25 + 4.0 + 6.25 + 16.0);
    assert_eq!(scalar_out(1, x, y), (0.25 + 4.0 + 6.25 + 16.0) * 0.25);
    let (o, po) = f32_tensor(&[2, 2], &[0.0; 4]);
    run(loss(x, y, 0, o), api::aclnnMseLoss);
    assert_eq!(d2h::<f32>(po, 4), [0.25, 4.0, 6.25, 16.0]);
    // Empty inputs: mean is NaN, sum is 0.
    let e = meta(&[0], ACL_FLOAT);
    assert!(scalar_out(1, e, e).is_nan());
    assert_eq!(scalar_out(2, e, e), 0.0);
    // Mean over 3 elements: the tile sum times 1/3 rounded to f32.
    let (a, _) = f32_tensor(&[3], &[1.0, 2.0, 3.0]);
    let (z, _) = f32_tensor(&[3], &[0.0; 3]);
    assert_eq!(scalar_out(1, a, z), 14.0 * (1.0f64 / 3.0) as f32);
    // f16: the difference squared in f32, rounded to f16.
    let h = |v: f32| f16::from_f32(v).to_bits();
    let px = upload(&[h(0.1), h(300.0)]);
    let py = upload(&[h(0.0), h(0.0)]);
    let pz = upload(&[0u16; 2]);
    let t = |p| tensor(&[2], ACL_FLOAT16, p);
    run(loss(t(px), t(py), 0, t(pz)), api::aclnnMseLoss);
    let w = f16::from_f32(0.1).to_f32();
    assert_eq!(d2h::<u16>(pz, 2), [h(w * w), h(90000.0)]);
}

#[test]
fn backward_checks_in_order() {
    let _gate = crate::common::shared();
    on(A2);
    let f = |d: &[i64]| meta(d, ACL_FLOAT);
    // SAFETY: deliberate NULLs.
    refuses_null_workspace_size(|ex| unsafe {
        api::aclnnMseLossBackwardGetWorkspaceSize(NULL_T, NULL_T, NULL_T, 1, NULL_T, null_mut(), ex)
    });
    let t = f(&[2]);
    nullptr(grad(NULL_T, t, t, 1, t), "gradOutput is nullptr");
    nullptr(grad(t, NULL_T, t, 1, t), "self is nullptr");
    nullptr(grad(t, t, NULL_T, 1, t), "target is nullptr");
    nullptr(grad(t, t, t, 1, NULL_T), "out is nullptr");
    let h = meta(&[2], ACL_FLOAT16);
    invalid(
        grad(h, t, t, 1, t),
        "gradOutput dtype FLOAT16 is not self's",
    );
    invalid(grad(t, t, h, 1, t), "target dtype FLOAT16 is not self's");
    let d = meta(&[2], ACL_DOUBLE);
    invalid(grad(d, d, d, 1, t), "self dtype DOUBLE");
    invalid(grad(t, t, t, 1, d), "out dtype DOUBLE");
    assert_eq!(
        status(grad(t, t, t, 1, h)),
        ACLNN_SUCCESS,
        "out may be any listed dtype"
    );
    invalid(grad(t, t, t, 7, t), "reduction 7");
    invalid(grad(t, t, t, 0, f(&[1; 9])), "out has 9 dims");
    invalid(grad(f(&[3]), t, t, 0, t), "can not broadcast");
    invalid(grad(f(&[]), f(&[2, 1]), t, 0, t), "broadcast shape [2, 2]");
    assert_eq!(
        status(grad(f(&[]), f(&[2, 1]), t, 0, f(&[2, 2]))),
        ACLNN_SUCCESS
    );
    let g = grad(f(&[0]), f(&[0]), f(&[0]), 1, f(&[0]));
    assert_eq!((g.0, g.1), (ACLNN_SUCCESS, 0));
    status(g);
    // No product is refused.
    set_device(TRAINING);
    assert_eq!(status(grad(t, t, t, 1, t)), ACLNN_SUCCESS);
}

#[test]
fn backward_values() {
    let _gate = crate::common::shared();
    on(A2);
    let (x, _) = f32_tensor(&[3], &[1.0, 2.0, 4.0]);
    let (y, _) = f32_tensor(&[3], &[0.5, 2.5, 1.0]);
    let (g0, _) = f32_tensor(&[], &[0.1]);
    let each = |red: i64| {
        let (o, po) = f32_tensor(&[3], &[0.0; 3]);
        run(grad(g0, x, y, red, o), api::aclnnMseLossBackward);
        d2h::<f32>(po, 3)
    };
    let cof = (1.0f64 / 3.0) as f32 * 2.0;
    let d = [0.5f32, -0.5, 3.0];
    assert_eq!(each(1), d.map(|d| d * cof * 0.1f32));
    assert_eq!(each(2), d.map(|d| d * 2.0 * 0.1f32));
    assert_eq!(each(0), d.map(|d| d * 2.0 * 0.1f32));
}
