//! [`DeviceTensor`] and its views.

use crate::device::DeviceInner;
use crate::element::{DType, Element};
use crate::error::{Error, Result};
use crate::shape::{self, Dims, IntoDims, MAX_DIMS};
use crate::stream::Stream;
use crate::sys;
use crate::uses::{Access, Uses};
use ascend_sys::aclTensor;
use ndarray::{Array, ArrayBase, Data, Dimension};
use std::ffi::c_void;
use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;
use std::sync::atomic::{AtomicPtr, Ordering};

/// Device memory of one tensor, with the streams whose queued work uses it.
pub(crate) struct Buffer {
    pub(crate) device: Arc<DeviceInner>,
    pub(crate) ptr: *mut c_void,
    /// Capacity in elements of the tensor's dtype (the storage shape given to aclnn).
    pub(crate) len: usize,
    /// Size of the allocation in bytes.
    bytes: usize,
    pub(crate) uses: Uses,
    /// The `aclTensor` descriptor of the owning [`DeviceTensor`]'s full layout (its dims,
    /// contiguous strides, offset 0, storage `[len]`, its dtype, format ND, `ptr`), made on
    /// the first operator call that passes the whole tensor and destroyed when the tensor
    /// is dropped, after the queued work that used it has finished. Null until then.
    ///
    /// Race-free: the first callers may each create one, exactly one wins the
    /// compare-exchange and the others destroy theirs. Afterwards the descriptor is only
    /// *read*: it is passed to phase-1 calls (possibly from several threads at once, as an
    /// input of some calls and the output of another) and never given to
    /// `aclSetInputTensorAddr` / `aclSetOutputTensorAddr` (plans own their descriptors).
    /// An `aclTensor` is immutable metadata for aclnn; the simulator serialises phase 1
    /// and copies the descriptor into the executor, and it allows one descriptor in any
    /// number of executors.
    pub(crate) desc: AtomicPtr<aclTensor>,
}

// SAFETY: `ptr` is device memory, never dereferenced by the host; it is only passed to
// CANN calls made with the device's context bound. Use tracking is behind a mutex.
unsafe impl Send for Buffer {}
// SAFETY: as above; `&Buffer` gives out the address only to stream-ordered calls.
unsafe impl Sync for Buffer {}

/// Smallest allocation, so that empty tensors still have a valid, aligned address.
const MIN_BYTES: usize = 32;

impl Buffer {
    pub(crate) fn alloc(device: &Arc<DeviceInner>, len: usize, elem_size: usize) -> Result<Buffer> {
        let bytes = len
            .checked_mul(elem_size)
            .ok_or_else(|| Error::InvalidArgument(format!("{len} elements overflow usize")))?
            .max(MIN_BYTES);
        device.bind()?;
        let block = device
            .cache
            .take(device, crate::alloc::size_class(bytes), false)?;
        Ok(Buffer {
            device: Arc::clone(device),
            ptr: block.ptr,
            len,
            bytes: block.bytes,
            uses: block.uses,
            desc: AtomicPtr::new(std::ptr::null_mut()),
        })
    }

    /// Size of the allocation in bytes.
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }

    /// The cached descriptor of the whole tensor, if one was made.
    #[inline]
    pub(crate) fn cached_desc(&self) -> *mut aclTensor {
        self.desc.load(Ordering::Acquire)
    }

    /// Installs `new` as the cached descriptor unless another thread was first; returns the
    /// descriptor to use and whether `new` was installed (otherwise the caller destroys it).
    #[cold]
    pub(crate) fn install_desc(&self, new: *mut aclTensor) -> (*mut aclTensor, bool) {
        match self.desc.compare_exchange(
            std::ptr::null_mut(),
            new,
            Ordering::AcqRel,
            Ordering::Acquire,
        ) {
            Ok(_) => (new, true),
            Err(winner) => (winner, false),
        }
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        // With caching on, a stream-ordered release without waiting: the block keeps its
        // use records, which order every later user after the queued work (`alloc.rs`).
        let block = crate::alloc::Block {
            ptr: self.ptr,
            bytes: self.bytes,
            uses: std::mem::replace(&mut self.uses, Uses::new()),
            desc: *self.desc.get_mut(),
        };
        self.device.cache.give_back(&self.device, block);
    }
}

/// Pinned host memory (`aclrtMallocHost`) used to stage copies.
pub(crate) struct HostBuf {
    device: Arc<DeviceInner>,
    ptr: *mut c_void,
    bytes: usize,
}

impl HostBuf {
    pub(crate) fn alloc(device: &Arc<DeviceInner>, bytes: usize) -> Result<HostBuf> {
        device.bind()?;
        let t = device.table();
        let ptr = sys::malloc_host(t, bytes.max(MIN_BYTES))?;
        Ok(HostBuf {
            device: Arc::clone(device),
            ptr,
            bytes,
        })
    }

    /// Leaks the buffer, counted: queued work may still write into it.
    fn leak(mut self) {
        self.device
            .note_leak("download staging", 1, self.bytes.max(MIN_BYTES) as u64, 0);
        // The pinned memory stays allocated (queued work may still use it); the device
        // handle is released as usual: the drop frees nothing once the pointer is null.
        self.ptr = std::ptr::null_mut();
    }

    /// Gives up ownership (the caller frees it with `aclrtFreeHost`).
    fn into_raw(mut self) -> *mut c_void {
        // Null: the drop below frees nothing.
        std::mem::replace(&mut self.ptr, std::ptr::null_mut())
    }
}

impl Drop for HostBuf {
    fn drop(&mut self) {
        if self.ptr.is_null() {
            return;
        }
        // SAFETY: allocated by aclrtMallocHost, unused by queued work (owners that enqueue
        // copies either wait for them or hand the pointer to the stream with `into_raw`).
        if let Err(e) = unsafe { sys::free_host(self.device.table(), self.ptr) } {
            self.device.note_release_error(&e);
            self.device
                .note_leak("pinned staging", 1, self.bytes.max(MIN_BYTES) as u64, 0);
        }
    }
}

/// Shape, strides and offset of a view, in elements. Strides past the last dim are 0, so
/// that equality compares exactly the view.
#[derive(Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Layout {
    pub(crate) dims: Dims,
    pub(crate) strides: [i64; MAX_DIMS],
    pub(crate) offset: i64,
}

fn to_i64(v: usize) -> Result<i64> {
    i64::try_from(v).map_err(|_| Error::InvalidArgument(format!("{v} does not fit in i64")))
}

impl Layout {
    pub(crate) fn contiguous(dims: Dims) -> Result<Layout> {
        let mut strides = [0i64; MAX_DIMS];
        let mut acc: i64 = 1;
        for i in (0..dims.ndim()).rev() {
            strides[i] = acc;
            acc = acc.saturating_mul(to_i64(dims[i])?.max(1));
        }
        Ok(Layout {
            dims,
            strides,
            offset: 0,
        })
    }

    pub(crate) fn strides(&self) -> &[i64] {
        &self.strides[..self.dims.ndim()]
    }

    pub(crate) fn numel(&self) -> usize {
        self.dims.numel()
    }

    /// Whether the elements are dense in row-major order.
    pub(crate) fn is_contiguous(&self) -> bool {
        let mut acc: i64 = 1;
        for i in (0..self.dims.ndim()).rev() {
            let d = self.dims[i];
            if d != 1 && self.strides[i] != acc {
                return false;
            }
            acc = acc.saturating_mul(i64::try_from(d).unwrap_or(i64::MAX));
        }
        true
    }

    /// Index range `[lo, hi]` of storage elements the view touches (`None` when empty).
    pub(crate) fn span(&self) -> Option<(i64, i64)> {
        if self.numel() == 0 {
            return None;
        }
        let mut hi = self.offset;
        for (d, s) in self.dims.iter().zip(self.strides()) {
            let extent = i64::try_from(*d).ok()?.checked_sub(1)?.checked_mul(*s)?;
            hi = hi.checked_add(extent)?;
        }
        Some((self.offset, hi))
    }

    /// How many storage elements, from the start of the storage, the view needs: one past
    /// the last it touches (its offset when empty). Every storage a checked view of this
    /// layout lives in is at least this long.
    pub(crate) fn reach(&self) -> usize {
        let end = self
            .span()
            .map_or(self.offset, |(_, hi)| hi.saturating_add(1));
        usize::try_from(end).unwrap_or(0)
    }

    /// Checks that the view stays inside a storage of `len` elements.
    fn check_within(&self, len: usize) -> Result<()> {
        let len = to_i64(len)?;
        let ok = self.offset >= 0
            && self.strides().iter().all(|s| *s >= 0)
            && match self.span() {
                None => self.numel() == 0 && self.offset <= len,
                Some((lo, hi)) => lo >= 0 && hi < len,
            };
        if ok {
            Ok(())
        } else {
            Err(Error::InvalidArgument(format!(
                "view {:?} strides {:?} offset {} reaches outside its storage of {len} elements",
                self.dims,
                self.strides(),
                self.offset
            )))
        }
    }

    fn permute(&self, axes: &[usize]) -> Result<Layout> {
        let n = self.dims.ndim();
        let mut seen = [false; MAX_DIMS];
        let valid = axes.len() == n
            && axes
                .iter()
                .all(|&a| a < n && !std::mem::replace(seen.get_mut(a).unwrap_or(&mut true), true));
        if !valid {
            return Err(Error::InvalidArgument(format!(
                "permutation {axes:?} is not a permutation of {n} axes"
            )));
        }
        let mut dims = [0usize; MAX_DIMS];
        let mut strides = [0i64; MAX_DIMS];
        for (i, &a) in axes.iter().enumerate() {
            dims[i] = self.dims[a];
            strides[i] = self.strides[a];
        }
        Ok(Layout {
            dims: Dims::new("view", &dims[..n])?,
            strides,
            offset: self.offset,
        })
    }

    fn reversed_axes(&self) -> Layout {
        let n = self.dims.ndim();
        let mut axes = [0usize; MAX_DIMS];
        for (i, a) in axes[..n].iter_mut().enumerate() {
            *a = n - 1 - i;
        }
        // A reversal is always a valid permutation.
        self.permute(&axes[..n]).unwrap_or(*self)
    }

    fn slice(&self, axis: usize, start: usize, end: usize, step: usize) -> Result<Layout> {
        let n = self.dims.ndim();
        if axis >= n || step == 0 || start > end || end > self.dims[axis] {
            return Err(Error::InvalidArgument(format!(
                "slice {start}..{end} step {step} of axis {axis} is invalid for shape {:?}",
                self.dims
            )));
        }
        let mut dims = [0usize; MAX_DIMS];
        dims[..n].copy_from_slice(&self.dims);
        dims[axis] = (end - start).div_ceil(step);
        let overflow = || Error::InvalidArgument(format!("slice step {step} overflows i64"));
        let mut strides = self.strides;
        // An empty view touches no element: its offset stays put (advancing it could
        // point past the end of an empty storage and make a valid slice an error).
        let offset = if dims[axis] == 0 || self.numel() == 0 {
            self.offset
        } else {
            to_i64(start)?
                .checked_mul(self.strides[axis])
                .and_then(|o| o.checked_add(self.offset))
                .ok_or_else(overflow)?
        };
        strides[axis] = if dims[axis] <= 1 {
            self.strides[axis]
        } else {
            self.strides[axis]
                .checked_mul(to_i64(step)?)
                .ok_or_else(overflow)?
        };
        Ok(Layout {
            dims: Dims::new("view", &dims[..n])?,
            strides,
            offset,
        })
    }

    fn broadcast_to(&self, target: Dims) -> Result<Layout> {
        let shape = target.as_slice();
        let (n, m) = (self.dims.ndim(), target.ndim());
        let fail = || {
            Error::InvalidArgument(format!(
                "shape {:?} cannot be broadcast to {shape:?}",
                self.dims
            ))
        };
        if n > m {
            return Err(fail());
        }
        let mut strides = [0i64; MAX_DIMS];
        for i in 0..m {
            strides[i] = match i.checked_sub(m - n) {
                None => 0,
                Some(j) if self.dims[j] == target[i] => self.strides[j],
                Some(j) if self.dims[j] == 1 => 0,
                Some(_) => return Err(fail()),
            };
        }
        Ok(Layout {
            dims: target,
            strides,
            offset: self.offset,
        })
    }

    fn reshape(&self, dims: Dims) -> Result<Layout> {
        let shape = dims.as_slice();
        if !self.is_contiguous() || dims.numel() != self.numel() {
            return Err(Error::InvalidArgument(format!(
                "cannot reshape {:?} (strides {:?}) to {shape:?}: needs a contiguous view with the same number of elements",
                self.dims,
                self.strides()
            )));
        }
        let mut l = Layout::contiguous(dims)?;
        l.offset = self.offset;
        Ok(l)
    }
}

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

        /// The element type.
        pub fn dtype(&self) -> DType {
            T::DTYPE
        }

        /// The id of the device holding the storage.
        pub fn device_id(&self) -> i32 {
            self.buf.device.id
        }
    };
}

impl<T: Element> DeviceTensor<T> {
    /// Uploads `array` (any layout, any number of dims up to 8) to a new contiguous tensor
    /// on the device of `stream`. The copy is queued on `stream`; the host data is first
    /// copied into a pinned staging buffer that the crate owns until the copy is done, so
    /// `array` is never read after this returns.
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
        let buf = Buffer::alloc(device, dims.numel(), T::DTYPE.size())?;
        let tensor = DeviceTensor {
            buf,
            layout: Layout::contiguous(dims)?,
            _elem: PhantomData,
        };
        let n = dims.numel();
        if n == 0 {
            return Ok(tensor);
        }
        let bytes = n * T::DTYPE.size();
        let staging = HostBuf::alloc(device, bytes)?;
        // SAFETY: `staging` holds at least `n` elements of `T`, is suitably aligned
        // (aclrtMallocHost returns page-aligned memory) and exclusively owned here.
        let host = unsafe { std::slice::from_raw_parts_mut(staging.ptr.cast::<T>(), n) };
        for (slot, v) in host.iter_mut().zip(array.iter()) {
            *slot = *v;
        }
        // A cached block may still be used by other streams' queued work.
        tensor.buf.uses.order(&stream.inner, Access::Write)?;
        let t = device.table();
        let dst = tensor.buf.ptr;
        let mut staging = Some(staging);
        let ticket = stream.inner.submit(|state, raw, ticket| {
            let src = staging.as_ref().map_or(std::ptr::null_mut(), |s| s.ptr);
            // SAFETY: `dst` holds `bytes` bytes of device memory, `src` `bytes` bytes of
            // pinned host memory that stays alive until the stream finishes this copy
            // (handed to the stream below).
            unsafe {
                sys::memcpy_async(
                    t,
                    dst,
                    bytes,
                    src,
                    bytes,
                    ascend_sys::ACL_MEMCPY_HOST_TO_DEVICE,
                    raw,
                )
            }?;
            if let Some(s) = staging.take() {
                state.defer_host_free(s.into_raw(), ticket);
            }
            Ok(())
        })?;
        tensor.buf.uses.record(&stream.inner, ticket, Access::Write);
        Ok(tensor)
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
        let device = &stream.inner.device;
        let buf = Buffer::alloc(device, dims.numel(), T::DTYPE.size())?;
        let bytes = buf.bytes;
        let t = device.table();
        // A cached block may still be used by queued work: a host memset waits for it.
        buf.uses.wait_for(Access::Write)?;
        // SAFETY: `buf.ptr` holds `bytes` bytes of device memory that no queued work uses
        // (waited for above); the device's context is current (bound by `Buffer::alloc`).
        unsafe { sys::memset(t, buf.ptr, bytes, 0, bytes) }?;
        Ok(DeviceTensor {
            buf,
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

    /// A read-only view of the whole tensor.
    pub fn view(&self) -> TensorView<'_, T> {
        TensorView {
            buf: &self.buf,
            layout: self.layout,
            whole: true,
            _elem: PhantomData,
        }
    }

    /// A writable view of the whole tensor (for operator outputs).
    pub fn view_mut(&mut self) -> TensorViewMut<'_, T> {
        TensorViewMut {
            buf: &self.buf,
            layout: self.layout,
            whole: true,
            _elem: PhantomData,
        }
    }
}

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
    _elem: PhantomData<&'a [T]>,
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
    _elem: PhantomData<&'a mut [T]>,
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

/// Anything an operator accepts as an input tensor: [`DeviceTensor`], [`TensorView`],
/// [`TensorViewMut`] (read), and references to them.
pub trait AsTensorView {
    /// The element type.
    type Elem: Element;
    /// The view the operator reads.
    fn as_tensor_view(&self) -> TensorView<'_, Self::Elem>;
}

/// Anything an operator accepts as an output tensor: `&mut DeviceTensor`,
/// [`TensorViewMut`], and mutable references to them.
pub trait AsTensorViewMut {
    /// The element type.
    type Elem: Element;
    /// The view the operator writes.
    fn as_tensor_view_mut(&mut self) -> TensorViewMut<'_, Self::Elem>;
}

impl<T: Element> AsTensorView for DeviceTensor<T> {
    type Elem = T;
    fn as_tensor_view(&self) -> TensorView<'_, T> {
        self.view()
    }
}

impl<T: Element> AsTensorView for TensorView<'_, T> {
    type Elem = T;
    fn as_tensor_view(&self) -> TensorView<'_, T> {
        *self
    }
}

impl<T: Element> AsTensorView for TensorViewMut<'_, T> {
    type Elem = T;
    fn as_tensor_view(&self) -> TensorView<'_, T> {
        self.as_view()
    }
}

impl<A: AsTensorView + ?Sized> AsTensorView for &A {
    type Elem = A::Elem;
    fn as_tensor_view(&self) -> TensorView<'_, A::Elem> {
        (**self).as_tensor_view()
    }
}

impl<A: AsTensorView + ?Sized> AsTensorView for &mut A {
    type Elem = A::Elem;
    fn as_tensor_view(&self) -> TensorView<'_, A::Elem> {
        (**self).as_tensor_view()
    }
}

impl<T: Element> AsTensorViewMut for DeviceTensor<T> {
    type Elem = T;
    fn as_tensor_view_mut(&mut self) -> TensorViewMut<'_, T> {
        self.view_mut()
    }
}

impl<T: Element> AsTensorViewMut for TensorViewMut<'_, T> {
    type Elem = T;
    fn as_tensor_view_mut(&mut self) -> TensorViewMut<'_, T> {
        self.reborrow()
    }
}

impl<A: AsTensorViewMut + ?Sized> AsTensorViewMut for &mut A {
    type Elem = A::Elem;
    fn as_tensor_view_mut(&mut self) -> TensorViewMut<'_, A::Elem> {
        (**self).as_tensor_view_mut()
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
