//! [`Communicator::from_env`]: the root-info exchange of a job whose launcher sets
//! `RANK`, `WORLD_SIZE`, `MASTER_ADDR` and `MASTER_PORT` (torch's `env://`).
//!
//! Rank 0 makes the [`RootInfo`], listens on `MASTER_ADDR:MASTER_PORT` and sends its bytes
//! to every other rank once all `WORLD_SIZE - 1` of them have said who they are; then every
//! rank joins with [`Communicator::from_root_info`]. The exchange is plain TCP on the
//! loopback interface only (the processes of one machine); the other ranks retry
//! connecting until rank 0 listens, for at most `HCCL_CONNECT_TIMEOUT` seconds (HCCL's
//! variable of the same meaning; 120 by default). Rank 0 reads every connection without
//! blocking, so one that stays silent (anything on the machine may connect to the port)
//! delays no rank; it is dropped when it has not said who it is within 5 seconds.

use super::{Communicator, ROOT_INFO_BYTES, RootInfo};
use crate::device::Device;
use crate::error::Result;
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

/// Why the root-info exchange of [`Communicator::from_env`] failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RendezvousError {
    /// A variable the exchange needs is not set.
    #[error("{0} is not set (a launcher sets RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT)")]
    Missing(&'static str),
    /// A variable has a value that cannot be used.
    #[error("{name}={value}: {why}")]
    Invalid {
        /// The variable.
        name: &'static str,
        /// Its value.
        value: String,
        /// What is wrong with it.
        why: &'static str,
    },
    /// Nothing listened at the address within the connect timeout.
    #[error("no rank 0 listened at {addr} within {waited_ms} ms: {reason}")]
    NoServer {
        /// `MASTER_ADDR:MASTER_PORT`.
        addr: String,
        /// How long the rank tried.
        waited_ms: u64,
        /// The last connection error.
        reason: String,
    },
    /// The ranks did not all come within the connect timeout (seen by rank 0).
    #[error("{missing} of {world_size} ranks did not come within {waited_ms} ms")]
    Incomplete {
        /// How many ranks never connected.
        missing: u32,
        /// `WORLD_SIZE`.
        world_size: u32,
        /// How long rank 0 waited.
        waited_ms: u64,
    },
    /// A rank's `WORLD_SIZE` differs from rank 0's.
    #[error("rank {rank} has WORLD_SIZE {theirs}, rank 0 has {ours}")]
    WorldSize {
        /// The rank that differs.
        rank: u32,
        /// Its `WORLD_SIZE`.
        theirs: u32,
        /// Rank 0's `WORLD_SIZE`.
        ours: u32,
    },
    /// Two processes claimed one rank.
    #[error("two processes claim RANK={0}")]
    DuplicateRank(u32),
    /// The exchange itself broke (a connection closed, a malformed message).
    #[error("the root-info exchange with {addr} failed: {reason}")]
    Io {
        /// `MASTER_ADDR:MASTER_PORT`.
        addr: String,
        /// What happened.
        reason: String,
    },
}

const HELLO: &[u8; 16] = b"ascendcl-rdzv-1\0";
const OK: u8 = 0;
const WORLD_SIZE: u8 = 1;
const DUPLICATE: u8 = 2;

fn var(name: &'static str) -> Result<String, RendezvousError> {
    std::env::var(name).map_err(|_| RendezvousError::Missing(name))
}

fn number(name: &'static str) -> Result<u32, RendezvousError> {
    let value = var(name)?;
    value.trim().parse().map_err(|_| RendezvousError::Invalid {
        name,
        value,
        why: "not a non-negative integer",
    })
}

/// `HCCL_CONNECT_TIMEOUT` (seconds), 120 when unset.
fn connect_timeout() -> Result<Duration, RendezvousError> {
    match std::env::var("HCCL_CONNECT_TIMEOUT") {
        Err(_) => Ok(Duration::from_secs(120)),
        Ok(value) => value
            .trim()
            .parse::<u64>()
            .ok()
            .filter(|&s| s > 0)
            .map(Duration::from_secs)
            .ok_or(RendezvousError::Invalid {
                name: "HCCL_CONNECT_TIMEOUT",
                value,
                why: "not a positive number of seconds",
            }),
    }
}

/// The job as the environment describes it.
struct Job {
    rank: u32,
    world_size: u32,
    addr: SocketAddr,
    shown: String,
    timeout: Duration,
}

fn job() -> Result<Job, RendezvousError> {
    let rank = number("RANK")?;
    let world_size = number("WORLD_SIZE")?;
    if world_size == 0 || rank >= world_size {
        return Err(RendezvousError::Invalid {
            name: "RANK",
            value: rank.to_string(),
            why: "not below WORLD_SIZE",
        });
    }
    let host = var("MASTER_ADDR")?;
    let port = number("MASTER_PORT")?;
    let port = u16::try_from(port).map_err(|_| RendezvousError::Invalid {
        name: "MASTER_PORT",
        value: port.to_string(),
        why: "not a port number",
    })?;
    let shown = format!("{host}:{port}");
    let addr = (host.as_str(), port)
        .to_socket_addrs()
        .ok()
        .and_then(|mut a| a.find(|a| a.ip().is_loopback()))
        .ok_or(RendezvousError::Invalid {
            name: "MASTER_ADDR",
            value: host,
            why: "not a loopback address: the exchange runs between the processes of one machine",
        })?;
    Ok(Job {
        rank,
        world_size,
        addr,
        shown,
        timeout: connect_timeout()?,
    })
}

fn io_error(job: &Job, e: &io::Error) -> RendezvousError {
    RendezvousError::Io {
        addr: job.shown.clone(),
        reason: e.to_string(),
    }
}

/// A refusal: its code, then the rank it is about, its `WORLD_SIZE` and rank 0's.
fn refusal_bytes(code: u8, rank: u32, theirs: u32, ours: u32) -> Vec<u8> {
    let mut msg = vec![code];
    for v in [rank, theirs, ours] {
        msg.extend_from_slice(&v.to_le_bytes());
    }
    msg
}

/// The most connections rank 0 holds before they said who they are; beyond it the oldest
/// is dropped, so that a flood of connections cannot exhaust its descriptors.
const PENDING: usize = 256;

/// How long a connection may take to say who it is: a rank says it as soon as it is
/// connected, so anything slower is not a rank of this job.
fn hello_within(job: &Job) -> Duration {
    job.timeout.min(Duration::from_secs(5))
}

/// A connection that has not yet said who it is.
struct Pending {
    conn: TcpStream,
    hello: [u8; 24],
    got: usize,
    until: Instant,
}

/// What a pending connection's read gave.
enum Hello {
    /// Not complete yet.
    Waiting,
    /// A rank and its `WORLD_SIZE`.
    Rank(u32, u32),
    /// Not a rank of this exchange (closed, silent too long, or something else): dropped.
    Dropped,
}

impl Pending {
    /// Reads what has arrived without waiting.
    fn poll(&mut self, now: Instant) -> Hello {
        loop {
            match self.conn.read(&mut self.hello[self.got..]) {
                Ok(0) => return Hello::Dropped,
                Ok(n) => {
                    self.got += n;
                    if self.got < self.hello.len() {
                        continue;
                    }
                    let b = &self.hello;
                    if &b[..16] != HELLO {
                        return Hello::Dropped;
                    }
                    let word = |i: usize| u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
                    return Hello::Rank(word(16), word(20));
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    return if now >= self.until {
                        Hello::Dropped
                    } else {
                        Hello::Waiting
                    };
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return Hello::Dropped,
            }
        }
    }
}

/// Rank 0: serves `root`'s bytes to the other ranks once all of them have come. Every
/// connection is read without blocking and has its own deadline to say who it is, so a
/// silent or slow one delays nobody; those that do not say it in time are dropped.
fn serve(job: &Job, root: &RootInfo) -> Result<(), RendezvousError> {
    let listener = TcpListener::bind(job.addr).map_err(|e| io_error(job, &e))?;
    listener
        .set_nonblocking(true)
        .map_err(|e| io_error(job, &e))?;
    let deadline = Instant::now() + job.timeout;
    let mut ranks: Vec<(u32, TcpStream)> = Vec::new();
    let mut pending: Vec<Pending> = Vec::new();
    let mut failure = None;
    while ranks.len() + 1 < job.world_size as usize && failure.is_none() {
        let now = Instant::now();
        let mut idle = true;
        match listener.accept() {
            Ok((conn, _)) => {
                idle = false;
                if conn.set_nonblocking(true).is_ok() {
                    if pending.len() >= PENDING {
                        pending.remove(0);
                    }
                    pending.push(Pending {
                        conn,
                        hello: [0; 24],
                        got: 0,
                        until: now + hello_within(job),
                    });
                }
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            Err(e) => return Err(io_error(job, &e)),
        }
        let mut i = 0;
        while i < pending.len() && failure.is_none() {
            let (rank, world) = match pending[i].poll(now) {
                Hello::Waiting => {
                    i += 1;
                    continue;
                }
                Hello::Dropped => {
                    pending.swap_remove(i);
                    continue;
                }
                Hello::Rank(rank, world) => (rank, world),
            };
            idle = false;
            let mut conn = pending.swap_remove(i).conn;
            let refusal = if world != job.world_size {
                Some((
                    WORLD_SIZE,
                    RendezvousError::WorldSize {
                        rank,
                        theirs: world,
                        ours: job.world_size,
                    },
                ))
            } else if rank == 0 || rank >= world || ranks.iter().any(|(r, _)| *r == rank) {
                Some((DUPLICATE, RendezvousError::DuplicateRank(rank)))
            } else {
                None
            };
            // Answers are a few bytes, written whole to an empty socket buffer.
            let _ = conn.set_nonblocking(false);
            match refusal {
                Some((code, e)) => {
                    let _ = conn.write_all(&refusal_bytes(code, rank, world, job.world_size));
                    failure = Some((refusal_bytes(code, rank, world, job.world_size), e));
                }
                None => ranks.push((rank, conn)),
            }
        }
        if failure.is_none() && ranks.len() + 1 < job.world_size as usize {
            if now >= deadline {
                return Err(RendezvousError::Incomplete {
                    missing: job.world_size - 1 - ranks.len() as u32,
                    world_size: job.world_size,
                    waited_ms: job.timeout.as_millis() as u64,
                });
            }
            if idle {
                std::thread::sleep(Duration::from_millis(2));
            }
        }
    }
    if let Some((msg, e)) = failure {
        // Every rank that came fails with the same reason.
        for (_, mut c) in ranks {
            let _ = c.write_all(&msg);
        }
        return Err(e);
    }
    for (_, mut c) in ranks {
        let mut msg = Vec::with_capacity(1 + ROOT_INFO_BYTES);
        msg.push(OK);
        msg.extend_from_slice(root.as_bytes());
        c.write_all(&msg).map_err(|e| io_error(job, &e))?;
    }
    Ok(())
}

/// Any other rank: connects to rank 0 (retrying until it listens) and receives the bytes.
fn fetch(job: &Job) -> Result<RootInfo, RendezvousError> {
    let deadline = Instant::now() + job.timeout;
    let mut conn = loop {
        match TcpStream::connect_timeout(&job.addr, Duration::from_millis(200)) {
            Ok(c) => break c,
            Err(e) if Instant::now() >= deadline => {
                return Err(RendezvousError::NoServer {
                    addr: job.shown.clone(),
                    waited_ms: job.timeout.as_millis() as u64,
                    reason: e.to_string(),
                });
            }
            Err(_) => std::thread::sleep(Duration::from_millis(10)),
        }
    };
    let mut hello = HELLO.to_vec();
    hello.extend_from_slice(&job.rank.to_le_bytes());
    hello.extend_from_slice(&job.world_size.to_le_bytes());
    let io = |e: io::Error| io_error(job, &e);
    conn.write_all(&hello).map_err(io)?;
    // Rank 0 answers once every rank came: as long as its own wait, and a little more.
    conn.set_read_timeout(Some(job.timeout + Duration::from_secs(1)))
        .map_err(io)?;
    let mut code = [0u8];
    conn.read_exact(&mut code).map_err(io)?;
    if code[0] == OK {
        let mut bytes = vec![0u8; ROOT_INFO_BYTES];
        conn.read_exact(&mut bytes).map_err(io)?;
        return RootInfo::from_bytes(&bytes).map_err(|e| RendezvousError::Io {
            addr: job.shown.clone(),
            reason: e.to_string(),
        });
    }
    let mut b = [0u8; 12];
    conn.read_exact(&mut b).map_err(io)?;
    let word = |i: usize| u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
    let (rank, theirs, ours) = (word(0), word(4), word(8));
    Err(match code[0] {
        WORLD_SIZE => RendezvousError::WorldSize { rank, theirs, ours },
        DUPLICATE => RendezvousError::DuplicateRank(rank),
        other => RendezvousError::Io {
            addr: job.shown.clone(),
            reason: format!("unknown answer {other} from rank 0"),
        },
    })
}

impl Communicator {
    /// This process's rank of the job that the environment describes, on `device`, as
    /// torch's `env://` does it: `RANK` and `WORLD_SIZE` say who and how many,
    /// `MASTER_ADDR:MASTER_PORT` (loopback) is where rank 0 hands out its [`RootInfo`].
    /// Then every rank joins with [`Communicator::from_root_info`]. A launcher such as
    /// `torchrun` sets these variables (and `LOCAL_RANK`, commonly the device's ordinal:
    /// process `r` of a machine uses device `r`).
    ///
    /// Without a launcher, or between machines, exchange the root info yourself: rank 0
    /// sends [`RootInfo::as_bytes`] over any transport, the others rebuild it with
    /// [`RootInfo::from_bytes`] and call [`Communicator::from_root_info`].
    ///
    /// ```no_run
    /// use ascendcl::Runtime;
    /// use ascendcl::hccl::Communicator;
    ///
    /// # fn main() -> ascendcl::Result<()> {
    /// let local: i32 = std::env::var("LOCAL_RANK").map_or(0, |v| v.parse().unwrap_or(0));
    /// let device = Runtime::auto()?.device(local)?;
    /// let comm = Communicator::from_env(&device)?;
    /// println!("rank {} of {}", comm.rank(), comm.size());
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// [`Error::Rendezvous`] for a missing or unusable variable, no rank 0 listening within
    /// `HCCL_CONNECT_TIMEOUT`, ranks missing, a different `WORLD_SIZE` or a rank claimed
    /// twice; then as [`Communicator::from_root_info`].
    ///
    /// [`Error::Rendezvous`]: crate::Error::Rendezvous
    pub fn from_env(device: &Device) -> Result<Communicator> {
        let job = job()?;
        let root = if job.rank == 0 {
            let root = RootInfo::new(device)?;
            serve(&job, &root)?;
            root
        } else {
            fetch(&job)?
        };
        Communicator::from_root_info(device, &root, job.world_size, job.rank)
    }
}
