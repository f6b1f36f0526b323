//! [`Communicator`]: one rank of a group of devices, and its collectives.

use super::result;
use super::{ReduceOp, RootInfo, library};
use crate::device::{Device, DeviceInner, SocFamily};
use crate::element::{DType, Element};
use crate::error::{Error, Result};
use crate::stream::Stream;
use crate::tensor::{AsTensorView, AsTensorViewMut, Buffer, Layout, TensorView, TensorViewMut};
use crate::uses::{Access, Uses};
use ascend_sys::hccl::{
    HCCL_DATA_TYPE_BFP16, HCCL_DATA_TYPE_FP16, HCCL_DATA_TYPE_FP32, Hccl, HcclComm, HcclDataType,
};
use std::ffi::c_void;
use std::fmt;

/// HCCL's value of an element type.
const fn hccl_dtype(dtype: DType) -> HcclDataType {
    match dtype {
        DType::F32 => HCCL_DATA_TYPE_FP32,
        DType::F16 => HCCL_DATA_TYPE_FP16,
        DType::BF16 => HCCL_DATA_TYPE_BFP16,
    }
}

/// One rank of a group of devices that run collectives together (`HcclComm`).
///
/// Made by [`Communicator::init_all`] (every rank at once, in one process) or
/// [`Communicator::from_root_info`] (one rank, joining the others). Every collective is
/// enqueued on a [`Stream`] of the rank's [`device`](Communicator::device); all ranks must
/// call the same collectives in the same order with matching arguments, each from its own
/// thread (see the [module docs](crate::hccl)).
///
/// `Communicator` is `Send + Sync` (asserted at compile time): the handle is an opaque
/// token HCCL accepts from any thread, HCCL serialises calls on one communicator, and the
/// crate binds the device's context before each call. Dropping it waits for the
/// collectives it queued, then destroys it with `HcclCommDestroy`.
pub struct Communicator {
    hccl: &'static Hccl,
    device: Device,
    raw: HcclComm,
    rank: u32,
    size: u32,
    /// The streams whose queued collectives use this communicator.
    uses: Uses,
}

// SAFETY: `raw` is an opaque HCCL handle that may be used from any thread (HCCL locks each
// communicator around its calls); the crate binds the device's context before every call
// through it. The other fields are `Send`.
unsafe impl Send for Communicator {}
// SAFETY: as above; `&Communicator` only reads immutable fields, passes the handle to HCCL
// and records uses behind `Uses`'s mutex.
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
struct Span<'a> {
    buf: &'a Buffer,
    ptr: *mut c_void,
    len: usize,
}

/// How the element counts of a collective's `send` and `recv` relate.
#[derive(Clone, Copy)]
enum Lengths {
    Equal,
    RecvIsGroupTimesSend,
    SendIsGroupTimesRecv,
}

fn span<'a>(buf: &'a Buffer, layout: &Layout, dtype: DType, argument: &str) -> Result<Span<'a>> {
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

    fn check_stream(&self, stream: &Stream) -> Result<()> {
        self.device
            .inner
            .expect_same(&stream.inner.device, "communicator")
    }

    fn check_buffer(&self, buf: &Buffer, argument: &'static str) -> Result<()> {
        buf.device.expect_same(&self.device.inner, argument)
    }

    /// Atlas A2 / A3 HCCL refuses products of bf16 (`HcomCheckReduceDataType`).
    fn check_reduction(&self, op: ReduceOp, dtype: DType, api: &'static str) -> Result<()> {
        let a2_a3 = matches!(
            self.device.soc_family(),
            SocFamily::AtlasA2 | SocFamily::AtlasA3
        );
        if op == ReduceOp::Prod && dtype == DType::BF16 && a2_a3 {
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
    fn send_recv<'a, T: Element>(
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

    /// Enqueues `call` (given the raw stream) on `stream` and records that the
    /// collective uses `spans` and this communicator until the stream has run it.
    fn enqueue(
        &self,
        stream: &Stream,
        spans: &[(&Span<'_>, Access)],
        call: impl FnOnce(&Hccl, &ascend_sys::FnTable, ascend_sys::aclrtStream) -> Result<()>,
    ) -> Result<()> {
        let hccl = self.hccl;
        let t = self.device.inner.table();
        for (s, access) in spans {
            s.buf.uses.order(&stream.inner, *access)?;
        }
        let ticket = stream.inner.submit(|_, raw, _| call(hccl, t, raw))?;
        for (s, access) in spans {
            s.buf.uses.record(&stream.inner, ticket, *access);
        }
        self.uses.record(&stream.inner, ticket, Access::Read);
        Ok(())
    }

    /// Combines every rank's `send` element by element with `op` and writes the result to
    /// every rank's `recv` (`HcclAllReduce`). `send` and `recv` hold the same number of
    /// elements.
    ///
    /// # Errors
    /// [`Error::DeviceMismatch`] for a stream or buffer of another device,
    /// [`Error::InvalidArgument`] for a non-contiguous view, [`Error::LengthMismatch`],
    /// [`Error::UnsupportedDtype`] for a product of bf16 on Atlas A2/A3, [`Error::Hccl`].
    pub fn all_reduce<T: Element>(
        &self,
        send: &impl AsTensorView<Elem = T>,
        recv: &mut impl AsTensorViewMut<Elem = T>,
        op: ReduceOp,
        stream: &Stream,
    ) -> Result<()> {
        let (send, recv) = (send.as_tensor_view(), recv.as_tensor_view_mut());
        let (s, r) = self.send_recv(stream, &send, &recv, Lengths::Equal)?;
        self.check_reduction(op, T::DTYPE, "HcclAllReduce")?;
        let (dtype, count, comm) = (hccl_dtype(T::DTYPE), s.len as u64, self.raw);
        self.enqueue(
            stream,
            &[(&s, Access::Read), (&r, Access::Write)],
            |h, t, raw| {
                // SAFETY: both spans are contiguous device memory of this rank's device holding
                // `count` elements, kept allocated until the stream has run the collective
                // (recorded by `enqueue`); `raw` is a stream of that device, whose context
                // `submit` bound; `comm` is live while `self` is.
                unsafe { result::all_reduce(h, t, s.ptr, r.ptr, count, dtype, op.raw(), comm, raw) }
            },
        )
    }

    /// Copies rank `root`'s `buf` into every other rank's `buf` (`HcclBroadcast`).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a root outside the group or a non-contiguous view,
    /// [`Error::DeviceMismatch`], [`Error::Hccl`].
    pub fn broadcast<T: Element>(
        &self,
        buf: &mut impl AsTensorViewMut<Elem = T>,
        root: u32,
        stream: &Stream,
    ) -> Result<()> {
        let buf = buf.as_tensor_view_mut();
        if root >= self.size {
            return Err(Error::InvalidArgument(format!(
                "broadcast root {root} is not a rank of a group of {}",
                self.size
            )));
        }
        self.check_stream(stream)?;
        self.check_buffer(buf.buf, "buf")?;
        let b = span(buf.buf, &buf.layout, T::DTYPE, "buf")?;
        let (dtype, count, comm) = (hccl_dtype(T::DTYPE), b.len as u64, self.raw);
        self.enqueue(stream, &[(&b, Access::Write)], |h, t, raw| {
            // SAFETY: as in `all_reduce`, for the one span `b`.
            unsafe { result::broadcast(h, t, b.ptr, count, dtype, root, comm, raw) }
        })
    }

    /// Gathers every rank's `send` into every rank's `recv`, rank after rank
    /// (`HcclAllGather`): `recv` holds [`size`](Communicator::size) times `send`'s
    /// elements.
    ///
    /// # Errors
    /// As [`Communicator::all_reduce`] (no dtype rule).
    pub fn all_gather<T: Element>(
        &self,
        send: &impl AsTensorView<Elem = T>,
        recv: &mut impl AsTensorViewMut<Elem = T>,
        stream: &Stream,
    ) -> Result<()> {
        let (send, recv) = (send.as_tensor_view(), recv.as_tensor_view_mut());
        let lengths = Lengths::RecvIsGroupTimesSend;
        let (s, r) = self.send_recv(stream, &send, &recv, lengths)?;
        let (dtype, count, comm) = (hccl_dtype(T::DTYPE), s.len as u64, self.raw);
        self.enqueue(
            stream,
            &[(&s, Access::Read), (&r, Access::Write)],
            |h, t, raw| {
                // SAFETY: as in `all_reduce`; `recv` holds `size * count` elements.
                unsafe { result::all_gather(h, t, s.ptr, r.ptr, count, dtype, comm, raw) }
            },
        )
    }

    /// Combines every rank's `send` with `op` and gives rank `r` the `r`-th
    /// [`size`](Communicator::size)-th of the result (`HcclReduceScatter`): `send` holds
    /// `size` times `recv`'s elements.
    ///
    /// # Errors
    /// As [`Communicator::all_reduce`].
    pub fn reduce_scatter<T: Element>(
        &self,
        send: &impl AsTensorView<Elem = T>,
        recv: &mut impl AsTensorViewMut<Elem = T>,
        op: ReduceOp,
        stream: &Stream,
    ) -> Result<()> {
        let (send, recv) = (send.as_tensor_view(), recv.as_tensor_view_mut());
        let lengths = Lengths::SendIsGroupTimesRecv;
        let (s, r) = self.send_recv(stream, &send, &recv, lengths)?;
        self.check_reduction(op, T::DTYPE, "HcclReduceScatter")?;
        let (dtype, count, comm) = (hccl_dtype(T::DTYPE), r.len as u64, self.raw);
        self.enqueue(
            stream,
            &[(&s, Access::Read), (&r, Access::Write)],
            |h, t, raw| {
                // SAFETY: as in `all_reduce`; `send` holds `size * count` elements.
                unsafe {
                    result::reduce_scatter(h, t, s.ptr, r.ptr, count, dtype, op.raw(), comm, raw)
                }
            },
        )
    }

    /// Work queued on `stream` after this waits until every rank's stream has reached its
    /// barrier (`HcclBarrier`).
    ///
    /// # Errors
    /// [`Error::DeviceMismatch`], [`Error::Hccl`].
    pub fn barrier(&self, stream: &Stream) -> Result<()> {
        self.check_stream(stream)?;
        let comm = self.raw;
        self.enqueue(stream, &[], |h, t, raw| {
            // SAFETY: `raw` is a stream of this rank's device, whose context `submit`
            // bound; `comm` is live while `self` is.
            unsafe { result::barrier(h, t, comm, raw) }
        })
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
        if code == ascend_sys::hccl::HCCL_SUCCESS {
            Ok(())
        } else {
            Err(result::error(self.hccl, t, "HcclGetCommAsyncError", code))
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
