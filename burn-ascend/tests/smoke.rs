//! The backend end to end: data in, operators, data out, plain and under autodiff.

use burn::backend::Autodiff;
use burn::tensor::{Tensor, TensorData, Tolerance};
use burn_ascend::{Ascend, AscendDevice};

#[test]
fn from_data_add_matmul_into_data_on_the_device() {
    let device = AscendDevice::default();
    let a = Tensor::<Ascend, 2>::from_data([[1.0f32, 2.0], [3.0, 4.0]], &device);
    let b = Tensor::<Ascend, 2>::from_data([[0.5f32, -1.0], [2.0, 0.0]], &device);
    let before = burn_ascend::fallback_count();
    let c = (a.clone() + b.clone()).matmul(b);
    let got = c.into_data();
    assert_eq!(burn_ascend::fallback_count(), before, "no host fallback");
    // (a + b) = [[1.5, 1], [5, 4]]; times b
    got.assert_approx_eq::<f32>(
        &TensorData::from([[2.75f32, -1.5], [10.5, -5.0]]),
        Tolerance::default(),
    );
}

#[test]
fn gradients_of_add_and_matmul_under_autodiff() {
    type B = Autodiff<Ascend>;
    let device = AscendDevice::new(0);
    let a = Tensor::<B, 2>::from_data([[1.0f32, 2.0], [3.0, 4.0]], &device).require_grad();
    let b = Tensor::<B, 2>::from_data([[0.5f32, -1.0], [2.0, 0.0]], &device).require_grad();
    let before = burn_ascend::fallback_count();
    let y = (a.clone() + b.clone()).matmul(b.clone()).sum();
    let grads = y.backward();
    let ga = a.grad(&grads).expect("grad of a");
    assert_eq!(burn_ascend::fallback_count(), before, "no host fallback");
    // d sum((a+b)b)/da = 1·bᵀ summed over columns: each row is b's row sums.
    ga.into_data().assert_approx_eq::<f32>(
        &TensorData::from([[-0.5f32, 2.0], [-0.5, 2.0]]),
        Tolerance::default(),
    );
    assert!(b.grad(&grads).is_some());
}
