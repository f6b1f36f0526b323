//! `aclnnInplaceCopy`: device-to-device copies with broadcast and dtype conversion, and
//! [`copy`], which takes a plain `aclrtMemcpyAsync` for dense same-dtype copies.

use crate::device::SocFamily;
use crate::element::DType;
use crate::error::Result;
use crate::stream::Stream;
use crate::sys;
use crate::tensor::{AsTensorView, AsTensorViewMut, check_stream_device};
use crate::uses::Access;
use crate::{Element, Error};

crate::operator! {
    @verified
    /// `aclnnInplaceCopy`: writes `src` into `selfRef`'s view, broadcasting `src` to
    /// `selfRef`'s shape and converting its dtype (round to nearest even). Every product
    /// has it, for every dtype of this crate.
    pub struct InplaceCopy: aclnnInplaceCopy, aclnnInplaceCopyGetWorkspaceSize;
    products: |_soc: SocFamily| true;
    dtypes: |_soc: SocFamily, _dtype: DType| true;
    // `selfRef` is read and written, so "selfRef and src broadcast together to selfRef's
    // shape" is exactly the vendor's "src broadcastable to selfRef's shape".
    rule: crate::protocol::rules::broadcast;

    /// `dst = src` through `aclnnInplaceCopy`, queued on `stream` (argument order of the C
    /// API: destination first). Prefer [`copy`], which skips the operator for dense
    /// same-dtype copies.
    ///
    /// # Errors
    /// As [`copy`].
    ///
    /// ```
    /// # fn main() -> ascendcl::Result<()> {
    /// use ascendcl::{DeviceTensor, Runtime, inplace_copy};
    /// use ndarray::array;
    /// let stream = Runtime::auto()?.device(0)?.stream()?;
    /// let src = DeviceTensor::from_array(&stream, &array![1.0f32, 2.0])?;
    /// let mut dst = DeviceTensor::<f32>::zeros(&stream, &[2, 2])?;
    /// inplace_copy(&mut dst, &src, &stream)?;
    /// assert_eq!(dst.to_array(&stream)?, array![[1.0f32, 2.0], [1.0, 2.0]].into_dyn());
    /// # Ok(()) }
    /// ```
    pub fn inplace_copy<D, S>(
        dst: inplace<D> = "selfRef",
        src: input<S> = "src",
    );

    /// A reusable [`inplace_copy`] for fixed layouts and element types.
    ///
    /// ```
    /// # fn main() -> ascendcl::Result<()> {
    /// use ascendcl::{DeviceTensor, InplaceCopyPlan, Runtime};
    /// use ndarray::array;
    /// let stream = Runtime::auto()?.device(0)?.stream()?;
    /// let src = DeviceTensor::from_array(&stream, &array![1.5f32, -2.0])?;
    /// let mut dst = DeviceTensor::<half::f16>::zeros(&stream, &[2])?;
    /// let mut plan = InplaceCopyPlan::new(&dst, &src, &stream)?;
    /// plan.launch(&mut dst, &src, &stream)?;
    /// assert_eq!(dst.to_array::<ndarray::Ix1>(&stream)?[1], half::f16::from_f32(-2.0));
    /// # Ok(()) }
    /// ```
    pub type InplaceCopyPlan;
}

/// Copies `src` into `dst` on the device, queued on `stream`: any layouts on both sides
/// (permuted, sliced, broadcast views), `src` broadcast to `dst`'s shape, and f32, f16 and
/// bf16 converted in any direction (round to nearest even). A dense, same-dtype,
/// same-shape copy is one `aclrtMemcpyAsync` (DEVICE_TO_DEVICE); everything else runs
/// `aclnnInplaceCopy`. Stream ordering and lifetimes are those of every operator call:
/// both tensors stay alive until the copy has run, and work on other streams that uses
/// them is waited for.
///
/// ```
/// # fn main() -> ascendcl::Result<()> {
/// use ascendcl::{DeviceTensor, Runtime, copy};
/// use half::bf16;
/// use ndarray::array;
/// let stream = Runtime::auto()?.device(0)?.stream()?;
/// let src = DeviceTensor::from_array(&stream, &array![[1.0f32, 2.0], [3.0, 4.0]])?;
/// let mut dst = DeviceTensor::<bf16>::zeros(&stream, &[2, 2])?;
/// copy(src.view().t(), &mut dst, &stream)?; // transposed and converted
/// let back = dst.to_array::<ndarray::Ix2>(&stream)?.mapv(f32::from);
/// assert_eq!(back, array![[1.0f32, 3.0], [2.0, 4.0]]);
/// # Ok(()) }
/// ```
///
/// # Errors
/// [`Error::DeviceMismatch`], [`Error::NotBroadcastable`] /
/// [`Error::ShapeMismatch`] when `src` does not broadcast to `dst`'s shape;
/// [`Error::Aclnn`] / [`Error::Acl`] from the library.
pub fn copy<S: Element, D: Element>(
    src: impl AsTensorView<Elem = S>,
    mut dst: impl AsTensorViewMut<Elem = D>,
    stream: &Stream,
) -> Result<()> {
    let s = src.as_tensor_view().raw();
    let d = dst.as_tensor_view_mut().raw();
    if S::DTYPE == D::DTYPE
        && s.layout.dims == d.layout.dims
        && s.layout.is_contiguous()
        && d.layout.is_contiguous()
        && s.layout.numel() > 0
    {
        check_stream_device(s.buf, stream, "src")?;
        check_stream_device(d.buf, stream, "dst (selfRef)")?;
        let size = S::DTYPE.size();
        let bytes = s
            .layout
            .numel()
            .checked_mul(size)
            .ok_or_else(|| Error::InvalidArgument("copy size overflows usize".into()))?;
        let at = |offset: i64, base: *mut std::ffi::c_void| {
            usize::try_from(offset)
                .map(|o| base.cast::<u8>().wrapping_add(o * size).cast())
                .map_err(|e| Error::InvalidArgument(e.to_string()))
        };
        let from = at(s.layout.offset, s.buf.ptr)?;
        let to = at(d.layout.offset, d.buf.ptr)?;
        let inner = &stream.inner;
        s.buf.uses.order(inner, Access::Read)?;
        d.buf.uses.order(inner, Access::Write)?;
        let t = inner.table();
        let ticket = inner.submit(|_, raw, _| {
            // SAFETY: both windows are dense and lie inside their allocations (checked
            // views); the buffers stay alive until the copy has run (recorded below). They
            // may be one allocation (two `Tensor`s sharing storage): the device copies
            // overlapping ranges into unspecified bytes, the host touches neither.
            unsafe {
                sys::memcpy_async(
                    t,
                    to,
                    bytes,
                    from,
                    bytes,
                    ascend_sys::ACL_MEMCPY_DEVICE_TO_DEVICE,
                    raw,
                )
            }
        })?;
        s.buf.uses.record(inner, ticket, Access::Read);
        d.buf.uses.record(inner, ticket, Access::Write);
        return Ok(());
    }
    inplace_copy(dst, src, stream)
}
