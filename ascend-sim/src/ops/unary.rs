//! The unary family: every row of [`ascend_ops::unary`] (`aclnnExp`, ...) and its in-place
//! twin, with the phase-1 checks, the kernel and the entry points the row implies. The
//! rows document the checks and the compute; this module holds nothing per operator.

use super::MAX_DIMS;
use super::checks::{refuse_complex, require_cast};
use crate::cast::round;
use crate::catalog::{Entry, Slot};
use crate::nnopbase::{
    Decision, KernelCall, OpDef, OutParams, Phase1, TensorDesc, invalid, positions,
    release_on_fault, require_non_null,
};
use crate::state::status_of;
use crate::stream::Scratch;
use crate::strided::{DType, par_chunks};
use crate::tables::{Family, dtype_name, dtype_size};
use ascend_ops::unary::{Complex64, Inplace, Integers, Out, Unary, is_floating_or_complex};
use ascend_sys::*;
use std::ffi::c_void;

positions!(SELF, OUT);

/// Phase 1 of either form of `row` (the in-place one holds selfRef as both arguments).
fn phase1(
    row: &Unary,
    op: &'static OpDef,
    inplace: bool,
    self_: *const aclTensor,
    out: *const aclTensor,
    outs: OutParams<'_>,
) -> aclnnStatus {
    status_of(|| {
        require_non_null(&[
            (self_ as usize, op.args[SELF]),
            (out as usize, op.args[OUT]),
        ])?;
        let outs = outs.slots()?;
        let p = Phase1::begin(op, &[self_, out], outs)?;
        let product = p.family.product();
        let (x, y) = (p.desc(SELF), p.desc(OUT));
        if let (true, Some((_, Inplace::Checked(list)))) = (inplace, row.inplace) {
            p.require_dtype(SELF, list.on(product))?;
        }
        p.require_dtype(SELF, row.dtypes.on(product))?;
        let compute = row.compute_dtype(x.dtype, y.dtype);
        match row.out {
            Out::Castable => require_cast(compute, (op.args[OUT], y.dtype))?,
            Out::InList(list) => p.require_dtype(OUT, list.on(product))?,
            Out::InListCastable(list) => {
                p.require_dtype(OUT, list.on(product))?;
                require_cast(x.dtype, (op.args[OUT], y.dtype))?;
            }
            Out::InSelfListCastable => {
                p.require_dtype(OUT, row.dtypes.on(product))?;
                require_cast(compute, (op.args[OUT], y.dtype))?;
            }
            Out::Same if y.dtype != x.dtype => {
                return Err(invalid(format!(
                    "{} dtype {} is not {}'s dtype {}",
                    op.args[OUT],
                    dtype_name(y.dtype),
                    op.args[SELF],
                    dtype_name(x.dtype)
                )));
            }
            Out::Same => {}
            Out::Magnitude => {
                let want = row.default_out_dtype(x.dtype);
                if y.dtype != want {
                    return Err(invalid(format!(
                        "{} dtype {} is not {} (of {} {})",
                        op.args[OUT],
                        dtype_name(y.dtype),
                        dtype_name(want),
                        op.args[SELF],
                        dtype_name(x.dtype)
                    )));
                }
            }
        }
        if !row.rank_if_strided {
            p.require_max_dims(SELF, MAX_DIMS)?;
        }
        if *y.dims != *x.dims {
            return Err(invalid(format!(
                "{} shape {:?} is not {}'s shape {:?}",
                op.args[OUT], y.dims, op.args[SELF], x.dims
            )));
        }
        if row.rank_if_strided && !(x.is_contiguous() && y.is_contiguous()) {
            // Contiguous tensors of any rank pass (the vendor only warns).
            p.require_max_dims(SELF, MAX_DIMS)?;
            p.require_max_dims(OUT, MAX_DIMS)?;
        }
        if row.complex.is_none() {
            refuse_complex(compute, &format!("{} {}", dtype_name(compute), row.name))?;
        }
        let mut decision = Decision::new(compute, &x.dims, x.is_empty());
        let strided = |d: &TensorDesc| !d.is_contiguous();
        let size = |d: &TensorDesc| dtype_size(d.dtype).unwrap_or(1);
        decision.temporary(SELF, strided(x), size(x))?;
        decision.temporary(OUT, strided(y), size(y))?;
        p.finish(decision)
    })
}

/// The queued compute: `self` read whole before `out` is written, so the in-place form
/// needs no care about overlap.
fn run(row: &Unary, call: &KernelCall, scratch: &mut Scratch) -> Result<(), String> {
    let compute = call.decision().compute;
    let n = call.decision().numel();
    let (self_dtype, out_dtype) = (call.dtype(SELF)?, call.dtype(OUT)?);
    if let (ACL_COMPLEX64 | ACL_COMPLEX128, Some(f)) = (compute, row.complex) {
        return complex(call, f, compute);
    }
    if matches!(row.integers, Integers::Identity) && !is_floating_or_complex(self_dtype) {
        let mut bytes = vec![0u8; n * dtype_size(self_dtype).ok_or("no element size")?];
        call.gather_as(SELF, self_dtype, &mut bytes)?;
        return call.scatter_bytes(OUT, &bytes);
    }
    let no_temporaries = call.decision().ws[SELF].is_none() && call.decision().ws[OUT].is_none();
    if compute == ACL_FLOAT
        && no_temporaries
        && let Some(done) = call.dense_f32([SELF], OUT, |[x]| (row.f32)(x))
    {
        return done;
    }
    if let Some(dt) =
        DType::from_acl(compute).filter(|_| self_dtype == compute && out_dtype == compute)
    {
        let [x] = scratch.get::<1>(n);
        call.read(SELF, &call.decision().out_shape, x)?;
        call.through_workspace(SELF, dt, x)?;
        let f = row.f32;
        par_chunks(x, |_, x| {
            if dt == DType::F32 {
                x.iter_mut().for_each(|v| *v = f(*v));
            } else {
                x.iter_mut().for_each(|v| *v = dt.round(f(*v)));
            }
        });
        call.through_workspace(OUT, dt, x)?;
        return call.write(OUT, x);
    }
    let [x] = scratch.wide::<1>(n);
    call.read_f64(SELF, &call.decision().out_shape, x)?;
    for v in x.iter_mut() {
        let input = round(compute, *v);
        *v = match (compute, row.integers) {
            (ACL_DOUBLE, _) => (row.f64)(input),
            (ACL_FLOAT | ACL_FLOAT16 | ACL_BF16, _) => {
                round(compute, f64::from((row.f32)(input as f32)))
            }
            (_, Integers::Kernel(g)) => round(compute, g(input as i64) as f64),
            _ => {
                return Err(format!(
                    "{} has no kernel for {}",
                    row.name,
                    dtype_name(compute)
                ));
            }
        };
    }
    call.write_f64(OUT, x)
}

/// The complex kernel: `f` in f64, each part rounded to `compute`'s, then written as
/// `out`'s dtype.
fn complex(
    call: &KernelCall,
    f: fn(Complex64) -> Complex64,
    compute: aclDataType,
) -> Result<(), String> {
    let values: Vec<Complex64> = super::complex::read(call, SELF)?
        .into_iter()
        .map(|z| super::complex::narrow(compute, f(z)))
        .collect();
    super::complex::write(call, OUT, &values)
}

/// Whether `family` has the row's kernel.
fn available(row: &Unary, family: Family) -> bool {
    row.available_on(family.product())
}

/// One row's operator kinds, kernel and entry points (a module per row, named after the
/// row's Rust name).
macro_rules! sim_unary {
    ($(
        $(#[$doc:meta])*
        $rust:ident($name:ident $(, $inplace:ident)?) $([$quirk:ident])? { $($facts:tt)* }
    )*) => {
        $(
            pub(crate) mod $rust {
                use super::*;

                fn row() -> &'static Unary {
                    static ROW: std::sync::OnceLock<&'static Unary> = std::sync::OnceLock::new();
                    ROW.get_or_init(|| {
                        ascend_ops::unary::row(stringify!($name))
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

                static PHASE1: Slot = Slot::new(concat!("aclnn", stringify!($name), "GetWorkspaceSize"));
                static PHASE2: Slot = Slot::new(concat!("aclnn", stringify!($name)));

                #[doc = concat!("Simulated `aclnn", stringify!($name), "GetWorkspaceSize`.")]
                ///
                /// # Safety
                /// The C function's contract: each pointer NULL or valid for its access.
                #[cfg_attr(feature = "c-exports", unsafe(export_name = concat!("aclnn", stringify!($name), "GetWorkspaceSize")))]
                pub unsafe extern "C" fn phase1(
                    self_: *const aclTensor,
                    out: *mut aclTensor,
                    workspace_size: *mut u64,
                    executor: *mut *mut aclOpExecutor,
                ) -> aclnnStatus {
                    let code = crate::introspect::fault_code_at(PHASE1.index());
                    crate::state::entry(&PHASE1, code, move || {
                        // SAFETY: by the caller's C contract each out-parameter is NULL or
                        // writable and unaliased until this call returns.
                        let outs = unsafe { OutParams::new(workspace_size, executor) };
                        super::phase1(row(), &OP, false, self_, out, outs)
                    })
                }

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

                $(
                    pub(crate) static INPLACE_OP: OpDef = OpDef {
                        name: stringify!($inplace),
                        launch_api: concat!("aclnn", stringify!($inplace)),
                        args: &["selfRef", "selfRef"],
                        inputs: &[SELF],
                        outputs: &[OUT],
                        available,
                        kernel,
                    };

                    static INPLACE_PHASE1: Slot =
                        Slot::new(concat!("aclnn", stringify!($inplace), "GetWorkspaceSize"));
                    static INPLACE_PHASE2: Slot = Slot::new(concat!("aclnn", stringify!($inplace)));

                    #[doc = concat!("Simulated `aclnn", stringify!($inplace), "GetWorkspaceSize`.")]
                    ///
                    /// # Safety
                    /// The C function's contract: each pointer NULL or valid for its access.
                    #[cfg_attr(feature = "c-exports", unsafe(export_name = concat!("aclnn", stringify!($inplace), "GetWorkspaceSize")))]
                    pub unsafe extern "C" fn inplace_phase1(
                        self_ref: *mut aclTensor,
                        workspace_size: *mut u64,
                        executor: *mut *mut aclOpExecutor,
                    ) -> aclnnStatus {
                        let code = crate::introspect::fault_code_at(INPLACE_PHASE1.index());
                        crate::state::entry(&INPLACE_PHASE1, code, move || {
                            // SAFETY: as in `phase1`.
                            let outs = unsafe { OutParams::new(workspace_size, executor) };
                            super::phase1(row(), &INPLACE_OP, true, self_ref, self_ref, outs)
                        })
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
}

/// Phase 2 of a catalogued operator (a family's or a user's): the bookkeeping of every
/// entry point around nnopbase's phase 2.
pub(crate) fn launch(
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

ascend_ops::unary_family!(sim_unary);
