//! Point-to-point transfers (`HcclSend`, `HcclRecv`), for pipeline parallelism.
//!
//! The calls do not meet on the host (a rank may enqueue its send before its peer has
//! enqueued the receive, as on CANN). Each call takes the next number of its direction
//! (`src → dst`): the `k`-th send from `a` to `b` is the `k`-th receive of `b` from `a`.
//! They meet on the streams: the task that comes second compares them (the same count
//! and dtype, else `HCCL_E_PARA` on both, a finding) and copies the bytes. A peer whose
//! stream does not reach its side within the timeout fails the waiting side with
//! `HCCL_E_TIMEOUT`; either way the streams' next synchronisation fails and the ranks'
//! asynchronous error is set. A stream that sends and receives to the same peer in one
//! order on both ranks waits for itself, as on CANN: post the two sides on two streams,
//! or order them by rank.

use super::collectives::{bind, byte_len, check_dtype, enqueue, touches};
use super::group::Failure;
use super::movement::{Buf, dtype_name};
use super::{data_call, fail, lookup, non_null, timeout};
use crate::state::lock;
use ascend_sys::aclrtStream;
use ascend_sys::hccl::*;
use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// Which side of a transfer a rank posted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    Send,
    Recv,
}

impl Role {
    pub(crate) fn api(self) -> &'static str {
        match self {
            Role::Send => "HcclSend",
            Role::Recv => "HcclRecv",
        }
    }

    /// The side the peer posts.
    pub(crate) fn peer(self) -> Role {
        match self {
            Role::Send => Role::Recv,
            Role::Recv => Role::Send,
        }
    }
}

/// One posted side of transfer `key`: which side, its count, dtype and buffer.
pub(crate) struct Side {
    pub key: Key,
    pub role: Role,
    pub count: u64,
    pub dtype: HcclDataType,
    pub bytes: usize,
    pub buf: Buf,
}

impl Side {
    /// The rank that posted this side.
    pub(crate) fn rank(&self) -> usize {
        self.key.rank_of(self.role)
    }
}

/// The `seq`-th transfer from `src` to `dst`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Key {
    pub src: usize,
    pub dst: usize,
    pub seq: u64,
}

impl Key {
    /// The rank that posts the `role` side.
    pub(crate) fn rank_of(self, role: Role) -> usize {
        match role {
            Role::Send => self.src,
            Role::Recv => self.dst,
        }
    }
}

#[derive(Default)]
struct Transfer {
    send: Option<Side>,
    recv: Option<Side>,
    outcome: Option<Result<(), Failure>>,
    left: u8,
}

#[derive(Default)]
struct State {
    /// The next number of each direction, for sends and for receives.
    next: HashMap<(usize, usize, bool), u64>,
    transfers: HashMap<Key, Transfer>,
}

/// The transfers of one communicator group.
#[derive(Default)]
pub(crate) struct Pairs {
    state: Mutex<State>,
    cv: Condvar,
}

impl Pairs {
    /// The number of the next `role` call from `src` to `dst` (taken by the call).
    pub(crate) fn number(&self, src: usize, dst: usize, role: Role) -> u64 {
        let mut st = lock(&self.state);
        let n = st.next.entry((src, dst, role == Role::Send)).or_insert(0);
        *n += 1;
        *n - 1
    }

    /// The stream side of one transfer: waits for the peer's side, then the later of the
    /// two moves the bytes.
    pub(crate) fn execute(&self, group: u64, side: Side, timeout: Duration) -> Result<(), Failure> {
        let (key, role) = (side.key, side.role);
        // Formatted only for a failure: a transfer that succeeds allocates nothing here.
        let name = || {
            format!(
                "transfer #{} from rank {} to rank {} of communicator group {group}",
                key.seq, key.src, key.dst
            )
        };
        let mut st = lock(&self.state);
        let t = st.transfers.entry(key).or_default();
        if t.outcome.is_none() {
            match role {
                Role::Send => t.send = Some(side),
                Role::Recv => t.recv = Some(side),
            }
            if let (Some(s), Some(r)) = (&t.send, &t.recv) {
                let mismatch = (s.count != r.count || s.dtype != r.dtype).then(|| {
                    format!(
                        "{}: HcclSend posted {} elements of {}, HcclRecv {} of {}; both sides must agree",
                        name(),
                        s.count,
                        dtype_name(s.dtype),
                        r.count,
                        dtype_name(r.dtype)
                    )
                });
                let (s, r) = (t.send.take(), t.recv.take());
                if let Some(text) = mismatch {
                    crate::state::report(format!("HcclSend/HcclRecv: {text}"));
                    t.outcome = Some(Err((HCCL_E_PARA, text)));
                } else {
                    // The peer waits for the outcome; the bytes move without the lock.
                    drop(st);
                    let moved = match (s, r) {
                        (Some(s), Some(r)) => super::movement::copy(&s.buf, &r.buf, s.bytes, key)
                            .map_err(|m| (HCCL_E_MEMORY, format!("{}: {m}", name()))),
                        _ => Ok(()),
                    };
                    st = lock(&self.state);
                    if let Some(t) = st.transfers.get_mut(&key) {
                        t.outcome = Some(moved);
                    }
                }
                self.cv.notify_all();
            }
        }
        let deadline = Instant::now() + timeout;
        loop {
            let t = st
                .transfers
                .get_mut(&key)
                .expect("a transfer stays until both sides left");
            if let Some(outcome) = t.outcome.clone() {
                t.left += 1;
                if t.left == 2 {
                    st.transfers.remove(&key);
                }
                return outcome;
            }
            let now = Instant::now();
            if now >= deadline {
                let (peer, api) = (key.rank_of(role.peer()), role.peer().api());
                let text = format!(
                    "{}: the stream of rank {peer} did not reach its {api} within {} ms",
                    name(),
                    timeout.as_millis()
                );
                // Nothing will move: the posted side is dropped, and a late peer fails at
                // once on the outcome (the transfer stays for it).
                t.send = None;
                t.recv = None;
                t.outcome = Some(Err((HCCL_E_TIMEOUT, text)));
                self.cv.notify_all();
                continue;
            }
            st = self
                .cv
                .wait_timeout(st, deadline - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }
}

/// `HcclSend` and `HcclRecv` (by `role`): the vendor's checks (device, a zero count, NULL
/// pointers, the dtype), then the simulator's (the handle, the peer, the stream and the
/// buffer), and the rank's side enqueued on its stream.
///
/// # Safety
/// The C contract of `HcclSend` / `HcclRecv`.
pub(crate) unsafe fn post(
    role: Role,
    buf: *mut c_void,
    count: u64,
    data_type: HcclDataType,
    peer: u32,
    comm: HcclComm,
    stream: aclrtStream,
) -> HcclResult {
    data_call(count, |_| {
        let (buf_name, peer_name) = match role {
            Role::Send => ("sendBuf", "destRank"),
            Role::Recv => ("recvBuf", "srcRank"),
        };
        non_null(comm, "comm")?;
        non_null(buf, buf_name)?;
        non_null(stream, "stream")?;
        let size = check_dtype(data_type)?;
        let (group, rank) = lookup(comm)?;
        let peer = peer as usize;
        if peer >= group.size() {
            return Err(fail(
                HCCL_E_PARA,
                format!(
                    "{peer_name} {peer} is not a rank of the communicator ({} ranks)",
                    group.size()
                ),
            ));
        }
        if peer == rank {
            return Err(fail(
                HCCL_E_PARA,
                format!("{peer_name} {peer} is this rank: a transfer needs another rank"),
            ));
        }
        let bytes = byte_len(count, size, 1, "count")?;
        let arg = Some((buf_name, buf, bytes));
        let (queue, part) = match role {
            Role::Send => bind(&group, rank, stream, arg, None)?,
            Role::Recv => bind(&group, rank, stream, None, arg)?,
        };
        let touch = match role {
            Role::Send => touches("HcclSend", &part, arg, None, false),
            Role::Recv => touches("HcclRecv", &part, None, arg, true),
        };
        let Some(buf) = part.send.or(part.recv) else {
            return Err(fail(HCCL_E_INTERNAL, format!("{buf_name} was not bound")));
        };
        let (src, dst) = match role {
            Role::Send => (rank, peer),
            Role::Recv => (peer, rank),
        };
        let key = Key {
            src,
            dst,
            seq: group.pairs.number(src, dst, role),
        };
        let side = Side {
            key,
            role,
            count,
            dtype: data_type,
            bytes,
            buf,
        };
        let timeout = timeout();
        let runs = Arc::clone(&group);
        enqueue(&queue, &group, rank, touch, move || {
            runs.transfer(side, timeout)
        });
        Ok(())
    })
}
