//! The MLP's training step on the device: every tensor allocated once, every operator a
//! plan built once, so that a step is twelve launches and four in-place updates with no
//! allocation and no transfer. Shared with the tests (`#[path]`).
#![allow(dead_code)] // the example and each test use different parts

use crate::model::{Config, Data, Params};
use ascendcl::{
    AddmmPlan, DeviceTensor, InplaceAddPlan, MatmulPlan, MishBackwardPlan, MishPlan,
    MseLossBackwardPlan, MseLossPlan, ReduceSumPlan, Reduction, Result, Stream,
};
use ndarray::{Array0, Array1, Array2};

type T = DeviceTensor<f32>;

/// The parameters, data, activations and gradients on the device.
struct Tensors {
    w1: T,
    b1: T,
    w2: T,
    b2: T,
    x: T,
    y: T,
    /// `x·w1 + b1`, `(samples, hidden)`.
    h: T,
    /// `mish(h)`.
    a: T,
    /// `a·w2 + b2`, `(samples, 1)`.
    pred: T,
    /// The mean squared error, 0-D.
    loss: T,
    /// 1, 0-D: the gradient of the loss with respect to itself.
    one: T,
    dpred: T,
    dw2: T,
    db2: T,
    da: T,
    dh: T,
    dw1: T,
    db1: T,
}

/// The plans of one step, in the order they run.
struct Plans {
    layer1: AddmmPlan<f32, f32, f32, f32>,
    mish: MishPlan<f32>,
    layer2: AddmmPlan<f32, f32, f32, f32>,
    loss: MseLossPlan<f32, f32, f32>,
    dpred: MseLossBackwardPlan<f32, f32>,
    dw2: MatmulPlan<f32, f32, f32>,
    db2: ReduceSumPlan<f32, f32>,
    da: MatmulPlan<f32, f32, f32>,
    dh: MishBackwardPlan<f32, f32, f32>,
    dw1: MatmulPlan<f32, f32, f32>,
    db1: ReduceSumPlan<f32, f32>,
    update_w1: InplaceAddPlan<f32, f32>,
    update_b1: InplaceAddPlan<f32, f32>,
    update_w2: InplaceAddPlan<f32, f32>,
    update_b2: InplaceAddPlan<f32, f32>,
}

/// The whole training state on one stream.
pub struct DeviceMlp {
    t: Tensors,
    p: Plans,
    /// Where [`DeviceMlp::read_loss`] downloads to (no allocation per read).
    loss_host: Array0<f32>,
}

impl DeviceMlp {
    /// Uploads `data` and `params`, allocates every intermediate and builds every plan.
    pub fn new(stream: &Stream, cfg: &Config, data: &Data, params: &Params) -> Result<Self> {
        let (n, hidden) = (cfg.samples, cfg.hidden);
        let up = |a: &Array2<f32>| DeviceTensor::from_array(stream, a);
        let up1 = |a: &Array1<f32>| DeviceTensor::from_array(stream, a);
        let zeros = |shape: &[usize]| DeviceTensor::<f32>::zeros(stream, shape);
        let t = Tensors {
            w1: up(&params.w1)?,
            b1: up1(&params.b1)?,
            w2: up(&params.w2)?,
            b2: up1(&params.b2)?,
            x: up(&data.x)?,
            y: up(&data.y)?,
            h: zeros(&[n, hidden])?,
            a: zeros(&[n, hidden])?,
            pred: zeros(&[n, 1])?,
            loss: zeros(&[])?,
            one: DeviceTensor::from_array(stream, &ndarray::arr0(1.0f32))?,
            dpred: zeros(&[n, 1])?,
            dw2: zeros(&[hidden, 1])?,
            db2: zeros(&[1])?,
            da: zeros(&[n, hidden])?,
            dh: zeros(&[n, hidden])?,
            dw1: zeros(&[cfg.inputs, hidden])?,
            db1: zeros(&[hidden])?,
        };
        let (m, mean, lr) = (cfg.math, Reduction::Mean, -cfg.lr);
        let p = Plans {
            layer1: AddmmPlan::new(&t.b1, &t.x, &t.w1, 1, 1, &t.h, m, stream)?,
            mish: MishPlan::new(&t.h, &t.a, stream)?,
            layer2: AddmmPlan::new(&t.b2, &t.a, &t.w2, 1, 1, &t.pred, m, stream)?,
            loss: MseLossPlan::new(&t.pred, &t.y, mean, &t.loss, stream)?,
            dpred: MseLossBackwardPlan::new(&t.one, &t.pred, &t.y, mean, &t.dpred, stream)?,
            dw2: MatmulPlan::new(t.a.view().t(), &t.dpred, &t.dw2, m, stream)?,
            db2: ReduceSumPlan::new(&t.dpred, &[0], false, &t.db2, stream)?,
            da: MatmulPlan::new(&t.dpred, t.w2.view().t(), &t.da, m, stream)?,
            dh: MishBackwardPlan::new(&t.da, &t.h, &t.dh, stream)?,
            dw1: MatmulPlan::new(t.x.view().t(), &t.dh, &t.dw1, m, stream)?,
            db1: ReduceSumPlan::new(&t.dh, &[0], false, &t.db1, stream)?,
            update_w1: InplaceAddPlan::new(&t.w1, &t.dw1, lr, stream)?,
            update_b1: InplaceAddPlan::new(&t.b1, &t.db1, lr, stream)?,
            update_w2: InplaceAddPlan::new(&t.w2, &t.dw2, lr, stream)?,
            update_b2: InplaceAddPlan::new(&t.b2, &t.db2, lr, stream)?,
        };
        Ok(DeviceMlp {
            t,
            p,
            loss_host: Array0::zeros(()),
        })
    }

    /// Queues one SGD step: forward, loss, backward, update. Nothing is read back; the
    /// loss tensor holds this step's loss (before the update) until the next step.
    pub fn step(&mut self, stream: &Stream) -> Result<()> {
        let (t, p) = (&mut self.t, &mut self.p);
        p.layer1.launch(&t.b1, &t.x, &t.w1, &mut t.h, stream)?;
        p.mish.launch(&t.h, &mut t.a, stream)?;
        p.layer2.launch(&t.b2, &t.a, &t.w2, &mut t.pred, stream)?;
        p.loss.launch(&t.pred, &t.y, &mut t.loss, stream)?;
        p.dpred
            .launch(&t.one, &t.pred, &t.y, &mut t.dpred, stream)?;
        p.dw2.launch(t.a.view().t(), &t.dpred, &mut t.dw2, stream)?;
        p.db2.launch(&t.dpred, &mut t.db2, stream)?;
        p.da.launch(&t.dpred, t.w2.view().t(), &mut t.da, stream)?;
        p.dh.launch(&t.da, &t.h, &mut t.dh, stream)?;
        p.dw1.launch(t.x.view().t(), &t.dh, &mut t.dw1, stream)?;
        p.db1.launch(&t.dh, &mut t.db1, stream)?;
        p.update_w1.launch(&mut t.w1, &t.dw1, stream)?;
        p.update_b1.launch(&mut t.b1, &t.db1, stream)?;
        p.update_w2.launch(&mut t.w2, &t.dw2, stream)?;
        p.update_b2.launch(&mut t.b2, &t.db2, stream)?;
        Ok(())
    }

    /// The same step through one-off calls (no plans), as a framework's eager mode runs
    /// it: with the device's executor cache on, every call after the first step reuses
    /// the executor its first call prepared.
    pub fn step_one_off(&mut self, stream: &Stream, cfg: &Config) -> Result<()> {
        use ascendcl::{addmm, matmul, mish, mish_backward, mse_loss, mse_loss_backward};
        let t = &mut self.t;
        let (m, mean, lr) = (cfg.math, Reduction::Mean, -cfg.lr);
        addmm(&t.b1, &t.x, &t.w1, 1, 1, &mut t.h, m, stream)?;
        mish(&t.h, &mut t.a, stream)?;
        addmm(&t.b2, &t.a, &t.w2, 1, 1, &mut t.pred, m, stream)?;
        mse_loss(&t.pred, &t.y, mean, &mut t.loss, stream)?;
        mse_loss_backward(&t.one, &t.pred, &t.y, mean, &mut t.dpred, stream)?;
        matmul(t.a.view().t(), &t.dpred, &mut t.dw2, m, stream)?;
        ascendcl::reduce_sum(&t.dpred, &[0], false, &mut t.db2, stream)?;
        matmul(&t.dpred, t.w2.view().t(), &mut t.da, m, stream)?;
        mish_backward(&t.da, &t.h, &mut t.dh, stream)?;
        matmul(t.x.view().t(), &t.dh, &mut t.dw1, m, stream)?;
        ascendcl::reduce_sum(&t.dh, &[0], false, &mut t.db1, stream)?;
        ascendcl::add_inplace(&mut t.w1, &t.dw1, lr, stream)?;
        ascendcl::add_inplace(&mut t.b1, &t.db1, lr, stream)?;
        ascendcl::add_inplace(&mut t.w2, &t.dw2, lr, stream)?;
        ascendcl::add_inplace(&mut t.b2, &t.db2, lr, stream)?;
        Ok(())
    }

    /// The loss of the last step (waits for it); allocates nothing.
    pub fn read_loss(&mut self, stream: &Stream) -> Result<f32> {
        self.t.loss.copy_to_array(stream, &mut self.loss_host)?;
        Ok(self.loss_host[()])
    }

    /// The parameters, downloaded.
    pub fn params(&self, stream: &Stream) -> Result<Params> {
        let two = |t: &T| -> Result<Array2<f32>> { into(t.to_array(stream)?) };
        let one = |t: &T| -> Result<Array1<f32>> { into(t.to_array(stream)?) };
        Ok(Params {
            w1: two(&self.t.w1)?,
            b1: one(&self.t.b1)?,
            w2: two(&self.t.w2)?,
            b2: one(&self.t.b2)?,
        })
    }
}

fn into<D: ndarray::Dimension>(a: ndarray::ArrayD<f32>) -> Result<ndarray::Array<f32, D>> {
    a.into_dimensionality::<D>()
        .map_err(|e| ascendcl::Error::InvalidArgument(e.to_string()))
}
