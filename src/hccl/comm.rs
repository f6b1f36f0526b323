//! [`Communicator`]: one rank of a group of devices, how it is made, and the steps its
//! collectives share (checks, enqueueing, remembering a failure).

use super::result;
use super::{ReduceOp, RootInfo, library};
use crate::device::{Device, DeviceInner, SocFamily};
use crate::element::{DType, Element};
use crate::error::{Error, Result};
use crate::stream::Stream;
use crate::tensor::{Buffer, Layout, TensorView, TensorViewMut};
use crate::uses::{Access, Uses};
use ascend_sys::hccl::{
    HCCL_DATA_TYPE_BFP16, HCCL_DATA_TYPE_FP16, HCCL_DATA_TYPE_FP32, HCCL_DATA_TYPE_INT8,
    HCCL_DATA_TYPE_INT32, HCCL_DATA_TYPE_INT64, HCCL_DATA_TYPE_UINT8, HCCL_E_REMOTE,
    HCCL_E_TIMEOUT, HCCL_SUCCESS, Hccl, HcclComm, HcclDataType,
};
use std::ffi::c_void;
use std::fmt;
use std::sync::OnceLock;

/// HCCL's value of an element type.
pub(super) const fn hccl_dtype(dtype: DType) -> HcclDataType {
    match dtype {
        DType::F32 => HCCL_DATA_TYPE_FP32,
        DType::F16 => HCCL_DATA_TYPE_FP16,
        DType::BF16 => HCCL_DATA_TYPE_BFP16,
        DType::I32 => HCCL_DATA_TYPE_INT32,
        DType::I64 => HCCL_DATA_TYPE_INT64,
        DType::I8 => HCCL_DATA_TYPE_INT8,
        // HCCL has no BOOL: its bytes move as UINT8 (reductions refuse it).
        DType::U8 | DType::Bool => HCCL_DATA_TYPE_UINT8,
        DType::F64 => ascend_sys::hccl::HCCL_DATA_TYPE_FP64,
    }
}

/// One rank of a group of devices that run collectives together (`HcclComm`).
///
/// Made by [`Communicator::init_all`] (every rank at once, in one process),
/// [`Communicator::from_root_info`] (one rank, joining the others) or
/// [`Communicator::from_env`] (one rank of a job, as a launcher describes it). Every collective is
/// enqueued on a [`Stream`] of the rank's [`device`](Communicator::device); all ranks must
/// call the same collectives in the same order with matching arguments, each from its own
/// thread (see the [module docs](crate::hccl)).
///
/// # Failures
///
/// A communicator whose collective timed out (a rank that never came, a stream that never
/// reached it), whose peer failed (`HCCL_E_REMOTE`) or that reports an asynchronous error
/// ([`Communicator::async_error`], checked before every collective) cannot be resumed:
/// the ranks no longer agree on where they are. It remembers its first failure
/// ([`Communicator::failure`]), and every later collective returns
/// [`Error::CommunicatorFailed`] at once, quoting it, instead of waiting for a timeout
/// again. To recover, drop the communicators of every rank (`HcclCommDestroy`) and make
/// new ones (a new [`RootInfo`] for [`Communicator::from_root_info`]). Argument errors
/// (lengths, devices, a disagreement the ranks all saw as `HCCL_E_PARA`) leave it usable.
///
/// `Communicator` is `Send + Sync` (asserted at compile time): the handle is an opaque
/// token HCCL accepts from any thread, HCCL serialises calls on one communicator, and the
/// crate binds the device's context before each call. Dropping it waits for the
/// collectives it queued, then destroys it with `HcclCommDestroy`.
pub struct Communicator {
    pub(super) hccl: &'static Hccl,
    pub(super) device: Device,
    pub(super) raw: HcclComm,
    rank: u32,
    pub(super) size: u32,
    /// The streams whose queued collectives use this communicator.
    uses: Uses,
    /// The first failure that left the communicator unusable.
    failed: OnceLock<Error>,
}

// SAFETY: `raw` is an opaque HCCL handle that may be used from any thread (HCCL locks each
// communicator around its calls); the crate binds the device's context before every call
// through it. The other fields are `Send`.
unsafe impl Send for Communicator {}
// SAFETY: as above; `&Communicator` only reads immutable fields, passes the handle to HCCL
// and records uses behind `Uses`'s mutex; the failure is set once through `OnceLock`.
unsafe impl Sync for Communicator {}

impl fmt::Debug for Communicator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Communicator")
            .field("rank", &self.rank)
            .field("size", &self.size)
            .field("device", &self.device.id())
            .finish()
    }
}

/// A contiguous window of a tensor, as HCCL takes it: an address and a length.
pub(super) struct Span<'a> {
    pub(super) buf: &'a Buffer,
    pub(super) ptr: *mut c_void,
    pub(super) len: usize,
}

/// How the element counts of a collective's `send` and `recv` relate.
#[derive(Clone, Copy)]
pub(super) enum Lengths {
    Equal,
    RecvIsGroupTimesSend,
    SendIsGroupTimesRecv,
}

pub(super) fn span<'a>(
    buf: &'a Buffer,
    layout: &Layout,
    dtype: DType,
    argument: &str,
) -> Result<Span<'a>> {
    if !layout.is_contiguous() {
        return Err(Error::InvalidArgument(format!(
            "{argument} is not contiguous; HCCL moves consecutive elements"
        )));
    }
    let offset = usize::try_from(layout.offset)
        .map_err(|_| Error::InvalidArgument(format!("{argument} has a negative offset")))?;
    Ok(Span {
        buf,
        // In bounds: a view's window lies inside its storage (checked when it was made).
        ptr: buf
            .ptr
            .cast::<u8>()
            .wrapping_add(offset * dtype.size())
            .cast(),
        len: layout.numel(),
    })
}

impl Communicator {
    /// Takes ownership of a new communicator (destroyed when the result is dropped); its
    /// rank and size are asked by [`Communicator::query`].
    fn own(hccl: &'static Hccl, device: &Device, raw: HcclComm) -> Communicator {
        Communicator {
            hccl,
            device: device.clone(),
            raw,
            rank: 0,
            size: 0,
            uses: Uses::new(),
            failed: OnceLock::new(),
        }
    }

    fn query(&mut self) -> Result<()> {
        let t = self.device.inner.table();
        // SAFETY: `raw` is the live communicator `self` owns.
        unsafe {
            self.size = result::rank_size(self.hccl, t, self.raw)?;
            self.rank = result::rank_id(self.hccl, t, self.raw)?;
        }
        Ok(())
    }

    /// One communicator per device of `devices`, all in this process (`HcclCommInitAll`):
    /// rank `i` is on `devices[i]`.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for an empty list, a device listed twice or devices of
    /// different runtimes; [`Error::HcclUnavailable`]; [`Error::Hccl`].
    pub fn init_all(devices: &[Device]) -> Result<Vec<Communicator>> {
        let Some(first) = devices.first() else {
            return Err(Error::InvalidArgument(
                "Communicator::init_all needs at least one device".into(),
            ));
        };
        let rt = first.inner.rt;
        let mut ids = Vec::with_capacity(devices.len());
        for d in devices {
            if !std::ptr::eq(d.inner.rt, rt) {
                return Err(Error::InvalidArgument(
                    "Communicator::init_all: the devices belong to different runtimes".into(),
                ));
            }
            if ids.contains(&d.id()) {
                return Err(Error::InvalidArgument(format!(
                    "Communicator::init_all: device {} is listed twice; a device holds one rank",
                    d.id()
                )));
            }
            ids.push(d.id());
        }
        let hccl = library(rt)?;
        first.inner.bind()?;
        // SAFETY: the first device's context is current on this thread.
        let raws = unsafe { result::comm_init_all(hccl, first.inner.table(), &mut ids) }?;
        // Owned at once, so that an error below destroys every one of them.
        let mut comms: Vec<Communicator> = devices
            .iter()
            .zip(raws)
            .map(|(device, raw)| Communicator::own(hccl, device, raw))
            .collect();
        for comm in &mut comms {
            comm.query()?;
        }
        Ok(comms)
    }

    /// This process's rank `rank` of a group of `nranks`, on `device`
    /// (`HcclCommInitRootInfo`). Returns once every rank has joined, so each rank calls it
    /// from its own thread (or process).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for `nranks == 0` or `rank >= nranks`;
    /// [`Error::HcclUnavailable`]; [`Error::Hccl`] (`HCCL_E_TIMEOUT` when ranks are missing).
    pub fn from_root_info(
        device: &Device,
        root: &RootInfo,
        nranks: u32,
        rank: u32,
    ) -> Result<Communicator> {
        if nranks == 0 || rank >= nranks {
            return Err(Error::InvalidArgument(format!(
                "rank {rank} of a group of {nranks}: need 0 <= rank < nranks"
            )));
        }
        let hccl = library(device.inner.rt)?;
        device.inner.bind()?;
        let t = device.inner.table();
        // SAFETY: the device's context is current on this thread.
        let raw = unsafe { result::comm_init_root_info(hccl, t, nranks, root.raw(), rank) }?;
        let mut comm = Communicator::own(hccl, device, raw);
        comm.query()?;
        Ok(comm)
    }

    /// This communicator's rank in its group.
    pub fn rank(&self) -> u32 {
        self.rank
    }

    /// The number of ranks in the group.
    pub fn size(&self) -> u32 {
        self.size
    }

    /// The device of this rank.
    pub fn device(&self) -> Device {
        self.device.clone()
    }

    /// The raw `HcclComm`, for calls the safe API lacks; valid while `self` lives.
    pub fn as_raw(&self) -> HcclComm {
        self.raw
    }

    pub(super) fn check_stream(&self, stream: &Stream) -> Result<()> {
        self.device
            .inner
            .expect_same(&stream.inner.device, "communicator")
    }

    pub(super) fn check_buffer(&self, buf: &Buffer, argument: &'static str) -> Result<()> {
        buf.device.expect_same(&self.device.inner, argument)
    }

    /// What a call on one buffer `buf` (`layout`, elements of `dtype`) checks first, the
    /// stream's and the buffer's device, and what its C call takes: the buffer's span,
    /// its HCCL dtype and its element count.
    pub(super) fn one_buffer<'a>(
        &self,
        stream: &Stream,
        buf: &'a Buffer,
        layout: &Layout,
        dtype: DType,
    ) -> Result<(Span<'a>, HcclDataType, u64)> {
        self.check_stream(stream)?;
        self.check_buffer(buf, "buf")?;
        let b = span(buf, layout, dtype, "buf")?;
        let count = b.len as u64;
        Ok((b, hccl_dtype(dtype), count))
    }

    /// Atlas A2 / A3 HCCL refuses products of bf16 (`HcomCheckReduceDataType`).
    pub(super) fn check_reduction(
        &self,
        op: ReduceOp,
        dtype: DType,
        api: &'static str,
    ) -> Result<()> {
        let a2_a3 = matches!(
            self.device.soc_family(),
            SocFamily::AtlasA2 | SocFamily::AtlasA3
        );
        // HCCL has no BOOL type to reduce; summing its bytes as UINT8 would not be a
        // boolean operation.
        let bool_reduction = dtype == DType::Bool;
        if bool_reduction || (op == ReduceOp::Prod && dtype == DType::BF16 && a2_a3) {
            return Err(Error::UnsupportedDtype {
                argument: "send",
                dtype,
                operator: api,
                soc: self.device.soc_name().to_owned(),
            });
        }
        Ok(())
    }

    /// The checked spans of a collective from `send` into `recv` on `stream`, whose element
    /// counts must relate as `lengths` says.
    pub(super) fn send_recv<'a, T: Element>(
        &self,
        stream: &Stream,
        send: &TensorView<'a, T>,
        recv: &'a TensorViewMut<'_, T>,
        lengths: Lengths,
    ) -> Result<(Span<'a>, Span<'a>)> {
        self.check_stream(stream)?;
        self.check_buffer(send.buf, "send")?;
        self.check_buffer(recv.buf, "recv")?;
        let s = span(send.buf, &send.layout, T::DTYPE, "send")?;
        let r = span(recv.buf, &recv.layout, T::DTYPE, "recv")?;
        let size = self.size as usize;
        let (argument, expected, actual) = match lengths {
            Lengths::Equal => ("recv", s.len, r.len),
            Lengths::RecvIsGroupTimesSend => ("recv", s.len.saturating_mul(size), r.len),
            Lengths::SendIsGroupTimesRecv => ("send", r.len.saturating_mul(size), s.len),
        };
        if expected != actual {
            return Err(Error::LengthMismatch {
                argument,
                expected,
                actual,
            });
        }
        Ok((s, r))
    }

    /// The first failure that left this communicator unusable, if one happened (see
    /// [Failures](Communicator#failures)).
    pub fn failure(&self) -> Option<&Error> {
        self.failed.get()
    }

    /// Keeps `e` as the communicator's failure if it is the kind HCCL cannot resume from
    /// and none was kept before.
    fn note_failure(&self, e: &Error) {
        if matches!(e, Error::Hccl { code, .. } if *code == HCCL_E_TIMEOUT || *code == HCCL_E_REMOTE)
        {
            let _ = self.failed.set(e.clone());
        }
    }

    /// `Ok` while the communicator has not failed: no failure kept, no asynchronous error.
    fn usable(&self) -> Result<()> {
        let first = match self.failed.get() {
            Some(first) => first,
            None => {
                let t = self.device.inner.table();
                // SAFETY: `raw` is live while `self` is.
                let code = unsafe { result::async_error(self.hccl, t, self.raw) }?;
                if code == HCCL_SUCCESS {
                    return Ok(());
                }
                let e = result::error(self.hccl, t, "HcclGetCommAsyncError", code);
                self.failed.get_or_init(|| e)
            }
        };
        Err(Error::CommunicatorFailed {
            rank: self.rank,
            first: Box::new(first.clone()),
        })
    }

    /// Enqueues `call` (given the raw stream) on `stream`, unless the communicator failed
    /// before, and records that the collective uses `spans` and this communicator until
    /// the stream has run it.
    pub(super) fn enqueue(
        &self,
        stream: &Stream,
        spans: &[(&Span<'_>, Access)],
        call: impl FnOnce(&Hccl, &ascend_sys::FnTable, ascend_sys::aclrtStream) -> Result<()>,
    ) -> Result<()> {
        // After the caller's argument checks, so that a wrong argument makes no HCCL call.
        self.usable()?;
        let hccl = self.hccl;
        let t = self.device.inner.table();
        for (s, access) in spans {
            s.buf.uses.order(&stream.inner, *access)?;
        }
        let ticket = stream
            .inner
            .submit(|_, raw, _| call(hccl, t, raw))
            .inspect_err(|e| self.note_failure(e))?;
        for (s, access) in spans {
            s.buf.uses.record(&stream.inner, ticket, *access);
        }
        self.uses.record(&stream.inner, ticket, Access::Read);
        Ok(())
    }

    /// The first error of this rank's queued collectives that has happened so far
    /// (`HcclGetCommAsyncError`), e.g. `HCCL_E_TIMEOUT` after a stream synchronisation
    /// failed because a peer's stream never reached a collective.
    ///
    /// # Errors
    /// [`Error::Hccl`] naming `HcclGetCommAsyncError` and the asynchronous error's code,
    /// or the call's own failure.
    pub fn async_error(&self) -> Result<()> {
        let t = self.device.inner.table();
        // SAFETY: `raw` is live while `self` is.
        let code = unsafe { result::async_error(self.hccl, t, self.raw) }?;
        if code == HCCL_SUCCESS {
            Ok(())
        } else {
            let e = result::error(self.hccl, t, "HcclGetCommAsyncError", code);
            let _ = self.failed.set(e.clone());
            Err(e)
        }
    }
}

fn release(device: &DeviceInner, hccl: &Hccl, raw: HcclComm) {
    if device.bind().is_err() {
        device.note_leak("communicator", 0, 0, 1);
        return;
    }
    // SAFETY: `raw` is live and destroyed once, after the collectives it queued (waited
    // for by the caller); the device's context is current.
    if let Err(e) = unsafe { result::comm_destroy(hccl, device.table(), raw) } {
        device.note_release_error(&e);
        device.note_leak("communicator", 0, 0, 1);
    }
}

impl Drop for Communicator {
    fn drop(&mut self) {
        if !self.uses.wait_idle() {
            // A queued collective may still use it.
            self.device.inner.note_leak("communicator", 0, 0, 1);
            return;
        }
        release(&self.device.inner, self.hccl, self.raw);
    }
}
