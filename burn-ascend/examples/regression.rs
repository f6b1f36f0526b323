//! burn's simple-regression model (Linear 8→64, ReLU, Linear 64→1, MSE, Adam) trained
//! on synthetic data under `Autodiff<Ascend>`: loss, ms per step and host fallbacks.
//!
//! `cargo run -p burn-ascend --example regression`

#[path = "../tests/common/models.rs"]
mod models;

use burn::backend::Autodiff;
use burn::tensor::backend::Backend;
use burn_ascend::{Ascend, AscendDevice};
use models::*;
use std::time::Instant;

type B = Autodiff<Ascend>;

fn main() {
    let device = AscendDevice::default();
    println!("backend: {}", Ascend::name(&device));
    let mut model = Mlp::<B>::new([8, 64, 1], 7, &device);
    let mut optim = adam::<B>();
    let steps = 200;
    let start = Instant::now();
    let before = burn_ascend::fallback_count();
    let mut losses = Vec::with_capacity(steps as usize);
    for step in 0..steps {
        let (x, y) = regression_batch::<B>(64, step, &device);
        let (m, loss) = regression_step(model, &mut optim, x, y, 1e-2);
        model = m;
        losses.push(loss);
        if step % 40 == 0 || step == steps - 1 {
            println!("step {step:4}  loss {loss:.5}");
        }
    }
    let ms = start.elapsed().as_secs_f64() * 1e3 / steps as f64;
    let fallbacks = burn_ascend::fallback_count() - before;
    // Accuracy for a regression: the share of held-out predictions within 0.1 of the target.
    let (x, y) = regression_batch::<B>(256, 10_000, &device);
    let err = (model.forward(x) - y).abs();
    let hits: f32 = err.lower_elem(0.1).int().sum().into_scalar() as f32;
    println!("accuracy (|error| < 0.1): {:.1}%", hits / 256.0 * 100.0);
    println!(
        "{ms:.2} ms/step, {} host fallbacks per step",
        fallbacks as f64 / steps as f64
    );
    for (method, n) in burn_ascend::fallback_counts() {
        println!("  fallback {method}: {n}");
    }
    let (first, last) = (losses[0], losses[losses.len() - 1]);
    if fallbacks > 0 || last.is_nan() || last >= 0.5 * first {
        eprintln!("FAILED: loss {first} -> {last}, {fallbacks} host fallbacks");
        std::process::exit(1);
    }
}
