//! Copies between devices (`DeviceTensor::copy_from_peer`): peer access enabled on first
//! use, ordered after the source's queued writes, refused with a hint across devices
//! elsewhere. Own binary: two devices.

use ascendcl::{DeviceTensor, Error, Runtime, SimConfig, mish_inplace};
use ndarray::{Array1, Array2, array};

/// Serialises the tests, so that one's live objects do not count in the other's check.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn runtime() -> (Runtime, std::sync::MutexGuard<'static, ()>) {
    let guard = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let config = SimConfig::new().devices(["Ascend910B4", "Ascend910B4"]);
    (Runtime::simulator_with(&config).unwrap(), guard)
}

#[test]
fn a_tensor_is_copied_from_another_device_after_its_queued_writes() {
    let (rt, _serial) = runtime();
    let before = ascend_sim::counters();
    {
        let (d0, d1) = (rt.device(0).unwrap(), rt.device(1).unwrap());
        let (s0, s1) = (d0.stream().unwrap(), d1.stream().unwrap());
        assert!(d0.can_access_peer(&d1).unwrap());
        assert!(
            !d0.can_access_peer(&d0).unwrap(),
            "a device is not its own peer"
        );

        let mut y0 = DeviceTensor::from_array(&s0, &Array1::from_elem(50_000, 1.0f32)).unwrap();
        mish_inplace(&mut y0, &s0).unwrap(); // queued on device 0
        let mut y1 = DeviceTensor::<f32>::zeros(&s1, 50_000).unwrap();
        y1.copy_from_peer(&y0, &s1).unwrap();
        drop(y0); // the copy has finished: nothing uses it any more
        let got: Array1<f32> = y1.to_array(&s1).unwrap();
        assert!(got.iter().all(|v| (v - 0.865_098).abs() < 1e-5));

        // Back again, into a tensor of device 0, and within one device.
        let mut z0 = DeviceTensor::<f32>::zeros(&s0, 50_000).unwrap();
        z0.copy_from_peer(&y1, &s0).unwrap();
        let mut w0 = DeviceTensor::<f32>::zeros(&s0, 50_000).unwrap();
        w0.copy_from_peer(&z0, &s0).unwrap();
        assert_eq!(w0.to_array::<ndarray::Ix1>(&s0).unwrap(), got);
    }
    assert_eq!(ascend_sim::counters().objects(), before.objects());
    assert_eq!(ascend_sim::last_report(), None);
}

#[test]
fn mismatches_are_refused_and_the_device_error_says_what_to_do() {
    let (rt, _serial) = runtime();
    let (d0, d1) = (rt.device(0).unwrap(), rt.device(1).unwrap());
    let (s0, s1) = (d0.stream().unwrap(), d1.stream().unwrap());
    let y0 = DeviceTensor::from_array(&s0, &array![[1.0f32, 2.0], [3.0, 4.0]]).unwrap();
    let mut y1 = DeviceTensor::<f32>::zeros(&s1, (2, 2)).unwrap();

    // The destination's stream is required.
    let e = y1.copy_from_peer(&y0, &s0).unwrap_err();
    assert_eq!(
        e.to_string(),
        "self lives on device 1, but the stream is on device 0: use a stream of device 1, or \
         copy the tensor to device 0 first (`DeviceTensor::copy_from_peer`)"
    );
    let mut wrong = DeviceTensor::<f32>::zeros(&s1, (4, 1)).unwrap();
    assert!(matches!(
        wrong.copy_from_peer(&y0, &s1),
        Err(Error::ShapeMismatch {
            argument: "src",
            ..
        })
    ));
    // An operator given a tensor of another device says the same.
    let e = ascendcl::copy(&y0, &mut y1, &s1).unwrap_err();
    assert!(
        e.to_string().ends_with(
            "but the stream is on device 1: use a stream of device 0, or copy the tensor to \
             device 1 first (`DeviceTensor::copy_from_peer`)"
        ),
        "{e}"
    );
    y1.copy_from_peer(&y0, &s1).unwrap();
    let got: Array2<f32> = y1.to_array(&s1).unwrap();
    assert_eq!(got, array![[1.0f32, 2.0], [3.0, 4.0]]);
}

#[test]
fn after_a_failed_copy_the_source_is_written_again_on_its_own_device() {
    let (rt, _serial) = runtime();
    let (d0, d1) = (rt.device(0).unwrap(), rt.device(1).unwrap());
    let (s0, s1) = (d0.stream().unwrap(), d1.stream().unwrap());
    let mut y0 = DeviceTensor::from_array(&s0, &Array1::from_elem(1000, 1.0f32)).unwrap();
    let mut y1 = DeviceTensor::<f32>::zeros(&s1, 1000).unwrap();
    s0.synchronize().unwrap();
    s1.synchronize().unwrap();
    // The copy's wait on device 1 fails: the copy may still be running.
    ascend_sim::set_fault("aclrtSynchronizeStream", 1).unwrap();
    let copied = y1.copy_from_peer(&y0, &s1);
    ascend_sim::set_fault("aclrtSynchronizeStream", 0).unwrap();
    assert!(copied.is_err(), "{copied:?}");
    // Device 0's stream cannot wait for an event of device 1: the source is written once
    // the host has waited for the copy.
    mish_inplace(&mut y0, &s0).unwrap();
    let got: Array1<f32> = y0.to_array(&s0).unwrap();
    assert!(got.iter().all(|v| (v - 0.865_098).abs() < 1e-5));
    assert_eq!(ascend_sim::last_report(), None);
}
