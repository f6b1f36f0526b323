//! A rank in another process than the one that made the root info: it joins through the
//! hub's socket and then sends its calls and its parts of each collective there (see
//! [`super::hub`]). It opens [`CONNECTIONS`] connections at once, so that the host call
//! of one collective and the stream tasks of earlier ones (on up to three streams at a
//! time) do not wait for each other; more streams wait for a free connection.

use super::auth;
use super::group::{Arrival, Failure, Group};
use super::movement::{Desc, Kind, part_bytes, with_bytes, write};
use super::p2p::{Role, Side};
use super::root::Named;
use super::wire::{self, In, MAX_MESSAGE, Out, tag};
use crate::state::lock;
use ascend_sys::hccl::*;
use std::io;
use std::os::unix::net::UnixStream;
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// Connections per rank.
pub(crate) const CONNECTIONS: usize = 4;

/// How long a rank waits for the hub's answer: the hub applies the timeout itself and
/// answers; this only bounds the wait when the hub hangs.
fn answer_within(timeout: Duration) -> Duration {
    timeout * 2 + Duration::from_secs(2)
}

fn ms(timeout: Duration) -> u64 {
    u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX)
}

struct Pool {
    idle: Vec<UnixStream>,
    /// Connections still open (idle or in use).
    open: usize,
}

/// The connections of one rank to its hub.
pub(crate) struct Link {
    hub_pid: u32,
    root: u64,
    group: u64,
    pool: Mutex<Pool>,
    freed: Condvar,
}

impl Link {
    fn lost(&self, e: &io::Error, timeout: Duration) -> Failure {
        if matches!(
            e.kind(),
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
        ) {
            (
                HCCL_E_TIMEOUT,
                format!(
                    "process {} (which made rootInfo #{} and serves communicator group {}) did not answer within {} ms",
                    self.hub_pid,
                    self.root,
                    self.group,
                    answer_within(timeout).as_millis()
                ),
            )
        } else {
            (
                HCCL_E_REMOTE,
                format!(
                    "the connection to process {} (which made rootInfo #{} and serves communicator group {}) broke: {e}; it exited or was killed",
                    self.hub_pid, self.root, self.group
                ),
            )
        }
    }

    /// Sends `msg` on an idle connection and returns the answer tagged `want`.
    fn request(&self, msg: Out, want: u8, timeout: Duration) -> Result<In, Failure> {
        let mut conn = {
            let mut pool = lock(&self.pool);
            loop {
                if let Some(c) = pool.idle.pop() {
                    break c;
                }
                if pool.open == 0 {
                    return Err((
                        HCCL_E_REMOTE,
                        format!(
                            "every connection to process {} (communicator group {}) is closed",
                            self.hub_pid, self.group
                        ),
                    ));
                }
                pool = self.freed.wait(pool).unwrap_or_else(|e| e.into_inner());
            }
        };
        let answer = msg
            .send(&mut conn)
            .and_then(|()| In::recv(&mut conn, MAX_MESSAGE));
        let mut pool = lock(&self.pool);
        let answer = match answer {
            Ok(m) => {
                pool.idle.push(conn);
                m
            }
            Err(e) => {
                pool.open -= 1;
                self.freed.notify_all();
                return Err(self.lost(&e, timeout));
            }
        };
        drop(pool);
        self.freed.notify_one();
        let mut m = answer;
        if m.tag == want {
            Ok(m)
        } else if m.tag == tag::FAILED {
            Err(m.failure().unwrap_or_else(|e| self.lost(&e, timeout)))
        } else {
            Err((
                HCCL_E_INTERNAL,
                format!("unexpected answer {} from process {}", m.tag, self.hub_pid),
            ))
        }
    }

    /// [`Group::call`] through the hub.
    pub(crate) fn call(&self, rank: usize, desc: &Desc, timeout: Duration) -> Result<u64, Failure> {
        let msg = Out::new(tag::CALL)
            .u32(rank as u32)
            .u64(ms(timeout))
            .desc(desc);
        let mut m = self.request(msg, tag::CALLED, timeout)?;
        m.u64().map_err(|e| self.lost(&e, timeout))
    }

    /// [`Group::execute`] through the hub: this rank's input goes there, its output comes
    /// back into its receive buffer.
    pub(crate) fn execute(
        &self,
        arrival: &Arrival,
        n: usize,
        timeout: Duration,
    ) -> Result<(), Failure> {
        let (seq, rank, desc, part) = (arrival.seq, arrival.rank, &arrival.desc, &arrival.part);
        let memory = |m: String| (HCCL_E_MEMORY, format!("{} #{seq}: {m}", desc.kind.api()));
        let (send_len, recv_len) = part_bytes(desc, n);
        let send = if send_len > 0 {
            with_bytes(
                "sendBuf",
                rank,
                part.send.as_ref(),
                0,
                send_len,
                <[u8]>::to_vec,
            )
            .map_err(memory)?
        } else {
            Vec::new()
        };
        let broadcast = desc.kind == Kind::Broadcast;
        let recv = if broadcast {
            with_bytes("buf", rank, part.recv.as_ref(), 0, recv_len, <[u8]>::to_vec)
                .map_err(memory)?
        } else {
            Vec::new()
        };
        let msg = Out::new(tag::EXECUTE)
            .u32(rank as u32)
            .u64(seq)
            .u64(ms(timeout))
            .desc(desc)
            .bytes(&send)
            .u64(recv_len as u64)
            .bytes(&recv);
        let mut m = self.request(msg, tag::DONE, timeout)?;
        let out = m.bytes().map_err(|e| self.lost(&e, timeout))?;
        if recv_len > 0 {
            let what = if broadcast { "buf" } else { "recvBuf" };
            write(what, rank, part.recv.as_ref(), &out).map_err(memory)?;
        }
        Ok(())
    }

    /// [`super::p2p::Pairs::execute`] through the hub.
    pub(crate) fn transfer(&self, side: Side, timeout: Duration) -> Result<(), Failure> {
        let (key, role, rank) = (side.key, side.role, side.rank());
        let memory = |m: String| (HCCL_E_MEMORY, format!("{}: {m}", role.api()));
        let data = if role == Role::Send {
            with_bytes(
                "sendBuf",
                rank,
                Some(&side.buf),
                0,
                side.bytes,
                <[u8]>::to_vec,
            )
            .map_err(memory)?
        } else {
            Vec::new()
        };
        let msg = Out::new(tag::TRANSFER)
            .u32(key.src as u32)
            .u32(key.dst as u32)
            .u64(key.seq)
            .u32(u32::from(role == Role::Send))
            .u64(side.count)
            .u32(side.dtype)
            .u64(ms(timeout))
            .u64(side.bytes as u64)
            .bytes(&data);
        let mut m = self.request(msg, tag::DONE, timeout)?;
        let out = m.bytes().map_err(|e| self.lost(&e, timeout))?;
        if role == Role::Recv {
            write("recvBuf", rank, Some(&side.buf), &out).map_err(memory)?;
        }
        Ok(())
    }

    /// The rank destroyed its communicator: says so on every connection and closes them,
    /// so that the hub does not take it for a process that died.
    pub(crate) fn close(&self, rank: usize) {
        let deadline = Instant::now() + Duration::from_secs(2);
        let mut pool = lock(&self.pool);
        // Work still using a connection gives it back soon: the streams were drained.
        while pool.idle.len() < pool.open && Instant::now() < deadline {
            pool = self
                .freed
                .wait_timeout(pool, Duration::from_millis(10))
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        for mut c in pool.idle.drain(..) {
            let _ = Out::new(tag::BYE).u32(rank as u32).send(&mut c);
        }
        pool.open = 0;
        self.freed.notify_all();
    }
}

/// Refuses a socket held by another user than this process's: its name was taken by
/// someone else (the hub's own socket is bound by a process of the job's user).
fn check_server(conn: &UnixStream, named: &Named) -> Result<(), Failure> {
    let own = auth::own_uid();
    let name = wire::name(named.pid, named.token);
    match auth::peer(conn) {
        Ok((_, uid)) if uid == own => Ok(()),
        Ok((pid, uid)) => Err((
            HCCL_E_UNAVAIL,
            format!(
                "rootInfo #{}: socket @{name} is held by process {pid} of uid {uid}, not by this job's user (uid {own}): refused, the root info's secret was not sent",
                named.id
            ),
        )),
        Err(e) => Err((
            HCCL_E_UNAVAIL,
            format!(
                "rootInfo #{}: cannot tell who holds socket @{name}: {e}",
                named.id
            ),
        )),
    }
}

/// Joins rank `rank` (on `device`) to the group of the root info `named`: connects, says
/// who it is, and waits for the hub's answer.
pub(crate) fn join(
    named: &Named,
    n_ranks: u32,
    rank: u32,
    device: usize,
    timeout: Duration,
) -> Result<Group, Failure> {
    let (hub_pid, root) = (named.pid, named.id);
    let deadline = Instant::now() + timeout;
    let mut conns = Vec::with_capacity(CONNECTIONS);
    while conns.len() < CONNECTIONS {
        match wire::connect(hub_pid, named.token) {
            Ok(c) => {
                check_server(&c, named)?;
                conns.push(c);
            }
            Err(e) if Instant::now() < deadline && conns.is_empty() => {
                // The hub may not listen yet; it exists (the root info names it).
                let _ = e;
                std::thread::sleep(Duration::from_millis(10));
            }
            Err(e) => {
                return Err((
                    HCCL_E_TIMEOUT,
                    format!(
                        "could not connect to process {hub_pid}, which made rootInfo #{root}, within {} ms: {e} (it exited, or its communicator was already formed)",
                        timeout.as_millis()
                    ),
                ));
            }
        }
    }
    let io = |e: io::Error| {
        (
            HCCL_E_REMOTE,
            format!("rootInfo #{root}: the connection to process {hub_pid} broke: {e}"),
        )
    };
    let pid = std::process::id();
    for c in &mut conns {
        c.set_read_timeout(Some(answer_within(timeout)))
            .map_err(io)?;
    }
    for c in &mut conns[1..] {
        Out::new(tag::ATTACH)
            .raw(&named.secret)
            .u32(rank)
            .u32(pid)
            .send(c)
            .map_err(io)?;
    }
    Out::new(tag::JOIN)
        .raw(&named.secret)
        .u32(n_ranks)
        .u32(rank)
        .u32(device as u32)
        .u32(pid)
        .send(&mut conns[0])
        .map_err(io)?;
    let mut m = In::recv(&mut conns[0], MAX_MESSAGE).map_err(|e| {
        if matches!(
            e.kind(),
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
        ) {
            (
                HCCL_E_TIMEOUT,
                format!("rootInfo #{root}: process {hub_pid} did not answer the join"),
            )
        } else {
            io(e)
        }
    })?;
    match m.tag {
        tag::FORMED => {
            let group = m.u64().map_err(io)?;
            let n = m.u32().map_err(io)? as usize;
            let devices = (0..n)
                .map(|_| m.u32().map(|d| d as usize))
                .collect::<io::Result<Vec<_>>>()
                .map_err(io)?;
            let link = Link {
                hub_pid,
                root,
                group,
                pool: Mutex::new(Pool {
                    open: conns.len(),
                    idle: conns,
                }),
                freed: Condvar::new(),
            };
            Ok(Group::with_link(group, devices, Some(link)))
        }
        tag::FAILED => Err(m.failure().map_err(io)?),
        other => Err((
            HCCL_E_INTERNAL,
            format!("rootInfo #{root}: unexpected answer {other} from process {hub_pid}"),
        )),
    }
}
