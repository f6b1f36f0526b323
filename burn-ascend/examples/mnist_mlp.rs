//! An MNIST-shaped MLP (784→128, ReLU, 128→10, cross-entropy, Adam) trained on synthetic
//! data under `Autodiff<Ascend>`: loss, accuracy, ms per step and host fallbacks.
//!
//! `cargo run -p burn-ascend --example mnist_mlp`

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
    let mut model = Mlp::<B>::new([784, 128, 10], 3, &device);
    let mut optim = adam::<B>();
    let steps = 40;
    let start = Instant::now();
    let before = burn_ascend::fallback_count();
    let mut accuracy = 0.0;
    let mut losses = Vec::with_capacity(steps as usize);
    for step in 0..steps {
        let (x, y) = mnist_batch::<B>(64, step, &device);
        let (m, loss, acc) = mnist_step(model, &mut optim, x, y, 1e-3);
        model = m;
        accuracy = acc;
        losses.push(loss);
        if step % 10 == 0 || step == steps - 1 {
            println!(
                "step {step:3}  loss {loss:.4}  accuracy {:.1}%",
                acc * 100.0
            );
        }
    }
    let ms = start.elapsed().as_secs_f64() * 1e3 / steps as f64;
    let fallbacks = burn_ascend::fallback_count() - before;
    println!("final batch accuracy {:.1}%", accuracy * 100.0);
    let (x, y) = mnist_batch::<B>(256, 10_000, &device);
    let predicted = model.forward(x).argmax(1).flatten::<1>(0, 1);
    let held_out = predicted.equal(y).int().sum().into_scalar() as f32 / 256.0;
    println!("held-out accuracy {:.1}%", held_out * 100.0);
    println!(
        "{ms:.2} ms/step, {} host fallbacks per step",
        fallbacks as f64 / steps as f64
    );
    for (method, n) in burn_ascend::fallback_counts() {
        println!("  fallback {method}: {n}");
    }
    let (first, last) = (losses[0], losses[losses.len() - 1]);
    if fallbacks > 0 || last.is_nan() || last >= 0.5 * first || held_out < 0.9 {
        eprintln!(
            "FAILED: loss {first} -> {last}, held-out accuracy {held_out}, {fallbacks} host fallbacks"
        );
        std::process::exit(1);
    }
}
