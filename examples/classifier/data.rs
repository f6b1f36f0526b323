//! Synthetic MNIST-shaped data, generated from a seed: ten class prototypes (28×28 images
//! of a few random Gaussian blobs each), and samples drawn as a randomly scaled and
//! shifted prototype plus uniform noise, as 784 features in [−2, 3]. A train and a test
//! split from one generator; the initial parameters from another.

use ndarray::{Array1, Array2, ArrayView1, s};

pub const INPUTS: usize = 784;
pub const HIDDEN: usize = 128;
pub const CLASSES: usize = 10;
const SIDE: usize = 28;

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

    /// An index in `0..n`.
    pub fn below(&mut self, n: usize) -> usize {
        ((self.unit() * n as f32) as usize).min(n - 1)
    }
}

/// One split: images `(n, 784)` and int64 labels `(n)`.
pub struct Split {
    pub x: Array2<f32>,
    pub y: Array1<i64>,
}

impl Split {
    /// Copies samples `order[at..at + batch]` into `x`, `y` (no allocation).
    pub fn fill(&self, order: &[usize], at: usize, x: &mut Array2<f32>, y: &mut Array1<i64>) {
        for (r, &i) in order[at..at + y.len()].iter().enumerate() {
            x.row_mut(r).assign(&self.x.row(i));
            y[r] = self.y[i];
        }
    }
}

fn prototypes(rng: &mut Lcg) -> Array2<f32> {
    let mut p = Array2::<f32>::zeros((CLASSES, INPUTS));
    for c in 0..CLASSES {
        for _ in 0..4 {
            let (cy, cx) = (4.0 + rng.unit() * 20.0, 4.0 + rng.unit() * 20.0);
            let r2 = 4.0 + rng.unit() * 12.0;
            for i in 0..SIDE {
                for j in 0..SIDE {
                    let d2 = (i as f32 - cy).powi(2) + (j as f32 - cx).powi(2);
                    p[[c, i * SIDE + j]] += (-d2 / r2).exp();
                }
            }
        }
    }
    p.mapv_inplace(|v| v.min(1.0));
    p
}

fn sample(rng: &mut Lcg, proto: ArrayView1<'_, f32>, mut out: ndarray::ArrayViewMut1<'_, f32>) {
    let scale = 0.6 + rng.unit() * 0.8;
    let shift = rng.sym(0.2);
    for (o, p) in out.iter_mut().zip(proto) {
        *o = (p * scale + shift + rng.sym(2.0)).clamp(-2.0, 3.0);
    }
}

fn split(rng: &mut Lcg, protos: &Array2<f32>, n: usize) -> Split {
    let mut x = Array2::<f32>::zeros((n, INPUTS));
    let mut y = Array1::<i64>::zeros(n);
    for k in 0..n {
        let c = rng.below(CLASSES);
        y[k] = c as i64;
        sample(rng, protos.row(c), x.slice_mut(s![k, ..]));
    }
    Split { x, y }
}

/// The train and test splits from `seed`.
pub fn splits(seed: u64, train: usize, test: usize) -> (Split, Split) {
    let mut rng = Lcg(seed);
    let protos = prototypes(&mut rng);
    let tr = split(&mut rng, &protos, train);
    let te = split(&mut rng, &protos, test);
    (tr, te)
}

/// The MLP's parameters: `h = relu(x·w1 + b1)`, `logits = h·w2 + b2`.
#[derive(Clone)]
pub struct Params {
    pub w1: Array2<f32>,
    pub b1: Array1<f32>,
    pub w2: Array2<f32>,
    pub b2: Array1<f32>,
}

/// torch's default initialisation bound `1/sqrt(fan_in)`, uniform, from `seed`.
pub fn init(seed: u64) -> Params {
    let mut rng = Lcg(seed);
    let (k1, k2) = (1.0 / (INPUTS as f32).sqrt(), 1.0 / (HIDDEN as f32).sqrt());
    Params {
        w1: Array2::from_shape_fn((INPUTS, HIDDEN), |_| rng.sym(k1)),
        b1: Array1::from_shape_fn(HIDDEN, |_| rng.sym(k1)),
        w2: Array2::from_shape_fn((HIDDEN, CLASSES), |_| rng.sym(k2)),
        b2: Array1::from_shape_fn(CLASSES, |_| rng.sym(k2)),
    }
}

/// A seeded permutation of `0..n` (Fisher–Yates), into `order`.
pub fn shuffle(rng: &mut Lcg, order: &mut [usize]) {
    for i in (1..order.len()).rev() {
        let j = rng.below(i + 1);
        order.swap(i, j);
    }
}
