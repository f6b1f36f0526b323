//! `aclnnInplaceUniform`, `aclnnInplaceNormal`, `aclnnInplaceBernoulli` and
//! `aclnnInplaceBernoulliTensor` (ops-math `random/dsa_random_uniform`,
//! `random/dsa_random_normal`, `random/dsa_gen_bit_mask`): selfRef filled in place with
//! random numbers drawn from the caller's `(seed, offset)`.
//!
//! Phase-1 checks in the vendor's order (161001 NULL, 161002 invalid):
//! * Uniform: selfRef NULL; BF16 off Atlas A2 / A3, then selfRef's dtype outside FLOAT,
//!   INT32, INT64, FLOAT16, INT16, INT8, UINT8, DOUBLE, BF16; above 8 dims; `from > to`
//!   (`from == to` is allowed); an empty selfRef: success, workspace 0.
//! * Normal: selfRef NULL; `std < 0`; BF16 off Atlas A2 / A3, then the dtype outside
//!   FLOAT16, FLOAT, DOUBLE, INT16, INT32, INT64, INT8, UINT8, BOOL, BF16; above 8 dims;
//!   empty: success.
//! * Bernoulli: selfRef, then prob NULL; selfRef's dtype outside the SoC's list (training
//!   series: FLOAT, INT32, INT64, FLOAT16, INT16, INT8, UINT8, DOUBLE, BOOL; Atlas A2 / A3
//!   add BF16; **every other product has an empty list**, so everything is refused), then
//!   prob's dtype outside FLOAT, FLOAT16, DOUBLE (+ BF16 on A2 / A3); prob's value outside
//!   [0, 1]; above 8 dims; a private storage format; empty: success.
//! * BernoulliTensor: as Bernoulli with a prob tensor, its value not checked; both above
//!   8 dims; either in a private format; self or prob empty: success.
//!
//! `workspaceSize` and `executor` NULL are refused (161001) before the tensors.
//!
//! # The numbers
//!
//! The vendor's streams are product-dependent (hardware generators on A2 / A3, Philox
//! elsewhere); the simulator's are one documented function of `(seed, offset, element
//! index)`, so results never depend on threads or on how the work is split. Element `i`
//! of selfRef's view, in row-major order, is drawn from Philox4x32-10 ([`philox`]) with
//! key `(seed mod 2^32, seed / 2^32)` and counter `(j mod 2^32, j / 2^32, offset mod 2^32,
//! offset / 2^32)`:
//! * uniform, every dtype but DOUBLE: `j = i / 4`, word `w = i mod 4`, `u = (w >> 8) /
//!   2^24` in [0, 1); DOUBLE: `j = i / 2`, words `2(i mod 2)` (low) and `2(i mod 2) + 1`
//!   (high) as a 64-bit `v`, `u = (v >> 11) / 2^53`. The value is `from + u·(to − from)`
//!   in double, then cast to the dtype (rounded to nearest, so a FLOAT16 value may round
//!   up to `to`; integers are truncated toward zero by the cast);
//! * normal: `j = i / 2`, `a` and `b` words `2(i mod 2)` and `2(i mod 2) + 1`, `u1 = (a +
//!   1) / 2^32` in (0, 1], `u2 = b / 2^32`, `z = sqrt(−2 ln u1)·cos(2π u2)` (Box–Muller),
//!   the value `mean + std·z` in double, cast to the dtype;
//! * Bernoulli: `j = i / 4`, word `i mod 4` over 2^32 as `u` in [0, 1), the value 1 when
//!   `u < p` else 0 (`p` the prob scalar, or prob broadcast to selfRef's shape).
//!
//! A prob tensor that does not broadcast to selfRef's shape, or holds a value outside
//! [0, 1] or NaN, fails the kernel with a message naming the element: CANN leaves both
//! undefined.

use super::MAX_DIMS;
use super::entry_pair::entry_pair;
use crate::nnopbase::{
    Arg, Attr, Decision, KernelCall, OpDef, OutParams, Phase1, invalid, op_def, positions,
};
use crate::stream::Scratch;
use crate::tables::{Family, dtype_name};
use ascend_sys::*;

positions!(SELF, PROB);
// Attributes: the two parameters of the distribution, then seed and offset.
positions!(P0, P1, SEED, OFFSET);

pub(crate) static UNIFORM: OpDef =
    op_def!("InplaceUniform", ["selfRef"], [SELF] -> [SELF], uniform);
pub(crate) static NORMAL: OpDef = op_def!("InplaceNormal", ["selfRef"], [SELF] -> [SELF], normal);
pub(crate) static BERNOULLI: OpDef =
    op_def!("InplaceBernoulli", ["selfRef"], [SELF] -> [SELF], bernoulli);
pub(crate) static BERNOULLI_TENSOR: OpDef = op_def!(
    "InplaceBernoulliTensor",
    ["selfRef", "prob"],
    [SELF, PROB] -> [SELF],
    bernoulli
);

entry_pair!(uniform_entries: "aclnnInplaceUniformGetWorkspaceSize"(
    self_ref: *const aclTensor, from: f64, to: f64, seed: u64, offset: u64,
) => uniform_checks; "aclnnInplaceUniform" => super::UNIFORM);
entry_pair!(normal_entries: "aclnnInplaceNormalGetWorkspaceSize"(
    self_ref: *const aclTensor, mean: f32, std: f32, seed: i64, offset: i64,
) => normal_checks; "aclnnInplaceNormal" => super::NORMAL);
entry_pair!(bernoulli_entries: "aclnnInplaceBernoulliGetWorkspaceSize"(
    self_ref: *const aclTensor, prob: *const aclScalar, seed: i64, offset: i64,
) => bernoulli_checks; "aclnnInplaceBernoulli" => super::BERNOULLI);
entry_pair!(bernoulli_tensor_entries: "aclnnInplaceBernoulliTensorGetWorkspaceSize"(
    self_ref: *const aclTensor, prob: *const aclTensor, seed: i64, offset: i64,
) => bernoulli_tensor_checks; "aclnnInplaceBernoulliTensor" => super::BERNOULLI_TENSOR);

const UNIFORM_DTYPES: &[aclDataType] = &[
    ACL_FLOAT,
    ACL_INT32,
    ACL_INT64,
    ACL_FLOAT16,
    ACL_INT16,
    ACL_INT8,
    ACL_UINT8,
    ACL_DOUBLE,
    ACL_BF16,
];

const NORMAL_DTYPES: &[aclDataType] = &[
    ACL_FLOAT16,
    ACL_FLOAT,
    ACL_DOUBLE,
    ACL_INT16,
    ACL_INT32,
    ACL_INT64,
    ACL_INT8,
    ACL_UINT8,
    ACL_BOOL,
    ACL_BF16,
];

/// Bernoulli's self dtypes by product: empty off the training series and A2 / A3.
fn bernoulli_dtypes(family: Family) -> &'static [aclDataType] {
    const LIST: &[aclDataType] = &[
        ACL_FLOAT,
        ACL_INT32,
        ACL_INT64,
        ACL_FLOAT16,
        ACL_INT16,
        ACL_INT8,
        ACL_UINT8,
        ACL_DOUBLE,
        ACL_BOOL,
        ACL_BF16,
    ];
    match family {
        Family::A2 | Family::A3 => LIST,
        Family::Training => &LIST[..LIST.len() - 1],
        Family::Inference310P | Family::Atlas310B => &[],
    }
}

/// Bernoulli's prob dtypes by product.
fn prob_dtypes(family: Family) -> &'static [aclDataType] {
    const LIST: &[aclDataType] = &[ACL_FLOAT, ACL_FLOAT16, ACL_DOUBLE, ACL_BF16];
    match family {
        Family::A2 | Family::A3 => LIST,
        Family::Training => &LIST[..LIST.len() - 1],
        Family::Inference310P | Family::Atlas310B => &[],
    }
}

/// Fails with 161002 for BF16 off Atlas A2 / A3 (the vendor tests it before its list).
fn refuse_bf16(p: &Phase1<'_>) -> Result<(), i32> {
    if p.desc(SELF).dtype == ACL_BF16 && !p.family.has_bf16() {
        return Err(invalid(format!(
            "selfRef dtype BFLOAT16 is not supported on {}",
            p.soc
        )));
    }
    Ok(())
}

/// Whether `format` is a private storage format (anything but the plain layouts).
pub(super) fn is_private_format(format: aclFormat) -> bool {
    !matches!(
        format,
        ACL_FORMAT_UNDEFINED
            | ACL_FORMAT_ND
            | ACL_FORMAT_NCHW
            | ACL_FORMAT_NHWC
            | ACL_FORMAT_HWCN
            | ACL_FORMAT_NDHWC
            | ACL_FORMAT_NCDHW
            | ACL_FORMAT_NC
            | ACL_FORMAT_NCL
    )
}

/// Fails with 161002 when one of `args` has a private storage format.
pub(super) fn refuse_private_formats(p: &Phase1<'_>, args: &[usize]) -> Result<(), i32> {
    for &a in args {
        let f = p.desc(a).format;
        if is_private_format(f) {
            return Err(invalid(format!(
                "{} format {f} is private: only ND, NCHW, NHWC, HWCN, NDHWC, NCDHW are supported",
                p.op().args[a]
            )));
        }
    }
    Ok(())
}

/// The decision of a fill of selfRef with four attributes.
fn fill_decision(p: &Phase1<'_>, attrs: [Attr; 4]) -> Decision {
    let d = p.desc(SELF);
    let mut decision = Decision::new(d.dtype, &d.dims, d.is_empty());
    decision.attrs = attrs;
    decision
}

fn uniform_checks(
    self_ref: *const aclTensor,
    from: f64,
    to: f64,
    seed: u64,
    offset: u64,
    outs: OutParams<'_>,
) -> aclnnStatus {
    UNIFORM.phase1(outs, &[Arg::Tensor(self_ref)], |p| {
        refuse_bf16(&p)?;
        p.require_dtype(SELF, UNIFORM_DTYPES)?;
        p.require_max_dims(SELF, MAX_DIMS)?;
        if from > to {
            return Err(invalid(format!(
                "from {from} should be less than or equal to to {to}"
            )));
        }
        let attrs = [
            Attr::Float(from),
            Attr::Float(to),
            Attr::Int(seed as i64),
            Attr::Int(offset as i64),
        ];
        let decision = fill_decision(&p, attrs);
        p.finish(decision)
    })
}

fn normal_checks(
    self_ref: *const aclTensor,
    mean: f32,
    std: f32,
    seed: i64,
    offset: i64,
    outs: OutParams<'_>,
) -> aclnnStatus {
    NORMAL.phase1(outs, &[Arg::Tensor(self_ref)], |p| {
        if std < 0.0 {
            return Err(invalid(format!("std {std} should be non-negative")));
        }
        refuse_bf16(&p)?;
        p.require_dtype(SELF, NORMAL_DTYPES)?;
        p.require_max_dims(SELF, MAX_DIMS)?;
        let attrs = [
            Attr::Float(f64::from(mean)),
            Attr::Float(f64::from(std)),
            Attr::Int(seed),
            Attr::Int(offset),
        ];
        let decision = fill_decision(&p, attrs);
        p.finish(decision)
    })
}

fn bernoulli_checks(
    self_ref: *const aclTensor,
    prob: *const aclScalar,
    seed: i64,
    offset: i64,
    outs: OutParams<'_>,
) -> aclnnStatus {
    let args = [Arg::Tensor(self_ref), Arg::object(prob, "prob")];
    BERNOULLI.phase1(outs, &args, |p| {
        p.require_dtype(SELF, bernoulli_dtypes(p.family))?;
        let s = p.scalar(prob, "prob")?;
        if !prob_dtypes(p.family).contains(&s.dtype) {
            return Err(invalid(format!(
                "prob dtype {} is not supported on {}",
                dtype_name(s.dtype),
                p.soc
            )));
        }
        let v = s.to_f64();
        if !(0.0..=1.0).contains(&v) {
            return Err(invalid(format!(
                "prob should be in range 0<=prob<=1, got {v}"
            )));
        }
        p.require_max_dims(SELF, MAX_DIMS)?;
        refuse_private_formats(&p, &[SELF])?;
        let attrs = [
            Attr::Float(v),
            Attr::None,
            Attr::Int(seed),
            Attr::Int(offset),
        ];
        let decision = fill_decision(&p, attrs);
        p.finish(decision)
    })
}

fn bernoulli_tensor_checks(
    self_ref: *const aclTensor,
    prob: *const aclTensor,
    seed: i64,
    offset: i64,
    outs: OutParams<'_>,
) -> aclnnStatus {
    let args = [Arg::Tensor(self_ref), Arg::Tensor(prob)];
    BERNOULLI_TENSOR.phase1(outs, &args, |p| {
        p.require_dtype(SELF, bernoulli_dtypes(p.family))?;
        p.require_dtype(PROB, prob_dtypes(p.family))?;
        p.require_max_dims(SELF, MAX_DIMS)?;
        p.require_max_dims(PROB, MAX_DIMS)?;
        refuse_private_formats(&p, &[SELF, PROB])?;
        let attrs = [Attr::None, Attr::None, Attr::Int(seed), Attr::Int(offset)];
        let mut decision = fill_decision(&p, attrs);
        decision.empty |= p.desc(PROB).is_empty();
        p.finish(decision)
    })
}

/// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", 2011):
/// ten rounds on a 128-bit counter under a 64-bit key.
pub fn philox(counter: [u32; 4], key: [u32; 2]) -> [u32; 4] {
    const M0: u64 = 0xD251_1F53;
    const M1: u64 = 0xCD9E_8D57;
    const W0: u32 = 0x9E37_79B9;
    const W1: u32 = 0xBB67_AE85;
    let (mut c, mut k) = (counter, key);
    for round in 0..10 {
        if round > 0 {
            k = [k[0].wrapping_add(W0), k[1].wrapping_add(W1)];
        }
        let p0 = M0 * u64::from(c[0]);
        let p1 = M1 * u64::from(c[2]);
        c = [
            (p1 >> 32) as u32 ^ c[1] ^ k[0],
            p1 as u32,
            (p0 >> 32) as u32 ^ c[3] ^ k[1],
            p0 as u32,
        ];
    }
    c
}

/// Block `j` of the stream of `(seed, offset)`.
pub fn block(seed: u64, offset: u64, j: u64) -> [u32; 4] {
    let counter = [
        j as u32,
        (j >> 32) as u32,
        offset as u32,
        (offset >> 32) as u32,
    ];
    philox(counter, [seed as u32, (seed >> 32) as u32])
}

/// The uniform number in [0, 1) of element `i` for a dtype (`wide`: DOUBLE).
pub fn uniform_unit(seed: u64, offset: u64, i: u64, wide: bool) -> f64 {
    if wide {
        let b = block(seed, offset, i / 2);
        let k = 2 * (i % 2) as usize;
        let v = u64::from(b[k]) | (u64::from(b[k + 1]) << 32);
        (v >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    } else {
        let w = block(seed, offset, i / 4)[(i % 4) as usize];
        f64::from(w >> 8) * (1.0 / f64::from(1u32 << 24))
    }
}

/// The standard normal number of element `i`.
pub fn standard_normal(seed: u64, offset: u64, i: u64) -> f64 {
    let b = block(seed, offset, i / 2);
    let k = 2 * (i % 2) as usize;
    let scale = 1.0 / 4_294_967_296.0;
    let u1 = (f64::from(b[k]) + 1.0) * scale;
    let u2 = f64::from(b[k + 1]) * scale;
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// The Bernoulli draw's uniform number in [0, 1) of element `i`.
pub fn bernoulli_unit(seed: u64, offset: u64, i: u64) -> f64 {
    let w = block(seed, offset, i / 4)[(i % 4) as usize];
    f64::from(w) * (1.0 / 4_294_967_296.0)
}

/// Seed and offset of a decision, as the generator's unsigned words.
fn seed_offset(call: &KernelCall) -> (u64, u64) {
    let d = call.decision();
    (d.attr_i64(SEED) as u64, d.attr_i64(OFFSET) as u64)
}

fn uniform(call: &KernelCall, scratch: &mut Scratch) -> Result<(), String> {
    let (seed, offset) = seed_offset(call);
    let d = call.decision();
    let (from, to) = (d.attr_f64(P0), d.attr_f64(P1));
    let wide = call.dtype(SELF)? == ACL_DOUBLE;
    let [v] = scratch.wide::<1>(d.numel());
    for (i, x) in v.iter_mut().enumerate() {
        *x = from + uniform_unit(seed, offset, i as u64, wide) * (to - from);
    }
    call.write_f64(SELF, v)
}

fn normal(call: &KernelCall, scratch: &mut Scratch) -> Result<(), String> {
    let (seed, offset) = seed_offset(call);
    let d = call.decision();
    let (mean, std) = (d.attr_f64(P0), d.attr_f64(P1));
    let [v] = scratch.wide::<1>(d.numel());
    for (i, x) in v.iter_mut().enumerate() {
        *x = mean + std * standard_normal(seed, offset, i as u64);
    }
    call.write_f64(SELF, v)
}

fn bernoulli(call: &KernelCall, scratch: &mut Scratch) -> Result<(), String> {
    let (seed, offset) = seed_offset(call);
    let d = call.decision();
    let n = d.numel();
    let dims = call.dims(SELF).to_vec();
    let [v, p] = scratch.wide::<2>(n);
    if call.api() == BERNOULLI_TENSOR.launch_api {
        let pd = call.dims(PROB);
        if !broadcasts_to(pd, &dims) {
            return Err(format!(
                "prob shape {pd:?} does not broadcast to selfRef shape {dims:?}"
            ));
        }
        call.read_f64(PROB, &dims, p)?;
        if let Some(at) = p.iter().position(|q| !(0.0..=1.0).contains(q)) {
            return Err(format!(
                "prob element {at} (row-major, broadcast to selfRef) is {}, outside [0, 1]",
                p[at]
            ));
        }
    } else {
        p.fill(d.attr_f64(P0));
    }
    for (i, (x, &q)) in v.iter_mut().zip(p.iter()).enumerate() {
        *x = f64::from(u8::from(bernoulli_unit(seed, offset, i as u64) < q));
    }
    call.write_f64(SELF, v)
}

/// Whether `from` broadcasts (numpy rules) to exactly `to`.
pub(super) fn broadcasts_to(from: &[usize], to: &[usize]) -> bool {
    from.len() <= to.len()
        && from
            .iter()
            .rev()
            .zip(to.iter().rev())
            .all(|(&f, &t)| f == t || f == 1)
}

#[cfg(test)]
mod tests {
    use super::philox;

    #[test]
    fn philox_matches_the_published_known_answers() {
        // Random123's kat_vectors for philox4x32_10.
        assert_eq!(
            philox([0; 4], [0; 2]),
            [0x6627_e8d5, 0xe169_c58d, 0xbc57_ac4c, 0x9b00_dbd8]
        );
        assert_eq!(
            philox([u32::MAX; 4], [u32::MAX; 2]),
            [0x408f_276d, 0x41c8_3b0e, 0xa20b_c7c6, 0x6d54_51fd]
        );
        assert_eq!(
            philox(
                [0x243f_6a88, 0x85a3_08d3, 0x1319_8a2e, 0x0370_7344],
                [0xa409_3822, 0x299f_31d0]
            ),
            [0xd16c_fe09, 0x94fd_cceb, 0x5001_e420, 0x2412_6ea1]
        );
    }
}
