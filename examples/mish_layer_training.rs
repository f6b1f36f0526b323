//! A two-layer network with a Mish activation, trained on a synthetic regression task.
//!
//! The linear layers run on the CPU with ndarray; Mish's forward (`mish`) and backward
//! (`mish_backward`) run on the device, on tensors allocated once before the loop and
//! filled with `copy_from_array` / read with `copy_to_array` every step, so the loop
//! allocates no device memory. Prints the loss every 50 steps and fails unless the loss
//! has fallen to below a quarter of its initial value.
//!
//! Runs on CANN when its libraries are found, else on the in-process simulator.

use ascendcl::{DeviceTensor, Runtime, mish, mish_backward};
use ndarray::{Array1, Array2, Axis};

/// A small deterministic generator (no extra dependency), uniform in [-1, 1).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> f32 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
    }

    fn matrix(&mut self, rows: usize, cols: usize, scale: f32) -> Array2<f32> {
        Array2::from_shape_fn((rows, cols), |_| self.next() * scale)
    }
}

fn main() -> ascendcl::Result<()> {
    const N: usize = 256;
    const IN: usize = 4;
    const HIDDEN: usize = 32;
    const STEPS: usize = 400;
    const LR: f32 = 0.05;

    let runtime = Runtime::auto()?;
    println!("backend: {:?}", runtime.backend());
    let stream = runtime.device(0)?.stream()?;

    // Task: y = sin(x0) + x1·x2 − 0.5·x3.
    let mut rng = Lcg(42);
    let x = rng.matrix(N, IN, 2.0);
    let y = x.map_axis(Axis(1), |r| r[0].sin() + r[1] * r[2] - 0.5 * r[3]);
    let y = y.insert_axis(Axis(1));

    let mut w1 = rng.matrix(IN, HIDDEN, (1.0 / IN as f32).sqrt());
    let mut b1 = Array1::<f32>::zeros(HIDDEN);
    let mut w2 = rng.matrix(HIDDEN, 1, (1.0 / HIDDEN as f32).sqrt());
    let mut b2 = Array1::<f32>::zeros(1);

    // Device tensors, allocated once.
    let mut h_dev = DeviceTensor::<f32>::zeros(&stream, [N, HIDDEN])?;
    let mut a_dev = DeviceTensor::<f32>::zeros(&stream, [N, HIDDEN])?;
    let mut da_dev = DeviceTensor::<f32>::zeros(&stream, [N, HIDDEN])?;
    let mut dh_dev = DeviceTensor::<f32>::zeros(&stream, [N, HIDDEN])?;
    let mut a = Array2::<f32>::zeros((N, HIDDEN));
    let mut dh = Array2::<f32>::zeros((N, HIDDEN));

    let mut first = None;
    let mut loss = f32::NAN;
    for step in 0..=STEPS {
        // Forward: linear (CPU), Mish (device), linear (CPU).
        let h = x.dot(&w1) + &b1;
        h_dev.copy_from_array(&stream, &h)?;
        mish(&h_dev, &mut a_dev, &stream)?;
        a_dev.copy_to_array(&stream, &mut a)?;
        let pred = a.dot(&w2) + &b2;
        let err = &pred - &y;
        loss = err.mapv(|e| e * e).mean().unwrap_or(f32::NAN);
        first.get_or_insert(loss);
        if step % 50 == 0 {
            println!("step {step:4}  loss {loss:.5}");
        }
        if step == STEPS {
            break;
        }

        // Backward: d loss / d pred, the second linear layer (CPU), Mish' (device), the
        // first linear layer (CPU).
        let dpred = err * (2.0 / N as f32);
        let dw2 = a.t().dot(&dpred);
        let db2 = dpred.sum_axis(Axis(0));
        let da = dpred.dot(&w2.t());
        da_dev.copy_from_array(&stream, &da)?;
        mish_backward(&da_dev, &h_dev, &mut dh_dev, &stream)?;
        dh_dev.copy_to_array(&stream, &mut dh)?;
        let dw1 = x.t().dot(&dh);
        let db1 = dh.sum_axis(Axis(0));

        w1.scaled_add(-LR, &dw1);
        b1.scaled_add(-LR, &db1);
        w2.scaled_add(-LR, &dw2);
        b2.scaled_add(-LR, &db2);
    }
    let first = first.unwrap_or(f32::NAN);
    println!("loss {first:.5} -> {loss:.5}");
    assert!(
        loss < 0.25 * first,
        "the loss did not fall enough: {first} -> {loss}"
    );
    Ok(())
}
