//! Hardware smoke set, `#[ignore]`d: run on an Atlas machine with CANN installed
//! (`scripts/npu-smoke.sh`, or `cargo test --test npu_smoke -- --ignored --nocapture`).
//! Loads the real CANN (`Runtime::cann()`, never the simulator), prints the SoC, and runs
//! the property suite of `tests/common/props.rs` on the NPU against the CPU reference with
//! the CANN precision standard, for every dtype triple the SoC accepts. Fails clearly when
//! CANN cannot be loaded. Never run in this repository's CI (no NPU there).

mod common;

use ascendcl::{Backend, DeviceTensor, Runtime, mish_backward, reference};
use common::props;
use common::props_mish::MishBackwardOp;

fn cann() -> Runtime {
    match Runtime::cann() {
        Ok(rt) => {
            assert_eq!(rt.backend(), Backend::Cann);
            rt
        }
        Err(e) => panic!(
            "CANN could not be loaded ({e}). Source /usr/local/Ascend/ascend-toolkit/set_env.sh (or set ASCEND_HOME_PATH) on a machine with an Ascend NPU."
        ),
    }
}

#[test]
#[ignore = "needs an Ascend NPU and CANN"]
fn npu_soc_and_sample_values() {
    let rt = cann();
    println!("CANN devices: {}", rt.device_count().unwrap());
    let device = rt.device(0).unwrap();
    println!("SoC: {}", device.soc_name());
    let stream = device.stream().unwrap();
    let g = ndarray::array![[0.0f32, 1.0], [2.0, 3.0]].into_dyn();
    let x = ndarray::array![1.0f32, 2.0].into_dyn();
    let want: ndarray::ArrayD<f32> = reference::mish_backward(g.view(), x.view()).unwrap();
    let gd = DeviceTensor::from_array(&stream, &g).unwrap();
    let xd = DeviceTensor::from_array(&stream, &x).unwrap();
    let mut od = DeviceTensor::<f32>::zeros(&stream, [2, 2]).unwrap();
    mish_backward(&gd, &xd, &mut od, &stream).unwrap();
    common::assert_precise(
        &od.to_array(&stream).unwrap(),
        &want,
        common::threshold(ascendcl::DType::F32),
        "sample",
    );
}

#[test]
#[ignore = "needs an Ascend NPU and CANN"]
fn npu_property_suite_against_the_reference() {
    let rt = cann();
    let device = rt.device(0).unwrap();
    let stream = device.stream().unwrap();
    let cases = std::env::var("PROOF_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(512);
    let sizes = props::Sizes {
        cases,
        max_out: 20_000,
        max_storage: None,
    };
    props::property_suite::<MishBackwardOp>(
        &stream,
        device.soc_name(),
        sizes,
        "tests/npu_smoke.proptest-regressions",
        "NPU properties",
    )
    .unwrap();
}
