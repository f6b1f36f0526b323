//! [`Tensor`]: a device tensor whose dtype is a run-time value, over reference-counted
//! storage, with views as values; its conversions from and to [`DeviceTensor`].

use super::{Buffer, DeviceTensor, Layout, TensorView, TensorViewMut};
use crate::element::{DType, Element};
use crate::error::{Error, Result};
use crate::operand::Dyn;
use crate::shape::IntoDims;
use std::fmt;
use std::marker::PhantomData;
use std::ops::{Bound, RangeBounds};
use std::sync::Arc;

/// A tensor in device memory whose dtype is a run-time [`DType`], as frameworks (burn,
/// candle) hold tensors: a shape, strides and an offset over reference-counted storage.
///
/// * **Cheap clones, views as values.** `clone` copies no data: both tensors share the
///   storage. [`permute`](Self::permute), [`transpose`](Self::transpose),
///   [`t`](Self::t), [`slice`](Self::slice) (with steps), [`narrow`](Self::narrow),
///   [`broadcast_to`](Self::broadcast_to) / [`expand`](Self::expand),
///   [`squeeze`](Self::squeeze), [`unsqueeze`](Self::unsqueeze) and the reshape of a
///   contiguous tensor ([`reshape`](Self::reshape)) return new tensors over the same
///   storage. Only [`reshape`](Self::reshape) of a non-contiguous view and
///   [`contiguous`](Self::contiguous) copy, on the device.
/// * **Aliasing.** A write through any tensor (an operator output, an upload) is seen
///   through every tensor sharing the storage, as in PyTorch. The storage's use records
///   order every access after the conflicting work of other streams, whichever tensor
///   it went through. [`can_mut`](Self::can_mut) says whether a write could be seen
///   elsewhere (frameworks write in place only then).
/// * **Moves, never copies,** from a [`DeviceTensor`] (`Tensor::from`) and back
///   ([`into_typed`](Self::into_typed), when this tensor is the storage's only handle
///   and covers it whole).
/// * **Lifetimes.** The storage returns to the device's caching allocator when the last
///   tensor sharing it is dropped, without waiting, ordered after the queued work that
///   uses it (the crate docs, "Lifetimes").
///
/// `Tensor` is `Send + Sync`: the host never dereferences the device address; reading
/// needs `&self` and writing `&mut self` of the tensor written through. Work submitted
/// from one thread is ordered by the storage's use records. Two threads that write
/// through one clone and access another clone of the same storage at the same moment
/// race on the device, as two CUDA streams would: order such threads on the host (a
/// lock, a channel). Downloads never make an invalid Rust value out of the bytes they
/// read: every bit pattern is a value of the numeric element types, and BOOL bytes are
/// normalised to 0 and 1.
///
/// ```
/// # fn main() -> ascendcl::Result<()> {
/// use ascendcl::{DType, Runtime, Tensor};
/// use ndarray::array;
/// let stream = Runtime::auto()?.device(0)?.stream()?;
/// let a = Tensor::from_array(&stream, &array![[1.0f32, 2.0, 3.0], [4.0, 5.0, 6.0]])?;
/// assert_eq!(a.dtype(), DType::F32);
/// let t = a.t(); // a view: no copy, the storage is shared
/// assert!(!a.is_unique() && !t.is_contiguous());
/// assert_eq!(t.to_vec::<f32>(&stream)?, [1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
/// let column = a.slice(1, 1..3, 1)?.narrow(0, 1, 1)?;
/// assert_eq!(column.to_vec::<f32>(&stream)?, [5.0, 6.0]);
/// assert!(matches!(
///     a.to_vec::<i32>(&stream),
///     Err(ascendcl::Error::DtypeMismatch { actual: DType::F32, .. })
/// ));
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Tensor {
    pub(crate) storage: Arc<Buffer>,
    pub(crate) layout: Layout,
    pub(crate) dtype: DType,
}

const _: () = {
    const fn send_sync<T: Send + Sync>() {}
    send_sync::<Tensor>();
};

impl fmt::Debug for Tensor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tensor")
            .field("dtype", &self.dtype)
            .field("shape", &self.layout.dims)
            .field("strides", &self.strides())
            .field("offset", &self.layout.offset)
            .field("device", &self.storage.device.id)
            .field("handles", &Arc::strong_count(&self.storage))
            .finish()
    }
}

/// Moves the tensor's storage behind a reference count: no copy.
impl<T: Element> From<DeviceTensor<T>> for Tensor {
    fn from(t: DeviceTensor<T>) -> Tensor {
        Tensor {
            storage: Arc::new(t.buf),
            layout: t.layout,
            dtype: T::DTYPE,
        }
    }
}

/// The error of [`Tensor::into_typed`]: why the tensor could not be moved, and the tensor,
/// unchanged. Boxed, it converts into [`Error`] (so `?` works in functions returning
/// [`Result`](crate::Result)).
#[derive(Debug)]
pub struct IntoTypedError {
    /// Why: [`Error::DtypeMismatch`], [`Error::SharedStorage`] or
    /// [`Error::NotWholeStorage`] (or an [`Error::Acl`] from waiting for the work that
    /// uses a cached descriptor of another shape).
    pub error: Error,
    /// The tensor given, unchanged.
    pub tensor: Tensor,
}

impl fmt::Display for IntoTypedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.error.fmt(f)
    }
}

impl std::error::Error for IntoTypedError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.error)
    }
}

impl From<Box<IntoTypedError>> for Error {
    fn from(e: Box<IntoTypedError>) -> Error {
        e.error
    }
}

/// `range` of an axis of `len` as `start..end` (checked by the layout's slice).
fn bounds(range: impl RangeBounds<usize>, len: usize) -> (usize, usize) {
    let start = match range.start_bound() {
        Bound::Included(&s) => s,
        Bound::Excluded(&s) => s.saturating_add(1),
        Bound::Unbounded => 0,
    };
    let end = match range.end_bound() {
        Bound::Included(&e) => e.saturating_add(1),
        Bound::Excluded(&e) => e,
        Bound::Unbounded => len,
    };
    (start, end)
}

impl Tensor {
    /// The shape.
    pub fn shape(&self) -> &[usize] {
        self.layout.dims.as_slice()
    }

    /// The strides in elements (0 along broadcast dims).
    pub fn strides(&self) -> &[i64] {
        self.layout.strides()
    }

    /// The offset of the first element in the storage, in elements.
    pub fn offset(&self) -> i64 {
        self.layout.offset
    }

    /// The number of dims.
    pub fn ndim(&self) -> usize {
        self.layout.dims.ndim()
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        self.layout.numel()
    }

    /// Whether there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The element type, a run-time value.
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// The id of the device holding the storage.
    pub fn device_id(&self) -> i32 {
        self.storage.device.id
    }

    /// Whether the elements are dense in row-major order.
    pub fn is_contiguous(&self) -> bool {
        self.layout.is_contiguous()
    }

    /// The storage's length, in elements of the dtype.
    pub fn storage_len(&self) -> usize {
        self.storage.len
    }

    /// Whether `self` and `other` share their storage (a write through one may be seen
    /// through the other).
    pub fn shares_storage(&self, other: &Tensor) -> bool {
        Arc::ptr_eq(&self.storage, &other.storage)
    }

    /// Whether this tensor is the only handle of its storage: no clone or view of it is
    /// alive.
    pub fn is_unique(&self) -> bool {
        Arc::strong_count(&self.storage) == 1
    }

    /// Whether an operator may write this tensor in place without the write being seen
    /// elsewhere or writing one element twice: its storage is unique
    /// ([`is_unique`](Self::is_unique)) and no dim of more than one element has stride 0
    /// (a broadcast). Frameworks ask this before reusing an input as an output (burn's
    /// `can_mut`).
    ///
    /// ```
    /// # fn main() -> ascendcl::Result<()> {
    /// use ascendcl::{Runtime, Tensor};
    /// let stream = Runtime::auto()?.device(0)?.stream()?;
    /// let a = Tensor::from_slice(&stream, &[1.0f32, 2.0], 2)?;
    /// assert!(a.can_mut());
    /// let b = a.clone();
    /// assert!(!a.can_mut() && !b.can_mut());
    /// drop(b);
    /// let wide = a.expand((3, 2))?; // takes `a`'s handle into a broadcast view
    /// assert!(wide.is_unique() && !wide.can_mut());
    /// # Ok(()) }
    /// ```
    pub fn can_mut(&self) -> bool {
        self.is_unique()
            && self
                .shape()
                .iter()
                .zip(self.strides())
                .all(|(d, s)| *d <= 1 || *s != 0)
    }

    /// A view of the same storage with `layout`, checked to stay inside it.
    fn with(&self, layout: Layout) -> Result<Tensor> {
        layout.check_within(self.storage.len)?;
        Ok(Tensor {
            storage: Arc::clone(&self.storage),
            layout,
            dtype: self.dtype,
        })
    }

    /// Reorders the axes: axis `i` of the result is axis `axes[i]` of `self`. No copy.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when `axes` is not a permutation of the axes.
    pub fn permute(&self, axes: &[usize]) -> Result<Tensor> {
        self.with(self.layout.permute(axes)?)
    }

    /// Swaps axes `a` and `b`. No copy.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for an axis out of range.
    pub fn transpose(&self, a: usize, b: usize) -> Result<Tensor> {
        let n = self.ndim();
        if a >= n || b >= n {
            return Err(Error::InvalidArgument(format!(
                "cannot swap axes {a} and {b} of a tensor of {n} dims"
            )));
        }
        let mut axes: Vec<usize> = (0..n).collect();
        axes.swap(a, b);
        self.permute(&axes)
    }

    /// Reverses the axes (the transpose of a matrix). No copy.
    pub fn t(&self) -> Tensor {
        Tensor {
            storage: Arc::clone(&self.storage),
            layout: self.layout.reversed_axes(),
            dtype: self.dtype,
        }
    }

    /// Keeps indices `start, start + step, ...` of `range` along `axis` (`..` is the whole
    /// axis). No copy.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for an axis out of range, `step == 0`, or a range
    /// outside the axis.
    pub fn slice(
        &self,
        axis: usize,
        range: impl RangeBounds<usize>,
        step: usize,
    ) -> Result<Tensor> {
        let len = self.shape().get(axis).copied().unwrap_or(0);
        let (start, end) = bounds(range, len);
        self.with(self.layout.slice(axis, start, end, step)?)
    }

    /// Keeps `len` indices of `axis` from `start`. No copy.
    ///
    /// # Errors
    /// As [`slice`](Self::slice).
    pub fn narrow(&self, axis: usize, start: usize, len: usize) -> Result<Tensor> {
        self.slice(axis, start..start.saturating_add(len), 1)
    }

    /// Broadcasts to `shape` with numpy rules: new leading dims and size-1 dims get
    /// stride 0. No copy; the result is not writable in place ([`can_mut`](Self::can_mut)).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when the shapes are incompatible, [`Error::TooManyDims`].
    pub fn broadcast_to(&self, shape: impl IntoDims) -> Result<Tensor> {
        self.with(self.layout.broadcast_to(shape.into_dims("shape")?)?)
    }

    /// [`broadcast_to`](Self::broadcast_to) by value (PyTorch's name), keeping no extra
    /// handle of the storage.
    ///
    /// # Errors
    /// As [`broadcast_to`](Self::broadcast_to).
    pub fn expand(self, shape: impl IntoDims) -> Result<Tensor> {
        let layout = self.layout.broadcast_to(shape.into_dims("shape")?)?;
        layout.check_within(self.storage.len)?;
        Ok(Tensor { layout, ..self })
    }

    /// Drops `axis`, which must have size 1. No copy.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for an axis out of range or of another size.
    pub fn squeeze(&self, axis: usize) -> Result<Tensor> {
        self.with(self.layout.squeeze(axis)?)
    }

    /// Inserts an axis of size 1 at `axis` (`0..=ndim`). No copy.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for `axis > ndim`, [`Error::TooManyDims`].
    pub fn unsqueeze(&self, axis: usize) -> Result<Tensor> {
        self.with(self.layout.unsqueeze(axis)?)
    }

    /// The same elements with the shape `shape` (same number of elements), as a view when
    /// `self` is contiguous. A non-contiguous tensor (a transposed, sliced or broadcast
    /// view) is first **copied** into new contiguous storage on `stream`
    /// ([`contiguous`](Self::contiguous)), so the result then shares nothing with `self`.
    ///
    /// ```
    /// # fn main() -> ascendcl::Result<()> {
    /// use ascendcl::{Runtime, Tensor};
    /// let stream = Runtime::auto()?.device(0)?.stream()?;
    /// let a = Tensor::from_slice(&stream, &[1i32, 2, 3, 4, 5, 6], (2, 3))?;
    /// let flat = a.reshape(6, &stream)?; // a view
    /// assert!(flat.shares_storage(&a));
    /// let columns = a.t().reshape((2, 3), &stream)?; // a copy
    /// assert!(!columns.shares_storage(&a));
    /// assert_eq!(columns.to_vec::<i32>(&stream)?, [1, 4, 2, 5, 3, 6]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// [`Error::ReshapeMismatch`] when the number of elements differs,
    /// [`Error::TooManyDims`]; the copy's errors.
    pub fn reshape(&self, shape: impl IntoDims, stream: &crate::Stream) -> Result<Tensor> {
        let dims = shape.into_dims("shape")?;
        if dims.numel() != self.len() {
            return Err(Error::ReshapeMismatch {
                shape: self.shape().to_vec(),
                requested: dims.as_slice().to_vec(),
            });
        }
        if self.is_contiguous() {
            return self.with(self.layout.reshape(dims)?);
        }
        let dense = self.contiguous(stream)?;
        dense.with(dense.layout.reshape(dims)?)
    }

    /// Whether the layout is the storage's own: the layout its cached descriptor
    /// describes (its dims, contiguous, offset 0).
    pub(crate) fn is_whole(&self) -> bool {
        Layout::contiguous(self.storage.key.dims).is_ok_and(|l| l == self.layout)
    }

    /// Checks that the tensor's dtype is `T`'s.
    fn expect_dtype<T: Element>(&self, argument: &'static str) -> Result<()> {
        if self.dtype == T::DTYPE {
            Ok(())
        } else {
            Err(Error::DtypeMismatch {
                argument,
                expected: T::DTYPE,
                actual: self.dtype,
            })
        }
    }

    /// A typed read-only view of the tensor, for the operators and methods that take
    /// [`TensorView`]s.
    ///
    /// # Errors
    /// [`Error::DtypeMismatch`] when the tensor's dtype is not `T`'s.
    pub fn typed_view<T: Element>(&self) -> Result<TensorView<'_, T>> {
        self.expect_dtype::<T>("tensor")?;
        Ok(TensorView {
            buf: &self.storage,
            layout: self.layout,
            dtype: self.dtype,
            whole: self.is_whole(),
            _elem: PhantomData,
        })
    }

    /// A typed writable view of the tensor (an operator output). The write is seen
    /// through every tensor sharing the storage.
    ///
    /// # Errors
    /// [`Error::DtypeMismatch`] when the tensor's dtype is not `T`'s;
    /// [`Error::InvalidArgument`] for a broadcast tensor (stride 0 along a dim of more than
    /// one element), whose elements an output would write more than once.
    pub fn typed_view_mut<T: Element>(&mut self) -> Result<TensorViewMut<'_, T>> {
        self.expect_dtype::<T>("tensor")?;
        self.expect_writable()?;
        Ok(TensorViewMut {
            buf: &self.storage,
            layout: self.layout,
            dtype: self.dtype,
            whole: self.is_whole(),
            _elem: PhantomData,
        })
    }

    /// A read-only view of the tensor with its run-time dtype (what operators take; a
    /// `&Tensor` is one too).
    pub fn view(&self) -> TensorView<'_, Dyn> {
        TensorView {
            buf: &self.storage,
            layout: self.layout,
            dtype: self.dtype,
            whole: self.is_whole(),
            _elem: PhantomData,
        }
    }

    /// A writable view of the tensor with its run-time dtype (an operator output; a
    /// `&mut Tensor` is one too). The write is seen through every tensor sharing the
    /// storage. Operators refuse a broadcast tensor as an output
    /// ([`Error::InvalidArgument`]).
    pub fn view_mut(&mut self) -> TensorViewMut<'_, Dyn> {
        self.dyn_view_mut()
    }

    /// [`view_mut`](Self::view_mut), for [`Allocated`](crate::operand::Allocated).
    #[inline]
    pub(crate) fn dyn_view_mut(&mut self) -> TensorViewMut<'_, Dyn> {
        TensorViewMut {
            buf: &self.storage,
            layout: self.layout,
            dtype: self.dtype,
            whole: self.is_whole(),
            _elem: PhantomData,
        }
    }

    /// Refuses a broadcast layout as an output.
    pub(crate) fn expect_writable(&self) -> Result<()> {
        let broadcast = (self.shape().iter().zip(self.strides())).any(|(d, s)| *d > 1 && *s == 0);
        if broadcast {
            return Err(Error::InvalidArgument(format!(
                "a broadcast tensor (shape {:?}, strides {:?}) cannot be written: it would \
                 write elements more than once",
                self.shape(),
                self.strides()
            )));
        }
        Ok(())
    }

    /// Moves the storage into a [`DeviceTensor<T>`] without a copy. The tensor must be the
    /// storage's only handle and cover it whole in row-major order (any shape of that
    /// many elements).
    ///
    /// ```
    /// # fn main() -> ascendcl::Result<()> {
    /// use ascendcl::{DeviceTensor, Error, Runtime, Tensor};
    /// let stream = Runtime::auto()?.device(0)?.stream()?;
    /// let a = Tensor::from_slice(&stream, &[1.0f32, 2.0, 3.0, 4.0], (2, 2))?;
    /// let view = a.t();
    /// let refused = a.into_typed::<f32>().unwrap_err(); // `view` shares the storage
    /// assert!(matches!(refused.error, Error::SharedStorage { handles: 2, .. }));
    /// drop(view);
    /// let back: DeviceTensor<f32> = refused.tensor.into_typed()?;
    /// assert_eq!(back.shape(), &[2, 2]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// [`IntoTypedError`] (boxed: a tensor is large) with the tensor unchanged: [`Error::DtypeMismatch`],
    /// [`Error::SharedStorage`], [`Error::NotWholeStorage`]; [`Error::Acl`] when the
    /// storage's cached descriptor describes another shape and the work using it could not
    /// be waited for.
    pub fn into_typed<T: Element>(
        self,
    ) -> std::result::Result<DeviceTensor<T>, Box<IntoTypedError>> {
        let refuse = |error, tensor| Err(Box::new(IntoTypedError { error, tensor }));
        if let Err(e) = self.expect_dtype::<T>("tensor") {
            return refuse(e, self);
        }
        let len = self.storage.len;
        if !(self.layout.offset == 0 && self.is_contiguous() && self.len() == len) {
            let error = Error::NotWholeStorage {
                argument: "tensor",
                shape: self.shape().to_vec(),
                strides: self.strides().to_vec(),
                offset: self.offset(),
                storage: len,
            };
            return refuse(error, self);
        }
        let Tensor {
            storage, layout, ..
        } = self;
        let buf = match Arc::try_unwrap(storage) {
            Ok(buf) => buf,
            Err(storage) => {
                let error = Error::SharedStorage {
                    argument: "tensor",
                    handles: Arc::strong_count(&storage),
                };
                let tensor = Tensor {
                    storage,
                    layout,
                    dtype: T::DTYPE,
                };
                return refuse(error, tensor);
            }
        };
        let own = match Layout::contiguous(buf.key.dims) {
            Ok(own) => own,
            Err(error) => {
                let tensor = Tensor {
                    storage: Arc::new(buf),
                    layout,
                    dtype: T::DTYPE,
                };
                return refuse(error, tensor);
            }
        };
        let mut typed = DeviceTensor::<T> {
            buf,
            layout: own,
            _elem: PhantomData,
        };
        // Another shape of the same elements: the cached descriptor is the old shape's.
        if let Err(error) = typed.reshape(layout.dims) {
            let mut tensor = Tensor::from(typed);
            tensor.layout = layout;
            return refuse(error, tensor);
        }
        Ok(typed)
    }
}
