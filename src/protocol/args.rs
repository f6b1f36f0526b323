//! An operator's arguments as declared (names, roles, attribute kinds) and as given in one
//! call ([`Value`]s, read by the rules through [`Call`]).

use super::attr::{Attr, Kind};
use crate::device::SocFamily;
use crate::element::{DType, Element};
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

/// What one argument is: a tensor with its role, or an attribute of a kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ArgKind {
    /// A tensor (`aclTensor *`).
    Tensor(Role),
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
    /// (`opt_input`) or attribute (`opt_attr`).
    pub optional: bool,
}

impl Arg {
    /// Its role, if it is a tensor.
    pub fn role(&self) -> Option<Role> {
        match self.kind {
            ArgKind::Tensor(r) => Some(r),
            ArgKind::Attr(_) => None,
        }
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
    /// The output an allocating variant makes, of this dtype and of the shape the
    /// operator's rule computes.
    Pending(DType),
    Attr(Attr),
    Planned,
    /// An optional argument left out: NULL in C.
    Absent,
}

impl<'a> Value<'a> {
    /// A tensor read by the operator.
    #[doc(hidden)]
    pub fn input<T: Element>(view: TensorView<'a, T>) -> Self {
        Value(Given::Tensor(view.raw()))
    }

    /// A tensor written by the operator.
    #[doc(hidden)]
    pub fn output<T: Element>(view: TensorViewMut<'a, T>) -> Self {
        Value(Given::Tensor(view.raw()))
    }

    /// An attribute.
    #[doc(hidden)]
    pub fn attr(attr: Attr) -> Self {
        Value(Given::Attr(attr))
    }

    /// An optional tensor read by the operator, or NULL.
    #[doc(hidden)]
    pub fn opt_input<T: Element>(view: Option<TensorView<'a, T>>) -> Self {
        view.map_or(Value(Given::Absent), Value::input)
    }

    /// An optional attribute, or NULL.
    #[doc(hidden)]
    pub fn opt_attr(attr: Option<Attr>) -> Self {
        attr.map_or(Value(Given::Absent), Value::attr)
    }

    /// The output of an allocating variant, made once the rule has computed its shape.
    #[doc(hidden)]
    pub fn pending<T: Element>() -> Self {
        Value(Given::Pending(T::DTYPE))
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
}

/// One call as the rules see it: the declared arguments and the values given, on a
/// product family. Rules read tensors' shapes and dtypes and attributes' values by the
/// argument's position in the declaration (phase 1's order).
pub struct Call<'c> {
    pub(crate) args: &'static [Arg],
    pub(crate) values: &'c [Value<'c>],
    pub(crate) soc: SocFamily,
    /// Where the rules put the shape of each pending output (an allocating variant), by
    /// argument position; empty when no output is pending.
    pub(crate) inferred: &'c [Cell<Option<Dims>>],
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
            Some(Given::Pending(d)) => Some(*d),
            _ => None,
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
        if let Some(slot) = self.inferred.get(i) {
            slot.set(Some(dims));
        }
        Ok(())
    }

    /// The value of attribute argument `i`.
    pub fn attr(&self, i: usize) -> Option<Attr> {
        match self.values.get(i).map(|v| &v.0) {
            Some(Given::Attr(a)) => Some(*a),
            _ => None,
        }
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
