//! `DeviceTensor::try_clone`: a deep, stream-ordered copy on the device.

use crate::common;

use ascendcl::{DeviceTensor, Error, mish_inplace};
use common::*;
use half::f16;
use ndarray::{Array1, Array2, ArrayD, array};

#[test]
fn a_clone_is_a_separate_copy_of_the_contents_and_shape() {
    let _check = LeakCheck::start();
    let s = device(A2).stream().unwrap();
    let data = array(&[3, 5], 7, -3.0, 3.0);
    let mut x = DeviceTensor::<f16>::from_array(&s, &data).unwrap();
    x.reshape((5, 3)).unwrap();
    let copy = x.try_clone(&s).unwrap();
    assert_eq!(copy.shape(), &[5, 3]);
    mish_inplace(&mut x, &s).unwrap(); // the original changes afterwards
    let got: ArrayD<f16> = copy.to_array(&s).unwrap();
    assert_eq!(
        got.iter().copied().collect::<Vec<_>>(),
        data.iter().copied().collect::<Vec<_>>()
    );
    let changed: ArrayD<f16> = x.to_array(&s).unwrap();
    assert_ne!(changed, got);
    drop(x); // the clone outlives its source
    assert_eq!(copy.to_array::<ndarray::IxDyn>(&s).unwrap(), got);
    assert_eq!(ascend_sim::last_report(), None);
}

#[test]
fn a_clone_on_another_stream_waits_for_queued_writes() {
    let _check = LeakCheck::start();
    let dev = device(A2);
    let (a, b) = (dev.stream().unwrap(), dev.stream().unwrap());
    let mut x = DeviceTensor::from_array(&a, &Array1::from_elem(4096, 1.0f32)).unwrap();
    mish_inplace(&mut x, &a).unwrap(); // queued on A
    let copy = x.try_clone(&b).unwrap(); // on B: after A's write
    let got: Array1<f32> = copy.to_array(&b).unwrap();
    assert!(got.iter().all(|v| (v - 0.865_098).abs() < 1e-5), "{got}");
    assert_eq!(ascend_sim::last_report(), None);
}

#[test]
fn empty_tensors_clone_and_other_devices_are_refused() {
    let _check = LeakCheck::start();
    let s = device(A2).stream().unwrap();
    let empty = DeviceTensor::<f32>::zeros(&s, (0, 3)).unwrap();
    let e2 = empty.try_clone(&s).unwrap();
    assert_eq!(e2.shape(), &[0, 3]);
    let x = DeviceTensor::from_array(&s, &array![[1.0f32, 2.0]]).unwrap();
    let other = device(A910).stream().unwrap();
    assert!(matches!(
        x.try_clone(&other),
        Err(Error::DeviceMismatch {
            expected: A910,
            found: A2,
            ..
        })
    ));
    let same: Array2<f32> = x.try_clone(&s).unwrap().to_array(&s).unwrap();
    assert_eq!(same, array![[1.0f32, 2.0]]);
}
