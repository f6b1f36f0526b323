//! The reference's AdamW step (`reference::apply_adam_w_v2`, the vendor's kernel order,
//! `t = step + 1`) against torch's AdamW algorithm as its documentation writes it (bias-
//! corrected moments, `θ ← θ − η·λ·θ − η·m̂/(√v̂ + ε)`), over several steps, with weight
//! decay, `maximize` and `amsgrad`.

use ascendcl::reference::{AdamW, apply_adam_w_v2};
use ndarray::{Array1, array};

/// torch.optim.AdamW, step `t` (1-based), in f64.
fn textbook(
    w: &mut [f64],
    m: &mut [f64],
    v: &mut [f64],
    vmax: &mut [f64],
    g: &[f64],
    t: f64,
    h: &AdamW,
) {
    let (lr, b1, b2) = (f64::from(h.lr), f64::from(h.beta1), f64::from(h.beta2));
    let (wd, eps) = (f64::from(h.weight_decay), f64::from(h.eps));
    for k in 0..w.len() {
        let g = if h.maximize { -g[k] } else { g[k] };
        w[k] -= lr * wd * w[k];
        m[k] = b1 * m[k] + (1.0 - b1) * g;
        v[k] = b2 * v[k] + (1.0 - b2) * g * g;
        let mhat = m[k] / (1.0 - b1.powf(t));
        let second = if h.amsgrad {
            vmax[k] = vmax[k].max(v[k]);
            vmax[k]
        } else {
            v[k]
        };
        let vhat = second / (1.0 - b2.powf(t));
        w[k] -= lr * mhat / (vhat.sqrt() + eps);
    }
}

#[test]
fn the_reference_step_is_torchs_adamw_with_t_one_past_the_step_count() {
    let _gate = crate::common::shared();
    let mut cases = 0;
    for amsgrad in [false, true] {
        for maximize in [false, true] {
            for weight_decay in [0.0f32, 0.01] {
                let h = AdamW {
                    lr: 0.01,
                    beta1: 0.9,
                    beta2: 0.999,
                    weight_decay,
                    eps: 1e-8,
                    amsgrad,
                    maximize,
                };
                let mut w = array![0.5f64, -1.0, 2.0, 0.0];
                let (mut m, mut v, mut vmax) =
                    (Array1::zeros(4), Array1::zeros(4), Array1::zeros(4));
                let (mut tw, mut tm, mut tv, mut tvmax) =
                    (w.to_vec(), vec![0.0; 4], vec![0.0; 4], vec![0.0; 4]);
                for step in 0..5 {
                    let g = array![0.3f64, -0.2, 1.5, 0.01] * (1.0 + step as f64) - 0.1 * &w;
                    apply_adam_w_v2(
                        w.view_mut(),
                        m.view_mut(),
                        v.view_mut(),
                        Some(vmax.view_mut()),
                        g.view(),
                        step as f64,
                        &h,
                    )
                    .unwrap();
                    textbook(
                        &mut tw,
                        &mut tm,
                        &mut tv,
                        &mut tvmax,
                        g.as_slice().unwrap(),
                        step as f64 + 1.0,
                        &h,
                    );
                    for k in 0..4 {
                        assert!(
                            (w[k] - tw[k]).abs() <= 1e-12,
                            "{h:?} step {step} [{k}]: {} vs {}",
                            w[k],
                            tw[k]
                        );
                        assert!((m[k] - tm[k]).abs() <= 1e-12 && (v[k] - tv[k]).abs() <= 1e-12);
                    }
                    cases += 1;
                }
                if amsgrad {
                    assert_eq!(vmax.to_vec(), tvmax);
                }
            }
        }
    }
    assert_eq!(cases, 40);
}

#[test]
fn amsgrad_without_its_tensor_and_mismatched_shapes_are_errors() {
    let _gate = crate::common::shared();
    let h = AdamW {
        lr: 0.1,
        beta1: 0.9,
        beta2: 0.99,
        weight_decay: 0.0,
        eps: 1e-8,
        amsgrad: true,
        maximize: false,
    };
    let (mut w, mut m, mut v) = (
        array![1.0f32, 2.0],
        array![0.0f32, 0.0],
        array![0.0f32, 0.0],
    );
    let g = array![1.0f32, 1.0];
    let r = apply_adam_w_v2(
        w.view_mut(),
        m.view_mut(),
        v.view_mut(),
        None,
        g.view(),
        0.0,
        &h,
    );
    assert!(
        matches!(r, Err(ascendcl::Error::InvalidArgument(_))),
        "{r:?}"
    );
    assert_eq!(w, array![1.0f32, 2.0], "nothing written");
    let mut short = array![0.0f32];
    let r = apply_adam_w_v2(
        w.view_mut(),
        short.view_mut(),
        v.view_mut(),
        None,
        g.view(),
        0.0,
        &h,
    );
    assert!(
        matches!(r, Err(ascendcl::Error::ShapeMismatch { argument: "m", .. })),
        "{r:?}"
    );
}
