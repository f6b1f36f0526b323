//! [`TensorView`] and [`TensorViewMut`]: windows on a tensor's storage, their view
//! algebra, their download, and [`RawTensor`], what an operator call needs of one.

#[cfg(doc)]
use super::DeviceTensor;
use super::buffer::Buffer;
use super::layout::Layout;
use crate::element::{DType, Element};
use crate::error::{Error, Result};
use crate::operand::Operand;
use crate::shape::{self, IntoDims};
use crate::stream::Stream;
use ndarray::{Array, Dimension};
use std::fmt;
use std::marker::PhantomData;

/// A read-only window on a [`DeviceTensor`]'s storage: any shape, non-negative strides
/// (0 for broadcast dims) and offset, checked to stay inside the storage.
///
/// `Copy`, `Send + Sync` (a shared borrow of the tensor).
pub struct TensorView<'a, T: Operand> {
    pub(crate) buf: &'a Buffer,
    pub(crate) layout: Layout,
    /// The dtype handed to the library: `T`'s, or a [`Tensor`](super::Tensor)'s own.
    pub(crate) dtype: DType,
    /// The layout is the tensor's own (a view of the whole tensor): operators use the
    /// tensor's cached descriptor.
    pub(crate) whole: bool,
    pub(super) _elem: PhantomData<&'a [T]>,
}

impl<T: Operand> Clone for TensorView<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T: Operand> Copy for TensorView<'_, T> {}

/// A writable window on a [`DeviceTensor`]'s storage, for operator outputs. It can be
/// permuted, sliced and reshaped, but not broadcast (an output must not write one element
/// twice). Holding it borrows the tensor mutably.
///
/// `Send + Sync` (an exclusive borrow of the tensor).
pub struct TensorViewMut<'a, T: Operand> {
    pub(crate) buf: &'a Buffer,
    pub(crate) layout: Layout,
    /// As [`TensorView::dtype`].
    pub(crate) dtype: DType,
    /// As [`TensorView::whole`].
    pub(crate) whole: bool,
    pub(super) _elem: PhantomData<&'a mut [T]>,
}

macro_rules! view_common {
    ($ty:ident) => {
        impl<'a, T: Operand> $ty<'a, T> {
            layout_accessors!();

            /// The element type (the tensor's, for a view of a [`Tensor`](super::Tensor)).
            pub fn dtype(&self) -> DType {
                self.dtype
            }

            /// What the two-phase helper needs of this view as an operator argument.
            pub(crate) fn raw(&self) -> RawTensor<'a> {
                RawTensor {
                    buf: self.buf,
                    layout: self.layout,
                    dtype: self.dtype,
                    whole: self.whole,
                }
            }

            /// Whether the elements are dense in row-major order.
            pub fn is_contiguous(&self) -> bool {
                self.layout.is_contiguous()
            }

            fn with(self, layout: Layout) -> Result<Self> {
                layout.check_within(self.buf.len)?;
                Ok($ty {
                    buf: self.buf,
                    layout,
                    dtype: self.dtype,
                    whole: false,
                    _elem: PhantomData,
                })
            }

            /// Reorders the axes: axis `i` of the result is axis `axes[i]` of `self`.
            ///
            /// # Errors
            /// [`Error::InvalidArgument`] when `axes` is not a permutation of the axes.
            pub fn permute(self, axes: &[usize]) -> Result<Self> {
                let l = self.layout.permute(axes)?;
                self.with(l)
            }

            /// Reverses the axes (the transpose of a matrix).
            pub fn t(self) -> Self {
                let l = self.layout.reversed_axes();
                $ty {
                    buf: self.buf,
                    layout: l,
                    dtype: self.dtype,
                    whole: false,
                    _elem: PhantomData,
                }
            }

            /// Keeps indices `start, start + step, ...` below `end` of `axis`.
            ///
            /// # Errors
            /// [`Error::InvalidArgument`] for an axis out of range, `step == 0`, or a
            /// range outside the axis.
            pub fn slice(self, axis: usize, start: usize, end: usize, step: usize) -> Result<Self> {
                let l = self.layout.slice(axis, start, end, step)?;
                self.with(l)
            }

            /// The same elements with another shape; the view must be contiguous.
            ///
            /// # Errors
            /// [`Error::InvalidArgument`] for a non-contiguous view or a different number of
            /// elements, [`Error::TooManyDims`].
            pub fn reshape(self, shape: impl IntoDims) -> Result<Self> {
                let l = self.layout.reshape(shape.into_dims("shape")?)?;
                self.with(l)
            }
        }

        impl<T: Operand> fmt::Debug for $ty<'_, T> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_struct(stringify!($ty))
                    .field("dtype", &self.dtype)
                    .field("shape", &self.layout.dims)
                    .field("strides", &self.strides())
                    .field("offset", &self.layout.offset)
                    .finish()
            }
        }
    };
}

view_common!(TensorView);
view_common!(TensorViewMut);

impl<'a, T: Operand> TensorView<'a, T> {
    /// Broadcasts to `shape` with numpy rules (new leading dims and size-1 dims get
    /// stride 0).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when the shapes are incompatible, [`Error::TooManyDims`].
    pub fn broadcast_to(self, shape: impl IntoDims) -> Result<Self> {
        let l = self.layout.broadcast_to(shape.into_dims("shape")?)?;
        self.with(l)
    }
}

impl<'a, T: Element> TensorView<'a, T> {
    /// Downloads the view's elements (in row-major order of the view), after the work
    /// queued on `stream` so far. Returns only once the copy has finished.
    ///
    /// The array's dimension type is the caller's, as for [`DeviceTensor::to_array`].
    ///
    /// # Errors
    /// [`Error::RankMismatch`] for a `D` of another number of dims,
    /// [`Error::DeviceMismatch`] for a stream of another device, [`Error::Acl`] from the
    /// copy or the synchronisation.
    pub fn to_array<D: Dimension>(&self, stream: &Stream) -> Result<Array<T, D>> {
        let shape: D = shape::dimension("tensor", self.shape())?;
        let out = crate::transfer::download_vec(self.buf, &self.layout, stream)?;
        Array::from_shape_vec(shape, out).map_err(|e| Error::InvalidArgument(e.to_string()))
    }
}

impl<'a, T: Operand> TensorViewMut<'a, T> {
    /// A shorter-lived writable view of the same window, leaving `self` usable afterwards.
    pub fn reborrow(&mut self) -> TensorViewMut<'_, T> {
        TensorViewMut {
            buf: self.buf,
            layout: self.layout,
            dtype: self.dtype,
            whole: self.whole,
            _elem: PhantomData,
        }
    }

    /// A read-only view of the same window.
    pub fn as_view(&self) -> TensorView<'_, T> {
        TensorView {
            buf: self.buf,
            layout: self.layout,
            dtype: self.dtype,
            whole: self.whole,
            _elem: PhantomData,
        }
    }
}

impl<'a, T: Element> TensorViewMut<'a, T> {
    /// Downloads the view's elements; see [`TensorView::to_array`].
    ///
    /// # Errors
    /// As [`TensorView::to_array`].
    pub fn to_array<D: Dimension>(&self, stream: &Stream) -> Result<Array<T, D>> {
        self.as_view().to_array(stream)
    }
}

/// What the two-phase helper needs of one tensor argument.
pub(crate) struct RawTensor<'a> {
    pub(crate) buf: &'a Buffer,
    pub(crate) layout: Layout,
    pub(crate) dtype: DType,
    /// `layout` is the whole tensor's: the buffer's cached descriptor describes it.
    pub(crate) whole: bool,
}
