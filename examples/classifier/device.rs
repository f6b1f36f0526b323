//! The classifier's training step on the device: every tensor allocated once, every
//! operator a plan built once. Forward (Addmm, Relu, Addmm, LogSoftmax, NLLLoss),
//! backward (NLLLossBackward, LogSoftmaxBackward, Matmul on transposed views, ReduceSum,
//! ThresholdBackward), AdamW (see `adamw`), and the batch's accuracy (ArgMax, EqTensor,
//! Mean). The host uploads the batch and, when it asks, reads the loss and accuracy.

use crate::adamw::{AdamWSlot, StepCount};
use crate::data::{CLASSES, HIDDEN, INPUTS, Params};
use ascendcl::reference::AdamW;
use ascendcl::{
    AddmmPlan, ArgMaxPlan, CubeMath, DeviceTensor, EqTensorPlan, LogSoftmaxBackwardPlan,
    LogSoftmaxPlan, MatmulPlan, MeanPlan, NllLossBackwardPlan, NllLossPlan, ReduceSumPlan,
    Reduction, ReluPlan, Result, Stream, ThresholdBackwardPlan,
};
use ndarray::{Array0, Array1, Array2, ArrayD, IxDyn};

type T = DeviceTensor<f32>;

struct Tensors {
    w1: T,
    b1: T,
    w2: T,
    b2: T,
    x: T,
    y: DeviceTensor<i64>,
    h: T,
    a: T,
    logits: T,
    logp: T,
    loss: T,
    total: T,
    weight: T,
    one: T,
    dlogp: T,
    dlogits: T,
    dw2: T,
    db2: T,
    da: T,
    dh: T,
    dw1: T,
    db1: T,
    pred: DeviceTensor<i64>,
    hit: T,
    acc: T,
}

struct Plans {
    layer1: AddmmPlan<f32, f32, f32, f32>,
    relu: ReluPlan<f32, f32>,
    layer2: AddmmPlan<f32, f32, f32, f32>,
    log_softmax: LogSoftmaxPlan<f32, f32>,
    loss: NllLossPlan<f32, i64, f32>,
    dlogp: NllLossBackwardPlan<f32, i64, f32>,
    dlogits: LogSoftmaxBackwardPlan<f32, f32>,
    dw2: MatmulPlan<f32, f32, f32>,
    db2: ReduceSumPlan<f32, f32>,
    da: MatmulPlan<f32, f32, f32>,
    dh: ThresholdBackwardPlan<f32>,
    dw1: MatmulPlan<f32, f32, f32>,
    db1: ReduceSumPlan<f32, f32>,
    arg_max: ArgMaxPlan<f32, i64>,
    eq: EqTensorPlan<i64, i64, f32>,
    mean: MeanPlan<f32, f32>,
    steps: StepCount,
    slots: [AdamWSlot; 4],
}

/// The whole training state on one stream.
pub struct DeviceMlp {
    t: Tensors,
    p: Plans,
    loss_host: Array0<f32>,
    acc_host: Array0<f32>,
}

impl DeviceMlp {
    pub fn new(stream: &Stream, batch: usize, params: &Params, h: &AdamW) -> Result<Self> {
        let m = CubeMath::KeepDtype;
        let zeros = |shape: &[usize]| DeviceTensor::<f32>::zeros(stream, shape);
        let t = Tensors {
            w1: DeviceTensor::from_array(stream, &params.w1)?,
            b1: DeviceTensor::from_array(stream, &params.b1)?,
            w2: DeviceTensor::from_array(stream, &params.w2)?,
            b2: DeviceTensor::from_array(stream, &params.b2)?,
            x: zeros(&[batch, INPUTS])?,
            y: DeviceTensor::<i64>::zeros(stream, [batch])?,
            h: zeros(&[batch, HIDDEN])?,
            a: zeros(&[batch, HIDDEN])?,
            logits: zeros(&[batch, CLASSES])?,
            logp: zeros(&[batch, CLASSES])?,
            loss: zeros(&[])?,
            total: zeros(&[])?,
            weight: DeviceTensor::from_array(
                stream,
                &ArrayD::from_elem(IxDyn(&[CLASSES]), 1.0f32),
            )?,
            one: DeviceTensor::from_array(stream, &ndarray::arr0(1.0f32))?,
            dlogp: zeros(&[batch, CLASSES])?,
            dlogits: zeros(&[batch, CLASSES])?,
            dw2: zeros(&[HIDDEN, CLASSES])?,
            db2: zeros(&[CLASSES])?,
            da: zeros(&[batch, HIDDEN])?,
            dh: zeros(&[batch, HIDDEN])?,
            dw1: zeros(&[INPUTS, HIDDEN])?,
            db1: zeros(&[HIDDEN])?,
            pred: DeviceTensor::<i64>::zeros(stream, [batch])?,
            hit: zeros(&[batch])?,
            acc: zeros(&[])?,
        };
        let mean = Reduction::Mean;
        let steps = StepCount::new(stream)?;
        let slot = |w: &T, g: &T| AdamWSlot::new(w, g, &steps, h, stream);
        let slots = [
            slot(&t.w1, &t.dw1)?,
            slot(&t.b1, &t.db1)?,
            slot(&t.w2, &t.dw2)?,
            slot(&t.b2, &t.db2)?,
        ];
        let p = Plans {
            layer1: AddmmPlan::new(&t.b1, &t.x, &t.w1, 1, 1, &t.h, m, stream)?,
            relu: ReluPlan::new(&t.h, &t.a, stream)?,
            layer2: AddmmPlan::new(&t.b2, &t.a, &t.w2, 1, 1, &t.logits, m, stream)?,
            log_softmax: LogSoftmaxPlan::new(&t.logits, 1, &t.logp, stream)?,
            loss: NllLossPlan::new(
                &t.logp, &t.y, &t.weight, mean, -100, &t.loss, &t.total, stream,
            )?,
            dlogp: NllLossBackwardPlan::new(
                &t.one, &t.logp, &t.y, &t.weight, mean, -100, &t.total, &t.dlogp, stream,
            )?,
            dlogits: LogSoftmaxBackwardPlan::new(&t.dlogp, &t.logp, 1, &t.dlogits, stream)?,
            dw2: MatmulPlan::new(t.a.view().t(), &t.dlogits, &t.dw2, m, stream)?,
            db2: ReduceSumPlan::new(&t.dlogits, &[0], false, &t.db2, stream)?,
            da: MatmulPlan::new(&t.dlogits, t.w2.view().t(), &t.da, m, stream)?,
            dh: ThresholdBackwardPlan::new(&t.da, &t.h, 0.0, &t.dh, stream)?,
            dw1: MatmulPlan::new(t.x.view().t(), &t.dh, &t.dw1, m, stream)?,
            db1: ReduceSumPlan::new(&t.dh, &[0], false, &t.db1, stream)?,
            arg_max: ArgMaxPlan::new(&t.logp, 1, false, &t.pred, stream)?,
            eq: EqTensorPlan::new(&t.pred, &t.y, &t.hit, stream)?,
            mean: MeanPlan::new(&t.hit, &[0], false, &t.acc, stream)?,
            steps,
            slots,
        };
        Ok(DeviceMlp {
            t,
            p,
            loss_host: Array0::zeros(()),
            acc_host: Array0::zeros(()),
        })
    }

    /// Uploads a batch into the preallocated input tensors (the step's one transfer).
    pub fn upload(&mut self, x: &Array2<f32>, y: &Array1<i64>, stream: &Stream) -> Result<()> {
        self.t.x.copy_from_array(stream, x)?;
        self.t.y.copy_from_array(stream, y)
    }

    /// Queues the forward pass, the loss and the batch's accuracy.
    pub fn forward(&mut self, stream: &Stream) -> Result<()> {
        let (t, p) = (&mut self.t, &mut self.p);
        p.layer1.launch(&t.b1, &t.x, &t.w1, &mut t.h, stream)?;
        p.relu.launch(&t.h, &mut t.a, stream)?;
        p.layer2.launch(&t.b2, &t.a, &t.w2, &mut t.logits, stream)?;
        p.log_softmax.launch(&t.logits, &mut t.logp, stream)?;
        p.loss
            .launch(&t.logp, &t.y, &t.weight, &mut t.loss, &mut t.total, stream)?;
        p.arg_max.launch(&t.logp, &mut t.pred, stream)?;
        p.eq.launch(&t.pred, &t.y, &mut t.hit, stream)?;
        p.mean.launch(&t.hit, &mut t.acc, stream)?;
        Ok(())
    }

    /// Queues one training step on the uploaded batch: forward, backward, AdamW.
    pub fn step(&mut self, stream: &Stream) -> Result<()> {
        self.forward(stream)?;
        let (t, p) = (&mut self.t, &mut self.p);
        p.dlogp.launch(
            &t.one,
            &t.logp,
            &t.y,
            &t.weight,
            &t.total,
            &mut t.dlogp,
            stream,
        )?;
        p.dlogits
            .launch(&t.dlogp, &t.logp, &mut t.dlogits, stream)?;
        p.dw2
            .launch(t.a.view().t(), &t.dlogits, &mut t.dw2, stream)?;
        p.db2.launch(&t.dlogits, &mut t.db2, stream)?;
        p.da.launch(&t.dlogits, t.w2.view().t(), &mut t.da, stream)?;
        p.dh.launch(&t.da, &t.h, &mut t.dh, stream)?;
        p.dw1.launch(t.x.view().t(), &t.dh, &mut t.dw1, stream)?;
        p.db1.launch(&t.dh, &mut t.db1, stream)?;
        let [s1, s2, s3, s4] = &mut p.slots;
        s1.update(&mut t.w1, &t.dw1, &p.steps, stream)?;
        s2.update(&mut t.b1, &t.db1, &p.steps, stream)?;
        s3.update(&mut t.w2, &t.dw2, &p.steps, stream)?;
        s4.update(&mut t.b2, &t.db2, &p.steps, stream)?;
        p.steps.advance(stream)?;
        Ok(())
    }

    /// The last forward's loss and accuracy (waits for it); allocates nothing.
    pub fn read(&mut self, stream: &Stream) -> Result<(f32, f32)> {
        self.t.loss.copy_to_array(stream, &mut self.loss_host)?;
        self.t.acc.copy_to_array(stream, &mut self.acc_host)?;
        Ok((self.loss_host[()], self.acc_host[()]))
    }

    /// The parameters, downloaded.
    pub fn params(&self, stream: &Stream) -> Result<Params> {
        Ok(Params {
            w1: self.t.w1.to_array::<ndarray::Ix2>(stream)?,
            b1: self.t.b1.to_array::<ndarray::Ix1>(stream)?,
            w2: self.t.w2.to_array::<ndarray::Ix2>(stream)?,
            b2: self.t.b2.to_array::<ndarray::Ix1>(stream)?,
        })
    }
}
