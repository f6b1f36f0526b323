//! `libhccl.so`: communicators whose ranks are simulated devices of this process, and
//! their collectives, enqueued on the ranks' streams.
//!
//! The entry points check their arguments in the vendor's order (the open HCCL sources'
//! `op_base.cc` and `param_check.cc`): the calling thread's device first (no current
//! device: `HCCL_E_RUNTIME`), a zero count next (success, nothing enqueued, no meeting),
//! then NULL pointers (`HCCL_E_PTR`), the dtype, the stream and the reduction
//! (`HCCL_E_NOT_SUPPORT` for a dtype or reduction HCCL refuses or the simulator does not
//! model), the root (`HCCL_E_PARA`). As a sanitizer the simulator also checks what HCCL
//! would only trip over later: the communicator handle (stale or foreign: `HCCL_E_PARA`),
//! the stream (live, of the communicator's device, under the current context) and every
//! buffer (inside one live allocation of the communicator's device, `count` elements
//! long: `HCCL_E_PARA`, reported as a finding). Then the ranks meet, as
//! below.
//!
//! # What is modeled
//!
//! `libhccl.so` is simulated in this module, with the ranks of a communicator as
//! simulated devices (one rank per device) of this process or of other processes of the
//! machine, which join through the process that made the root info. Its functions are exported
//! under their C names like the rest and found in-process by [`symbol`](crate::symbol), but are not in
//! the [`FnTable`](ascend_sys::FnTable): HCCL is a separate, optional library.
//!
//! * **Communicators.** `HcclCommInitAll` makes one communicator per listed device (rank =
//!   position; duplicates: `HCCL_E_PARA`, an unknown device: `HCCL_E_INTERNAL`).
//!   `HcclGetRootInfo` makes a root info naming a meeting in this process;
//!   `HcclCommInitRootInfo` on each rank's thread, or in another process, joins it and
//!   returns when all `nRanks` have joined. Handles are fake pointers never valid twice (stale or foreign:
//!   `HCCL_E_PARA`, a finding). Every call except the queries needs a current device on
//!   the calling thread (`HCCL_E_RUNTIME`), as HCCL asks the runtime for it first.
//! * **Collectives** (`HcclAllReduce`, `HcclBroadcast`, `HcclAllGather`,
//!   `HcclReduceScatter`, `HcclBarrier`) check their arguments in the vendor's order: a
//!   zero count succeeds at once without meeting anyone; NULL pointers give `HCCL_E_PTR`;
//!   a dtype outside the enum or not modeled (INT128, the 8-bit floats), an unknown
//!   reduction, and the pairs a product refuses (PROD on BFP16 or INT16 on Atlas A2/A3,
//!   INT16 on the training series, INT16 other than SUM on the inference series) give
//!   `HCCL_E_NOT_SUPPORT`; a root outside the group `HCCL_E_PARA`. The simulator also
//!   requires a live stream of the rank's device under a context of that device, and
//!   buffers inside one live allocation of the rank's device holding the elements the
//!   collective touches (`HCCL_E_PARA`, a finding).
//! * **Meetings.** A rank's `k`-th collective waits in the call until every rank has made
//!   its `k`-th call; the calls must agree (collective, count, dtype, reduction, root),
//!   else every rank fails with `HCCL_E_PARA` naming the difference. A rank that does not
//!   call within `ASCEND_SIM_HCCL_TIMEOUT_MS` fails the waiting ranks, and later itself,
//!   with `HCCL_E_TIMEOUT`. Then each rank's part is enqueued on its stream; the
//!   collective executes when every rank's stream has reached it (the last to arrive moves
//!   the data for all). A stream that does not arrive in time fails the others' work:
//!   their next `aclrtSynchronizeStream` gives 507000 and `HcclGetCommAsyncError`
//!   `HCCL_E_TIMEOUT`; memory freed under a queued collective gives 507000 and
//!   `HCCL_E_MEMORY` the same way. Waiting never holds the simulator's global lock.
//! * **Point to point** (`HcclSend`, `HcclRecv`): the same checks (then a peer outside
//!   the group or the rank itself: `HCCL_E_PARA`), no meeting in the call; the `k`-th send
//!   from rank `a` to `b` meets `b`'s `k`-th receive from `a` on the streams, where they
//!   must agree on count and dtype (else `HCCL_E_PARA` on both streams, a finding), and a
//!   side whose peer's stream does not come in time fails with `HCCL_E_TIMEOUT`.
//! * **Processes.** A rank of another process connects to the process that made the root
//!   info, over a Unix socket in the abstract namespace (named after that process and a
//!   random token of the root info; nothing on disk), which serves it while one of its own
//!   ranks waits to join. Only processes of the same user that present the root info's
//!   secret are served; a name that cannot be bound fails `HcclGetRootInfo`, and a socket
//!   held by another user is refused by the joining rank (both `HCCL_E_UNAVAIL`).
//!   Its calls and its parts of every collective and transfer go there and are met as the
//!   in-process ranks' are, with the same checks and texts. A process that exits or is
//!   killed after joining closes its connections: the meetings its ranks have not reached
//!   fail at once with `HCCL_E_REMOTE` naming the rank and process; the death of the
//!   serving process fails the others' calls with `HCCL_E_REMOTE` as well. HCCL itself
//!   has no serving process, so one rank's `HcclCommDestroy` does not end the others'
//!   work: the serving process's last destroy waits (up to the timeout) until every rank
//!   of the other processes has destroyed its communicator or gone away.
//! * **Bounds.** Nothing is sized by a root info's `nRanks` before the ranks have joined,
//!   and messages name at most four ranks and count the rest.
//! * **Arithmetic.** Reductions combine rank 0 with rank 1, the result with rank 2, and
//!   so on, each step in the element type (f16 and bf16 through f32, rounded to nearest
//!   even; integers wrap; MAX/MIN of floats prefer the number to a NaN).
//! * `HcclCommDestroy` of a rank with queued collectives lets them run and reports it.
//!   [`hccl::counters`](counters) / `ascendSimGetHcclCounters` count live communicators and queued
//!   collectives.

mod auth;
mod collectives;
mod group;
mod hub;
mod movement;
mod p2p;
mod remote;
mod root;
mod wire;

pub(crate) use collectives::{all_gather, barrier, broadcast, reducing};
pub use hub::serving_threads;
pub(crate) use movement::Kind;
pub(crate) use p2p::{Role, post};
pub(crate) use root::{comm_init_root_info, get_root_info, set_next_token};
pub(crate) use wire::set_frame_limit;

use crate::state::{out_slot, state};
use ascend_sys::hccl::*;
use group::Group;
use std::collections::HashMap;
use std::ffi::c_char;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, LazyLock, Mutex, MutexGuard};
use std::time::Duration;

/// Default `ASCEND_SIM_HCCL_TIMEOUT_MS`: how long a rank waits for the others (30 s).
pub const DEFAULT_HCCL_TIMEOUT_MS: u64 = 30_000;

static TIMEOUT_MS: AtomicU64 = AtomicU64::new(DEFAULT_HCCL_TIMEOUT_MS);

/// Sets the wait for the other ranks (`ASCEND_SIM_HCCL_TIMEOUT_MS`, read at `aclInit`).
pub(crate) fn set_timeout_ms(ms: u64) {
    TIMEOUT_MS.store(ms, Ordering::Relaxed);
}

fn timeout() -> Duration {
    Duration::from_millis(TIMEOUT_MS.load(Ordering::Relaxed))
}

/// Live HCCL objects (`ascendSimHcclCounters` in C), for leak checks.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct HcclCounters {
    /// Communicators not yet destroyed with `HcclCommDestroy` (one per rank).
    pub communicators: u64,
    /// Collectives enqueued on a stream and not yet executed.
    pub queued_collectives: u64,
}

/// Collectives enqueued and not yet executed, process-wide.
static QUEUED: AtomicU64 = AtomicU64::new(0);

/// The live HCCL counters now.
pub fn counters() -> HcclCounters {
    HcclCounters {
        communicators: registry().comms.len() as u64,
        queued_collectives: QUEUED.load(Ordering::SeqCst),
    }
}

// ---------------------------------------------------------------------------------------
// Communicator handles: fake pointers `0xCC << 48 | id`, never valid twice.

const COMM_TAG: usize = 0xCC;
const ID_MASK: usize = (1 << 48) - 1;

fn encode(id: u64) -> HcclComm {
    ((COMM_TAG << 48) | (id as usize & ID_MASK)) as HcclComm
}

/// One rank of a group.
struct Comm {
    group: Arc<Group>,
    rank: usize,
}

/// Communicators and pending root infos, behind their own lock (never held while the
/// global state lock is taken, nor the other way round).
struct Registry {
    next_id: u64,
    comms: HashMap<u64, Comm>,
    /// Why a communicator id is no longer valid.
    dead: HashMap<u64, &'static str>,
    roots: HashMap<u64, root::Root>,
    /// Groups with ranks in other processes that this process serves, by root info.
    hubs: HashMap<u64, Arc<Group>>,
}

impl Registry {
    fn fresh_id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    /// A new group of `devices` (rank = index) and one communicator handle per rank.
    fn form(&mut self, devices: Vec<usize>) -> Vec<u64> {
        let n = devices.len();
        let group = Group::new(self.fresh_id(), devices);
        let (_, handles) = self.form_ranks(group, &vec![true; n]);
        handles.into_iter().flatten().collect()
    }

    /// Registers `group` and a communicator handle for each rank that is `local`.
    fn form_ranks(&mut self, group: Group, local: &[bool]) -> (Arc<Group>, Vec<Option<u64>>) {
        let group = Arc::new(group);
        let handles = (0..group.size())
            .map(|rank| {
                local.get(rank).copied().unwrap_or(false).then(|| {
                    let id = self.fresh_id();
                    let group = Arc::clone(&group);
                    self.comms.insert(id, Comm { group, rank });
                    id
                })
            })
            .collect();
        (group, handles)
    }
}

static REGISTRY: LazyLock<Mutex<Registry>> = LazyLock::new(|| {
    Mutex::new(Registry {
        next_id: 0,
        comms: HashMap::new(),
        dead: HashMap::new(),
        roots: HashMap::new(),
        hubs: HashMap::new(),
    })
});

/// Signalled when a root info's ranks have all joined (or its meeting failed).
static JOINED: Condvar = Condvar::new();

fn registry() -> MutexGuard<'static, Registry> {
    crate::state::lock(&REGISTRY)
}

// ---------------------------------------------------------------------------------------
// Steps the entry points share.

/// Records `msg` as the thread's error text and returns `code`.
fn fail(code: HcclResult, msg: String) -> HcclResult {
    crate::state::fail(code as i32, msg);
    code
}

/// Like [`fail`], and also a sanitizer finding.
fn finding(code: HcclResult, msg: String) -> HcclResult {
    crate::state::finding(code as i32, msg);
    code
}

fn status(body: impl FnOnce() -> Result<(), HcclResult>) -> HcclResult {
    match body() {
        Ok(()) => HCCL_SUCCESS,
        Err(code) => code,
    }
}

/// A data call's opening in HCCL's order: the calling thread's device, then a zero
/// `count`, which succeeds without checking or meeting anything; `body` gets the device.
fn data_call(count: u64, body: impl FnOnce(usize) -> Result<(), HcclResult>) -> HcclResult {
    status(|| {
        let device = current_device()?;
        if count == 0 {
            return Ok(());
        }
        body(device)
    })
}

/// HCCL asks the runtime for the calling thread's device before anything else.
fn current_device() -> Result<usize, HcclResult> {
    let st = state();
    if st.require_active().is_err() {
        return Err(fail(
            HCCL_E_RUNTIME,
            "the runtime is not initialized (aclInit)".into(),
        ));
    }
    st.current_device_quiet().ok_or_else(|| {
        fail(
            HCCL_E_RUNTIME,
            "no current device on this thread: HCCL asks the runtime for it first (call aclrtSetDevice)"
                .into(),
        )
    })
}

/// How many ranks a message names before it only counts the rest.
const LISTED_RANKS: usize = 4;

/// `ranks` (ascending, `count` of them) for a message: at most [`LISTED_RANKS`] are named,
/// so that a group of millions of ranks gives a short text, e.g. `[1, 2, 3, 4, ... 4 of 9]`.
pub(crate) fn rank_list(ranks: impl IntoIterator<Item = u64>, count: u64) -> String {
    let mut text = String::from("[");
    for (i, r) in ranks.into_iter().take(LISTED_RANKS).enumerate() {
        if i > 0 {
            text.push_str(", ");
        }
        text.push_str(&r.to_string());
    }
    if count > LISTED_RANKS as u64 {
        text.push_str(&format!(", ... {LISTED_RANKS} of {count}"));
    }
    text.push(']');
    text
}

fn non_null<T>(ptr: *const T, name: &str) -> Result<(), HcclResult> {
    if ptr.is_null() {
        Err(fail(HCCL_E_PTR, format!("{name} is NULL")))
    } else {
        Ok(())
    }
}

/// The rank behind a (non-NULL) handle.
fn lookup(comm: HcclComm) -> Result<(Arc<Group>, usize), HcclResult> {
    let v = comm as usize;
    if v >> 48 != COMM_TAG {
        return Err(finding(
            HCCL_E_PARA,
            format!(
                "comm {v:#x} is not a communicator of this simulator (foreign or corrupted pointer)"
            ),
        ));
    }
    let id = (v & ID_MASK) as u64;
    let reg = registry();
    match reg.comms.get(&id) {
        Some(c) => Ok((Arc::clone(&c.group), c.rank)),
        None => Err(finding(
            HCCL_E_PARA,
            format!(
                "comm {v:#x} is stale ({})",
                reg.dead.get(&id).copied().unwrap_or("never created")
            ),
        )),
    }
}

// ---------------------------------------------------------------------------------------
// Communicators.

pub(crate) unsafe fn comm_init_all(
    ndev: u32,
    devices: *mut i32,
    comms: *mut HcclComm,
) -> HcclResult {
    status(|| {
        current_device()?;
        if ndev == 0 {
            return Err(fail(HCCL_E_PARA, "ndev is 0".into()));
        }
        non_null(comms, "comms")?;
        non_null(devices, "devices")?;
        // SAFETY: non-null and, by the C contract, `ndev` readable elements.
        let ids = unsafe { std::slice::from_raw_parts(devices, ndev as usize) };
        for (i, id) in ids.iter().enumerate() {
            if let Some(j) = ids[..i].iter().position(|x| x == id) {
                return Err(fail(
                    HCCL_E_PARA,
                    format!(
                        "devices[{j}] and devices[{i}] are both device {id}: every device may hold one rank"
                    ),
                ));
            }
        }
        let count = state().devices.len();
        let mut list = Vec::with_capacity(ids.len());
        for &id in ids {
            match usize::try_from(id).ok().filter(|&d| d < count) {
                Some(d) => list.push(d),
                None => {
                    return Err(fail(
                        HCCL_E_INTERNAL,
                        format!(
                            "cannot set device {id}: {count} device(s) configured (ASCEND_SIM_DEVICES)"
                        ),
                    ));
                }
            }
        }
        let handles = registry().form(list);
        for (i, id) in handles.into_iter().enumerate() {
            // SAFETY: non-null and, by the C contract, `ndev` writable elements.
            unsafe { comms.add(i).write(encode(id)) };
        }
        Ok(())
    })
}

pub(crate) unsafe fn comm_destroy(comm: HcclComm) -> HcclResult {
    status(|| {
        current_device()?;
        if comm.is_null() {
            return Ok(());
        }
        let (group, rank) = lookup(comm)?;
        let id = (comm as usize & ID_MASK) as u64;
        let last_hub = {
            let mut reg = registry();
            reg.comms.remove(&id);
            reg.dead.insert(id, "destroyed by HcclCommDestroy");
            !reg.comms.values().any(|c| Arc::ptr_eq(&c.group, &group))
                && reg.hubs.values().any(|g| Arc::ptr_eq(g, &group))
        };
        match &group.remote {
            Some(link) => link.close(rank),
            None => group.destroyed(rank),
        }
        if last_hub {
            group.close_served(timeout());
            let mut reg = registry();
            let roots: Vec<u64> = (reg.hubs.iter())
                .filter(|(_, g)| Arc::ptr_eq(g, &group))
                .map(|(&root, _)| root)
                .collect();
            for root in roots {
                reg.hubs.remove(&root);
                // A connection of another process still on its way to the group ends at once.
                reg.roots.entry(root).or_insert_with(|| {
                    root::Root::Failed(
                        HCCL_E_INTERNAL,
                        format!("communicator group {} was destroyed", group.id),
                    )
                });
            }
        }
        let queued = group.queued(rank);
        if queued > 0 {
            crate::state::report(format!(
                "HcclCommDestroy: rank {rank} of communicator group {} still has {queued} collective(s) queued; they run, but synchronize the streams before destroying a communicator",
                group.id
            ));
        }
        Ok(())
    })
}

/// `HcclGetRankSize` and `HcclGetRankId`.
fn query(
    comm: HcclComm,
    out: *mut u32,
    name: &str,
    value: impl FnOnce(&Group, usize) -> u32,
) -> HcclResult {
    status(|| {
        non_null(comm, "comm")?;
        non_null(out, name)?;
        let (group, rank) = lookup(comm)?;
        // SAFETY: non-null, and writable for a u32 by the C contract.
        if let Some(slot) = unsafe { out_slot(out) } {
            slot.write(value(&group, rank));
        }
        Ok(())
    })
}

pub(crate) unsafe fn get_rank_size(comm: HcclComm, rank_size: *mut u32) -> HcclResult {
    query(comm, rank_size, "rankSize", |g, _| g.size() as u32)
}

pub(crate) unsafe fn get_rank_id(comm: HcclComm, rank: *mut u32) -> HcclResult {
    query(comm, rank, "rank", |_, r| r as u32)
}

pub(crate) unsafe fn get_comm_async_error(
    comm: HcclComm,
    async_error: *mut HcclResult,
) -> HcclResult {
    query(comm, async_error, "asyncError", |g, r| g.async_error(r))
}

/// The vendor's texts (its spelling of "unknown" included).
pub(crate) unsafe fn get_error_string(code: HcclResult) -> *const c_char {
    const TEXTS: [&std::ffi::CStr; 24] = [
        c"no error",
        c"parameter error",
        c"empty pointer",
        c"memory error",
        c"internal error",
        c"not support feature",
        c"not found specific resource",
        c"resource unavailable",
        c"call system interface error",
        c"timeout",
        c"open file fail",
        c"tcp connect fail",
        c"roce connect fail",
        c"tcp transfer fail",
        c"roce transfer fail",
        c"call runtime api fail",
        c"call driver api fail",
        c"call profiling api fail",
        c"call cce api fail",
        c"call network api fail",
        c"try again",
        c"error cqe",
        c"error communicator suspending",
        c"retry constraint",
    ];
    TEXTS
        .get(code as usize)
        .copied()
        .unwrap_or(c"unknow error")
        .as_ptr()
}

#[cfg(test)]
mod tests {
    #[test]
    fn rank_lists_name_at_most_four_ranks_and_count_the_rest() {
        assert_eq!(super::rank_list([1], 1), "[1]");
        assert_eq!(super::rank_list(0..4, 4), "[0, 1, 2, 3]");
        assert_eq!(
            super::rank_list(1..u64::from(u32::MAX), u64::from(u32::MAX) - 1),
            "[1, 2, 3, 4, ... 4 of 4294967294]"
        );
    }
}
