//! The classifier's training step on the CPU through `ascendcl::reference`, operator for
//! operator as the device runs it, with AdamW by `reference::apply_adam_w_v2`: the
//! oracle of the device's first steps.

use crate::data::{CLASSES, Params};
use ascendcl::reference::{self as r, AdamW};
use ascendcl::{CubeMath, Error, Reduction, Result};
use ndarray::{Array1, Array2, ArrayD, Ix2, IxDyn};

fn dims<D: ndarray::Dimension>(a: ArrayD<f32>) -> Result<ndarray::Array<f32, D>> {
    a.into_dimensionality::<D>()
        .map_err(|e| Error::InvalidArgument(e.to_string()))
}

/// The CPU's parameters and AdamW moments.
pub struct CpuMlp {
    pub p: Params,
    moments: [(ArrayD<f32>, ArrayD<f32>); 4],
    steps: u32,
}

impl CpuMlp {
    pub fn new(p: Params) -> Self {
        let z = |s: &[usize]| (ArrayD::zeros(IxDyn(s)), ArrayD::zeros(IxDyn(s)));
        let moments = [
            z(p.w1.shape()),
            z(p.b1.shape()),
            z(p.w2.shape()),
            z(p.b2.shape()),
        ];
        CpuMlp {
            p,
            moments,
            steps: 0,
        }
    }

    /// One step on `(x, y)`; returns the loss before the update.
    pub fn step(&mut self, x: &Array2<f32>, y: &Array1<i64>, h: &AdamW) -> Result<f32> {
        let m = CubeMath::KeepDtype;
        let p = &mut self.p;
        let hid = r::addmm(p.b1.view(), x.view(), p.w1.view(), 1, 1, m)?;
        let a = r::relu(hid.view())?;
        let logits = r::addmm(p.b2.view(), a.view(), p.w2.view(), 1, 1, m)?;
        let logp = r::log_softmax(logits.view(), 1)?;
        let weight = ArrayD::<f32>::from_elem(IxDyn(&[CLASSES]), 1.0);
        let (loss, total) =
            r::nll_loss(logp.view(), y.view(), weight.view(), Reduction::Mean, -100)?;
        let one = ndarray::arr0(1.0f32);
        let dlogp = r::nll_loss_backward(
            one.view(),
            logp.view(),
            y.view(),
            weight.view(),
            Reduction::Mean,
            -100,
            total.view(),
        )?;
        let dlogits = dims::<Ix2>(r::log_softmax_backward(dlogp.view(), logp.view(), 1)?)?;
        let dw2 = r::matmul(a.t(), dlogits.view(), m)?;
        let db2 = r::reduce_sum(dlogits.view(), &[0], false)?;
        let da = r::matmul(dlogits.view(), p.w2.t(), m)?;
        let dh = dims::<Ix2>(r::threshold_backward(da.view(), hid.view(), 0.0)?)?;
        let dw1 = r::matmul(x.t(), dh.view(), m)?;
        let db1 = r::reduce_sum(dh.view(), &[0], false)?;
        let step = f64::from(self.steps);
        let [(m1, v1), (m2, v2), (m3, v3), (m4, v4)] = &mut self.moments;
        let adam = |w: ndarray::ArrayViewMut<'_, f32, IxDyn>,
                    mo: &mut ArrayD<f32>,
                    ve: &mut ArrayD<f32>,
                    g: &ArrayD<f32>| {
            r::apply_adam_w_v2(w, mo.view_mut(), ve.view_mut(), None, g.view(), step, h)
        };
        adam(p.w1.view_mut().into_dyn(), m1, v1, &dw1)?;
        adam(p.b1.view_mut().into_dyn(), m2, v2, &db1)?;
        adam(p.w2.view_mut().into_dyn(), m3, v3, &dw2)?;
        adam(p.b2.view_mut().into_dyn(), m4, v4, &db2)?;
        self.steps += 1;
        Ok(loss[[]])
    }
}
