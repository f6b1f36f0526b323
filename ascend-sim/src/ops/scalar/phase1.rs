//! Phase 1 of the tensor–scalar family: the compute dtype of each [`Rule`] and its checks
//! in the vendor's order.

use super::{ALPHA_ATTR, OTHER_ATTR, OUT, SELF};
use crate::cast::round;
use crate::nnopbase::{Arg, Attr, Decision, OpDef, OutParams, Phase1, TensorDesc, invalid};
use crate::ops::MAX_DIMS;
use crate::ops::checks::{is_complex, promote_of, require_cast, unmodeled_complex};
use crate::state::fail;
use crate::tables::{Family, can_cast, dtype_name, dtype_size, is_integral, promote_type};
use ascend_ops::scalar::{Rule, ScalarOp};
use ascend_sys::*;

fn floating(dt: aclDataType) -> bool {
    matches!(dt, ACL_FLOAT | ACL_FLOAT16 | ACL_BF16 | ACL_DOUBLE)
}

/// The dtype the kernel computes in (`None`: PromoteType undefined), per the row's rule,
/// for a `self` of `s`, a scalar of `c` holding `value` and an `out` of `o` on `family`.
fn compute_dtype(
    rule: Rule,
    family: Family,
    (s, c, o): (aclDataType, aclDataType, aclDataType),
    value: f64,
) -> Option<aclDataType> {
    let promote = || promote_type(s, c);
    match rule {
        Rule::Adds | Rule::Subs => {
            if is_complex(s) || is_complex(c) {
                promote()
            } else if floating(s) {
                Some(s)
            } else if c == ACL_DOUBLE && o == ACL_FLOAT {
                Some(ACL_FLOAT)
            } else if floating(c) || s == ACL_BOOL {
                promote()
            } else {
                Some(s)
            }
        }
        Rule::Muls => {
            if is_complex(s) || is_complex(c) {
                promote()
            } else if floating(s) {
                Some(if s == ACL_BF16 { ACL_FLOAT } else { s })
            } else if c == ACL_DOUBLE && (s == ACL_BOOL || o == ACL_FLOAT) {
                Some(ACL_FLOAT)
            } else if floating(c) || s == ACL_BOOL {
                promote()
            } else {
                Some(s)
            }
        }
        Rule::Divs => {
            let a2 = family.has_bf16();
            let mixed = matches!(
                (s, c),
                (ACL_FLOAT16, ACL_FLOAT | ACL_BF16)
                    | (ACL_FLOAT, ACL_FLOAT16 | ACL_BF16)
                    | (ACL_BF16, ACL_FLOAT | ACL_FLOAT16 | ACL_DOUBLE)
            );
            if a2 && mixed {
                return Some(ACL_FLOAT);
            }
            let base = if floating(s) || is_complex(s) || (s == ACL_INT32 && c == ACL_INT32 && a2) {
                s
            } else if s == ACL_BOOL && c == ACL_BOOL {
                ACL_BOOL
            } else {
                ACL_FLOAT
            };
            if is_complex(c) {
                crate::tables::promote_type(base, c)
            } else {
                Some(base)
            }
        }
        Rule::Equality => {
            if is_complex(s) || (!is_complex(c) && floating(s)) {
                Some(s)
            } else if s == ACL_BOOL || floating(c) || is_complex(c) {
                promote()
            } else {
                Some(s)
            }
        }
        Rule::LeakyRelu => Some(s),
        Rule::Pow => {
            if c == ACL_DOUBLE && o == ACL_FLOAT {
                Some(ACL_FLOAT)
            } else if is_complex(c) {
                promote()
            } else if floating(s) {
                Some(s)
            } else if floating(c) || s == ACL_BOOL {
                promote()
            } else {
                Some(s)
            }
        }
        Rule::Less => {
            promote_type(s, less_operand(s, c)).map(|p| if p == ACL_BOOL { ACL_UINT8 } else { p })
        }
        Rule::LessEqual => {
            let p = if floating(s) {
                Some(s)
            } else if c == ACL_DOUBLE {
                Some(ACL_FLOAT)
            } else {
                promote()
            };
            p.map(|p| if p == ACL_BOOL { ACL_FLOAT } else { p })
        }
        Rule::Greater | Rule::GreaterEqual => {
            let p = promote().map(|p| if p == ACL_BOOL { ACL_INT8 } else { p });
            // A DOUBLE scalar that converts to a floating self's dtype within f32's epsilon
            // compares in that dtype.
            let near = |v: f64| (v - value).abs() <= f64::from(f32::EPSILON);
            if c == ACL_DOUBLE && floating(s) && near(round(s, value)) {
                Some(s)
            } else {
                p
            }
        }
    }
}

/// The dtype LtScalar converts its scalar to before its checks: a floating self's, FLOAT
/// for a DOUBLE scalar, else the scalar's own.
fn less_operand(s: aclDataType, c: aclDataType) -> aclDataType {
    if floating(s) {
        s
    } else if c == ACL_DOUBLE {
        ACL_FLOAT
    } else {
        c
    }
}

/// Phase 1 of either form of `row` (the in-place one holds selfRef as both tensors).
pub(super) fn phase1(
    row: &ScalarOp,
    op: &'static OpDef,
    inplace: bool,
    tensors: (*const aclTensor, *const aclTensor),
    other: *const aclScalar,
    alpha: *const aclScalar,
    outs: OutParams<'_>,
) -> aclnnStatus {
    let (self_, out) = tensors;
    if row.rule == Rule::Less {
        // LtScalar makes a tensor of other before any check: a NULL other or self is an
        // inner error, not a parameter one.
        for (p, name) in [(other.is_null(), "other"), (self_.is_null(), "self")] {
            if p {
                return fail(ACLNN_ERR_INNER_NULLPTR, format!("{name} is nullptr"));
            }
        }
    }
    // The in-place form passes selfRef as out too (checked for NULL once already).
    let name = if row.rule == Rule::Pow {
        "exponent"
    } else {
        "other"
    };
    let args = [
        Arg::Tensor(self_),
        Arg::object(other, name),
        Arg::object(if row.alpha { alpha } else { other }, "alpha"),
        Arg::Tensor(out),
    ];
    let checks = |p: Phase1<'_>| checks(row, inplace, p, other, alpha);
    op.phase1(outs, &args, checks)
}

/// A dtype outside `list` (161002), for the scalar argument `name`.
fn require_scalar_dtype(name: &str, dtype: aclDataType, list: &[aclDataType]) -> Result<(), i32> {
    if list.contains(&dtype) {
        return Ok(());
    }
    Err(invalid(format!(
        "{name} dtype {} is not supported",
        dtype_name(dtype)
    )))
}

/// out's shape must be self's (161002).
fn require_same_shape(op: &OpDef, x: &TensorDesc, y: &TensorDesc) -> Result<(), i32> {
    if *y.dims == *x.dims {
        return Ok(());
    }
    Err(invalid(format!(
        "{} shape {:?} is not {}'s shape {:?}",
        op.args[OUT], y.dims, op.args[SELF], x.dims
    )))
}

/// The checks after the opening (NULL pointers), in the order of the row's rule.
fn checks(
    row: &ScalarOp,
    inplace: bool,
    p: Phase1<'_>,
    other: *const aclScalar,
    alpha: *const aclScalar,
) -> Result<(), i32> {
    let op = p.op();
    let list = row.dtypes.on(p.family.product());
    let other = p.scalar(other, "other")?;
    let alpha = if row.alpha {
        Some(p.scalar(alpha, "alpha")?)
    } else {
        None
    };
    let (x, y) = (p.desc(SELF).clone(), p.desc(OUT).clone());
    let dtypes = (x.dtype, other.dtype, y.dtype);
    let compute = compute_dtype(row.rule, p.family, dtypes, other.to_f64());
    let undefined = || {
        invalid(format!(
            "{} dtype {} and other dtype {} can not promote",
            op.args[SELF],
            dtype_name(x.dtype),
            dtype_name(other.dtype)
        ))
    };
    match row.rule {
        Rule::Adds | Rule::Subs => {
            p.require_dtype(SELF, list)?;
            let promote = compute.ok_or_else(undefined)?;
            let alpha_dtype = alpha.map_or(ACL_FLOAT, |a| a.dtype);
            let alpha_ok = if promote == ACL_BOOL {
                alpha_dtype == ACL_BOOL || is_integral(alpha_dtype)
            } else {
                can_cast(alpha_dtype, promote)
            };
            if !alpha_ok {
                return Err(invalid(format!(
                    "alpha dtype {} can not cast to the promote dtype {}",
                    dtype_name(alpha_dtype),
                    dtype_name(promote)
                )));
            }
            require_cast(promote, (op.args[OUT], y.dtype))?;
            p.require_max_dims(SELF, MAX_DIMS)?;
            require_same_shape(op, &x, &y)?;
        }
        Rule::Muls => {
            p.require_dtype(SELF, list)?;
            if !inplace {
                p.require_dtype(OUT, list)?;
                require_same_shape(op, &x, &y)?;
            }
        }
        Rule::Divs => {
            require_scalar_dtype("other", other.dtype, list)?;
            p.require_dtype(SELF, list)?;
            p.require_max_dims(SELF, MAX_DIMS)?;
            require_same_shape(op, &x, &y)?;
            require_cast(x.dtype, (op.args[OUT], y.dtype))?;
        }
        Rule::LeakyRelu => {
            p.require_dtype(SELF, list)?;
            require_cast(x.dtype, (op.args[OUT], y.dtype))?;
            p.require_max_dims(SELF, MAX_DIMS)?;
            require_same_shape(op, &x, &y)?;
        }
        Rule::Pow => {
            p.require_dtype(SELF, list)?;
            require_scalar_dtype("exponent", other.dtype, list)?;
            let promote = promote_of((op.args[SELF], x.dtype), ("exponent", other.dtype))?;
            require_cast(promote, (op.args[OUT], y.dtype))?;
            let compute = compute.ok_or_else(undefined)?;
            if x.dtype == ACL_BOOL && other.dtype == ACL_BOOL {
                return Err(invalid(format!(
                    "{} and exponent dtype are both BOOL",
                    op.args[SELF]
                )));
            }
            require_cast(compute, (op.args[OUT], y.dtype))?;
            p.require_max_dims(SELF, MAX_DIMS)?;
            require_same_shape(op, &x, &y)?;
        }
        Rule::GreaterEqual => {
            let out_list = row.out_dtypes.map_or(list, |l| l.on(p.family.product()));
            p.require_dtype(OUT, out_list)?;
            let compare = compute.ok_or_else(undefined)?;
            if !list.contains(&compare) {
                return Err(invalid(format!(
                    "the compare dtype {} is not supported on {}",
                    dtype_name(compare),
                    p.soc
                )));
            }
            require_cast(ACL_BOOL, (op.args[OUT], y.dtype))?;
            p.require_max_dims(SELF, MAX_DIMS)?;
            p.require_max_dims(OUT, MAX_DIMS)?;
            require_same_shape(op, &x, &y)?;
        }
        Rule::Equality | Rule::Greater | Rule::Less | Rule::LessEqual => {
            p.require_dtype(SELF, list)?;
            let operand = if row.rule == Rule::Less {
                less_operand(x.dtype, other.dtype)
            } else {
                other.dtype
            };
            require_scalar_dtype("other", operand, list)?;
            let out_list = row.out_dtypes.map_or(list, |l| l.on(p.family.product()));
            p.require_dtype(OUT, out_list)?;
            if matches!(row.rule, Rule::Equality | Rule::LessEqual) {
                // The compare dtype (or PromoteType) must be defined, and both operands
                // cast to it.
                let promote = if row.casts_to_compute {
                    compute.ok_or_else(undefined)?
                } else {
                    promote_of((op.args[SELF], x.dtype), ("other", other.dtype))?
                };
                if !can_cast(x.dtype, promote) || !can_cast(other.dtype, promote) {
                    return Err(invalid(format!(
                        "{} dtype {} and other dtype {} can not cast to {}",
                        op.args[SELF],
                        dtype_name(x.dtype),
                        dtype_name(other.dtype),
                        dtype_name(promote)
                    )));
                }
            } else {
                compute.ok_or_else(undefined)?;
            }
            require_cast(ACL_BOOL, (op.args[OUT], y.dtype))?;
            p.require_max_dims(SELF, MAX_DIMS)?;
            if row.rule != Rule::Less {
                p.require_max_dims(OUT, MAX_DIMS)?;
            }
            require_same_shape(op, &x, &y)?;
        }
    }
    // Muls and Divs do not check the promote outside RegBase; an undefined one would fail
    // in the vendor's graph, as it does here.
    let mut compute = compute.ok_or_else(undefined)?;
    // PowTensorScalar runs an exponent of 2 (as f32) as Square, which takes INT8, UINT8
    // and INT16 as INT32: the square does not wrap to the narrow type before the cast to
    // out.
    if row.rule == Rule::Pow
        && other.to_f64() as f32 == 2.0
        && matches!(compute, ACL_INT8 | ACL_UINT8 | ACL_INT16)
    {
        compute = ACL_INT32;
    }
    if is_complex(other.dtype) || alpha.is_some_and(|a| is_complex(a.dtype)) {
        return Err(unmodeled_complex("scalars"));
    }
    if row.compares() && is_complex(compute) {
        return Err(unmodeled_complex("comparisons"));
    }
    let mut decision = Decision::new(compute, &x.dims, x.is_empty());
    decision.attrs[OTHER_ATTR] = Attr::Scalar(other);
    if let Some(alpha) = alpha {
        decision.attrs[ALPHA_ATTR] = Attr::Scalar(alpha);
    }
    let strided = |d: &TensorDesc| !d.is_contiguous();
    let size = |d: &TensorDesc| dtype_size(d.dtype).unwrap_or(1);
    decision.temporary(SELF, strided(&x), size(&x))?;
    decision.temporary(OUT, strided(&y), size(&y))?;
    p.finish(decision)
}
