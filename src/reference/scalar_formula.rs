//! Proof that a formula with a scalar evaluation only (no vector code) is complete: it
//! runs through the engine on every CPU, in every layout and element type, and its
//! results are its f64 value rounded once to the compute type, then to the output type.

use super::PARALLEL_THRESHOLD;
use super::engine;
use super::simd::Formula;
use crate::element::sealed::Float;
use crate::element::{DType, Element, FloatElement};
use half::{bf16, f16};
use ndarray::{Array, ArrayD, ArrayViewD, ArrayViewMutD, IxDyn, s};

/// `a·b + 1` with one rounding (an FMA): a formula of two inputs and no vector versions.
struct MulAddOne;

impl Formula<2> for MulAddOne {
    fn precise([a, b]: [f64; 2]) -> f64 {
        a.mul_add(b, 1.0)
    }
}

/// `x² − 3`: a formula of one input and no vector versions.
struct SquareMinusThree;

impl Formula<1> for SquareMinusThree {
    fn precise([x]: [f64; 1]) -> f64 {
        x.mul_add(x, -3.0)
    }
}

fn round_to(dtype: DType, v: f64) -> f64 {
    match dtype {
        DType::F32 => f32::from_f64(v).to_f64(),
        DType::F16 => <f16 as Element>::from_f64(v).to_f64(),
        DType::BF16 => <bf16 as Element>::from_f64(v).to_f64(),
        _ => super::exact::round_to(dtype, v),
    }
}

/// Deterministic values in [−6, 6) on a grid every element type holds exactly.
fn values<T: FloatElement>(shape: &[usize], seed: u64) -> ArrayD<T> {
    let mut s = seed | 1;
    Array::from_shape_fn(IxDyn(shape), |_| {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        T::from_f64((s % 96) as f64 / 8.0 - 6.0)
    })
}

/// Runs [`MulAddOne`] over `g`, `x` (already of `out`'s shape) and checks every element
/// bitwise against its once-rounded value.
fn check2<G: FloatElement, X: FloatElement, O: FloatElement>(
    g: ArrayViewD<'_, G>,
    x: ArrayViewD<'_, X>,
    mut out: ArrayViewMutD<'_, O>,
) {
    let compute = G::DTYPE.promote(X::DTYPE).unwrap_or(DType::F32);
    engine::run::<MulAddOne, 2>(
        compute,
        [G::typed(g.view()), X::typed(x.view())],
        O::typed_mut(out.view_mut()),
    );
    for ((o, g), x) in out.iter().zip(g.iter()).zip(x.iter()) {
        let want = O::from_f64(round_to(
            compute,
            MulAddOne::precise([g.to_f64(), x.to_f64()]),
        ));
        assert_eq!(
            o.to_bits_u32(),
            want.to_bits_u32(),
            "{g:?}·{x:?} + 1 gave {o:?}"
        );
    }
}

#[test]
fn contiguous_two_inputs_every_type() {
    let n = [3 * 1024 + 17];
    let g = values::<f32>(&n, 1);
    let x = values::<f32>(&n, 2);
    let mut out = ArrayD::<f32>::default(IxDyn(&n));
    check2(g.view(), x.view(), out.view_mut());
    let (g16, xb) = (values::<f16>(&n, 3), values::<bf16>(&n, 4));
    let mut out16 = ArrayD::<f16>::default(IxDyn(&n));
    check2(g16.view(), xb.view(), out16.view_mut());
    let mut outb = ArrayD::<bf16>::default(IxDyn(&n));
    check2(g16.view(), g16.view(), outb.view_mut());
}

#[test]
fn strided_broadcast_and_transposed() {
    let (rows, cols) = (70, 90);
    let g = values::<f16>(&[cols, rows], 5);
    let x = values::<f32>(&[rows, 1], 6);
    let mut out = ArrayD::<bf16>::default(IxDyn(&[rows, 2 * cols]));
    let gt = g.view().reversed_axes();
    let xb = x.broadcast(IxDyn(&[rows, cols])).expect("column broadcast");
    let o = out.slice_mut(s![.., ..;-2]).into_dyn();
    check2(gt, xb, o);
    // The columns the output view skipped stay zero.
    assert!(out.slice(s![.., ..;2]).iter().all(|v| v.to_f64() == 0.0));
}

#[test]
fn large_inputs_split_across_threads() {
    let n = [2 * PARALLEL_THRESHOLD + 5];
    let g = values::<f32>(&n, 7);
    let x = values::<f16>(&n, 8);
    let mut out = ArrayD::<f16>::default(IxDyn(&n));
    check2(g.view(), x.view(), out.view_mut());
}

#[test]
fn one_input() {
    let shape = [5, 300];
    let x = values::<bf16>(&shape, 9);
    let mut out = ArrayD::<f32>::default(IxDyn(&[300, 5]));
    engine::run::<SquareMinusThree, 1>(
        DType::BF16,
        [bf16::typed(x.view())],
        f32::typed_mut(out.view_mut().reversed_axes()),
    );
    for (o, x) in out.t().iter().zip(x.iter()) {
        let want = round_to(DType::BF16, SquareMinusThree::precise([x.to_f64()]));
        assert_eq!(f64::from(*o), want, "{x}² − 3");
    }
}
