//! aclnnSub and aclnnInplaceSub: Add's checks in order (InplaceSub without a pre-check of
//! its own), dtypes per product (310P and 310B not refused), shapes, empty tensors, and the
//! compute chain (f32 Axpy with −alpha, halves computed in f32, integers through a Mul).

mod common;
mod opkit;
use ascend_sim::symbol;
use ascend_sys::*;
use common::*;
use half::{bf16, f16};
use opkit::*;
use std::ptr::null_mut;

/// A2, the training series, 310P, then 310B.
const SOCS: &str = "Ascend910B4,Ascend910A,Ascend310P3,Ascend310B1";
const P310B: i32 = 3;

fn on_sub(device: i32) {
    init_with(&[("ASCEND_SIM_DEVICES", SOCS)]);
    set_device(device);
}

/// The simulator's entry point `name`, which has the prototype `F`.
fn entry<F: Copy>(name: &str) -> F {
    let p = symbol(name).unwrap_or_else(|| panic!("{name} is not simulated"));
    assert_eq!(std::mem::size_of::<F>(), std::mem::size_of_val(&p));
    // SAFETY: every caller names `F` as the C prototype of `name` (a function pointer).
    unsafe { std::mem::transmute_copy::<*const std::ffi::c_void, F>(&p) }
}

type InplaceSubPhase1 = unsafe extern "C" fn(
    *mut aclTensor,
    *const aclTensor,
    *const aclScalar,
    *mut u64,
    *mut *mut aclOpExecutor,
) -> i32;

fn sub_phase1() -> alpha_chain::AlphaPhase1 {
    entry("aclnnSubGetWorkspaceSize")
}

fn inplace_sub_phase1() -> InplaceSubPhase1 {
    entry("aclnnInplaceSubGetWorkspaceSize")
}

fn phase2(name: &str) -> Phase2 {
    entry(name)
}

fn sub(a: *mut aclTensor, b: *mut aclTensor, alpha: *const aclScalar, out: *mut aclTensor) -> Got {
    // SAFETY: simulator handles or NULL; out-pointers from `p1`.
    p1(|ws, ex| unsafe { sub_phase1()(a, b, alpha, out, ws, ex) })
}

fn sub_(a: *mut aclTensor, b: *mut aclTensor, alpha: *const aclScalar) -> Got {
    // SAFETY: as above.
    p1(|ws, ex| unsafe { inplace_sub_phase1()(a, b, alpha, ws, ex) })
}

#[test]
fn checks_in_order() {
    on_sub(A2);
    alpha_chain::checks_in_order(sub_phase1());
    // Complex is listed but Sub's complex arithmetic is not modeled.
    let c = meta(&[2], ACL_COMPLEX64);
    refused(sub(c, c, f64_scalar(1.0), c), ACLNN_ERR_INNER, &["complex"]);
}

#[test]
fn inplace_has_aclnn_subs_order() {
    on_sub(A2);
    let one = f64_scalar(1.0);
    let (x, y) = (meta(&[3], ACL_FLOAT), meta(&[2, 3], ACL_FLOAT));
    let mut ex = null_mut();
    // SAFETY: deliberate NULLs.
    unsafe {
        // Unlike InplaceAdd, a bad broadcast does not beat a NULL workspaceSize.
        let rc = inplace_sub_phase1()(x, y, one, null_mut(), &mut ex);
        assert_fails_with(rc, ACLNN_ERR_PARAM_NULLPTR, &["workspaceSize is nullptr"]);
    }
    refused(
        sub_(NULL_T, y, one),
        ACLNN_ERR_PARAM_NULLPTR,
        &["selfRef is nullptr"],
    );
    refused(
        sub_(y, x, null_mut()),
        ACLNN_ERR_PARAM_NULLPTR,
        &["alpha is nullptr"],
    );
    // The broadcast against selfRef is caught at the shape step, after the dtypes.
    let u16t = meta(&[3], ACL_UINT16);
    refused(
        sub_(u16t, y, one),
        ACLNN_ERR_PARAM_INVALID,
        &["selfRef dtype UINT16"],
    );
    refused(
        sub_(x, y, one),
        ACLNN_ERR_PARAM_INVALID,
        &["selfRef shape [3]", "[2, 3]"],
    );
    assert_eq!(status(sub_(y, x, one)), ACLNN_SUCCESS);
}

#[test]
fn dtypes_per_product() {
    on_sub(A2);
    let one = f64_scalar(1.0);
    let b = |d| meta(&[2], d);
    assert_eq!(
        status(sub(b(ACL_BF16), b(ACL_BF16), one, b(ACL_BF16))),
        ACLNN_SUCCESS
    );
    // No product is refused (310P is undocumented, 310B documented); BF16 only on A2 / A3.
    for d in [TRAINING, P310, P310B] {
        set_device(d);
        refused(
            sub(b(ACL_BF16), b(ACL_BF16), one, b(ACL_BF16)),
            ACLNN_ERR_PARAM_INVALID,
            &["self dtype BF16"],
        );
        assert_eq!(
            status(sub(b(ACL_FLOAT16), b(ACL_INT64), one, b(ACL_FLOAT16))),
            ACLNN_SUCCESS,
            "{}",
            err_msg()
        );
    }
}

fn bits16(v: &[f32], f: fn(f32) -> u16) -> Vec<u16> {
    v.iter().map(|&x| f(x)).collect()
}

#[test]
fn results_follow_the_vendor_chain() {
    on_sub(A2);
    let (a, b) = ([1.0f32, 0.1, -3.0, 1e8], [2.0f32, 0.3, 0.7, 3.0]);
    let (ta, pa) = f32_tensor(&[4], &a);
    let (tb, _) = f32_tensor(&[4], &b);
    let (to, po) = f32_tensor(&[4], &[0.0; 4]);
    // f32, alpha 0.5: Axpy with −0.5.
    run(sub(ta, tb, f64_scalar(0.5), to), phase2("aclnnSub"));
    let want: Vec<f32> = a.iter().zip(&b).map(|(x, y)| x + -0.5f32 * y).collect();
    assert_eq!(d2h::<f32>(po, 4), want);
    // NaN alpha counts as 1.
    run(sub(ta, tb, f64_scalar(f64::NAN), to), phase2("aclnnSub"));
    let want: Vec<f32> = a.iter().zip(&b).map(|(x, y)| x - y).collect();
    assert_eq!(d2h::<f32>(po, 4), want);
    // Broadcast [2, 1] − [3] into a strided out.
    let (tc, _) = f32_tensor(&[2, 1], &[10.0, 20.0]);
    let (td, _) = f32_tensor(&[3], &[1.0, 2.0, 3.0]);
    let pw = upload(&[0f32; 12]);
    let strided = tensor_view(&[2, 3], &[6, 2], 0, &[12], ACL_FLOAT, pw);
    run(sub(tc, td, f64_scalar(1.0), strided), phase2("aclnnSub"));
    let got: Vec<f32> = d2h(pw, 12);
    assert_eq!(got, [9., 0., 8., 0., 7., 0., 19., 0., 18., 0., 17., 0.]);
    // bf16 and f16 with alpha 3: computed in f32, rounded once by the cast to out.
    let xs = [1.0f32, 0.3, 100.0];
    let ys = [0.37f32, 0.7, 2.9];
    let bf = |v: f32| bf16::from_f32(v).to_bits();
    let r = |v: f32| bf16::from_f32(v).to_f32();
    let (px, py, pz) = (
        upload(&bits16(&xs, bf)),
        upload(&bits16(&ys, bf)),
        upload(&[0u16; 3]),
    );
    let t = |p| tensor(&[3], ACL_BF16, p);
    run(
        sub(t(px), t(py), f64_scalar(3.0), t(pz)),
        phase2("aclnnSub"),
    );
    let want: Vec<u16> = xs
        .iter()
        .zip(&ys)
        .map(|(&x, &y)| bf(r(x) + -3.0 * r(y)))
        .collect();
    assert_eq!(d2h::<u16>(pz, 3), want);
    // Rounding 3·y to bf16 first (Add's chain) would give a different answer here.
    let twice: Vec<u16> = xs
        .iter()
        .zip(&ys)
        .map(|(&x, &y)| bf(r(x) - r(3.0 * r(y))))
        .collect();
    assert_ne!(want, twice, "the inputs must tell the chains apart");
    let hf = |v: f32| f16::from_f32(v).to_bits();
    let w = |v: f32| f16::from_f32(v).to_f32();
    let (hx, hy, hz) = (
        upload(&bits16(&xs, hf)),
        upload(&bits16(&ys, hf)),
        upload(&[0u16; 3]),
    );
    let t = |p| tensor(&[3], ACL_FLOAT16, p);
    run(
        sub(t(hx), t(hy), f64_scalar(3.0), t(hz)),
        phase2("aclnnSub"),
    );
    let want: Vec<u16> = xs
        .iter()
        .zip(&ys)
        .map(|(&x, &y)| hf(w(x) + -3.0 * w(y)))
        .collect();
    assert_eq!(d2h::<u16>(hz, 3), want);
    // int32 with alpha 2: Mul then Sub, wrapping; in place with a broadcast other.
    let pi = upload(&[i32::MIN, 5, -7]);
    let pj = upload(&[1i32, 4, 3]);
    let ti = |p| tensor(&[3], ACL_INT32, p);
    run(
        sub_(ti(pi), ti(pj), scalar(2i64, ACL_INT64)),
        phase2("aclnnInplaceSub"),
    );
    assert_eq!(d2h::<i32>(pi, 3), vec![i32::MIN.wrapping_sub(2), -3, -13]);
    let (ones, _) = f32_tensor(&[1], &[1.0]);
    run(sub_(ta, ones, f64_scalar(0.5)), phase2("aclnnInplaceSub"));
    let want: Vec<f32> = a.iter().map(|x| x - 0.5).collect();
    assert_eq!(d2h::<f32>(pa, 4), want);
}
