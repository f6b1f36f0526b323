//! Runs `N` training steps of the MNIST-shaped MLP under `Autodiff<Ascend>` after three
//! warm-up steps, for instruction counting under callgrind: the difference of two runs
//! with different `N` is the host cost of `N₂ − N₁` steady-state steps, and the executor
//! cache's counters give the operator calls per step.
//!
//! ```sh
//! cargo build --release -p burn-ascend --example step_cost
//! valgrind --tool=callgrind --separate-threads=yes target/release/examples/step_cost 4
//! valgrind --tool=callgrind --separate-threads=yes target/release/examples/step_cost 8
//! ```

#[path = "../tests/common/models.rs"]
mod models;

use burn::backend::Autodiff;
use burn_ascend::{Ascend, AscendDevice};
use models::*;

type B = Autodiff<Ascend>;

fn main() {
    let steps: u64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(4);
    let device = AscendDevice::default();
    let mut model = Mlp::<B>::new([784, 128, 10], 3, &device);
    let mut optim = adam::<B>();
    let batches: Vec<_> = (0..4).map(|i| mnist_batch::<B>(16, i, &device)).collect();
    for (x, y) in batches.iter().take(3).cloned() {
        model = mnist_step(model, &mut optim, x, y, 1e-3).0;
    }
    let stats = burn_ascend::executor_cache_stats(&device);
    for step in 0..steps {
        let (x, y) = batches[3].clone();
        let (m, loss, _) = mnist_step(model, &mut optim, x, y, 1e-3);
        model = m;
        if step == steps - 1 {
            println!("loss {loss:.4}");
        }
    }
    let after = burn_ascend::executor_cache_stats(&device);
    let calls = (after.hits + after.misses) - (stats.hits + stats.misses);
    println!(
        "{steps} steps: {} operator calls per step, {} cache misses, {} host fallbacks",
        calls / steps,
        after.misses - stats.misses,
        burn_ascend::fallback_count()
    );
}
