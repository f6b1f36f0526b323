//! The training example's step on the device (`examples/mlp_training/device.rs`), run
//! through plans: after warm-up, its steps make no heap allocation on any host thread
//! and no device or pinned allocation; every operator runs on the device each step; the loss
//! falls; and the parameters agree with the same steps computed on the CPU by the
//! example's `model::cpu_step` under the precision standard. (`api_training_step` is the
//! issue's 200-step version of this test, written against the plans directly.)

mod common;
#[path = "../examples/mlp_training/device.rs"]
mod device;
#[path = "../examples/mlp_training/model.rs"]
mod model;

use common::counting::{
    Counting, assert_mlp_steps_allocate_on_no_host_thread, host_and_device_during,
};
use common::*;
use device::DeviceMlp;
use model::{Config, compare, cpu_step, setup};

#[global_allocator]
static GLOBAL: Counting = Counting;

const STEPS: usize = 100;
const WARM_UP: usize = 5;
/// The loss is read every this many steps, as the example does.
const READ_EVERY: usize = 25;

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
    let heap = host_and_device_during(|| {
        for step in 1..=STEPS {
            mlp.step(&stream).unwrap();
            if step.is_multiple_of(READ_EVERY) {
                // `losses` has its capacity: pushing does not allocate.
                losses.push(mlp.read_loss(&stream).unwrap());
            } else {
                // Keeps the simulator's queue as short as in warm-up.
                stream.synchronize().unwrap();
            }
        }
    });
    assert_mlp_steps_allocate_on_no_host_thread(heap, STEPS);
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

    // The same steps on the CPU, with the losses read at the same steps.
    let mut cpu = params.clone();
    let mut cpu_losses = Vec::new();
    for step in 1..=WARM_UP + STEPS {
        let loss = cpu_step(&mut cpu, &data, &cfg).unwrap();
        if step == WARM_UP || (step > WARM_UP && (step - WARM_UP).is_multiple_of(READ_EVERY)) {
            cpu_losses.push(loss);
        }
    }
    assert_eq!(cpu_losses.len(), losses.len());
    for (d, c) in losses.iter().zip(&cpu_losses) {
        assert!(
            (d - c).abs() <= 1e-4 * c.abs(),
            "device loss {d}, CPU loss {c}"
        );
    }
    let on_device = mlp.params(&stream).unwrap();
    println!("losses {losses:?}; heap allocations {heap:?}");
    for (name, verdict) in compare(&on_device, &cpu, ascendcl::DType::F32).unwrap() {
        println!(
            "{name}: MERE {:.2e}, MARE {:.2e}",
            verdict.mere, verdict.mare
        );
        assert!(verdict.passed, "{name}: {verdict:?}");
    }
    drop(mlp);
    stream.synchronize().unwrap();
    assert_eq!(ascend_sim::last_report(), None);
}
