//! A two-layer MLP with a Mish activation, trained on a synthetic regression task with
//! the CPU reference operators (`ascendcl::reference`): forward (addmm, mish, addmm),
//! loss (mse_loss, mean), backward (mse_loss_backward, matmul on transposed views,
//! reduce_sum for the bias gradients, mish_backward) and the SGD update (add with
//! alpha = −lr). Prints the loss every 50 steps and fails unless it falls below a
//! quarter of its initial value.

mod model;

use model::{Config, cpu_step, setup};

fn main() -> ascendcl::Result<()> {
    const STEPS: usize = 400;
    let cfg = Config::EXAMPLE;
    let (data, mut params) = setup(&cfg, 42);
    let mut first = None;
    let mut loss = f32::NAN;
    for step in 0..STEPS {
        loss = cpu_step(&mut params, &data, &cfg)?;
        first.get_or_insert(loss);
        if step % 50 == 0 {
            println!("step {step:4}  loss {loss:.5}");
        }
    }
    let first = first.unwrap_or(f32::NAN);
    println!("loss {first:.5} -> {loss:.5}");
    assert!(
        loss < 0.25 * first,
        "the loss did not fall enough: {first} -> {loss}"
    );
    Ok(())
}
