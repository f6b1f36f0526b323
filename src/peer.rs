//! Copies between devices: [`DeviceTensor::copy_from_peer`] and [`Device::can_access_peer`],
//! over CANN's peer access (`aclrtDeviceCanAccessPeer`, `aclrtDeviceEnablePeerAccess`) and a
//! device-to-device `aclrtMemcpyAsync`.

use crate::device::{Device, DeviceInner};
use crate::element::Element;
use crate::error::{Error, Result};
use crate::stream::Stream;
use crate::sys;
use crate::tensor::{DeviceTensor, check_stream_device};
use crate::transfer::check_shape;
use crate::uses::Access;
use std::sync::atomic::Ordering;

impl Device {
    /// Whether this device can copy from and to the memory of `peer`
    /// (`aclrtDeviceCanAccessPeer`); a device is not its own peer.
    ///
    /// # Errors
    /// [`Error::Acl`] from `aclrtDeviceCanAccessPeer` (also when the loaded runtime lacks
    /// it).
    pub fn can_access_peer(&self, peer: &Device) -> Result<bool> {
        sys::can_access_peer(self.inner.table(), self.id(), peer.id())
    }
}

/// Enables access from `device` to `peer`'s memory once per device handle.
fn enable_peer(device: &DeviceInner, peer: i32) -> Result<()> {
    let bit = u32::try_from(peer)
        .ok()
        .filter(|p| *p < 64)
        .map(|p| 1u64 << p);
    if bit.is_some_and(|b| device.peers.load(Ordering::Acquire) & b != 0) {
        return Ok(());
    }
    let t = device.table();
    if !sys::can_access_peer(t, device.id, peer)? {
        return Err(Error::InvalidArgument(format!(
            "device {} cannot access the memory of device {peer} (aclrtDeviceCanAccessPeer)",
            device.id
        )));
    }
    device.bind()?;
    sys::enable_peer_access(t, peer)?;
    if let Some(b) = bit {
        device.peers.fetch_or(b, Ordering::AcqRel);
    }
    Ok(())
}

impl<T: Element> DeviceTensor<T> {
    /// Copies `src`, a tensor of the same shape on any device, into `self`, on `stream` (a
    /// stream of `self`'s device). From another device, the copy goes device to device
    /// over peer access, which is enabled on first use (`aclrtDeviceEnablePeerAccess`),
    /// after the writes to `src` queued so far; the call returns once the copy has
    /// finished (so that `src`'s device never has to wait for another device's stream).
    /// From the same device it is queued like any copy.
    ///
    /// ```
    /// # fn main() -> ascendcl::Result<()> {
    /// use ascendcl::{DeviceTensor, Runtime, SimConfig};
    /// use ndarray::{Array1, array};
    /// let rt = Runtime::simulator_with(&SimConfig::new().devices(["Ascend910B4"; 2]))?;
    /// let (d0, d1) = (rt.device(0)?, rt.device(1)?);
    /// let (s0, s1) = (d0.stream()?, d1.stream()?);
    /// assert!(d1.can_access_peer(&d0)?);
    /// let y0 = DeviceTensor::from_array(&s0, &array![1.0f32, 2.0, 3.0])?;
    /// let mut y1 = DeviceTensor::<f32>::zeros(&s1, 3)?;
    /// y1.copy_from_peer(&y0, &s1)?;
    /// let got: Array1<f32> = y1.to_array(&s1)?;
    /// assert_eq!(got, array![1.0f32, 2.0, 3.0]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// [`Error::DeviceMismatch`] for a stream of another device than `self`'s,
    /// [`Error::ShapeMismatch`] for shapes that differ, [`Error::InvalidArgument`] when
    /// the devices cannot access each other, [`Error::Acl`] from enabling peer access, the
    /// copy or the wait.
    pub fn copy_from_peer(&mut self, src: &DeviceTensor<T>, stream: &Stream) -> Result<()> {
        check_stream_device(&self.buf, stream, "self")?;
        check_shape("src", self.shape(), src.shape())?;
        let bytes = self.len() * T::DTYPE.size();
        if bytes == 0 {
            return Ok(());
        }
        let device = &stream.inner.device;
        let foreign = !src.buf.device.same_as(device);
        if foreign {
            enable_peer(device, src.buf.device.id)?;
            // `src`'s streams belong to another device: no event can order this stream
            // after them, so the host waits for their writes.
            src.buf.uses.wait_for(Access::Read)?;
        } else {
            src.buf.uses.order(&stream.inner, Access::Read)?;
        }
        self.buf.uses.order(&stream.inner, Access::Write)?;
        let t = device.table();
        let (dst, dst_max, from) = (self.buf.ptr, self.buf.bytes(), src.buf.ptr);
        let ticket = stream.inner.submit(|_, raw, _| {
            // SAFETY: `dst` holds `dst_max >= bytes` bytes of this tensor's storage and
            // `from` the `bytes` bytes of `src`'s (same shape, both contiguous); the
            // stream belongs to `dst`'s device, which has peer access to `src`'s when they
            // differ. Both stay allocated until the copy has run: `dst`'s release waits for
            // the tickets recorded below.
            unsafe {
                sys::memcpy_async(
                    t,
                    dst,
                    dst_max,
                    from,
                    bytes,
                    ascend_sys::ACL_MEMCPY_DEVICE_TO_DEVICE,
                    raw,
                )
            }
        })?;
        self.buf.uses.record(&stream.inner, ticket, Access::Write);
        // Recorded for a foreign stream too: should the wait below fail, `src`'s release
        // still waits for (or leaks under) the copy. Once it succeeds, the use is complete
        // and never needs an event.
        src.buf.uses.record(&stream.inner, ticket, Access::Read);
        if foreign {
            stream.inner.synchronize()?;
        }
        Ok(())
    }
}
