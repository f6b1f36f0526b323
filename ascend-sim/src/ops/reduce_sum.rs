//! `aclnnReduceSum` (ops-math `math/reduce_sum`): sums self over `dims` (all dims when
//! `dims` is empty), keeping them as 1 with `keepDims`; `dtype` is out's dtype.
//!
//! Phase-1 checks in the vendor's order:
//! 1. `workspaceSize` or `executor` NULL, then self, dims or out NULL: 161001;
//! 2. self's, out's or `dtype` outside FLOAT, FLOAT16, DOUBLE, INT8, INT16, INT32, INT64,
//!    UINT8, BOOL, COMPLEX64, COMPLEX128 (plus BF16 on Atlas A2 / A3), or out's dtype not
//!    `dtype`: 161002;
//! 3. self above 8 dims: 161002;
//! 4. a dim outside [−r, r−1] (r = max(rank, 1)) or repeated after normalising: 161002;
//! 5. an empty self: success, workspace 0; phase 2 fills out with 0 (out's shape is not
//!    checked; a complex out is refused, 161002);
//! 6. the reduced shape not out's view shape, unless both have one element: 161002.
//!
//! Compute dtype: `dtype`, except a BOOL self with an INT64 `dtype`, which sums in FLOAT
//! when the reduced element count is below 2^24. The chain casts self to it, sums (a BOOL
//! `dtype` is a logical or), and casts to out. The vendor's accumulation order is not
//! documented: the simulator sums each group pairwise (halving), in f32 for FLOAT,
//! FLOAT16 and BF16 (rounded once at the end), in f64 for DOUBLE, exactly for integers
//! below 2^53 (wrapped to the width). Complex sums are not modeled (561000).

use super::MAX_DIMS;
use super::checks::{is_complex, unmodeled_complex};
use crate::cast::round;
use crate::nnopbase::{
    Arg, Attr, Decision, KernelCall, OpDef, OutParams, Phase1, invalid, op_def, positions,
};
use crate::slab::{Dims64, Shape};
use crate::stream::Scratch;
use crate::tables::{dtype_list, dtype_name, numeric_dtypes};
use ascend_sys::*;

positions!(SELF, OUT);
// Attribute: the reduced dims as a bit mask.
positions!(MASK);

pub(crate) static OP: OpDef = op_def!("ReduceSum", ["self", "out"], [SELF] -> [OUT], run);

pub(crate) fn get_workspace_size(
    self_: *const aclTensor,
    dims: *const aclIntArray,
    keep_dims: bool,
    dtype: aclDataType,
    out: *mut aclTensor,
    outs: OutParams<'_>,
) -> aclnnStatus {
    let args = [
        Arg::Tensor(self_),
        Arg::object(dims, "dims"),
        Arg::Tensor(out),
    ];
    let checks = |p: Phase1<'_>| {
        let dims = p.int_array(dims, "dims")?;
        let list = numeric_dtypes(p.family);
        p.require_dtype(SELF, list)?;
        p.require_dtype(OUT, list)?;
        if !list.contains(&dtype) {
            return Err(invalid(format!(
                "dtype {} should be in {}",
                dtype_name(dtype),
                dtype_list(list)
            )));
        }
        let (x, o) = (p.desc(SELF), p.desc(OUT));
        if o.dtype != dtype {
            return Err(invalid(format!(
                "out dtype {} is not dtype {}",
                dtype_name(o.dtype),
                dtype_name(dtype)
            )));
        }
        p.require_max_dims(SELF, MAX_DIMS)?;
        let rank = x.dims.len() as i64;
        let r = rank.max(1);
        let mut mask = 0u32;
        for &d in dims.iter() {
            if !(-r..r).contains(&d) {
                return Err(invalid(format!(
                    "dim {d} is out of range [{}, {}]",
                    -r,
                    r - 1
                )));
            }
            let bit = 1 << d.rem_euclid(r);
            if mask & bit != 0 {
                return Err(invalid(format!(
                    "dim {d} appears more than once in dims {:?}",
                    &*dims
                )));
            }
            mask |= bit;
        }
        if dims.is_empty() {
            mask = (1u32 << rank) - 1;
        }
        let complex = is_complex(dtype);
        if x.is_empty() {
            if complex {
                return Err(invalid(format!(
                    "out dtype {} cannot be filled with 0",
                    dtype_name(dtype)
                )));
            }
            let mut decision = Decision::new(dtype, &o.dims, o.is_empty());
            decision.attrs[MASK] = Attr::Int(-1);
            return p.finish(decision);
        }
        let (mut kept, mut len, mut reduced) = ([0i64; MAX_DIMS], 0, 1i64);
        for (k, &d) in x.dims.iter().enumerate() {
            let folded = mask & (1 << k) != 0;
            reduced *= if folded { d } else { 1 };
            if !folded || keep_dims {
                kept[len] = if folded { 1 } else { d };
                len += 1;
            }
        }
        let shape = Dims64::from_slice(&kept[..len]);
        let one = |d: &[i64]| d.iter().product::<i64>() == 1;
        if *shape != *o.dims && !(one(&shape) && one(&o.dims)) {
            return Err(invalid(format!(
                "out shape {:?} is not the reduced shape {shape:?}",
                o.dims
            )));
        }
        if complex || is_complex(x.dtype) {
            return Err(unmodeled_complex("sums"));
        }
        let compute = if x.dtype == ACL_BOOL && dtype == ACL_INT64 && reduced < 1 << 24 {
            ACL_FLOAT
        } else {
            dtype
        };
        let mut decision = Decision::new(compute, &shape, false);
        decision.attrs[MASK] = Attr::Int(i64::from(mask));
        p.finish(decision)
    };
    OP.phase1(outs, &args, checks)
}

/// Pairwise sum: the upper half added onto the lower until one value is left.
fn pairwise(v: &mut [f64], add: impl Fn(f64, f64) -> f64) -> f64 {
    let mut n = v.len();
    while n > 1 {
        let half = n.div_ceil(2);
        for i in 0..n / 2 {
            v[i] = add(v[i], v[half + i]);
        }
        n = half;
    }
    v.first().copied().unwrap_or(0.0)
}

fn run(call: &KernelCall, scratch: &mut Scratch) -> Result<(), String> {
    let compute = call.decision().compute;
    let mask = call.decision().attr_i64(MASK);
    let out_n = call.dims(OUT).iter().product::<usize>();
    if mask < 0 {
        let [z] = scratch.wide::<1>(out_n);
        z.fill(0.0);
        return call.write_f64(OUT, z);
    }
    let xd = Shape::from_slice(call.dims(SELF));
    let n = xd.iter().product::<usize>();
    let [x, g] = scratch.wide::<2>(n);
    call.read_f64(SELF, &xd, x)?;
    // Group the elements: output index major, reduced index minor.
    let group = n / out_n.max(1);
    let mut idx = Shape::zeroed(xd.len());
    for v in x.iter() {
        let (mut o, mut r) = (0usize, 0usize);
        for (k, (&i, &d)) in idx.iter().zip(xd.iter()).enumerate() {
            if mask & (1 << k) == 0 {
                o = o * d + i
            } else {
                r = r * d + i
            }
        }
        g[o * group + r] = round(compute, *v);
        for k in (0..xd.len()).rev() {
            idx[k] += 1;
            if idx[k] < xd[k] {
                break;
            }
            idx[k] = 0;
        }
    }
    for (o, chunk) in g.chunks_mut(group.max(1)).take(out_n).enumerate() {
        x[o] = match compute {
            ACL_BOOL => f64::from(u8::from(chunk.iter().any(|&v| v != 0.0))),
            ACL_FLOAT | ACL_FLOAT16 | ACL_BF16 => round(
                compute,
                pairwise(chunk, |a, b| f64::from(a as f32 + b as f32)),
            ),
            ACL_DOUBLE => pairwise(chunk, |a, b| a + b),
            _ => round(compute, pairwise(chunk, |a, b| a + b)),
        };
    }
    call.write_f64(OUT, &x[..out_n])
}
