//! Copies between host arrays and existing device tensors (`copy_from_array`,
//! `copy_to_array`).
//!
//! A copy that no queued work could observe is made at once, without staging: an upload
//! from a dense array into a tensor that no queued work uses (the usual case in a training
//! loop, after the previous step's download drained the stream), and a download into a
//! dense array, which drains the stream anyway. Other uploads are staged through the
//! stream's pinned buffer and queued; other downloads are copied through it.
//!
//! The staging buffer belongs to the stream and only grows, so a steady state of transfers
//! allocates nothing, on the host or on the device. An upload writes the staging buffer on
//! the host *now*, while the copy out of it runs later on the stream: before the buffer is
//! written again, the previous copy that uses it must have run, so the stream is drained
//! when that copy's ticket is not known to be complete. A download drains the stream
//! anyway, with the stream's lock held until the staged data is read, so no other enqueue
//! can reuse the buffer in between.

use crate::element::Element;
use crate::error::{Error, Result};
use crate::shape::MAX_DIMS;
use crate::stream::{Stream, StreamInner};
use crate::sys;
use crate::tensor::{Buffer, DeviceTensor, Layout, TensorView, TensorViewMut, check_stream_device};
use crate::uses::Access;
use ascend_sys::aclrtMemcpyKind;
use ndarray::{ArrayBase, ArrayViewMut, Data, DataMut, Dimension};
use std::ffi::c_void;

pub(crate) fn check_shape(
    argument: &'static str,
    expected: &[usize],
    actual: &[usize],
) -> Result<()> {
    if expected == actual {
        Ok(())
    } else {
        Err(Error::ShapeMismatch {
            argument,
            expected: expected.to_vec(),
            actual: actual.to_vec(),
        })
    }
}

fn byte_len<T: Element>(count: usize) -> Result<usize> {
    count
        .checked_mul(T::DTYPE.size())
        .ok_or_else(|| Error::InvalidArgument(format!("{count} elements overflow usize")))
}

/// The device address and byte length of the window `layout` of `buf`, which must be
/// dense row-major (`call` names the method for the error).
pub(crate) fn dense_window<T: Element>(
    buf: &Buffer,
    layout: &Layout,
    call: &str,
) -> Result<(*mut c_void, usize)> {
    if !layout.is_contiguous() {
        return Err(Error::InvalidArgument(format!(
            "{call} needs a dense row-major device window; copy between it and a contiguous \
             tensor with `ascendcl::copy`"
        )));
    }
    let bytes = byte_len::<T>(layout.numel())?;
    let first =
        usize::try_from(layout.offset).map_err(|e| Error::InvalidArgument(e.to_string()))?;
    // In bounds: a checked view of this layout lies inside the buffer.
    let ptr = buf
        .ptr
        .cast::<u8>()
        .wrapping_add(first * T::DTYPE.size())
        .cast::<c_void>();
    Ok((ptr, bytes))
}

/// A synchronous copy, made instead of a queued one when no queued work can observe the
/// difference (see the callers).
///
/// # Safety
/// As [`sys::memcpy`].
unsafe fn copy_now(
    inner: &StreamInner,
    dst: *mut c_void,
    src: *const c_void,
    bytes: usize,
    kind: aclrtMemcpyKind,
) -> Result<()> {
    inner.take_parked()?;
    inner.device.bind()?;
    // SAFETY: the caller's contract.
    unsafe { sys::memcpy(inner.table(), dst, bytes, src, bytes, kind) }
}

/// Queues a copy of `array` into the window `layout` of `buf` (dense row-major).
fn upload<T, S, D>(
    buf: &Buffer,
    layout: &Layout,
    stream: &Stream,
    array: &ArrayBase<S, D>,
) -> Result<()>
where
    T: Element,
    S: Data<Elem = T>,
    D: Dimension,
{
    check_stream_device(buf, stream, "tensor")?;
    check_shape("array", &layout.dims, array.shape())?;
    let n = layout.numel();
    if n == 0 {
        return Ok(());
    }
    let (dst, bytes) = dense_window::<T>(buf, layout, "copy_from_array")?;
    if let Some(src) = array.as_slice()
        && buf.uses.is_idle()
    {
        // No queued work on any stream uses the tensor, and later work can only be queued
        // after this returns: copying now, straight from the array, is indistinguishable
        // from a queued copy and saves the staging copy.
        // SAFETY: `dst..dst+bytes` lies inside the tensor's allocation, which no queued work
        // uses; `src` is `n` live elements of `T`.
        unsafe {
            copy_now(
                &stream.inner,
                dst,
                src.as_ptr().cast(),
                bytes,
                ascend_sys::ACL_MEMCPY_HOST_TO_DEVICE,
            )
        }?;
        if n == buf.len && layout.offset == 0 {
            buf.uses.overwritten();
        }
        return Ok(());
    }
    let inner = &stream.inner;
    let t = inner.table();
    buf.uses.order(inner, Access::Write)?;
    let ticket = inner.submit(|state, raw, ticket| {
        let staging = inner.staging(state, bytes, ticket)?;
        // SAFETY: the staging buffer holds at least `bytes` bytes = `n` elements of `T`,
        // is page-aligned, and no queued copy reads it any more (`staging` drained the
        // stream otherwise); the stream's lock (held) keeps other enqueuers out.
        let host = unsafe { std::slice::from_raw_parts_mut(staging.cast::<T>(), n) };
        match array.as_slice() {
            Some(src) => host.copy_from_slice(src),
            // ndarray's `assign` walks the source's strides axis by axis.
            None => ArrayViewMut::from_shape(array.raw_dim(), host)
                .map_err(|e| Error::InvalidArgument(e.to_string()))?
                .assign(array),
        }
        // SAFETY: `dst..dst+bytes` lies inside the tensor's allocation (checked view);
        // the staging buffer stays allocated and unwritten until this copy has run (the
        // next user waits for `ticket`, the stream frees it only after draining).
        unsafe {
            sys::memcpy_async(
                t,
                dst,
                bytes,
                staging,
                bytes,
                ascend_sys::ACL_MEMCPY_HOST_TO_DEVICE,
                raw,
            )
        }
    })?;
    buf.uses.record(inner, ticket, Access::Write);
    Ok(())
}

/// Copies the window `layout` of `buf` into `out` (any layout), after the work queued on
/// `stream` so far; returns once the data is in `out`.
fn download<T, S, D>(
    buf: &Buffer,
    layout: &Layout,
    stream: &Stream,
    out: &mut ArrayBase<S, D>,
) -> Result<()>
where
    T: Element,
    S: DataMut<Elem = T>,
    D: Dimension,
{
    check_stream_device(buf, stream, "tensor")?;
    check_shape("array", &layout.dims, out.shape())?;
    let Some((lo, hi)) = layout.span() else {
        return Ok(());
    };
    if layout.is_contiguous()
        && let Some(dst) = out.as_slice_mut()
    {
        return download_direct::<T>(buf, layout, stream, dst);
    }
    let count = usize::try_from(hi - lo + 1).map_err(|e| Error::InvalidArgument(e.to_string()))?;
    let first = usize::try_from(lo).map_err(|e| Error::InvalidArgument(e.to_string()))?;
    let bytes = byte_len::<T>(count)?;
    // In bounds: a checked view's span lies inside the buffer.
    let src = buf
        .ptr
        .cast::<u8>()
        .wrapping_add(first * T::DTYPE.size())
        .cast::<c_void>();
    let inner = &stream.inner;
    let t = inner.table();
    buf.uses.order(inner, Access::Read)?;
    // The ticket of the copy once it is queued: its read is recorded even when the drain
    // after it fails, so the tensor outlives it.
    let mut queued = None;
    let result = inner.submit(|state, raw, ticket| {
        let staging = inner.staging(state, bytes, ticket)?;
        // SAFETY: `src..src+bytes` lies inside the tensor's allocation; the staging buffer
        // holds at least `bytes` bytes and is neither reused nor freed before the stream
        // has been drained below (the stream's lock is held throughout).
        unsafe {
            sys::memcpy_async(
                t,
                staging,
                bytes,
                src,
                bytes,
                ascend_sys::ACL_MEMCPY_DEVICE_TO_HOST,
                raw,
            )
        }?;
        queued = Some(ticket);
        inner.drain_locked(ticket)?;
        inner.drained_through(ticket);
        // SAFETY: the copy has finished; the buffer holds `count` initialised elements of
        // `T` (every bit pattern is a valid f32/f16/bf16), page-aligned.
        let host = unsafe { std::slice::from_raw_parts(staging.cast::<T>(), count) };
        scatter(host, layout, lo, out);
        Ok(())
    });
    if let Some(ticket) = queued {
        buf.uses.record(inner, ticket, Access::Read);
    }
    result?;
    inner.check_dependencies()
}

/// [`download`] into a dense row-major destination: the stream is drained, then the bytes
/// are copied synchronously into `dst`, with no staging copy.
fn download_direct<T: Element>(
    buf: &Buffer,
    layout: &Layout,
    stream: &Stream,
    dst: &mut [T],
) -> Result<()> {
    let (src, bytes) = dense_window::<T>(buf, layout, "copy_to_array")?;
    let inner = &stream.inner;
    let t = inner.table();
    buf.uses.order(inner, Access::Read)?;
    let ticket = inner.submit(|_, _, ticket| {
        inner.drain_locked(ticket)?;
        inner.drained_through(ticket);
        // SAFETY: `src..src+bytes` lies inside the tensor's allocation and every write to
        // it that was queued has run (drained above, after waiting for other streams'
        // writes; a new write needs `&mut` of the tensor); `dst` holds `bytes` bytes.
        unsafe {
            sys::memcpy(
                t,
                dst.as_mut_ptr().cast(),
                bytes,
                src,
                bytes,
                ascend_sys::ACL_MEMCPY_DEVICE_TO_HOST,
            )
        }
    })?;
    buf.uses.record(inner, ticket, Access::Read);
    inner.check_dependencies()
}

/// Writes the elements of `layout` (row-major), read from `host` whose index 0 is storage
/// element `base`, into `out` in its logical order.
fn scatter<T, S, D>(host: &[T], layout: &Layout, base: i64, out: &mut ArrayBase<S, D>)
where
    T: Element,
    S: DataMut<Elem = T>,
    D: Dimension,
{
    if layout.is_contiguous()
        && let Some(dst) = out.as_slice_mut()
        && let Some(src) = host.get(..dst.len())
    {
        dst.copy_from_slice(src);
        return;
    }
    let n = layout.dims.ndim();
    let dims = layout.dims.as_slice();
    let strides = layout.strides();
    let mut index = [0usize; MAX_DIMS];
    for slot in out.iter_mut() {
        let mut off = layout.offset - base;
        for (i, s) in index[..n].iter().zip(strides) {
            off += *i as i64 * *s;
        }
        if let Some(v) = usize::try_from(off).ok().and_then(|o| host.get(o)) {
            *slot = *v;
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

impl<T: Element> DeviceTensor<T> {
    /// Writes `array` into this tensor. The shape must equal the tensor's; any array
    /// layout is accepted. The copy is queued on `stream` (asynchronous); the data is first
    /// staged in the stream's pinned buffer, so `array` may be reused as soon as this
    /// returns. The staging buffer is reused and only grows: repeated transfers allocate
    /// nothing. An upload made while the previous one is still queued waits for it.
    ///
    /// ```
    /// # fn main() -> ascendcl::Result<()> {
    /// use ascendcl::{DeviceTensor, Runtime};
    /// use ndarray::{Array2, array};
    /// let stream = Runtime::auto()?.device(0)?.stream()?;
    /// let mut t = DeviceTensor::<f32>::zeros(&stream, &[2, 2])?;
    /// let a = array![[1.0f32, 2.0], [3.0, 4.0]];
    /// t.copy_from_array(&stream, &a.t())?; // any layout
    /// let mut back = Array2::zeros((2, 2));
    /// t.copy_to_array(&stream, &mut back)?;
    /// assert_eq!(back, a.t());
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`], [`Error::DeviceMismatch`] for a stream of another device,
    /// [`Error::Acl`] from allocating the staging buffer or queueing the copy.
    pub fn copy_from_array<S, D>(&mut self, stream: &Stream, array: &ArrayBase<S, D>) -> Result<()>
    where
        S: Data<Elem = T>,
        D: Dimension,
    {
        upload(&self.buf, &self.layout, stream, array)
    }

    /// Reads this tensor into `out` (shape equal to the tensor's, any layout), after the
    /// work queued on `stream` so far. Returns once the data is in `out`. Repeated
    /// transfers allocate nothing.
    ///
    /// ```
    /// # fn main() -> ascendcl::Result<()> {
    /// use ascendcl::{DeviceTensor, Runtime};
    /// use ndarray::{Array2, ShapeBuilder, array};
    /// let stream = Runtime::auto()?.device(0)?.stream()?;
    /// let a = array![[1.0f32, 2.0, 3.0], [4.0, 5.0, 6.0]];
    /// let t = DeviceTensor::from_array(&stream, &a)?;
    /// let mut out = Array2::<f32>::zeros((2, 3).f()); // column-major destination
    /// t.copy_to_array(&stream, &mut out)?;
    /// assert_eq!(out, a);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// [`Error::ShapeMismatch`], [`Error::DeviceMismatch`], [`Error::Acl`] from the copy
    /// or the synchronisation, [`Error::DependencyFailed`] when work of another stream
    /// that this stream was ordered after failed.
    pub fn copy_to_array<S, D>(&self, stream: &Stream, out: &mut ArrayBase<S, D>) -> Result<()>
    where
        S: DataMut<Elem = T>,
        D: Dimension,
    {
        download(&self.buf, &self.layout, stream, out)
    }
}

impl<T: Element> TensorView<'_, T> {
    /// Reads the view (any strides, broadcast views too) into `out`, whose shape must be
    /// the view's; see [`DeviceTensor::copy_to_array`].
    ///
    /// ```
    /// # fn main() -> ascendcl::Result<()> {
    /// use ascendcl::{DeviceTensor, Runtime};
    /// use ndarray::{Array2, array};
    /// let stream = Runtime::auto()?.device(0)?.stream()?;
    /// let t = DeviceTensor::from_array(&stream, &array![1.0f32, 2.0])?;
    /// let mut out = Array2::<f32>::zeros((3, 2));
    /// t.view().broadcast_to(&[3, 2])?.copy_to_array(&stream, &mut out)?;
    /// assert_eq!(out, array![[1.0, 2.0], [1.0, 2.0], [1.0, 2.0]]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// As [`DeviceTensor::copy_to_array`].
    pub fn copy_to_array<S, D>(&self, stream: &Stream, out: &mut ArrayBase<S, D>) -> Result<()>
    where
        S: DataMut<Elem = T>,
        D: Dimension,
    {
        download(self.buf, &self.layout, stream, out)
    }
}

impl<T: Element> TensorViewMut<'_, T> {
    /// Writes `array` into a dense row-major window of a tensor (e.g. a range of rows);
    /// see [`DeviceTensor::copy_from_array`].
    ///
    /// ```
    /// # fn main() -> ascendcl::Result<()> {
    /// use ascendcl::{DeviceTensor, Runtime};
    /// use ndarray::array;
    /// let stream = Runtime::auto()?.device(0)?.stream()?;
    /// let mut t = DeviceTensor::<f32>::zeros(&stream, &[3, 2])?;
    /// t.view_mut().slice(0, 1, 2, 1)?.copy_from_array(&stream, &array![[5.0f32, 6.0]])?;
    /// assert_eq!(t.to_array(&stream)?, array![[0.0, 0.0], [5.0, 6.0], [0.0, 0.0]].into_dyn());
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// As [`DeviceTensor::copy_from_array`], and [`Error::InvalidArgument`] for a window
    /// that is not dense row-major.
    pub fn copy_from_array<S, D>(&mut self, stream: &Stream, array: &ArrayBase<S, D>) -> Result<()>
    where
        S: Data<Elem = T>,
        D: Dimension,
    {
        upload(self.buf, &self.layout, stream, array)
    }

    /// Reads the window into `out`; see [`DeviceTensor::copy_to_array`].
    ///
    /// ```
    /// # fn main() -> ascendcl::Result<()> {
    /// use ascendcl::{DeviceTensor, Runtime};
    /// use ndarray::{Array1, array};
    /// let stream = Runtime::auto()?.device(0)?.stream()?;
    /// let mut t = DeviceTensor::from_array(&stream, &array![1.0f32, 2.0, 3.0])?;
    /// let mut out = Array1::<f32>::zeros(2);
    /// t.view_mut().slice(0, 1, 3, 1)?.copy_to_array(&stream, &mut out)?;
    /// assert_eq!(out, array![2.0, 3.0]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// As [`DeviceTensor::copy_to_array`].
    pub fn copy_to_array<S, D>(&self, stream: &Stream, out: &mut ArrayBase<S, D>) -> Result<()>
    where
        S: DataMut<Elem = T>,
        D: Dimension,
    {
        download(self.buf, &self.layout, stream, out)
    }
}
