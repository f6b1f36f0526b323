//! The device's random-number generator and the random operators (`inplace_uniform`,
//! `inplace_normal`, `inplace_bernoulli`, `inplace_bernoulli_tensor`) on the simulator:
//! determinism (a seed replays the same bits, offsets advance by the documented step, one
//! generator per device shared by its handles and threads), the bits against
//! `reference::random` for every dtype and through views, and the distributions (mean,
//! variance, a Kolmogorov–Smirnov test at a fixed significance, Bernoulli frequencies) on
//! 100 000 samples.

mod common;

use ascendcl::reference::random as rr;
use ascendcl::{
    DeviceTensor, Error, InplaceBernoulliPlan, PHILOX_OFFSET_STEP, Philox, inplace_bernoulli,
    inplace_bernoulli_seeded, inplace_bernoulli_tensor, inplace_normal, inplace_normal_seeded,
    inplace_uniform, inplace_uniform_seeded,
};
use half::{bf16, f16};
use ndarray::{Array2, IxDyn};

/// This binary's simulated devices.
const DEVICES: &str = "Ascend910B4,Ascend910A,Ascend310P3";
const A2: i32 = 0;
const A910: i32 = 1;
const P310: i32 = 2;
const N: usize = 100_000;

fn device(id: i32) -> ascendcl::Device {
    common::use_devices(DEVICES);
    common::device(id)
}

fn to_vec<T: ascendcl::Element>(t: &DeviceTensor<T>, s: &ascendcl::Stream) -> Vec<T> {
    t.to_array::<IxDyn>(s).unwrap().iter().copied().collect()
}

/// The Kolmogorov–Smirnov statistic of `sample` against `cdf`.
fn ks_statistic(sample: &[f64], cdf: impl Fn(f64) -> f64) -> f64 {
    let mut v = sample.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len() as f64;
    v.iter().enumerate().fold(0.0f64, |d, (i, &x)| {
        let f = cdf(x);
        d.max((f - i as f64 / n).abs())
            .max(((i + 1) as f64 / n - f).abs())
    })
}

/// The critical value of the one-sample KS test at significance 0.001 (asymptotic:
/// `sqrt(−ln(α/2)/2)/sqrt(n)`).
fn ks_critical(n: usize) -> f64 {
    (-(0.001f64 / 2.0).ln() / 2.0).sqrt() / (n as f64).sqrt()
}

/// The standard normal CDF through the Chebyshev fit of erfc of Numerical Recipes
/// (`erfcc`, fractional error below 1.2e-7: far below the KS tolerance of ~6e-3).
fn normal_cdf(x: f64) -> f64 {
    let z = x / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.5 * z.abs());
    let poly = -z * z - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98
                                + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let erfc = t * poly.exp();
    if z >= 0.0 {
        1.0 - erfc / 2.0
    } else {
        erfc / 2.0
    }
}

fn mean_var(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let m = v.iter().sum::<f64>() / n;
    (
        m,
        v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (n - 1.0),
    )
}

#[test]
fn a_seed_replays_the_same_bits_and_each_call_advances_the_offset_by_the_step() {
    // The tests share the devices' generators: one at a time.
    let _serial = common::serial();
    let dev = device(A2);
    let s = dev.stream().unwrap();
    let mut a = DeviceTensor::<f32>::zeros(&s, [257]).unwrap();
    let mut b = DeviceTensor::<f32>::zeros(&s, [257]).unwrap();
    dev.manual_seed(42);
    assert_eq!(
        dev.generator_state(),
        Philox {
            seed: 42,
            offset: 0
        }
    );
    inplace_uniform(&mut a, -1.0, 1.0, &s).unwrap();
    assert_eq!(dev.generator_state().offset, PHILOX_OFFSET_STEP);
    inplace_uniform(&mut b, -1.0, 1.0, &s).unwrap();
    assert_eq!(dev.generator_state().offset, 2 * PHILOX_OFFSET_STEP);
    let (first, second) = (to_vec(&a, &s), to_vec(&b, &s));
    let same = first.iter().zip(&second).filter(|(x, y)| x == y).count();
    assert!(same < 3, "{same} equal values across two calls");
    // The bits are the documented function of (seed, offset, index).
    let want: Vec<f32> = rr::uniform(42, 0, 257, -1.0, 1.0, false)
        .iter()
        .map(|&v| v as f32)
        .collect();
    assert_eq!(first, want);
    let want: Vec<f32> = rr::uniform(42, PHILOX_OFFSET_STEP, 257, -1.0, 1.0, false)
        .iter()
        .map(|&v| v as f32)
        .collect();
    assert_eq!(second, want);
    // Reseeding replays; a saved state replays from the middle.
    dev.manual_seed(42);
    inplace_uniform(&mut b, -1.0, 1.0, &s).unwrap();
    assert_eq!(to_vec(&b, &s), first);
    dev.set_generator_state(Philox {
        seed: 42,
        offset: PHILOX_OFFSET_STEP,
    });
    inplace_uniform(&mut b, -1.0, 1.0, &s).unwrap();
    assert_eq!(to_vec(&b, &s), second);
    // A different seed: different numbers.
    dev.manual_seed(43);
    inplace_uniform(&mut b, -1.0, 1.0, &s).unwrap();
    assert_ne!(to_vec(&b, &s), first);
}

#[test]
fn a_device_has_one_generator_for_all_its_handles_and_threads() {
    // The tests share the devices' generators: one at a time.
    let _serial = common::serial();
    let one = device(A2);
    let two = device(A2);
    let other = device(A910);
    one.manual_seed(7);
    other.manual_seed(7);
    assert_eq!(two.next_philox(), Philox { seed: 7, offset: 0 });
    assert_eq!(one.generator_state().offset, PHILOX_OFFSET_STEP);
    assert_eq!(
        other.generator_state().offset,
        0,
        "another device's generator moved"
    );
    // Many threads drawing at once each get a pair of their own.
    one.manual_seed(9);
    let threads: Vec<_> = (0..8)
        .map(|_| {
            let d = device(A2);
            std::thread::spawn(move || (0..100).map(|_| d.next_philox().offset).collect::<Vec<_>>())
        })
        .collect();
    let mut offsets: Vec<u64> = threads
        .into_iter()
        .flat_map(|t| t.join().unwrap())
        .collect();
    offsets.sort_unstable();
    let want: Vec<u64> = (0..800).map(|k| k * PHILOX_OFFSET_STEP).collect();
    assert_eq!(offsets, want);
}

#[test]
fn uniform_is_uniform_by_mean_variance_and_kolmogorov_smirnov() {
    // The tests share the devices' generators: one at a time.
    let _serial = common::serial();
    let s = device(A2).stream().unwrap();
    let mut x = DeviceTensor::<f32>::zeros(&s, [N]).unwrap();
    let (from, to) = (-3.0, 5.0);
    inplace_uniform_seeded(&mut x, from, to, 2024, 0, &s).unwrap();
    let v: Vec<f64> = to_vec(&x, &s).iter().map(|&v| f64::from(v)).collect();
    assert!(v.iter().all(|&x| (from..to).contains(&x)));
    let (m, var) = mean_var(&v);
    let (m0, var0) = ((from + to) / 2.0, (to - from) * (to - from) / 12.0);
    // Five standard errors of the mean and of the variance (uniform: var(x²)-based).
    assert!((m - m0).abs() < 5.0 * (var0 / N as f64).sqrt(), "mean {m}");
    assert!(
        (var - var0).abs() < 5.0 * var0 * (0.8 / N as f64).sqrt(),
        "variance {var}"
    );
    let d = ks_statistic(&v, |x| ((x - from) / (to - from)).clamp(0.0, 1.0));
    assert!(d < ks_critical(N), "KS statistic {d}");
    // The same test rejects a skewed sample: the statistic is sensitive.
    let skewed: Vec<f64> = v.iter().map(|&x| from + (x - from).powf(1.05)).collect();
    assert!(ks_statistic(&skewed, |x| ((x - from) / (to - from)).clamp(0.0, 1.0)) > ks_critical(N));
}

#[test]
fn normal_is_normal_by_mean_variance_and_kolmogorov_smirnov() {
    // The tests share the devices' generators: one at a time.
    let _serial = common::serial();
    let s = device(A2).stream().unwrap();
    let mut x = DeviceTensor::<f32>::zeros(&s, [N]).unwrap();
    let (mean, std) = (1.5f32, 0.25f32);
    inplace_normal_seeded(&mut x, mean, std, 77, 12, &s).unwrap();
    let v: Vec<f64> = to_vec(&x, &s).iter().map(|&v| f64::from(v)).collect();
    let want: Vec<f64> = rr::normal(77, 12, N, mean, std)
        .iter()
        .map(|&v| f64::from(v as f32))
        .collect();
    assert_eq!(v, want);
    let (m, var) = mean_var(&v);
    let var0 = f64::from(std * std);
    assert!(
        (m - f64::from(mean)).abs() < 5.0 * (var0 / N as f64).sqrt(),
        "mean {m}"
    );
    assert!(
        (var - var0).abs() < 5.0 * var0 * (2.0 / N as f64).sqrt(),
        "variance {var}"
    );
    let cdf = |x: f64| normal_cdf((x - f64::from(mean)) / f64::from(std));
    let d = ks_statistic(&v, cdf);
    assert!(d < ks_critical(N), "KS statistic {d}");
    // A shifted sample fails the same test.
    let shifted: Vec<f64> = v.iter().map(|x| x + 0.01).collect();
    assert!(ks_statistic(&shifted, cdf) > ks_critical(N));
    // std 0: every value is the mean.
    inplace_normal_seeded(&mut x, 4.0, 0.0, 1, 0, &s).unwrap();
    assert!(to_vec(&x, &s).iter().all(|&v| v == 4.0));
}

#[test]
fn bernoulli_frequencies_match_p_and_the_extremes_are_exact() {
    // The tests share the devices' generators: one at a time.
    let _serial = common::serial();
    let s = device(A2).stream().unwrap();
    let mut x = DeviceTensor::<f32>::zeros(&s, [N]).unwrap();
    for p in [0.1, 0.3, 0.5, 0.97] {
        inplace_bernoulli_seeded(&mut x, p, 5, 100, &s).unwrap();
        let v = to_vec(&x, &s);
        assert!(v.iter().all(|&b| b == 0.0 || b == 1.0));
        let freq = v.iter().filter(|&&b| b == 1.0).count() as f64 / N as f64;
        assert!(
            (freq - p).abs() < 5.0 * (p * (1.0 - p) / N as f64).sqrt(),
            "p {p}: {freq}"
        );
        let want: Vec<f32> = rr::bernoulli(5, 100, &vec![p; N])
            .iter()
            .map(|&b| b as f32)
            .collect();
        assert_eq!(v, want);
    }
    inplace_bernoulli(&mut x, 0.0, &s).unwrap();
    assert!(to_vec(&x, &s).iter().all(|&b| b == 0.0));
    inplace_bernoulli(&mut x, 1.0, &s).unwrap();
    assert!(to_vec(&x, &s).iter().all(|&b| b == 1.0));
}

#[test]
fn a_probability_tensor_broadcasts_per_element() {
    // The tests share the devices' generators: one at a time.
    let _serial = common::serial();
    let dev = device(A2);
    let s = dev.stream().unwrap();
    let p = DeviceTensor::from_array(&s, &ndarray::array![[0.0f32, 0.5, 1.0]]).unwrap();
    let mut x = DeviceTensor::<f64>::zeros(&s, [2000, 3]).unwrap();
    dev.manual_seed(3);
    inplace_bernoulli_tensor(&mut x, &p, &s).unwrap();
    let got = x.to_array::<ndarray::Ix2>(&s).unwrap();
    assert!(got.column(0).iter().all(|&v| v == 0.0));
    assert!(got.column(2).iter().all(|&v| v == 1.0));
    let half = got.column(1).sum() / 2000.0;
    assert!((half - 0.5).abs() < 5.0 * (0.25f64 / 2000.0).sqrt());
    let flat: Vec<f64> = (0..6000).map(|i| [0.0, 0.5, 1.0][i % 3]).collect();
    assert_eq!(
        got.iter().copied().collect::<Vec<_>>(),
        rr::bernoulli(3, 0, &flat)
    );
    // A probability that does not broadcast is refused before any C call.
    let q = DeviceTensor::<f32>::zeros(&s, [2]).unwrap();
    let e = inplace_bernoulli_tensor(&mut x, &q, &s).unwrap_err();
    assert!(matches!(e, Error::NotBroadcastable { .. }), "{e}");
}

#[test]
fn every_dtype_receives_the_reference_values_rounded_to_it() {
    // The tests share the devices' generators: one at a time.
    let _serial = common::serial();
    let s = device(A2).stream().unwrap();
    let n = 999;
    let wide = rr::uniform(11, 4, n, -2.0, 2.0, true);
    let narrow = rr::uniform(11, 4, n, -2.0, 2.0, false);
    let mut d = DeviceTensor::<f64>::zeros(&s, [n]).unwrap();
    inplace_uniform_seeded(&mut d, -2.0, 2.0, 11, 4, &s).unwrap();
    assert_eq!(to_vec(&d, &s), wide);
    let mut h = DeviceTensor::<f16>::zeros(&s, [n]).unwrap();
    inplace_uniform_seeded(&mut h, -2.0, 2.0, 11, 4, &s).unwrap();
    assert_eq!(
        to_vec(&h, &s),
        narrow.iter().map(|&v| f16::from_f64(v)).collect::<Vec<_>>()
    );
    let mut b = DeviceTensor::<bf16>::zeros(&s, [n]).unwrap();
    inplace_uniform_seeded(&mut b, -2.0, 2.0, 11, 4, &s).unwrap();
    assert_eq!(
        to_vec(&b, &s),
        narrow
            .iter()
            .map(|&v| bf16::from_f64(v))
            .collect::<Vec<_>>()
    );
    // Integers: the values truncated, inside [from, to].
    let mut i = DeviceTensor::<i32>::zeros(&s, [n]).unwrap();
    inplace_uniform_seeded(&mut i, -20.0, 20.0, 11, 4, &s).unwrap();
    let got = to_vec(&i, &s);
    assert!(got.iter().all(|v| (-20..=20).contains(v)));
    let want = rr::uniform(11, 4, n, -20.0, 20.0, false);
    assert_eq!(
        got,
        want.iter().map(|&v| v.trunc() as i32).collect::<Vec<_>>()
    );
    let mut u = DeviceTensor::<u8>::zeros(&s, [n]).unwrap();
    inplace_uniform_seeded(&mut u, 0.0, 200.0, 11, 4, &s).unwrap();
    assert!(to_vec(&u, &s).iter().any(|&v| v > 100));
    for p in [
        Box::new(|s: &ascendcl::Stream| {
            let mut t = DeviceTensor::<i64>::zeros(s, [64]).unwrap();
            inplace_normal(&mut t, 0.0, 100.0, s).unwrap();
            to_vec(&t, s).iter().any(|&v| v != 0)
        }) as Box<dyn Fn(&ascendcl::Stream) -> bool>,
        Box::new(|s| {
            let mut t = DeviceTensor::<bool>::zeros(s, [64]).unwrap();
            inplace_bernoulli(&mut t, 0.5, s).unwrap();
            to_vec(&t, s).iter().any(|&v| v)
        }),
        Box::new(|s| {
            let mut t = DeviceTensor::<i8>::zeros(s, [64]).unwrap();
            inplace_bernoulli(&mut t, 0.5, s).unwrap();
            to_vec(&t, s).iter().all(|&v| v == 0 || v == 1)
        }),
    ] {
        assert!(p(&s));
    }
    // 0-D and empty.
    let mut z = DeviceTensor::<f32>::zeros(&s, [0usize; 0]).unwrap();
    inplace_uniform_seeded(&mut z, 3.0, 3.0, 1, 1, &s).unwrap();
    assert_eq!(to_vec(&z, &s), [3.0]);
    let mut e = DeviceTensor::<f32>::zeros(&s, [4, 0]).unwrap();
    inplace_normal(&mut e, 0.0, 1.0, &s).unwrap();
}

#[test]
fn a_view_is_filled_in_its_own_row_major_order_and_nothing_else_is_written() {
    // The tests share the devices' generators: one at a time.
    let _serial = common::serial();
    let s = device(A2).stream().unwrap();
    let mut x = DeviceTensor::from_array(&s, &Array2::<f32>::from_elem((6, 5), -9.0)).unwrap();
    {
        // Columns 1 and 3, every other row, transposed: a [2, 3] view.
        let view = x
            .view_mut()
            .slice(0, 0, 6, 2)
            .unwrap()
            .slice(1, 1, 5, 2)
            .unwrap()
            .t();
        inplace_uniform_seeded(view, 0.0, 1.0, 8, 0, &s).unwrap();
    }
    let got = x.to_array::<ndarray::Ix2>(&s).unwrap();
    let want = rr::uniform(8, 0, 6, 0.0, 1.0, false);
    for r in 0..6 {
        for c in 0..5 {
            let v = got[[r, c]];
            if r % 2 == 0 && c % 2 == 1 {
                // View element (c', r') = ((c - 1) / 2, r / 2), row-major over [2, 3].
                let i = (c - 1) / 2 * 3 + r / 2;
                assert_eq!(v, want[i] as f32, "({r}, {c})");
            } else {
                assert_eq!(v, -9.0, "({r}, {c}) outside the view was written");
            }
        }
    }
}

#[test]
fn invalid_calls_are_refused_in_rust_with_typed_errors() {
    // The tests share the devices' generators: one at a time.
    let _serial = common::serial();
    let s = device(A2).stream().unwrap();
    let mut x = DeviceTensor::<f32>::zeros(&s, [4]).unwrap();
    let e = inplace_uniform(&mut x, 2.0, 1.0, &s).unwrap_err();
    assert!(
        matches!(e, Error::InvalidArgument(ref m) if m.contains("from")),
        "{e}"
    );
    let e = inplace_normal(&mut x, 0.0, -1.0, &s).unwrap_err();
    assert!(
        matches!(e, Error::InvalidArgument(ref m) if m.contains("std")),
        "{e}"
    );
    for p in [-0.1, 1.5, f64::NAN] {
        let e = inplace_bernoulli(&mut x, p, &s).unwrap_err();
        assert!(matches!(e, Error::InvalidArgument(_)), "{p}: {e}");
    }
    let e = inplace_bernoulli_seeded(&mut x, 1i64, 0, 0, &s).unwrap_err();
    assert!(matches!(e, Error::InvalidArgument(_)), "{e}");
    // Products and dtypes.
    let s910 = device(A910).stream().unwrap();
    let mut b = DeviceTensor::<bf16>::zeros(&s910, [4]).unwrap();
    let e = inplace_uniform(&mut b, 0.0, 1.0, &s910).unwrap_err();
    assert!(matches!(e, Error::UnsupportedDtype { .. }), "{e}");
    let s310 = device(P310).stream().unwrap();
    let mut y = DeviceTensor::<f32>::zeros(&s310, [4]).unwrap();
    let e = inplace_normal(&mut y, 0.0, 1.0, &s310).unwrap_err();
    assert!(matches!(e, Error::UnsupportedOperator { .. }), "{e}");
    let e = inplace_bernoulli(&mut y, 0.5, &s310).unwrap_err();
    assert!(matches!(e, Error::UnsupportedOperator { .. }), "{e}");
    inplace_uniform(&mut y, 0.0, 1.0, &s310).unwrap();
}

#[test]
fn a_bernoulli_plan_draws_its_fixed_mask_at_every_launch() {
    // The tests share the devices' generators: one at a time.
    let _serial = common::serial();
    let s = device(A2).stream().unwrap();
    let mut x = DeviceTensor::<f32>::zeros(&s, [300]).unwrap();
    let mut plan = InplaceBernoulliPlan::<f32>::new(&x, 0.5, 17, 24, &s).unwrap();
    plan.launch(&mut x, &s).unwrap();
    let first = to_vec(&x, &s);
    inplace_uniform(&mut x, 5.0, 6.0, &s).unwrap();
    plan.launch(&mut x, &s).unwrap();
    assert_eq!(to_vec(&x, &s), first);
    let want: Vec<f32> = rr::bernoulli(17, 24, &[0.5; 300])
        .iter()
        .map(|&b| b as f32)
        .collect();
    assert_eq!(first, want);
}
