//! The binary family: every row of [`ascend_ops::binary`] (`aclnnSub`, `aclnnDiv`, ...)
//! and its in-place twin, with the phase-1 checks, the kernel and the entry points the row
//! implies. The rows document the checks and the compute; this module holds nothing per
//! operator.

use super::MAX_DIMS;
use super::checks::{promote_of, refuse_complex, require_cast};
use super::unary::launch;
use crate::cast::round;
use crate::catalog::{Entry, Slot};
use crate::nnopbase::{
    Arg, Attr, Decision, KernelCall, OpDef, OutParams, Phase1, invalid, live_tensor, positions,
    require_broadcast, require_non_null,
};
use crate::state::{state, status_of};
use crate::stream::Scratch;
use crate::strided::par_zip;
use crate::tables::{Family, can_cast, dtype_name, format_name, is_integral};
use ascend_ops::binary::{Binary, Check, Compute, Inplace, Output, Role, is_complex, is_floating};
use ascend_sys::*;
use std::ffi::c_void;

positions!(SELF, OTHER, OUT);
positions!(ALPHA);

/// The position of a row's role.
fn position(role: Role) -> usize {
    match role {
        Role::Self_ => SELF,
        Role::Other => OTHER,
        Role::Out => OUT,
    }
}

/// Phase 1 of either form of `row` (the in-place one holds selfRef as `self` and `out`;
/// `alpha` is NULL for rows without one).
fn phase1(
    row: &Binary,
    op: &'static OpDef,
    inplace: bool,
    (self_, other, alpha, out): (
        *const aclTensor,
        *const aclTensor,
        *const aclScalar,
        *const aclTensor,
    ),
    outs: OutParams<'_>,
) -> aclnnStatus {
    if let (true, Some((_, Inplace::BroadcastFirst))) = (inplace, row.inplace) {
        let first = status_of(|| {
            require_non_null(&[
                (self_ as usize, op.args[SELF]),
                (other as usize, op.args[OTHER]),
            ])?;
            let st = state();
            let (_, x) = live_tensor(&st, self_, op.args[SELF])?;
            let (_, y) = live_tensor(&st, other, op.args[OTHER])?;
            require_broadcast(op, (SELF, x), (OTHER, y), (SELF, x))
        });
        if first != ACL_SUCCESS {
            return first;
        }
    }
    let tensors = [Arg::Tensor(self_), Arg::Tensor(other)];
    let alpha_arg = [Arg::object(alpha, "alpha")];
    let args: Vec<Arg> = tensors
        .into_iter()
        .chain(alpha_arg.into_iter().filter(|_| row.alpha))
        .chain([Arg::Tensor(out)])
        .collect();
    op.phase1(outs, &args, |p| checks(row, p, alpha))
}

/// The row's checks after the opening, in the row's order.
fn checks(row: &Binary, p: Phase1<'_>, alpha: *const aclScalar) -> Result<(), i32> {
    let op = p.op();
    let product = p.family.product();
    let alpha = if row.alpha {
        Some(p.scalar(alpha, "alpha")?)
    } else {
        None
    };
    let (x, y, o) = (p.desc(SELF), p.desc(OTHER), p.desc(OUT));
    let empty = x.is_empty() || y.is_empty();
    let promote = || promote_of((op.args[SELF], x.dtype), (op.args[OTHER], y.dtype));
    let compute = || -> Result<aclDataType, i32> {
        match row.compute {
            Compute::Bool => Ok(ACL_BOOL),
            _ => Ok(row.compute_dtype(product, promote()?, x.dtype, y.dtype)),
        }
    };
    let result = || match row.output {
        Output::Bool => Ok(ACL_BOOL),
        Output::Promote => promote(),
    };
    for check in row.checks {
        match *check {
            Check::EmptySucceeds if empty => {
                let decision = Decision::new(ACL_BOOL, &o.dims.clone(), true);
                return p.finish(decision);
            }
            Check::EmptySucceeds => {}
            Check::OutDtype(list) => p.require_dtype(OUT, list.on(product))?,
            Check::NoBf16On910
                if product == ascend_ops::Product::Training910
                    && (x.dtype == ACL_BF16 || y.dtype == ACL_BF16) =>
            {
                return Err(invalid(format!(
                    "{} does not take BF16 inputs on {}",
                    row.name, p.soc
                )));
            }
            Check::NoBf16On910 => {}
            Check::PromoteIn => {
                let c = compute()?;
                if !row.dtypes.allows(product, c) {
                    return Err(invalid(format!(
                        "the promote dtype {} of {} and {} is not in {}'s list",
                        dtype_name(c),
                        dtype_name(x.dtype),
                        dtype_name(y.dtype),
                        row.name
                    )));
                }
            }
            Check::Dtype(role) => p.require_dtype(position(role), row.dtypes.on(product))?,
            Check::NotBothBool if x.dtype == ACL_BOOL && y.dtype == ACL_BOOL => {
                return Err(invalid(format!(
                    "{} and {} are both BOOL, which {} does not support",
                    op.args[SELF], op.args[OTHER], row.name
                )));
            }
            Check::NotBothBool => {}
            Check::Promote => {
                promote()?;
            }
            Check::Alpha => {
                let (promote, alpha) = (promote()?, alpha.map_or(ACL_FLOAT, |a| a.dtype));
                let ok = if promote == ACL_BOOL {
                    alpha == ACL_BOOL || is_integral(alpha)
                } else {
                    can_cast(alpha, promote)
                };
                if !ok {
                    return Err(invalid(format!(
                        "alpha dtype {} can not cast to the promote dtype {}",
                        dtype_name(alpha),
                        dtype_name(promote)
                    )));
                }
            }
            Check::CastOut => require_cast(result()?, (op.args[OUT], o.dtype))?,
            Check::MaxDims => {
                p.require_max_dims(SELF, MAX_DIMS)?;
                p.require_max_dims(OTHER, MAX_DIMS)?;
                p.require_max_dims(OUT, MAX_DIMS)?;
            }
            Check::Broadcast => p.require_broadcast_to(SELF, OTHER, OUT)?,
            Check::Format => {
                for (k, d) in [x, y, o].into_iter().enumerate() {
                    if is_private_format(d.format) {
                        return Err(invalid(format!(
                            "{} is stored in the private format {}; only ND, NCHW, NHWC, HWCN, \
                             NDHWC and NCDHW are supported",
                            op.args[k],
                            format_name(d.format)
                        )));
                    }
                }
            }
        }
    }
    let compute = compute()?;
    for dtype in [compute, x.dtype, y.dtype] {
        if is_complex(dtype) {
            refuse_complex(dtype, &format!("{} {}", dtype_name(dtype), row.name))?;
        }
    }
    let mut decision = Decision::new(compute, &o.dims, empty);
    if let Some(alpha) = alpha {
        decision.attrs[ALPHA] = Attr::Scalar(alpha);
    }
    p.finish(decision)
}

/// Whether `format` is one of the device's private storage formats (every format but
/// the plain layouts ND, NCHW, NHWC, HWCN, NDHWC, NCDHW, NC and NCL).
fn is_private_format(format: aclFormat) -> bool {
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

/// alpha as the formula takes it: 1 unless it is above or below 1 (NaN counts as 1).
fn alpha_of(call: &KernelCall, row: &Binary) -> f64 {
    use std::cmp::Ordering::{Greater, Less};
    if !row.alpha {
        return 1.0;
    }
    let alpha = call.decision().attr_f64(ALPHA);
    match alpha.partial_cmp(&1.0) {
        Some(Less | Greater) => alpha,
        _ => 1.0,
    }
}

/// The queued compute: both inputs read whole before `out` is written, so the in-place
/// form needs no care about overlap.
fn run(row: &Binary, call: &KernelCall, scratch: &mut Scratch) -> Result<(), String> {
    let compute = call.decision().compute;
    let n = call.decision().numel();
    let alpha = alpha_of(call, row);
    let shape = &call.decision().out_shape;
    let all_float = [SELF, OTHER, OUT]
        .iter()
        .all(|&k| call.dtype(k) == Ok(ACL_FLOAT));
    if compute == ACL_FLOAT && all_float {
        // The common case, kept to a loop the compiler vectorises.
        let [a, b] = scratch.get::<2>(n);
        call.read(SELF, shape, a)?;
        call.read(OTHER, shape, b)?;
        let (f, alpha) = (row.f32_slices, alpha as f32);
        par_zip(a, b, |a, b| f(a, b, alpha));
        return call.write(OUT, a);
    }
    let [a, b] = scratch.wide::<2>(n);
    call.read_f64(SELF, shape, a)?;
    call.read_f64(OTHER, shape, b)?;
    let integer = row.integer.filter(|_| !is_floating(compute));
    let int_alpha = round(compute, alpha) as i64;
    for (r, &w) in a.iter_mut().zip(b.iter()) {
        let (x, y) = (round(compute, *r), round(compute, w));
        *r = match (compute, integer) {
            (ACL_DOUBLE, _) => (row.f64)(x, y, alpha),
            (ACL_FLOAT | ACL_FLOAT16 | ACL_BF16, _) => round(
                compute,
                f64::from((row.f32)(x as f32, y as f32, alpha as f32)),
            ),
            (_, Some(g)) => round(compute, g(x as i64, y as i64, int_alpha) as f64),
            (_, None) => round(compute, (row.f64)(x, y, alpha)),
        };
    }
    call.write_f64(OUT, a)
}

/// Whether `family` has the row's kernel.
fn available(row: &Binary, family: Family) -> bool {
    row.available_on(family.product())
}

/// One row's operator kinds, kernel and entry points (a module per row, named after the
/// row's Rust name).
macro_rules! sim_binary {
    ($(
        $(#[$doc:meta])*
        $rust:ident($name:ident $(, $inplace:ident)?) $inputs:tt [$($quirk:ident)?] { $($facts:tt)* }
    )*) => {
        $(
            pub(crate) mod $rust {
                use super::*;

                fn row() -> &'static Binary {
                    static ROW: std::sync::OnceLock<&'static Binary> = std::sync::OnceLock::new();
                    ROW.get_or_init(|| {
                        ascend_ops::binary::row(stringify!($name))
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
                    args: &["self", sim_binary!(@other $inputs), "out"],
                    inputs: &[SELF, OTHER],
                    outputs: &[OUT],
                    available,
                    kernel,
                };

                static PHASE1: Slot = Slot::new(concat!("aclnn", stringify!($name), "GetWorkspaceSize"));
                static PHASE2: Slot = Slot::new(concat!("aclnn", stringify!($name)));

                sim_binary!(@phase1 $inputs $name);

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
                    super::launch(&PHASE2, &OP, workspace, workspace_size, executor, stream)
                }

                $(
                    pub(crate) static INPLACE_OP: OpDef = OpDef {
                        name: stringify!($inplace),
                        launch_api: concat!("aclnn", stringify!($inplace)),
                        args: &["selfRef", sim_binary!(@other $inputs), "selfRef"],
                        inputs: &[SELF, OTHER],
                        outputs: &[OUT],
                        available,
                        kernel,
                    };

                    static INPLACE_PHASE1: Slot =
                        Slot::new(concat!("aclnn", stringify!($inplace), "GetWorkspaceSize"));
                    static INPLACE_PHASE2: Slot = Slot::new(concat!("aclnn", stringify!($inplace)));

                    sim_binary!(@inplace_phase1 $inputs $inplace);

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
                        super::launch(&INPLACE_PHASE2, &INPLACE_OP, workspace, workspace_size, executor, stream)
                    }
                )?
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
            $(
                Entry {
                    name: concat!("aclnn", stringify!($inplace), "GetWorkspaceSize"),
                    address: || $rust::inplace_phase1 as *const c_void,
                },
                Entry {
                    name: concat!("aclnn", stringify!($inplace)),
                    address: || $rust::inplace_phase2 as *const c_void,
                },
            )?
        )*];
    };
    (@other [$other:literal $(, $alpha:ident)?]) => { $other };
    (@phase1 [$other:literal] $name:ident) => {
        #[doc = concat!("Simulated `aclnn", stringify!($name), "GetWorkspaceSize`.")]
        ///
        /// # Safety
        /// The C function's contract: each pointer NULL or valid for its access.
        #[cfg_attr(feature = "c-exports", unsafe(export_name = concat!("aclnn", stringify!($name), "GetWorkspaceSize")))]
        pub unsafe extern "C" fn phase1(
            self_: *const aclTensor,
            other: *const aclTensor,
            out: *mut aclTensor,
            workspace_size: *mut u64,
            executor: *mut *mut aclOpExecutor,
        ) -> aclnnStatus {
            let code = crate::introspect::fault_code_at(PHASE1.index());
            crate::state::entry(&PHASE1, code, move || {
                // SAFETY: by the caller's C contract each out-parameter is NULL or
                // writable and unaliased until this call returns.
                let outs = unsafe { OutParams::new(workspace_size, executor) };
                let args = (self_, other, std::ptr::null(), out.cast_const());
                super::phase1(row(), &OP, false, args, outs)
            })
        }
    };
    (@phase1 [$other:literal, alpha] $name:ident) => {
        #[doc = concat!("Simulated `aclnn", stringify!($name), "GetWorkspaceSize`.")]
        ///
        /// # Safety
        /// The C function's contract: each pointer NULL or valid for its access.
        #[cfg_attr(feature = "c-exports", unsafe(export_name = concat!("aclnn", stringify!($name), "GetWorkspaceSize")))]
        pub unsafe extern "C" fn phase1(
            self_: *const aclTensor,
            other: *const aclTensor,
            alpha: *const aclScalar,
            out: *mut aclTensor,
            workspace_size: *mut u64,
            executor: *mut *mut aclOpExecutor,
        ) -> aclnnStatus {
            let code = crate::introspect::fault_code_at(PHASE1.index());
            crate::state::entry(&PHASE1, code, move || {
                // SAFETY: as above.
                let outs = unsafe { OutParams::new(workspace_size, executor) };
                let args = (self_, other, alpha, out.cast_const());
                super::phase1(row(), &OP, false, args, outs)
            })
        }
    };
    (@inplace_phase1 [$other:literal] $inplace:ident) => {
        #[doc = concat!("Simulated `aclnn", stringify!($inplace), "GetWorkspaceSize`.")]
        ///
        /// # Safety
        /// The C function's contract: each pointer NULL or valid for its access.
        #[cfg_attr(feature = "c-exports", unsafe(export_name = concat!("aclnn", stringify!($inplace), "GetWorkspaceSize")))]
        pub unsafe extern "C" fn inplace_phase1(
            self_ref: *mut aclTensor,
            other: *const aclTensor,
            workspace_size: *mut u64,
            executor: *mut *mut aclOpExecutor,
        ) -> aclnnStatus {
            let code = crate::introspect::fault_code_at(INPLACE_PHASE1.index());
            crate::state::entry(&INPLACE_PHASE1, code, move || {
                // SAFETY: as above.
                let outs = unsafe { OutParams::new(workspace_size, executor) };
                let t = self_ref.cast_const();
                super::phase1(row(), &INPLACE_OP, true, (t, other, std::ptr::null(), t), outs)
            })
        }
    };
    (@inplace_phase1 [$other:literal, alpha] $inplace:ident) => {
        #[doc = concat!("Simulated `aclnn", stringify!($inplace), "GetWorkspaceSize`.")]
        ///
        /// # Safety
        /// The C function's contract: each pointer NULL or valid for its access.
        #[cfg_attr(feature = "c-exports", unsafe(export_name = concat!("aclnn", stringify!($inplace), "GetWorkspaceSize")))]
        pub unsafe extern "C" fn inplace_phase1(
            self_ref: *mut aclTensor,
            other: *const aclTensor,
            alpha: *const aclScalar,
            workspace_size: *mut u64,
            executor: *mut *mut aclOpExecutor,
        ) -> aclnnStatus {
            let code = crate::introspect::fault_code_at(INPLACE_PHASE1.index());
            crate::state::entry(&INPLACE_PHASE1, code, move || {
                // SAFETY: as above.
                let outs = unsafe { OutParams::new(workspace_size, executor) };
                let t = self_ref.cast_const();
                super::phase1(row(), &INPLACE_OP, true, (t, other, alpha, t), outs)
            })
        }
    };
}

ascend_ops::binary_family!(sim_binary);
