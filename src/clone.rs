//! [`DeviceTensor::try_clone`]: a deep copy on the device.

use crate::element::Element;
use crate::error::Result;
use crate::stream::Stream;
use crate::sys;
use crate::tensor::{Buffer, DeviceTensor, check_stream_device};
use crate::uses::Access;
use std::marker::PhantomData;

impl<T: Element> DeviceTensor<T> {
    /// A new tensor of the same shape and contents, on the same device: a device-to-device
    /// copy queued on `stream` after the work queued so far (and after writes to `self`
    /// queued on other streams). Returns without waiting; later work on the copy is
    /// ordered after it, as for any tensor.
    ///
    /// ```
    /// # fn main() -> ascendcl::Result<()> {
    /// use ascendcl::{DeviceTensor, Runtime};
    /// use ndarray::{Array2, array};
    /// let stream = Runtime::auto()?.device(0)?.stream()?;
    /// let mut w = DeviceTensor::from_array(&stream, &array![[1.0f32, -2.0], [3.0, 0.5]])?;
    /// let before = w.try_clone(&stream)?; // a snapshot
    /// ascendcl::mish_inplace(&mut w, &stream)?;
    /// let snapshot: Array2<f32> = before.to_array(&stream)?;
    /// assert_eq!(snapshot, array![[1.0f32, -2.0], [3.0, 0.5]]);
    /// assert_ne!(w.to_array::<ndarray::Ix2>(&stream)?, snapshot);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// [`Error::DeviceMismatch`](crate::Error::DeviceMismatch) for a stream of another
    /// device; [`Error::Acl`](crate::Error::Acl) from the allocation or the copy.
    pub fn try_clone(&self, stream: &Stream) -> Result<DeviceTensor<T>> {
        check_stream_device(&self.buf, stream, "tensor")?;
        let device = &stream.inner.device;
        let buf = Buffer::alloc(device, self.layout.dims, T::DTYPE, Some(stream))?;
        let clone = DeviceTensor {
            buf,
            layout: self.layout,
            _elem: PhantomData,
        };
        let bytes = self.buf.len * T::DTYPE.size();
        if bytes == 0 {
            return Ok(clone);
        }
        self.buf.uses.order(&stream.inner, Access::Read)?;
        // A cached block may still be used by other streams' queued work.
        clone.buf.uses.order(&stream.inner, Access::Write)?;
        let t = device.table();
        let (dst, dst_max, src) = (clone.buf.ptr, clone.buf.bytes(), self.buf.ptr);
        let ticket = stream.inner.submit(|_, raw, _| {
            // SAFETY: `dst` holds `dst_max >= bytes` bytes of fresh device memory, `src`
            // the `bytes` bytes of this tensor's storage; both stay allocated until the
            // copy has run (their releases wait for the tickets recorded below), and the
            // stream belongs to their device (checked above).
            unsafe {
                sys::memcpy_async(
                    t,
                    dst,
                    dst_max,
                    src,
                    bytes,
                    ascend_sys::ACL_MEMCPY_DEVICE_TO_DEVICE,
                    raw,
                )
            }
        })?;
        self.buf.uses.record(&stream.inner, ticket, Access::Read);
        clone.buf.uses.record(&stream.inner, ticket, Access::Write);
        Ok(clone)
    }
}
