//! [`TensorView`] and [`TensorViewMut`]: windows on a tensor's storage, their view
//! algebra, their download, and [`RawTensor`], what an operator call needs of one.

#[cfg(doc)]
use super::DeviceTensor;
use super::buffer::{Buffer, HostBuf};
use super::check_stream_device;
use super::layout::Layout;
use crate::element::{DType, Element};
use crate::error::{Error, Result};
use crate::shape::{self, IntoDims, MAX_DIMS};
use crate::stream::Stream;
use crate::sys;
use crate::uses::Access;
use ndarray::{Array, Dimension};
use std::ffi::c_void;
use std::fmt;
use std::marker::PhantomData;

/// A read-only window on a [`DeviceTensor`]'s storage: any shape, non-negative strides
/// (0 for broadcast dims) and offset, checked to stay inside the storage.
///
/// `Copy`, `Send + Sync` (a shared borrow of the tensor).
pub struct TensorView<'a, T: Element> {
    pub(crate) buf: &'a Buffer,
    pub(crate) layout: Layout,
    /// The layout is the tensor's own (a view of the whole tensor): operators use the
    /// tensor's cached descriptor.
    pub(crate) whole: bool,
    pub(super) _elem: PhantomData<&'a [T]>,
}

impl<T: Element> Clone for TensorView<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T: Element> Copy for TensorView<'_, T> {}

/// A writable window on a [`DeviceTensor`]'s storage, for operator outputs. It can be
/// permuted, sliced and reshaped, but not broadcast (an output must not write one element
/// twice). Holding it borrows the tensor mutably.
///
/// `Send + Sync` (an exclusive borrow of the tensor).
pub struct TensorViewMut<'a, T: Element> {
    pub(crate) buf: &'a Buffer,
    pub(crate) layout: Layout,
    /// As [`TensorView::whole`].
    pub(crate) whole: bool,
    pub(super) _elem: PhantomData<&'a mut [T]>,
}

macro_rules! view_common {
    ($ty:ident) => {
        impl<'a, T: Element> $ty<'a, T> {
            layout_accessors!();

            /// What the two-phase helper needs of this view as an operator argument.
            pub(crate) fn raw(&self) -> RawTensor<'a> {
                RawTensor {
                    buf: self.buf,
                    layout: self.layout,
                    dtype: T::DTYPE,
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

        impl<T: Element> fmt::Debug for $ty<'_, T> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_struct(stringify!($ty))
                    .field("dtype", &T::DTYPE)
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

impl<'a, T: Element> TensorView<'a, T> {
    /// Broadcasts to `shape` with numpy rules (new leading dims and size-1 dims get
    /// stride 0).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when the shapes are incompatible, [`Error::TooManyDims`].
    pub fn broadcast_to(self, shape: impl IntoDims) -> Result<Self> {
        let l = self.layout.broadcast_to(shape.into_dims("shape")?)?;
        self.with(l)
    }

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
        check_stream_device(self.buf, stream, "tensor")?;
        // Sized by the caller's view (a broadcast view can be far larger than its storage).
        let mut out = Vec::new();
        out.try_reserve_exact(self.len())
            .map_err(|_| Error::HostAllocation {
                what: "to_array",
                bytes: self.len().saturating_mul(size_of::<T>()),
            })?;
        let Some((lo, hi)) = self.layout.span() else {
            return Array::from_shape_vec(shape, out)
                .map_err(|e| Error::InvalidArgument(e.to_string()));
        };
        let size = T::DTYPE.size();
        let count =
            usize::try_from(hi - lo + 1).map_err(|e| Error::InvalidArgument(e.to_string()))?;
        let first = usize::try_from(lo).map_err(|e| Error::InvalidArgument(e.to_string()))?;
        let bytes = count * size;
        let device = &stream.inner.device;
        let staging = HostBuf::alloc(device, bytes)?;
        let t = device.table();
        // In bounds: `check_within` guarantees `hi < buf.len`.
        let src = self
            .buf
            .ptr
            .cast::<u8>()
            .wrapping_add(first * size)
            .cast::<c_void>();
        self.buf.uses.order(&stream.inner, Access::Read)?;
        let ticket = stream.inner.submit(|_, raw, _| {
            // SAFETY: `src..src+bytes` lies inside the tensor's allocation (checked view
            // bounds); `staging` holds `bytes` bytes and outlives the copy (synchronised
            // below before it is read or freed).
            unsafe {
                sys::memcpy_async(
                    t,
                    staging.ptr,
                    staging.bytes.max(1),
                    src,
                    bytes,
                    ascend_sys::ACL_MEMCPY_DEVICE_TO_HOST,
                    raw,
                )
            }
        });
        let ticket = match ticket {
            Ok(ticket) => ticket,
            Err(e) => {
                // The copy may not have been queued, but be safe before freeing staging.
                if stream.inner.synchronize().is_err() {
                    staging.leak();
                }
                return Err(e);
            }
        };
        self.buf.uses.record(&stream.inner, ticket, Access::Read);
        if let Err(e) = stream.inner.synchronize() {
            staging.leak(); // the copy may still be writing into it
            return Err(e);
        }
        stream.inner.check_dependencies()?;
        // SAFETY: the copy has finished; `staging` holds `count` initialised elements of
        // `T` (any bit pattern is a valid f32/f16/bf16), suitably aligned.
        let host = unsafe { std::slice::from_raw_parts(staging.ptr.cast::<T>(), count) };
        gather(host, &self.layout, lo, &mut out);
        Array::from_shape_vec(shape, out).map_err(|e| Error::InvalidArgument(e.to_string()))
    }
}

/// Appends the elements of `layout` (row-major) from `host`, whose index 0 is storage
/// element `base`.
fn gather<T: Copy>(host: &[T], layout: &Layout, base: i64, out: &mut Vec<T>) {
    let n = layout.dims.ndim();
    let dims = layout.dims.as_slice();
    let mut index = [0usize; MAX_DIMS];
    let total = layout.numel();
    for _ in 0..total {
        let mut off = layout.offset - base;
        for (i, s) in index[..n].iter().zip(layout.strides()) {
            off += *i as i64 * *s;
        }
        if let Some(v) = usize::try_from(off).ok().and_then(|o| host.get(o)) {
            out.push(*v);
        }
        for axis in (0..n).rev() {
            index[axis] += 1;
            if index[axis] < dims[axis] {
                break;
            }
            index[axis] = 0;
        }
    }
}

impl<'a, T: Element> TensorViewMut<'a, T> {
    /// A shorter-lived writable view of the same window, leaving `self` usable afterwards.
    pub fn reborrow(&mut self) -> TensorViewMut<'_, T> {
        TensorViewMut {
            buf: self.buf,
            layout: self.layout,
            whole: self.whole,
            _elem: PhantomData,
        }
    }

    /// A read-only view of the same window.
    pub fn as_view(&self) -> TensorView<'_, T> {
        TensorView {
            buf: self.buf,
            layout: self.layout,
            whole: self.whole,
            _elem: PhantomData,
        }
    }

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
