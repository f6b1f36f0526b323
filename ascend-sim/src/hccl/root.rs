//! Communicators built from a root info: rank 0 asks for one (`HcclGetRootInfo`), hands
//! its bytes to the other ranks, and every rank joins with `HcclCommInitRootInfo`, which
//! returns once all `nRanks` have joined.
//!
//! A root info names a meeting in the process that made it (a magic string, the process
//! id and a number) and holds what a rank of another process needs to join through it: the
//! random token of its socket's name and the secret it presents there ([`super::auth`]).
//! Ranks of that process meet there directly; ranks of other processes on the machine
//! connect to it and join through it ([`super::remote`], [`super::hub`]). A socket name
//! that cannot be bound fails `HcclGetRootInfo` with `HCCL_E_UNAVAIL`.
//! Bytes never made by `HcclGetRootInfo`, and a root info whose communicator was already
//! formed, are refused with `HCCL_E_PARA` at once. Ranks that disagree on `nRanks`, a rank
//! joining twice and two ranks on one device fail every joining rank with `HCCL_E_PARA`;
//! ranks missing when the timeout passes fail the others with `HCCL_E_TIMEOUT`, naming
//! them. Only the process that made the root info serves it, while one of its ranks
//! waits to join.

use super::auth::{self, SECRET_BYTES, Secret};
use super::group::Group;
use super::hub::Listener;
use super::{
    JOINED, Registry, current_device, encode, fail, finding, hub, non_null, rank_list, registry,
    remote, status, timeout, wire,
};
use ascend_sys::hccl::*;
use std::cell::Cell;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

const MAGIC: &[u8; 16] = b"ascend-sim-hccl\0";
/// Where the fields of a root info's bytes start: the process id, the meeting's number,
/// the socket name's token and the secret.
const PID_AT: usize = 16;
const ID_AT: usize = 24;
const TOKEN_AT: usize = 32;
const SECRET_AT: usize = 40;

/// How many refused connections a timeout's text describes.
const LISTED_REFUSALS: usize = 4;

thread_local! {
    /// The token the next `HcclGetRootInfo` of this thread uses instead of a random one.
    static NEXT_TOKEN: Cell<Option<u64>> = const { Cell::new(None) };
}

/// Makes the next `HcclGetRootInfo` of the calling thread name its socket with `token`,
/// so that a test can take that name first.
pub fn set_next_token(token: u64) {
    NEXT_TOKEN.with(|t| t.set(Some(token)));
}

/// What a root info names: its process, its meeting there, its socket's token, its secret.
#[derive(Clone, Copy)]
pub(super) struct Named {
    pub pid: u32,
    pub id: u64,
    pub token: u64,
    pub secret: Secret,
}

/// A root info's meeting.
pub(super) enum Root {
    /// Made by `HcclGetRootInfo`; the device of each rank that joined so far (by rank:
    /// a group's size is the callers' claim, so nothing is sized by it before they come).
    Open {
        nranks: Option<u32>,
        /// Each joined rank's device and process.
        joined: BTreeMap<u32, (usize, u32)>,
        /// Where ranks of other processes connect.
        listener: Option<Arc<Listener>>,
        /// Connections refused so far (the first few reasons, and how many).
        refused: (Vec<String>, u64),
    },
    /// Every rank joined: each local rank's communicator, until its caller takes it.
    Formed {
        handles: Vec<Option<u64>>,
        listener: Option<Arc<Listener>>,
    },
    /// The meeting failed; every rank joining (now or later) gets this.
    Failed(HcclResult, String),
}

pub(crate) unsafe fn get_root_info(root_info: *mut HcclRootInfo) -> HcclResult {
    status(|| {
        current_device()?;
        non_null(root_info, "rootInfo")?;
        let pid = std::process::id();
        let random = |e: std::io::Error| {
            fail(
                HCCL_E_SYSCALL,
                format!("cannot draw the root info's secret from /dev/urandom: {e}"),
            )
        };
        let secret: Secret = auth::random().map_err(random)?;
        let token = match NEXT_TOKEN.with(Cell::take) {
            Some(t) => t,
            None => u64::from_le_bytes(auth::random().map_err(random)?),
        };
        let socket = wire::listen(pid, token)
            .and_then(|l| l.set_nonblocking(true).map(|()| l))
            .map_err(|e| {
                fail(
                    HCCL_E_UNAVAIL,
                    format!("ranks of other processes could not join: {e}"),
                )
            })?;
        let id = {
            let mut reg = registry();
            let id = reg.fresh_id();
            reg.roots.insert(
                id,
                Root::Open {
                    nranks: None,
                    joined: BTreeMap::new(),
                    listener: Some(Arc::new(Listener { socket, secret })),
                    refused: (Vec::new(), 0),
                },
            );
            id
        };
        let mut bytes = [0u8; HCCL_ROOT_INFO_BYTES as usize];
        bytes[..16].copy_from_slice(MAGIC);
        bytes[PID_AT..PID_AT + 4].copy_from_slice(&pid.to_le_bytes());
        bytes[ID_AT..ID_AT + 8].copy_from_slice(&id.to_le_bytes());
        bytes[TOKEN_AT..TOKEN_AT + 8].copy_from_slice(&token.to_le_bytes());
        bytes[SECRET_AT..SECRET_AT + SECRET_BYTES].copy_from_slice(&secret);
        // SAFETY: non-null and, by the C contract, writable for an HcclRootInfo (plain bytes
        // of the same size).
        unsafe {
            root_info
                .cast::<[u8; HCCL_ROOT_INFO_BYTES as usize]>()
                .write(bytes)
        };
        Ok(())
    })
}

/// What a root info's bytes name.
fn parse(bytes: &[u8]) -> Result<Named, String> {
    let field = |at: usize, n: usize| bytes.get(at..at + n).unwrap_or_default();
    if field(0, 16) != MAGIC {
        return Err("rootInfo was not produced by HcclGetRootInfo of this simulator".into());
    }
    Ok(Named {
        pid: u32::from_le_bytes(field(PID_AT, 4).try_into().unwrap_or_default()),
        id: u64::from_le_bytes(field(ID_AT, 8).try_into().unwrap_or_default()),
        token: u64::from_le_bytes(field(TOKEN_AT, 8).try_into().unwrap_or_default()),
        secret: field(SECRET_AT, SECRET_BYTES)
            .try_into()
            .unwrap_or([0; SECRET_BYTES]),
    })
}

/// Records that a connection to meeting `root` was refused, and why, for the text of its
/// timeout.
pub(super) fn refused(root: u64, why: String) {
    if let Some(Root::Open { refused, .. }) = registry().roots.get_mut(&root) {
        if refused.0.len() < LISTED_REFUSALS {
            refused.0.push(why);
        }
        refused.1 += 1;
    }
}

/// [`join`] for a rank of process `pid`, from the thread serving its connection.
pub(super) fn join_from(root: u64, n_ranks: u32, rank: u32, device: usize, pid: u32) {
    join(&mut registry(), root, n_ranks, rank, device, pid);
}

/// Adds `rank` (on `device`, in process `pid`) to the meeting `root`; forms the group
/// when it is complete.
fn join(reg: &mut Registry, root: u64, n_ranks: u32, rank: u32, device: usize, pid: u32) {
    let Some(Root::Open {
        nranks,
        joined,
        listener,
        ..
    }) = reg.roots.get_mut(&root)
    else {
        return;
    };
    let expected = *nranks.get_or_insert(n_ranks);
    let failure = if expected != n_ranks {
        Some(format!(
            "rank {rank} joined with nRanks {n_ranks}, the ranks before it with {expected}"
        ))
    } else if joined.contains_key(&rank) {
        Some(format!("rank {rank} joined twice"))
    } else if rank >= n_ranks {
        Some(format!("rank {rank} joined a group of {n_ranks}"))
    } else if let Some((other, _)) = joined.iter().find(|(_, d)| d.0 == device) {
        Some(format!(
            "ranks {other} and {rank} are both on device {device}: every device may hold one rank"
        ))
    } else {
        joined.insert(rank, (device, pid));
        None
    };
    if let Some(text) = failure {
        reg.roots.insert(
            root,
            Root::Failed(HCCL_E_PARA, format!("the ranks disagree: {text}")),
        );
        JOINED.notify_all();
        return;
    }
    if joined.len() as u64 == u64::from(expected) {
        let here = std::process::id();
        let devices: Vec<usize> = joined.values().map(|j| j.0).collect();
        let local: Vec<bool> = joined.values().map(|j| j.1 == here).collect();
        let listener = listener.take();
        let group = Group::new(reg.fresh_id(), devices);
        let (group, handles) = reg.form_ranks(group, &local);
        if local.contains(&false) {
            reg.hubs.insert(root, group);
        }
        reg.roots.insert(root, Root::Formed { handles, listener });
        JOINED.notify_all();
    }
}

/// The ranks of a group of `n` that have not joined, for a message.
fn missing(joined: &BTreeMap<u32, (usize, u32)>, n: u32) -> String {
    let absent = (0..n).filter(|r| !joined.contains_key(r)).map(u64::from);
    rank_list(absent, u64::from(n) - joined.len() as u64)
}

pub(crate) unsafe fn comm_init_root_info(
    n_ranks: u32,
    root_info: *const HcclRootInfo,
    rank: u32,
    comm: *mut HcclComm,
) -> HcclResult {
    status(|| {
        non_null(root_info, "rootInfo")?;
        let device = current_device()?;
        if n_ranks == 0 {
            return Err(fail(HCCL_E_PARA, "nRanks is 0".into()));
        }
        if rank >= n_ranks {
            return Err(fail(
                HCCL_E_PARA,
                format!("rank {rank} should be less than nRanks {n_ranks}"),
            ));
        }
        non_null(comm, "comm")?;
        // SAFETY: non-null and, by the C contract, readable for an HcclRootInfo.
        let bytes = unsafe { &*root_info.cast::<[u8; HCCL_ROOT_INFO_BYTES as usize]>() };
        let named = parse(bytes).map_err(|m| finding(HCCL_E_PARA, m))?;
        let (pid, root) = (named.pid, named.id);
        if pid != std::process::id() {
            let group = remote::join(&named, n_ranks, rank, device, timeout())
                .map_err(|(code, text)| finding(code, text))?;
            let local: Vec<bool> = (0..group.size()).map(|r| r == rank as usize).collect();
            let (_, handles) = registry().form_ranks(group, &local);
            let Some(id) = handles.get(rank as usize).copied().flatten() else {
                return Err(fail(
                    HCCL_E_INTERNAL,
                    format!("rootInfo #{root}: the group formed without rank {rank}"),
                ));
            };
            // SAFETY: non-null and, by the C contract, writable for an HcclComm.
            unsafe { comm.write(encode(id)) };
            return Ok(());
        }
        let deadline = Instant::now() + timeout();
        let mut reg = registry();
        match reg.roots.get(&root) {
            None => {
                return Err(finding(
                    HCCL_E_PARA,
                    format!(
                        "rootInfo #{root} is unknown, or its communicator was already formed: call HcclGetRootInfo for each new communicator"
                    ),
                ));
            }
            Some(Root::Open { .. }) => join(&mut reg, root, n_ranks, rank, device, pid),
            Some(_) => {}
        }
        loop {
            match reg.roots.get_mut(&root) {
                Some(Root::Formed { handles, listener }) => {
                    // Ranks of other processes connected before their join completed the
                    // group; their other connections wait here.
                    if let Some(l) = listener {
                        // Refusals after the group formed no longer explain anything.
                        let _ = hub::accept(l, root);
                    }
                    let Some(id) = handles.get_mut(rank as usize).and_then(Option::take) else {
                        return Err(finding(
                            HCCL_E_PARA,
                            format!("rootInfo #{root}: rank {rank} already took its communicator"),
                        ));
                    };
                    if handles.iter().all(Option::is_none) {
                        reg.roots.remove(&root);
                    }
                    // SAFETY: non-null and, by the C contract, writable for an HcclComm.
                    unsafe { comm.write(encode(id)) };
                    return Ok(());
                }
                Some(Root::Failed(code, text)) => {
                    let (code, text) = (*code, text.clone());
                    return Err(finding(code, format!("rootInfo #{root}: {text}")));
                }
                Some(Root::Open {
                    joined,
                    nranks,
                    listener,
                    refused,
                }) => {
                    if let Some(l) = listener.clone() {
                        for why in hub::accept(&l, root) {
                            if refused.0.len() < LISTED_REFUSALS {
                                refused.0.push(why);
                            }
                            refused.1 += 1;
                        }
                    }
                    let now = Instant::now();
                    if now >= deadline {
                        let mut text = format!(
                            "rank(s) {} did not join within {} ms",
                            missing(joined, nranks.unwrap_or(n_ranks)),
                            timeout().as_millis()
                        );
                        if refused.1 > 0 {
                            text.push_str(&format!(
                                "; {} connection(s) refused: {}",
                                refused.1,
                                refused.0.join("; ")
                            ));
                        }
                        reg.roots.insert(root, Root::Failed(HCCL_E_TIMEOUT, text));
                        JOINED.notify_all();
                        continue;
                    }
                    // Short waits while ranks of other processes may be connecting.
                    let wait = if listener.is_some() {
                        (deadline - now).min(Duration::from_millis(2))
                    } else {
                        deadline - now
                    };
                    reg = JOINED
                        .wait_timeout(reg, wait)
                        .unwrap_or_else(|e| e.into_inner())
                        .0;
                }
                None => {
                    return Err(finding(
                        HCCL_E_PARA,
                        format!("rootInfo #{root} vanished while rank {rank} waited"),
                    ));
                }
            }
        }
    })
}
