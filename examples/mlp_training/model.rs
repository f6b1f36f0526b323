//! The two-layer Mish MLP of the training example on the CPU, through
//! `ascendcl::reference`: the synthetic task, the initial parameters, and one SGD step
//! made of the same operators, in the same order and with the same attributes, as the
//! device step. Shared with the tests (`#[path]`), which check the device against it.
#![allow(dead_code)] // the example and each test use different parts

use ascendcl::precision::{self, Verdict};
use ascendcl::reference::{
    add, addmm, matmul, mish, mish_backward, mse_loss, mse_loss_backward, reduce_sum,
};
use ascendcl::{CubeMath, DType, Error, Reduction, Result};
use ndarray::{Array1, Array2, ArrayD, Axis, arr0};

/// The sizes and hyper-parameters of a run.
#[derive(Debug, Clone, Copy)]
pub struct Config {
    /// Samples in the (full) batch.
    pub samples: usize,
    /// Input features.
    pub inputs: usize,
    /// Hidden units.
    pub hidden: usize,
    /// The SGD learning rate.
    pub lr: f32,
    /// The cube math of the three matrix products.
    pub math: CubeMath,
}

impl Config {
    /// The example's run: 256 samples, 4 inputs, 32 hidden units.
    pub const EXAMPLE: Config = Config {
        samples: 256,
        inputs: 4,
        hidden: 32,
        lr: 0.05,
        math: CubeMath::KeepDtype,
    };
}

/// A small deterministic generator (no extra dependency), uniform in [-1, 1).
pub struct Lcg(pub u64);

impl Lcg {
    pub fn next(&mut self) -> f32 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
    }

    pub fn matrix(&mut self, rows: usize, cols: usize, scale: f32) -> Array2<f32> {
        Array2::from_shape_fn((rows, cols), |_| self.next() * scale)
    }
}

/// The regression task `y = sin(x0) + x1·x2 − 0.5·x3` (further inputs unused).
pub struct Data {
    /// `(samples, inputs)`.
    pub x: Array2<f32>,
    /// `(samples, 1)`.
    pub y: Array2<f32>,
}

/// The parameters: `h = x·w1 + b1`, `pred = mish(h)·w2 + b2`.
#[derive(Debug, Clone, PartialEq)]
pub struct Params {
    /// `(inputs, hidden)`.
    pub w1: Array2<f32>,
    /// `(hidden)`.
    pub b1: Array1<f32>,
    /// `(hidden, 1)`.
    pub w2: Array2<f32>,
    /// `(1)`.
    pub b2: Array1<f32>,
}

/// The task's data and the initial parameters, both from `seed`.
pub fn setup(cfg: &Config, seed: u64) -> (Data, Params) {
    let mut rng = Lcg(seed);
    let x = rng.matrix(cfg.samples, cfg.inputs, 2.0);
    let y = x
        .map_axis(Axis(1), |r| {
            let at = |i: usize| r.get(i).copied().unwrap_or(0.0);
            at(0).sin() + at(1) * at(2) - 0.5 * at(3)
        })
        .insert_axis(Axis(1));
    let params = Params {
        w1: rng.matrix(cfg.inputs, cfg.hidden, (1.0 / cfg.inputs as f32).sqrt()),
        // Non-zero biases so that the relative comparison of parameters is meaningful
        // from the first step.
        b1: Array1::from_shape_fn(cfg.hidden, |_| rng.next() * 0.1),
        w2: rng.matrix(cfg.hidden, 1, (1.0 / cfg.hidden as f32).sqrt()),
        b2: Array1::from_elem(1, 0.1),
    };
    (Data { x, y }, params)
}

/// One SGD step on the CPU; returns the loss before the update.
///
/// Forward `h = addmm(b1, x, w1)`, `a = mish(h)`, `pred = addmm(b2, a, w2)`, loss
/// `mse_loss(pred, y, mean)`; backward `dpred = mse_loss_backward(1, pred, y, mean)`,
/// `dw2 = aᵀ·dpred`, `db2 = Σ₀ dpred`, `da = dpred·w2ᵀ`, `dh = mish_backward(da, h)`,
/// `dw1 = xᵀ·dh`, `db1 = Σ₀ dh`; then `p ← p + (−lr)·dp` for each parameter.
pub fn cpu_step(p: &mut Params, data: &Data, cfg: &Config) -> Result<f32> {
    let m = cfg.math;
    let h = addmm(p.b1.view(), data.x.view(), p.w1.view(), 1, 1, m)?;
    let a = mish(h.view())?;
    let pred = addmm(p.b2.view(), a.view(), p.w2.view(), 1, 1, m)?;
    let loss = mse_loss(pred.view(), data.y.view(), Reduction::Mean)?;
    let one = arr0(1.0f32);
    let dpred = ix2(mse_loss_backward(
        one.view(),
        pred.view(),
        data.y.view(),
        Reduction::Mean,
    )?)?;
    let dw2 = ix2(matmul(a.t(), dpred.view(), m)?)?;
    let db2 = ix1(reduce_sum(dpred.view(), &[0], false)?)?;
    let da = ix2(matmul(dpred.view(), p.w2.t(), m)?)?;
    let dh = mish_backward(da.view(), h.view())?;
    let dw1 = ix2(matmul(data.x.t(), dh.view(), m)?)?;
    let db1 = ix1(reduce_sum(dh.view(), &[0], false)?)?;
    let alpha = -cfg.lr;
    p.w1 = add(p.w1.view(), dw1.view(), alpha)?;
    p.b1 = add(p.b1.view(), db1.view(), alpha)?;
    p.w2 = add(p.w2.view(), dw2.view(), alpha)?;
    p.b2 = add(p.b2.view(), db2.view(), alpha)?;
    Ok(loss[[]])
}

/// The precision standard's verdict on each parameter of `actual` against `golden` under
/// `dtype`'s threshold, in the order w1, b1, w2, b2.
pub fn compare(
    actual: &Params,
    golden: &Params,
    dtype: DType,
) -> Result<[(&'static str, Verdict); 4]> {
    let judge = |a: &ArrayD<f32>, g: &ArrayD<f32>| precision::judge(a, g, dtype);
    let d = |a: &Array2<f32>| a.clone().into_dyn();
    let d1 = |a: &Array1<f32>| a.clone().into_dyn();
    Ok([
        ("w1", judge(&d(&actual.w1), &d(&golden.w1))?),
        ("b1", judge(&d1(&actual.b1), &d1(&golden.b1))?),
        ("w2", judge(&d(&actual.w2), &d(&golden.w2))?),
        ("b2", judge(&d1(&actual.b2), &d1(&golden.b2))?),
    ])
}

fn ix2(a: ArrayD<f32>) -> Result<Array2<f32>> {
    a.into_dimensionality()
        .map_err(|e| Error::InvalidArgument(e.to_string()))
}

fn ix1(a: ArrayD<f32>) -> Result<Array1<f32>> {
    a.into_dimensionality()
        .map_err(|e| Error::InvalidArgument(e.to_string()))
}
