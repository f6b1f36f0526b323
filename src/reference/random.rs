//! The simulator's random numbers, computed on the CPU: what `aclnnInplaceUniform`,
//! `aclnnInplaceNormal` and `aclnnInplaceBernoulli(Tensor)` write on the simulator for a
//! `(seed, offset)`, element by element in row-major order of the view. A real device
//! draws other numbers (its generators are product-specific); only the distributions
//! agree.
//!
//! Element `i` is drawn from Philox4x32-10 ([`philox`]) with key `(seed mod 2^32,
//! seed / 2^32)` and counter `(j mod 2^32, j / 2^32, offset mod 2^32, offset / 2^32)`: a
//! different offset is a different stream (not a shifted one), so calls whose offsets
//! differ never share numbers.
//! * uniform: `j = i / 4`, `u = (word[i mod 4] >> 8) / 2^24` in [0, 1); for `f64`
//!   elements `j = i / 2` and `u` is the top 53 bits of the 64-bit word pair
//!   `2(i mod 2)` (low), `2(i mod 2) + 1` (high) over 2^53. The value is `from + u·(to −
//!   from)`, in f64, rounded once to the element type.
//! * normal: `j = i / 2`, `u1 = (word[2(i mod 2)] + 1) / 2^32`, `u2 = word[2(i mod 2) +
//!   1] / 2^32`, the value `mean + std·sqrt(−2 ln u1)·cos(2π u2)` in f64 (mean and std
//!   as the `f32` the operator receives).
//! * Bernoulli: `j = i / 4`, `u = word[i mod 4] / 2^32`, the value 1 if `u < p` else 0.

/// Philox4x32-10: ten rounds of the Philox bijection on `counter` under `key` (Salmon,
/// Moraes, Dror, Shaw, SC 2011).
///
/// ```
/// use ascendcl::reference::random::philox;
/// assert_eq!(philox([0; 4], [0; 2]), [0x6627_e8d5, 0xe169_c58d, 0xbc57_ac4c, 0x9b00_dbd8]);
/// ```
pub fn philox(counter: [u32; 4], key: [u32; 2]) -> [u32; 4] {
    let mul_hi_lo = |a: u32, b: u32| {
        let p = u64::from(a) * u64::from(b);
        ((p >> 32) as u32, p as u32)
    };
    let (mut c, mut k) = (counter, key);
    for round in 0..10 {
        if round != 0 {
            k[0] = k[0].wrapping_add(0x9E37_79B9);
            k[1] = k[1].wrapping_add(0xBB67_AE85);
        }
        let (hi0, lo0) = mul_hi_lo(0xD251_1F53, c[0]);
        let (hi1, lo1) = mul_hi_lo(0xCD9E_8D57, c[2]);
        c = [hi1 ^ c[1] ^ k[0], lo1, hi0 ^ c[3] ^ k[1], lo0];
    }
    c
}

/// The four words of counter block `j` of the stream `(seed, offset)`.
pub fn block(seed: u64, offset: u64, j: u64) -> [u32; 4] {
    let lo = |v: u64| v as u32;
    let hi = |v: u64| (v >> 32) as u32;
    philox([lo(j), hi(j), lo(offset), hi(offset)], [lo(seed), hi(seed)])
}

/// The `n` uniform numbers in `[0, 1)` of a fill, for 53-bit (`f64`) elements when
/// `wide`, else for 24-bit ones.
pub fn uniform_units(seed: u64, offset: u64, n: usize, wide: bool) -> Vec<f64> {
    (0..n as u64)
        .map(|i| {
            if wide {
                let b = block(seed, offset, i / 2);
                let k = (2 * (i % 2)) as usize;
                let v = (u64::from(b[k + 1]) << 32) | u64::from(b[k]);
                (v >> 11) as f64 / 9_007_199_254_740_992.0
            } else {
                let w = block(seed, offset, i / 4)[(i % 4) as usize];
                f64::from(w >> 8) / 16_777_216.0
            }
        })
        .collect()
}

/// The `n` values of `aclnnInplaceUniform(from, to)` in f64, before the rounding to the
/// element type.
pub fn uniform(seed: u64, offset: u64, n: usize, from: f64, to: f64, wide: bool) -> Vec<f64> {
    uniform_units(seed, offset, n, wide)
        .into_iter()
        .map(|u| from + u * (to - from))
        .collect()
}

/// The `n` values of `aclnnInplaceNormal(mean, std)` in f64, before the rounding to the
/// element type.
pub fn normal(seed: u64, offset: u64, n: usize, mean: f32, std: f32) -> Vec<f64> {
    (0..n as u64)
        .map(|i| {
            let b = block(seed, offset, i / 2);
            let k = (2 * (i % 2)) as usize;
            let u1 = (f64::from(b[k]) + 1.0) / 4_294_967_296.0;
            let u2 = f64::from(b[k + 1]) / 4_294_967_296.0;
            let z = (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos();
            f64::from(mean) + f64::from(std) * z
        })
        .collect()
}

/// The values of `aclnnInplaceBernoulli` for one probability per element (`p`, already
/// broadcast to the view's shape, row-major): 1 or 0.
pub fn bernoulli(seed: u64, offset: u64, p: &[f64]) -> Vec<f64> {
    p.iter()
        .zip(0u64..)
        .map(|(&q, i)| {
            let w = block(seed, offset, i / 4)[(i % 4) as usize];
            if f64::from(w) / 4_294_967_296.0 < q {
                1.0
            } else {
                0.0
            }
        })
        .collect()
}
