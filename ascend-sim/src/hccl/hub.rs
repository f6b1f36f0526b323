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
//!
//! A connection is served only if its peer runs as this process's user (`SO_PEERCRED`)
//! and its first message, read with a deadline and a small size limit, carries the root
//! info's secret ([`super::auth`]); others are dropped, and the reasons appear in the
//! text of the meeting's timeout. Every later frame is bounded before it is allocated,
//! and a rank's part is bounded by a device's memory before it is staged.

use super::auth::{self, Secret};
use super::group::{Arrival, Failure, Group};
use super::movement::{Part, part_bytes, staged};
use super::p2p::{Key, Role, Side};
use super::root::{self, Root};
use super::wire::{FIRST_FRAME, In, MAX_MESSAGE, Out, tag};
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

/// A root info's socket and the secret its ranks present.
pub(super) struct Listener {
    pub socket: UnixListener,
    pub secret: Secret,
}

/// Accepts every connection waiting on `listener` and serves each of this process's user
/// on its own thread; returns why the others were refused.
pub(super) fn accept(listener: &Listener, root: u64) -> Vec<String> {
    let mut refused = Vec::new();
    while let Ok((conn, _)) = listener.socket.accept() {
        let own = auth::own_uid();
        match auth::peer(&conn) {
            Ok((_, uid)) if uid == own => {}
            Ok((pid, uid)) => {
                refused.push(format!(
                    "process {pid} runs as uid {uid}, this job as uid {own}"
                ));
                continue;
            }
            Err(e) => {
                refused.push(format!("cannot tell who connected: {e}"));
                continue;
            }
        }
        if conn.set_nonblocking(false).is_err() {
            continue;
        }
        let secret = listener.secret;
        SERVING.fetch_add(1, Ordering::SeqCst);
        let spawned = std::thread::Builder::new()
            .name("ascend-sim-hccl-hub".into())
            .spawn(move || {
                serve(conn, root, &secret);
                SERVING.fetch_sub(1, Ordering::SeqCst);
            });
        if spawned.is_err() {
            SERVING.fetch_sub(1, Ordering::SeqCst);
        }
    }
    refused
}

/// Reads a connection's first message: from a peer that presents `secret` within the
/// timeout, in a small frame. `None` (the refusal recorded) otherwise.
fn first_message(conn: &mut UnixStream, root: u64, secret: &Secret) -> Option<In> {
    let pid = auth::peer(conn).map_or(0, |p| p.0);
    let mut first = (|| -> io::Result<In> {
        conn.set_read_timeout(Some(timeout()))?;
        let first = In::recv(conn, FIRST_FRAME)?;
        conn.set_read_timeout(None)?;
        Ok(first)
    })()
    .map_err(|e| root::refused(root, format!("process {pid} sent no valid join: {e}")))
    .ok()?;
    let presented = first.raw::<{ auth::SECRET_BYTES }>().unwrap_or_default();
    if !auth::same(&presented, secret) {
        root::refused(
            root,
            format!("process {pid} did not present the root info's secret"),
        );
        return None;
    }
    Some(first)
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

fn serve(mut conn: UnixStream, root: u64, secret: &Secret) {
    let Some(mut first) = first_message(&mut conn, root, secret) else {
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
    if rank as usize >= group.size() {
        return;
    }
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
        let m = match In::recv(&mut conn, MAX_MESSAGE) {
            Ok(m) if m.tag == tag::BYE => {
                group.destroyed(rank);
                return;
            }
            Ok(m) => m,
            Err(e) if e.kind() == io::ErrorKind::InvalidData => {
                group.depart(
                    rank,
                    format!("process {pid} of rank {rank} sent a malformed message: {e}"),
                );
                return;
            }
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

/// `data` grown with zeros to `len` bytes, a rank's buffer as the hub holds it: refused
/// when larger than any device's memory (no device buffer can be), or when the host
/// cannot allocate it, instead of aborting.
fn staging(data: Vec<u8>, len: usize, what: &str) -> Result<Vec<u8>, Failure> {
    let largest = {
        let st = crate::state::state();
        st.devices
            .iter()
            .map(|d| d.arena.capacity)
            .max()
            .unwrap_or(0)
    };
    stage(data, len, largest, what)
}

/// [`staging`] with the largest device's memory given.
fn stage(mut data: Vec<u8>, len: usize, largest: usize, what: &str) -> Result<Vec<u8>, Failure> {
    if len > largest {
        return Err((
            HCCL_E_PARA,
            format!("{what} claims {len} bytes, more than a device's memory ({largest} bytes)"),
        ));
    }
    let more = len.saturating_sub(data.len());
    data.try_reserve_exact(more).map_err(|e| {
        (
            HCCL_E_MEMORY,
            format!("{what}: cannot hold {len} bytes on the host: {e}"),
        )
    })?;
    data.resize(len, 0);
    Ok(data)
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
    let recv = m.bytes().map_err(malformed)?;
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
    let recv = staging(
        recv,
        recv_len,
        &format!("rank {rank}'s part of {} #{seq}", desc.kind.api()),
    )?;
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
    let data = m.bytes().map_err(malformed)?;
    if key.src >= group.size() || key.dst >= group.size() {
        return Err((HCCL_E_INTERNAL, "transfer between unknown ranks".into()));
    }
    let rank = key.rank_of(role);
    let data = staging(
        data,
        bytes,
        &format!("rank {rank}'s {} #{}", role.api(), key.seq),
    )?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_part_larger_than_a_device_is_refused_before_it_is_allocated() {
        let (code, text) = stage(Vec::new(), 1 << 40, 1 << 30, "rank 1's part").unwrap_err();
        assert_eq!(code, HCCL_E_PARA);
        assert_eq!(
            text,
            "rank 1's part claims 1099511627776 bytes, more than a device's memory (1073741824 bytes)"
        );
        assert_eq!(stage(vec![7], 3, 1 << 30, "x").unwrap(), vec![7, 0, 0]);
    }
}
