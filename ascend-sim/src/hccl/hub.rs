//! The hub: the process that made a root info serves the ranks of other processes.
//!
//! `HcclGetRootInfo` binds a socket named after the process and the root info (see
//! [`super::wire`]). While a rank of this process waits in `HcclCommInitRootInfo`, it
//! accepts the connections waiting there; each is served by a thread of its own, which
//! joins its rank to the meeting and afterwards makes the rank's calls and executes its
//! parts on the group, as the rank's own threads would in one process. A connection that
//! closes without a goodbye is a process that died: its rank departs and the meetings it
//! has not reached fail at once. When the last communicator of this process in the group
//! is destroyed, it waits (up to the timeout) for the other processes' ranks to destroy
//! theirs; then the connections left are shut down and their threads end.

use super::group::{Arrival, Failure, Group};
use super::movement::{Part, part_bytes, staged};
use super::p2p::{Key, Role, Side};
use super::root::{self, Root};
use super::wire::{In, Out, tag};
use super::{JOINED, registry, timeout};
use ascend_sys::hccl::*;
use std::io;
use std::os::unix::net::{UnixListener, UnixStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Threads serving connections of other processes, process-wide.
static SERVING: AtomicU64 = AtomicU64::new(0);

/// The threads now serving ranks of other processes (0 once every communicator they
/// served was destroyed, or its process went away).
pub fn serving_threads() -> u64 {
    SERVING.load(Ordering::SeqCst)
}

/// Accepts every connection waiting on `listener` and serves each on its own thread.
pub(super) fn accept(listener: &UnixListener, root: u64) {
    while let Ok((conn, _)) = listener.accept() {
        if conn.set_nonblocking(false).is_err() {
            continue;
        }
        SERVING.fetch_add(1, Ordering::SeqCst);
        let spawned = std::thread::Builder::new()
            .name("ascend-sim-hccl-hub".into())
            .spawn(move || {
                serve(conn, root);
                SERVING.fetch_sub(1, Ordering::SeqCst);
            });
        if spawned.is_err() {
            SERVING.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

fn reply_failure(conn: &mut UnixStream, (code, text): &Failure) {
    let _ = Out::new(tag::FAILED).u32(*code).text(text).send(conn);
}

/// Waits until root info `root` has formed a group with ranks of other processes.
fn group_of(root: u64, limit: Duration) -> Result<Arc<Group>, Failure> {
    let deadline = Instant::now() + limit;
    let mut reg = registry();
    loop {
        if let Some(g) = reg.hubs.get(&root) {
            return Ok(Arc::clone(g));
        }
        if let Some(Root::Failed(code, text)) = reg.roots.get(&root) {
            return Err((*code, format!("rootInfo #{root}: {text}")));
        }
        let now = Instant::now();
        if now >= deadline {
            return Err((
                HCCL_E_TIMEOUT,
                format!(
                    "rootInfo #{root}: the group did not form within {} ms",
                    limit.as_millis()
                ),
            ));
        }
        reg = JOINED
            .wait_timeout(reg, deadline - now)
            .unwrap_or_else(|e| e.into_inner())
            .0;
    }
}

fn serve(mut conn: UnixStream, root: u64) {
    let Ok(mut first) = In::recv(&mut conn) else {
        return;
    };
    let limit = timeout() * 2 + Duration::from_secs(1);
    let who = match first.tag {
        tag::JOIN => (|| -> io::Result<_> {
            let (n, rank, device, pid) = (first.u32()?, first.u32()?, first.u32()?, first.u32()?);
            Ok((Some((n, device)), rank, pid))
        })(),
        tag::ATTACH => (|| -> io::Result<_> { Ok((None, first.u32()?, first.u32()?)) })(),
        _ => return,
    };
    let Ok((join, rank, pid)) = who else {
        return;
    };
    if let Some((n, device)) = join {
        root::join_from(root, n, rank, device as usize, pid);
    }
    let group = match group_of(root, limit) {
        Ok(g) => g,
        Err(f) => {
            if join.is_some() {
                reply_failure(&mut conn, &f);
            }
            return;
        }
    };
    if join.is_some() {
        let mut formed = Out::new(tag::FORMED).u64(group.id).u32(group.size() as u32);
        for &d in &group.devices {
            formed = formed.u32(d as u32);
        }
        if formed.send(&mut conn).is_err() {
            return;
        }
    }
    if let Ok(clone) = conn.try_clone() {
        group.served(clone);
    }
    let rank = rank as usize;
    loop {
        let m = match In::recv(&mut conn) {
            Ok(m) if m.tag == tag::BYE => {
                group.destroyed(rank);
                return;
            }
            Ok(m) => m,
            Err(e) => {
                group.depart(
                    rank,
                    format!(
                        "process {pid} of rank {rank} closed its connection without HcclCommDestroy ({e}): it exited or was killed"
                    ),
                );
                return;
            }
        };
        let answer = match m.tag {
            tag::CALL => call(&group, rank, m),
            tag::EXECUTE => execute(&group, rank, m),
            tag::TRANSFER => transfer(&group, m),
            _ => return,
        };
        let sent = match answer {
            Ok(out) => out.send(&mut conn),
            Err(f) => Out::new(tag::FAILED).u32(f.0).text(&f.1).send(&mut conn),
        };
        if sent.is_err() {
            return;
        }
    }
}

fn malformed(e: io::Error) -> Failure {
    (HCCL_E_INTERNAL, format!("malformed request: {e}"))
}

fn call(group: &Group, rank: usize, mut m: In) -> Result<Out, Failure> {
    let _ = m.u32().map_err(malformed)?;
    let limit = Duration::from_millis(m.u64().map_err(malformed)?);
    let desc = m.desc().map_err(malformed)?;
    let seq = group.call(rank, desc, limit)?;
    Ok(Out::new(tag::CALLED).u64(seq))
}

fn execute(group: &Group, rank: usize, mut m: In) -> Result<Out, Failure> {
    let _ = m.u32().map_err(malformed)?;
    let seq = m.u64().map_err(malformed)?;
    let limit = Duration::from_millis(m.u64().map_err(malformed)?);
    let desc = m.desc().map_err(malformed)?;
    let send = m.bytes().map_err(malformed)?;
    let recv_len = usize::try_from(m.u64().map_err(malformed)?).unwrap_or(usize::MAX);
    let mut recv = m.bytes().map_err(malformed)?;
    let (send_len, want_recv) = part_bytes(&desc, group.size());
    if send.len() != send_len || recv_len != want_recv {
        return Err((
            HCCL_E_INTERNAL,
            format!(
                "rank {rank}'s part of {} #{seq} has the wrong size",
                desc.kind.api()
            ),
        ));
    }
    recv.resize(recv_len, 0);
    let device = group.devices[rank];
    let arrival = Arrival {
        seq,
        rank,
        desc,
        part: Part {
            send: (send_len > 0).then(|| staged(device, send)),
            recv: (recv_len > 0).then(|| staged(device, recv)),
        },
    };
    let out = arrival.part.recv.as_ref().map(|b| Arc::clone(&b.alloc));
    group.meet(arrival, limit)?;
    let bytes = out.map(|a| std::mem::take(&mut *crate::state::lock(&a.data)));
    Ok(Out::new(tag::DONE).bytes(&bytes.unwrap_or_default()))
}

fn transfer(group: &Group, mut m: In) -> Result<Out, Failure> {
    let key = Key {
        src: m.u32().map_err(malformed)? as usize,
        dst: m.u32().map_err(malformed)? as usize,
        seq: m.u64().map_err(malformed)?,
    };
    let role = if m.u32().map_err(malformed)? == 1 {
        Role::Send
    } else {
        Role::Recv
    };
    let count = m.u64().map_err(malformed)?;
    let dtype = m.u32().map_err(malformed)?;
    let limit = Duration::from_millis(m.u64().map_err(malformed)?);
    let bytes = usize::try_from(m.u64().map_err(malformed)?).unwrap_or(usize::MAX);
    let mut data = m.bytes().map_err(malformed)?;
    if key.src >= group.size() || key.dst >= group.size() {
        return Err((HCCL_E_INTERNAL, "transfer between unknown ranks".into()));
    }
    data.resize(bytes, 0);
    let rank = key.rank_of(role);
    let buf = staged(group.devices[rank], data);
    let out = Arc::clone(&buf.alloc);
    let side = Side {
        key,
        role,
        count,
        dtype,
        bytes,
        buf,
    };
    group.pairs.execute(group.id, side, limit)?;
    let data = if role == Role::Recv {
        std::mem::take(&mut *crate::state::lock(&out.data))
    } else {
        Vec::new()
    };
    Ok(Out::new(tag::DONE).bytes(&data))
}
