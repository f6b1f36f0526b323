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

#[test]
fn random_draws_on_the_device_generator_that_seed_sets() {
    use burn::tensor::Distribution;
    use burn::tensor::backend::Backend;
    let device = AscendDevice::default();
    let draw = |d: Distribution| {
        Tensor::<Ascend, 1>::random([20_000], d, &device)
            .into_data()
            .to_vec::<f32>()
            .unwrap()
    };
    let before = burn_ascend::fallback_count();
    Ascend::seed(&device, 42);
    let first = draw(Distribution::Default);
    let normal = draw(Distribution::Normal(2.0, 0.5));
    Ascend::seed(&device, 42);
    assert_eq!(
        draw(Distribution::Default),
        first,
        "the seed replays the draws"
    );
    let uniform = draw(Distribution::Uniform(-3.0, 1.0));
    let coins = draw(Distribution::Bernoulli(0.25));
    assert_eq!(burn_ascend::fallback_count(), before, "no host fallback");

    let mean = |v: &[f32]| v.iter().map(|&x| f64::from(x)).sum::<f64>() / v.len() as f64;
    let var = |v: &[f32]| {
        let m = mean(v);
        v.iter().map(|&x| (f64::from(x) - m).powi(2)).sum::<f64>() / v.len() as f64
    };
    assert!(first.iter().all(|&x| (0.0..1.0).contains(&x)));
    assert!((mean(&first) - 0.5).abs() < 0.01, "{}", mean(&first));
    assert!(uniform.iter().all(|&x| (-3.0..1.0).contains(&x)));
    assert!((mean(&uniform) + 1.0).abs() < 0.04, "{}", mean(&uniform));
    assert!((mean(&normal) - 2.0).abs() < 0.02, "{}", mean(&normal));
    assert!((var(&normal).sqrt() - 0.5).abs() < 0.02, "{}", var(&normal));
    assert!(coins.iter().all(|&x| x == 0.0 || x == 1.0));
    assert!((mean(&coins) - 0.25).abs() < 0.015, "{}", mean(&coins));
}

/// A method that writes its input (slice-assign, in-place operators) writes a copy when
/// the input's storage is shared with another tensor: the other tensor never changes.
#[test]
fn writes_into_a_shared_tensor_leave_its_clones_unchanged() {
    use burn::tensor::s;
    let device = AscendDevice::default();
    let original: Vec<f32> = (1..=16).map(|v| v as f32).collect();
    let t = Tensor::<Ascend, 2>::from_data(TensorData::new(original.clone(), [4, 4]), &device);
    let rows = Tensor::<Ascend, 2>::from_data([[100.0f32, 101.0, 102.0, 103.0]; 2], &device);
    let assigned = t.clone().slice_assign([s![0..4;2]], rows);
    let summed = t.clone() + 1.0;
    let negated = -t.clone();
    let got = |x: Tensor<Ascend, 2>| x.into_data().to_vec::<f32>().unwrap();
    assert_eq!(got(assigned)[..5], [100.0, 101.0, 102.0, 103.0, 5.0]);
    assert_eq!(got(summed)[0], 2.0);
    assert_eq!(got(negated)[0], -1.0);
    assert_eq!(got(t), original, "the shared tensor is unchanged");
}
