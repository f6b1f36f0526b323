//! An operator's arguments as declared (names, roles, attribute kinds) and as given in one
//! call ([`Value`]s, read by the rules through [`Call`]).

use super::attr::{Attr, Kind};
use crate::device::SocFamily;
use crate::element::DType;
use crate::operand::Operand;
use crate::shape::{Dims, Named};
use crate::tensor::{RawTensor, TensorView, TensorViewMut};
use std::cell::Cell;

/// How an operator uses one tensor argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    /// Read (`const aclTensor *`).
    Input,
    /// Written (`aclTensor *`).
    Output,
    /// Read and written (`aclTensor *selfRef`).
    InPlace,
    /// `const aclTensor *` in a declaration nothing vouches for (a checked user
    /// declaration): bound and validated as an input, but ordered across streams like a
    /// written tensor, since a `const` in a header does not prove the operator never
    /// writes through it.
    PossiblyWritten,
}

impl Role {
    /// Whether the operator reads the argument (an input or in-place argument).
    pub fn reads(self) -> bool {
        matches!(self, Role::Input | Role::InPlace | Role::PossiblyWritten)
    }

    /// Whether the operator writes the argument (an output or in-place argument).
    pub fn writes(self) -> bool {
        matches!(self, Role::Output | Role::InPlace)
    }

    /// Whether other streams' work must be ordered as if the operator wrote the argument:
    /// a written argument, or one that may be written.
    pub fn may_write(self) -> bool {
        self.writes() || self == Role::PossiblyWritten
    }
}

/// What one argument is: a tensor with its role, a tensor list, or an attribute of a kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ArgKind {
    /// A tensor (`aclTensor *`).
    Tensor(Role),
    /// A list of tensors (`const aclTensorList *`), each with the role.
    List(Role),
    /// An attribute (a scalar, an int array or a plain value).
    Attr(Kind),
}

/// One argument of an operator, in the order of phase 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Arg {
    /// Its C name (`"self"`, `"gradOutput"`, ...).
    pub name: &'static str,
    /// How errors name it: the Rust parameter and the C one, `"x (self)"`, or the one name
    /// when both are the same.
    pub label: &'static str,
    /// A tensor or an attribute.
    pub kind: ArgKind,
    /// Whether the argument may be absent (passed as NULL): an optional tensor
    /// (`opt_input`, `opt_inplace`) or attribute (`opt_attr`).
    pub optional: bool,
}

impl Arg {
    /// Its role, if it is a tensor or a tensor list.
    pub fn role(&self) -> Option<Role> {
        match self.kind {
            ArgKind::Tensor(r) | ArgKind::List(r) => Some(r),
            ArgKind::Attr(_) => None,
        }
    }

    /// Whether it is a tensor list.
    pub fn is_list(&self) -> bool {
        matches!(self.kind, ArgKind::List(_))
    }
}

/// `rust` when it equals `c`, else `both` (`"rust (c)"`); for the labels of declared
/// arguments, at compile time.
#[doc(hidden)]
pub const fn label(rust: &'static str, c: &'static str, both: &'static str) -> &'static str {
    let (a, b) = (rust.as_bytes(), c.as_bytes());
    if a.len() != b.len() {
        return both;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return both;
        }
        i += 1;
    }
    rust
}

/// One argument as given to a call: a tensor view, an attribute value, or (in a plan's
/// launch) an attribute fixed when the plan was built. Made by the code `operator!`
/// generates.
pub struct Value<'a>(pub(crate) Given<'a>);

pub(crate) enum Given<'a> {
    Tensor(RawTensor<'a>),
    /// A tensor list: its elements, in order.
    List(&'a dyn TensorList),
    /// The output an allocating variant makes, of this dtype (`None`: the one the call
    /// infers, for a [`Tensor`](crate::Tensor) result) and of the shape the operator's
    /// rule computes.
    Pending(Option<DType>),
    Attr(Attr),
    /// A `dtype_of` attribute whose type is known at run time only: the dtype of the
    /// first written tensor (resolved before the call is made).
    DTypeOfOutput,
    Planned,
    /// An optional argument left out: NULL in C.
    Absent,
}

impl<'a> Value<'a> {
    /// A tensor read by the operator.
    #[doc(hidden)]
    pub fn input<T: Operand>(view: TensorView<'a, T>) -> Self {
        Value(Given::Tensor(view.raw()))
    }

    /// A list of tensors read by the operator (a reference to the caller's slice, read
    /// one element at a time: no copy).
    #[doc(hidden)]
    pub fn list<T: Operand>(list: &'a &'a [TensorView<'a, T>]) -> Self {
        Value(Given::List(list))
    }

    /// A tensor written by the operator.
    #[doc(hidden)]
    pub fn output<T: Operand>(view: TensorViewMut<'a, T>) -> Self {
        Value(Given::Tensor(view.raw()))
    }

    /// An attribute.
    #[doc(hidden)]
    pub fn attr(attr: Attr) -> Self {
        Value(Given::Attr(attr))
    }

    /// An optional tensor read by the operator, or NULL.
    #[doc(hidden)]
    pub fn opt_input<T: Operand>(view: Option<TensorView<'a, T>>) -> Self {
        view.map_or(Value(Given::Absent), Value::input)
    }

    /// An optional tensor written by the operator, or NULL.
    #[doc(hidden)]
    pub fn opt_output<T: Operand>(view: Option<TensorViewMut<'a, T>>) -> Self {
        view.map_or(Value(Given::Absent), Value::output)
    }

    /// An optional attribute, or NULL.
    #[doc(hidden)]
    pub fn opt_attr(attr: Option<Attr>) -> Self {
        attr.map_or(Value(Given::Absent), Value::attr)
    }

    /// The output of an allocating variant, made once the rule has computed its shape.
    #[doc(hidden)]
    pub fn pending<T: Operand>() -> Self {
        Value(Given::Pending(T::DTYPE))
    }

    /// The output of an allocating form of a run-time dtype the caller names (`cast_to`),
    /// made once the rule has computed its shape.
    pub(crate) fn pending_as(dtype: DType) -> Self {
        Value(Given::Pending(Some(dtype)))
    }

    /// A `dtype_of<T>` attribute: `T`'s dtype, or for [`Dyn`](crate::Dyn) the dtype of
    /// the first written tensor.
    #[doc(hidden)]
    pub fn dtype_of<T: Operand>() -> Self {
        match T::DTYPE {
            Some(d) => Value(Given::Attr(Attr::DType(d))),
            None => Value(Given::DTypeOfOutput),
        }
    }

    /// An attribute fixed in the plan.
    #[doc(hidden)]
    pub const PLANNED: Value<'static> = Value(Given::Planned);

    pub(crate) fn is_pending(&self) -> bool {
        matches!(self.0, Given::Pending(_))
    }

    pub(crate) fn tensor(&self) -> Option<&RawTensor<'a>> {
        match &self.0 {
            Given::Tensor(t) => Some(t),
            _ => None,
        }
    }

    /// The elements of a tensor list argument.
    pub(crate) fn list_elements(&self) -> Option<&'a dyn TensorList> {
        match self.0 {
            Given::List(l) => Some(l),
            _ => None,
        }
    }

    /// Every tensor of the argument: itself, or a list's elements.
    pub(crate) fn each_tensor(&self, mut f: impl FnMut(&RawTensor<'_>)) {
        match &self.0 {
            Given::Tensor(t) => f(t),
            Given::List(l) => (0..l.len()).for_each(|k| f(&l.element(k))),
            _ => {}
        }
    }
}

/// The elements of a tensor-list argument (a `list<T>` role): a slice of
/// [`TensorView`]s, read one by one without a copy.
pub(crate) trait TensorList {
    /// How many tensors.
    fn len(&self) -> usize;
    /// Tensor `k` (`k < len`).
    fn element(&self, k: usize) -> RawTensor<'_>;
}

impl<T: Operand> TensorList for &[TensorView<'_, T>] {
    fn len(&self) -> usize {
        <[_]>::len(self)
    }

    fn element(&self, k: usize) -> RawTensor<'_> {
        self[k].raw()
    }
}

/// One call as the rules see it: the declared arguments and the values given, on a
/// product family. Rules read tensors' shapes and dtypes and attributes' values by the
/// argument's position in the declaration (phase 1's order).
pub struct Call<'c> {
    pub(crate) args: &'static [Arg],
    pub(crate) values: &'c [Value<'c>],
    pub(crate) soc: SocFamily,
    /// Where the rules put the shape of each pending output (an allocating variant), by
    /// argument position, and the dtype of the outputs left to the call.
    pub(crate) inferred: &'c Inferred<'c>,
}

/// What a call infers for the outputs of an allocating variant.
#[derive(Default)]
pub(crate) struct Inferred<'a> {
    /// The shape of each pending output, by argument position (empty when no output is
    /// pending).
    pub(crate) dims: &'a [Cell<Option<Dims>>],
    /// The dtype of the outputs whose dtype is known at run time only: the promoted dtype
    /// of the tensors read, unless the operator's rule chose another. One for the call:
    /// an operator with two such outputs gives both this dtype (a typed output keeps its
    /// type's).
    pub(crate) dtype: Cell<Option<DType>>,
}

impl<'c> Call<'c> {
    /// The declared arguments.
    pub fn args(&self) -> &'static [Arg] {
        self.args
    }

    /// The product family of the stream's device.
    pub fn soc(&self) -> SocFamily {
        self.soc
    }

    /// The label of argument `i` (`"x (self)"`), as errors name it.
    pub fn label(&self, i: usize) -> &'static str {
        self.args.get(i).map_or("?", |a| a.label)
    }

    /// The dims of tensor argument `i` (empty if it is not a tensor).
    pub fn dims(&self, i: usize) -> &'c [usize] {
        match self.values.get(i).map(|v| &v.0) {
            Some(Given::Tensor(t)) => t.layout.dims.as_slice(),
            _ => &[],
        }
    }

    /// Tensor argument `i` with its label, for the [`shape`](crate::shape) functions.
    pub fn named(&self, i: usize) -> Named<'c> {
        (self.label(i), self.dims(i))
    }

    /// The dtype of tensor argument `i`.
    pub fn dtype(&self, i: usize) -> Option<DType> {
        match self.values.get(i).map(|v| &v.0) {
            Some(Given::Tensor(t)) => Some(t.dtype),
            Some(Given::Pending(d)) => d.or(self.inferred.dtype.get()),
            _ => None,
        }
    }

    /// The dtype of the first tensor the call writes (a `dtype_of` attribute whose type
    /// is known at run time only takes it).
    pub fn written_dtype(&self) -> Option<DType> {
        let written = self.args.iter().zip(self.values).position(|(a, v)| {
            matches!(v.0, Given::Pending(_))
                || (a.role().is_some_and(Role::writes) && v.tensor().is_some())
        })?;
        self.dtype(written)
    }

    /// Gives the pending output argument `i` the dtype `dtype` when its dtype is left to
    /// the call (a [`Tensor`](crate::Tensor) result): an operator whose result dtype is
    /// not the promoted dtype of its inputs states it here (the unary family's
    /// integers computed as FLOAT). A typed result keeps its type's dtype.
    pub fn infer_dtype(&self, i: usize, dtype: DType) {
        if matches!(self.values.get(i).map(|v| &v.0), Some(Given::Pending(None))) {
            self.inferred.dtype.set(Some(dtype));
        }
    }

    /// Whether tensor argument `i` is the output an allocating variant makes: its shape is
    /// what the rule computes for it ([`infer`](Self::infer)), its dims are empty until then.
    pub fn is_pending(&self, i: usize) -> bool {
        matches!(self.values.get(i).map(|v| &v.0), Some(Given::Pending(_)))
    }

    /// Whether optional argument `i` was left out (NULL in C).
    pub fn is_absent(&self, i: usize) -> bool {
        matches!(self.values.get(i).map(|v| &v.0), Some(Given::Absent))
    }

    /// The position of the first pending output, if any.
    pub fn pending(&self) -> Option<usize> {
        self.values
            .iter()
            .position(|v| matches!(v.0, Given::Pending(_)))
    }

    /// Gives the pending output argument `i` its shape (the rule's result for it).
    ///
    /// # Errors
    /// [`Error::TooManyDims`](crate::Error::TooManyDims).
    pub fn infer(&self, i: usize, dims: &[usize]) -> crate::Result<()> {
        let dims = Dims::new(self.label(i), dims)?;
        if let Some(slot) = self.inferred.dims.get(i) {
            slot.set(Some(dims));
        }
        Ok(())
    }

    /// The value of attribute argument `i`.
    pub fn attr(&self, i: usize) -> Option<Attr> {
        match self.values.get(i).map(|v| &v.0) {
            Some(Given::Attr(a)) => Some(*a),
            Some(Given::DTypeOfOutput) => self.written_dtype().map(Attr::DType),
            _ => None,
        }
    }

    /// The number of tensors of list argument `i` (0 if it is not a list).
    pub fn list_len(&self, i: usize) -> usize {
        self.values
            .get(i)
            .and_then(Value::list_elements)
            .map_or(0, |l| l.len())
    }

    /// The dims of tensor `k` of list argument `i` (empty if there is none).
    pub fn list_dims(&self, i: usize, k: usize) -> Vec<usize> {
        self.values
            .get(i)
            .and_then(Value::list_elements)
            .filter(|l| k < l.len())
            .map_or_else(Vec::new, |l| l.element(k).layout.dims.as_slice().to_vec())
    }

    /// The dtype of tensor `k` of list argument `i`.
    pub fn list_dtype(&self, i: usize, k: usize) -> Option<DType> {
        self.values
            .get(i)
            .and_then(Value::list_elements)
            .filter(|l| k < l.len())
            .map(|l| l.element(k).dtype)
    }

    /// The tensor arguments with their roles and labelled shapes, in declaration order.
    pub fn tensors(&self) -> impl Iterator<Item = (Role, Named<'c>)> + Clone + '_ {
        self.args
            .iter()
            .zip(self.values)
            .filter_map(|(a, v)| match (a.kind, &v.0) {
                (ArgKind::Tensor(r), Given::Tensor(t)) => {
                    Some((r, (a.label, t.layout.dims.as_slice())))
                }
                _ => None,
            })
    }
}

/// Replaces each `dtype_of` attribute whose type is known at run time only with the dtype
/// of the first tensor written (given, or made by an allocating variant).
#[inline]
pub(crate) fn resolve_dtype_of(args: &[Arg], values: &mut [Value<'_>]) {
    if !values.iter().any(|v| matches!(v.0, Given::DTypeOfOutput)) {
        return;
    }
    let written = args
        .iter()
        .zip(values.iter())
        .find_map(|(a, v)| match (a.role(), &v.0) {
            (Some(r), Given::Tensor(t)) if r.writes() => Some(t.dtype),
            _ => None,
        });
    if let Some(d) = written {
        for v in values
            .iter_mut()
            .filter(|v| matches!(v.0, Given::DTypeOfOutput))
        {
            *v = Value(Given::Attr(Attr::DType(d)));
        }
    }
}
