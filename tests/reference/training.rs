//! The CPU half of the MLP training example (`examples/mlp_training/model.rs`): one step
//! through `ascendcl::reference` is the textbook backpropagation (plain ndarray f32
//! arithmetic, within rounding), and 200 steps make the loss fall.

#[path = "../../examples/mlp_training/model.rs"]
mod model;

use ascendcl::reference::{mish, mish_backward};
use model::{Config, Params, cpu_step, setup};
use ndarray::{Array2, Axis};

fn close(a: &Array2<f32>, b: &Array2<f32>, what: &str) {
    for (x, y) in a.iter().zip(b.iter()) {
        assert!(
            (x - y).abs() <= 1e-5 * y.abs().max(1e-2),
            "{what}: {x} vs {y}"
        );
    }
}

fn row(v: &ndarray::Array1<f32>) -> Array2<f32> {
    v.clone().insert_axis(Axis(0))
}

#[test]
fn one_step_is_textbook_backpropagation() {
    let cfg = Config {
        samples: 16,
        inputs: 3,
        hidden: 8,
        lr: 0.1,
        math: ascendcl::CubeMath::KeepDtype,
    };
    let (data, start) = setup(&cfg, 7);
    let mut p = start.clone();
    let loss = cpu_step(&mut p, &data, &cfg).unwrap();
    assert_ne!(p, start);

    let s = &start;
    let h = data.x.dot(&s.w1) + &s.b1;
    let a = mish(h.view()).unwrap();
    let pred = a.dot(&s.w2) + &s.b2;
    let err = &pred - &data.y;
    let want_loss = err.mapv(|e| e * e).mean().unwrap();
    assert!(
        (loss - want_loss).abs() <= 1e-6 * want_loss,
        "{loss} vs {want_loss}"
    );
    let dpred = err * (2.0 / cfg.samples as f32);
    let dw2 = a.t().dot(&dpred);
    let db2 = dpred.sum_axis(Axis(0));
    let da = dpred.dot(&s.w2.t());
    let dh = mish_backward(da.view(), h.view()).unwrap();
    let dw1 = data.x.t().dot(&dh);
    let db1 = dh.sum_axis(Axis(0));
    let lr = cfg.lr;
    close(&p.w1, &(&s.w1 - &(dw1 * lr)), "w1");
    close(&row(&p.b1), &row(&(&s.b1 - &(db1 * lr))), "b1");
    close(&p.w2, &(&s.w2 - &(dw2 * lr)), "w2");
    close(&row(&p.b2), &row(&(&s.b2 - &(db2 * lr))), "b2");
}

#[test]
fn two_hundred_cpu_steps_make_the_loss_fall() {
    let cfg = Config::EXAMPLE;
    let (data, mut p): (_, Params) = setup(&cfg, 42);
    let first = cpu_step(&mut p, &data, &cfg).unwrap();
    let mut last = first;
    for _ in 1..200 {
        last = cpu_step(&mut p, &data, &cfg).unwrap();
    }
    assert!(last.is_finite() && last < 0.5 * first, "{first} -> {last}");
}
