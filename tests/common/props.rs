//! The property-test machinery shared by `proof_properties` (in-process simulator),
//! `proof_dlopen` (the simulator loaded through the real dlopen path) and `npu_smoke`
//! (real CANN): random cases, running one on a stream, and judging it against
//! `ascendcl::reference` with the CANN precision standard.
//!
//! # What a case is
//! A random broadcast pair of shapes (0–8 dims, 0–64 per dim, at most [`MAX_OUT`]
//! output elements), a random dtype triple (grad, self, out), and for each of the three
//! tensors a random *view* of a larger storage: every axis sliced with a start offset and a
//! step (1–3), the axes permuted, and for the inputs optionally an explicit `broadcast_to`
//! the output shape (stride-0 dims). The values come from a seeded generator mixing
//! ordinary values with ±0, subnormals, ±inf, NaN, huge and tiny magnitudes, values near
//! the root of mish' and below the f32 `exp` underflow. The output storage is pre-filled
//! with a sentinel, so a write outside the output view is caught too.
//!
//! # How it is judged ([`judge`])
//! Which T: the result is computed in `P = promote(G, X)` and rounded to `P`, then cast to
//! `O`, so its error is that of the coarser of the two: `T = max(T(P), T(O))`
//! ([`threshold_for`](super::threshold_for)). E.g. f16 × f16 → f32 is judged with f16's
//! T (the value was rounded to f16 before it was widened), f32 × f32 → bf16 with bf16's.
//!
//! Every element falls into exactly one region, and every element is asserted something:
//! * **Standard** (all others): NaN exactly where the reference has NaN; where the reference
//!   is ±inf the same infinity; a finite reference needs a finite result; and
//!   `|a − g| / (|g| + 1e-7)` enters MERE/MARE, which must satisfy MERE < T, MARE < 10·T.
//! * **Root** ([`Region::Root`]): `|x − X_ROOT| < ROOT_HALF_WIDTH` (2^-8), any `P`.
//!   mish' has its zero at x ≈ −1.19242 (slope ≈ 0.27) and the vendor's f32 formula
//!   `t − x(t²−1)σ(x)` cancels there: its absolute error (measured ≤ 1.25·2^-24 for
//!   grad = 1) is a relative error above 10·T = 10·2^-13 within about 1.4e-4 of the root,
//!   and above T (which alone breaks MERE for a small tensor) within about 2.3e-3; the
//!   window covers the latter with margin. For P = f16 the f32 error (up to 1e-3
//!   relative there) can flip the final rounding to f16, and when the result is an f16
//!   *subnormal* (|grad·mish'| < 6.1e-5, common next to the root) one subnormal ulp
//!   (6e-8) is a relative error of several percent — so the window applies to every `P`
//!   (found by this suite: grad 0.385, x = −1.1923828 in f16, 84 vs 83 subnormal ulps).
//!   Asserted instead: for a finite
//!   gradient `|a − g| ≤ 2^-22·|grad| + ulp_O(g)`; the reference NaN exactly where the
//!   result is NaN; for an infinite gradient the result is ±inf or NaN (the sign of
//!   mish' itself is not resolved by f32 there).
//! * **Subnormal exp** ([`Region::SubExp`]): `x < X_SUBNORMAL_EXP` (ln 2^-126 ≈ −87.3365,
//!   where `exp(x)` is subnormal or zero in f32) and either `P ≠ f16` or the gradient is
//!   not finite. There mish'(x) ≈ (1+x)·e^x is computed from a subnormal `e` with few
//!   significant bits (and as 0 below x ≈ −103.97), so with a huge gradient
//!   (f32/bf16 up to 3.4e38) a normal result keeps only a few bits. Asserted instead: for
//!   a finite gradient `|a − g| ≤ |grad|·(|x| + 2)·2^-148 + ulp_O(g)` (measured ≤ 0.48 of
//!   the first term) and NaN agreement; for an infinite gradient the result is the
//!   reference's infinity or NaN (`inf · 0` where the f32 mish' underflowed to 0). With
//!   `P = f16` and a finite gradient (|grad| ≤ 65504) the error is far below f16's
//!   resolution, so those elements stay in the standard region.
//! * **Overflow edge** (inside the standard region, counted separately): where the exact
//!   value lies just past the overflow threshold, a last-bit difference of the f32
//!   formula decides between ±inf and ±MAX. Allowed: reference ±inf and result ±MAX of
//!   `P` or `O` with the same sign, or the reverse; anything else is an infinity mismatch.
//!
//! `proof_properties` pins both regions down separately with dense sweeps.
#![allow(dead_code)]

use super::threshold_for;
use ascendcl::{
    DType, DeviceTensor, Element, Stream, TensorView, TensorViewMut, mish_backward, reference,
};
use half::{bf16, f16};
use ndarray::{ArrayD, ArrayViewD, Axis, Dimension, IxDyn, Slice};
use proptest::prelude::*;

/// The zero of mish' (x ≈ −1.1924).
pub const X_ROOT: f64 = -1.192_42;
/// Half-width of the [`Region::Root`] window.
pub const ROOT_HALF_WIDTH: f64 = 1.0 / 256.0;
/// ln(2^-126): below it `exp(x)` is subnormal (or 0) in f32.
pub const X_SUBNORMAL_EXP: f64 = -87.336_544_750_553_1;
/// The most output elements of a case.
pub const MAX_OUT: usize = 100_000;

/// Where an element is judged (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Region {
    Standard,
    Root,
    SubExp,
}

pub fn region(p: DType, grad: f64, x: f64) -> Region {
    let _ = p;
    if (x - X_ROOT).abs() < ROOT_HALF_WIDTH {
        Region::Root
    } else if x < X_SUBNORMAL_EXP && (p != DType::F16 || !grad.is_finite()) {
        Region::SubExp
    } else {
        Region::Standard
    }
}

/// The spacing of `dtype` at magnitude `|v|` (its smallest subnormal at 0).
pub fn ulp(dtype: DType, v: f64) -> f64 {
    let (mant, min_sub) = match dtype {
        DType::F32 => (23, -149),
        DType::F16 => (10, -24),
        DType::BF16 => (7, -133),
    };
    let a = v.abs();
    if !a.is_finite() || a == 0.0 {
        return 2f64.powi(min_sub);
    }
    let e = a.log2().floor() as i32;
    2f64.powi((e - mant).max(min_sub))
}

/// The largest finite value of `dtype`.
pub fn max_finite(dtype: DType) -> f64 {
    match dtype {
        DType::F32 => f64::from(f32::MAX),
        DType::F16 => 65504.0,
        DType::BF16 => bf16::MAX.to_f64(),
    }
}

/// The outcome of judging one case.
#[derive(Debug, Clone, Copy, Default)]
pub struct Verdict {
    pub elements: usize,
    pub standard: usize,
    pub root: usize,
    pub subexp: usize,
    pub nan: usize,
    pub inf: usize,
    /// ±inf against ±MAX (same sign) at the overflow threshold.
    pub overflow_edge: usize,
    pub mere: f64,
    pub mare: f64,
}

/// Judges `actual` against the reference `expected` (both of the output shape), with the
/// inputs broadcast to that shape; `Err` says which element broke which rule.
pub fn judge<G: Element, X: Element, O: Element>(
    g: &ArrayViewD<'_, G>,
    x: &ArrayViewD<'_, X>,
    actual: &ArrayD<O>,
    expected: &ArrayD<O>,
) -> Result<Verdict, String> {
    if actual.shape() != expected.shape() {
        return Err(format!(
            "shape {:?} vs {:?}",
            actual.shape(),
            expected.shape()
        ));
    }
    let shape = IxDyn(expected.shape());
    let gb = g
        .broadcast(shape.clone())
        .ok_or("grad does not broadcast")?;
    let xb = x.broadcast(shape).ok_or("x does not broadcast")?;
    let p = G::DTYPE.promote(X::DTYPE);
    let t = threshold_for(G::DTYPE, X::DTYPE, O::DTYPE);
    // The coarser of the compute and output dtypes: the last rounding the result went through.
    let coarse = if super::threshold(p) > super::threshold(O::DTYPE) {
        p
    } else {
        O::DTYPE
    };
    let mut v = Verdict::default();
    let mut sum = 0.0f64;
    let mut worst = String::new();
    let mut rel_n = 0usize;
    for (((idx, a), e), (gv, xv)) in actual
        .indexed_iter()
        .zip(expected.iter())
        .zip(gb.iter().zip(xb.iter()))
    {
        let (a, e, gv, xv) = (a.to_f64(), e.to_f64(), gv.to_f64(), xv.to_f64());
        v.elements += 1;
        let at = || {
            format!(
                "at {:?}: grad {gv:e} x {xv:e} -> {a:e}, reference {e:e}",
                idx.slice()
            )
        };
        let reg = region(p, gv, xv);
        // NaN positions agree bitwise, except where an infinite gradient meets an f32
        // mish' that the vendor formula cannot resolve (asserted per region below).
        let nan_exempt = reg != Region::Standard && !gv.is_finite();
        if a.is_nan() != e.is_nan() && !nan_exempt {
            return Err(format!("NaN mismatch {}", at()));
        }
        match reg {
            Region::Standard => {
                v.standard += 1;
                if e.is_nan() {
                    v.nan += 1;
                } else if e.is_infinite() {
                    v.inf += 1;
                    if a != e {
                        // Overflow edge: the exact value lies just past the overflow
                        // threshold and the f32 formula's last-bit error lands on the
                        // largest finite value (same sign), or the reverse below.
                        if a.signum() == e.signum()
                            && (a.abs() == max_finite(p) || a.abs() == max_finite(O::DTYPE))
                        {
                            v.overflow_edge += 1;
                        } else {
                            return Err(format!("infinity mismatch {}", at()));
                        }
                    }
                } else if !a.is_finite() {
                    if a.signum() == e.signum()
                        && (e.abs() == max_finite(p) || e.abs() == max_finite(O::DTYPE))
                    {
                        v.overflow_edge += 1;
                    } else {
                        return Err(format!("non-finite result {}", at()));
                    }
                } else {
                    let rel = if a == e {
                        0.0
                    } else {
                        (a - e).abs() / (e.abs() + 1e-7)
                    };
                    sum += rel;
                    rel_n += 1;
                    if rel > v.mare {
                        v.mare = rel;
                        worst = at();
                    }
                }
            }
            Region::Root => {
                v.root += 1;
                if gv.is_finite() {
                    if !e.is_nan() && (a - e).abs() > 2f64.powi(-22) * gv.abs() + ulp(coarse, e) {
                        return Err(format!(
                            "root-region bound 2^-22|grad| + ulp broken {}",
                            at()
                        ));
                    }
                } else if !(a.is_infinite() || a.is_nan()) {
                    return Err(format!(
                        "root region, infinite grad, finite result {}",
                        at()
                    ));
                }
            }
            Region::SubExp => {
                v.subexp += 1;
                if gv.is_finite() {
                    let bound = gv.abs() * (xv.abs() + 2.0) * 2f64.powi(-148) + ulp(coarse, e);
                    if !(e.is_nan() || (a - e).abs() <= bound || a == e) {
                        return Err(format!("subnormal-exp bound {bound:e} broken {}", at()));
                    }
                } else if !(a == e || a.is_nan()) {
                    return Err(format!("subnormal-exp region, infinite grad {}", at()));
                }
            }
        }
    }
    let finite = rel_n;
    v.mere = if finite == 0 {
        0.0
    } else {
        sum / finite as f64
    };
    if v.mere >= t || v.mare >= 10.0 * t {
        return Err(format!(
            "precision standard broken: MERE {:.3e} (T {t:.3e}), MARE {:.3e} (10T {:.3e}) over {} elements, worst {worst}",
            v.mere,
            v.mare,
            10.0 * t,
            finite
        ));
    }
    Ok(v)
}

/// How a view is cut from its storage (axis `j` of the storage, before the permutation).
#[derive(Debug, Clone)]
pub struct ViewSpec {
    /// Axis `i` of the view is storage axis `perm[i]`.
    pub perm: Vec<usize>,
    pub starts: Vec<usize>,
    pub steps: Vec<usize>,
    pub extra: Vec<usize>,
    /// Inputs only: `broadcast_to` the output shape explicitly.
    pub broadcast: bool,
}

/// The cuts both device view types offer (their inherent methods, behind one name).
pub trait Cut: Sized {
    fn slice(self, axis: usize, start: usize, end: usize, step: usize) -> ascendcl::Result<Self>;
    fn permute(self, axes: &[usize]) -> ascendcl::Result<Self>;
}

macro_rules! impl_cut {
    ($view:ident) => {
        impl<T: Element> Cut for $view<'_, T> {
            fn slice(
                self,
                axis: usize,
                start: usize,
                end: usize,
                step: usize,
            ) -> ascendcl::Result<Self> {
                $view::slice(self, axis, start, end, step)
            }
            fn permute(self, axes: &[usize]) -> ascendcl::Result<Self> {
                $view::permute(self, axes)
            }
        }
    };
}
impl_cut!(TensorView);
impl_cut!(TensorViewMut);

impl ViewSpec {
    /// The storage shape and, per storage axis, `(start, end, step)` for a view of `shape`.
    pub fn storage(&self, shape: &[usize]) -> (Vec<usize>, Vec<(usize, usize, usize)>) {
        let n = shape.len();
        let mut base = vec![0; n];
        let mut cuts = vec![(0, 0, 1); n];
        for (i, &d) in shape.iter().enumerate() {
            let j = self.perm[i];
            let (s, st) = (self.starts[j], self.steps[j]);
            let end = if d == 0 { s } else { s + (d - 1) * st + 1 };
            base[j] = end + self.extra[j];
            cuts[j] = (s, end, st);
        }
        (base, cuts)
    }

    /// Makes the storage of a view of `shape` at most `max` elements, by turning the
    /// widest axes back into plain ones (step 1, no offset, no padding).
    pub fn fit(mut self, shape: &[usize], max: usize) -> Self {
        loop {
            let (base, _) = self.storage(shape);
            if base.iter().product::<usize>() <= max {
                return self;
            }
            // the storage axis with the largest padding factor
            let mut best = (0usize, 0.0f64);
            for (i, &d) in shape.iter().enumerate() {
                let j = self.perm[i];
                let factor = base[j] as f64 / d.max(1) as f64;
                if factor > best.1 && (self.steps[j] > 1 || self.starts[j] > 0 || self.extra[j] > 0)
                {
                    best = (j, factor);
                }
            }
            if best.1 == 0.0 {
                return self;
            }
            let j = best.0;
            self.steps[j] = 1;
            self.starts[j] = 0;
            self.extra[j] = 0;
        }
    }

    /// The device counterpart of [`ViewSpec::host`]: `view` (of the whole storage) cut
    /// by `cuts` and permuted. Errors name `what` and the step that failed.
    pub fn device<V: Cut>(
        &self,
        view: V,
        cuts: &[(usize, usize, usize)],
        what: &str,
    ) -> Result<V, String> {
        let mut v = view;
        for (j, &(s, e, st)) in cuts.iter().enumerate() {
            v = v
                .slice(j, s, e, st)
                .map_err(|err| format!("{what} slice: {err}"))?;
        }
        v.permute(&self.perm)
            .map_err(|err| format!("{what} permute: {err}"))
    }

    pub fn host<'a, T>(
        &self,
        storage: &'a ArrayD<T>,
        shape: &[usize],
        cuts: &[(usize, usize, usize)],
    ) -> ArrayViewD<'a, T> {
        let mut v = storage.view();
        for (j, &(s, e, st)) in cuts.iter().enumerate() {
            v.slice_axis_inplace(
                Axis(j),
                Slice::new(s as isize, Some(e as isize), st as isize),
            );
        }
        let v = v.permuted_axes(IxDyn(&self.perm));
        assert_eq!(v.shape(), shape);
        v
    }
}

/// One random case (dtypes chosen separately, by index 0..27).
#[derive(Debug, Clone)]
pub struct Case {
    pub dtypes: usize,
    pub g_shape: Vec<usize>,
    pub x_shape: Vec<usize>,
    pub g_view: ViewSpec,
    pub x_view: ViewSpec,
    pub o_view: ViewSpec,
    pub seed: u64,
    /// Share of special values in ‰.
    pub special: u32,
}

impl Case {
    pub fn out_shape(&self) -> Vec<usize> {
        ascendcl::shape::broadcast(&[("grad_output", &self.g_shape), ("self", &self.x_shape)])
            .expect("broadcastable")
            .to_vec()
    }
}

pub const DTYPES: [DType; 3] = [DType::F32, DType::F16, DType::BF16];

pub fn triple(i: usize) -> (DType, DType, DType) {
    (DTYPES[i / 9], DTYPES[i / 3 % 3], DTYPES[i % 3])
}

fn dim() -> impl Strategy<Value = usize> {
    prop_oneof![1 => Just(0usize), 8 => 1usize..=4, 3 => 1usize..=64]
}

/// Shapes of 0–8 dims with at most `max` elements (largest dims halved until they fit).
pub fn shape(max: usize) -> impl Strategy<Value = Vec<usize>> {
    prop::collection::vec(dim(), 0..=8).prop_map(move |mut s| {
        // Zero dims do not bound the storage: count them as 1.
        while s.iter().map(|d| (*d).max(1)).product::<usize>() > max {
            let (i, _) = s
                .iter()
                .enumerate()
                .max_by_key(|(_, d)| **d)
                .expect("non-empty");
            s[i] /= 2;
            if s[i] == 0 {
                s[i] = 1;
            }
        }
        s
    })
}

pub fn view_spec(n: usize, input: bool) -> impl Strategy<Value = ViewSpec> {
    (
        Just((0..n).collect::<Vec<_>>()).prop_shuffle(),
        prop::collection::vec(prop_oneof![3 => Just(0usize), 1 => 1usize..=2], n),
        prop::collection::vec(prop_oneof![3 => Just(1usize), 1 => 2usize..=3], n),
        prop::collection::vec(prop_oneof![3 => Just(0usize), 1 => 1usize..=2], n),
        if input {
            prop::bool::weighted(0.25).boxed()
        } else {
            Just(false).boxed()
        },
    )
        .prop_map(|(perm, starts, steps, extra, broadcast)| ViewSpec {
            perm,
            starts,
            steps,
            extra,
            broadcast,
        })
}

/// From an output-like shape, an input shape: a random suffix, random dims set to 1.
fn derive_input(out: &[usize], keep: usize, ones: u32) -> Vec<usize> {
    let k = keep.min(out.len());
    out[out.len() - k..]
        .iter()
        .enumerate()
        .map(|(i, d)| if ones >> (i % 32) & 1 == 1 { 1 } else { *d })
        .collect()
}

/// Random valid cases; `dtypes` restricts the dtype triples (indices into 0..27).
pub fn case(dtypes: Vec<usize>, max: usize) -> impl Strategy<Value = Case> {
    (
        shape(max),
        0usize..=8,
        0usize..=8,
        any::<u32>(),
        any::<u32>(),
        prop::sample::select(dtypes),
    )
        .prop_flat_map(|(out, kg, kx, og, ox, dt)| {
            // Bias towards full-rank inputs, but keep real broadcasting common.
            let g_shape = derive_input(
                &out,
                if kg < 2 { kg } else { out.len() },
                if og % 3 == 0 { og } else { 0 },
            );
            let x_shape = derive_input(
                &out,
                if kx < 2 { kx } else { out.len() },
                if ox % 3 == 0 { ox } else { 0 },
            );
            let o = ascendcl::shape::broadcast(&[("grad_output", &g_shape), ("self", &x_shape)])
                .expect("derived")
                .to_vec();
            (
                Just(dt),
                Just(g_shape.clone()),
                Just(x_shape.clone()),
                view_spec(g_shape.len(), true),
                view_spec(x_shape.len(), true),
                view_spec(o.len(), false),
                any::<u64>(),
                prop_oneof![2 => Just(20u32), 1 => Just(300u32), 1 => Just(1000u32)],
            )
        })
        .prop_map(
            |(dtypes, g_shape, x_shape, g_view, x_view, o_view, seed, special)| Case {
                dtypes,
                g_shape,
                x_shape,
                g_view,
                x_view,
                o_view,
                seed,
                special,
            },
        )
}

/// splitmix64.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    pub fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    pub fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.unit()
    }
}

/// One value of type `T`: with probability `special`‰ a special one.
pub fn value<T: Element>(rng: &mut Rng, special: u32, is_x: bool) -> T {
    let (max, min_sub) = match T::DTYPE {
        DType::F32 => (f32::MAX as f64, 2f64.powi(-149)),
        DType::F16 => (65504.0, 2f64.powi(-24)),
        DType::BF16 => (bf16::MAX.to_f64(), 2f64.powi(-133)),
    };
    if (rng.next() % 1000) as u32 >= special {
        let v = if is_x {
            rng.range(-12.0, 12.0)
        } else {
            rng.range(-4.0, 4.0)
        };
        return T::from_f64(v);
    }
    let sign = if rng.next() & 1 == 0 { 1.0 } else { -1.0 };
    let v = match rng.next() % 12 {
        0 => 0.0,
        1 => f64::INFINITY,
        2 => f64::NAN,
        3 => min_sub * (1 + rng.next() % 1000) as f64, // subnormal
        4 => max * rng.range(0.01, 1.0),               // huge
        5 => 10f64.powf(rng.range(-30.0, -8.0)),       // tiny
        6 => return T::from_f64(X_ROOT + rng.range(-2e-3, 2e-3)), // next to the root of mish'
        7 => return T::from_f64(rng.range(-120.0, -80.0)), // exp underflow
        8 => 10f64.powf(rng.range(1.0, 6.0)),
        9 => return T::from_f64(-1000.0 * rng.range(1.0, 30.0)),
        10 => max,
        _ => rng.range(0.0, 1.5),
    };
    T::from_f64(sign * v)
}

pub fn values<T: Element>(shape: &[usize], seed: u64, special: u32, is_x: bool) -> ArrayD<T> {
    let mut rng = Rng(seed);
    let n = shape.iter().product();
    ArrayD::from_shape_vec(
        IxDyn(shape),
        (0..n)
            .map(|_| value::<T>(&mut rng, special, is_x))
            .collect(),
    )
    .expect("shape")
}

/// Per-case numbers for the figures.
#[derive(Debug, Clone, Copy, Default)]
pub struct Outcome {
    pub verdict: Verdict,
    pub non_contiguous: usize,
}

/// Runs one case on `stream` with dtypes `G, X, O` and judges it.
pub fn run_case<G: Element, X: Element, O: Element>(
    stream: &Stream,
    c: &Case,
) -> Result<Outcome, String> {
    fn e(what: &'static str) -> impl Fn(ascendcl::Error) -> String {
        move |err| format!("{what}: {err}")
    }
    let out_shape = c.out_shape();
    let (gb, gcuts) = c.g_view.storage(&c.g_shape);
    let (xb, xcuts) = c.x_view.storage(&c.x_shape);
    let (ob, ocuts) = c.o_view.storage(&out_shape);
    let g_host: ArrayD<G> = values(&gb, c.seed, c.special, false);
    let x_host: ArrayD<X> = values(&xb, c.seed ^ 0x5555, c.special, true);
    let sentinel: ArrayD<O> = ArrayD::from_shape_fn(IxDyn(&ob), |i| {
        O::from_f32(1000.0 + (i.slice().iter().sum::<usize>() % 7) as f32)
    });

    fn logical<T: Clone>(
        v: ArrayViewD<'_, T>,
        b: bool,
        out_shape: &[usize],
    ) -> Result<ArrayD<T>, String> {
        Ok(if b {
            v.broadcast(IxDyn(out_shape))
                .ok_or("host broadcast")?
                .to_owned()
        } else {
            v.to_owned()
        })
    }
    let gv: ArrayD<G> = logical(
        c.g_view.host(&g_host, &c.g_shape, &gcuts),
        c.g_view.broadcast,
        &out_shape,
    )?;
    let xv: ArrayD<X> = logical(
        c.x_view.host(&x_host, &c.x_shape, &xcuts),
        c.x_view.broadcast,
        &out_shape,
    )?;
    let expected: ArrayD<O> =
        reference::mish_backward_as(gv.view(), xv.view()).map_err(e("reference"))?;

    let gd = DeviceTensor::from_array(stream, &g_host).map_err(e("upload grad"))?;
    let xd = DeviceTensor::from_array(stream, &x_host).map_err(e("upload x"))?;
    let mut od = DeviceTensor::from_array(stream, &sentinel).map_err(e("upload out"))?;
    let mut non_contiguous = 0;
    let mut g_dv = c.g_view.device(gd.view(), &gcuts, "grad")?;
    if c.g_view.broadcast {
        g_dv = g_dv.broadcast_to(&out_shape).map_err(e("grad broadcast"))?;
    }
    let mut x_dv = c.x_view.device(xd.view(), &xcuts, "x")?;
    if c.x_view.broadcast {
        x_dv = x_dv.broadcast_to(&out_shape).map_err(e("x broadcast"))?;
    }
    non_contiguous += usize::from(!g_dv.is_contiguous()) + usize::from(!x_dv.is_contiguous());
    let (o_strides, o_offset) = {
        let o_dv = c.o_view.device(od.view_mut(), &ocuts, "out")?;
        non_contiguous += usize::from(!o_dv.is_contiguous());
        let layout = (o_dv.strides().to_vec(), o_dv.offset());
        mish_backward(g_dv, x_dv, o_dv, stream).map_err(e("mish_backward"))?;
        layout
    };
    // The result through the output view, and the whole output storage.
    let actual = c
        .o_view
        .device(od.view(), &ocuts, "out")?
        .to_array(stream)
        .map_err(e("download"))?;
    let storage = od
        .to_array::<ndarray::IxDyn>(stream)
        .map_err(e("download storage"))?;
    // Elements outside the view keep the sentinel (bitwise).
    let mut touched = vec![false; storage.len()];
    let n = out_shape.len();
    for idx in ndarray::indices(IxDyn(&out_shape)) {
        let mut off = o_offset;
        for k in 0..n {
            off += idx[k] as i64 * o_strides[k];
        }
        touched[off as usize] = true;
    }
    for ((i, (a, s)), t) in storage
        .iter()
        .zip(sentinel.iter())
        .enumerate()
        .zip(&touched)
    {
        if !t && a.to_bits_u32() != s.to_bits_u32() {
            return Err(format!(
                "storage element {i} outside the output view was overwritten"
            ));
        }
    }
    let verdict = judge(&gv.view(), &xv.view(), &actual, &expected)?;
    Ok(Outcome {
        verdict,
        non_contiguous,
    })
}

/// [`run_case`] with the case's dtype triple.
pub fn run_any(stream: &Stream, c: &Case) -> Result<Outcome, String> {
    macro_rules! dispatch {
        ($($i:expr => ($g:ty, $x:ty, $o:ty)),* $(,)?) => {
            match c.dtypes {
                $($i => run_case::<$g, $x, $o>(stream, c),)*
                _ => Err("dtype index".into()),
            }
        };
    }
    dispatch!(
        0 => (f32, f32, f32), 1 => (f32, f32, f16), 2 => (f32, f32, bf16),
        3 => (f32, f16, f32), 4 => (f32, f16, f16), 5 => (f32, f16, bf16),
        6 => (f32, bf16, f32), 7 => (f32, bf16, f16), 8 => (f32, bf16, bf16),
        9 => (f16, f32, f32), 10 => (f16, f32, f16), 11 => (f16, f32, bf16),
        12 => (f16, f16, f32), 13 => (f16, f16, f16), 14 => (f16, f16, bf16),
        15 => (f16, bf16, f32), 16 => (f16, bf16, f16), 17 => (f16, bf16, bf16),
        18 => (bf16, f32, f32), 19 => (bf16, f32, f16), 20 => (bf16, f32, bf16),
        21 => (bf16, f16, f32), 22 => (bf16, f16, f16), 23 => (bf16, f16, bf16),
        24 => (bf16, bf16, f32), 25 => (bf16, bf16, f16), 26 => (bf16, bf16, bf16),
    )
}

/// The dtype triples a SoC accepts.
pub fn supported_triples(soc: &str) -> Vec<usize> {
    (0..27)
        .filter(|&i| {
            let (g, x, o) = triple(i);
            [g, x, o]
                .iter()
                .all(|d| ascendcl::MishBackward::supports(ascendcl::SocFamily::of(soc), *d))
        })
        .collect()
}

/// Totals over a run, printed as the figures.
#[derive(Debug, Default)]
pub struct Tally {
    pub per_triple: [usize; 27],
    pub elements: usize,
    pub root: usize,
    pub subexp: usize,
    pub nan: usize,
    pub inf: usize,
    pub overflow_edge: usize,
    pub non_contiguous_views: usize,
    pub worst_mere_over_t: f64,
    pub worst_mare_over_t: f64,
}

impl Tally {
    pub fn add(&mut self, c: &Case, o: &Outcome) {
        let (g, x, out) = triple(c.dtypes);
        let t = threshold_for(g, x, out);
        self.per_triple[c.dtypes] += 1;
        self.elements += o.verdict.elements;
        self.root += o.verdict.root;
        self.subexp += o.verdict.subexp;
        self.nan += o.verdict.nan;
        self.inf += o.verdict.inf;
        self.overflow_edge += o.verdict.overflow_edge;
        self.non_contiguous_views += o.non_contiguous;
        self.worst_mere_over_t = self.worst_mere_over_t.max(o.verdict.mere / t);
        self.worst_mare_over_t = self.worst_mare_over_t.max(o.verdict.mare / t);
    }

    pub fn report(&self, what: &str) -> String {
        let mut s = format!(
            "{what}: {} cases, {} elements ({} root-region, {} subnormal-exp-region, {} NaN, {} inf, {} at the overflow edge), {} non-contiguous views, worst MERE/T {:.3}, worst MARE/T {:.3}\n  cases per dtype triple (grad/self/out):",
            self.per_triple.iter().sum::<usize>(),
            self.elements,
            self.root,
            self.subexp,
            self.nan,
            self.inf,
            self.overflow_edge,
            self.non_contiguous_views,
            self.worst_mere_over_t,
            self.worst_mare_over_t
        );
        for (i, n) in self.per_triple.iter().enumerate() {
            if *n > 0 {
                let (g, x, o) = triple(i);
                s += &format!(" {g}/{x}/{o}={n}");
            }
        }
        let mut per_out = [0usize; 3];
        for (i, n) in self.per_triple.iter().enumerate() {
            per_out[i % 3] += n;
        }
        s += &format!(
            "\n  cases per output dtype: FLOAT={} FLOAT16={} BF16={}",
            per_out[0], per_out[1], per_out[2]
        );
        s
    }
}

/// A deterministic proptest runner: fixed ChaCha seed, shrinking on, failures persisted
/// in `path` (replayed first on the next run). The seed and the shrunk case are printed
/// on failure.
pub fn runner(cases: u32, path: &'static str) -> proptest::test_runner::TestRunner {
    use proptest::test_runner::{
        Config, FileFailurePersistence, RngAlgorithm, TestRng, TestRunner,
    };
    let config = Config {
        cases,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(path))),
        max_shrink_iters: 2000,
        ..Config::default()
    };
    TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &SEED))
}

/// The fixed RNG seed of every property run (printed on failure).
pub const SEED: [u8; 32] = *b"ascendcl-proof-properties-seed-1";
