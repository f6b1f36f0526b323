//! The macro that turns the one list of entry points in the crate root into the `api`
//! functions, their C exports, the `FnTable`, the symbol resolver and the `Sym` index of
//! call counts and faults. An operator's line generates both of its phases.

macro_rules! table_field {
    (req, $f:expr) => {
        $f
    };
    (opt, $f:expr) => {
        Some($f)
    };
}

macro_rules! failure_value {
    (code, $sym:expr) => {
        crate::introspect::fault_code($sym)
    };
    (null, $sym:expr) => {
        std::ptr::null_mut()
    };
    (cnull, $sym:expr) => {
        std::ptr::null()
    };
    (hccl, $sym:expr) => {
        ascend_sys::hccl::HCCL_E_INTERNAL
    };
}

/// One function of `api`: the entry bookkeeping (call count, fault, error text, no
/// unwinding across C) around its implementation, which receives the `lead` arguments
/// (what it shares with its siblings: the operator, the collective, the role) before the
/// C arguments.
macro_rules! sim_entry {
    ($doc:expr, $name:ident ( $($arg:ident : $ty:ty),* ) -> $ret:ty, $fail:expr, $imp:path [$($lead:expr)?]) => {
        #[doc = $doc]
        ///
        /// # Safety
        /// The contract of the C function of the same name: pointer arguments must be null
        /// or valid for the documented accesses.
        pub unsafe extern "C" fn $name( $($arg: $ty),* ) -> $ret {
            crate::state::entry(
                Sym::$name,
                $fail,
                // SAFETY: the caller upholds the C contract of this function, which is all
                // the implementation relies on.
                move || unsafe { $imp( $($lead,)? $($arg),* ) },
            )
        }
    };
}

/// An operator's phase 1 in `api`: [`sim_entry`]'s bookkeeping around its
/// implementation, which receives the operator's own arguments and then the two
/// out-parameters every phase 1 ends in (`workspaceSize`, `executor`) as one
/// [`OutParams`](crate::nnopbase::OutParams).
macro_rules! phase1_entry {
    ($name:ident ( $($arg:ident : $ty:ty),* ), $imp:path [$($lead:expr)?]) => {
        #[doc = concat!("Simulated `", stringify!($name), "` (phase 1).")]
        ///
        /// # Safety
        /// The contract of the C function of the same name: pointer arguments must be null
        /// or valid for the documented accesses.
        pub unsafe extern "C" fn $name(
            $($arg: $ty,)*
            workspace_size: *mut u64,
            executor: *mut *mut aclOpExecutor,
        ) -> aclnnStatus {
            crate::state::entry(Sym::$name, crate::introspect::fault_code(Sym::$name), move || {
                // SAFETY: by the caller's C contract each out-parameter is NULL or writable
                // and unaliased until this call returns.
                let outs = unsafe { crate::nnopbase::OutParams::new(workspace_size, executor) };
                $imp( $($lead,)? $($arg,)* outs )
            })
        }
    };
}

/// The C export of one function of `api`, under its own name.
#[cfg(feature = "c-exports")]
macro_rules! c_export {
    ($name:ident ( $($arg:ident : $ty:ty),* ) -> $ret:ty) => {
        /// # Safety
        /// The contract of the C function of the same name.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name( $($arg: $ty),* ) -> $ret {
            // SAFETY: forwarded unchanged under the same contract.
            unsafe { crate::api::$name( $($arg),* ) }
        }
    };
}

/// The simulator's entry points, one line each: the C prototype, then `= implementation`,
/// optionally with `[lead]`, an argument passed before the C ones (the operator kind, the
/// collective, the role), so that siblings share one implementation. An operator's line
/// lists its phase 1's own arguments: the two out-parameters that end every phase 1 are
/// added here.
macro_rules! sim_api {
    (
        table {
            $( $kind:ident $fail:ident $name:ident ( $($arg:ident : $ty:ty),* ) -> $ret:ty = $imp:path; )*
        }
        nnopbase {
            $( $afail:ident $aname:ident ( $($aarg:ident : $aty:ty),* ) -> $aret:ty = $aimp:path; )*
        }
        operators {
            $( $pname:ident ( $($parg:ident : $pty:ty),* ) = $pimp:path $([$plead:expr])?, $oname:ident = $odef:path; )*
        }
        hccl {
            $( $hfail:ident $hname:ident ( $($harg:ident : $hty:ty),* ) -> $hret:ty = $himp:path $([$hlead:expr])?; )*
        }
        extra {
            $( $xname:ident ( $($xarg:ident : $xty:ty),* ) -> $xret:ty = $ximp:path, $xfail:expr; )*
        }
    ) => {
        /// Index of every simulated (counted, faultable) symbol.
        #[allow(non_camel_case_types, clippy::enum_variant_names)]
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub(crate) enum Sym { $( $name, )* $( $aname, )* $( $pname, $oname, )* $( $hname, )* }

        /// Every [`Sym`], in the order of [`SYMBOLS`].
        pub(crate) const SYM_ORDER: &[Sym] = &[ $( Sym::$name, )* $( Sym::$aname, )* $( Sym::$pname, Sym::$oname, )* $( Sym::$hname, )* ];

        /// Every simulated symbol (the functions of [`ascend_sys::FnTable`], then the
        /// other nnopbase functions, then the operators, then HCCL's), by C name.
        pub const SYMBOLS: &[&str] = &[ $( stringify!($name), )* $( stringify!($aname), )* $( stringify!($pname), stringify!($oname), )* $( stringify!($hname), )* ];
        pub(crate) const SYMBOL_COUNT: usize = SYMBOLS.len();
        /// Index in [`SYMBOLS`] of the first nnopbase function outside the table.
        pub(crate) const FIRST_NNOPBASE: usize = [ $( stringify!($name), )* ].len();
        /// Index in [`SYMBOLS`] of the first operator entry point.
        pub(crate) const FIRST_OPERATOR: usize = FIRST_NNOPBASE + [ $( stringify!($aname), )* ].len();
        /// Index in [`SYMBOLS`] of the first HCCL function.
        pub(crate) const FIRST_HCCL: usize = SYMBOL_COUNT - [ $( stringify!($hname), )* ].len();

        /// The simulated functions, callable from Rust under ordinary mangled names.
        ///
        /// Each has exactly the prototype and contract of the C function of the same name
        /// (see [`model`](crate::model) for what the simulator models and checks).
        #[allow(non_snake_case, clippy::too_many_arguments)]
        pub mod api {
            use super::*;
            $(
                sim_entry!(concat!("Simulated `", stringify!($name), "`."), $name( $($arg: $ty),* ) -> $ret, failure_value!($fail, Sym::$name), $imp []);
            )*
            $(
                sim_entry!(concat!("Simulated `", stringify!($aname), "`."), $aname( $($aarg: $aty),* ) -> $aret, failure_value!($afail, Sym::$aname), $aimp []);
            )*
            $(
                phase1_entry!($pname( $($parg: $pty),* ), $pimp [$($plead)?]);

                #[doc = concat!("Simulated `", stringify!($oname), "` (phase 2).")]
                ///
                /// # Safety
                /// The contract of the C function of the same name: pointer arguments must
                /// be null or valid for the documented accesses.
                pub unsafe extern "C" fn $oname(
                    workspace: *mut c_void,
                    workspace_size: u64,
                    executor: *mut aclOpExecutor,
                    stream: aclrtStream,
                ) -> aclnnStatus {
                    crate::state::entry_with_fault_effect(
                        Sym::$oname,
                        crate::introspect::fault_code(Sym::$oname),
                        move || nnopbase::release_on_fault(executor),
                        move || nnopbase::phase2(&$odef, workspace, workspace_size, executor, stream),
                    )
                }
            )*
            $(
                sim_entry!(concat!("Simulated `", stringify!($hname), "` (HCCL)."), $hname( $($harg: $hty),* ) -> $hret, failure_value!($hfail, Sym::$hname), $himp [$($hlead)?]);
            )*
            $(
                #[doc = concat!("`", stringify!($xname), "`: see [`Counters`](crate::Counters) and [`set_fault`](crate::set_fault).")]
                ///
                /// # Safety
                /// Pointer arguments must be null or valid for the documented accesses.
                pub unsafe extern "C" fn $xname( $($xarg: $xty),* ) -> $xret {
                    // SAFETY: as above, the caller upholds the documented contract.
                    crate::state::guard($xfail, move || unsafe { $ximp( $($xarg),* ) })
                }
            )*
        }

        #[cfg(feature = "c-exports")]
        #[allow(non_snake_case, clippy::too_many_arguments, missing_docs)]
        mod c_exports {
            use super::*;
            $(
                c_export!($name( $($arg: $ty),* ) -> $ret);
            )*
            $(
                c_export!($aname( $($aarg: $aty),* ) -> $aret);
            )*
            $(
                c_export!($pname(
                    $($parg: $pty,)*
                    workspace_size: *mut u64,
                    executor: *mut *mut aclOpExecutor
                ) -> aclnnStatus);
                c_export!($oname(
                    workspace: *mut c_void,
                    workspace_size: u64,
                    executor: *mut aclOpExecutor,
                    stream: aclrtStream
                ) -> aclnnStatus);
            )*
            $(
                c_export!($hname( $($harg: $hty),* ) -> $hret);
            )*
            $(
                c_export!($xname( $($xarg: $xty),* ) -> $xret);
            )*
        }

        /// The simulator's runtime and nnopbase functions as an [`FnTable`], every optional
        /// entry `Some`. Operators are found by [`symbol`].
        pub fn fn_table() -> FnTable {
            FnTable {
                $( $name: table_field!($kind, api::$name as unsafe extern "C" fn($($ty),*) -> $ret), )*
            }
        }

        /// The in-process address of the simulated function named `name` (runtime,
        /// nnopbase, operator or HCCL), with exactly the C prototype of that name; `None` for a
        /// name the simulator does not implement. The resolver for
        /// [`ascend_sys::Api::from_table_with_resolver`].
        pub fn symbol(name: &str) -> Option<*const c_void> {
            match name {
                $( stringify!($name) => Some(api::$name as *const c_void), )*
                $( stringify!($aname) => Some(api::$aname as *const c_void), )*
                $( stringify!($pname) => Some(api::$pname as *const c_void), )*
                $( stringify!($oname) => Some(api::$oname as *const c_void), )*
                $( stringify!($hname) => Some(api::$hname as *const c_void), )*
                _ => crate::catalog::address(name),
            }
        }
    };
}
