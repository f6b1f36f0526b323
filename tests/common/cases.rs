//! Random cases of an elementwise operator for the property harness (`props.rs`): shapes,
//! broadcast input shapes, dtype combinations, views, and seeded values mixing ordinary
//! and special ones.
#![allow(dead_code)]

use super::props::{DTYPES, Elementwise, max_finite, ulp};
use super::typed::Host;
use super::views::{ViewSpec, view_spec};
use ascendcl::{DType, Element, SocFamily};
use ndarray::{ArrayD, IxDyn};
use proptest::prelude::*;

/// One random case of an operator.
#[derive(Debug, Clone)]
pub struct Case {
    /// The inputs' dtypes, then the output's.
    pub dtypes: Vec<DType>,
    pub shapes: Vec<Vec<usize>>,
    pub views: Vec<ViewSpec>,
    /// Unused by an in-place operator (its output is its input's view).
    pub o_view: ViewSpec,
    pub seed: u64,
    /// Share of special values in ‰.
    pub special: u32,
}

impl Case {
    pub fn out_shape<Op: Elementwise>(&self) -> Vec<usize> {
        broadcast_shape::<Op>(&self.shapes)
    }

    pub fn label(&self) -> String {
        let names: Vec<String> = self.dtypes.iter().map(|d| d.to_string()).collect();
        names.join("/")
    }
}

/// The dtype combinations (inputs', then output's) `Op` accepts on `soc`.
pub fn combinations<Op: Elementwise>(soc: &str) -> Vec<Vec<DType>> {
    let n = Op::INPUTS.len() + 1;
    let family = SocFamily::of(soc);
    (0..3usize.pow(n as u32))
        .map(|i| {
            (0..n)
                .map(|k| DTYPES[i / 3usize.pow((n - 1 - k) as u32) % 3])
                .collect::<Vec<_>>()
        })
        .filter(|d| Op::accepts(family, d))
        .collect()
}

/// The broadcast shape of the inputs' `shapes` (all equal for an operator that does not
/// broadcast).
fn broadcast_shape<Op: Elementwise>(shapes: &[Vec<usize>]) -> Vec<usize> {
    let named: Vec<(&str, &[usize])> = Op::INPUTS
        .iter()
        .zip(shapes)
        .map(|(n, s)| (*n, s.as_slice()))
        .collect();
    ascendcl::shape::broadcast(&named)
        .expect("broadcastable")
        .to_vec()
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

/// From an output-like shape, an input shape: a random suffix, random dims set to 1.
fn derive_input(out: &[usize], keep: usize, ones: u32) -> Vec<usize> {
    let k = keep.min(out.len());
    out[out.len() - k..]
        .iter()
        .enumerate()
        .map(|(i, d)| if ones >> (i % 32) & 1 == 1 { 1 } else { *d })
        .collect()
}

/// Random valid cases of `Op` with a dtype combination from `dtypes`, at most `max`
/// output elements and (when `storage` is `Some`) at most that many storage elements a
/// view.
pub fn case<Op: Elementwise>(
    dtypes: Vec<Vec<DType>>,
    max: usize,
    storage: Option<usize>,
) -> impl Strategy<Value = Case> {
    let n = Op::INPUTS.len();
    (
        shape(max),
        prop::collection::vec((0usize..=8, any::<u32>()), n),
        prop::sample::select(dtypes),
    )
        .prop_flat_map(move |(out, derive, dt)| {
            // Bias towards full-rank inputs, but keep real broadcasting common.
            let shapes: Vec<Vec<usize>> = derive
                .iter()
                .map(|&(keep, ones)| {
                    if !Op::BROADCASTS {
                        out.clone()
                    } else {
                        let keep = if keep < 2 { keep } else { out.len() };
                        derive_input(&out, keep, if ones % 3 == 0 { ones } else { 0 })
                    }
                })
                .collect();
            let o = broadcast_shape::<Op>(&shapes);
            let views: Vec<_> = shapes
                .iter()
                .map(|s| view_spec(s.len(), Op::BROADCASTS))
                .collect();
            (
                Just(dt),
                Just(shapes),
                views,
                view_spec(o.len(), false),
                any::<u64>(),
                prop::sample::select(Op::SPECIALS),
            )
        })
        .prop_map(move |(dtypes, shapes, views, o_view, seed, special)| {
            let fit = |v: ViewSpec, s: &[usize]| match storage {
                Some(max) => v.fit(s, max),
                None => v,
            };
            let views = views
                .into_iter()
                .zip(&shapes)
                .map(|(v, s)| fit(v, s))
                .collect();
            let o_shape = broadcast_shape::<Op>(&shapes);
            Case {
                dtypes,
                o_view: fit(o_view, &o_shape),
                shapes,
                views,
                seed,
                special,
            }
        })
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

/// The zero of mish' (x ≈ −1.1924), which the special values visit.
pub const X_ROOT: f64 = -1.192_42;

/// One value of type `T`: with probability `special`‰ a special one.
pub fn value<T: Element>(rng: &mut Rng, special: u32, wide: bool) -> T {
    let max = max_finite(T::DTYPE);
    let min_sub = ulp(T::DTYPE, 0.0);
    if (rng.next() % 1000) as u32 >= special {
        let v = if wide {
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

pub fn values<T: Element>(shape: &[usize], seed: u64, special: u32, wide: bool) -> ArrayD<T> {
    let mut rng = Rng(seed);
    let n = shape.iter().product();
    ArrayD::from_shape_vec(
        IxDyn(shape),
        (0..n)
            .map(|_| value::<T>(&mut rng, special, wide))
            .collect(),
    )
    .expect("shape")
}

pub fn host_values(dtype: DType, shape: &[usize], seed: u64, special: u32, wide: bool) -> Host {
    match dtype {
        DType::F32 => Host::F32(values(shape, seed, special, wide)),
        DType::F16 => Host::F16(values(shape, seed, special, wide)),
        DType::BF16 => Host::Bf16(values(shape, seed, special, wide)),
        d => panic!("{d}: the cases are of floating dtypes"),
    }
}
