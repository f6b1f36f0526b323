//! The array transfers of tensors and views: `copy_from_array` and `copy_to_array`, over
//! the one transfer path of [`super`].

use super::{download_array, upload};
use crate::element::Element;
#[cfg(doc)]
use crate::error::Error;
use crate::error::Result;
use crate::stream::Stream;
use crate::tensor::{DeviceTensor, TensorView, TensorViewMut};
use ndarray::{ArrayBase, Data, DataMut, Dimension};

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
        download_array(&self.buf, &self.layout, stream, out)
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
        download_array(self.buf, &self.layout, stream, out)
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
        download_array(self.buf, &self.layout, stream, out)
    }
}
