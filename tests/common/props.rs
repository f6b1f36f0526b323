//! The property-test machinery for elementwise operators, shared by `proof_properties`
//! (in-process simulator), `api_mish`, and `npu_smoke` (real CANN): random cases, running
//! one on a stream, and judging it against `ascendcl::reference` with the CANN precision
//! standard. An operator enters through [`Elementwise`] (its inputs, dtypes, reference and
//! launch; `props_mish.rs` has the Mish family), and [`property_suite`] runs it.
//!
//! # What a case is
//! Random input shapes (0–8 dims, 0–64 per dim, at most the suite's output elements):
//! for a broadcasting operator, random suffixes of an output shape with random dims set to
//! 1; else the output's shape. A random dtype combination (inputs', then output's) among
//! those the operator accepts on the SoC, and for each tensor a random *view* of a larger
//! storage: every axis sliced with a start offset and a step (1–3), the axes permuted, and
//! for the inputs of a broadcasting operator optionally an explicit `broadcast_to` the
//! output shape (stride-0 dims). The values come from a seeded generator mixing ordinary
//! values with ±0, subnormals, ±inf, NaN, huge and tiny magnitudes, values near the root of
//! mish' and below the f32 `exp` underflow. The output storage is pre-filled with a
//! sentinel (an in-place operator's: its input), so a write outside the output view is
//! caught too.
//!
//! # How it is judged ([`judge`])
//! Which T: the result is computed in `P = promote(inputs)` and rounded to `P`, then cast
//! to `O`, so its error is that of the coarser of the two: `T = max(T(P), T(O))`. E.g.
//! f16 × f16 → f32 is judged with f16's T (the value was rounded to f16 before it was
//! widened), f32 × f32 → bf16 with bf16's.
//!
//! Every element falls into exactly one region, and every element is asserted something.
//! In the standard region: NaN exactly where the reference has NaN; where the reference is
//! ±inf the same infinity; a finite reference needs a finite result; and
//! `|a − g| / (|g| + 1e-7)` enters MERE/MARE, which must satisfy MERE < T, MARE < 10·T.
//! An operator may name regions of its own ([`Elementwise::region`]) where the vendor's
//! formula inherently cannot meet the standard, each with the rule asserted instead
//! ([`Elementwise::judge_region`]), and may accept the overflow edge
//! ([`Elementwise::OVERFLOW_EDGE`]).
// Each test binary uses a different part of the harness and of its re-exports.
#![allow(dead_code, unused_imports)]

use super::threshold;
use ascendcl::{DType, DeviceTensor, Element, SocFamily, Stream, TensorViewMut};
use half::{bf16, f16};
use ndarray::{ArrayD, ArrayViewD, Dimension, IxDyn};
use proptest::test_runner::{TestCaseError, TestError};
use std::collections::BTreeMap;
use std::sync::Mutex;

use super::cases::host_values;
pub use super::cases::{Case, Rng, X_ROOT, case, combinations, shape, value, values};
use super::typed::Uploaded;
pub(crate) use super::typed::typed;
pub use super::typed::{DevView, Host, Typed};
pub use super::views::{Cut, ViewSpec, view_spec};

/// Where an element is judged: [`Region::STANDARD`], or region `i ≥ 1` of an operator,
/// named by `Elementwise::REGIONS[i − 1]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Region(pub usize);

impl Region {
    pub const STANDARD: Region = Region(0);
}

/// The most regions an operator has, the standard one included.
pub const MAX_REGIONS: usize = 4;
/// The most output elements of a case.
pub const MAX_OUT: usize = 100_000;
/// The element types, in the order of the dtype combinations.
pub const DTYPES: [DType; 3] = [DType::F32, DType::F16, DType::BF16];

/// An elementwise operator under property test.
pub trait Elementwise {
    /// The operator's name in messages.
    const NAME: &'static str;
    /// The C names of the inputs, in order (an in-place operator's one: its `selfRef`).
    const INPUTS: &'static [&'static str];
    /// Per input: ordinary values in [−12, 12] (`true`, the `x`-like inputs) or [−4, 4].
    const WIDE: &'static [bool];
    /// Whether the inputs broadcast against each other; else each has the output's shape.
    const BROADCASTS: bool;
    /// Whether the operator writes into its one input's view (no separate output).
    const IN_PLACE: bool = false;
    /// The names of the operator's own regions, for `Region(1)`, `Region(2)`, ….
    const REGIONS: &'static [&'static str] = &[];
    /// Whether ±MAX of `P` or `O` where the reference is ±inf of the same sign (or the
    /// reverse) is accepted: where the exact value lies just past the overflow threshold
    /// and a last-bit difference of the vendor's formula decides.
    const OVERFLOW_EDGE: bool = false;
    /// The shares of special values (‰) a case draws from, uniformly.
    const SPECIALS: &'static [u32] = &[20, 20, 300];

    /// Whether the operator accepts `dtypes` (the inputs', then the output's) on `soc`.
    fn accepts(soc: SocFamily, dtypes: &[DType]) -> bool;

    /// The region of an element with inputs `x` computed in `p`.
    fn region(p: DType, x: &[f64]) -> Region {
        let _ = (p, x);
        Region::STANDARD
    }

    /// Whether NaN agreement is left to [`Elementwise::judge_region`] for this element.
    fn nan_exempt(region: Region, x: &[f64]) -> bool {
        let _ = (region, x);
        false
    }

    /// The rule of a region other than the standard one: `Err` names the rule broken.
    /// `coarse` is the coarser of the compute and output types.
    fn judge_region(
        region: Region,
        coarse: DType,
        x: &[f64],
        actual: f64,
        expected: f64,
    ) -> Result<(), &'static str> {
        let _ = (region, coarse, x, actual, expected);
        Err("no rule for this region")
    }

    /// The reference result of the logical inputs (each of its own shape), as `O`.
    fn reference<O: Typed>(x: &[Host]) -> ascendcl::Result<ArrayD<O>>;

    /// Queues the operator on `stream`: inputs `x` (none for an in-place operator) into
    /// `out`.
    fn launch<O: Typed>(
        x: Vec<DevView<'_>>,
        out: TensorViewMut<'_, O>,
        stream: &Stream,
    ) -> ascendcl::Result<()>;
}

/// The spacing of `dtype` at magnitude `|v|` (its smallest subnormal at 0).
pub fn ulp(dtype: DType, v: f64) -> f64 {
    let (mant, min_sub) = match dtype {
        DType::F32 => (23, -149),
        DType::F16 => (10, -24),
        DType::BF16 => (7, -133),
        _ => return 1.0,
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
        d => panic!("{d}: the cases are of floating dtypes"),
    }
}

/// The outcome of judging one case.
#[derive(Debug, Clone, Copy, Default)]
pub struct Verdict {
    pub elements: usize,
    /// Elements per region, the standard one first.
    pub regions: [usize; MAX_REGIONS],
    pub nan: usize,
    pub inf: usize,
    /// ±inf against ±MAX (same sign) at the overflow threshold.
    pub overflow_edge: usize,
    pub mere: f64,
    pub mare: f64,
}

/// Judges `actual` against the reference `expected` (both of the output shape), with the
/// inputs `x` (each broadcastable to that shape) computed in `p`; `Err` says which
/// element broke which rule.
pub fn judge<Op: Elementwise, O: Element>(
    p: DType,
    x: &[ArrayViewD<'_, f64>],
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
    let xb = x
        .iter()
        .zip(Op::INPUTS)
        .map(|(v, name)| {
            v.broadcast(shape.clone())
                .ok_or(format!("{name} does not broadcast"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let t = threshold(p).max(threshold(O::DTYPE));
    // The coarser of the compute and output dtypes: the last rounding the result went through.
    let coarse = if threshold(p) > threshold(O::DTYPE) {
        p
    } else {
        O::DTYPE
    };
    let mut v = Verdict::default();
    let (mut sum, mut rel_n) = (0.0f64, 0usize);
    let mut worst = String::new();
    let mut xs = vec![0.0; xb.len()];
    for ((idx, a), e) in actual.indexed_iter().zip(expected.iter()) {
        for (slot, view) in xs.iter_mut().zip(&xb) {
            *slot = view[&idx];
        }
        let (a, e) = (a.to_f64(), e.to_f64());
        v.elements += 1;
        let at = || {
            let inputs: Vec<String> = Op::INPUTS
                .iter()
                .zip(&xs)
                .map(|(n, x)| format!("{n} {x:e}"))
                .collect();
            format!(
                "at {:?}: {} -> {a:e}, reference {e:e}",
                idx.slice(),
                inputs.join(" ")
            )
        };
        let reg = Op::region(p, &xs);
        if a.is_nan() != e.is_nan() && !Op::nan_exempt(reg, &xs) {
            return Err(format!("NaN mismatch {}", at()));
        }
        v.regions[reg.0] += 1;
        if reg != Region::STANDARD {
            Op::judge_region(reg, coarse, &xs, a, e).map_err(|rule| format!("{rule} {}", at()))?;
            continue;
        }
        let at_edge = |r: f64| {
            Op::OVERFLOW_EDGE && (r.abs() == max_finite(p) || r.abs() == max_finite(O::DTYPE))
        };
        if e.is_nan() {
            v.nan += 1;
        } else if e.is_infinite() {
            v.inf += 1;
            if a != e {
                if a.signum() == e.signum() && at_edge(a) {
                    v.overflow_edge += 1;
                } else {
                    return Err(format!("infinity mismatch {}", at()));
                }
            }
        } else if !a.is_finite() {
            if a.signum() == e.signum() && at_edge(e) {
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
    v.mere = if rel_n == 0 { 0.0 } else { sum / rel_n as f64 };
    if v.mere >= t || v.mare >= 10.0 * t {
        return Err(format!(
            "precision standard broken: MERE {:.3e} (T {t:.3e}), MARE {:.3e} (10T {:.3e}) over {rel_n} elements, worst {worst}",
            v.mere,
            v.mare,
            10.0 * t,
        ));
    }
    Ok(v)
}

/// Per-case numbers for the figures.
#[derive(Debug, Clone, Copy, Default)]
pub struct Outcome {
    pub verdict: Verdict,
    pub non_contiguous: usize,
}

fn err(what: &'static str) -> impl Fn(ascendcl::Error) -> String {
    move |e| format!("{what}: {e}")
}

/// Runs one case of `Op` on `stream` and judges it.
pub fn run_case<Op: Elementwise>(stream: &Stream, c: &Case) -> Result<Outcome, String> {
    match c.dtypes.last().expect("an output dtype") {
        DType::F32 => run_typed::<Op, f32>(stream, c),
        DType::F16 => run_typed::<Op, f16>(stream, c),
        DType::BF16 => run_typed::<Op, bf16>(stream, c),
        d => Err(format!("{d}: the cases are of floating dtypes")),
    }
}

fn run_typed<Op: Elementwise, O: Typed>(stream: &Stream, c: &Case) -> Result<Outcome, String> {
    let out_shape = c.out_shape::<Op>();
    let cuts: Vec<_> = c
        .views
        .iter()
        .zip(&c.shapes)
        .map(|(v, s)| v.storage(s))
        .collect();
    let seed = |k: usize| c.seed ^ (0x5555 * k as u64);
    let stores: Vec<Host> = (0..Op::INPUTS.len())
        .map(|k| host_values(c.dtypes[k], &cuts[k].0, seed(k), c.special, Op::WIDE[k]))
        .collect();
    // The inputs as the operator sees them, each of its own (or the broadcast) shape.
    let mut logical = Vec::new();
    for k in 0..stores.len() {
        let (spec, shape, cut) = (&c.views[k], &c.shapes[k], &cuts[k].1);
        logical.push(typed!(Host, &stores[k], |a| {
            let v = spec.host(a, shape, cut);
            let v = if spec.broadcast {
                v.broadcast(IxDyn(&out_shape))
                    .ok_or("host broadcast")?
                    .to_owned()
            } else {
                v.to_owned()
            };
            Typed::host(v)
        }));
    }
    let expected: ArrayD<O> = Op::reference(&logical).map_err(err("reference"))?;

    // The output storage: a sentinel, or the in-place operator's input.
    let (o_spec, o_shape, ocuts, before) = if Op::IN_PLACE {
        let store = values::<O>(&cuts[0].0, seed(0), c.special, Op::WIDE[0]);
        (&c.views[0], &c.shapes[0], cuts[0].1.clone(), store)
    } else {
        let (ob, ocuts) = c.o_view.storage(&out_shape);
        let sentinel = ArrayD::from_shape_fn(IxDyn(&ob), |i| {
            O::from_f32(1000.0 + (i.slice().iter().sum::<usize>() % 7) as f32)
        });
        (&c.o_view, &out_shape, ocuts, sentinel)
    };
    let mut od = DeviceTensor::from_array(stream, &before).map_err(err("upload out"))?;
    // An in-place operator's input is the output tensor.
    let separate = if Op::IN_PLACE {
        &stores[..0]
    } else {
        &stores[..]
    };
    let uploaded: Vec<_> = separate
        .iter()
        .map(|h| {
            typed!(Host, h, |a| DeviceTensor::from_array(stream, a)
                .map(Uploaded::from)
                .map_err(err("upload input")))
        })
        .collect::<Result<_, _>>()?;
    let mut non_contiguous = 0;
    let mut views = Vec::new();
    for (k, t) in uploaded.iter().enumerate() {
        let (spec, name) = (&c.views[k], Op::INPUTS[k]);
        let v = t.view(spec, &cuts[k].1, name, &out_shape)?;
        non_contiguous += usize::from(!typed!(DevView, &v, |v| v.is_contiguous()));
        views.push(v);
    }
    let (o_strides, o_offset) = {
        let ov = o_spec.device(od.view_mut(), &ocuts, "out")?;
        non_contiguous += usize::from(!ov.is_contiguous());
        let layout = (ov.strides().to_vec(), ov.offset());
        Op::launch(views, ov, stream).map_err(|e| format!("{}: {e}", Op::NAME))?;
        layout
    };
    // The result through the output view, and the whole output storage.
    let actual = o_spec
        .device(od.view(), &ocuts, "out")?
        .to_array(stream)
        .map_err(err("download"))?;
    let storage = od
        .to_array::<ndarray::IxDyn>(stream)
        .map_err(err("download storage"))?;
    // Elements outside the view keep their bits.
    let mut touched = vec![false; storage.len()];
    for idx in ndarray::indices(IxDyn(o_shape)) {
        let off = (0..o_shape.len()).fold(o_offset, |off, k| off + idx[k] as i64 * o_strides[k]);
        touched[off as usize] = true;
    }
    for ((i, (a, s)), t) in storage.iter().zip(before.iter()).enumerate().zip(&touched) {
        if !t && a.to_bits_u32() != s.to_bits_u32() {
            return Err(format!(
                "storage element {i} outside the output view was overwritten"
            ));
        }
    }
    let p = c.dtypes[..Op::INPUTS.len()]
        .iter()
        .copied()
        .reduce(|a, b| a.promote(b).unwrap_or(DType::F32))
        .expect("an input");
    let wide: Vec<ArrayD<f64>> = logical.iter().map(Host::to_f64).collect();
    let wide_views: Vec<_> = wide.iter().map(|a| a.view()).collect();
    let verdict = judge::<Op, O>(p, &wide_views, &actual, &expected)?;
    Ok(Outcome {
        verdict,
        non_contiguous,
    })
}

/// Totals over a run, printed as the figures.
#[derive(Debug, Default)]
pub struct Tally {
    /// Cases per dtype combination ("inputs/…/output").
    pub per_dtypes: BTreeMap<String, usize>,
    /// Cases per output dtype, in [`DTYPES`] order.
    pub per_out: [usize; 3],
    pub elements: usize,
    pub regions: [usize; MAX_REGIONS],
    pub nan: usize,
    pub inf: usize,
    pub overflow_edge: usize,
    pub non_contiguous_views: usize,
    pub worst_mere_over_t: f64,
    pub worst_mare_over_t: f64,
}

impl Tally {
    pub fn add<Op: Elementwise>(&mut self, c: &Case, o: &Outcome) {
        let out = *c.dtypes.last().expect("an output dtype");
        let p = c.dtypes[..Op::INPUTS.len()]
            .iter()
            .copied()
            .reduce(|a, b| a.promote(b).unwrap_or(DType::F32))
            .expect("an input");
        let t = threshold(p).max(threshold(out));
        *self.per_dtypes.entry(c.label()).or_default() += 1;
        self.per_out[DTYPES.iter().position(|d| *d == out).expect("a dtype")] += 1;
        self.elements += o.verdict.elements;
        for (total, n) in self.regions.iter_mut().zip(o.verdict.regions) {
            *total += n;
        }
        self.nan += o.verdict.nan;
        self.inf += o.verdict.inf;
        self.overflow_edge += o.verdict.overflow_edge;
        self.non_contiguous_views += o.non_contiguous;
        self.worst_mere_over_t = self.worst_mere_over_t.max(o.verdict.mere / t);
        self.worst_mare_over_t = self.worst_mare_over_t.max(o.verdict.mare / t);
    }

    pub fn cases(&self) -> usize {
        self.per_out.iter().sum()
    }

    pub fn report<Op: Elementwise>(&self, what: &str) -> String {
        let regions: String = Op::REGIONS
            .iter()
            .zip(&self.regions[1..])
            .map(|(name, n)| format!("{n} {name}, "))
            .collect();
        let mut s = format!(
            "{what}: {} cases, {} elements ({regions}{} NaN, {} inf, {} at the overflow edge), {} non-contiguous views, worst MERE/T {:.3}, worst MARE/T {:.3}\n  cases per dtype combination ({}/out):",
            self.cases(),
            self.elements,
            self.nan,
            self.inf,
            self.overflow_edge,
            self.non_contiguous_views,
            self.worst_mere_over_t,
            self.worst_mare_over_t,
            Op::INPUTS.join("/"),
        );
        for (label, n) in &self.per_dtypes {
            s += &format!(" {label}={n}");
        }
        s += &format!(
            "\n  cases per output dtype: FLOAT={} FLOAT16={} BF16={}",
            self.per_out[0], self.per_out[1], self.per_out[2]
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

/// The sizes of a property run.
#[derive(Debug, Clone, Copy)]
pub struct Sizes {
    pub cases: u32,
    /// The most output elements of a case.
    pub max_out: usize,
    /// The most storage elements of a view, if bounded.
    pub max_storage: Option<usize>,
}

/// `sizes.cases` random cases of `Op` over every dtype combination it accepts on
/// `stream`'s SoC, each judged; prints the figures and returns them, or the shrunk
/// failing case.
pub fn property_suite<Op: Elementwise>(
    stream: &Stream,
    soc: &str,
    sizes: Sizes,
    regressions: &'static str,
    what: &str,
) -> Result<Tally, Box<TestError<Case>>> {
    let tally = Mutex::new(Tally::default());
    let mut runner = runner(sizes.cases, regressions);
    let strategy = case::<Op>(combinations::<Op>(soc), sizes.max_out, sizes.max_storage);
    let result = runner.run(&strategy, |c| {
        let outcome = run_case::<Op>(stream, &c).map_err(TestCaseError::fail)?;
        tally.lock().unwrap().add::<Op>(&c, &outcome);
        Ok(())
    });
    let tally = tally.into_inner().unwrap();
    println!("{}", tally.report::<Op>(&format!("{what} on {soc}")));
    result.map_err(Box::new)?;
    Ok(tally)
}
