//! The one host↔device transfer path: every upload (`from_array`, `copy_from_array`) and
//! download (`to_array`, `copy_to_array`, of tensors and views) of host arrays, and the
//! queued copies between device windows and [`HostTensor`]s.
//!
//! A copy that no queued work could observe is made at once, without staging: an upload
//! from a dense array into a tensor that no queued work uses (the usual case in a training
//! loop, after the previous step's download drained the stream, and for a new tensor), and
//! a download of a dense window into a dense destination, which drains the stream anyway.
//! Other uploads are staged through the stream's pinned buffer and queued; other downloads
//! are copied through it and then gathered by one strided walk ([`walk`]).
//!
//! The staging buffer belongs to the stream and only grows, so a steady state of transfers
//! allocates no pinned memory, and nothing on the device. An upload writes the staging
//! buffer on the host *now*, while the copy out of it runs later on the stream: before the
//! buffer is written again, the previous copy that uses it must have run, so the stream is
//! drained when that copy's ticket is not known to be complete. That wait is deliberate:
//! the host must write *some* pinned memory now, and one grow-only buffer per stream keeps
//! pinned memory bounded without a second cache; a staged upload never waits for its own
//! copy, only a later staged upload waits for an earlier one. Code that must not wait
//! uploads from a [`HostTensor`] (`copy_from_host`), whose pinned memory is its own and
//! carries its own use records. A download drains the
//! stream anyway, with the stream's lock held until the staged data is read, so no other
//! enqueue can reuse the buffer in between.

mod array;

use crate::element::Element;
use crate::error::{Error, Result};
use crate::host::HostTensor;
use crate::pinned::Pinned;
use crate::shape::MAX_DIMS;
use crate::stream::{Stream, StreamInner};
use crate::sys;
use crate::tensor::{Buffer, Layout, check_stream_device};
use crate::uses::Access;
use ascend_sys::aclrtMemcpyKind;
use ndarray::{ArrayBase, Data, DataMut, Dimension, RawData};
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

/// The storage elements a view touches on the device: from storage element `lo` (at
/// `ptr`), `count` elements, `bytes` bytes.
struct Span {
    ptr: *mut c_void,
    lo: i64,
    count: usize,
    bytes: usize,
}

/// The span of the window `layout` of `buf` (`None` when it is empty).
fn span<T: Element>(buf: &Buffer, layout: &Layout) -> Result<Option<Span>> {
    let Some((lo, hi)) = layout.span() else {
        return Ok(None);
    };
    let count = usize::try_from(hi - lo + 1).map_err(|e| Error::InvalidArgument(e.to_string()))?;
    let first = usize::try_from(lo).map_err(|e| Error::InvalidArgument(e.to_string()))?;
    let bytes = Pinned::bytes_of(count, T::DTYPE.size())?;
    // In bounds: a checked view's span lies inside the buffer.
    let ptr = buf
        .ptr
        .cast::<u8>()
        .wrapping_add(first * T::DTYPE.size())
        .cast::<c_void>();
    Ok(Some(Span {
        ptr,
        lo,
        count,
        bytes,
    }))
}

/// The span of the window `layout` of `buf`, which must be dense row-major (`call` names
/// the method for the error); `None` when it is empty.
fn dense_span<T: Element>(buf: &Buffer, layout: &Layout, call: &str) -> Result<Option<Span>> {
    if layout.numel() == 0 {
        return Ok(None);
    }
    if !layout.is_contiguous() {
        return Err(Error::InvalidArgument(format!(
            "{call} needs a dense row-major device window; copy between it and a contiguous \
             tensor with `ascendcl::copy`"
        )));
    }
    span::<T>(buf, layout)
}

/// The checks every transfer makes first: the stream's device is the tensor's and the
/// host side (`argument`) has the window's shape.
fn prepare(
    buf: &Buffer,
    layout: &Layout,
    stream: &Stream,
    argument: &'static str,
    host_shape: &[usize],
) -> Result<()> {
    check_stream_device(buf, stream, "tensor")?;
    check_shape(argument, &layout.dims, host_shape)
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

/// Copies `array` into the window `layout` of `buf` (dense row-major): at once when no
/// queued work uses the tensor and the array is dense, otherwise staged and queued.
pub(crate) fn upload<T, S, D>(
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
    prepare(buf, layout, stream, "array", array.shape())?;
    let Some(Span {
        ptr: dst, bytes, ..
    }) = dense_span::<T>(buf, layout, "copy_from_array")?
    else {
        return Ok(());
    };
    let n = layout.numel();
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
            None => gather_rows(array, host),
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

/// Copies `array` (any layout) into `host` in row-major order, a row of the last axis at
/// a time: a row that is dense forwards or backwards in memory is copied as one slice, so
/// the usual strided sources (reversed and sliced arrays) cost about a `memcpy`.
fn gather_rows<T, S, D>(array: &ArrayBase<S, D>, host: &mut [T])
where
    T: Element,
    S: Data<Elem = T>,
    D: Dimension,
{
    if array.ndim() == 0 {
        if let (Some(slot), Some(v)) = (host.first_mut(), array.iter().next()) {
            *slot = *v;
        }
        return;
    }
    let row_len = array.shape()[array.ndim() - 1];
    if row_len == 0 {
        return;
    }
    for (dst, row) in host.chunks_exact_mut(row_len).zip(array.rows()) {
        match (
            row.as_slice(),
            row.strides()[0],
            row.as_slice_memory_order(),
        ) {
            (Some(src), _, _) => dst.copy_from_slice(src),
            (None, -1, Some(src)) => {
                for (d, s) in dst.iter_mut().zip(src.iter().rev()) {
                    *d = *s;
                }
            }
            _ => {
                for (d, s) in dst.iter_mut().zip(row.iter()) {
                    *d = *s;
                }
            }
        }
    }
}

/// Where a download puts the view's elements.
trait Sink<T> {
    /// A destination for the view's elements in row-major order, dense, with room for
    /// them all (possibly uninitialised), if the sink has one.
    fn dense(&mut self) -> Option<*mut T>;
    /// Notes that the dense destination has been filled.
    ///
    /// # Safety
    /// Every element of [`dense`](Self::dense)'s destination has been written.
    unsafe fn filled(&mut self);
    /// Takes the view's elements from `host`, whose index 0 is storage element `base`.
    fn gather(&mut self, host: &[T], layout: &Layout, base: i64);
}

/// An array of the view's shape, in any layout.
struct ArraySink<'a, S: RawData, D>(&'a mut ArrayBase<S, D>);

impl<T, S, D> Sink<T> for ArraySink<'_, S, D>
where
    T: Element,
    S: DataMut<Elem = T>,
    D: Dimension,
{
    fn dense(&mut self) -> Option<*mut T> {
        self.0.as_slice_mut().map(<[T]>::as_mut_ptr)
    }

    unsafe fn filled(&mut self) {}

    fn gather(&mut self, host: &[T], layout: &Layout, base: i64) {
        let mut slots = self.0.iter_mut();
        walk(layout, base, |o| {
            if let (Some(slot), Some(v)) = (slots.next(), host.get(o)) {
                *slot = *v;
            }
        });
    }
}

/// An empty vector with capacity for the view's `len` elements.
struct VecSink<'a, T> {
    out: &'a mut Vec<T>,
    len: usize,
}

impl<T: Element> Sink<T> for VecSink<'_, T> {
    fn dense(&mut self) -> Option<*mut T> {
        Some(self.out.as_mut_ptr())
    }

    unsafe fn filled(&mut self) {
        // SAFETY: the capacity is at least `len` (reserved by `download_vec`), and the
        // caller promises that the first `len` elements were written.
        unsafe { self.out.set_len(self.len) };
    }

    fn gather(&mut self, host: &[T], layout: &Layout, base: i64) {
        walk(layout, base, |o| {
            if let Some(v) = host.get(o) {
                self.out.push(*v);
            }
        });
    }
}

/// Calls `f` with the index, relative to storage element `base`, of each element of
/// `layout` in row-major order: the crate's one strided walk over a view.
fn walk(layout: &Layout, base: i64, mut f: impl FnMut(usize)) {
    let n = layout.dims.ndim();
    let dims = layout.dims.as_slice();
    let strides = layout.strides();
    let mut index = [0usize; MAX_DIMS];
    let mut off = layout.offset - base;
    for _ in 0..layout.numel() {
        // Never negative for a checked view, whose lowest element is `base`.
        if let Ok(o) = usize::try_from(off) {
            f(o);
        }
        for axis in (0..n).rev() {
            index[axis] += 1;
            off += strides[axis];
            if index[axis] < dims[axis] {
                break;
            }
            // `dims[axis]` fits in i64: the view's span was computed in i64.
            off -= strides[axis] * dims[axis] as i64;
            index[axis] = 0;
        }
    }
}

/// The view's elements in row-major order, in a new vector (see [`download`]).
pub(crate) fn download_vec<T: Element>(
    buf: &Buffer,
    layout: &Layout,
    stream: &Stream,
) -> Result<Vec<T>> {
    check_stream_device(buf, stream, "tensor")?;
    // Sized by the caller's view (a broadcast view can be far larger than its storage).
    let n = layout.numel();
    let mut out = Vec::new();
    out.try_reserve_exact(n)
        .map_err(|_| Error::HostAllocation {
            what: "to_array",
            bytes: n.saturating_mul(size_of::<T>()),
        })?;
    download(
        buf,
        layout,
        stream,
        &mut VecSink {
            out: &mut out,
            len: n,
        },
    )?;
    Ok(out)
}

/// Copies the window `layout` of `buf` into `out` (its shape, any layout); see
/// [`download`].
pub(crate) fn download_array<T, S, D>(
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
    prepare(buf, layout, stream, "array", out.shape())?;
    download(buf, layout, stream, &mut ArraySink(out))
}

/// Copies the window `layout` of `buf` into `sink`, after the work queued on `stream` so
/// far; returns once the data is in the sink. The caller has checked the stream's device
/// and the sink's shape.
fn download<T: Element>(
    buf: &Buffer,
    layout: &Layout,
    stream: &Stream,
    sink: &mut impl Sink<T>,
) -> Result<()> {
    let Some(span) = span::<T>(buf, layout)? else {
        return Ok(());
    };
    // A type whose device bytes need normalising (BOOL) always goes through the staging
    // buffer: its bytes are made valid there before any is read as `T`, so the sink never
    // holds an invalid value, not even after a failed copy.
    if !T::NORMALISES
        && layout.is_contiguous()
        && let Some(dst) = sink.dense()
    {
        download_direct(buf, stream, &span, dst)?;
        // SAFETY: the copy wrote the dense window's `count` elements, the view's own.
        unsafe { sink.filled() };
        return stream.inner.check_dependencies();
    }
    let Span {
        ptr: src,
        lo,
        count,
        bytes,
    } = span;
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
        if T::NORMALISES {
            // SAFETY: the copy has finished, so the buffer's first `bytes` bytes are
            // initialised; the stream's lock (held) keeps every other user out.
            T::normalise_bytes(unsafe {
                std::slice::from_raw_parts_mut(staging.cast::<u8>(), bytes)
            });
        }
        // SAFETY: the copy has finished; the buffer holds `count` initialised elements of
        // `T`, page-aligned, each a valid `T` (every bit pattern is a valid number, and
        // BOOL's bytes were normalised to 0 and 1 above).
        let host = unsafe { std::slice::from_raw_parts(staging.cast::<T>(), count) };
        sink.gather(host, layout, lo);
        Ok(())
    });
    if let Some(ticket) = queued {
        buf.uses.record(inner, ticket, Access::Read);
    }
    result?;
    inner.check_dependencies()
}

/// A download of the dense window `span` into `dst` (room for `span.bytes` bytes): the
/// stream is drained, then the bytes are copied synchronously, with no staging copy.
fn download_direct<T: Element>(
    buf: &Buffer,
    stream: &Stream,
    span: &Span,
    dst: *mut T,
) -> Result<()> {
    let (src, bytes) = (span.ptr, span.bytes);
    let inner = &stream.inner;
    let t = inner.table();
    buf.uses.order(inner, Access::Read)?;
    let ticket = inner.submit(|_, _, ticket| {
        inner.drain_locked(ticket)?;
        inner.drained_through(ticket);
        // SAFETY: `src..src+bytes` lies inside the tensor's allocation and every write to
        // it that was queued has run (drained above, after waiting for other streams'
        // writes; a new write needs `&mut` of the tensor); `dst` has room for `bytes`
        // bytes (the sink's contract).
        unsafe {
            sys::memcpy(
                t,
                dst.cast(),
                bytes,
                src,
                bytes,
                ascend_sys::ACL_MEMCPY_DEVICE_TO_HOST,
            )
        }
    })?;
    buf.uses.record(inner, ticket, Access::Read);
    Ok(())
}

/// Which way a queued copy between a device window and a [`HostTensor`] goes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Direction {
    ToDevice,
    ToHost,
}

/// Queues a copy between the dense window `layout` of `buf` and `host`, straight from or
/// into its pinned memory. The caller holds `host` shared for [`Direction::ToDevice`] and
/// exclusively for [`Direction::ToHost`].
pub(crate) fn copy_pinned<T: Element>(
    buf: &Buffer,
    layout: &Layout,
    stream: &Stream,
    host: &HostTensor<T>,
    direction: Direction,
) -> Result<()> {
    check_stream_device(buf, stream, "tensor")?;
    host.check_stream(stream)?;
    check_shape("host tensor", &layout.dims, host.shape())?;
    let (call, device_access, host_access, kind) = match direction {
        Direction::ToDevice => (
            "copy_from_host",
            Access::Write,
            Access::Read,
            ascend_sys::ACL_MEMCPY_HOST_TO_DEVICE,
        ),
        Direction::ToHost => (
            "copy_to_host",
            Access::Read,
            Access::Write,
            ascend_sys::ACL_MEMCPY_DEVICE_TO_HOST,
        ),
    };
    let Some(Span {
        ptr: window, bytes, ..
    }) = dense_span::<T>(buf, layout, call)?
    else {
        return Ok(());
    };
    let pinned = host.mem.pinned.ptr();
    let (dst, src) = match direction {
        Direction::ToDevice => (window, pinned.cast_const()),
        Direction::ToHost => (pinned, window.cast_const()),
    };
    let inner = &stream.inner;
    let t = inner.table();
    buf.uses.order(inner, device_access)?;
    host.mem.uses.order(inner, host_access)?;
    let ticket = inner.submit(|_, raw, _| {
        // SAFETY: the device window lies inside the tensor's allocation and the pinned
        // buffer holds at least `bytes` bytes; both stay allocated, and the host neither
        // writes the source nor touches the destination, until this copy has run (recorded
        // below in both `Uses`, which the tensor's and host tensor's drops and the host
        // accessors wait for).
        unsafe { sys::memcpy_async(t, dst, bytes, src, bytes, kind, raw) }
    })?;
    buf.uses.record(inner, ticket, device_access);
    host.mem.uses.record(inner, ticket, host_access);
    Ok(())
}
