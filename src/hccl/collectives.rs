//! The collectives and point-to-point transfers of a [`Communicator`]: each checks its
//! arguments and enqueues one HCCL call (refused on a communicator that failed before).

use super::ReduceOp;
use super::comm::{Communicator, Lengths, hccl_dtype};
use super::result;
use crate::element::DType;
use crate::element::Element;
use crate::error::{Error, Result};
use crate::stream::Stream;
use crate::tensor::{AsTensorView, AsTensorViewMut};
use crate::tensor::{Buffer, Layout};
use crate::uses::Access;
use ascend_sys::hccl::{HcclComm, HcclDataType, HcclReduceOp, HcclTable};
use ascend_sys::{FnTable, aclrtStream};
use std::ffi::c_void;

/// The checked layer's calls on one buffer of `count` elements and one rank (the root or
/// the peer): `result::broadcast`, `result::send`, `result::recv`.
type OneBufferCall = unsafe fn(
    &HcclTable,
    &FnTable,
    *mut c_void,
    u64,
    HcclDataType,
    u32,
    HcclComm,
    aclrtStream,
) -> Result<()>;

/// The checked layer's reducing calls from a send into a receive buffer:
/// `result::all_reduce`, `result::reduce_scatter`.
type ReducingCall = unsafe fn(
    &HcclTable,
    &FnTable,
    *mut c_void,
    *mut c_void,
    u64,
    HcclDataType,
    HcclReduceOp,
    HcclComm,
    aclrtStream,
) -> Result<()>;

impl Communicator {
    /// Combines every rank's `send` element by element with `op` and writes the result to
    /// every rank's `recv` (`HcclAllReduce`). `send` and `recv` hold the same number of
    /// elements.
    ///
    /// # Errors
    /// [`Error::DeviceMismatch`] for a stream or buffer of another device,
    /// [`Error::InvalidArgument`] for a non-contiguous view, [`Error::LengthMismatch`],
    /// [`Error::UnsupportedDtype`] for a product of bf16 on Atlas A2/A3, [`Error::Hccl`]
    /// (a timeout or a peer's failure is then kept: see
    /// [Failures](Communicator#failures)); [`Error::CommunicatorFailed`] on a
    /// communicator that failed before.
    pub fn all_reduce<T: Element>(
        &self,
        send: &impl AsTensorView<Elem = T>,
        recv: &mut impl AsTensorViewMut<Elem = T>,
        op: ReduceOp,
        stream: &Stream,
    ) -> Result<()> {
        let call = (
            Lengths::Equal,
            "HcclAllReduce",
            result::all_reduce as ReducingCall,
        );
        self.reducing(send, recv, op, stream, call)
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
        self.one_buffer_call(
            stream,
            buf.buf,
            &buf.layout,
            T::DTYPE,
            Access::Write,
            root,
            result::broadcast,
        )
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
        let uses = [(&s, Access::Read), (&r, Access::Write)];
        self.enqueue(stream, &uses, |h, t, raw| {
            // SAFETY: as in `reducing`; `recv` holds `size * count` elements.
            unsafe { result::all_gather(h, t, s.ptr, r.ptr, count, dtype, comm, raw) }
        })
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
        let lengths = Lengths::SendIsGroupTimesRecv;
        let call = (
            lengths,
            "HcclReduceScatter",
            result::reduce_scatter as ReducingCall,
        );
        self.reducing(send, recv, op, stream, call)
    }

    /// A reducing collective from `send` into `recv`, whose lengths agree as `lengths`
    /// says, by `call` of the C function `api`; `recv`'s length is the count.
    fn reducing<T: Element>(
        &self,
        send: &impl AsTensorView<Elem = T>,
        recv: &mut impl AsTensorViewMut<Elem = T>,
        op: ReduceOp,
        stream: &Stream,
        (lengths, api, call): (Lengths, &'static str, ReducingCall),
    ) -> Result<()> {
        let (send, recv) = (send.as_tensor_view(), recv.as_tensor_view_mut());
        let (s, r) = self.send_recv(stream, &send, &recv, lengths)?;
        self.check_reduction(op, T::DTYPE, api)?;
        let (dtype, count, comm) = (hccl_dtype(T::DTYPE), r.len as u64, self.raw);
        let uses = [(&s, Access::Read), (&r, Access::Write)];
        self.enqueue(stream, &uses, |h, t, raw| {
            // SAFETY: both spans are contiguous device memory of this rank's device, `recv`
            // holding `count` elements and `send` the elements `lengths` checked (`count`,
            // or the group's size times `count`), kept allocated until the stream has run
            // the collective (recorded by `enqueue`); `raw` is a stream of that device,
            // whose context `submit` bound; `comm` is live while `self` is.
            unsafe { call(h, t, s.ptr, r.ptr, count, dtype, op.raw(), comm, raw) }
        })
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

    /// [`all_reduce`](Communicator::all_reduce) with `buf` as both `send` and `recv`
    /// (`HcclAllReduce` with one buffer): the gradients are reduced where they are, with
    /// no second buffer.
    ///
    /// ```
    /// use ascendcl::hccl::{Communicator, ReduceOp};
    /// use ascendcl::{DeviceTensor, Runtime};
    ///
    /// # fn main() -> ascendcl::Result<()> {
    /// let rt = Runtime::auto()?;
    /// let device = rt.device(0)?;
    /// let comms = Communicator::init_all(std::slice::from_ref(&device))?;
    /// let stream = device.stream()?;
    /// let mut grad = DeviceTensor::from_array(&stream, &ndarray::arr1(&[1.0f32, 2.0]))?;
    /// comms[0].all_reduce_inplace(&mut grad, ReduceOp::Sum, &stream)?;
    /// assert_eq!(grad.to_array(&stream)?, ndarray::arr1(&[1.0, 2.0]).into_dyn());
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// As [`Communicator::all_reduce`].
    pub fn all_reduce_inplace<T: Element>(
        &self,
        buf: &mut impl AsTensorViewMut<Elem = T>,
        op: ReduceOp,
        stream: &Stream,
    ) -> Result<()> {
        let buf = buf.as_tensor_view_mut();
        let (b, dtype, count) = self.one_buffer(stream, buf.buf, &buf.layout, T::DTYPE)?;
        self.check_reduction(op, T::DTYPE, "HcclAllReduce")?;
        let comm = self.raw;
        self.enqueue(stream, &[(&b, Access::Write)], |h, t, raw| {
            // SAFETY: as in `reducing`, with `b` as both buffers: HCCL reads every rank's
            // input before it writes an output, so the one span may be both.
            unsafe { result::all_reduce(h, t, b.ptr, b.ptr, count, dtype, op.raw(), comm, raw) }
        })
    }

    /// Sends `buf` to rank `dest` (`HcclSend`), in the order of `stream`: the `k`-th send
    /// from this rank to `dest` is received by `dest`'s `k`-th
    /// [`recv`](Communicator::recv) from this rank, which must have the same length and
    /// element type. Both sides wait for each other on their streams, so two ranks that
    /// exchange buffers either post send and receive on two streams or order them by
    /// rank (a ring: even ranks send first, odd ranks receive first).
    ///
    /// ```
    /// use ascendcl::hccl::Communicator;
    /// use ascendcl::{DeviceTensor, Runtime};
    ///
    /// # fn main() -> ascendcl::Result<()> {
    /// let rt = Runtime::auto()?;
    /// if rt.device_count()? < 2 {
    ///     return Ok(());
    /// }
    /// let devices = [rt.device(0)?, rt.device(1)?];
    /// let comms = Communicator::init_all(&devices)?;
    /// std::thread::scope(|s| -> ascendcl::Result<()> {
    ///     let sender = s.spawn(|| -> ascendcl::Result<()> {
    ///         let stream = comms[0].device().stream()?;
    ///         let x = DeviceTensor::from_array(&stream, &ndarray::arr1(&[3.0f32, 4.0]))?;
    ///         comms[0].send(&x, 1, &stream)?;
    ///         stream.synchronize()
    ///     });
    ///     let stream = comms[1].device().stream()?;
    ///     let mut y = DeviceTensor::<f32>::zeros(&stream, &[2])?;
    ///     comms[1].recv(&mut y, 0, &stream)?;
    ///     assert_eq!(y.to_array(&stream)?, ndarray::arr1(&[3.0, 4.0]).into_dyn());
    ///     sender.join().expect("sender thread")
    /// })?;
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for `dest` outside the group or this rank itself, or a
    /// non-contiguous view; [`Error::DeviceMismatch`]; [`Error::Hccl`];
    /// [`Error::CommunicatorFailed`]. A receive that never comes, or one of another
    /// length, fails the stream (its next synchronisation) and sets
    /// [`async_error`](Communicator::async_error).
    pub fn send<T: Element>(
        &self,
        buf: &impl AsTensorView<Elem = T>,
        dest: u32,
        stream: &Stream,
    ) -> Result<()> {
        let buf = buf.as_tensor_view();
        self.check_peer(dest, "send to")?;
        let (b, l) = (buf.buf, &buf.layout);
        self.one_buffer_call(stream, b, l, T::DTYPE, Access::Read, dest, result::send)
    }

    /// Receives into `buf` what rank `src` sends (`HcclRecv`); see
    /// [`send`](Communicator::send) for how the two sides match.
    ///
    /// # Errors
    /// As [`Communicator::send`].
    pub fn recv<T: Element>(
        &self,
        buf: &mut impl AsTensorViewMut<Elem = T>,
        src: u32,
        stream: &Stream,
    ) -> Result<()> {
        let buf = buf.as_tensor_view_mut();
        self.check_peer(src, "receive from")?;
        let (b, l) = (buf.buf, &buf.layout);
        self.one_buffer_call(stream, b, l, T::DTYPE, Access::Write, src, result::recv)
    }

    /// Queues `call`, one of the checked layer's calls on one buffer and one rank, on
    /// `buf` (its `layout`, elements of `dtype`, used as `access`) and rank `rank`, after
    /// the checks of [`Communicator::one_buffer`].
    #[allow(clippy::too_many_arguments)]
    fn one_buffer_call(
        &self,
        stream: &Stream,
        buf: &Buffer,
        layout: &Layout,
        dtype: DType,
        access: Access,
        rank: u32,
        call: OneBufferCall,
    ) -> Result<()> {
        let (b, dtype, count) = self.one_buffer(stream, buf, layout, dtype)?;
        let comm = self.raw;
        self.enqueue(stream, &[(&b, access)], |h, t, raw| {
            // SAFETY: as in `reducing`, for the one span `b`: `call`'s contract (each
            // of `result::broadcast`, `send` and `recv` has that of `all_reduce` for its
            // one buffer of `count` elements).
            unsafe { call(h, t, b.ptr, count, dtype, rank, comm, raw) }
        })
    }

    /// A transfer's peer is another rank of the group.
    fn check_peer(&self, peer: u32, what: &str) -> Result<()> {
        if peer >= self.size {
            return Err(Error::InvalidArgument(format!(
                "cannot {what} rank {peer}: not a rank of a group of {}",
                self.size
            )));
        }
        if peer == self.rank() {
            return Err(Error::InvalidArgument(format!(
                "cannot {what} rank {peer}: it is this rank"
            )));
        }
        Ok(())
    }
}
