//! What a declaration generates for callers: the function, the plan and the allocating
//! form.

#[doc(hidden)]
#[macro_export]
macro_rules! __operator_emit {
    // The function and the plan, from the munched parameters and values.
    (@emit {
        op: $op:ident, fname: $fname:ident, plan: $plan:ident, types: [$($ty:ident),+],
        fn_doc: [$($fn_doc:tt)*], plan_doc: [$($plan_doc:tt)*], alloc: $alloc:tt,
    } [$($f:tt)*] [$($n:tt)*] [$($l:tt)*] [$($cv:tt)*] [$($nv:tt)*] [$($lv:tt)*]
        $al:tt $alv:tt $o:tt) => {
        $crate::__operator_emit!(@alloc $alloc $op $fname [$($ty),+] $al $alv $o);

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
                "dims and strides, at any offset in any storage, rebinding the addresses ",
                "that changed since the last launch, with the attributes given to `new` or ",
                "`set_attr`. Does not allocate once the tensors' offset residues have been ",
                "seen (see [`Plan`](", "crate::Plan))."
            )]
            ///
            /// # Errors
            /// [`Error::DeviceMismatch`](crate::Error::DeviceMismatch),
            /// [`Error::PlanMismatch`](crate::Error::PlanMismatch) naming the first argument
            /// whose layout differs (a plan is fixed to one layout: build another for
            /// another), or whose run-time dtype differs (a [`Tensor`](crate::Tensor));
            /// [`Error::Aclnn`](crate::Error::Aclnn) from the library.
            #[allow(clippy::too_many_arguments)]
            pub fn launch(&mut self, $($l)* stream: &$crate::Stream) -> $crate::Result<()> {
                self.0.run(stream, [$($lv)*])
            }

            /// Whether launches reuse the executor (`false`: the library lacks executor
            /// reuse and every launch is a plain call).
            pub fn is_reusable(&self) -> bool {
                self.0.is_reusable()
            }

            /// Changes attribute `name` (its Rust or C name) for the launches to come; the
            /// next launch runs phase 1 once for it, as CANN fixes attributes in phase 1
            /// ([`Plan::set_attr`](crate::Plan::set_attr)).
            ///
            /// # Errors
            /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) for a name that is
            /// not an attribute of the operator, or a value of another kind.
            pub fn set_attr(
                &mut self,
                name: &str,
                value: impl $crate::protocol::Attribute,
            ) -> $crate::Result<()> {
                self.0.set_attr(name, $crate::protocol::Attribute::to_attr(value))
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
        [$($al:tt)*] [$($alv:tt)*] [[$o:ty]]) => {
        #[doc = concat!(
            "[`", stringify!($fname), "`] into a new tensor, which it returns: the output of ",
            "the shape the operator's rule computes from the other arguments, contiguous, ",
            "from the device's caching allocator without a fill (no `aclrtMalloc` in a ",
            "steady state). `R` is a [`DeviceTensor`](", "crate::DeviceTensor) of element type `",
            stringify!($o), "`, or a [`Tensor`](", "crate::Tensor) whose dtype the call ",
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
        pub fn $newname<$($ty: $crate::Operand),+, R: $crate::Allocated<Elem = $o>>(
            $($al)*
            stream: &$crate::Stream,
        ) -> $crate::Result<R> {
            $crate::protocol::call_new::<$op, R, _>(stream, [$($alv)*])
        }
    };
    // Two outputs: a pair of new tensors, in the declaration's order.
    (@alloc [$newname:ident] $op:ident $fname:ident [$($ty:ident),+]
        [$($al:tt)*] [$($alv:tt)*] [[$o:ty] [$p:ty]]) => {
        #[doc = concat!(
            "[`", stringify!($fname), "`] into two new tensors, which it returns as a pair ",
            "in the order of the operator's outputs: of the shapes the operator's rule ",
            "computes from the other arguments, contiguous, without a fill: `R` and `S` are ",
            "[`DeviceTensor`](", "crate::DeviceTensor)s of element types `", stringify!($o),
            "` and `", stringify!($p), "`, or [`Tensor`](", "crate::Tensor)s whose dtype the ",
            "call infers, named by an annotation or the last type parameters. The ",
            "arguments are those of [`", stringify!($fname), "`] without the outputs."
        )]
        ///
        /// # Errors
        #[doc = concat!(
            "As [`", stringify!($fname), "`] (less the outputs' shapes); the allocations' ",
            "[`Error::Acl`](", "crate::Error::Acl)."
        )]
        #[allow(clippy::too_many_arguments, clippy::type_complexity)]
        pub fn $newname<
            $($ty: $crate::Operand),+,
            R: $crate::Allocated<Elem = $o>,
            S: $crate::Allocated<Elem = $p>,
        >(
            $($al)*
            stream: &$crate::Stream,
        ) -> $crate::Result<(R, S)> {
            $crate::protocol::call_new2::<$op, R, S, _>(stream, [$($alv)*])
        }
    };
    (@alloc [$newname:ident] $op:ident $fname:ident $tys:tt $al:tt $alv:tt $o:tt) => {
        compile_error!(concat!(
            "`allocating: ", stringify!($newname), "` needs one or two outputs"
        ));
    };
}
