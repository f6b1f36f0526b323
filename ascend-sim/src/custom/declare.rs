//! [`simulated_operator!`](crate::simulated_operator): a user's operator in a few lines.

/// Declares an operator for the simulator: a `static`
/// [`SimulatedOperator`](crate::custom::SimulatedOperator) to pass to
/// [`register`](crate::register), and its two entry points as `extern "C"` functions of
/// the operator's exact C prototypes.
///
/// ```text
/// ascend_sim::simulated_operator! {
///     /// docs of the static
///     pub static SOFTPLUS: aclnnSoftplus, aclnnSoftplusGetWorkspaceSize(
///         self_: input = "self",       // Rust name: role = "vendor's name" (optional)
///         beta: scalar,
///         threshold: scalar,
///         out: output,
///     );
///     checks: |c: &Checks<'_>| ...;     // optional: fn(&Checks) -> Result<(), Refused>
///     output: |c: &Checks<'_>| ...;     // out's dtype and shape, as fn(&Checks) -> ...
///     kernel: |k: &mut Kernel<'_>| ...; // fn(&mut Kernel) -> Result<(), String>
/// }
/// ```
///
/// The parameters are phase 1's, in order, without the `workspaceSize` and `executor`
/// that end every phase 1 (the macro adds them):
///
/// | role | C type | |
/// |---|---|---|
/// | `input` | `const aclTensor *` | read |
/// | `output` | `aclTensor *` | written |
/// | `output_const` | `const aclTensor *` | written (headers that declare `out` const) |
/// | `inplace` | `aclTensor *` | read and written |
/// | `scalar` | `const aclScalar *` | read in phase 1 |
/// | `int` | `int64_t` | |
/// | `double` | `double` | |
/// | `bool` | `bool` | |
///
/// Checks, kernel and messages name each parameter by its vendor name (`= "self"`), or by
/// its Rust name when none is given. An executor holds 8 tensor slots (an `inplace`
/// tensor takes two) and 4 values.
///
/// Phase 1 runs the shared steps (NULL checks in order, live handles, runtime and
/// context), then `checks`, then `output`; the executor records the first output's dtype
/// and shape, and nothing is computed for an empty output. The generated functions
/// (`$phase1` and `$phase2`, named after the C names) are found through
/// [`symbol`](crate::symbol) once registered; calling one registers the operator.
///
/// See [the module](crate::custom) for a complete example.
#[macro_export]
macro_rules! simulated_operator {
    (
        $(#[$meta:meta])*
        $vis:vis static $op:ident: $phase2:ident, $phase1:ident(
            $($arg:ident: $role:ident $(= $cname:literal)?),* $(,)?
        );
        $(checks: $checks:expr;)?
        output: $output:expr;
        kernel: $kernel:expr;
    ) => {
        $(#[$meta])*
        $vis static $op: $crate::custom::SimulatedOperator =
            $crate::custom::SimulatedOperator::__new(
                stringify!($phase1),
                stringify!($phase2),
                &[$($crate::custom::Param {
                    name: $crate::simulated_operator!(@name $arg $($cname)?),
                    role: $crate::simulated_operator!(@role $role),
                }),*],
                $crate::simulated_operator!(@checks $($checks)?),
                $output,
                $kernel,
                || $phase1 as *const ::std::ffi::c_void,
                || $phase2 as *const ::std::ffi::c_void,
            );

        #[doc = concat!("`", stringify!($phase1), "` on the simulator (phase 1 of [`", stringify!($op), "`]).")]
        ///
        /// # Safety
        /// The C function's contract: each pointer NULL or valid for its access.
        #[allow(non_snake_case, clippy::too_many_arguments)]
        $vis unsafe extern "C" fn $phase1(
            $($arg: $crate::simulated_operator!(@ty $role),)*
            workspace_size: *mut u64,
            executor: *mut *mut $crate::sys::aclOpExecutor,
        ) -> $crate::sys::aclnnStatus {
            // SAFETY: the out-parameters come from this function's caller, under its C
            // contract; the other arguments are only read as handles and values.
            unsafe {
                $op.__phase1(
                    &[$($crate::simulated_operator!(@raw $role $arg)),*],
                    workspace_size,
                    executor,
                )
            }
        }

        #[doc = concat!("`", stringify!($phase2), "` on the simulator (phase 2 of [`", stringify!($op), "`]).")]
        ///
        /// # Safety
        /// The C function's contract: `executor` from this operator's phase 1, `stream`
        /// and `workspace` NULL or valid.
        #[allow(non_snake_case)]
        $vis unsafe extern "C" fn $phase2(
            workspace: *mut ::std::ffi::c_void,
            workspace_size: u64,
            executor: *mut $crate::sys::aclOpExecutor,
            stream: $crate::sys::aclrtStream,
        ) -> $crate::sys::aclnnStatus {
            $op.__phase2(workspace, workspace_size, executor, stream)
        }
    };
    (@name $arg:ident) => { stringify!($arg) };
    (@name $arg:ident $cname:literal) => { $cname };
    (@checks) => { ::core::option::Option::None };
    (@checks $checks:expr) => { ::core::option::Option::Some($checks) };
    (@role input) => { $crate::custom::Role::Input };
    (@role output) => { $crate::custom::Role::Output };
    (@role output_const) => { $crate::custom::Role::OutputConst };
    (@role inplace) => { $crate::custom::Role::Inplace };
    (@role scalar) => { $crate::custom::Role::Scalar };
    (@role int) => { $crate::custom::Role::Int };
    (@role double) => { $crate::custom::Role::Double };
    (@role bool) => { $crate::custom::Role::Bool };
    (@ty input) => { *const $crate::sys::aclTensor };
    (@ty output) => { *mut $crate::sys::aclTensor };
    (@ty output_const) => { *const $crate::sys::aclTensor };
    (@ty inplace) => { *mut $crate::sys::aclTensor };
    (@ty scalar) => { *const $crate::sys::aclScalar };
    (@ty int) => { i64 };
    (@ty double) => { f64 };
    (@ty bool) => { bool };
    (@raw input $a:ident) => { $crate::custom::RawArg::Tensor($a) };
    (@raw output $a:ident) => { $crate::custom::RawArg::Tensor($a.cast_const()) };
    (@raw output_const $a:ident) => { $crate::custom::RawArg::Tensor($a) };
    (@raw inplace $a:ident) => { $crate::custom::RawArg::Tensor($a.cast_const()) };
    (@raw scalar $a:ident) => { $crate::custom::RawArg::Scalar($a) };
    (@raw int $a:ident) => { $crate::custom::RawArg::Int($a) };
    (@raw double $a:ident) => { $crate::custom::RawArg::Double($a) };
    (@raw bool $a:ident) => { $crate::custom::RawArg::Bool($a) };
}
