//! PowTensorScalar, the tensor–scalar family's row with its own promotion and kernel
//! cases: its checks in the vendor's order (and the BF16 gate per product), integer
//! powers as the vendor's integer kernel takes them (negative exponents included), the
//! Square case of an exponent of 2, the promotion of a DOUBLE exponent with a FLOAT out,
//! complex bases, and a strided out.

use crate::common;
use crate::opkit;

use super::scalar::{compute, decode, encode, inplace_p1, p1, phase2_of, size};
use ascend_ops::scalar::ScalarOp;
use ascend_sys::*;
use common::*;
use half::bf16;
use std::ptr::null_mut;

const A2: i32 = 0;
const T910: i32 = 1;

fn pow() -> &'static ScalarOp {
    ascend_ops::scalar::row("PowTensorScalar").unwrap()
}

/// `x` (of `dt`) raised to an INT64 `exp` into an `out_dt` tensor.
fn raise_int(dt: aclDataType, out_dt: aclDataType, x: &[f64], exp: i64) -> Vec<f64> {
    let e = opkit::scalar(exp, ACL_INT64);
    let got = compute(
        pow(),
        (dt, out_dt),
        &[x.len() as i64],
        x,
        (e, null_mut()),
        false,
    );
    opkit::destroy_scalar(e);
    got
}

/// `x` (of `dt`) raised to a DOUBLE `exp` into an `out_dt` tensor.
fn raise_f64(dt: aclDataType, out_dt: aclDataType, x: &[f64], exp: f64) -> Vec<f64> {
    let e = opkit::f64_scalar(exp);
    let got = compute(
        pow(),
        (dt, out_dt),
        &[x.len() as i64],
        x,
        (e, null_mut()),
        false,
    );
    opkit::destroy_scalar(e);
    got
}

/// NULL arguments (161001), then self's and the exponent's dtype, the promote's cast to
/// out, a BOOL self with a BOOL exponent, the rank and out's shape (161002); an empty self
/// needs no workspace; the in-place twin refuses a BOOL self (no promote casts to BOOL).
#[test]
fn pow_checks_in_the_vendors_order() {
    on_device(A2, || {
        let none = null_mut::<aclScalar>();
        let two = opkit::scalar(2i64, ACL_INT64);
        let half = opkit::f64_scalar(0.5);
        let t = opkit::scalar(1u8, ACL_BOOL);
        let u32s = opkit::scalar(2u32, ACL_UINT32);
        let f = opkit::meta(&[2, 3], ACL_FLOAT);
        let i = opkit::meta(&[2, 3], ACL_INT32);
        let b = opkit::meta(&[2, 3], ACL_BOOL);
        let l = opkit::meta(&[2, 3], ACL_INT64);
        let u = opkit::meta(&[2, 3], ACL_UINT32);
        opkit::nullptr(p1(pow(), null_mut(), two, none, f), "self");
        opkit::nullptr(p1(pow(), f, none, none, f), "exponent");
        opkit::nullptr(p1(pow(), f, two, none, null_mut()), "out");
        opkit::nullptr(inplace_p1(pow(), f, none, none), "exponent");
        opkit::invalid(p1(pow(), u, two, none, f), "self");
        opkit::invalid(p1(pow(), f, u32s, none, f), "exponent dtype UINT32");
        // PromoteType(INT32, DOUBLE) is DOUBLE, which does not cast to INT32 ...
        opkit::invalid(p1(pow(), i, half, none, i), "can not cast");
        // ... but a DOUBLE exponent with a FLOAT out computes in FLOAT
        assert_eq!(opkit::status(p1(pow(), i, half, none, f)), ACLNN_SUCCESS);
        opkit::invalid(p1(pow(), b, t, none, b), "both BOOL");
        // a BOOL self raises in INT64 with an INT64 exponent: an INT64 out, never a BOOL one
        assert_eq!(opkit::status(p1(pow(), b, two, none, l)), ACLNN_SUCCESS);
        opkit::invalid(p1(pow(), b, two, none, b), "can not cast");
        opkit::invalid(inplace_p1(pow(), b, two, none), "can not cast");
        let deep = opkit::meta(&[1; 9], ACL_FLOAT);
        opkit::invalid(p1(pow(), deep, two, none, deep), "");
        let other_shape = opkit::meta(&[3, 2], ACL_FLOAT);
        opkit::invalid(p1(pow(), f, two, none, other_shape), "shape");
        let e = opkit::meta(&[0, 3], ACL_FLOAT);
        let g = p1(pow(), e, two, none, e);
        assert_eq!((g.0, g.1), (ACLNN_SUCCESS, 0));
        opkit::status(g);
        let z = opkit::meta(&[], ACL_INT32);
        assert_eq!(
            opkit::status(inplace_p1(pow(), z, two, none)),
            ACLNN_SUCCESS
        );
        for x in [f, i, b, l, u, deep, other_shape, e, z] {
            destroy_tensor(x);
        }
        for s in [two, half, t, u32s] {
            opkit::destroy_scalar(s);
        }
    });
}

/// BF16, as self or as the exponent, only on Atlas A2/A3.
#[test]
fn pow_takes_bf16_only_on_atlas_a2_and_a3() {
    for (device, want) in [(A2, ACLNN_SUCCESS), (T910, ACLNN_ERR_PARAM_INVALID)] {
        on_device(device, move || {
            let e = opkit::scalar(bf16::from_f32(2.0), ACL_BF16);
            let two = opkit::scalar(2i64, ACL_INT64);
            let (f, h) = (opkit::meta(&[4], ACL_FLOAT), opkit::meta(&[4], ACL_BF16));
            assert_eq!(opkit::status(p1(pow(), f, e, null_mut(), f)), want);
            assert_eq!(opkit::status(p1(pow(), h, two, null_mut(), h)), want);
            assert_eq!(opkit::status(inplace_p1(pow(), h, two, null_mut())), want);
            for t in [f, h] {
                destroy_tensor(t);
            }
            opkit::destroy_scalar(e);
            opkit::destroy_scalar(two);
        });
    }
}

/// Integers raise exactly and wrap to the compute dtype; a negative exponent gives 1 for
/// 1, ±1 for −1 and 0 for any other base (0 too); an exponent of 0 gives 1 everywhere.
/// An exponent of 2 squares INT8, UINT8 and INT16 in INT32, so a wider out keeps the
/// whole square; a BOOL self raises in INT64.
#[test]
fn pow_integers_follow_the_vendors_kernel() {
    on_device(A2, || {
        let x = [1.0, -1.0, 2.0, 0.0, -2.0, 3.0];
        let int = |e| raise_int(ACL_INT32, ACL_INT32, &x, e);
        assert_eq!(int(-1), vec![1.0, -1.0, 0.0, 0.0, 0.0, 0.0]);
        assert_eq!(int(-2), vec![1.0, 1.0, 0.0, 0.0, 0.0, 0.0]);
        assert_eq!(int(0), vec![1.0; 6]);
        assert_eq!(int(1), x.to_vec());
        assert_eq!(int(3), vec![1.0, -1.0, 8.0, 0.0, -8.0, 27.0]);
        // 3³³ and (−2)³³ are exact in INT64 (and in f64)
        let big = raise_int(ACL_INT64, ACL_INT64, &[3.0, -2.0], 33);
        assert_eq!(big, vec![5559060566555523.0, -8589934592.0]);
        // 100³ = 1000000 wraps to 64 in INT8; (−3)³ = −27
        let cube = raise_int(ACL_INT8, ACL_INT8, &[100.0, -3.0], 3);
        assert_eq!(cube, vec![64.0, -27.0]);
        // Square in INT32: 10000 whole in an INT32 out, wrapped to 16 in an INT8 one
        let sq = raise_int(ACL_INT8, ACL_INT32, &[100.0, -3.0], 2);
        assert_eq!(sq, vec![10000.0, 9.0]);
        let sq = raise_int(ACL_INT8, ACL_INT8, &[100.0, -3.0], 2);
        assert_eq!(sq, vec![16.0, 9.0]);
        assert_eq!(raise_int(ACL_UINT8, ACL_INT32, &[200.0], 2), vec![40000.0]);
        assert_eq!(raise_int(ACL_INT16, ACL_INT64, &[300.0], 2), vec![90000.0]);
        assert_eq!(raise_int(ACL_INT16, ACL_INT16, &[300.0], 2), vec![24464.0]);
        // but a cube of INT16 stays INT16: 40³ = 64000 wraps to −1536
        assert_eq!(raise_int(ACL_INT16, ACL_INT64, &[40.0], 3), vec![-1536.0]);
        let b = [0.0, 1.0];
        assert_eq!(raise_int(ACL_BOOL, ACL_INT64, &b, 2), vec![0.0, 1.0]);
        assert_eq!(raise_int(ACL_BOOL, ACL_INT64, &b, 0), vec![1.0, 1.0]);
        assert_eq!(raise_int(ACL_BOOL, ACL_INT64, &b, -1), vec![0.0, 1.0]);
        // in place, the same values
        let e = opkit::scalar(-1i64, ACL_INT64);
        let got = compute(
            pow(),
            (ACL_INT64, ACL_INT64),
            &[6],
            &x,
            (e, null_mut()),
            true,
        );
        assert_eq!(got, vec![1.0, -1.0, 0.0, 0.0, 0.0, 0.0]);
        opkit::destroy_scalar(e);
    });
}

/// Floating bases: the exponent converted to the compute dtype, IEEE `pow` (a negative
/// base with a fractional exponent is NaN, 0 to a negative power ∞); a FLOAT16 self with
/// a DOUBLE exponent into a FLOAT out computes in FLOAT.
#[test]
fn pow_floats_follow_the_promotion() {
    on_device(A2, || {
        let got = raise_f64(ACL_FLOAT, ACL_FLOAT, &[-8.0, 0.0, 2.0, 4.0], -1.0);
        assert_eq!(got, vec![-0.125, f64::INFINITY, 0.5, 0.25]);
        let got = raise_f64(ACL_DOUBLE, ACL_DOUBLE, &[-4.0, 4.0], 0.5);
        assert!(got[0].is_nan(), "{got:?}");
        assert_eq!(got[1], 2.0);
        let in_f32 = raise_f64(ACL_FLOAT16, ACL_FLOAT, &[3.0], 0.5);
        assert_eq!(in_f32, vec![f64::from(3f32.powf(0.5))]);
        let in_f16 = raise_f64(ACL_FLOAT16, ACL_FLOAT16, &[3.0], 0.5);
        assert_eq!(in_f16, vec![half::f16::from_f32(3f32.powf(0.5)).to_f64()]);
        assert_ne!(in_f32, in_f16);
        // an integer self with a DOUBLE exponent into FLOAT computes in FLOAT
        let got = raise_f64(ACL_INT32, ACL_FLOAT, &[4.0, 9.0], 0.5);
        assert_eq!(got, vec![2.0, 3.0]);
        let got = raise_f64(ACL_BF16, ACL_BF16, &[3.0, -2.0], 3.0);
        assert_eq!(got, vec![27.0, -8.0]);
    });
}

/// A complex base: an exponent of 2 is the exact square, others the principal power.
#[test]
fn pow_of_complex_bases() {
    on_device(A2, || {
        for (exp, want) in [
            (2.0, (0.0, -0.5)),
            (0.5, {
                let (r, a) = (0.5f64.sqrt().sqrt(), 3.0 * std::f64::consts::PI / 8.0);
                (r * a.cos(), r * a.sin())
            }),
        ] {
            // encode gives complex values an imaginary part of 0.5: −0.5 + 0.5i
            let xp = opkit::upload(&encode(ACL_COMPLEX128, &[-0.5]));
            let op = opkit::upload(&[0u8; 16]);
            let (xt, ot) = (
                tensor(&[1], ACL_COMPLEX128, xp),
                tensor(&[1], ACL_COMPLEX128, op),
            );
            let e = opkit::f64_scalar(exp);
            opkit::run(
                p1(pow(), xt, e, null_mut(), ot),
                phase2_of("PowTensorScalar"),
            );
            let got = d2h::<f64>(op, 2);
            assert!(
                (got[0] - want.0).abs() < 1e-12 && (got[1] - want.1).abs() < 1e-12,
                "{exp}: {got:?} {want:?}"
            );
            for t in [xt, ot] {
                destroy_tensor(t);
            }
            opkit::destroy_scalar(e);
            free(xp);
            free(op);
        }
    });
}

/// A transposed out and a stepped self are read and written through their views.
#[test]
fn pow_through_strided_views() {
    on_device(A2, || {
        let two = opkit::scalar(2i64, ACL_INT64);
        // self: every other element of 12; out: the transpose of a (3, 2) buffer
        let v: Vec<f64> = (1..=12).map(f64::from).collect();
        let xp = opkit::upload(&encode(ACL_FLOAT, &v));
        let xt = tensor_view(&[2, 3], &[6, 2], 0, &[12], ACL_FLOAT, xp);
        let op = opkit::upload(&[0.0f32; 6]);
        let ot = tensor_view(&[2, 3], &[1, 2], 0, &[3, 2], ACL_FLOAT, op);
        opkit::run(
            p1(pow(), xt, two, null_mut(), ot),
            phase2_of("PowTensorScalar"),
        );
        let got = decode(ACL_FLOAT, &d2h::<u8>(op, 6 * size(ACL_FLOAT)));
        // self is [[1, 3, 5], [7, 9, 11]]; out holds its squares column by column
        assert_eq!(got, vec![1.0, 49.0, 9.0, 81.0, 25.0, 121.0]);
        for t in [xt, ot] {
            destroy_tensor(t);
        }
        free(xp);
        free(op);
        opkit::destroy_scalar(two);
    });
}
