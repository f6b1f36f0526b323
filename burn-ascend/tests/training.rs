//! burn's models train under `Autodiff<Ascend>` step for step as on burn-ndarray from the
//! same initial weights, with no host fallback in a step.

mod common;

use burn::backend::Autodiff;
use burn_ascend::{Ascend, AscendDevice};
use burn_ndarray::NdArray;
use common::models::*;

type Dev = Autodiff<Ascend>;
type Cpu = Autodiff<NdArray>;

fn close(a: f32, b: f32) -> bool {
    (a - b).abs() <= 1e-3 * b.abs().max(1e-6)
}

#[test]
fn regression_losses_match_ndarray_with_no_fallback_per_step() {
    let _turn = common::counter_turn();
    let (device, cpu) = (AscendDevice::default(), Default::default());
    let mut model = Mlp::<Dev>::new([8, 64, 1], 7, &device);
    let mut reference = Mlp::<Cpu>::new([8, 64, 1], 7, &cpu);
    let (mut optim, mut optim_ref) = (adam::<Dev>(), adam::<Cpu>());
    let mut losses = Vec::new();
    for step in 0..6 {
        let (x, y) = regression_batch::<Dev>(32, step, &device);
        let (xr, yr) = regression_batch::<Cpu>(32, step, &cpu);
        let before = burn_ascend::fallback_count();
        let (m, loss) = regression_step(model, &mut optim, x, y, 1e-2);
        let fallbacks = burn_ascend::fallback_count() - before;
        model = m;
        let (m, want) = regression_step(reference, &mut optim_ref, xr, yr, 1e-2);
        reference = m;
        assert!(
            close(loss, want),
            "step {step}: loss {loss} vs ndarray {want}"
        );
        assert_eq!(
            fallbacks,
            0,
            "step {step}: {:?}",
            burn_ascend::fallback_counts()
        );
        losses.push(loss);
    }
    assert!(losses[5] < losses[0], "the loss falls: {losses:?}");
}

#[test]
fn mnist_mlp_losses_match_ndarray_with_no_fallback_per_step() {
    let _turn = common::counter_turn();
    let (device, cpu) = (AscendDevice::default(), Default::default());
    let mut model = Mlp::<Dev>::new([784, 128, 10], 3, &device);
    let mut reference = Mlp::<Cpu>::new([784, 128, 10], 3, &cpu);
    let (mut optim, mut optim_ref) = (adam::<Dev>(), adam::<Cpu>());
    let mut losses = Vec::new();
    for step in 0..3 {
        let (x, y) = mnist_batch::<Dev>(16, step, &device);
        let (xr, yr) = mnist_batch::<Cpu>(16, step, &cpu);
        let before = burn_ascend::fallback_count();
        let (m, loss, acc) = mnist_step(model, &mut optim, x, y, 1e-3);
        let fallbacks = burn_ascend::fallback_count() - before;
        model = m;
        let (m, want, want_acc) = mnist_step(reference, &mut optim_ref, xr, yr, 1e-3);
        reference = m;
        assert!(
            close(loss, want),
            "step {step}: loss {loss} vs ndarray {want}"
        );
        assert_eq!(acc, want_acc, "step {step}: accuracy");
        assert_eq!(
            fallbacks,
            0,
            "step {step}: {:?}",
            burn_ascend::fallback_counts()
        );
        losses.push(loss);
    }
    assert!(losses[2] < losses[0], "the loss falls: {losses:?}");
}

#[test]
fn mnist_cnn_trains_with_no_fallback_per_step() {
    use common::cnn::*;
    let _turn = common::counter_turn();
    let device = AscendDevice::default();
    <Ascend as burn::tensor::backend::Backend>::seed(&device, 5);
    let mut model = Cnn::<Dev>::new(&device);
    let mut optim = adam_w::<Dev>();
    let mut losses = Vec::new();
    let mut per_step = Vec::new();
    for step in 0..12 {
        let (x, y) = images::<Dev>(16, step, &device);
        let before = burn_ascend::fallback_count();
        let (m, loss, _) = cnn_step(model, &mut optim, x, y, 3e-3);
        per_step.push(burn_ascend::fallback_count() - before);
        model = m;
        assert!(loss.is_finite(), "step {step}: loss {loss}");
        losses.push(loss);
    }
    assert!(
        per_step.iter().all(|&n| n == 0),
        "fallbacks per step {per_step:?}: {:?}",
        burn_ascend::fallback_counts()
    );
    let (head, tail) = (
        losses[..3].iter().sum::<f32>(),
        losses[9..].iter().sum::<f32>(),
    );
    assert!(tail < 0.7 * head, "the loss falls: {losses:?}");
}
