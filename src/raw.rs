//! The raw escape hatch: a view's device address and an `aclTensor` describing it, for C
//! calls the crate does not make (an aclnn operator it does not wrap, a custom kernel).
//!
//! As with cudarc's `DevicePtr`/`DevicePtrMut`, the crate keeps what it can: the access is
//! ordered after the other streams' work on the tensor and recorded on the stream when it
//! starts, and the record is closed when it ends, so the tensor's memory outlives the work
//! queued with it and later calls on other streams wait for that work. A leaked access
//! (`mem::forget` is safe) is never closed: the tensor stays in use by everything queued
//! on the stream, its memory is never reused (it leaks), and host accesses to it fail. What the crate cannot check is what the raw
//! pointers are used for: that is the `unsafe` contract of [`TensorView::raw_access`] and
//! [`TensorViewMut::raw_access_mut`].

use crate::Element;
use crate::error::Result;
use crate::protocol::handles::view_descriptor;
use crate::stream::Stream;
use crate::sys;
use crate::tensor::{Buffer, RawTensor, TensorView, TensorViewMut, check_stream_device};
use crate::uses::Access;
use ascend_sys::aclTensor;
use std::ffi::c_void;
use std::marker::PhantomData;

/// One raw access to a tensor view on one stream: its device addresses and an `aclTensor`
/// descriptor of the view (dims, strides and offset in elements, storage = the whole
/// buffer, format ND), owned by the access and destroyed when it is dropped.
///
/// While it lives, any work queued on the stream counts as using the tensor; dropping it
/// ends the use with the work queued so far. So the tensor is not freed, and other streams
/// do not touch it, before that work has run; an access that is leaked keeps the tensor in
/// use for good (its memory leaks instead of being reused under the work). Not `Send`: it
/// belongs to the thread that queues the work.
#[must_use = "the tensor is in use on the stream until the access is dropped"]
pub struct RawAccess<'a> {
    stream: &'a Stream,
    buf: &'a Buffer,
    access: Access,
    desc: *mut aclTensor,
    first: *mut c_void,
    _not_send: PhantomData<*mut ()>,
}

impl RawAccess<'_> {
    /// The base address of the tensor's device buffer.
    pub fn base_ptr(&self) -> *mut c_void {
        self.buf.ptr
    }

    /// The device address of the view's element at index 0 (base plus offset).
    pub fn device_ptr(&self) -> *mut c_void {
        self.first
    }

    /// The `aclTensor` of the view, for an aclnn phase 1: valid while the access lives.
    pub fn acl_tensor(&self) -> *mut aclTensor {
        self.desc
    }
}

impl Drop for RawAccess<'_> {
    fn drop(&mut self) {
        let inner = &self.stream.inner;
        // An empty submission takes the next ticket: every piece of work queued on the
        // stream so far comes before it. Without one the access stays open, so the tensor
        // stays in use rather than freed under its work.
        match inner.submit(|_, _, _| Ok(())) {
            Ok(ticket) => self.buf.uses.close(inner, ticket, self.access),
            Err(e) => inner.device.note_release_error(&e),
        }
        // SAFETY: made for this access by aclCreateTensor, destroyed once; work queued with
        // it has consumed it at phase 1, as for the crate's own per-call descriptors.
        if let Err(e) = unsafe { sys::destroy_tensor(inner.table(), self.desc) } {
            inner.device.note_release_error(&e);
        }
    }
}

fn begin<'a>(t: RawTensor<'a>, stream: &'a Stream, access: Access) -> Result<RawAccess<'a>> {
    check_stream_device(t.buf, stream, "tensor")?;
    let inner = &stream.inner;
    inner.device.bind()?;
    t.buf.uses.order(inner, access)?;
    let desc = view_descriptor(inner.table(), &t)?;
    let offset = usize::try_from(t.layout.offset).unwrap_or(0) * t.dtype.size();
    // Recorded now, not when the access ends: a leaked access must still hold the tensor.
    t.buf.uses.open(inner, access);
    Ok(RawAccess {
        stream,
        buf: t.buf,
        access,
        desc,
        first: t.buf.ptr.cast::<u8>().wrapping_add(offset).cast(),
        _not_send: PhantomData,
    })
}

impl<'a, T: Element> TensorView<'a, T> {
    /// A raw read access to the view on `stream`: its device addresses and an `aclTensor`
    /// for it, for a C call the crate does not make.
    ///
    /// # Safety
    /// While the access lives, the caller queues on `stream` (and only there) work that
    /// reads at most the view's elements, with the view's dtype and layout, and never
    /// writes them; the pointers are not used after the access is dropped.
    ///
    /// # Errors
    /// [`Error::DeviceMismatch`](crate::Error::DeviceMismatch); [`Error::Acl`](crate::Error)
    /// or [`Error::Aclnn`](crate::Error) from ordering the stream or making the descriptor.
    ///
    /// ```
    /// # fn main() -> ascendcl::Result<()> {
    /// use ascendcl::{DeviceTensor, Runtime};
    /// let stream = Runtime::auto()?.device(0)?.stream()?;
    /// let x = DeviceTensor::from_array(&stream, &ndarray::array![[1.0f32, 2.0], [3.0, 4.0]])?;
    /// // SAFETY: nothing is queued with it.
    /// let raw = unsafe { x.view().t().raw_access(&stream)? };
    /// assert_eq!(raw.device_ptr(), raw.base_ptr());
    /// assert!(!raw.acl_tensor().is_null());
    /// # Ok(()) }
    /// ```
    pub unsafe fn raw_access(&self, stream: &'a Stream) -> Result<RawAccess<'a>> {
        begin(self.raw(), stream, Access::Read)
    }
}

impl<'a, T: Element> TensorViewMut<'a, T> {
    /// A raw read-write access to the view on `stream` (see [`TensorView::raw_access`]).
    ///
    /// # Safety
    /// While the access lives, the caller queues on `stream` (and only there) work that
    /// reads and writes at most the view's elements, with the view's dtype and layout; the
    /// pointers are not used after the access is dropped.
    ///
    /// # Errors
    /// As [`TensorView::raw_access`].
    pub unsafe fn raw_access_mut(&mut self, stream: &'a Stream) -> Result<RawAccess<'a>> {
        begin(self.raw(), stream, Access::Write)
    }
}
