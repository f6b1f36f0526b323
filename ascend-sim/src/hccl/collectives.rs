//! The collectives' entry points: each checks its arguments in the vendor's order, meets
//! the other ranks' calls, and enqueues its part on the stream.

use super::group::{Arrival, Group};
use super::movement::{Buf, Desc, Kind, Part, dtype_name, dtype_size, op_name};
use super::{QUEUED, current_device, data_call, fail, finding, lookup, non_null, status, timeout};
use crate::racecheck::{Held, Touch};
use crate::state::{Kind as HandleKind, decode, state};
use crate::stream::{StreamShared, Task};
use crate::tables::Family;
use ascend_sys::aclrtStream;
use ascend_sys::hccl::*;
use std::ffi::c_void;
use std::sync::Arc;
use std::sync::atomic::Ordering;

/// `HcomCheckDataType`, plus the dtypes HCCL has but the simulator does not model.
pub(super) fn check_dtype(dtype: HcclDataType) -> Result<usize, HcclResult> {
    dtype_size(dtype).ok_or_else(|| {
        let why = if (12..=17).contains(&dtype) {
            "a dtype the simulator does not model (INT128 and the 8-bit float kinds)"
        } else {
            "not an HcclDataType"
        };
        fail(
            HCCL_E_NOT_SUPPORT,
            format!("dataType {}: {why}", dtype_name(dtype)),
        )
    })
}

/// `HcomCheckReductionOp`.
fn check_op(op: HcclReduceOp) -> Result<(), HcclResult> {
    if op <= HCCL_REDUCE_MIN {
        Ok(())
    } else {
        Err(fail(
            HCCL_E_NOT_SUPPORT,
            format!("op {} is not supported", op_name(op)),
        ))
    }
}

/// `HcomCheckReduceDataType`: the pairs a product's HCCL refuses.
fn check_reduce_dtype(
    dtype: HcclDataType,
    op: HcclReduceOp,
    device: usize,
) -> Result<(), HcclResult> {
    let family = state().devices.get(device).map(|d| d.family);
    let refused = match family {
        Some(Family::A2 | Family::A3) => {
            op == HCCL_REDUCE_PROD && matches!(dtype, HCCL_DATA_TYPE_INT16 | HCCL_DATA_TYPE_BFP16)
        }
        Some(Family::Training) => dtype == HCCL_DATA_TYPE_INT16,
        Some(Family::Inference310P) => dtype == HCCL_DATA_TYPE_INT16 && op != HCCL_REDUCE_SUM,
        _ => false,
    };
    if refused {
        let soc = state()
            .devices
            .get(device)
            .map_or_else(String::new, |d| d.soc.to_string_lossy().into_owned());
        Err(fail(
            HCCL_E_NOT_SUPPORT,
            format!(
                "op {} on dataType {} is not supported on {soc}",
                op_name(op),
                dtype_name(dtype)
            ),
        ))
    } else {
        Ok(())
    }
}

/// `count` elements of `size` bytes, times `ranks` (for the buffer that holds every
/// rank's share).
pub(super) fn byte_len(
    count: u64,
    size: usize,
    ranks: usize,
    what: &str,
) -> Result<usize, HcclResult> {
    usize::try_from(count)
        .ok()
        .and_then(|c| c.checked_mul(size))
        .and_then(|b| b.checked_mul(ranks))
        .ok_or_else(|| {
            fail(
                HCCL_E_PARA,
                format!("{what} of {count} elements is too large"),
            )
        })
}

/// One buffer argument: its name, address and the bytes the collective touches.
pub(super) type BufArg = (&'static str, *mut c_void, usize);

/// Checks the stream and buffers against the rank's device (under the state lock): the
/// stream's queue and the rank's buffers.
pub(super) fn bind(
    group: &Group,
    rank: usize,
    stream: aclrtStream,
    send: Option<BufArg>,
    recv: Option<BufArg>,
) -> Result<(Arc<StreamShared>, Part), HcclResult> {
    let device = group.devices[rank];
    {
        let st = state();
        let id = decode(HandleKind::Stream, stream)
            .map_err(|m| finding(HCCL_E_RUNTIME, format!("stream: {m}")))?;
        let Some(s) = st.streams.get(&id) else {
            return Err(finding(
                HCCL_E_RUNTIME,
                format!("stream: {}", st.stale(HandleKind::Stream, id)),
            ));
        };
        if s.device != device {
            return Err(finding(
                HCCL_E_PARA,
                format!(
                    "stream {stream:p} belongs to device {}, but rank {rank} of the communicator is on device {device}",
                    s.device
                ),
            ));
        }
        match st.current_device_quiet() {
            Some(current) if current == s.device => {}
            current => {
                return Err(finding(
                    HCCL_E_RUNTIME,
                    format!(
                        "stream {stream:p} belongs to device {}, but the current context is {}",
                        s.device,
                        current.map_or("gone".into(), |d| format!("on device {d}"))
                    ),
                ));
            }
        }
        let buf = |arg: Option<BufArg>| -> Result<Option<Buf>, HcclResult> {
            let Some((what, ptr, len)) = arg else {
                return Ok(None);
            };
            let addr = ptr as usize;
            let alloc = st
                .device_range(what, addr, len)
                .map_err(|m| finding(HCCL_E_PARA, m))?;
            if alloc.device != device {
                return Err(finding(
                    HCCL_E_PARA,
                    format!(
                        "{what} {addr:#x} is memory of device {}, but rank {rank} of the communicator is on device {device}",
                        alloc.device
                    ),
                ));
            }
            Ok(Some(Buf {
                offset: addr - alloc.start,
                alloc,
            }))
        };
        let part = Part {
            send: buf(send)?,
            recv: buf(recv)?,
        };
        Ok((Arc::clone(&s.handle.shared), part))
    }
}

/// Checks the stream and buffers, meets the other ranks and enqueues this rank's part.
fn launch(
    group: Arc<Group>,
    rank: usize,
    desc: Desc,
    stream: aclrtStream,
    send: Option<BufArg>,
    recv: Option<BufArg>,
) -> Result<(), HcclResult> {
    let (queue, part) = bind(&group, rank, stream, send, recv)?;
    // A broadcast's root reads its buffer; the other ranks write theirs.
    let root_reads = desc.kind == Kind::Broadcast && desc.root == Some(rank as u32);
    let touch = touches(desc.kind.api(), &part, send, recv, !root_reads);
    let timeout = timeout();
    let arrival = Arrival {
        seq: group
            .call(rank, desc, timeout)
            .map_err(|(code, text)| finding(code, text))?,
        rank,
        desc,
        part,
    };
    let runs = Arc::clone(&group);
    enqueue(&queue, &group, rank, touch, move || {
        runs.execute(arrival, timeout)
    });
    Ok(())
}

/// What a rank's part reads (its send buffer) and reads or writes (its receive buffer)
/// of its own memory, for the racecheck.
pub(super) fn touches(
    api: &'static str,
    part: &Part,
    send: Option<BufArg>,
    recv: Option<BufArg>,
    recv_writes: bool,
) -> Touch {
    let held = |buf: &Option<Buf>, arg: Option<BufArg>, write: bool| {
        let (buf, (what, _, len)) = (buf.as_ref()?, arg?);
        let lo = buf.alloc.start + buf.offset;
        Some(Held {
            alloc: Arc::clone(&buf.alloc),
            lo,
            hi: lo + len,
            write,
            what,
        })
    };
    Touch {
        api,
        held: [
            held(&part.send, send, false),
            held(&part.recv, recv, recv_writes),
        ],
    }
}

/// Enqueues `run`, rank `rank`'s part of a collective or transfer, on `queue`.
pub(super) fn enqueue(
    queue: &StreamShared,
    group: &Group,
    rank: usize,
    touch: Touch,
    run: impl FnOnce() -> Result<(), String> + Send + 'static,
) {
    group.enqueued(rank);
    QUEUED.fetch_add(1, Ordering::SeqCst);
    let run = Box::new(move || {
        let result = run();
        QUEUED.fetch_sub(1, Ordering::SeqCst);
        result
    });
    queue.submit(Task::Touching(run, touch));
}

/// The steps every reducing or gathering collective shares after its count check.
struct Checked {
    group: Arc<Group>,
    rank: usize,
    size: usize,
}

impl Checked {
    /// Launches `desc` reading `(sendBuf, bytes)` and writing `(recvBuf, bytes)`.
    fn launch_send_recv(
        self,
        desc: Desc,
        stream: aclrtStream,
        (send_buf, send): (*mut c_void, usize),
        (recv_buf, recv): (*mut c_void, usize),
    ) -> Result<(), HcclResult> {
        let (send, recv) = (("sendBuf", send_buf, send), ("recvBuf", recv_buf, recv));
        launch(self.group, self.rank, desc, stream, Some(send), Some(recv))
    }
}

fn prologue(
    comm: HcclComm,
    bufs: &[(*mut c_void, &str)],
    dtype: HcclDataType,
    stream: aclrtStream,
) -> Result<Checked, HcclResult> {
    non_null(comm, "comm")?;
    for (ptr, name) in bufs {
        non_null(*ptr, name)?;
    }
    let (group, rank) = lookup(comm)?;
    let size = check_dtype(dtype)?;
    non_null(stream, "stream")?;
    Ok(Checked { group, rank, size })
}

/// `HcclAllReduce` and `HcclReduceScatter` (by `kind`): the checks in the vendor's order
/// (the device, the count: 0 succeeds without meeting anyone, the [`prologue`], the
/// reduction and its dtype on this product), then the buffers' lengths (`count` is the
/// receive count: a reduce-scatter sends the group's size times as many), and the rank's
/// part enqueued.
///
/// # Safety
/// The C contract of `HcclAllReduce` / `HcclReduceScatter`.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn reducing(
    kind: Kind,
    send_buf: *mut c_void,
    recv_buf: *mut c_void,
    count: u64,
    data_type: HcclDataType,
    op: HcclReduceOp,
    comm: HcclComm,
    stream: aclrtStream,
) -> HcclResult {
    data_call(count, |device| {
        let bufs = [(send_buf, "sendBuf"), (recv_buf, "recvBuf")];
        let c = prologue(comm, &bufs, data_type, stream)?;
        check_op(op)?;
        check_reduce_dtype(data_type, op, device)?;
        let (send, recv) = if kind == Kind::ReduceScatter {
            let ranks = c.group.size();
            let send = byte_len(count, c.size, ranks, "sendBuf (recvCount per rank)")?;
            (send, byte_len(count, c.size, 1, "recvCount")?)
        } else {
            let len = byte_len(count, c.size, 1, "count")?;
            (len, len)
        };
        let desc = Desc::new(kind, count, data_type).reducing(op);
        c.launch_send_recv(desc, stream, (send_buf, send), (recv_buf, recv))
    })
}

pub(crate) unsafe fn broadcast(
    buf: *mut c_void,
    count: u64,
    data_type: HcclDataType,
    root: u32,
    comm: HcclComm,
    stream: aclrtStream,
) -> HcclResult {
    data_call(count, |_| {
        let c = prologue(comm, &[(buf, "buf")], data_type, stream)?;
        if root as usize >= c.group.size() {
            return Err(fail(
                HCCL_E_PARA,
                format!(
                    "root {root} is not a rank of the communicator ({} ranks)",
                    c.group.size()
                ),
            ));
        }
        let len = byte_len(count, c.size, 1, "count")?;
        let desc = Desc {
            root: Some(root),
            ..Desc::new(Kind::Broadcast, count, data_type)
        };
        launch(c.group, c.rank, desc, stream, None, Some(("buf", buf, len)))
    })
}

pub(crate) unsafe fn all_gather(
    send_buf: *mut c_void,
    recv_buf: *mut c_void,
    send_count: u64,
    data_type: HcclDataType,
    comm: HcclComm,
    stream: aclrtStream,
) -> HcclResult {
    data_call(send_count, |_| {
        let c = prologue(
            comm,
            &[(send_buf, "sendBuf"), (recv_buf, "recvBuf")],
            data_type,
            stream,
        )?;
        let send = byte_len(send_count, c.size, 1, "sendCount")?;
        let recv = byte_len(
            send_count,
            c.size,
            c.group.size(),
            "recvBuf (sendCount per rank)",
        )?;
        let desc = Desc::new(Kind::AllGather, send_count, data_type);
        c.launch_send_recv(desc, stream, (send_buf, send), (recv_buf, recv))
    })
}

pub(crate) unsafe fn barrier(comm: HcclComm, stream: aclrtStream) -> HcclResult {
    status(|| {
        current_device()?;
        non_null(comm, "comm")?;
        non_null(stream, "stream")?;
        let (group, rank) = lookup(comm)?;
        let desc = Desc::new(Kind::Barrier, 0, HCCL_DATA_TYPE_FP32);
        launch(group, rank, desc, stream, None, None)
    })
}
