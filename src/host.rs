//! [`HostTensor`]: page-locked host memory that the device copies to and from directly.

use crate::device::Device;
use crate::element::Element;
use crate::error::{Error, Result};
use crate::pinned::Pinned;
use crate::shape::{Dims, IntoDims};
use crate::stream::Stream;
use crate::tensor::{DeviceTensor, TensorView, TensorViewMut};
use crate::transfer::{Direction, check_shape, copy_pinned};
use crate::uses::{Access, Uses};
use ndarray::{ArrayBase, ArrayView, ArrayViewMut, Data, Dimension};
use std::fmt;
use std::marker::PhantomData;

/// A host tensor's pinned memory and the queued copies that use it.
pub(crate) struct HostMem {
    pub(crate) pinned: Pinned,
    pub(crate) uses: Uses,
}

impl Drop for HostMem {
    fn drop(&mut self) {
        if !self.uses.wait_idle() {
            // Leaked rather than freed under a copy that may still run.
            let bytes = self.pinned.bytes() as u64;
            self.pinned
                .device()
                .note_leak("pinned host tensor", 1, bytes, 0);
            self.pinned.forget();
        }
    }
}

/// A tensor in page-locked host memory (`aclrtMallocHost`) with elements of type `T`,
/// stored contiguously in row-major order.
///
/// Copies between a `HostTensor` and a [`DeviceTensor`](crate::DeviceTensor)
/// ([`copy_from_host`](crate::DeviceTensor::copy_from_host),
/// [`copy_to_host`](crate::DeviceTensor::copy_to_host)) are queued on a stream and read or
/// write this memory directly: no staging copy, and neither direction waits. The host side
/// is stream-ordered like device memory: the accessors wait for queued copies that would
/// conflict ([`view`](Self::view) for copies still writing it, [`view_mut`](Self::view_mut)
/// for every queued copy), and dropping the tensor waits for all of them, so the memory is
/// never read early or freed under a queued copy.
///
/// The memory belongs to the device whose context allocated it; copies with a stream of
/// another device are refused with [`Error::DeviceMismatch`].
///
/// `HostTensor<T>` is `Send + Sync`: shared access only reads the memory (after waiting for
/// queued writes to it), and writing needs `&mut self`.
///
/// ```
/// # fn main() -> ascendcl::Result<()> {
/// use ascendcl::{DeviceTensor, HostTensor, Runtime};
/// use ndarray::array;
/// let device = Runtime::auto()?.device(0)?;
/// let stream = device.stream()?;
/// let mut host = HostTensor::from_array(&device, &array![[1.0f32, 2.0], [3.0, 4.0]])?;
/// let mut t = DeviceTensor::<f32>::zeros(&stream, &[2, 2])?;
/// t.copy_from_host(&stream, &host)?; // queued, reads `host` directly
/// ascendcl::mish_inplace(&mut t, &stream)?;
/// t.copy_to_host(&stream, &mut host)?; // queued too
/// let y = host.view::<ndarray::Ix2>()?; // waits for the copy into `host`
/// assert!((y[[0, 0]] - 0.865098).abs() < 1e-5);
/// # Ok(()) }
/// ```
pub struct HostTensor<T: Element> {
    pub(crate) mem: HostMem,
    pub(crate) dims: Dims,
    _elem: PhantomData<T>,
}

impl<T: Element> fmt::Debug for HostTensor<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HostTensor")
            .field("dtype", &T::DTYPE)
            .field("shape", &self.dims)
            .field("device", &self.mem.pinned.device().id)
            .finish()
    }
}

impl<T: Element> HostTensor<T> {
    /// A zero-filled pinned tensor of `shape`, allocated in `device`'s context.
    ///
    /// ```
    /// # fn main() -> ascendcl::Result<()> {
    /// let device = ascendcl::Runtime::auto()?.device(0)?;
    /// let host = ascendcl::HostTensor::<half::bf16>::zeros(&device, &[2, 3])?;
    /// assert_eq!(host.shape(), &[2, 3]);
    /// assert!(host.as_slice()?.iter().all(|v| *v == half::bf16::ZERO));
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// [`Error::TooManyElements`] / [`Error::InvalidArgument`] for a shape whose size
    /// overflows, [`Error::Acl`] from `aclrtMallocHost` (e.g. out of memory).
    pub fn zeros(device: &Device, shape: impl IntoDims) -> Result<Self> {
        let dims = shape.into_dims("shape")?;
        let len = dims.numel();
        let bytes = Pinned::bytes_of(len, T::DTYPE.size())?;
        let mut tensor = HostTensor {
            mem: HostMem {
                pinned: Pinned::alloc(&device.inner, bytes)?,
                uses: Uses::new(),
            },
            dims,
            _elem: PhantomData,
        };
        // aclrtMallocHost does not promise zeroed memory.
        tensor.slice_mut().fill(T::default());
        Ok(tensor)
    }

    /// A pinned tensor holding a copy of `array` (any layout), in `device`'s context.
    ///
    /// # Errors
    /// As [`zeros`](Self::zeros).
    pub fn from_array<S, D>(device: &Device, array: &ArrayBase<S, D>) -> Result<Self>
    where
        S: Data<Elem = T>,
        D: Dimension,
    {
        let mut tensor = Self::zeros(device, array.shape())?;
        let dst = tensor.slice_mut();
        match array.as_slice() {
            Some(src) => dst.copy_from_slice(src),
            None => dst.iter_mut().zip(array.iter()).for_each(|(d, s)| *d = *s),
        }
        Ok(tensor)
    }

    /// The shape.
    pub fn shape(&self) -> &[usize] {
        &self.dims
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        self.dims.numel()
    }

    /// Whether the tensor has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The id of the device whose context allocated the memory.
    pub fn device_id(&self) -> i32 {
        self.mem.pinned.device().id
    }

    /// The elements in row-major order, once the copies queued to write them have run.
    ///
    /// # Errors
    /// [`Error::Acl`] from waiting for a stream (e.g. a failed copy).
    pub fn as_slice(&self) -> Result<&[T]> {
        self.mem.uses.wait_for(Access::Read)?;
        self.check_valid()?;
        // SAFETY: the allocation holds `len` elements of `T`, initialised (zero-filled at
        // creation, then written only by the host or by copies of `T` values) and aligned
        // (aclrtMallocHost memory is page-aligned); no queued copy writes it any more
        // (waited above), and a new one needs `&mut self`.
        Ok(unsafe { std::slice::from_raw_parts(self.mem.pinned.ptr().cast::<T>(), self.len()) })
    }

    /// The elements in row-major order for writing, once every queued copy that reads or
    /// writes them has run.
    ///
    /// # Errors
    /// [`Error::Acl`] from waiting for a stream.
    pub fn as_slice_mut(&mut self) -> Result<&mut [T]> {
        self.mem.uses.wait_for(Access::Write)?;
        self.normalise();
        Ok(self.slice_mut())
    }

    /// The memory's bytes, for checking and normalising them before they are read as `T`.
    fn bytes(&self) -> &[u8] {
        // SAFETY: the allocation holds `len` elements of `T`, all of whose bytes are
        // initialised (zero-filled at creation, then written by the host or by copies);
        // u8 has no invalid values. Callers have waited for every copy that writes it.
        unsafe {
            std::slice::from_raw_parts(
                self.mem.pinned.ptr().cast::<u8>().cast_const(),
                self.len() * T::DTYPE.size(),
            )
        }
    }

    /// Makes every element a valid `T` (BOOL: nonzero bytes become 1), once no queued copy
    /// writes the memory any more (the caller has waited).
    fn normalise(&mut self) {
        if T::NORMALISES {
            let n = self.len() * T::DTYPE.size();
            // SAFETY: as in `bytes`, with exclusive access through `&mut self`.
            let bytes =
                unsafe { std::slice::from_raw_parts_mut(self.mem.pinned.ptr().cast::<u8>(), n) };
            T::normalise_bytes(bytes);
        }
    }

    /// Refuses to hand out memory holding a byte that is no valid `T`: possible for BOOL
    /// only after a download into it failed midway (a successful one normalises).
    fn check_valid(&self) -> Result<()> {
        if T::NORMALISES && self.bytes().iter().any(|&b| b > 1) {
            return Err(Error::InvalidArgument(format!(
                "the host tensor holds bytes that are no valid {} (a download into it \
                 failed); write it again before reading it",
                T::DTYPE
            )));
        }
        Ok(())
    }

    /// After queueing a download into this memory: for a type whose device bytes need
    /// normalising (BOOL), waits for the copy and normalises them, so the host never
    /// holds an invalid value (such a download is therefore not asynchronous).
    fn finish_download(&mut self) -> Result<()> {
        if T::NORMALISES {
            self.mem.uses.wait_for(Access::Write)?;
            self.normalise();
        }
        Ok(())
    }

    /// An ndarray view of the elements, of the dimension type the caller names (`IxDyn`
    /// or a fixed number of dims); see [`as_slice`](Self::as_slice).
    ///
    /// ```
    /// # fn main() -> ascendcl::Result<()> {
    /// use ndarray::{ArrayView2, ArrayViewD};
    /// let device = ascendcl::Runtime::auto()?.device(0)?;
    /// let mut host = ascendcl::HostTensor::<f32>::zeros(&device, (2, 3))?;
    /// host.view_mut::<ndarray::Ix2>()?[[1, 2]] = 5.0;
    /// let v: ArrayView2<'_, f32> = host.view()?;
    /// assert_eq!(v[[1, 2]], 5.0);
    /// let d: ArrayViewD<'_, f32> = host.view()?;
    /// assert_eq!(d.shape(), &[2, 3]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// [`Error::RankMismatch`] for a `D` of another number of dims, or as
    /// [`as_slice`](Self::as_slice).
    pub fn view<D: Dimension>(&self) -> Result<ArrayView<'_, T, D>> {
        let shape: D = crate::shape::dimension("host tensor", &self.dims)?;
        let slice = self.as_slice()?;
        ArrayView::from_shape(shape, slice).map_err(|e| Error::InvalidArgument(e.to_string()))
    }

    /// A mutable ndarray view of the elements, of the dimension type the caller names;
    /// see [`view`](Self::view) and [`as_slice_mut`](Self::as_slice_mut).
    ///
    /// # Errors
    /// [`Error::RankMismatch`] for a `D` of another number of dims, or as
    /// [`as_slice_mut`](Self::as_slice_mut).
    pub fn view_mut<D: Dimension>(&mut self) -> Result<ArrayViewMut<'_, T, D>> {
        let shape: D = crate::shape::dimension("host tensor", &self.dims)?;
        let slice = self.as_slice_mut()?;
        ArrayViewMut::from_shape(shape, slice).map_err(|e| Error::InvalidArgument(e.to_string()))
    }

    /// Fills the tensor from `array` (same shape, any layout), once every queued copy that
    /// uses the memory has run.
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`], or as [`as_slice_mut`](Self::as_slice_mut).
    pub fn copy_from_array<S, D>(&mut self, array: &ArrayBase<S, D>) -> Result<()>
    where
        S: Data<Elem = T>,
        D: Dimension,
    {
        check_shape("array", &self.dims, array.shape())?;
        let mut dst = self.view_mut::<D>()?;
        dst.zip_mut_with(array, |d, s| *d = *s);
        Ok(())
    }

    /// The elements as a slice, for the host to write now (no queued copy can use them:
    /// creation, or after waiting).
    fn slice_mut(&mut self) -> &mut [T] {
        // SAFETY: as in `as_slice`, with exclusive access through `&mut self`; the callers
        // have made sure no queued copy reads or writes the memory.
        unsafe { std::slice::from_raw_parts_mut(self.mem.pinned.ptr().cast::<T>(), self.len()) }
    }

    /// Checks that copies with `stream` may use this memory.
    pub(crate) fn check_stream(&self, stream: &Stream) -> Result<()> {
        self.mem
            .pinned
            .device()
            .expect_same(&stream.inner.device, "host tensor")
    }
}

impl<T: Element> DeviceTensor<T> {
    /// Queues a copy of `host` (same shape) into this tensor on `stream`, straight from the
    /// pinned memory: no staging, and no wait. `host` cannot be written or dropped before
    /// the copy has run (its accessors and its drop wait for it).
    ///
    /// ```
    /// # fn main() -> ascendcl::Result<()> {
    /// use ascendcl::{DeviceTensor, HostTensor, Runtime};
    /// use ndarray::array;
    /// let device = Runtime::auto()?.device(0)?;
    /// let stream = device.stream()?;
    /// let host = HostTensor::from_array(&device, &array![1.0f32, 2.0, 3.0])?;
    /// let mut t = DeviceTensor::<f32>::zeros(&stream, &[3])?;
    /// t.copy_from_host(&stream, &host)?;
    /// assert_eq!(t.to_array(&stream)?, array![1.0, 2.0, 3.0].into_dyn());
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`], [`Error::DeviceMismatch`] for a stream of another device
    /// than the tensor's or the host tensor's, [`Error::Acl`] from queueing the copy.
    pub fn copy_from_host(&mut self, stream: &Stream, host: &HostTensor<T>) -> Result<()> {
        copy_pinned(&self.buf, &self.layout, stream, host, Direction::ToDevice)
    }

    /// Queues a copy of this tensor into `host` (same shape) on `stream`, straight into the
    /// pinned memory, without waiting. [`HostTensor::view`] waits for it.
    ///
    /// ```
    /// # fn main() -> ascendcl::Result<()> {
    /// use ascendcl::{DeviceTensor, HostTensor, Runtime};
    /// use ndarray::array;
    /// let device = Runtime::auto()?.device(0)?;
    /// let stream = device.stream()?;
    /// let t = DeviceTensor::from_array(&stream, &array![[1.0f32, 2.0]])?;
    /// let mut host = HostTensor::<f32>::zeros(&device, &[1, 2])?;
    /// t.copy_to_host(&stream, &mut host)?;
    /// assert_eq!(host.view()?, array![[1.0, 2.0]].into_dyn());
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// As [`copy_from_host`](Self::copy_from_host).
    pub fn copy_to_host(&self, stream: &Stream, host: &mut HostTensor<T>) -> Result<()> {
        copy_pinned(&self.buf, &self.layout, stream, host, Direction::ToHost)?;
        host.finish_download()
    }
}

impl<T: Element> TensorView<'_, T> {
    /// Queues a copy of this dense row-major window into `host`; see
    /// [`DeviceTensor::copy_to_host`].
    ///
    /// # Errors
    /// As [`DeviceTensor::copy_to_host`], and [`Error::InvalidArgument`] for a window that
    /// is not dense row-major.
    pub fn copy_to_host(&self, stream: &Stream, host: &mut HostTensor<T>) -> Result<()> {
        copy_pinned(self.buf, &self.layout, stream, host, Direction::ToHost)?;
        host.finish_download()
    }
}

impl<T: Element> TensorViewMut<'_, T> {
    /// Queues a copy of `host` into this dense row-major window (e.g. a range of rows); see
    /// [`DeviceTensor::copy_from_host`].
    ///
    /// ```
    /// # fn main() -> ascendcl::Result<()> {
    /// use ascendcl::{DeviceTensor, HostTensor, Runtime};
    /// use ndarray::array;
    /// let device = Runtime::auto()?.device(0)?;
    /// let stream = device.stream()?;
    /// let mut t = DeviceTensor::<f32>::zeros(&stream, &[3, 2])?;
    /// let row = HostTensor::from_array(&device, &array![[5.0f32, 6.0]])?;
    /// t.view_mut().slice(0, 2, 3, 1)?.copy_from_host(&stream, &row)?;
    /// assert_eq!(t.to_array(&stream)?, array![[0.0, 0.0], [0.0, 0.0], [5.0, 6.0]].into_dyn());
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// As [`DeviceTensor::copy_from_host`], and [`Error::InvalidArgument`] for a window
    /// that is not dense row-major.
    pub fn copy_from_host(&mut self, stream: &Stream, host: &HostTensor<T>) -> Result<()> {
        copy_pinned(self.buf, &self.layout, stream, host, Direction::ToDevice)
    }

    /// Queues a copy of this dense row-major window into `host`; see
    /// [`DeviceTensor::copy_to_host`].
    ///
    /// # Errors
    /// As [`TensorView::copy_to_host`].
    pub fn copy_to_host(&self, stream: &Stream, host: &mut HostTensor<T>) -> Result<()> {
        copy_pinned(self.buf, &self.layout, stream, host, Direction::ToHost)?;
        host.finish_download()
    }
}
