//! [`operator!`]: the one place an operator is declared.

/// Declares an aclnn operator and generates everything the crate needs of it.
///
/// ```text
/// operator! {
///     /// docs of the marker type
///     pub struct MishBackward: aclnnMishBackward, aclnnMishBackwardGetWorkspaceSize;
///     products: |soc: SocFamily| soc != SocFamily::Atlas310B;
///     dtypes: |soc: SocFamily, dtype: DType| dtype != DType::BF16 || soc.has_bf16();
///     shape: Broadcast;                      // or Same
///
///     /// docs of the function
///     pub fn mish_backward<G, X, O>(
///         grad: input<G> = "grad_output",     // Rust name: role<element type> = C name
///         x: input<X> = "self",
///         out: output<O> = "grad_input",       // input, output or inplace
///     );
///
///     /// docs of the plan
///     pub type MishBackwardPlan;
/// }
/// ```
///
/// Arguments are listed in the order of phase 1. The declaration generates:
/// * the marker type (`MishBackward`) with `NAME`, `ARGS`, `SHAPE`, `available_on` and
///   `supports`, and its [`Operator`](super::Operator) implementation; the entry points are
///   looked up by name at run time;
/// * a compile-time check that phase 1 has exactly one `const aclTensor *` per input and
///   one `aclTensor *` per output or in-place argument, in this order, then the two
///   out-pointers, and that phase 2 has the common prototype (against the bindgen
///   declarations of `ascend-sys`);
/// * the function: inputs are any [`AsTensorView`](crate::AsTensorView), outputs and
///   in-place arguments any [`AsTensorViewMut`](crate::AsTensorViewMut), then the stream;
/// * the plan type, a [`Plan`](crate::Plan) of the operator and the element types, with
///   `new` (the same tensors, read only for their layouts) and `launch` (as the function).
macro_rules! operator {
    (
        $(#[$op_doc:meta])*
        pub struct $op:ident: $phase2:ident, $phase1:ident;
        products: $products:expr;
        dtypes: $dtypes:expr;
        shape: $shape:ident;

        $(#[$fn_doc:meta])*
        pub fn $fname:ident<$($ty:ident),+>(
            $($arg:ident: $role:ident<$elem:ident> = $cname:literal),+ $(,)?
        );

        $(#[$plan_doc:meta])*
        pub type $plan:ident;
    ) => {
        $(#[$op_doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub struct $op;

        impl $op {
            /// The C name of the operator (its phase 2).
            pub const NAME: &'static str = stringify!($phase2);
            /// Its tensor arguments (C names and roles), in the order of phase 1.
            pub const ARGS: &'static [$crate::ops::Arg] = &[$($crate::ops::Arg {
                name: $cname,
                role: $crate::protocol::operator!(@role $role),
            }),+];
            /// Its shape rule.
            pub const SHAPE: $crate::ops::ShapeRule = $crate::ops::ShapeRule::$shape;

            /// Whether products of the family have the operator (a SoC name this crate
            /// does not know is left to the library).
            pub fn available_on(soc: $crate::SocFamily) -> bool {
                ($products)(soc)
            }

            /// Whether its arguments may have `dtype` on the family.
            pub fn supports(soc: $crate::SocFamily, dtype: $crate::DType) -> bool {
                ($dtypes)(soc, dtype)
            }
        }

        impl $crate::protocol::Operator for $op {
            const NAME: &'static str = $op::NAME;
            const ARGS: &'static [$crate::ops::Arg] = $op::ARGS;
            const SHAPE: $crate::ops::ShapeRule = $op::SHAPE;

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
        }

        // Generic and never instantiated: the `extern` declarations are type-checked, never
        // referenced by the linker.
        const _: () = {
            #[allow(dead_code, clippy::extra_unused_type_parameters)]
            fn prototypes_match_header<T>() {
                let _: unsafe extern "C" fn(
                    $($crate::protocol::operator!(@ptr $role),)+
                    *mut u64,
                    *mut *mut ascend_sys::aclOpExecutor,
                ) -> ascend_sys::aclnnStatus = ascend_sys::$phase1;
                let _: ascend_sys::OperatorLaunchFn = ascend_sys::$phase2;
            }
        };

        $(#[$fn_doc])*
        pub fn $fname<$($ty: $crate::Element),+>(
            $($arg: $crate::protocol::operator!(@param $role $elem),)+
            stream: &$crate::Stream,
        ) -> $crate::Result<()> {
            $(#[allow(unused_mut)] let mut $arg = $arg;)+
            $crate::protocol::call($op, stream, [$($crate::protocol::operator!(@raw $role $arg)),+])
        }

        $(#[$plan_doc])*
        pub type $plan<$($ty),+> = $crate::Plan<$op, ($($elem,)+)>;

        impl<$($ty: $crate::Element),+> $crate::Plan<$op, ($($elem,)+)> {
            #[doc = concat!(
                "Validates like [`", stringify!($fname), "`] and runs phase 1 once for these ",
                "tensors' layouts. Nothing is computed: outputs are read only for their layout."
            )]
            ///
            /// # Errors
            #[doc = concat!(
                "As [`", stringify!($fname), "`]; [`Error::Aclnn`](crate::Error::Aclnn) from ",
                "phase 1 or `aclSetAclOpExecutorRepeatable`."
            )]
            pub fn new(
                $($arg: impl $crate::AsTensorView<Elem = $elem>,)+
                stream: &$crate::Stream,
            ) -> $crate::Result<Self> {
                Self::build(stream, [$($arg.as_tensor_view().raw()),+])
            }

            #[doc = concat!(
                "Queues `", stringify!($phase2), "` on `stream` for tensors with the planned ",
                "layouts (dims, strides, offset), in any storage, rebinding the addresses ",
                "that changed since the last launch. Does not allocate."
            )]
            ///
            /// # Errors
            /// [`Error::DeviceMismatch`](crate::Error::DeviceMismatch),
            /// [`Error::PlanMismatch`](crate::Error::PlanMismatch) naming the first argument
            /// whose layout differs; [`Error::Aclnn`](crate::Error::Aclnn) from the library.
            pub fn launch(
                &mut self,
                $($arg: $crate::protocol::operator!(@param $role $elem),)+
                stream: &$crate::Stream,
            ) -> $crate::Result<()> {
                $(#[allow(unused_mut)] let mut $arg = $arg;)+
                self.run(stream, [$($crate::protocol::operator!(@raw $role $arg)),+])
            }
        }
    };

    (@role input) => { $crate::ops::Role::Input };
    (@role output) => { $crate::ops::Role::Output };
    (@role inplace) => { $crate::ops::Role::InPlace };
    (@ptr input) => { *const ascend_sys::aclTensor };
    (@ptr output) => { *mut ascend_sys::aclTensor };
    (@ptr inplace) => { *mut ascend_sys::aclTensor };
    (@param input $e:ident) => { impl $crate::AsTensorView<Elem = $e> };
    (@param output $e:ident) => { impl $crate::AsTensorViewMut<Elem = $e> };
    (@param inplace $e:ident) => { impl $crate::AsTensorViewMut<Elem = $e> };
    (@raw input $a:ident) => { $a.as_tensor_view().raw() };
    (@raw output $a:ident) => { $a.as_tensor_view_mut().raw() };
    (@raw inplace $a:ident) => { $a.as_tensor_view_mut().raw() };
}

pub(crate) use operator;
