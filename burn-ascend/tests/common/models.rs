//! The models the tests and examples train: burn's simple regression (Linear 8→64, ReLU,
//! Linear 64→1, MSE, Adam) and an MNIST-shaped MLP (784→128→10, cross-entropy, Adam), on
//! synthetic data, with weights drawn from one seeded generator so that two backends
//! start from the same numbers.

#![allow(dead_code)]

use burn::module::{AutodiffModule, Module, Param};
use burn::nn::Linear;
use burn::nn::loss::{CrossEntropyLossConfig, MseLoss, Reduction};
use burn::optim::{AdamConfig, GradientsParams, Optimizer};
use burn::tensor::activation::relu;
use burn::tensor::backend::{AutodiffBackend, Backend};
use burn::tensor::{ElementConversion, Int, Tensor, TensorData};

/// A small deterministic generator (xorshift64*), the same on every backend.
pub struct Lcg(u64);

impl Lcg {
    pub fn new(seed: u64) -> Self {
        Self(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    /// Uniform in [0, 1).
    pub fn next_f32(&mut self) -> f32 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let x = self.0.wrapping_mul(0x2545_F491_4F6C_DD1D);
        (x >> 40) as f32 / (1u64 << 24) as f32
    }

    /// Uniform in [-k, k).
    pub fn uniform(&mut self, n: usize, k: f32) -> Vec<f32> {
        (0..n).map(|_| (self.next_f32() * 2.0 - 1.0) * k).collect()
    }
}

/// A Linear layer with burn's default init range, drawn from `rng`.
pub fn linear<B: Backend>(
    d_in: usize,
    d_out: usize,
    rng: &mut Lcg,
    device: &B::Device,
) -> Linear<B> {
    let k = (1.0 / d_in as f32).sqrt();
    let w = TensorData::new(rng.uniform(d_in * d_out, k), [d_in, d_out]);
    let b = TensorData::new(rng.uniform(d_out, k), [d_out]);
    Linear {
        weight: Param::from_tensor(Tensor::from_data(w, device)),
        bias: Some(Param::from_tensor(Tensor::from_data(b, device))),
    }
}

/// Two Linear layers with a ReLU between them.
#[derive(Module, Debug)]
pub struct Mlp<B: Backend> {
    pub hidden: Linear<B>,
    pub out: Linear<B>,
}

impl<B: Backend> Mlp<B> {
    pub fn new(sizes: [usize; 3], seed: u64, device: &B::Device) -> Self {
        let mut rng = Lcg::new(seed);
        Self {
            hidden: linear(sizes[0], sizes[1], &mut rng, device),
            out: linear(sizes[1], sizes[2], &mut rng, device),
        }
    }

    pub fn forward(&self, x: Tensor<B, 2>) -> Tensor<B, 2> {
        self.out.forward(relu(self.hidden.forward(x)))
    }
}

/// A synthetic regression batch: `y = Σ xᵢ·cᵢ + 0.5` with fixed coefficients.
pub fn regression_batch<B: Backend>(
    batch: usize,
    seed: u64,
    device: &B::Device,
) -> (Tensor<B, 2>, Tensor<B, 2>) {
    let mut rng = Lcg::new(seed);
    let x = rng.uniform(batch * 8, 1.0);
    let y: Vec<f32> = x
        .chunks(8)
        .map(|r| {
            r.iter()
                .enumerate()
                .map(|(i, v)| v * (i as f32 - 3.5) / 4.0)
                .sum::<f32>()
                + 0.5
        })
        .collect();
    (
        Tensor::from_data(TensorData::new(x, [batch, 8]), device),
        Tensor::from_data(TensorData::new(y, [batch, 1]), device),
    )
}

/// A synthetic MNIST-shaped batch: 784 features whose class is the strongest of ten
/// feature groups.
pub fn mnist_batch<B: Backend>(
    batch: usize,
    seed: u64,
    device: &B::Device,
) -> (Tensor<B, 2>, Tensor<B, 1, Int>) {
    let mut rng = Lcg::new(seed);
    let mut x = rng.uniform(batch * 784, 0.5);
    let mut labels = Vec::with_capacity(batch);
    for (i, row) in x.chunks_mut(784).enumerate() {
        let label = (i * 7 + seed as usize) % 10;
        for v in &mut row[label * 78..label * 78 + 78] {
            *v += 0.5;
        }
        labels.push(label as i64);
    }
    (
        Tensor::from_data(TensorData::new(x, [batch, 784]), device),
        Tensor::from_data(TensorData::new(labels, [batch]), device),
    )
}

/// One Adam step of the regression model; returns the loss before the update.
pub fn regression_step<B: AutodiffBackend>(
    model: Mlp<B>,
    optim: &mut impl Optimizer<Mlp<B>, B>,
    x: Tensor<B, 2>,
    y: Tensor<B, 2>,
    lr: f64,
) -> (Mlp<B>, f32) {
    let loss = MseLoss::new().forward(model.forward(x), y, Reduction::Mean);
    let value = loss.clone().into_scalar().elem::<f32>();
    let grads = GradientsParams::from_grads(loss.backward(), &model);
    (optim.step(lr, model, grads), value)
}

/// One Adam step of the MLP classifier; returns the loss before the update and the
/// batch accuracy.
pub fn mnist_step<B: AutodiffBackend>(
    model: Mlp<B>,
    optim: &mut impl Optimizer<Mlp<B>, B>,
    x: Tensor<B, 2>,
    y: Tensor<B, 1, Int>,
    lr: f64,
) -> (Mlp<B>, f32, f32) {
    let logits = model.forward(x);
    classifier_step(model, optim, logits, y, lr)
}

/// One optimizer step of a classifier from its `logits` for labels `y`: cross-entropy,
/// backward, update; returns the loss before the update and the batch accuracy.
pub fn classifier_step<B: AutodiffBackend, M: AutodiffModule<B>>(
    model: M,
    optim: &mut impl Optimizer<M, B>,
    logits: Tensor<B, 2>,
    y: Tensor<B, 1, Int>,
    lr: f64,
) -> (M, f32, f32) {
    let batch = y.dims()[0] as f32;
    let loss = CrossEntropyLossConfig::new()
        .init(&logits.device())
        .forward(logits.clone(), y.clone());
    let correct = logits
        .argmax(1)
        .flatten::<1>(0, 1)
        .equal(y)
        .int()
        .sum()
        .into_scalar()
        .elem::<i64>();
    let value = loss.clone().into_scalar().elem::<f32>();
    let grads = GradientsParams::from_grads(loss.backward(), &model);
    (optim.step(lr, model, grads), value, correct as f32 / batch)
}

/// burn's Adam with its defaults.
pub fn adam<B: AutodiffBackend>() -> impl Optimizer<Mlp<B>, B> {
    AdamConfig::new().init()
}
