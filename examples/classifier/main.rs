//! An MNIST-shaped classifier trained on the device: an MLP 784→128→10 with ReLU,
//! log-softmax and NLL on int64 labels, AdamW, on synthetic data (class prototypes plus
//! noise, generated here from a seed: no download), with a train and a test split.
//!
//! Every tensor is allocated and every plan built once; a step's only transfer is its
//! batch going in (images and labels); every `READ_EVERY` steps the loss and the
//! batch's accuracy, both computed on the device (ArgMax, EqTensor, Mean), come out.
//! After `WARM_UP` steps the example asserts that the steps make no heap allocation on
//! the calling thread and no device allocation (the caching allocator's counters).
//!
//! The first two steps are checked against the same steps on the CPU through
//! `ascendcl::reference` (AdamW by `reference::apply_adam_w_v2`), and the run fails
//! unless the test accuracy reaches 95 %.
//!
//! ```text
//! cargo run --release -p ascendcl-examples --example classifier
//! ```

mod adamw;
mod counting;
mod cpu;
mod data;
mod device;

use ascendcl::Runtime;
use ascendcl::reference::AdamW;
use data::{INPUTS, Lcg, init, shuffle, splits};
use device::DeviceMlp;
use ndarray::{Array1, Array2};
use std::process::ExitCode;

#[global_allocator]
static GLOBAL: counting::Counting = counting::Counting;

const TRAIN: usize = 4096;
const TEST: usize = 1024;
const BATCH: usize = 64;
const STEPS: usize = 400;
const WARM_UP: usize = 20;
const READ_EVERY: usize = 50;
const HYPER: AdamW = AdamW {
    lr: 1e-3,
    beta1: 0.9,
    beta2: 0.999,
    weight_decay: 1e-2,
    eps: 1e-8,
    amsgrad: false,
    maximize: false,
};
/// The device's first losses against the CPU's: relative error (f32 throughout; the
/// matrix products' summation orders differ).
const LOSS_TOL: f32 = 1e-5;
/// The device's `w2` after the checked steps against the CPU's: absolute error, 1 % of
/// one AdamW step's size (η).
const PARAM_TOL: f32 = 1e-5;
const MIN_TEST_ACCURACY: f32 = 0.95;

fn main() -> ascendcl::Result<ExitCode> {
    let start = std::time::Instant::now();
    let runtime = Runtime::auto()?;
    let dev = runtime.device(0)?;
    println!("backend: {:?}, SoC {}", runtime.backend(), dev.soc_name());
    let stream = dev.stream()?;
    let (train, test) = splits(2024, TRAIN, TEST);
    let params = init(7);
    let mut mlp = DeviceMlp::new(&stream, BATCH, &params, &HYPER)?;
    let mut cpu = cpu::CpuMlp::new(params);

    let mut x = Array2::<f32>::zeros((BATCH, INPUTS));
    let mut y = Array1::<i64>::zeros(BATCH);
    let mut order: Vec<usize> = (0..TRAIN).collect();
    let mut rng = Lcg(99);
    shuffle(&mut rng, &mut order);
    let mut at = 0;
    let mut next_batch = |x: &mut Array2<f32>, y: &mut Array1<i64>| {
        if at + BATCH > TRAIN {
            shuffle(&mut rng, &mut order);
            at = 0;
        }
        train.fill(&order, at, x, y);
        at += BATCH;
    };

    // The first two steps against the CPU.
    for k in 0..2 {
        next_batch(&mut x, &mut y);
        mlp.upload(&x, &y, &stream)?;
        mlp.step(&stream)?;
        let (dl, _) = mlp.read(&stream)?;
        let cl = cpu.step(&x, &y, &HYPER)?;
        let err = (dl - cl).abs() / cl.abs();
        println!("check step {k}: loss device {dl:.7} cpu {cl:.7} (relative error {err:.1e})");
        if err > LOSS_TOL {
            eprintln!("the device's loss at step {k} differs from the CPU's beyond {LOSS_TOL:e}");
            return Ok(ExitCode::FAILURE);
        }
    }
    let got = mlp.params(&stream)?;
    let werr = got
        .w2
        .iter()
        .zip(&cpu.p.w2)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f32::max);
    println!("check after 2 steps: w2 max abs error {werr:.1e} (tolerance {PARAM_TOL:e})");
    if werr > PARAM_TOL {
        eprintln!("the device's w2 differs from the CPU's beyond {PARAM_TOL:e}");
        return Ok(ExitCode::FAILURE);
    }

    for _ in 2..WARM_UP {
        next_batch(&mut x, &mut y);
        mlp.upload(&x, &y, &stream)?;
        mlp.step(&stream)?;
    }
    stream.synchronize()?;

    // Measured: every step after warm-up. Printing is outside the counted windows.
    let stats0 = dev.memory_stats();
    let mut host_allocs = 0;
    let t0 = std::time::Instant::now();
    for step in WARM_UP..STEPS {
        let before = counting::on_this_thread();
        next_batch(&mut x, &mut y);
        mlp.upload(&x, &y, &stream)?;
        mlp.step(&stream)?;
        let read = (step.is_multiple_of(READ_EVERY) || step + 1 == STEPS)
            .then(|| mlp.read(&stream))
            .transpose()?;
        host_allocs += counting::on_this_thread() - before;
        if let Some((loss, acc)) = read {
            println!("step {step:4}  loss {loss:.4}  batch accuracy {acc:.3}");
        }
    }
    stream.synchronize()?;
    let per = t0.elapsed().as_secs_f64() * 1e3 / (STEPS - WARM_UP) as f64;
    let stats1 = dev.memory_stats();
    let device_allocs = (stats1.device_allocations - stats0.device_allocations)
        + (stats1.cache_hits - stats0.cache_hits);
    let steps = (STEPS - WARM_UP) as u64;
    println!(
        "{steps} steps after warm-up: {host_allocs} host allocations on this thread, \
         {device_allocs} device allocations (aclrtMalloc + cache hits); {per:.2} ms/step; \
         transfers per step: 2 in (images, labels), 2 out every {READ_EVERY} steps"
    );
    assert_eq!(host_allocs, 0, "host allocations after warm-up");
    assert_eq!(device_allocs, 0, "device allocations after warm-up");

    // The test split, through the same forward plans, batch by batch.
    let mut hits = 0.0;
    let mut loss_sum = 0.0;
    let all: Vec<usize> = (0..TEST).collect();
    for b in 0..TEST / BATCH {
        test.fill(&all, b * BATCH, &mut x, &mut y);
        mlp.upload(&x, &y, &stream)?;
        mlp.forward(&stream)?;
        let (loss, acc) = mlp.read(&stream)?;
        hits += acc;
        loss_sum += loss;
    }
    let batches = (TEST / BATCH) as f32;
    let acc = hits / batches;
    println!(
        "test: loss {:.4}, accuracy {acc:.4} over {TEST} samples; total {:.1} s",
        loss_sum / batches,
        start.elapsed().as_secs_f64()
    );
    if acc < MIN_TEST_ACCURACY {
        eprintln!("test accuracy {acc:.4} is below {MIN_TEST_ACCURACY}");
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}
