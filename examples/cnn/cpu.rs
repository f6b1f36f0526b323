//! The same SGD step on the CPU through `ascendcl::reference`, operator for operator, to
//! check the device's first steps.

use crate::data::{Batch, CLASSES, FLAT, Params};
use ascendcl::reference::{self as r, ConvSpec};
use ascendcl::{CubeMath, Error, Reduction, Result};
use ndarray::{ArrayD, Ix1, Ix2, IxDyn};

fn f32s(a: ArrayD<f64>) -> ArrayD<f32> {
    a.mapv(|v| v as f32)
}

fn dims<D: ndarray::Dimension>(a: ArrayD<f32>) -> Result<ndarray::Array<f32, D>> {
    a.into_dimensionality::<D>()
        .map_err(|e| Error::InvalidArgument(e.to_string()))
}

fn reshape(a: ArrayD<f32>, shape: &[usize]) -> Result<ArrayD<f32>> {
    a.into_shape_with_order(IxDyn(shape))
        .map_err(|e| Error::InvalidArgument(e.to_string()))
}

/// One step on `p`; returns the loss before the update.
pub fn step(p: &mut Params, b: &Batch, lr: f32, m: CubeMath) -> Result<f32> {
    let unit = ConvSpec::unit(2);
    let n = b.y.len();
    let conv = |x: &ArrayD<f32>, w: &ArrayD<f32>, bias: &ArrayD<f32>| -> Result<ArrayD<f32>> {
        let bias = bias
            .view()
            .into_dimensionality::<Ix1>()
            .map_err(|e| Error::InvalidArgument(e.to_string()))?;
        Ok(f32s(r::convolution(x.view(), w.view(), Some(bias), &unit)?))
    };
    let relu = |x: &ArrayD<f32>| x.mapv(|v| v.max(0.0));
    let pool = |x: &ArrayD<f32>| {
        r::max_pool2d_with_indices(x.view(), &[2, 2], &[2, 2], &[0, 0], &[1, 1], false)
    };
    let x = b.x.clone().into_dyn();
    let y1 = conv(&x, &p.w1, &p.b1)?;
    let a1 = relu(&y1);
    let (p1, i1) = pool(&a1)?;
    let y2 = conv(&p1, &p.w2, &p.b2)?;
    let a2 = relu(&y2);
    let (p2, i2) = pool(&a2)?;
    let flat = dims::<Ix2>(reshape(p2, &[n, FLAT])?)?;
    let w3 = dims::<Ix2>(p.w3.clone())?;
    let logits = r::addmm(p.b3.view(), flat.view(), w3.view(), 1, 1, m)?;
    let logp = r::log_softmax(logits.view(), 1)?;
    let weight = ArrayD::<f32>::from_elem(IxDyn(&[CLASSES]), 1.0);
    let (loss, total) = r::nll_loss(
        logp.view(),
        b.y.view(),
        weight.view(),
        Reduction::Mean,
        -100,
    )?;
    let one = ArrayD::<f32>::from_elem(IxDyn(&[]), 1.0);
    let dlogp = r::nll_loss_backward(
        one.view(),
        logp.view(),
        b.y.view(),
        weight.view(),
        Reduction::Mean,
        -100,
        total.view(),
    )?;
    let dlogits = dims::<Ix2>(r::log_softmax_backward(dlogp.view(), logp.view(), 1)?)?;
    let dw3 = r::matmul(flat.t(), dlogits.view(), m)?;
    let db3 = r::reduce_sum(dlogits.view(), &[0], false)?;
    let dp2 = reshape(r::matmul(dlogits.view(), w3.t(), m)?, &[n, 16, 5, 5])?;
    let da2 = f32s(r::max_pool2d_with_indices_backward(
        dp2.view(),
        a2.shape(),
        i2.view(),
    )?);
    let dy2 = r::threshold_backward(da2.view(), y2.view(), 0.0)?;
    let (dp1, dw2, db2) = r::convolution_backward(dy2.view(), p1.view(), p.w2.view(), &unit)?;
    let dp1 = f32s(dp1);
    let da1 = f32s(r::max_pool2d_with_indices_backward(
        dp1.view(),
        a1.shape(),
        i1.view(),
    )?);
    let dy1 = r::threshold_backward(da1.view(), y1.view(), 0.0)?;
    let (_, dw1, db1) = r::convolution_backward(dy1.view(), x.view(), p.w1.view(), &unit)?;
    let sgd = |w: &ArrayD<f32>, g: &ArrayD<f32>| -> Result<ArrayD<f32>> {
        r::add(w.view(), g.view(), -lr)
    };
    p.w1 = sgd(&p.w1, &f32s(dw1))?;
    p.b1 = sgd(&p.b1, &f32s(db1))?;
    p.w2 = sgd(&p.w2, &f32s(dw2))?;
    p.b2 = sgd(&p.b2, &f32s(db2))?;
    p.w3 = sgd(&p.w3, &dw3)?;
    p.b3 = sgd(&p.b3, &db3)?;
    Ok(loss[[]])
}
