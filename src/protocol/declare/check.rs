//! The compile-time check of a declaration's prototypes, or of its promise.

#[doc(hidden)]
#[macro_export]
macro_rules! __operator_check {
    // The prototypes, against the header: generic and never instantiated, so the `extern`
    // declarations are type-checked, never referenced by the linker.
    (@check checked $op:ident $phase1:ident $phase2:ident [$($role:ident [$elem:ty]),+]) => {
        const _: () = {
            #[allow(dead_code, clippy::extra_unused_type_parameters)]
            fn prototypes_match_header<T>() {
                let _: unsafe extern "C" fn(
                    $($crate::__operator_role!(@cty $role $elem),)+
                    *mut u64,
                    *mut *mut $crate::__private::ascend_sys::aclOpExecutor,
                ) -> $crate::__private::ascend_sys::aclnnStatus =
                    $crate::__private::ascend_sys::$phase1;
                let _: $crate::__private::ascend_sys::OperatorLaunchFn =
                    $crate::__private::ascend_sys::$phase2;
            }
        };
    };
    // Nothing to check the prototypes against: the declaring crate's `unsafe impl` of
    // `Promise` is required instead.
    (@check unchecked $op:ident $phase1:ident $phase2:ident [$($role:ident [$elem:ty]),+]) => {
        const _: () = {
            fn promised<P: $crate::protocol::Promise>() {}
            let _: fn() = promised::<$op>;
        };
    };
}
