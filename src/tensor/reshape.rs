//! [`DeviceTensor::reshape`]: a new shape for an owned (always contiguous) tensor.

use crate::element::Element;
use crate::error::{Error, Result};
use crate::shape::IntoDims;
use crate::sys;
use crate::tensor::{DeviceTensor, Layout};

impl<T: Element> DeviceTensor<T> {
    /// Gives the tensor a new shape with the same number of elements, in place, without
    /// copying (a tensor's storage is row-major, so any such shape is valid). The tensor is
    /// unchanged when an error is returned.
    ///
    /// The tensor's cached operator descriptor describes the old shape: when work queued
    /// with it may still run, this waits for that work before releasing it.
    ///
    /// ```
    /// # fn main() -> ascendcl::Result<()> {
    /// use ascendcl::{DeviceTensor, Runtime};
    /// use ndarray::array;
    /// let stream = Runtime::auto()?.device(0)?.stream()?;
    /// let mut t = DeviceTensor::from_array(&stream, &array![[1.0f32, 2.0, 3.0], [4.0, 5.0, 6.0]])?;
    /// t.reshape(&[3, 2])?;
    /// assert_eq!(t.to_array(&stream)?, array![[1.0f32, 2.0], [3.0, 4.0], [5.0, 6.0]].into_dyn());
    /// assert!(t.reshape(&[4, 2]).is_err());
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// [`Error::TooManyDims`], [`Error::TooManyElements`]; [`Error::ReshapeMismatch`] when
    /// the number of elements differs; [`Error::Acl`] from waiting for queued work.
    pub fn reshape(&mut self, shape: impl IntoDims) -> Result<()> {
        let dims = shape.into_dims("shape")?;
        if dims.numel() != self.layout.numel() {
            return Err(Error::ReshapeMismatch {
                shape: self.layout.dims.as_slice().to_vec(),
                requested: dims.as_slice().to_vec(),
            });
        }
        let layout = Layout::contiguous(dims)?;
        if layout == self.layout {
            return Ok(());
        }
        let desc = *self.buf.desc.get_mut();
        if !desc.is_null() {
            if !self.buf.uses.wait_idle() {
                return Err(Error::InvalidArgument(
                    "the tensor's queued work could not be waited for; the stream's next call \
                     returns the cause"
                        .into(),
                ));
            }
            self.buf.device.bind()?;
            // SAFETY: made by aclCreateTensor for this tensor; every phase 2 that used it
            // has run (waited above), and it is unhooked from the buffer so it is destroyed
            // once.
            unsafe { sys::destroy_tensor(self.buf.device.table(), desc) }?;
            *self.buf.desc.get_mut() = std::ptr::null_mut();
        }
        self.layout = layout;
        // The descriptor made from now on describes the new dims.
        self.buf.key.dims = dims;
        Ok(())
    }
}
