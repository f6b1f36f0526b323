//! The module operators on the device against burn-ndarray, forward and backward under
//! autodiff: 2-D convolution (stride, padding, dilation, groups, bias) and 2-D max
//! pooling, over a table of geometries.

mod common;

use burn::backend::Autodiff;
use burn::tensor::backend::Backend;
use burn::tensor::module::{conv2d, max_pool2d};
use burn::tensor::ops::ConvOptions;
use burn::tensor::{Tensor, TensorData};
use burn_ascend::{Ascend, AscendDevice};
use burn_ndarray::NdArray;
use common::models::Lcg;

type Dev = Autodiff<Ascend>;
type Cpu = Autodiff<NdArray>;

/// A convolution geometry: input `[n, c, h, w]`, output channels, kernel, stride,
/// padding, dilation, groups.
struct Conv {
    input: [usize; 4],
    out_channels: usize,
    kernel: [usize; 2],
    stride: [usize; 2],
    padding: [usize; 2],
    dilation: [usize; 2],
    groups: usize,
}

const CONVS: &[Conv] = &[
    Conv {
        input: [2, 1, 8, 8],
        out_channels: 3,
        kernel: [3, 3],
        stride: [1, 1],
        padding: [0, 0],
        dilation: [1, 1],
        groups: 1,
    },
    Conv {
        input: [1, 4, 9, 7],
        out_channels: 6,
        kernel: [3, 2],
        stride: [2, 1],
        padding: [1, 0],
        dilation: [1, 1],
        groups: 2,
    },
    Conv {
        input: [3, 2, 10, 10],
        out_channels: 4,
        kernel: [3, 3],
        stride: [1, 2],
        padding: [2, 1],
        dilation: [2, 1],
        groups: 1,
    },
];

/// Pooling geometries: input, kernel, stride, padding, dilation. The vendor's kernel
/// pools with dilation 1 only (Atlas A2/A3): a dilated pooling runs on the host.
/// A pooling geometry: input, then kernel, stride, padding and dilation.
type Pool = ([usize; 4], [[usize; 2]; 4]);

const POOLS: &[Pool] = &[
    ([2, 3, 8, 8], [[2, 2], [2, 2], [0, 0], [1, 1]]),
    ([1, 2, 9, 7], [[3, 3], [2, 2], [1, 1], [1, 1]]),
    ([2, 1, 10, 9], [[3, 2], [1, 2], [0, 1], [2, 1]]),
];

fn tensor<B: Backend, const D: usize>(
    dims: [usize; D],
    rng: &mut Lcg,
    device: &B::Device,
) -> Tensor<B, D> {
    let n = dims.iter().product();
    Tensor::from_data(TensorData::new(rng.uniform(n, 1.0), dims), device)
}

fn close(got: TensorData, want: TensorData, what: &str) {
    assert_eq!(got.shape, want.shape, "{what}: shape");
    let (g, w) = (got.to_vec::<f32>().unwrap(), want.to_vec::<f32>().unwrap());
    for (i, (g, w)) in g.iter().zip(&w).enumerate() {
        assert!(
            (g - w).abs() <= 1e-4 * w.abs().max(1.0),
            "{what}[{i}]: {g} vs {w}"
        );
    }
}

/// The convolution's output and the gradients of `sum(output²)` for x, weight and bias.
fn conv_run<B: burn::tensor::backend::AutodiffBackend>(
    c: &Conv,
    seed: u64,
    device: &B::Device,
) -> [TensorData; 4] {
    let mut rng = Lcg::new(seed);
    let [n, ci, h, w] = c.input;
    let weight_dims = [c.out_channels, ci / c.groups, c.kernel[0], c.kernel[1]];
    let x = tensor::<B, 4>([n, ci, h, w], &mut rng, device).require_grad();
    let weight = tensor::<B, 4>(weight_dims, &mut rng, device).require_grad();
    let bias = tensor::<B, 1>([c.out_channels], &mut rng, device).require_grad();
    let options = ConvOptions::new(c.stride, c.padding, c.dilation, c.groups);
    let y = conv2d(x.clone(), weight.clone(), Some(bias.clone()), options);
    let grads = (y.clone() * y.clone()).sum().backward();
    [
        y.into_data(),
        x.grad(&grads).unwrap().into_data(),
        weight.grad(&grads).unwrap().into_data(),
        bias.grad(&grads).unwrap().into_data(),
    ]
}

#[test]
fn conv2d_and_its_gradients_match_ndarray() {
    let _turn = common::counter_turn();
    let (device, cpu) = (AscendDevice::default(), Default::default());
    for (i, c) in CONVS.iter().enumerate() {
        let before = burn_ascend::fallback_count();
        let got = conv_run::<Dev>(c, i as u64, &device);
        assert_eq!(
            burn_ascend::fallback_count(),
            before,
            "conv {i}: host fallback"
        );
        let want = conv_run::<Cpu>(c, i as u64, &cpu);
        for ((g, w), what) in got.into_iter().zip(want).zip(["y", "dx", "dw", "db"]) {
            close(g, w, &format!("conv {i} {what}"));
        }
    }
}

fn pool_run<B: burn::tensor::backend::AutodiffBackend>(
    p: &Pool,
    seed: u64,
    device: &B::Device,
) -> [TensorData; 2] {
    let mut rng = Lcg::new(seed + 50);
    let x = tensor::<B, 4>(p.0, &mut rng, device).require_grad();
    let [kernel, stride, padding, dilation] = p.1;
    let y = max_pool2d(x.clone(), kernel, stride, padding, dilation, false);
    let grads = (y.clone() * y.clone()).sum().backward();
    [y.into_data(), x.grad(&grads).unwrap().into_data()]
}

#[test]
fn max_pool2d_and_its_gradient_match_ndarray() {
    let _turn = common::counter_turn();
    let (device, cpu) = (AscendDevice::default(), Default::default());
    for (i, p) in POOLS.iter().enumerate() {
        let before = burn_ascend::fallback_count();
        let got = pool_run::<Dev>(p, i as u64, &device);
        let fallbacks = burn_ascend::fallback_count() - before;
        // A dilated pooling falls back once forward and once backward.
        let dilated = p.1[3] != [1, 1];
        assert_eq!(
            fallbacks,
            if dilated { 2 } else { 0 },
            "pool {i}: host fallbacks"
        );
        let want = pool_run::<Cpu>(p, i as u64, &cpu);
        for ((g, w), what) in got.into_iter().zip(want).zip(["y", "dx"]) {
            close(g, w, &format!("pool {i} {what}"));
        }
    }
}
