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

macro_rules! sim_api {
    (
        table {
            $( $kind:ident $fail:ident $name:ident ( $($arg:ident : $ty:ty),* ) -> $ret:ty = $imp:path; )*
        }
        nnopbase {
            $( $afail:ident $aname:ident ( $($aarg:ident : $aty:ty),* ) -> $aret:ty = $aimp:path; )*
        }
        operators {
            $( $pname:ident ( $($parg:ident : $pty:ty),* ) = $pimp:path, $oname:ident = $odef:path; )*
        }
        hccl {
            $( $hfail:ident $hname:ident ( $($harg:ident : $hty:ty),* ) -> $hret:ty = $himp:path; )*
        }
        extra {
            $( $xname:ident ( $($xarg:ident : $xty:ty),* ) -> $xret:ty = $ximp:path, $xfail:expr; )*
        }
    ) => {
        /// Index of every simulated (counted, faultable) symbol.
        #[allow(non_camel_case_types, clippy::enum_variant_names)]
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub(crate) enum Sym { $( $name, )* $( $aname, )* $( $pname, $oname, )* $( $hname, )* }

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
                #[doc = concat!("Simulated `", stringify!($name), "`.")]
                ///
                /// # Safety
                /// The contract of the C function of the same name: pointer arguments must
                /// be null or valid for the documented accesses.
                pub unsafe extern "C" fn $name( $($arg: $ty),* ) -> $ret {
                    crate::state::entry(
                        Sym::$name,
                        failure_value!($fail, Sym::$name),
                        // SAFETY: the caller upholds the C contract of this function, which
                        // is all the implementation relies on.
                        move || unsafe { $imp( $($arg),* ) },
                    )
                }
            )*
            $(
                #[doc = concat!("Simulated `", stringify!($aname), "`.")]
                ///
                /// # Safety
                /// The contract of the C function of the same name: pointer arguments must
                /// be null or valid for the documented accesses.
                pub unsafe extern "C" fn $aname( $($aarg: $aty),* ) -> $aret {
                    crate::state::entry(
                        Sym::$aname,
                        failure_value!($afail, Sym::$aname),
                        // SAFETY: the caller upholds the C contract of this function, which
                        // is all the implementation relies on.
                        move || unsafe { $aimp( $($aarg),* ) },
                    )
                }
            )*
            $(
                #[doc = concat!("Simulated `", stringify!($pname), "` (phase 1).")]
                ///
                /// # Safety
                /// The contract of the C function of the same name: pointer arguments must
                /// be null or valid for the documented accesses.
                pub unsafe extern "C" fn $pname( $($parg: $pty),* ) -> aclnnStatus {
                    crate::state::entry(
                        Sym::$pname,
                        crate::introspect::fault_code(Sym::$pname),
                        // SAFETY: the caller upholds the C contract of this function, which
                        // is all the implementation relies on.
                        move || unsafe { $pimp( $($parg),* ) },
                    )
                }

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
                #[doc = concat!("Simulated `", stringify!($hname), "` (HCCL).")]
                ///
                /// # Safety
                /// The contract of the C function of the same name: pointer arguments must
                /// be null or valid for the documented accesses.
                pub unsafe extern "C" fn $hname( $($harg: $hty),* ) -> $hret {
                    crate::state::entry(
                        Sym::$hname,
                        failure_value!($hfail, Sym::$hname),
                        // SAFETY: the caller upholds the C contract of this function, which
                        // is all the implementation relies on.
                        move || unsafe { $himp( $($harg),* ) },
                    )
                }
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
                /// # Safety
                /// The contract of the C function of the same name.
                #[unsafe(no_mangle)]
                pub unsafe extern "C" fn $name( $($arg: $ty),* ) -> $ret {
                    // SAFETY: forwarded unchanged under the same contract.
                    unsafe { crate::api::$name( $($arg),* ) }
                }
            )*
            $(
                /// # Safety
                /// The contract of the C function of the same name.
                #[unsafe(no_mangle)]
                pub unsafe extern "C" fn $aname( $($aarg: $aty),* ) -> $aret {
                    // SAFETY: forwarded unchanged under the same contract.
                    unsafe { crate::api::$aname( $($aarg),* ) }
                }
            )*
            $(
                /// # Safety
                /// The contract of the C function of the same name.
                #[unsafe(no_mangle)]
                pub unsafe extern "C" fn $pname( $($parg: $pty),* ) -> aclnnStatus {
                    // SAFETY: forwarded unchanged under the same contract.
                    unsafe { crate::api::$pname( $($parg),* ) }
                }

                /// # Safety
                /// The contract of the C function of the same name.
                #[unsafe(no_mangle)]
                pub unsafe extern "C" fn $oname(
                    workspace: *mut c_void,
                    workspace_size: u64,
                    executor: *mut aclOpExecutor,
                    stream: aclrtStream,
                ) -> aclnnStatus {
                    // SAFETY: forwarded unchanged under the same contract.
                    unsafe { crate::api::$oname(workspace, workspace_size, executor, stream) }
                }
            )*
            $(
                /// # Safety
                /// The contract of the C function of the same name.
                #[unsafe(no_mangle)]
                pub unsafe extern "C" fn $hname( $($harg: $hty),* ) -> $hret {
                    // SAFETY: forwarded unchanged under the same contract.
                    unsafe { crate::api::$hname( $($harg),* ) }
                }
            )*
            $(
                /// # Safety
                /// See [`Counters`](crate::Counters) and [`set_fault`](crate::set_fault).
                #[unsafe(no_mangle)]
                pub unsafe extern "C" fn $xname( $($xarg: $xty),* ) -> $xret {
                    // SAFETY: forwarded unchanged under the same contract.
                    unsafe { crate::api::$xname( $($xarg),* ) }
                }
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
                _ => None,
            }
        }
    };
}
