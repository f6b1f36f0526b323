//! [`Tensor`]'s constructors, uploads and downloads of any dtype: typed ones checked
//! against the run-time dtype, byte ones for any dtype.

use super::{Buffer, DeviceTensor, Layout, Tensor};
use crate::element::{DType, Element};
use crate::error::{Error, Result};
use crate::shape::{self, IntoDims};
use crate::stream::Stream;
use ndarray::{Array, ArrayBase, ArrayView, ArrayView1, Data, Dimension, IxDyn};
use std::sync::Arc;

/// Runs `$body` with `$t` the element type of the run-time `$dtype`: dtype dispatch,
/// written once.
macro_rules! with_dtype {
    ($dtype:expr, $t:ident => $body:expr) => {
        match $dtype {
            DType::F32 => {
                type $t = f32;
                $body
            }
            DType::F16 => {
                type $t = half::f16;
                $body
            }
            DType::BF16 => {
                type $t = half::bf16;
                $body
            }
            DType::I32 => {
                type $t = i32;
                $body
            }
            DType::I64 => {
                type $t = i64;
                $body
            }
            DType::I8 => {
                type $t = i8;
                $body
            }
            DType::U8 => {
                type $t = u8;
                $body
            }
            DType::Bool => {
                type $t = bool;
                $body
            }
            DType::F64 => {
                type $t = f64;
                $body
            }
        }
    };
}

impl Tensor {
    /// A new contiguous tensor over `buf`.
    fn over(buf: Buffer, dims: shape::Dims, dtype: DType) -> Result<Tensor> {
        Ok(Tensor {
            storage: Arc::new(buf),
            layout: Layout::contiguous(dims)?,
            dtype,
        })
    }

    /// A new contiguous tensor of `shape` and `dtype` whose contents are unspecified, from
    /// the device's caching allocator, without a fill (no kernel, no memset): the output
    /// of an operator that writes it whole. See [`DeviceTensor::empty`] for why this is
    /// sound and what reading it before a write gives.
    ///
    /// ```
    /// # fn main() -> ascendcl::Result<()> {
    /// use ascendcl::{DType, Runtime, Tensor};
    /// let stream = Runtime::auto()?.device(0)?.stream()?;
    /// let mut t = Tensor::empty(&stream, (2, 3), DType::F16)?;
    /// ascendcl::fill_inplace(t.typed_view_mut::<half::f16>()?, 1.5, &stream)?;
    /// assert_eq!(t.to_vec::<half::f16>(&stream)?, vec![half::f16::from_f32(1.5); 6]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// [`Error::TooManyDims`], [`Error::TooManyElements`], [`Error::Acl`] from the
    /// allocation.
    pub fn empty(stream: &Stream, shape: impl IntoDims, dtype: DType) -> Result<Tensor> {
        let dims = shape.into_dims("shape")?;
        let buf = Buffer::alloc(&stream.inner.device, dims, dtype, Some(stream))?;
        Tensor::over(buf, dims, dtype)
    }

    /// A new contiguous tensor of `shape` and `dtype` filled with zeros (`aclrtMemset`).
    ///
    /// # Errors
    /// As [`DeviceTensor::zeros`].
    pub fn zeros(stream: &Stream, shape: impl IntoDims, dtype: DType) -> Result<Tensor> {
        let dims = shape.into_dims("shape")?;
        let buf = super::zeroed(stream, dims, dtype)?;
        Tensor::over(buf, dims, dtype)
    }

    /// Uploads `array` (any element type, any layout) to a new contiguous tensor, as
    /// [`DeviceTensor::from_array`] does.
    ///
    /// # Errors
    /// As [`DeviceTensor::from_array`].
    pub fn from_array<T, S, D>(stream: &Stream, array: &ArrayBase<S, D>) -> Result<Tensor>
    where
        T: Element,
        S: Data<Elem = T>,
        D: Dimension,
    {
        DeviceTensor::from_array(stream, array).map(Tensor::from)
    }

    /// Uploads `data`, the elements of a tensor of `shape` in row-major order.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] when `data` does not hold `shape`'s number of elements;
    /// as [`from_array`](Self::from_array).
    pub fn from_slice<T: Element>(
        stream: &Stream,
        data: &[T],
        shape: impl IntoDims,
    ) -> Result<Tensor> {
        let dims = shape.into_dims("shape")?;
        if data.len() != dims.numel() {
            return Err(Error::LengthMismatch {
                argument: "data",
                expected: dims.numel(),
                actual: data.len(),
            });
        }
        let view = ArrayView::from_shape(IxDyn(dims.as_slice()), data)
            .map_err(|e| Error::InvalidArgument(e.to_string()))?;
        Tensor::from_array(stream, &view)
    }

    /// Uploads `bytes`, the elements of a tensor of `shape` and `dtype` in row-major order,
    /// each in the device's (the host's) byte order, with no alignment required.
    ///
    /// ```
    /// # fn main() -> ascendcl::Result<()> {
    /// use ascendcl::{DType, Runtime, Tensor};
    /// let stream = Runtime::auto()?.device(0)?.stream()?;
    /// let bytes: Vec<u8> = [1.0f32, -2.0].iter().flat_map(|v| v.to_ne_bytes()).collect();
    /// let t = Tensor::from_bytes(&stream, &bytes, DType::F32, 2)?;
    /// assert_eq!(t.to_vec::<f32>(&stream)?, [1.0, -2.0]);
    /// assert_eq!(t.to_bytes(&stream)?, bytes);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] (in bytes) when `bytes` does not hold the tensor;
    /// [`Error::TooManyDims`], [`Error::TooManyElements`], [`Error::Acl`] from the
    /// allocation or the copy.
    pub fn from_bytes(
        stream: &Stream,
        bytes: &[u8],
        dtype: DType,
        shape: impl IntoDims,
    ) -> Result<Tensor> {
        let dims = shape.into_dims("shape")?;
        let expected = dims.numel().checked_mul(dtype.size()).ok_or_else(|| {
            Error::InvalidArgument(format!("{:?} of {dtype} overflows usize bytes", dims))
        })?;
        if bytes.len() != expected {
            return Err(Error::LengthMismatch {
                argument: "bytes",
                expected,
                actual: bytes.len(),
            });
        }
        let buf = Buffer::alloc(&stream.inner.device, dims, dtype, Some(stream))?;
        let tensor = Tensor::over(buf, dims, dtype)?;
        let layout = tensor.layout.as_bytes(dtype.size())?;
        crate::transfer::upload(&tensor.storage, &layout, stream, &ArrayView1::from(bytes))?;
        Ok(tensor)
    }

    /// Downloads the elements (in row-major order of the tensor's shape), after the work
    /// queued on `stream` so far. Returns once the copy has finished.
    ///
    /// # Errors
    /// [`Error::DtypeMismatch`] when `T` is not the tensor's dtype;
    /// [`Error::DeviceMismatch`], [`Error::Acl`] from the copy or the synchronisation.
    pub fn to_vec<T: Element>(&self, stream: &Stream) -> Result<Vec<T>> {
        let view = self.typed_view::<T>()?;
        crate::transfer::download_vec(view.buf, &view.layout, stream)
    }

    /// Downloads the tensor into an array of the dimension type the caller names, as
    /// [`DeviceTensor::to_array`] does.
    ///
    /// ```
    /// # fn main() -> ascendcl::Result<()> {
    /// use ascendcl::{Runtime, Tensor};
    /// use ndarray::{Array2, array};
    /// let stream = Runtime::auto()?.device(0)?.stream()?;
    /// let a = array![[1u8, 2], [3, 4]];
    /// let t = Tensor::from_array(&stream, &a)?;
    /// let back: Array2<u8> = t.to_array(&stream)?;
    /// assert_eq!(back, a);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// [`Error::DtypeMismatch`] when `T` is not the tensor's dtype; as
    /// [`DeviceTensor::to_array`].
    pub fn to_array<T: Element, D: Dimension>(&self, stream: &Stream) -> Result<Array<T, D>> {
        self.typed_view::<T>()?.to_array(stream)
    }

    /// Downloads the elements' bytes (in row-major order of the tensor's shape, each
    /// element in the device's byte order), whatever the dtype.
    ///
    /// # Errors
    /// [`Error::DeviceMismatch`], [`Error::Acl`] from the copy or the synchronisation.
    pub fn to_bytes(&self, stream: &Stream) -> Result<Vec<u8>> {
        let size = self.dtype.size();
        match self.layout.as_bytes(size) {
            Ok(layout) => crate::transfer::download_vec::<u8>(&self.storage, &layout, stream),
            // A strided layout of the most dims has no room for the byte dim: copy it
            // dense first.
            Err(Error::TooManyDims { .. }) => self.contiguous(stream)?.to_bytes(stream),
            Err(e) => Err(e),
        }
    }

    /// The tensor itself (a clone sharing the storage) when it is contiguous, otherwise a
    /// **copy** of its elements into a new contiguous tensor, queued on `stream` (a
    /// device-to-device [`copy`](crate::copy)).
    ///
    /// # Errors
    /// [`Error::DeviceMismatch`]; the allocation's and the copy's errors.
    pub fn contiguous(&self, stream: &Stream) -> Result<Tensor> {
        if self.is_contiguous() {
            return Ok(self.clone());
        }
        let mut out = Tensor::empty(stream, self.layout.dims, self.dtype)?;
        with_dtype!(self.dtype, T => crate::copy(
            self.typed_view::<T>()?,
            out.typed_view_mut::<T>()?,
            stream,
        ))?;
        Ok(out)
    }
}
