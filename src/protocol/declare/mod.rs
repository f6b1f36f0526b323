//! [`operator!`](crate::operator): the one place an operator is declared. The public
//! macro and its promise live here; the rules it expands through are hidden macros, one
//! job per file: `decl` the marker type and its phase-1 call, `check` the prototypes,
//! `munch` the parameters and values per argument, `emit` the function, plan and
//! allocating form, `roles` each role's kind and C type.

mod check;
mod decl;
mod emit;
mod munch;
mod roles;

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
///     dtypes: |soc: SocFamily, dtype: DType| ...; // or arg_dtypes: |soc, arg, dtype| ...
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
/// | `opt_input<T>` | `const aclTensor *`, NULL when absent | `Option<TensorView<'_, T>>` | the same, given or absent as at `new` |
/// | `opt_inplace<T>` | `aclTensor *`, NULL when absent (read and written) | `Option<TensorViewMut<'_, T>>` | `new`: `Option<TensorView<'_, T>>`; `launch`: as the function, given or absent as at `new` |
/// | `opt_attr<A>` | `A::C`, a NULL pointer when absent | `Option<A>` | nothing: fixed at `new` |
///
/// Attribute types ([`Attribute`](crate::protocol::Attribute)): [`Scalar`](crate::protocol::Scalar)
/// (`const aclScalar *`), [`IntList`](crate::protocol::IntList) (`const aclIntArray *`,
/// from `&[i64]`), [`BoolList`](crate::protocol::BoolList) (`const aclBoolArray *`, from
/// `&[bool]`), `bool`, `i8`, `i64` (`int64_t`), `u64` (`uint64_t`), `f32`
/// (`float`), `f64` (`double`),
/// [`DType`](crate::DType) (`aclDataType`) and the crate's attribute enums. An optional
/// attribute is a pointer type (a scalar or an array). There is no limit on the number of
/// arguments.
///
/// `dtypes: |soc, dtype| ...` is one rule for every tensor argument. `arg_dtypes: |soc,
/// arg: &Arg, dtype| ...` instead decides per argument ([`Arg`](crate::protocol::Arg):
/// its C name, label and role), for an operator whose arguments take different dtypes:
///
/// ```
/// use ascendcl::protocol::{Arg, Scalar, rules};
/// use ascendcl::{DType, SocFamily};
///
/// ascendcl::operator! {
///     /// `aclnnAdd` of a floating `self` and an `i64` `other`.
///     pub struct FloatPlusInt: aclnnAdd, aclnnAddGetWorkspaceSize;
///     products: |_soc: SocFamily| true;
///     arg_dtypes: |_soc: SocFamily, arg: &Arg, dtype: DType| match arg.name {
///         "other" => dtype == DType::I64,
///         _ => dtype.is_float(),
///     };
///     rule: rules::broadcast;
///
///     /// `out = a + alpha·b`.
///     pub fn float_plus_int<A, B, O>(
///         a: input<A> = "self",
///         b: input<B> = "other",
///         alpha: attr<Scalar> = "alpha",
///         out: output<O> = "out",
///     );
///
///     /// Its plan.
///     pub type FloatPlusIntPlan;
/// }
///
/// assert!(FloatPlusInt::supports_arg(SocFamily::AtlasA2, &FloatPlusInt::ARGS[1], DType::I64));
/// assert!(!FloatPlusInt::supports_arg(SocFamily::AtlasA2, &FloatPlusInt::ARGS[0], DType::I64));
/// ```
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
/// * the marker type with `NAME`, `ARGS`, `available_on`, `supports` and `supports_arg`, and its
///   [`Operator`](crate::protocol::Operator) implementation, whose typed phase-1 call passes
///   each argument as its C type (the entry points are looked up by name at run time);
/// * a compile-time check that phase 1 has exactly these C parameters, then the two
///   out-pointers, and that phase 2 has the common prototype, against the declarations of
///   `ascend-sys`;
/// * the function: the arguments, then the stream; it validates everything in Rust (typed
///   errors naming the argument as `"rust (c)"`), then runs the two phases;
/// * the plan type, over a [`Plan`](crate::Plan) of the operator and the function's type
///   parameters, with `new` (the same arguments; tensors are read only for their layouts)
///   and `launch` (the tensors and the stream);
/// * with `allocating: name;` after the plan, the allocating form: the function's
///   arguments without the outputs, returning a new tensor of the shape the rule infers
///   for the output, or for an operator with two outputs (`aclnnMaxDim`'s values and
///   indices) a pair of new tensors in the declaration's order.
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
/// the header does not declare (`aclnnSelu` here) is refused at compile time:
///
/// ```compile_fail
/// use ascendcl::protocol::rules;
/// use ascendcl::{DType, SocFamily};
///
/// ascendcl::operator! {
///     /// `aclnnSelu` without the promise.
///     pub struct MySelu: aclnnSelu, aclnnSeluGetWorkspaceSize;
///     products: |_soc: SocFamily| true;
///     dtypes: |_soc: SocFamily, _dtype: DType| true;
///     rule: rules::same;
///
///     /// `out = selu(x)`.
///     pub fn my_selu<T, O>(x: input<T> = "self", out: output<O> = "out");
///
///     /// Its plan.
///     pub type MySeluPlan;
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
        $crate::__operator_decl!(
            @decl checked PossiblyWritten [$(#[$op_doc])*] $op $phase2 $phase1; $($rest)*
        );
    };
    (
        $(#[$op_doc:meta])*
        pub unsafe struct $op:ident: $phase2:ident, $phase1:ident;
        $($rest:tt)*
    ) => {
        $crate::__operator_decl!(@decl unchecked Input [$(#[$op_doc])*] $op $phase2 $phase1; $($rest)*);
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
        $crate::__operator_decl!(@decl checked Input [$(#[$op_doc])*] $op $phase2 $phase1; $($rest)*);
    };
}

#[cfg(test)]
#[allow(dead_code)]
mod tests {
    use crate::protocol::{ArgKind, Kind, Role, rules};
    use crate::{DType, SocFamily};

    crate::operator! {
        /// `aclnnApplyAdamWV2`'s prototype: in-place tensors, an optional in-place one,
        /// a tensor `step`, C `float` and `bool` attributes.
        pub unsafe struct AdamShape: aclnnApplyAdamWV2, aclnnApplyAdamWV2GetWorkspaceSize;
        products: |_soc: SocFamily| true;
        dtypes: |_soc: SocFamily, _dtype: DType| true;
        rule: rules::same;

        /// One step.
        pub fn adam_shape<T, S>(
            var: inplace<T> = "varRef",
            m: inplace<T> = "mRef",
            v: inplace<T> = "vRef",
            max_grad_norm: opt_inplace<T> = "maxGradNormOptionalRef",
            grad: input<T> = "grad",
            step: input<S> = "step",
            lr: attr<f32> = "lr",
            beta1: attr<f32> = "beta1",
            amsgrad: attr<bool> = "amsgrad",
            count: attr<u64> = "count",
        );

        /// Its plan.
        pub type AdamShapePlan;
    }

    // SAFETY: never called; the declaration is only read for its argument table.
    unsafe impl crate::protocol::Promise for AdamShape {}

    #[test]
    fn roles_of_an_optimizer_prototype() {
        let kinds: Vec<_> = AdamShape::ARGS.iter().map(|a| a.kind).collect();
        assert_eq!(
            kinds,
            [
                ArgKind::Tensor(Role::InPlace),
                ArgKind::Tensor(Role::InPlace),
                ArgKind::Tensor(Role::InPlace),
                ArgKind::Tensor(Role::InPlace),
                ArgKind::Tensor(Role::Input),
                ArgKind::Tensor(Role::Input),
                ArgKind::Attr(Kind::F32),
                ArgKind::Attr(Kind::F32),
                ArgKind::Attr(Kind::Bool),
                ArgKind::Attr(Kind::U64),
            ]
        );
        let optional: Vec<_> = AdamShape::ARGS.iter().map(|a| a.optional).collect();
        assert_eq!(optional.iter().filter(|o| **o).count(), 1);
        assert!(optional[3], "maxGradNormOptionalRef is the optional one");
        assert_eq!(
            AdamShape::ARGS[3].label,
            "max_grad_norm (maxGradNormOptionalRef)"
        );
    }
}
