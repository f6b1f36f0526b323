//! The BOOL element type (`bool`) on the simulator: uploads and downloads keep every
//! value, device bytes other than 0 and 1 (written raw by the device) download as `true`
//! and never as an invalid `bool`, and `copy` converts to and from BOOL as
//! `aclnnInplaceCopy` does (nonzero is true; true is 1). The DOUBLE element type (`f64`):
//! every bit pattern survives a round trip, copies to narrower types round once, and the
//! dtype facts and promotion are CANN's.

use crate::common;

use ascendcl::{DType, DeviceTensor, Element, HostTensor, copy, fill_inplace, zero_inplace};
use common::*;
use ndarray::{Array, ArrayD, Dimension, Ix1, IxDyn, array};
use proptest::prelude::*;
use std::ffi::c_void;

type MemcpyAsync = unsafe extern "C" fn(
    *mut c_void,
    usize,
    *const c_void,
    usize,
    ascend_sys::aclrtMemcpyKind,
    ascend_sys::aclrtStream,
) -> ascend_sys::aclError;

/// A BOOL tensor whose device bytes are `bytes`, copied raw on the device from a UINT8
/// tensor: what memory written by a user's kernel (or never written) may hold.
fn bool_tensor_of_bytes(s: &ascendcl::Stream, bytes: &[u8]) -> DeviceTensor<bool> {
    let src = DeviceTensor::from_array(s, &Array::from(bytes.to_vec())).unwrap();
    let mut dst = DeviceTensor::<bool>::zeros(s, [bytes.len()]).unwrap();
    let memcpy = ascend_sim::symbol("aclrtMemcpyAsync").unwrap();
    {
        // SAFETY: only the byte copy below is queued with the accesses, on `s`; it reads
        // `src`'s bytes and writes as many of `dst`'s.
        let (from, to) = unsafe {
            (
                src.view().raw_access(s).unwrap(),
                dst.view_mut().raw_access_mut(s).unwrap(),
            )
        };
        // SAFETY: the simulator's `aclrtMemcpyAsync` has this prototype; both device
        // ranges hold `bytes.len()` bytes and stay allocated (the accesses) until it has run.
        let status = unsafe {
            let memcpy: MemcpyAsync = std::mem::transmute(memcpy);
            memcpy(
                to.device_ptr(),
                bytes.len(),
                from.device_ptr(),
                bytes.len(),
                ascend_sys::ACL_MEMCPY_DEVICE_TO_DEVICE,
                s.as_raw(),
            )
        };
        assert_eq!(status, 0);
    }
    dst
}

#[test]
fn bool_dtype_facts() {
    let _gate = crate::common::shared();
    assert_eq!(
        (DType::Bool.size(), DType::Bool.name(), DType::Bool.acl()),
        (1, "BOOL", ascend_sys::ACL_BOOL)
    );
    assert!(!DType::Bool.is_float());
    assert_eq!(<bool as Element>::DTYPE, DType::Bool);
    assert_eq!(DType::Bool.to_string(), "bool");
    assert_eq!(DType::Bool.promote(DType::F16), Some(DType::F16));
}

#[test]
fn raw_device_bytes_download_as_true_never_as_invalid_bools() {
    let _gate = crate::common::shared();
    let s = device(A2).stream().unwrap();
    let bytes = [0u8, 1, 2, 255, 0, 0x80, 7, 0];
    let want = bytes.map(|b| b != 0);
    let t = bool_tensor_of_bytes(&s, &bytes);
    // whole, into a new array
    assert_eq!(t.to_array::<Ix1>(&s).unwrap().to_vec(), want.to_vec());
    // into an existing dense array
    let mut out = Array::from_elem(bytes.len(), false);
    t.copy_to_array(&s, &mut out).unwrap();
    assert_eq!(out.to_vec(), want.to_vec());
    // a stepped view (the strided download)
    let odd = t.view().slice(0, 1, bytes.len(), 2).unwrap();
    assert_eq!(
        odd.to_array::<Ix1>(&s).unwrap().to_vec(),
        vec![want[1], want[3], want[5], want[7]]
    );
    // pinned host memory: the queued copy is normalised before the host sees it
    let dev = device(A2);
    let mut host = HostTensor::<bool>::zeros(&dev, [bytes.len()]).unwrap();
    t.copy_to_host(&s, &mut host).unwrap();
    assert_eq!(host.as_slice().unwrap(), &want);
    // a device copy to UINT8 reads nonzero as 1, as CANN's cast does
    let mut as_u8 = DeviceTensor::<u8>::zeros(&s, [bytes.len()]).unwrap();
    copy(&t, &mut as_u8, &s).unwrap();
    assert_eq!(
        as_u8.to_array::<Ix1>(&s).unwrap().to_vec(),
        want.map(u8::from).to_vec()
    );
    // a same-dtype device copy moves the raw bytes; its download is normalised as well
    let mut moved = DeviceTensor::<bool>::zeros(&s, [bytes.len()]).unwrap();
    copy(&t, &mut moved, &s).unwrap();
    assert_eq!(moved.to_array::<Ix1>(&s).unwrap().to_vec(), want.to_vec());
}

#[test]
fn copies_convert_to_and_from_bool() {
    let _gate = crate::common::shared();
    let s = device(A2).stream().unwrap();
    let x = array![0.0f32, -0.0, 0.5, f32::NAN, -3.0, f32::INFINITY];
    let src = DeviceTensor::from_array(&s, &x).unwrap();
    let mut b = DeviceTensor::<bool>::zeros(&s, [6]).unwrap();
    copy(&src, &mut b, &s).unwrap();
    let want: Vec<bool> = x.iter().map(|v| *v != 0.0).collect();
    assert_eq!(b.to_array::<Ix1>(&s).unwrap().to_vec(), want);

    let mut back = DeviceTensor::<f32>::zeros(&s, [6]).unwrap();
    copy(&b, &mut back, &s).unwrap();
    let ones: Vec<f32> = want.iter().map(|&v| f32::from(u8::from(v))).collect();
    assert_eq!(back.to_array::<Ix1>(&s).unwrap().to_vec(), ones);

    let mut wide = DeviceTensor::<i64>::zeros(&s, [2, 6]).unwrap();
    copy(&b, &mut wide, &s).unwrap(); // broadcast along the rows
    let row: Vec<i64> = want.iter().map(|&v| i64::from(v)).collect();
    let got = wide.to_array::<IxDyn>(&s).unwrap();
    assert_eq!(
        got.iter().copied().collect::<Vec<_>>(),
        [row.clone(), row].concat()
    );

    let labels = DeviceTensor::from_array(&s, &array![0i32, 1, -1, 256]).unwrap();
    let mut mask = DeviceTensor::<bool>::zeros(&s, [4]).unwrap();
    copy(&labels, &mut mask, &s).unwrap();
    assert_eq!(
        mask.to_array::<Ix1>(&s).unwrap().to_vec(),
        vec![false, true, true, true]
    );
}

#[test]
fn fill_and_zero_write_bool_tensors() {
    let _gate = crate::common::shared();
    let s = device(A2).stream().unwrap();
    let mut t = DeviceTensor::<bool>::zeros(&s, [2, 3]).unwrap();
    fill_inplace(&mut t, true, &s).unwrap();
    assert!(t.to_array::<IxDyn>(&s).unwrap().iter().all(|&v| v));
    fill_inplace(&mut t.view_mut().slice(1, 0, 3, 2).unwrap(), 0, &s).unwrap();
    assert_eq!(
        t.to_array::<IxDyn>(&s).unwrap(),
        array![[false, true, false], [false, true, false]].into_dyn()
    );
    zero_inplace(&mut t, &s).unwrap();
    assert!(t.to_array::<IxDyn>(&s).unwrap().iter().all(|&v| !v));
}

#[test]
fn f64_dtype_facts() {
    let _gate = crate::common::shared();
    assert_eq!(
        (DType::F64.size(), DType::F64.name(), DType::F64.acl()),
        (8, "DOUBLE", ascend_sys::ACL_DOUBLE)
    );
    assert!(DType::F64.is_float() && !DType::F64.is_core_float());
    assert_eq!(DType::F64.promote(DType::F32), Some(DType::F64));
    assert_eq!(DType::I64.promote(DType::F64), Some(DType::F64));
}

#[test]
fn f64_copies_round_once_to_narrower_types() {
    let _gate = crate::common::shared();
    let s = device(A2).stream().unwrap();
    // 1 + 2^-24 + 2^-40 lies just above an f32 midpoint: rounding once gives 1 + 2^-23.
    let above_midpoint = 1.0 + 2f64.powi(-24) + 2f64.powi(-40);
    let x = array![above_midpoint, -2.5, 1e300, f64::NAN];
    let t = DeviceTensor::from_array(&s, &x).unwrap();
    let mut narrow = DeviceTensor::<f32>::zeros(&s, [4]).unwrap();
    copy(&t, &mut narrow, &s).unwrap();
    let got = narrow.to_array::<Ix1>(&s).unwrap();
    assert_eq!(got[0], 1.0 + 2f32.powi(-23));
    assert_eq!((got[1], got[2]), (-2.5, f32::INFINITY));
    assert!(got[3].is_nan());
    let mut back = DeviceTensor::<f64>::zeros(&s, [4]).unwrap();
    copy(&narrow, &mut back, &s).unwrap();
    assert_eq!(back.to_array::<Ix1>(&s).unwrap()[1], -2.5);
    let mut ints = DeviceTensor::<i32>::zeros(&s, [2]).unwrap();
    copy(t.view().slice(0, 0, 2, 1).unwrap(), &mut ints, &s).unwrap();
    assert_eq!(ints.to_array::<Ix1>(&s).unwrap().to_vec(), vec![1, -2]);
}

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 32,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config())]

    /// Upload, whole, strided and pinned downloads and a clone keep every value.
    #[test]
    fn bool_round_trips(shape in proptest::collection::vec(1usize..5, 1..4), seed: u64) {
        let _gate = crate::common::shared();
        let s = device(A2).stream().unwrap();
        let host = ArrayD::from_shape_fn(IxDyn(&shape), |i| {
            let k = i.as_array_view().iter().fold(seed, |a, &x| a.rotate_left(7) ^ x as u64);
            k.count_ones() % 2 == 1
        });
        let t = DeviceTensor::from_array(&s, &host).unwrap();
        prop_assert_eq!(t.dtype(), DType::Bool);
        prop_assert_eq!(t.to_array::<IxDyn>(&s).unwrap(), host.clone());
        let reversed = t.view().permute(&(0..shape.len()).rev().collect::<Vec<_>>()).unwrap();
        prop_assert_eq!(reversed.to_array::<IxDyn>(&s).unwrap(), host.t().to_owned());
        let dev = device(A2);
        let pinned = HostTensor::from_array(&dev, &host).unwrap();
        let mut u = DeviceTensor::<bool>::zeros(&s, shape.as_slice()).unwrap();
        u.copy_from_host(&s, &pinned).unwrap();
        let mut back = HostTensor::<bool>::zeros(&dev, shape.as_slice()).unwrap();
        u.copy_to_host(&s, &mut back).unwrap();
        prop_assert_eq!(back.view::<IxDyn>().unwrap(), host.view());
        let clone = t.try_clone(&s).unwrap();
        prop_assert_eq!(clone.to_array::<IxDyn>(&s).unwrap(), host);
    }

    /// Every bit pattern of f64 (NaN payloads included) survives upload, strided download
    /// and a device copy.
    #[test]
    fn f64_round_trips_bit_for_bit(bits in proptest::collection::vec(any::<u64>(), 1..40)) {
        let _gate = crate::common::shared();
        let s = device(A2).stream().unwrap();
        let host = Array::from(bits.iter().map(|&b| f64::from_bits(b)).collect::<Vec<_>>());
        let t = DeviceTensor::from_array(&s, &host).unwrap();
        let got = t.view().slice(0, 0, bits.len(), 1).unwrap().to_array::<Ix1>(&s).unwrap();
        prop_assert_eq!(got.iter().map(|v| v.to_bits()).collect::<Vec<_>>(), bits.clone());
        let mut dst = DeviceTensor::<f64>::zeros(&s, [bits.len()]).unwrap();
        copy(&t, &mut dst, &s).unwrap();
        let moved = dst.to_array::<Ix1>(&s).unwrap();
        prop_assert_eq!(moved.iter().map(|v| v.to_bits()).collect::<Vec<_>>(), bits);
    }
}
