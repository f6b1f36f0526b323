//! The marker type of a declaration, its constants and its typed phase-1 call.

#[doc(hidden)]
#[macro_export]
macro_rules! __operator_decl {
    (@decl $check:ident $input:ident [$($op_doc:tt)*] $op:ident $phase2:ident $phase1:ident;
        products: $products:expr;
        dtypes: $dtypes:expr;
        rule: $rule:expr;

        $(#[$fn_doc:meta])*
        pub fn $fname:ident<$($ty:ident),+>(
            $($arg:ident: $role:ident<$elem:ty> = $cname:literal),+ $(,)?
        );

        $(#[$plan_doc:meta])*
        pub type $plan:ident;
        $(allocating: $newname:ident;)?
    ) => {
        $($op_doc)*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub struct $op;

        impl $op {
            /// The C name of the operator (its phase 2).
            pub const NAME: &'static str = stringify!($phase2);
            /// Its arguments (C names, labels, roles and attribute kinds), in the order of
            /// phase 1.
            pub const ARGS: &'static [$crate::protocol::Arg] = &[$($crate::protocol::Arg {
                name: $cname,
                label: $crate::protocol::label(
                    stringify!($arg),
                    $cname,
                    concat!(stringify!($arg), " (", $cname, ")"),
                ),
                kind: $crate::__operator_role!(@kind $input $role $elem),
            }),+];

            /// Whether products of the family have the operator (a SoC name this crate
            /// does not know is left to the library).
            pub fn available_on(soc: $crate::SocFamily) -> bool {
                ($products)(soc)
            }

            /// Whether its tensor arguments may have `dtype` on the family.
            pub fn supports(soc: $crate::SocFamily, dtype: $crate::DType) -> bool {
                ($dtypes)(soc, dtype)
            }
        }

        impl $crate::protocol::Operator for $op {
            const NAME: &'static str = $op::NAME;
            const ARGS: &'static [$crate::protocol::Arg] = $op::ARGS;

            fn entry_points() -> &'static $crate::protocol::EntryPoints {
                static ENTRY: $crate::protocol::EntryPoints =
                    $crate::protocol::EntryPoints::new(stringify!($phase1), stringify!($phase2));
                &ENTRY
            }

            fn available_on(soc: $crate::SocFamily) -> bool {
                $op::available_on(soc)
            }

            fn supports(soc: $crate::SocFamily, dtype: $crate::DType) -> bool {
                $op::supports(soc, dtype)
            }

            fn check(call: &$crate::protocol::Call<'_>) -> $crate::Result<()> {
                ($rule)(call)
            }

            unsafe fn phase1(
                phase1: ::std::ptr::NonNull<::std::ffi::c_void>,
                args: &[$crate::protocol::CArg],
                workspace_size: *mut u64,
                executor: *mut *mut $crate::__private::ascend_sys::aclOpExecutor,
            ) -> i32 {
                type Phase1 = unsafe extern "C" fn(
                    $($crate::__operator_role!(@cty $role $elem),)+
                    *mut u64,
                    *mut *mut $crate::__private::ascend_sys::aclOpExecutor,
                ) -> i32;
                // One C argument per declared argument (the protocol makes them so).
                let &[$($arg,)+] = args else {
                    return $crate::__private::ascend_sys::ACLNN_ERR_PARAM_INVALID;
                };
                // SAFETY: `phase1` is the address of this operator's phase 1, whose
                // prototype is `Phase1` (checked against the header, or promised by an
                // `unsafe` declaration); the arguments are live handles and values of the
                // declared kinds (the caller's contract).
                unsafe {
                    let f = ::std::mem::transmute::<*mut ::std::ffi::c_void, Phase1>(
                        phase1.as_ptr(),
                    );
                    f(
                        $(<$crate::__operator_role!(@cty $role $elem) as $crate::protocol::CValue>::from_arg($arg),)+
                        workspace_size,
                        executor,
                    )
                }
            }
        }

        $crate::__operator_check!(@check $check $op $phase1 $phase2 [$($role [$elem]),+]);

        $crate::__operator_munch!(@munch {
            op: $op, fname: $fname, plan: $plan, types: [$($ty),+],
            fn_doc: [$(#[$fn_doc])*], plan_doc: [$(#[$plan_doc])*], alloc: [$($newname)?],
        } [] [] [] [] [] [] [] [] [] $($arg: $role<$elem>,)+);
    };
}
