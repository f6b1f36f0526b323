//! End-to-end runs of MishBackward through the in-process function table.

use crate::common;
use common::*;

#[test]
fn vendor_sample() {
    let _gate = crate::common::shared();
    setup();
    let grad: Vec<f32> = (0..8).map(|i| i as f32).collect();
    let x = [1.0f32, 1.0, 1.0, 2.0, 2.0, 2.0, 3.0, 3.0];
    let out = mish_backward_f32(&grad, &x, &[4, 2]);
    let want = [
        0.0, 1.049036, 2.098072, 3.207954, 4.277272, 5.34659, 6.126641, 7.147748,
    ];
    for (o, w) in out.iter().zip(want) {
        assert!((o - w).abs() < 1e-5, "{out:?}");
    }
}
