//! A two-layer MLP with a Mish activation, trained on a synthetic regression task with the
//! whole step on the device: forward (addmm, mish, addmm), loss (mse_loss, mean), backward
//! (mse_loss_backward, matmul on transposed views, reduce_sum for the bias gradients,
//! mish_backward) and the SGD update (add_inplace with alpha = −lr), each a plan built
//! once. The host reads only the loss, every 50 steps. Afterwards the same steps run on
//! the CPU with `ascendcl::reference`, and the parameters must agree by the precision
//! standard; the loss must have fallen below a quarter of its first value.
//!
//! Runs on CANN when its libraries are found, else on the in-process simulator. Needs an
//! Atlas A2/A3: the training series (910) has no `aclnnMseLossBackward` and the inference
//! series (310P) no `aclnnAdd`, which the step reports as `Error::UnsupportedOperator`.

mod device;
mod model;

use ascendcl::reference::cube_format;
use ascendcl::{CubeMath, DType, Runtime};
use device::DeviceMlp;
use model::{Config, compare, cpu_step, setup};

fn main() -> ascendcl::Result<()> {
    const STEPS: usize = 400;
    const READ_EVERY: usize = 50;
    let runtime = Runtime::auto()?;
    let dev = runtime.device(0)?;
    println!("backend: {:?}, SoC {}", runtime.backend(), dev.soc_name());
    let stream = dev.stream()?;
    // torch_npu's choice for the product: f32 on Atlas A2/A3, f16 on the 910 and 310P.
    let cfg = Config {
        math: CubeMath::default_for_device(&dev),
        ..Config::EXAMPLE
    };
    let (data, start) = setup(&cfg, 42);

    let mut mlp = DeviceMlp::new(&stream, &cfg, &data, &start)?;
    let mut first = None;
    let mut loss = f32::NAN;
    for step in 0..STEPS {
        mlp.step(&stream)?; // queued: nothing waits here
        if step.is_multiple_of(READ_EVERY) || step + 1 == STEPS {
            loss = mlp.read_loss(&stream)?;
            first.get_or_insert(loss);
            println!("step {step:4}  loss {loss:.5}");
        }
    }
    let first = first.unwrap_or(f32::NAN);
    println!("loss {first:.5} -> {loss:.5}");
    assert!(
        loss < 0.25 * first,
        "the loss did not fall enough: {first} -> {loss}"
    );

    let mut cpu = start;
    for _ in 0..STEPS {
        cpu_step(&mut cpu, &data, &cfg)?;
    }
    // Judged in the dtype the matrix products compute in under `math`.
    let dtype: DType = cube_format(DType::F32, DType::F32, cfg.math).dtype();
    for (name, verdict) in compare(&mlp.params(&stream)?, &cpu, dtype)? {
        println!(
            "{name}: MERE {:.1e}, MARE {:.1e} against the CPU ({dtype} threshold {:.1e})",
            verdict.mere, verdict.mare, verdict.threshold
        );
        assert!(
            verdict.passed,
            "{name} differs from the CPU steps: {verdict:?}"
        );
    }
    Ok(())
}
