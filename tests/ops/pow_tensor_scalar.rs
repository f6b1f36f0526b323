//! `pow_tensor_scalar` where its promotion leaves the family's same-dtype harness
//! (`scalar_family`): a bool base raises in i64, narrow integers square in i32, integer
//! bases take negative exponents as CANN's integer kernel does, a floating exponent does
//! not cast to an integer out, and a DOUBLE exponent with an f32 out computes in f32.

use crate::common;

use ascendcl::{
    DeviceTensor, Error, pow_tensor_scalar, pow_tensor_scalar_inplace, pow_tensor_scalar_new,
};
use common::*;
use half::f16;
use ndarray::{Ix1, IxDyn, array};

fn aclnn_error(e: Error) {
    assert!(matches!(e, Error::Aclnn { .. }), "{e}");
}

/// A bool base raises in i64 (PromoteType(BOOL, INT64)): into an i64 out as the reference
/// of its i64 values; no promote casts to a bool out, so CANN refuses one, and the in-place
/// form.
#[test]
fn pow_of_a_bool_base_raises_in_i64() {
    let _gate = crate::common::shared();
    let s = device(0).stream().unwrap();
    let x = array![false, true, true, false].into_dyn();
    let mut held = DeviceTensor::from_array(&s, &x).unwrap();
    for e in [-1i64, 0, 2, 3] {
        let mut out = DeviceTensor::<i64>::zeros(&s, [4]).unwrap();
        pow_tensor_scalar(&held, e, &mut out, &s).unwrap();
        let want = ascendcl::reference::pow_tensor_scalar(x.mapv(i64::from).view(), e).unwrap();
        assert_eq!(out.to_array::<IxDyn>(&s).unwrap(), want, "^{e}");
        // the bool reference is the same values, nonzero as true
        let as_bool = ascendcl::reference::pow_tensor_scalar(x.view(), e).unwrap();
        assert_eq!(as_bool, want.mapv(|v| v != 0), "^{e}");
    }
    let mut b = DeviceTensor::<bool>::zeros(&s, [4]).unwrap();
    aclnn_error(pow_tensor_scalar(&held, 2, &mut b, &s).unwrap_err());
    aclnn_error(pow_tensor_scalar_inplace(&mut held, 2, &s).unwrap_err());
}

/// An exponent of 2 squares i8 and u8 in i32 (CANN's Square), so an i32 out keeps the
/// whole square and an i8 one wraps it; a cube stays in i8 and wraps there. A negative
/// exponent gives 1 for 1, ±1 for −1 and 0 otherwise; a floating exponent promotes an
/// integer base to a floating type, which casts to no integer out.
#[test]
fn pow_of_integer_bases_follows_the_vendor() {
    let _gate = crate::common::shared();
    let s = device(0).stream().unwrap();
    let x = DeviceTensor::from_array(&s, &array![100i8, -3]).unwrap();
    let mut wide = DeviceTensor::<i32>::zeros(&s, [2]).unwrap();
    let mut narrow = DeviceTensor::<i8>::zeros(&s, [2]).unwrap();
    pow_tensor_scalar(&x, 2, &mut wide, &s).unwrap();
    assert_eq!(wide.to_array::<Ix1>(&s).unwrap().to_vec(), vec![10000, 9]);
    pow_tensor_scalar(&x, 2, &mut narrow, &s).unwrap();
    assert_eq!(narrow.to_array::<Ix1>(&s).unwrap().to_vec(), vec![16, 9]);
    pow_tensor_scalar(&x, 3, &mut wide, &s).unwrap();
    assert_eq!(wide.to_array::<Ix1>(&s).unwrap().to_vec(), vec![64, -27]);
    let u = DeviceTensor::from_array(&s, &array![200u8, 3]).unwrap();
    pow_tensor_scalar(&u, 2, &mut wide, &s).unwrap();
    assert_eq!(wide.to_array::<Ix1>(&s).unwrap().to_vec(), vec![40000, 9]);

    let base = array![1i32, -1, 2, 0, -2, 3];
    let y = DeviceTensor::from_array(&s, &base).unwrap();
    for (e, want) in [
        (-1i64, vec![1, -1, 0, 0, 0, 0]),
        (-2, vec![1, 1, 0, 0, 0, 0]),
        (0, vec![1; 6]),
        (3, vec![1, -1, 8, 0, -8, 27]),
    ] {
        let got: DeviceTensor<i32> = pow_tensor_scalar_new(&y, e, &s).unwrap();
        assert_eq!(got.to_array::<Ix1>(&s).unwrap().to_vec(), want, "^{e}");
        let reference = ascendcl::reference::pow_tensor_scalar(base.view(), e).unwrap();
        assert_eq!(reference.to_vec(), want, "reference ^{e}");
    }
    aclnn_error(pow_tensor_scalar(&x, 0.5, &mut narrow, &s).unwrap_err());
    let mut f = DeviceTensor::<f32>::zeros(&s, [6]).unwrap();
    pow_tensor_scalar(&y, 0.5, &mut f, &s).unwrap();
    let got = f.to_array::<Ix1>(&s).unwrap();
    assert_eq!(got[0], 1.0);
    assert!(
        got[1].is_nan() && got[3] == 0.0 && got[5] == 3f32.powf(0.5),
        "{got}"
    );
}

/// An f16 base with a DOUBLE exponent into an f32 out computes in f32: the result is
/// not rounded to f16 on the way.
#[test]
fn pow_of_an_f16_base_into_f32_computes_in_f32() {
    let _gate = crate::common::shared();
    let s = device(0).stream().unwrap();
    let x = DeviceTensor::from_array(&s, &array![f16::from_f32(3.0), f16::from_f32(-2.0)]).unwrap();
    let mut out = DeviceTensor::<f32>::zeros(&s, [2]).unwrap();
    pow_tensor_scalar(&x, 0.5, &mut out, &s).unwrap();
    let got = out.to_array::<Ix1>(&s).unwrap();
    assert_eq!(got[0], 3f32.powf(0.5));
    assert_ne!(got[0], f16::from_f32(3f32.powf(0.5)).to_f32());
    assert!(got[1].is_nan(), "{got}");
    let same: DeviceTensor<f16> = pow_tensor_scalar_new(&x, 0.5, &s).unwrap();
    let same = same.to_array::<Ix1>(&s).unwrap();
    assert_eq!(same[0], f16::from_f32(3f32.powf(0.5)));
}
