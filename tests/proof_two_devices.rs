//! Two devices (`ASCEND_SIM_DEVICES=Ascend910B4,Ascend910B4`, own binary): threads on both
//! devices at once, results checked against the reference, a tensor of one device
//! rejected on the other's stream, no leak.

use ascendcl::{DeviceTensor, Error, Runtime, mish_backward, reference};
use ndarray::{ArrayD, IxDyn};

#[test]
fn two_devices_in_parallel() {
    // SAFETY: single test in this binary, set before the simulator is initialised.
    unsafe { std::env::set_var("ASCEND_SIM_DEVICES", "Ascend910B4,Ascend910B4") };
    let rt = Runtime::simulator().unwrap();
    assert_eq!(rt.device_count().unwrap(), 2);
    let base = ascend_sim::counters();
    let per_thread = 200usize;
    std::thread::scope(|s| {
        for t in 0..8usize {
            s.spawn(move || {
                let device = rt.device((t % 2) as i32).unwrap();
                let stream = device.stream().unwrap();
                for i in 0..per_thread {
                    let n = 1 + (t * 31 + i * 7) % 300;
                    let g = ArrayD::from_shape_fn(IxDyn(&[n]), |k| {
                        ((k[0] + i) % 13) as f32 * 0.3 - 2.0
                    });
                    let x = ArrayD::from_shape_fn(IxDyn(&[n]), |k| {
                        ((k[0] * 7 + t) % 17) as f32 * 0.5 - 4.0
                    });
                    let want: ArrayD<f32> = reference::mish_backward(g.view(), x.view()).unwrap();
                    let gd = DeviceTensor::from_array(&stream, &g).unwrap();
                    let xd = DeviceTensor::from_array(&stream, &x).unwrap();
                    let mut od = DeviceTensor::<f32>::zeros(&stream, [n]).unwrap();
                    mish_backward(&gd, &xd, &mut od, &stream).unwrap();
                    let got = od.to_array::<ndarray::IxDyn>(&stream).unwrap();
                    for (a, b) in got.iter().zip(want.iter()) {
                        assert!((a - b).abs() <= 1e-5 * b.abs().max(1e-3), "{a} vs {b}");
                    }
                }
            });
        }
    });
    let (d0, d1) = (rt.device(0).unwrap(), rt.device(1).unwrap());
    let (s0, s1) = (d0.stream().unwrap(), d1.stream().unwrap());
    let t1 = DeviceTensor::from_array(&s1, &ArrayD::<f32>::ones(IxDyn(&[4]))).unwrap();
    let mut o0 = DeviceTensor::<f32>::zeros(&s0, [4]).unwrap();
    assert!(matches!(
        mish_backward(&t1, &t1, &mut o0, &s0),
        Err(Error::DeviceMismatch {
            expected: 0,
            found: 1,
            ..
        })
    ));
    drop((t1, o0, s0, s1, d0, d1));
    let after = ascend_sim::counters();
    assert_eq!(after.objects(), base.objects());
    assert_eq!(ascend_sim::last_report(), None);
    println!(
        "two devices: 8 threads (4 per device) x {per_thread} calls = {} calls, all right",
        8 * per_thread
    );
}
