//! The CNN's training step on the device through the crate's allocating operator forms:
//! forward (Convolution, Clamp as ReLU, MaxPool2dWithIndices, Addmm, LogSoftmax,
//! NLLLoss), backward (NLLLossBackward, LogSoftmaxBackward, Matmul on transposed views,
//! ReduceSum, MaxPool2dWithIndicesBackward, ThresholdBackward, ConvolutionBackward) and
//! SGD through `add_inplace` with alpha = −lr. Nothing is read back within a step.

use crate::data::{Batch, CLASSES, FLAT, Params};
use ascendcl::reference::ConvSpec;
use ascendcl::{CubeMath, DeviceTensor, Reduction, Result, Stream};
use ndarray::{ArrayD, IxDyn};

type T = DeviceTensor<f32>;

const POOL: [i64; 2] = [2, 2];
const ZERO: [i64; 2] = [0, 0];
const ONE: [i64; 2] = [1, 1];

/// The parameters, the constant operands and the last step's loss, on the device.
pub struct DeviceCnn {
    pub w1: T,
    pub b1: T,
    pub w2: T,
    pub b2: T,
    pub w3: T,
    pub b3: T,
    /// Class weights of the loss: ones.
    weight: T,
    /// 1, 0-D: the loss's gradient with respect to itself.
    one: T,
    /// The last step's loss (before its update), 0-D.
    pub loss: T,
    /// The last forward's log-probabilities `(n, classes)`.
    pub logp: T,
    lr: f32,
    math: CubeMath,
}

impl DeviceCnn {
    pub fn new(stream: &Stream, p: &Params, lr: f32, math: CubeMath) -> Result<Self> {
        let up = |a: &ArrayD<f32>| DeviceTensor::from_array(stream, a);
        Ok(DeviceCnn {
            w1: up(&p.w1)?,
            b1: up(&p.b1)?,
            w2: up(&p.w2)?,
            b2: up(&p.b2)?,
            w3: up(&p.w3)?,
            b3: up(&p.b3)?,
            weight: up(&ArrayD::from_elem(IxDyn(&[CLASSES]), 1.0))?,
            one: up(&ArrayD::from_elem(IxDyn(&[]), 1.0))?,
            loss: DeviceTensor::zeros(stream, [0usize; 0])?,
            logp: DeviceTensor::zeros(stream, [1, CLASSES])?,
            lr,
            math,
        })
    }

    /// Queues one SGD step on `batch` (uploaded here: the step's only transfer).
    pub fn step(&mut self, batch: &Batch, stream: &Stream) -> Result<()> {
        let m = self.math;
        let unit = ConvSpec::unit(2);
        let n = batch.y.len();
        let x = DeviceTensor::from_array(stream, &batch.x)?;
        let y = DeviceTensor::from_array(stream, &batch.y)?;
        let conv = |x: &T, w: &T, b: &T| -> Result<T> {
            ascendcl::convolution_new(
                x,
                w,
                Some(b.view()),
                &ONE,
                &ZERO,
                &ONE,
                false,
                &ZERO,
                1,
                m,
                stream,
            )
        };
        let relu = |x: &T| -> Result<T> { ascendcl::clamp_new(x, Some(0.0.into()), None, stream) };
        let pool = |x: &T| -> Result<(T, DeviceTensor<i32>)> {
            ascendcl::max_pool2d_with_indices_new(x, &POOL, &POOL, &ZERO, &ONE, false, stream)
        };
        let unpool = |g: &T, x: &T, i: &DeviceTensor<i32>| -> Result<T> {
            ascendcl::max_pool2d_with_indices_backward_new(
                g, x, i, &POOL, &POOL, &ZERO, &ONE, false, stream,
            )
        };
        // Forward.
        let y1 = conv(&x, &self.w1, &self.b1)?;
        let a1 = relu(&y1)?;
        let (p1, i1) = pool(&a1)?;
        let y2 = conv(&p1, &self.w2, &self.b2)?;
        let a2 = relu(&y2)?;
        let (mut p2, i2) = pool(&a2)?;
        p2.reshape([n, FLAT])?;
        let logits: T = ascendcl::addmm_new(&self.b3, &p2, &self.w3, 1, 1, m, stream)?;
        let logp: T = ascendcl::log_softmax_new(&logits, 1, stream)?;
        let (loss, total): (T, T) =
            ascendcl::nll_loss_new(&logp, &y, &self.weight, Reduction::Mean, -100, stream)?;
        // Backward.
        let dlogp: T = ascendcl::nll_loss_backward_new(
            &self.one,
            &logp,
            &y,
            &self.weight,
            Reduction::Mean,
            -100,
            &total,
            stream,
        )?;
        let dlogits: T = ascendcl::log_softmax_backward_new(&dlogp, &logp, 1, stream)?;
        let dw3: T = ascendcl::matmul_new(p2.view().t(), &dlogits, m, stream)?;
        let db3: T = ascendcl::reduce_sum_new(&dlogits, &[0], false, stream)?;
        let mut dp2: T = ascendcl::matmul_new(&dlogits, self.w3.view().t(), m, stream)?;
        p2.reshape([n, 16, 5, 5])?;
        dp2.reshape([n, 16, 5, 5])?;
        let da2 = unpool(&dp2, &a2, &i2)?;
        let dy2: T = ascendcl::threshold_backward_new(&da2, &y2, 0.0, stream)?;
        let (dp1, dw2, db2) = ascendcl::convolution_backward_new(
            &dy2,
            &p1,
            &self.w2,
            &unit,
            [true, true, true],
            m,
            stream,
        )?;
        let dp1 = dp1.ok_or_else(missing)?;
        let da1 = unpool(&dp1, &a1, &i1)?;
        let dy1: T = ascendcl::threshold_backward_new(&da1, &y1, 0.0, stream)?;
        let (_, dw1, db1) = ascendcl::convolution_backward_new(
            &dy1,
            &x,
            &self.w1,
            &unit,
            [false, true, true],
            m,
            stream,
        )?;
        // SGD.
        let a = -self.lr;
        ascendcl::add_inplace(&mut self.w1, &dw1.ok_or_else(missing)?, a, stream)?;
        ascendcl::add_inplace(&mut self.b1, &db1.ok_or_else(missing)?, a, stream)?;
        ascendcl::add_inplace(&mut self.w2, &dw2.ok_or_else(missing)?, a, stream)?;
        ascendcl::add_inplace(&mut self.b2, &db2.ok_or_else(missing)?, a, stream)?;
        ascendcl::add_inplace(&mut self.w3, &dw3, a, stream)?;
        ascendcl::add_inplace(&mut self.b3, &db3, a, stream)?;
        self.loss = loss;
        self.logp = logp;
        Ok(())
    }

    /// The last step's loss and its accuracy on `labels` (waits for the step).
    pub fn read(&self, labels: &ndarray::Array1<i64>, stream: &Stream) -> Result<(f32, f32)> {
        let loss: ArrayD<f32> = self.loss.to_array(stream)?;
        let logp: ArrayD<f32> = self.logp.to_array(stream)?;
        let hits = logp
            .outer_iter()
            .zip(labels)
            .filter(|(row, y)| {
                let best = row
                    .iter()
                    .enumerate()
                    .max_by(|a, b| a.1.total_cmp(b.1))
                    .map_or(0, |b| b.0);
                best as i64 == **y
            })
            .count();
        Ok((loss[[]], hits as f32 / labels.len() as f32))
    }

    /// The first convolution's weight, downloaded.
    pub fn w1(&self, stream: &Stream) -> Result<ArrayD<f32>> {
        self.w1.to_array(stream)
    }
}

fn missing() -> ascendcl::Error {
    ascendcl::Error::InvalidArgument("a requested gradient was not returned".into())
}
