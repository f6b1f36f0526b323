//! Device out-of-memory with `ASCEND_SIM_MEM_BYTES=1M`: allocation fails cleanly with a
//! typed error naming `aclrtMalloc` and 207001, earlier tensors stay intact and readable,
//! an operator whose workspace does not fit fails the same way and leaves its output
//! untouched, and everything is released afterwards. Own binary: the variable must be set
//! before the simulator's `aclInit`.

use ascendcl::{DeviceTensor, Error, Runtime, mish_backward, reference};
use half::f16;
use ndarray::{Array1, ArrayD, IxDyn};

#[test]
fn allocation_failure_is_clean_and_earlier_tensors_survive() {
    // SAFETY: single test in this binary, set before the simulator is initialised.
    unsafe { std::env::set_var("ASCEND_SIM_MEM_BYTES", "1M") };
    let rt = Runtime::simulator().unwrap();
    let base = ascend_sim::counters();
    {
        let device = rt.device(0).unwrap();
        let stream = device.stream().unwrap();
        let chunk = 32 * 1024; // f32 elements = 128 KiB
        let mut kept = Vec::new();
        let err = loop {
            let host = Array1::from_shape_fn(chunk, |i| (i + kept.len() * chunk) as f32);
            match DeviceTensor::from_array(&stream, &host) {
                Ok(t) => kept.push((t, host)),
                Err(e) => break e,
            }
            assert!(kept.len() < 64, "1 MiB should be exhausted");
        };
        println!("OOM after {} tensors of 128 KiB: {err}", kept.len());
        assert!(
            matches!(
                err,
                Error::Acl {
                    api: "aclrtMalloc",
                    code: 207_001,
                    ..
                }
            ),
            "{err:?}"
        );
        for (t, host) in &kept {
            assert_eq!(t.to_array(&stream).unwrap(), host.clone().into_dyn());
        }
        // Free two chunks: an operator that needs a workspace (broadcast + cast) larger
        // than what is left fails with the same typed error and leaves its output as it was.
        kept.truncate(kept.len() - 2);
        let g = DeviceTensor::from_array(&stream, &ArrayD::from_elem(IxDyn(&[256, 1]), f16::ONE))
            .unwrap();
        let x = DeviceTensor::from_array(&stream, &ArrayD::from_elem(IxDyn(&[1, 200]), 0.5f32))
            .unwrap();
        let mut out = DeviceTensor::<f32>::zeros(&stream, [256, 200]).unwrap();
        let r = mish_backward(&g, &x, &mut out, &stream);
        assert!(
            matches!(
                r,
                Err(Error::Acl {
                    api: "aclrtMalloc",
                    code: 207_001,
                    ..
                })
            ),
            "{r:?}"
        );
        assert!(
            out.to_array::<ndarray::IxDyn>(&stream)
                .unwrap()
                .iter()
                .all(|v| *v == 0.0)
        );
        for (t, host) in &kept {
            assert_eq!(t.to_array(&stream).unwrap(), host.clone().into_dyn());
        }
        // Room again: the same call succeeds and is right.
        kept.clear();
        mish_backward(&g, &x, &mut out, &stream).unwrap();
        let gh = ArrayD::from_elem(IxDyn(&[256, 1]), f16::ONE);
        let xh = ArrayD::from_elem(IxDyn(&[1, 200]), 0.5f32);
        let want: ArrayD<f32> = reference::mish_backward(gh.view(), xh.view()).unwrap();
        let got = out.to_array::<ndarray::IxDyn>(&stream).unwrap();
        assert!(
            got.iter()
                .zip(want.iter())
                .all(|(a, b)| (a - b).abs() <= 1e-6 * b.abs())
        );
    }
    let after = ascend_sim::counters();
    assert_eq!(after.objects(), base.objects());
    assert_eq!(ascend_sim::last_report(), None);
}
