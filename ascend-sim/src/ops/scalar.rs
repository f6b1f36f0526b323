//! The tensor–scalar family: every row of [`ascend_ops::scalar`] (`aclnnAdds`, ...) and
//! its in-place twin, with the phase-1 checks of the row's [`Rule`], the kernel and the
//! entry points. Nothing here is per operator but the rules.
//!
//! Complex tensors compute in f64 with the scalar's real part (the imaginary part of a
//! complex scalar is not modelled: such a call fails phase 1 with 561000).

use super::MAX_DIMS;
use super::checks::{is_complex, promote_of, require_cast, unmodeled_complex};
use crate::cast::round;
use crate::catalog::{Entry, Slot};
use crate::nnopbase::{
    Arg, Attr, Decision, KernelCall, OpDef, OutParams, Phase1, TensorDesc, invalid, positions,
    release_on_fault,
};
use crate::stream::Scratch;
use crate::strided::{DType, par_chunks};
use crate::tables::{Family, can_cast, dtype_name, dtype_size, is_integral};
use ascend_ops::scalar::{Rule, ScalarOp};
use ascend_ops::unary::Complex64;
use ascend_sys::*;
use std::ffi::c_void;

positions!(SELF, OUT);
positions!(OTHER_ATTR, ALPHA_ATTR);

fn floating(dt: aclDataType) -> bool {
    matches!(dt, ACL_FLOAT | ACL_FLOAT16 | ACL_BF16 | ACL_DOUBLE)
}

/// The dtype the kernel computes in (`None`: PromoteType undefined), per the row's rule,
/// for a `self` of `s`, a scalar of `c` holding `value` and an `out` of `o` on `family`.
pub(crate) fn compute_dtype(
    rule: Rule,
    family: Family,
    (s, c, o): (aclDataType, aclDataType, aclDataType),
    value: f64,
) -> Option<aclDataType> {
    let promote = || crate::tables::promote_type(s, c);
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
        Rule::Greater => {
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

/// Phase 1 of either form of `row` (the in-place one holds selfRef as both tensors).
fn phase1(
    row: &ScalarOp,
    op: &'static OpDef,
    inplace: bool,
    tensors: (*const aclTensor, *const aclTensor),
    other: *const aclScalar,
    alpha: *const aclScalar,
    outs: OutParams<'_>,
) -> aclnnStatus {
    let (self_, out) = tensors;
    // The in-place form passes selfRef as out too (checked for NULL once already).
    let args = [
        Arg::Tensor(self_),
        Arg::object(other, "other"),
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
        Rule::Equality | Rule::Greater => {
            p.require_dtype(SELF, list)?;
            require_scalar_dtype("other", other.dtype, list)?;
            let out_list = row.out_dtypes.map_or(list, |l| l.on(p.family.product()));
            p.require_dtype(OUT, out_list)?;
            if row.rule == Rule::Equality {
                // PromoteType must be defined, and both operands cast to it.
                let promote = promote_of((op.args[SELF], x.dtype), ("other", other.dtype))?;
                let promote = if row.name == "NeScalar" {
                    compute.ok_or_else(undefined)?
                } else {
                    promote
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
            p.require_max_dims(OUT, MAX_DIMS)?;
            require_same_shape(op, &x, &y)?;
        }
    }
    // Muls and Divs do not check the promote outside RegBase; an undefined one would fail
    // in the vendor's graph, as it does here.
    let compute = compute.ok_or_else(undefined)?;
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

/// The queued compute: `self` read whole before `out` is written, so the in-place form
/// needs no care about overlap.
fn run(row: &ScalarOp, call: &KernelCall, scratch: &mut Scratch) -> Result<(), String> {
    let decision = call.decision();
    let (compute, n) = (decision.compute, decision.numel());
    let other = decision.attr_f64(OTHER_ATTR);
    let alpha = if row.alpha {
        decision.attr_f64(ALPHA_ATTR)
    } else {
        1.0
    };
    let (self_dtype, out_dtype) = (call.dtype(SELF)?, call.dtype(OUT)?);
    if is_complex(compute) && !row.compares() {
        return complex(row, call, compute, out_dtype, n, other * alpha);
    }
    let term = row.term(compute, other, alpha, round);
    if row.compares() {
        // Both operands in the compute dtype; the BOOL result cast to out's dtype.
        let [x] = scratch.wide::<1>(n);
        call.read_f64(SELF, &decision.out_shape, x)?;
        for v in x.iter_mut() {
            *v = (row.f64)(round(compute, *v), term);
        }
        return call.write_f64(OUT, x);
    }
    if let Some(dt) =
        DType::from_acl(compute).filter(|_| self_dtype == compute && out_dtype == compute)
    {
        // The contiguous-friendly path: f32 values, one tight loop, split over threads
        // when large.
        let [x] = scratch.get::<1>(n);
        call.read(SELF, &decision.out_shape, x)?;
        call.through_workspace(SELF, dt, x)?;
        let (f, t) = (row.f32, term as f32);
        par_chunks(x, |_, x| {
            for v in x {
                *v = dt.round(f(*v, t));
            }
        });
        call.through_workspace(OUT, dt, x)?;
        return call.write(OUT, x);
    }
    let [x] = scratch.wide::<1>(n);
    call.read_f64(SELF, &decision.out_shape, x)?;
    for v in x.iter_mut() {
        let input = round(compute, *v);
        *v = match (compute, row.int) {
            (ACL_DOUBLE, _) => (row.f64)(input, term),
            (ACL_FLOAT | ACL_FLOAT16 | ACL_BF16, _) => {
                round(compute, f64::from((row.f32)(input as f32, term as f32)))
            }
            (ACL_BOOL, _) | (_, None) => round(compute, (row.f64)(input, term)),
            (_, Some(g)) => round(compute, g(input as i64, term as i64) as f64),
        };
    }
    call.write_f64(OUT, x)
}

/// The complex kernel: each element with the real term, in f64, each part rounded to
/// `compute`'s, written as `out`'s dtype (a real `out` takes the real part).
fn complex(
    row: &ScalarOp,
    call: &KernelCall,
    compute: aclDataType,
    out_dtype: aclDataType,
    n: usize,
    term: f64,
) -> Result<(), String> {
    let mut bytes = vec![0u8; n * 16];
    call.gather_as(SELF, ACL_COMPLEX128, &mut bytes)?;
    let part = |b: &[u8]| f64::from_le_bytes(b.try_into().unwrap_or([0; 8]));
    let narrow = |v: f64| {
        if compute == ACL_COMPLEX64 {
            f64::from(v as f32)
        } else {
            v
        }
    };
    let values: Vec<Complex64> = bytes
        .chunks_exact(16)
        .map(|c| {
            let (re, im) = (part(&c[..8]), part(&c[8..]));
            let (re, im) = match row.rule {
                Rule::Adds | Rule::Subs => ((row.f64)(re, term), im),
                // Muls and Divs (comparisons of complex values are refused in phase 1).
                _ => ((row.f64)(re, term), (row.f64)(im, term)),
            };
            Complex64::new(narrow(re), narrow(im))
        })
        .collect();
    match out_dtype {
        ACL_COMPLEX64 | ACL_COMPLEX128 => {
            let wide = out_dtype == ACL_COMPLEX128;
            let b: Vec<u8> = values
                .iter()
                .flat_map(|z| {
                    if wide {
                        [z.re.to_le_bytes(), z.im.to_le_bytes()].concat()
                    } else {
                        [(z.re as f32).to_le_bytes(), (z.im as f32).to_le_bytes()].concat()
                    }
                })
                .collect();
            call.scatter_bytes(OUT, &b)
        }
        _ => call.write_f64(OUT, &values.iter().map(|z| z.re).collect::<Vec<_>>()),
    }
}

/// Whether `family` has the row's kernel.
fn available(row: &ScalarOp, family: Family) -> bool {
    row.available_on(family.product())
}

/// Phase 2 of a catalogued operator: the bookkeeping of every entry point around
/// nnopbase's phase 2.
fn launch(
    slot: &'static Slot,
    op: &'static OpDef,
    workspace: *mut c_void,
    workspace_size: u64,
    executor: *mut aclOpExecutor,
    stream: aclrtStream,
) -> aclnnStatus {
    crate::state::entry_with_fault_effect(
        slot,
        crate::introspect::fault_code_at(slot.index()),
        move || release_on_fault(executor),
        move || crate::nnopbase::phase2(op, workspace, workspace_size, executor, stream),
    )
}

/// One row's operator kinds, kernel and entry points (a module per row, named after the
/// row's Rust name).
macro_rules! sim_scalar {
    ($(
        $(#[$doc:meta])*
        $rust:ident($name:ident, $inplace:ident) [$($marker:ident)*] { $($facts:tt)* }
    )*) => {
        $(
            pub(crate) mod $rust {
                use super::*;

                fn row() -> &'static ScalarOp {
                    static ROW: std::sync::OnceLock<&'static ScalarOp> = std::sync::OnceLock::new();
                    ROW.get_or_init(|| {
                        ascend_ops::scalar::row(stringify!($name))
                            .expect("every family row has its data (ascend-ops)")
                    })
                }

                fn available(family: Family) -> bool {
                    super::available(row(), family)
                }

                fn kernel(call: &KernelCall, scratch: &mut Scratch) -> Result<(), String> {
                    super::run(row(), call, scratch)
                }

                pub(crate) static OP: OpDef = OpDef {
                    name: stringify!($name),
                    launch_api: concat!("aclnn", stringify!($name)),
                    args: &["self", "out"],
                    inputs: &[SELF],
                    outputs: &[OUT],
                    available,
                    kernel,
                };

                pub(crate) static INPLACE_OP: OpDef = OpDef {
                    name: stringify!($inplace),
                    launch_api: concat!("aclnn", stringify!($inplace)),
                    args: &["selfRef", "selfRef"],
                    inputs: &[SELF],
                    outputs: &[OUT],
                    available,
                    kernel,
                };

                static PHASE1: Slot = Slot::new(concat!("aclnn", stringify!($name), "GetWorkspaceSize"));
                static PHASE2: Slot = Slot::new(concat!("aclnn", stringify!($name)));
                static INPLACE_PHASE1: Slot =
                    Slot::new(concat!("aclnn", stringify!($inplace), "GetWorkspaceSize"));
                static INPLACE_PHASE2: Slot = Slot::new(concat!("aclnn", stringify!($inplace)));

                sim_scalar!(@phase1 [$($marker)*] $name $inplace);

                #[doc = concat!("Simulated `aclnn", stringify!($name), "`.")]
                ///
                /// # Safety
                /// The C function's contract: each pointer NULL or valid for its access.
                #[cfg_attr(feature = "c-exports", unsafe(export_name = concat!("aclnn", stringify!($name))))]
                pub unsafe extern "C" fn phase2(
                    workspace: *mut c_void,
                    workspace_size: u64,
                    executor: *mut aclOpExecutor,
                    stream: aclrtStream,
                ) -> aclnnStatus {
                    launch(&PHASE2, &OP, workspace, workspace_size, executor, stream)
                }

                #[doc = concat!("Simulated `aclnn", stringify!($inplace), "`.")]
                ///
                /// # Safety
                /// The C function's contract: each pointer NULL or valid for its access.
                #[cfg_attr(feature = "c-exports", unsafe(export_name = concat!("aclnn", stringify!($inplace))))]
                pub unsafe extern "C" fn inplace_phase2(
                    workspace: *mut c_void,
                    workspace_size: u64,
                    executor: *mut aclOpExecutor,
                    stream: aclrtStream,
                ) -> aclnnStatus {
                    launch(&INPLACE_PHASE2, &INPLACE_OP, workspace, workspace_size, executor, stream)
                }
            }
        )*

        /// The family's entry points, for the catalog.
        pub(crate) static ENTRIES: &[Entry] = &[$(
            Entry {
                name: concat!("aclnn", stringify!($name), "GetWorkspaceSize"),
                address: || $rust::phase1 as *const c_void,
            },
            Entry {
                name: concat!("aclnn", stringify!($name)),
                address: || $rust::phase2 as *const c_void,
            },
            Entry {
                name: concat!("aclnn", stringify!($inplace), "GetWorkspaceSize"),
                address: || $rust::inplace_phase1 as *const c_void,
            },
            Entry {
                name: concat!("aclnn", stringify!($inplace)),
                address: || $rust::inplace_phase2 as *const c_void,
            },
        )*];
    };
    (@phase1 [alpha $($quirk:ident)?] $name:ident $inplace:ident) => {
        #[doc = concat!("Simulated `aclnn", stringify!($name), "GetWorkspaceSize`.")]
        ///
        /// # Safety
        /// The C function's contract: each pointer NULL or valid for its access.
        #[cfg_attr(feature = "c-exports", unsafe(export_name = concat!("aclnn", stringify!($name), "GetWorkspaceSize")))]
        pub unsafe extern "C" fn phase1(
            self_: *const aclTensor,
            other: *const aclScalar,
            alpha: *const aclScalar,
            out: *mut aclTensor,
            workspace_size: *mut u64,
            executor: *mut *mut aclOpExecutor,
        ) -> aclnnStatus {
            let code = crate::introspect::fault_code_at(PHASE1.index());
            crate::state::entry(&PHASE1, code, move || {
                // SAFETY: by the caller's C contract each out-parameter is NULL or
                // writable and unaliased until this call returns.
                let outs = unsafe { OutParams::new(workspace_size, executor) };
                super::phase1(row(), &OP, false, (self_, out), other, alpha, outs)
            })
        }

        #[doc = concat!("Simulated `aclnn", stringify!($inplace), "GetWorkspaceSize`.")]
        ///
        /// # Safety
        /// The C function's contract: each pointer NULL or valid for its access.
        #[cfg_attr(feature = "c-exports", unsafe(export_name = concat!("aclnn", stringify!($inplace), "GetWorkspaceSize")))]
        pub unsafe extern "C" fn inplace_phase1(
            self_ref: *mut aclTensor,
            other: *const aclScalar,
            alpha: *const aclScalar,
            workspace_size: *mut u64,
            executor: *mut *mut aclOpExecutor,
        ) -> aclnnStatus {
            let code = crate::introspect::fault_code_at(INPLACE_PHASE1.index());
            crate::state::entry(&INPLACE_PHASE1, code, move || {
                // SAFETY: as in `phase1`.
                let outs = unsafe { OutParams::new(workspace_size, executor) };
                super::phase1(row(), &INPLACE_OP, true, (self_ref, self_ref), other, alpha, outs)
            })
        }
    };
    (@phase1 [compare $($quirk:ident)*] $name:ident $inplace:ident) => {
        sim_scalar!(@phase1 [] $name $inplace);
    };
    (@phase1 [$(const_self_ref)?] $name:ident $inplace:ident) => {
        #[doc = concat!("Simulated `aclnn", stringify!($name), "GetWorkspaceSize`.")]
        ///
        /// # Safety
        /// The C function's contract: each pointer NULL or valid for its access.
        #[cfg_attr(feature = "c-exports", unsafe(export_name = concat!("aclnn", stringify!($name), "GetWorkspaceSize")))]
        pub unsafe extern "C" fn phase1(
            self_: *const aclTensor,
            other: *const aclScalar,
            out: *mut aclTensor,
            workspace_size: *mut u64,
            executor: *mut *mut aclOpExecutor,
        ) -> aclnnStatus {
            let code = crate::introspect::fault_code_at(PHASE1.index());
            crate::state::entry(&PHASE1, code, move || {
                // SAFETY: by the caller's C contract each out-parameter is NULL or
                // writable and unaliased until this call returns.
                let outs = unsafe { OutParams::new(workspace_size, executor) };
                super::phase1(row(), &OP, false, (self_, out), other, std::ptr::null(), outs)
            })
        }

        #[doc = concat!("Simulated `aclnn", stringify!($inplace), "GetWorkspaceSize`.")]
        ///
        /// # Safety
        /// The C function's contract: each pointer NULL or valid for its access.
        #[cfg_attr(feature = "c-exports", unsafe(export_name = concat!("aclnn", stringify!($inplace), "GetWorkspaceSize")))]
        pub unsafe extern "C" fn inplace_phase1(
            self_ref: *mut aclTensor,
            other: *const aclScalar,
            workspace_size: *mut u64,
            executor: *mut *mut aclOpExecutor,
        ) -> aclnnStatus {
            let code = crate::introspect::fault_code_at(INPLACE_PHASE1.index());
            crate::state::entry(&INPLACE_PHASE1, code, move || {
                // SAFETY: as in `phase1`.
                let outs = unsafe { OutParams::new(workspace_size, executor) };
                super::phase1(row(), &INPLACE_OP, true, (self_ref, self_ref), other, std::ptr::null(), outs)
            })
        }
    };
}

ascend_ops::scalar_family!(sim_scalar);
