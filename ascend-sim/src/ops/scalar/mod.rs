//! The tensor–scalar family: every row of [`ascend_ops::scalar`] (`aclnnAdds`, ...) and
//! its in-place twin, with the phase-1 checks of the row's [`Rule`](ascend_ops::scalar::Rule),
//! the kernel and the entry points. Nothing here is per operator but the rules.
//!
//! Complex tensors compute in f64 with the scalar's real part (the imaginary part of a
//! complex scalar is not modelled: such a call fails phase 1 with 561000).

mod kernel;
mod phase1;

use crate::catalog::{Entry, Slot};
use crate::nnopbase::{KernelCall, OpDef, OutParams, positions, release_on_fault};
use crate::stream::Scratch;
use crate::tables::Family;
use ascend_ops::scalar::ScalarOp;
use ascend_sys::*;
use kernel::run;
use phase1::phase1;
use std::ffi::c_void;

positions!(SELF, OUT);
positions!(OTHER_ATTR, ALPHA_ATTR);

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
    // `const_out` changes only the header's `const` of out, not the C ABI.
    (@phase1 [$(const_self_ref)? $(const_out)?] $name:ident $inplace:ident) => {
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
