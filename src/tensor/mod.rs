//! [`DeviceTensor`]: a tensor in device memory, its constructors, its download and its
//! views. The submodules hold its memory ([`buffer`]), the view algebra ([`layout`]), the
//! views ([`view`]), the operator-argument traits ([`traits`]) and reshaping
//! ([`reshape`]).

use crate::element::{DType, Element};
#[cfg(doc)]
use crate::error::Error;
use crate::error::Result;
use crate::shape::{Dims, IntoDims};
use crate::stream::Stream;
use crate::sys;
use ndarray::{Array, ArrayBase, Data, Dimension};
use std::fmt;
use std::marker::PhantomData;

/// A tensor in device memory with elements of type `T` (`f32`, `f16` or `bf16`), stored
/// contiguously in row-major order.
///
/// Views ([`DeviceTensor::view`], [`DeviceTensor::view_mut`]) describe permuted, sliced,
/// broadcast or reshaped windows of the same storage without copying; operators accept
/// tensors and views alike (through [`AsTensorView`] / [`AsTensorViewMut`]). Views
/// borrow the tensor, so the borrow checker forbids writing through an output view while
/// an input view of the same tensor is alive.
///
/// Dropping a tensor never waits: its memory returns to the device's caching allocator
/// with the queued work that still uses it (see the crate docs, "Lifetimes"). `DeviceTensor<T>` is `Send + Sync`: the host never dereferences the
/// device address, `&self` only lets queued work *read* the storage, and writing needs
/// `&mut self`.
///
/// ```
/// # fn main() -> ascendcl::Result<()> {
/// use ascendcl::{DeviceTensor, Runtime};
/// use ndarray::array;
/// let stream = Runtime::auto()?.device(0)?.stream()?;
/// let a = array![[1.0f32, 2.0, 3.0], [4.0, 5.0, 6.0]];
/// let t = DeviceTensor::from_array(&stream, &a)?;
/// assert_eq!(t.shape(), &[2, 3]);
/// let back = t.view().t().to_array(&stream)?;
/// assert_eq!(back, a.t().into_dyn());
/// # Ok(()) }
/// ```
pub struct DeviceTensor<T: Element> {
    pub(crate) buf: Buffer,
    pub(crate) layout: Layout,
    pub(crate) _elem: PhantomData<T>,
}

impl<T: Element> fmt::Debug for DeviceTensor<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DeviceTensor")
            .field("dtype", &T::DTYPE)
            .field("shape", &self.layout.dims)
            .field("device", &self.buf.device.id)
            .finish()
    }
}

pub(crate) fn check_stream_device(
    buf: &Buffer,
    stream: &Stream,
    argument: &'static str,
) -> Result<()> {
    buf.device.expect_same(&stream.inner.device, argument)
}

/// The read-only accessors that tensors and views share (`self.layout`, `self.buf`).
macro_rules! layout_accessors {
    () => {
        /// The shape.
        pub fn shape(&self) -> &[usize] {
            self.layout.dims.as_slice()
        }

        /// The strides in elements, row-major for a tensor; 0 along broadcast dims of a view.
        pub fn strides(&self) -> &[i64] {
            self.layout.strides()
        }

        /// The offset of the first element in the storage, in elements (0 for a tensor).
        pub fn offset(&self) -> i64 {
            self.layout.offset
        }

        /// Number of elements.
        pub fn len(&self) -> usize {
            self.layout.numel()
        }

        /// Whether there are no elements.
        pub fn is_empty(&self) -> bool {
            self.len() == 0
        }

        /// The id of the device holding the storage.
        pub fn device_id(&self) -> i32 {
            self.buf.device.id
        }
    };
}

mod buffer;
mod dynamic;
mod layout;
mod reshape;
mod shared;
mod traits;
mod view;

pub(crate) use buffer::Buffer;
pub(crate) use layout::Layout;
pub use shared::{IntoTypedError, Tensor};
pub use traits::{AsTensorView, AsTensorViewMut};
pub(crate) use view::RawTensor;
pub use view::{TensorView, TensorViewMut};

impl<T: Element> DeviceTensor<T> {
    /// Uploads `array` (any layout, any number of dims up to 8) to a new contiguous tensor
    /// on the device of `stream`, as [`copy_from_array`](Self::copy_from_array) does: a
    /// dense array is copied at once when no queued work uses the new memory, otherwise
    /// the data is staged in the stream's reused pinned buffer and the copy is queued.
    /// Either way `array` is never read after this returns, and repeated uploads make no
    /// pinned allocation.
    ///
    /// # Errors
    /// [`Error::TooManyDims`], [`Error::Acl`] from allocation or the copy.
    pub fn from_array<S, D>(stream: &Stream, array: &ArrayBase<S, D>) -> Result<Self>
    where
        S: Data<Elem = T>,
        D: Dimension,
    {
        let dims = Dims::new("array", array.shape())?;
        let device = &stream.inner.device;
        // The upload is queued on `stream` when the block has queued work (there only).
        let buf = Buffer::alloc(device, dims, T::DTYPE, Some(stream))?;
        let tensor = DeviceTensor {
            buf,
            layout: Layout::contiguous(dims)?,
            _elem: PhantomData,
        };
        crate::transfer::upload(&tensor.buf, &tensor.layout, stream, array)?;
        Ok(tensor)
    }

    /// A new contiguous tensor of `shape` whose contents are unspecified, from the device's
    /// caching allocator without a fill (no kernel, no memset): the output of an operator
    /// that writes it whole, as the allocating forms (`exp_new`, `add_new`, ...) make.
    ///
    /// Sound because the host never reads a device tensor's bytes except through a
    /// download, which is stream-ordered after the writes recorded on the memory; the
    /// memory's use records (kept from its previous owner) order this tensor's first write
    /// after the work that still uses the memory. A download of an `empty` tensor before
    /// any write reads whatever the memory holds: the bytes of a dropped tensor, or of
    /// nothing. Every bit pattern is a value of each numeric element type, and a BOOL
    /// download normalises each byte to 0 or 1, so no invalid Rust value is made; but the
    /// values mean nothing, and when the previous
    /// owner's work on another stream may still run, the simulator's racecheck reports
    /// that read as a race. Write it before reading it.
    ///
    /// ```
    /// # fn main() -> ascendcl::Result<()> {
    /// use ascendcl::{DeviceTensor, Runtime, fill_inplace};
    /// let stream = Runtime::auto()?.device(0)?.stream()?;
    /// let mut t = DeviceTensor::<f32>::empty(&stream, (2, 2))?;
    /// fill_inplace(&mut t, 3.0, &stream)?; // written whole before any read
    /// assert_eq!(t.to_array::<ndarray::Ix2>(&stream)?, ndarray::Array2::from_elem((2, 2), 3.0));
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// [`Error::TooManyDims`], [`Error::TooManyElements`], [`Error::Acl`] from the
    /// allocation.
    pub fn empty(stream: &Stream, shape: impl IntoDims) -> Result<Self> {
        let dims = shape.into_dims("shape")?;
        Self::for_output(stream, dims)
    }

    /// [`empty`](Self::empty) of `dims` already checked: its block's use records order
    /// the first write after the block's old work.
    #[inline]
    pub(crate) fn for_output(stream: &Stream, dims: Dims) -> Result<Self> {
        let buf = Buffer::alloc(&stream.inner.device, dims, T::DTYPE, Some(stream))?;
        Ok(DeviceTensor {
            buf,
            layout: Layout::contiguous(dims)?,
            _elem: PhantomData,
        })
    }

    /// A new tensor of `shape` filled with zeros (`aclrtMemset`) on the device of `stream`.
    ///
    /// `shape` is any of the forms of [`IntoDims`]: `&[2, 3]`, `(2, 3)`, `[2, 3]`, ...
    ///
    /// # Errors
    /// [`Error::TooManyDims`], [`Error::TooManyElements`], [`Error::Acl`] from allocation
    /// or the memset.
    pub fn zeros(stream: &Stream, shape: impl IntoDims) -> Result<Self> {
        let dims = shape.into_dims("shape")?;
        Ok(DeviceTensor {
            buf: zeroed(stream, dims, T::DTYPE)?,
            layout: Layout::contiguous(dims)?,
            _elem: PhantomData,
        })
    }

    /// Downloads the tensor, after the work queued on `stream` so far. Returns only once
    /// the copy has finished.
    ///
    /// The array has the dimension type the caller names, `ArrayD` or one of a fixed
    /// number of dims, checked before anything is copied:
    ///
    /// ```
    /// # fn main() -> ascendcl::Result<()> {
    /// use ascendcl::{DeviceTensor, Runtime};
    /// use ndarray::{Array2, ArrayD, Ix3, array};
    /// let stream = Runtime::auto()?.device(0)?.stream()?;
    /// let t = DeviceTensor::from_array(&stream, &array![[1.0f32, 2.0], [3.0, 4.0]])?;
    /// let a: Array2<f32> = t.to_array(&stream)?;
    /// let d: ArrayD<f32> = t.to_array(&stream)?;
    /// assert_eq!(a[[1, 0]], 3.0);
    /// assert_eq!(d, a.clone().into_dyn());
    /// assert_eq!(t.to_array::<ndarray::IxDyn>(&stream)?[[0, 1]], 2.0);
    /// assert!(matches!(
    ///     t.to_array::<Ix3>(&stream),
    ///     Err(ascendcl::Error::RankMismatch { ndim: 3, .. })
    /// ));
    /// # Ok(()) }
    /// ```
    ///
    /// The dimension type must be known, from an annotation or a turbofish:
    ///
    /// ```compile_fail
    /// # fn main() -> ascendcl::Result<()> {
    /// # let stream = ascendcl::Runtime::auto()?.device(0)?.stream()?;
    /// # let t = ascendcl::DeviceTensor::<f32>::zeros(&stream, (2, 2))?;
    /// let first = t.to_array(&stream)?[[0, 0]];
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// [`Error::RankMismatch`] for a `D` of another number of dims,
    /// [`Error::DeviceMismatch`] for a stream of another device, [`Error::Acl`] from the
    /// copy or the synchronisation.
    pub fn to_array<D: Dimension>(&self, stream: &Stream) -> Result<Array<T, D>> {
        self.view().to_array(stream)
    }

    layout_accessors!();

    /// The element type.
    pub fn dtype(&self) -> DType {
        T::DTYPE
    }

    /// A read-only view of the whole tensor.
    pub fn view(&self) -> TensorView<'_, T> {
        TensorView {
            buf: &self.buf,
            layout: self.layout,
            dtype: T::DTYPE,
            whole: true,
            _elem: PhantomData,
        }
    }

    /// A writable view of the whole tensor (for operator outputs).
    pub fn view_mut(&mut self) -> TensorViewMut<'_, T> {
        TensorViewMut {
            buf: &self.buf,
            layout: self.layout,
            dtype: T::DTYPE,
            whole: true,
            _elem: PhantomData,
        }
    }
}

/// The memory of a contiguous tensor of `dims` and `dtype` on the device of `stream`,
/// filled with zeros by the host (`aclrtMemset`).
pub(crate) fn zeroed(stream: &Stream, dims: Dims, dtype: DType) -> Result<Buffer> {
    let device = &stream.inner.device;
    let buf = Buffer::alloc(device, dims, dtype, None)?;
    let bytes = buf.bytes;
    // A cached block may still be used by queued work: a host memset waits for it.
    buf.uses.wait_for(crate::uses::Access::Write)?;
    // SAFETY: `buf.ptr` holds `bytes` bytes of device memory that no queued work uses
    // (waited for above); the device's context is current (bound by `Buffer::alloc`).
    unsafe { sys::memset(device.table(), buf.ptr, bytes, 0, bytes) }?;
    Ok(buf)
}
