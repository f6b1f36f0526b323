//! burn's MNIST CNN shape: two blocks of conv 3×3 → batch-norm → GELU → max-pool 2×2,
//! dropout, a linear classifier, cross-entropy and AdamW, on synthetic 28×28 images
//! whose class decides where a bright bar lies.

#![allow(dead_code)]

use super::models::Lcg;
use burn::module::Module;
use burn::nn::conv::{Conv2d, Conv2dConfig};
use burn::nn::pool::{MaxPool2d, MaxPool2dConfig};
use burn::nn::{BatchNorm, BatchNormConfig, Dropout, DropoutConfig, Gelu, Linear, LinearConfig};
use burn::optim::{AdamWConfig, Optimizer};
use burn::tensor::backend::{AutodiffBackend, Backend};
use burn::tensor::{Int, Tensor, TensorData};

#[derive(Module, Debug)]
pub struct ConvBlock<B: Backend> {
    conv: Conv2d<B>,
    norm: BatchNorm<B>,
    pool: MaxPool2d,
    activation: Gelu,
}

impl<B: Backend> ConvBlock<B> {
    fn new(channels: [usize; 2], device: &B::Device) -> Self {
        Self {
            conv: Conv2dConfig::new(channels, [3, 3]).init(device),
            norm: BatchNormConfig::new(channels[1]).init(device),
            pool: MaxPool2dConfig::new([2, 2]).with_strides([2, 2]).init(),
            activation: Gelu::new(),
        }
    }

    fn forward(&self, x: Tensor<B, 4>) -> Tensor<B, 4> {
        let x = self.conv.forward(x);
        let x = self.norm.forward(x);
        self.pool.forward(self.activation.forward(x))
    }
}

#[derive(Module, Debug)]
pub struct Cnn<B: Backend> {
    block1: ConvBlock<B>,
    block2: ConvBlock<B>,
    dropout: Dropout,
    fc: Linear<B>,
}

/// 28 → conv 26 → pool 13 → conv 11 → pool 5.
const FLAT: usize = 16 * 5 * 5;

impl<B: Backend> Cnn<B> {
    pub fn new(device: &B::Device) -> Self {
        Self {
            block1: ConvBlock::new([1, 8], device),
            block2: ConvBlock::new([8, 16], device),
            dropout: DropoutConfig::new(0.1).init(),
            fc: LinearConfig::new(FLAT, 10).init(device),
        }
    }

    pub fn forward(&self, images: Tensor<B, 4>) -> Tensor<B, 2> {
        let x = self.block2.forward(self.block1.forward(images));
        let x = self.dropout.forward(x.flatten(1, 3));
        self.fc.forward(x)
    }
}

/// A batch of `[batch, 1, 28, 28]` images: noise, plus a bright horizontal bar in rows
/// `2·class + 4 .. 2·class + 7` (class = `(i·3 + seed) % 10`).
pub fn images<B: Backend>(
    batch: usize,
    seed: u64,
    device: &B::Device,
) -> (Tensor<B, 4>, Tensor<B, 1, Int>) {
    let mut rng = Lcg::new(seed + 1000);
    let mut x = rng.uniform(batch * 28 * 28, 0.3);
    let mut labels = Vec::with_capacity(batch);
    for (i, image) in x.chunks_mut(28 * 28).enumerate() {
        let class = (i * 3 + seed as usize) % 10;
        for row in 2 * class + 4..2 * class + 7 {
            for v in &mut image[row * 28 + 4..row * 28 + 24] {
                *v += 1.0;
            }
        }
        labels.push(class as i64);
    }
    (
        Tensor::from_data(TensorData::new(x, [batch, 1, 28, 28]), device),
        Tensor::from_data(TensorData::new(labels, [batch]), device),
    )
}

/// One AdamW step; the loss before the update and the batch accuracy.
pub fn cnn_step<B: AutodiffBackend>(
    model: Cnn<B>,
    optim: &mut impl Optimizer<Cnn<B>, B>,
    x: Tensor<B, 4>,
    y: Tensor<B, 1, Int>,
    lr: f64,
) -> (Cnn<B>, f32, f32) {
    let logits = model.forward(x);
    super::models::classifier_step(model, optim, logits, y, lr)
}

/// burn's AdamW with its defaults.
pub fn adam_w<B: AutodiffBackend>() -> impl Optimizer<Cnn<B>, B> {
    AdamWConfig::new().init()
}
