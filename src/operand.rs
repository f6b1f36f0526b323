//! What an operator's type parameters range over: an element type, whose dtype the
//! compiler knows, or [`Dyn`], a dtype known at run time (a [`Tensor`]); and what an
//! allocating form returns ([`Allocated`]).
//!
//! # Run-time dtypes in operators
//!
//! Every operator takes [`Tensor`]s next to [`DeviceTensor`]s and their views: a declared
//! type parameter `T` (`input<T>`, `output<T>`) is an [`Operand`], either an
//! [`Element`] or [`Dyn`]. Every view carries the dtype it hands to the library (`T`'s
//! for a typed tensor, the tensor's own for a [`Tensor`]), and every call checks the
//! dtypes at run time anyway (the declaration's product and dtype rules, the operator's
//! rule), so a [`Tensor`] of a dtype the operator refuses gets the same typed error
//! ([`Error::UnsupportedDtype`](crate::Error::UnsupportedDtype), ...) as a typed tensor of
//! that dtype, before any C call. Typed and run-time tensors mix freely in one call.
//!
//! An allocating form (`exp_new`, `add_new`, ...) returns any [`Allocated`] type: a
//! [`DeviceTensor<T>`] of the dtype the caller names, or a [`Tensor`], whose dtype the
//! operator infers: the promoted dtype of the tensors it reads
//! ([`DType::promote`](crate::DType::promote)), or the operator's own choice (the unary
//! family's default output dtype: FLOAT for the integer inputs it computes as FLOAT). The
//! result's type comes from an annotation (`let y: Tensor = exp_new(&x, &stream)?`) or the
//! last type parameter (`exp_new::<_, _, Tensor>(&x, &stream)`).
//!
//! ```
//! # fn main() -> ascendcl::Result<()> {
//! use ascendcl::{DType, DeviceTensor, Runtime, Tensor, add_new, exp_new, mul};
//! let stream = Runtime::auto()?.device(0)?.stream()?;
//! let x = Tensor::from_slice(&stream, &[0.0f32, 1.0], 2)?;
//! let y: Tensor = exp_new(&x, &stream)?; // f32, inferred
//! let h = Tensor::from_slice(&stream, &[half::f16::ONE; 2], 2)?;
//! let z: Tensor = add_new(&y, &h, 1.0, &stream)?; // f32 + f16 -> f32
//! assert_eq!(z.dtype(), DType::F32);
//! let typed: DeviceTensor<f32> = add_new(&y, &h, 1.0, &stream)?; // named by the caller
//! let mut out = Tensor::empty(&stream, 2, DType::F16)?;
//! mul(&typed, &x, &mut out, &stream)?; // typed and run-time tensors together
//! let i = Tensor::from_slice(&stream, &[1i8, 2], 2)?;
//! let u = Tensor::from_slice(&stream, &[1u8, 2], 2)?;
//! assert!(add_new::<_, _, _, Tensor>(&i, &u, 1, &stream).is_err()); // no common dtype
//! # Ok(()) }
//! ```

use crate::element::{DType, Element, sealed};
use crate::error::Result;
use crate::shape::Dims;
use crate::stream::Stream;
use crate::tensor::{DeviceTensor, Tensor, TensorViewMut};
use std::fmt;

/// A dtype known at run time: the element type of a [`Tensor`] as an operator argument
/// ([`AsTensorView::Elem`](crate::AsTensorView::Elem)). Never a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dyn {}

impl sealed::Sealed for Dyn {}

/// An operator's type parameter: an [`Element`] (the dtype known at compile time) or
/// [`Dyn`] (known at run time). Sealed. See the [module docs](self).
pub trait Operand: sealed::Sealed + Copy + fmt::Debug + Send + Sync + 'static {
    /// The dtype, when the type fixes it (`None` for [`Dyn`]).
    const DTYPE: Option<DType>;
}

impl<T: Element> Operand for T {
    const DTYPE: Option<DType> = Some(T::DTYPE);
}

impl Operand for Dyn {
    const DTYPE: Option<DType> = None;
}

/// What an allocating form (`exp_new`, `add_new`, ...) returns: a [`DeviceTensor<T>`]
/// (dtype `T`) or a [`Tensor`] (the dtype the operator infers). Sealed.
pub trait Allocated: sealed::Sealed + Sized {
    /// The operand type of the output: `T`, or [`Dyn`].
    type Elem: Operand;

    /// A new contiguous tensor of `dims` and `dtype` without a fill.
    #[doc(hidden)]
    fn allocate(stream: &Stream, dims: Dims, dtype: DType) -> Result<Self>;

    /// The output view of the new tensor.
    #[doc(hidden)]
    fn output(&mut self) -> TensorViewMut<'_, Self::Elem>;
}

impl<T: Element> sealed::Sealed for DeviceTensor<T> {}

impl<T: Element> Allocated for DeviceTensor<T> {
    type Elem = T;

    #[inline]
    fn allocate(stream: &Stream, dims: Dims, _dtype: DType) -> Result<Self> {
        DeviceTensor::for_output(stream, dims)
    }

    #[inline]
    fn output(&mut self) -> TensorViewMut<'_, T> {
        self.view_mut()
    }
}

impl sealed::Sealed for Tensor {}

impl Allocated for Tensor {
    type Elem = Dyn;

    #[inline]
    fn allocate(stream: &Stream, dims: Dims, dtype: DType) -> Result<Self> {
        Tensor::empty(stream, dims, dtype)
    }

    #[inline]
    fn output(&mut self) -> TensorViewMut<'_, Dyn> {
        self.dyn_view_mut()
    }
}
