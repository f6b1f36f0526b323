//! The synthetic task and the initial parameters, both from a seed: 28×28 images of one
//! of four oriented bars (horizontal, vertical, diagonal, anti-diagonal) at a random
//! offset, on Gaussian-like noise; the label is the bar's orientation.

use ndarray::{Array1, Array4, ArrayD, IxDyn};

/// The classes (bar orientations).
pub const CLASSES: usize = 4;
/// Image side.
pub const SIDE: usize = 28;

/// A small deterministic generator (no extra dependency).
pub struct Lcg(pub u64);

impl Lcg {
    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f32 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 40) as f32 / (1u64 << 24) as f32
    }

    /// Uniform in [-scale, scale).
    pub fn sym(&mut self, scale: f32) -> f32 {
        (self.unit() * 2.0 - 1.0) * scale
    }

    /// An array of `shape` uniform in [-scale, scale).
    pub fn array(&mut self, shape: &[usize], scale: f32) -> ArrayD<f32> {
        ArrayD::from_shape_fn(IxDyn(shape), |_| self.sym(scale))
    }
}

/// One batch: images `(n, 1, 28, 28)` and int64 labels `(n)`.
pub struct Batch {
    pub x: Array4<f32>,
    pub y: Array1<i64>,
}

/// A batch of `n` images drawn from `rng`.
pub fn batch(rng: &mut Lcg, n: usize) -> Batch {
    let mut x = Array4::<f32>::zeros((n, 1, SIDE, SIDE));
    let mut y = Array1::<i64>::zeros(n);
    for s in 0..n {
        let class = (rng.unit() * CLASSES as f32) as usize % CLASSES;
        y[s] = class as i64;
        // The bar's centre, kept away from the border so that the whole bar is visible.
        let cy = 8 + (rng.unit() * 12.0) as isize;
        let cx = 8 + (rng.unit() * 12.0) as isize;
        for i in 0..SIDE {
            for j in 0..SIDE {
                x[[s, 0, i, j]] = rng.sym(0.5);
            }
        }
        for t in -6isize..=6 {
            let (dy, dx) = match class {
                0 => (0, t),
                1 => (t, 0),
                2 => (t, t),
                _ => (t, -t),
            };
            for w in 0..2isize {
                // A bar two pixels thick.
                let (i, j) = if class == 0 {
                    (cy + dy + w, cx + dx)
                } else {
                    (cy + dy, cx + dx + w)
                };
                if (0..SIDE as isize).contains(&i) && (0..SIDE as isize).contains(&j) {
                    x[[s, 0, i as usize, j as usize]] += 1.5;
                }
            }
        }
    }
    Batch { x, y }
}

/// The parameters: conv1 `(8, 1, 3, 3)` + `(8)`, conv2 `(16, 8, 3, 3)` + `(16)`, and the
/// linear layer `(400, classes)` + `(classes)`.
#[derive(Clone)]
pub struct Params {
    pub w1: ArrayD<f32>,
    pub b1: ArrayD<f32>,
    pub w2: ArrayD<f32>,
    pub b2: ArrayD<f32>,
    pub w3: ArrayD<f32>,
    pub b3: ArrayD<f32>,
}

/// Features after the second pooling: 16 channels of 5×5.
pub const FLAT: usize = 16 * 5 * 5;

/// Uniform initialisation with torch's default bound `1/sqrt(fan_in)`.
pub fn init(rng: &mut Lcg) -> Params {
    let b = |fan_in: usize| 1.0 / (fan_in as f32).sqrt();
    Params {
        w1: rng.array(&[8, 1, 3, 3], b(9)),
        b1: rng.array(&[8], b(9)),
        w2: rng.array(&[16, 8, 3, 3], b(72)),
        b2: rng.array(&[16], b(72)),
        w3: rng.array(&[FLAT, CLASSES], b(FLAT)),
        b3: rng.array(&[CLASSES], b(FLAT)),
    }
}
