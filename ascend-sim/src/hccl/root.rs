//! Communicators built from a root info: rank 0 asks for one (`HcclGetRootInfo`), hands
//! its bytes to the other ranks, and every rank joins with `HcclCommInitRootInfo`, which
//! returns once all `nRanks` have joined.
//!
//! The simulator has no network: a root info names a meeting point in this process (a
//! magic string, the process id and a number). Bytes from another process or never made by
//! `HcclGetRootInfo`, and a root info whose communicator was already formed, are refused
//! with `HCCL_E_PARA` at once (HCCL would wait for a connection that never comes). Ranks
//! that disagree on `nRanks`, a rank joining twice and two ranks on one device fail every
//! joining rank with `HCCL_E_PARA`; ranks missing when the timeout passes fail the others
//! with `HCCL_E_TIMEOUT`.

use super::{
    JOINED, Registry, current_device, encode, fail, finding, non_null, rank_list, registry, status,
    timeout,
};
use ascend_sys::hccl::*;
use std::collections::BTreeMap;
use std::time::Instant;

const MAGIC: &[u8; 16] = b"ascend-sim-hccl\0";

/// A root info's meeting.
pub(super) enum Root {
    /// Made by `HcclGetRootInfo`; the device of each rank that joined so far (by rank:
    /// a group's size is the callers' claim, so nothing is sized by it before they come).
    Open {
        nranks: Option<u32>,
        joined: BTreeMap<u32, usize>,
    },
    /// Every rank joined: each rank's communicator, until its caller takes it.
    Formed { handles: Vec<Option<u64>> },
    /// The meeting failed; every rank joining (now or later) gets this.
    Failed(HcclResult, String),
}

pub(crate) unsafe fn get_root_info(root_info: *mut HcclRootInfo) -> HcclResult {
    status(|| {
        current_device()?;
        non_null(root_info, "rootInfo")?;
        let id = {
            let mut reg = registry();
            let id = reg.fresh_id();
            reg.roots.insert(
                id,
                Root::Open {
                    nranks: None,
                    joined: BTreeMap::new(),
                },
            );
            id
        };
        let mut bytes = [0u8; HCCL_ROOT_INFO_BYTES as usize];
        bytes[..16].copy_from_slice(MAGIC);
        bytes[16..20].copy_from_slice(&std::process::id().to_le_bytes());
        bytes[24..32].copy_from_slice(&id.to_le_bytes());
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

/// The meeting number in a root info, if this process's `HcclGetRootInfo` made it.
fn parse(bytes: &[u8]) -> Result<u64, String> {
    if &bytes[..16] != MAGIC {
        return Err("rootInfo was not produced by HcclGetRootInfo of this simulator".into());
    }
    let pid = u32::from_le_bytes(bytes[16..20].try_into().unwrap_or_default());
    if pid != std::process::id() {
        return Err(format!(
            "rootInfo comes from process {pid}; the simulator connects the ranks of one process only"
        ));
    }
    Ok(u64::from_le_bytes(
        bytes[24..32].try_into().unwrap_or_default(),
    ))
}

/// Adds `rank` (on `device`) to the meeting `root`; forms the group when it is complete.
fn join(reg: &mut Registry, root: u64, n_ranks: u32, rank: u32, device: usize) {
    let Some(Root::Open { nranks, joined }) = reg.roots.get_mut(&root) else {
        return;
    };
    let expected = *nranks.get_or_insert(n_ranks);
    let failure = if expected != n_ranks {
        Some(format!(
            "rank {rank} joined with nRanks {n_ranks}, the ranks before it with {expected}"
        ))
    } else if joined.contains_key(&rank) {
        Some(format!("rank {rank} joined twice"))
    } else if let Some((other, _)) = joined.iter().find(|(_, d)| **d == device) {
        Some(format!(
            "ranks {other} and {rank} are both on device {device}: every device may hold one rank"
        ))
    } else {
        joined.insert(rank, device);
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
        let devices: Vec<usize> = joined.values().copied().collect();
        let handles = reg.form(devices).into_iter().map(Some).collect();
        reg.roots.insert(root, Root::Formed { handles });
        JOINED.notify_all();
    }
}

/// The ranks of a group of `n` that have not joined, for a message.
fn missing(joined: &BTreeMap<u32, usize>, n: u32) -> String {
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
        let root = parse(bytes).map_err(|m| finding(HCCL_E_PARA, m))?;
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
            Some(Root::Open { .. }) => join(&mut reg, root, n_ranks, rank, device),
            Some(_) => {}
        }
        loop {
            match reg.roots.get_mut(&root) {
                Some(Root::Formed { handles }) => {
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
                Some(Root::Open { joined, nranks }) => {
                    let now = Instant::now();
                    if now >= deadline {
                        let text = format!(
                            "rank(s) {} did not join within {} ms",
                            missing(joined, nranks.unwrap_or(n_ranks)),
                            timeout().as_millis()
                        );
                        reg.roots.insert(root, Root::Failed(HCCL_E_TIMEOUT, text));
                        JOINED.notify_all();
                        continue;
                    }
                    reg = JOINED
                        .wait_timeout(reg, deadline - now)
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
