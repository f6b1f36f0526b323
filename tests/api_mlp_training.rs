//! The training example's step on the device (`examples/mlp_training/device.rs`), run
//! through plans: after warm-up, 200 steps make 0 heap allocations (counted process-wide,
//! the simulator's stream worker included) and 0 device or pinned allocations; every
//! operator runs on the device each step; the loss falls; and the parameters agree with
//! the same steps computed on the CPU with `ascendcl::reference` under the precision
//! standard.

mod common;
#[path = "../examples/mlp_training/device.rs"]
mod device;
#[path = "../examples/mlp_training/model.rs"]
mod model;

use common::counting::{Counting, allocations_during};
use common::*;
use device::DeviceMlp;
use model::{Config, compare, cpu_step, setup};

#[global_allocator]
static GLOBAL: Counting = Counting;

const STEPS: usize = 200;
const WARM_UP: usize = 5;
/// The loss is read every this many steps, as the example does.
const READ_EVERY: usize = 50;

/// The entry points one step launches, and how many times each.
const LAUNCHES: [(&str, u64); 7] = [
    ("aclnnAddmm", 2),
    ("aclnnMish", 1),
    ("aclnnMseLoss", 1),
    ("aclnnMseLossBackward", 1),
    ("aclnnMatmul", 3),
    ("aclnnReduceSum", 2),
    ("aclnnInplaceAdd", 4),
];

#[test]
fn two_hundred_device_steps_allocate_nothing_and_match_the_cpu() {
    let _leaks = LeakCheck::start();
    ascend_sim::clear_last_report();
    let stream = device(A2).stream().unwrap();
    let cfg = Config {
        samples: 64,
        inputs: 4,
        hidden: 16,
        ..Config::EXAMPLE
    };
    let (data, params) = setup(&cfg, 42);
    let mut mlp = DeviceMlp::new(&stream, &cfg, &data, &params).unwrap();
    let mut losses = Vec::with_capacity(STEPS / READ_EVERY + 2);
    for _ in 0..WARM_UP {
        mlp.step(&stream).unwrap();
    }
    losses.push(mlp.read_loss(&stream).unwrap());
    let calls = |name: &str| ascend_sim::call_count(name);
    let mallocs = calls("aclrtMalloc");
    let host_mallocs = calls("aclrtMallocHost");
    let launches: Vec<u64> = LAUNCHES.iter().map(|(name, _)| calls(name)).collect();
    let (_, heap) = allocations_during(|| {
        for step in 1..=STEPS {
            mlp.step(&stream).unwrap();
            if step % READ_EVERY == 0 {
                // `losses` has its capacity: pushing does not allocate.
                losses.push(mlp.read_loss(&stream).unwrap());
            }
        }
    });
    assert_eq!(heap, 0, "heap allocations over {STEPS} steps");
    assert_eq!(calls("aclrtMalloc"), mallocs, "device allocations");
    assert_eq!(calls("aclrtMallocHost"), host_mallocs, "pinned allocations");
    for ((name, per_step), before) in LAUNCHES.iter().zip(&launches) {
        assert_eq!(
            calls(name),
            before + per_step * STEPS as u64,
            "{name} ran {per_step} times per step on the device"
        );
    }
    let (first, last) = (losses[0], losses[losses.len() - 1]);
    assert!(
        last.is_finite() && last < 0.5 * first,
        "the loss did not fall: {losses:?}"
    );

    // The same steps on the CPU.
    let mut cpu = params.clone();
    for _ in 0..WARM_UP + STEPS {
        cpu_step(&mut cpu, &data, &cfg).unwrap();
    }
    let on_device = mlp.params(&stream).unwrap();
    for (name, verdict) in compare(&on_device, &cpu).unwrap() {
        assert!(verdict.passed, "{name}: {verdict:?}");
    }
    drop(mlp);
    stream.synchronize().unwrap();
    assert_eq!(ascend_sim::last_report(), None);
}
