//! The two C entry points of one operator and their catalog entries, written once for
//! the random and indexing operators (each phase 1 has its own prototype, phase 2 the
//! common one).

/// Declares, in a module `$module`, the simulated phase 1 `$p1` (its C prototype without
/// the two out-parameters, its checks in `$checks`, a function taking those arguments and
/// the [`OutParams`](crate::nnopbase::OutParams)) and the phase 2 of `$op`, exported under
/// their C names, with `ENTRIES` for the catalog.
macro_rules! entry_pair {
    ($module:ident: $p1:literal ($($arg:ident: $ty:ty),* $(,)?) => $checks:path; $p2:literal => $op:path) => {
        pub(crate) mod $module {
            #[allow(unused_imports)]
            use super::*;
            use crate::catalog::{Entry, Slot};
            use ascend_sys::{aclOpExecutor, aclnnStatus, aclrtStream};
            use std::ffi::c_void;

            static PHASE1: Slot = Slot::new($p1);
            static PHASE2: Slot = Slot::new($p2);

            /// The entry points, for the catalog.
            pub(crate) static ENTRIES: &[Entry] = &[
                Entry { name: $p1, address: || phase1 as *const c_void },
                Entry { name: $p2, address: || phase2 as *const c_void },
            ];

            /// The simulated phase 1.
            ///
            /// # Safety
            /// The C function's contract: each pointer NULL or valid for its access.
            #[allow(clippy::too_many_arguments)]
            #[cfg_attr(feature = "c-exports", unsafe(export_name = $p1))]
            pub unsafe extern "C" fn phase1(
                $($arg: $ty,)*
                workspace_size: *mut u64,
                executor: *mut *mut aclOpExecutor,
            ) -> aclnnStatus {
                let code = crate::introspect::fault_code_at(PHASE1.index());
                crate::state::entry(&PHASE1, code, move || {
                    // SAFETY: by the caller's C contract each out-parameter is NULL or
                    // writable and unaliased until this call returns.
                    let outs = unsafe { crate::nnopbase::OutParams::new(workspace_size, executor) };
                    $checks($($arg,)* outs)
                })
            }

            /// The simulated phase 2.
            ///
            /// # Safety
            /// The C function's contract: each pointer NULL or valid for its access.
            #[cfg_attr(feature = "c-exports", unsafe(export_name = $p2))]
            pub unsafe extern "C" fn phase2(
                workspace: *mut c_void,
                workspace_size: u64,
                executor: *mut aclOpExecutor,
                stream: aclrtStream,
            ) -> aclnnStatus {
                crate::state::entry_with_fault_effect(
                    &PHASE2,
                    crate::introspect::fault_code_at(PHASE2.index()),
                    move || crate::nnopbase::release_on_fault(executor),
                    move || {
                        crate::nnopbase::phase2(&$op, workspace, workspace_size, executor, stream)
                    },
                )
            }
        }
    };
}
pub(crate) use entry_pair;
