//! [`operator!`](crate::operator): the one place an operator is declared.

/// The promise of an `unsafe` [`operator!`](crate::operator) declaration (`pub unsafe
/// struct Op: ...`), which the declaring crate states with `unsafe impl Promise for Op {}`
/// next to it: an `unsafe` token of its own, which `#![forbid(unsafe_code)]` and tools
/// that look for `unsafe` see. The declaration does not compile without it.
///
/// # Safety
/// Implementing it for a marker type declared with `pub unsafe struct` promises that:
/// * phase 1 (the `...GetWorkspaceSize` function) takes exactly the declared C parameters,
///   in order, with the C types of their roles, then `uint64_t *workspaceSize,
///   aclOpExecutor **executor`, and returns `aclnnStatus`;
/// * phase 2 has the common prototype (`void *workspace, uint64_t workspaceSize,
///   aclOpExecutor *executor, aclrtStream stream`, returning `aclnnStatus`);
/// * the operator never writes an argument declared `input` (nor one it reads only for
///   its layout), and reads and writes only the elements of the views it is given.
///
/// A wrong promise is undefined behaviour. Implementing it for any other type has no
/// effect.
#[diagnostic::on_unimplemented(
    message = "the `unsafe` operator declaration `{Self}` lacks its promise",
    label = "declared with `pub unsafe struct`",
    note = "state it next to the declaration: `unsafe impl ascendcl::protocol::Promise for {Self} {{}}` (see its `# Safety`)"
)]
pub unsafe trait Promise {}

/// Declares an aclnn operator and generates everything needed to call it: a marker type,
/// a function, and a [`Plan`](crate::Plan) with `new` and `launch`.
///
/// ```text
/// operator! {
///     /// docs of the marker type
///     pub struct Add: aclnnAdd, aclnnAddGetWorkspaceSize;
///     products: |soc: SocFamily| ...;           // fn(SocFamily) -> bool
///     dtypes: |soc: SocFamily, dtype: DType| ...; // for every tensor argument
///     rule: rules::broadcast;                    // fn(&Call) -> Result<()>
///
///     /// docs of the function
///     pub fn add<A, B, O>(
///         a: input<A> = "self",                  // Rust name: role<type> = C name
///         b: input<B> = "other",
///         alpha: attr<Scalar> = "alpha",
///         out: output<O> = "out",
///     );
///
///     /// docs of the plan
///     pub type AddPlan;
/// }
/// ```
///
/// Arguments are listed in the order of phase 1, each with a role:
///
/// | role | C parameter | the function takes | `launch` takes |
/// |---|---|---|---|
/// | `input<T>` | `const aclTensor *` | any [`AsTensorView`](crate::AsTensorView) of `T` | the same |
/// | `output<T>`, `inplace<T>` | `aclTensor *` | any [`AsTensorViewMut`](crate::AsTensorViewMut) of `T` | the same |
/// | `inplace_const<T>` | `const aclTensor *` (written all the same) | as `inplace` | the same |
/// | `output_const<T>` | `const aclTensor *` (written all the same) | as `output` | the same |
/// | `attr<A>` | [`A::C`](crate::protocol::Attribute::C) | `impl Into<A>` | nothing: fixed at `new` |
/// | `dtype_of<T>` | `aclDataType` | nothing: `T`'s dtype (for [`Dyn`](crate::Dyn), the first written tensor's) | nothing |
///
/// Some headers declare a written tensor `const` (`aclnnInplaceAdd`'s `selfRef`), and
/// a declaration cannot prove that the operator only reads a `const aclTensor *`. So in a
/// declaration without `unsafe`, an `input` is read and validated as an input but ordered
/// across streams as if it were written: another stream's later reader or writer waits
/// for the operator. Work on one stream is unaffected; across streams this costs an event
/// wait where a read would need none. An `unsafe` declaration (below) promises that its
/// `input`s are only read, and they are ordered as reads.
///
/// The declaration generates:
/// * the marker type with `NAME`, `ARGS`, `available_on` and `supports`, and its
///   [`Operator`](crate::protocol::Operator) implementation, whose typed phase-1 call passes
///   each argument as its C type (the entry points are looked up by name at run time);
/// * a compile-time check that phase 1 has exactly these C parameters, then the two
///   out-pointers, and that phase 2 has the common prototype, against the declarations of
///   `ascend-sys`;
/// * the function: the arguments, then the stream; it validates everything in Rust (typed
///   errors naming the argument as `"rust (c)"`), then runs the two phases;
/// * the plan type, over a [`Plan`](crate::Plan) of the operator and the function's type
///   parameters, with `new` (the same arguments; tensors are read only for their layouts)
///   and `launch` (the tensors and the stream).
///
/// # Operators the crate does not wrap
///
/// A user crate declares any other aclnn operator the same way. When `ascend-sys` does not
/// declare its prototype, the declaration says `pub unsafe struct`: nothing can check the
/// prototype, and the user makes the promise of [`Promise`](crate::protocol::Promise)
/// with `unsafe impl ascendcl::protocol::Promise for Op {}` (phase 1 takes exactly the
/// listed C parameters, then `uint64_t *workspaceSize, aclOpExecutor **executor`; phase 2
/// has the common prototype; the operator never writes an argument declared `input`). A
/// wrong promise is undefined behaviour. Without the `unsafe impl` the declaration does
/// not compile, so a crate with `#![forbid(unsafe_code)]` cannot make it.
///
/// ```
/// # fn main() -> ascendcl::Result<()> {
/// use ascendcl::protocol::rules;
/// use ascendcl::{DeviceTensor, DType, Runtime, SocFamily};
///
/// ascendcl::operator! {
///     /// `aclnnMish` declared by a user.
///     pub unsafe struct MyMish: aclnnMish, aclnnMishGetWorkspaceSize;
///     products: |soc: SocFamily| soc != SocFamily::Atlas310B;
///     dtypes: |_soc: SocFamily, dtype: DType| dtype != DType::BF16;
///     rule: rules::same;
///
///     /// `out = mish(x)`.
///     pub fn my_mish<T>(x: input<T> = "self", out: output<T> = "out");
///
///     /// Its plan.
///     pub type MyMishPlan;
/// }
///
/// // SAFETY: aclnnMish's phase 1 is `(const aclTensor *self, aclTensor *out, uint64_t *,
/// // aclOpExecutor **)`, its phase 2 the common one, and it only reads `self`.
/// unsafe impl ascendcl::protocol::Promise for MyMish {}
///
/// let stream = Runtime::simulator()?.device(0)?.stream()?;
/// let x = DeviceTensor::from_array(&stream, &ndarray::array![1.0f32, 2.0])?;
/// let mut out = DeviceTensor::<f32>::zeros(&stream, &[2])?;
/// my_mish(&x, &mut out, &stream)?;
/// assert!((out.to_array::<ndarray::Ix1>(&stream)?[0] - 0.865_098).abs() < 1e-5);
/// # Ok(()) }
/// ```
///
/// Without `unsafe`, a declaration is checked against `ascend-sys`, and one whose operator
/// the header does not declare (`aclnnSub` here) is refused at compile time:
///
/// ```compile_fail
/// use ascendcl::protocol::{Scalar, rules};
/// use ascendcl::{DType, SocFamily};
///
/// ascendcl::operator! {
///     /// `aclnnSub` without the promise.
///     pub struct MySub: aclnnSub, aclnnSubGetWorkspaceSize;
///     products: |_soc: SocFamily| true;
///     dtypes: |_soc: SocFamily, _dtype: DType| true;
///     rule: rules::broadcast;
///
///     /// `out = a − alpha·b`.
///     pub fn my_sub<A, B, O>(
///         a: input<A> = "self",
///         b: input<B> = "other",
///         alpha: attr<Scalar> = "alpha",
///         out: output<O> = "out",
///     );
///
///     /// Its plan.
///     pub type MySubPlan;
/// }
/// # fn main() {}
/// ```
///
/// An `unsafe` declaration without its `unsafe impl` of the promise is refused:
///
/// ```compile_fail,E0277
/// use ascendcl::protocol::rules;
/// use ascendcl::{DType, SocFamily};
///
/// ascendcl::operator! {
///     /// `aclnnMish` with no promise stated.
///     pub unsafe struct Unpromised: aclnnMish, aclnnMishGetWorkspaceSize;
///     products: |_soc: SocFamily| true;
///     dtypes: |_soc: SocFamily, _dtype: DType| true;
///     rule: rules::same;
///
///     /// `out = mish(x)`.
///     pub fn unpromised<T>(x: input<T> = "self", out: output<T> = "out");
///
///     /// Its plan.
///     pub type UnpromisedPlan;
/// }
/// # fn main() {}
/// ```
///
/// and a crate that forbids `unsafe` code cannot state it:
///
/// ```compile_fail
/// #![forbid(unsafe_code)]
/// use ascendcl::protocol::rules;
/// use ascendcl::{DType, SocFamily};
///
/// ascendcl::operator! {
///     /// `aclnnMish` in a crate without `unsafe`.
///     pub unsafe struct Forbidden: aclnnMish, aclnnMishGetWorkspaceSize;
///     products: |_soc: SocFamily| true;
///     dtypes: |_soc: SocFamily, _dtype: DType| true;
///     rule: rules::same;
///
///     /// `out = mish(x)`.
///     pub fn forbidden<T>(x: input<T> = "self", out: output<T> = "out");
///
///     /// Its plan.
///     pub type ForbiddenPlan;
/// }
///
/// // SAFETY: as for `MyMish` above.
/// unsafe impl ascendcl::protocol::Promise for Forbidden {}
/// # fn main() {}
/// ```
///
/// A user crate cannot use the crate's own `@verified` form, which orders `input`s as
/// reads without a promise:
///
/// ```compile_fail,E0603
/// use ascendcl::protocol::rules;
/// use ascendcl::{DType, SocFamily};
///
/// ascendcl::operator! {
///     @verified
///     /// `aclnnInplaceAdd`, whose header says `const aclTensor *selfRef`.
///     pub struct Claimed: aclnnInplaceAdd, aclnnInplaceAddGetWorkspaceSize;
///     products: |_soc: SocFamily| true;
///     dtypes: |_soc: SocFamily, _dtype: DType| true;
///     rule: rules::broadcast;
///
///     /// `a = a + alpha·b`.
///     pub fn claimed<A, B>(
///         a: input<A> = "selfRef",
///         b: input<B> = "other",
///         alpha: attr<ascendcl::protocol::Scalar> = "alpha",
///     );
///
///     /// Its plan.
///     pub type ClaimedPlan;
/// }
/// # fn main() {}
/// ```
#[macro_export]
macro_rules! operator {
    (
        $(#[$op_doc:meta])*
        pub struct $op:ident: $phase2:ident, $phase1:ident;
        $($rest:tt)*
    ) => {
        $crate::operator!(
            @decl checked PossiblyWritten [$(#[$op_doc])*] $op $phase2 $phase1; $($rest)*
        );
    };
    (
        $(#[$op_doc:meta])*
        pub unsafe struct $op:ident: $phase2:ident, $phase1:ident;
        $($rest:tt)*
    ) => {
        $crate::operator!(@decl unchecked Input [$(#[$op_doc])*] $op $phase2 $phase1; $($rest)*);
    };
    // The crate's own operators, whose `input`s are known to be only read (each is
    // verified against the vendor's operator and the simulator's kernel): checked, with
    // `input` recorded as a read. Usable only inside this crate (the item is private).
    (
        @verified
        $(#[$op_doc:meta])*
        pub struct $op:ident: $phase2:ident, $phase1:ident;
        $($rest:tt)*
    ) => {
        const _: $crate::protocol::Verified = $crate::protocol::Verified;
        $crate::operator!(@decl checked Input [$(#[$op_doc])*] $op $phase2 $phase1; $($rest)*);
    };

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
                kind: $crate::operator!(@kind $input $role $elem),
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
                args: &[$crate::protocol::CArg; $crate::protocol::MAX_ARGS],
                workspace_size: *mut u64,
                executor: *mut *mut $crate::__private::ascend_sys::aclOpExecutor,
            ) -> i32 {
                type Phase1 = unsafe extern "C" fn(
                    $($crate::operator!(@cty $role $elem),)+
                    *mut u64,
                    *mut *mut $crate::__private::ascend_sys::aclOpExecutor,
                ) -> i32;
                let [$($arg,)+ ..] = *args;
                // SAFETY: `phase1` is the address of this operator's phase 1, whose
                // prototype is `Phase1` (checked against the header, or promised by an
                // `unsafe` declaration); the arguments are live handles and values of the
                // declared kinds (the caller's contract).
                unsafe {
                    let f = ::std::mem::transmute::<*mut ::std::ffi::c_void, Phase1>(
                        phase1.as_ptr(),
                    );
                    f(
                        $(<$crate::operator!(@cty $role $elem) as $crate::protocol::CValue>::from_arg($arg),)+
                        workspace_size,
                        executor,
                    )
                }
            }
        }

        $crate::operator!(@check $check $op $phase1 $phase2 [$($role [$elem]),+]);

        $crate::operator!(@munch {
            op: $op, fname: $fname, plan: $plan, types: [$($ty),+],
            fn_doc: [$(#[$fn_doc])*], plan_doc: [$(#[$plan_doc])*], alloc: [$($newname)?],
        } [] [] [] [] [] [] [] [] [] $($arg: $role<$elem>,)+);
    };

    // The prototypes, against the header: generic and never instantiated, so the `extern`
    // declarations are type-checked, never referenced by the linker.
    (@check checked $op:ident $phase1:ident $phase2:ident [$($role:ident [$elem:ty]),+]) => {
        const _: () = {
            #[allow(dead_code, clippy::extra_unused_type_parameters)]
            fn prototypes_match_header<T>() {
                let _: unsafe extern "C" fn(
                    $($crate::operator!(@cty $role $elem),)+
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

    // The function, the plan's `new` and `launch`: parameters and values per argument.
    // F: function parameters, N: `new` parameters, L: `launch` parameters, CV/NV/LV: the
    // values each passes.
    (@munch $ctx:tt [$($f:tt)*] [$($n:tt)*] [$($l:tt)*] [$($cv:tt)*] [$($nv:tt)*] [$($lv:tt)*]
        [$($al:tt)*] [$($alv:tt)*] $o:tt
        $a:ident: input<$e:ty>, $($rest:tt)*) => {
        $crate::operator!(@munch $ctx
            [$($f)* $a: impl $crate::AsTensorView<Elem = $e>,]
            [$($n)* $a: impl $crate::AsTensorView<Elem = $e>,]
            [$($l)* $a: impl $crate::AsTensorView<Elem = $e>,]
            [$($cv)* $crate::protocol::Value::input($a.as_tensor_view()),]
            [$($nv)* $crate::protocol::Value::input($a.as_tensor_view()),]
            [$($lv)* $crate::protocol::Value::input($a.as_tensor_view()),]
            [$($al)* $a: impl $crate::AsTensorView<Elem = $e>,]
            [$($alv)* $crate::protocol::Value::input($a.as_tensor_view()),]
            $o
            $($rest)*);
    };
    // The allocating variant has no parameter for the output: it makes it.
    (@munch $ctx:tt $f:tt $n:tt $l:tt $cv:tt $nv:tt $lv:tt [$($al:tt)*] [$($alv:tt)*] [$($o:tt)*]
        $a:ident: output<$e:ty>, $($rest:tt)*) => {
        $crate::operator!(@munch_mut $ctx $f $n $l $cv $nv $lv
            [$($al)*] [$($alv)* $crate::protocol::Value::pending::<$e>(),] [$($o)* $e]
            $a [$e] $($rest)*);
    };
    (@munch $ctx:tt $f:tt $n:tt $l:tt $cv:tt $nv:tt $lv:tt [$($al:tt)*] [$($alv:tt)*] [$($o:tt)*]
        $a:ident: output_const<$e:ty>, $($rest:tt)*) => {
        $crate::operator!(@munch_mut $ctx $f $n $l $cv $nv $lv
            [$($al)*] [$($alv)* $crate::protocol::Value::pending::<$e>(),] [$($o)* $e]
            $a [$e] $($rest)*);
    };
    (@munch $ctx:tt $f:tt $n:tt $l:tt $cv:tt $nv:tt $lv:tt [$($al:tt)*] [$($alv:tt)*] $o:tt
        $a:ident: inplace<$e:ty>, $($rest:tt)*) => {
        $crate::operator!(@munch_mut $ctx $f $n $l $cv $nv $lv
            [$($al)* mut $a: impl $crate::AsTensorViewMut<Elem = $e>,]
            [$($alv)* $crate::protocol::Value::output($a.as_tensor_view_mut()),] $o
            $a [$e] $($rest)*);
    };
    (@munch $ctx:tt $f:tt $n:tt $l:tt $cv:tt $nv:tt $lv:tt [$($al:tt)*] [$($alv:tt)*] $o:tt
        $a:ident: inplace_const<$e:ty>, $($rest:tt)*) => {
        $crate::operator!(@munch_mut $ctx $f $n $l $cv $nv $lv
            [$($al)* mut $a: impl $crate::AsTensorViewMut<Elem = $e>,]
            [$($alv)* $crate::protocol::Value::output($a.as_tensor_view_mut()),] $o
            $a [$e] $($rest)*);
    };
    (@munch $ctx:tt [$($f:tt)*] [$($n:tt)*] $l:tt [$($cv:tt)*] [$($nv:tt)*] [$($lv:tt)*]
        [$($al:tt)*] [$($alv:tt)*] $o:tt
        $a:ident: attr<$e:ty>, $($rest:tt)*) => {
        $crate::operator!(@munch $ctx
            [$($f)* $a: impl Into<$e>,]
            [$($n)* $a: impl Into<$e>,]
            $l
            [$($cv)* $crate::protocol::Value::attr($crate::protocol::Attribute::to_attr(Into::<$e>::into($a))),]
            [$($nv)* $crate::protocol::Value::attr($crate::protocol::Attribute::to_attr(Into::<$e>::into($a))),]
            [$($lv)* $crate::protocol::Value::PLANNED,]
            [$($al)* $a: impl Into<$e>,]
            [$($alv)* $crate::protocol::Value::attr($crate::protocol::Attribute::to_attr(Into::<$e>::into($a))),]
            $o
            $($rest)*);
    };
    (@munch $ctx:tt $f:tt $n:tt $l:tt [$($cv:tt)*] [$($nv:tt)*] [$($lv:tt)*]
        $al:tt [$($alv:tt)*] $o:tt
        $a:ident: dtype_of<$e:ty>, $($rest:tt)*) => {
        $crate::operator!(@munch $ctx $f $n $l
            [$($cv)* $crate::protocol::Value::dtype_of::<$e>(),]
            [$($nv)* $crate::protocol::Value::dtype_of::<$e>(),]
            [$($lv)* $crate::protocol::Value::PLANNED,]
            $al
            [$($alv)* $crate::protocol::Value::dtype_of::<$e>(),]
            $o
            $($rest)*);
    };
    (@munch_mut $ctx:tt [$($f:tt)*] [$($n:tt)*] [$($l:tt)*] [$($cv:tt)*] [$($nv:tt)*] [$($lv:tt)*]
        $al:tt $alv:tt $o:tt
        $a:ident [$e:ty] $($rest:tt)*) => {
        $crate::operator!(@munch $ctx
            [$($f)* mut $a: impl $crate::AsTensorViewMut<Elem = $e>,]
            [$($n)* $a: impl $crate::AsTensorView<Elem = $e>,]
            [$($l)* mut $a: impl $crate::AsTensorViewMut<Elem = $e>,]
            [$($cv)* $crate::protocol::Value::output($a.as_tensor_view_mut()),]
            [$($nv)* $crate::protocol::Value::input($a.as_tensor_view()),]
            [$($lv)* $crate::protocol::Value::output($a.as_tensor_view_mut()),]
            $al $alv $o
            $($rest)*);
    };
    (@munch {
        op: $op:ident, fname: $fname:ident, plan: $plan:ident, types: [$($ty:ident),+],
        fn_doc: [$($fn_doc:tt)*], plan_doc: [$($plan_doc:tt)*], alloc: $alloc:tt,
    } [$($f:tt)*] [$($n:tt)*] [$($l:tt)*] [$($cv:tt)*] [$($nv:tt)*] [$($lv:tt)*]
        $al:tt $alv:tt $o:tt) => {
        $crate::operator!(@alloc $alloc $op $fname [$($ty),+] $al $alv $o);

        $($fn_doc)*
        // The C operator's arguments, one by one.
        #[allow(clippy::too_many_arguments)]
        pub fn $fname<$($ty: $crate::Operand),+>(
            $($f)*
            stream: &$crate::Stream,
        ) -> $crate::Result<()> {
            $crate::protocol::call::<$op, _>(stream, [$($cv)*])
        }

        $($plan_doc)*
        ///
        #[doc = concat!(
            "Built on [`Plan`](", "crate::Plan) (what a launch accepts, ownership, ",
            "older CANN); `Send + Sync`, launching needs `&mut self`."
        )]
        pub struct $plan<$($ty),+>($crate::Plan<$op, ($($ty,)+)>);

        impl<$($ty: $crate::Operand),+> $plan<$($ty),+> {
            #[doc = concat!(
                "Validates like [`", stringify!($fname), "`] and runs phase 1 once for these ",
                "tensors' layouts and these attributes, which the plan keeps. Nothing is ",
                "computed: outputs are read only for their layout."
            )]
            ///
            /// # Errors
            #[doc = concat!(
                "As [`", stringify!($fname), "`]; [`Error::Aclnn`](", "crate::Error::Aclnn) ",
                "from phase 1 or `aclSetAclOpExecutorRepeatable`."
            )]
            #[allow(clippy::too_many_arguments)]
            pub fn new($($n)* stream: &$crate::Stream) -> $crate::Result<Self> {
                $crate::Plan::build(stream, [$($nv)*]).map(Self)
            }

            #[doc = concat!(
                "Queues `", stringify!($fname), "` on `stream` for tensors with the planned ",
                "layouts (dims, strides, offset), in any storage, rebinding the addresses ",
                "that changed since the last launch, with the attributes given to `new`. ",
                "Does not allocate."
            )]
            ///
            /// # Errors
            /// [`Error::DeviceMismatch`](crate::Error::DeviceMismatch),
            /// [`Error::PlanMismatch`](crate::Error::PlanMismatch) naming the first argument
            /// whose layout differs (a plan is fixed to one layout: build another for
            /// another); [`Error::Aclnn`](crate::Error::Aclnn) from the library.
            pub fn launch(&mut self, $($l)* stream: &$crate::Stream) -> $crate::Result<()> {
                self.0.run(stream, [$($lv)*])
            }

            /// Whether launches reuse the executor (`false`: the library lacks executor
            /// reuse and every launch is a plain call).
            pub fn is_reusable(&self) -> bool {
                self.0.is_reusable()
            }
        }

        impl<$($ty),+> ::std::fmt::Debug for $plan<$($ty),+> {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                self.0.fmt(f)
            }
        }
    };

    // The allocating variant, when the declaration names one.
    (@alloc [] $($rest:tt)*) => {};
    (@alloc [$newname:ident] $op:ident $fname:ident [$($ty:ident),+]
        [$($al:tt)*] [$($alv:tt)*] [$($o:tt)*]) => {
        #[doc = concat!(
            "[`", stringify!($fname), "`] into a new tensor, which it returns: the output of ",
            "the shape the operator's rule computes from the other arguments, contiguous, ",
            "from the device's caching allocator without a fill (no `aclrtMalloc` in a ",
            "steady state). `R` is a [`DeviceTensor`](", "crate::DeviceTensor) of element type `",
            stringify!($($o)*), "`, or a [`Tensor`](", "crate::Tensor) whose dtype the call ",
            "infers ([run-time dtypes](", "crate::operand)), named by an annotation or the ",
            "last type parameter. The arguments are those of [`", stringify!($fname), "`] ",
            "without the output."
        )]
        ///
        /// # Errors
        #[doc = concat!(
            "As [`", stringify!($fname), "`] (less the output's shape); the allocation's ",
            "[`Error::Acl`](", "crate::Error::Acl)."
        )]
        #[allow(clippy::too_many_arguments)]
        pub fn $newname<$($ty: $crate::Operand),+, R: $crate::Allocated<Elem = $($o)*>>(
            $($al)*
            stream: &$crate::Stream,
        ) -> $crate::Result<R> {
            $crate::protocol::call_new::<$op, R, _>(stream, [$($alv)*])
        }
    };

    (@kind $in:ident input $e:ty) => {
        $crate::protocol::ArgKind::Tensor($crate::protocol::Role::$in)
    };
    (@kind $in:ident output $e:ty) => {
        $crate::protocol::ArgKind::Tensor($crate::protocol::Role::Output)
    };
    (@kind $in:ident output_const $e:ty) => {
        $crate::protocol::ArgKind::Tensor($crate::protocol::Role::Output)
    };
    (@kind $in:ident inplace $e:ty) => {
        $crate::protocol::ArgKind::Tensor($crate::protocol::Role::InPlace)
    };
    (@kind $in:ident inplace_const $e:ty) => {
        $crate::protocol::ArgKind::Tensor($crate::protocol::Role::InPlace)
    };
    (@kind $in:ident attr $e:ty) => {
        $crate::protocol::attr_kind(
            <<$e as $crate::protocol::Attribute>::C as $crate::protocol::CValue>::KIND,
        )
    };
    (@kind $in:ident dtype_of $e:ty) => {
        $crate::protocol::ArgKind::Attr($crate::protocol::Kind::DType)
    };
    (@cty input $e:ty) => { *const $crate::__private::ascend_sys::aclTensor };
    (@cty output $e:ty) => { *mut $crate::__private::ascend_sys::aclTensor };
    (@cty inplace $e:ty) => { *mut $crate::__private::ascend_sys::aclTensor };
    (@cty inplace_const $e:ty) => { *const $crate::__private::ascend_sys::aclTensor };
    (@cty output_const $e:ty) => { *const $crate::__private::ascend_sys::aclTensor };
    (@cty attr $e:ty) => { <$e as $crate::protocol::Attribute>::C };
    (@cty dtype_of $e:ty) => { $crate::__private::ascend_sys::aclDataType };
}
