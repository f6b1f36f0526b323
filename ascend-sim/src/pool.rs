//! Stream-ordered memory pools (`aclrtMemPool*`, CANN 8.x `acl_rt_memory_soma.h`) and host
//! callbacks in stream order (`aclrtLaunchCallback`).
//!
//! A pool block is an ordinary device allocation (checked like one by every kernel and
//! copy) tagged with its pool. `aclrtMemPoolFreeAsync` enqueues the release: when the
//! stream reaches it, the allocation is marked freed (work still queued on it, on any
//! stream, then fails loudly) and its range joins the pool's free list. A later
//! `aclrtMemPoolMallocAsync`, on any stream, may take a range only from that list, that is
//! only after the free has run; the range is handed out as a new allocation, so work that
//! still refers to the old one is recognised. `aclrtMemPoolTrimTo` and
//! `aclrtMemPoolDestroy` return free ranges to the device; blocks still handed out when a
//! pool is destroyed go back to the device when their free runs.

use crate::mem::{Alloc, padded_size};
use crate::runtime::{resolve_stream, runtime_handle_id, stale_handle};
use crate::state::{
    Kind, State, active_state, encode, fail, finding, non_null_address, out_param, state,
};
use crate::stream::Task;
use ascend_sys::*;
use std::collections::BTreeMap;
use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// One live `aclrtMemPool`.
pub(crate) struct Pool {
    device: usize,
    /// Most bytes (padded) the pool may hold at once; `usize::MAX` without a limit.
    max_size: usize,
    /// Blocks handed out and not yet given to `aclrtMemPoolFreeAsync`: start -> padded.
    live: BTreeMap<usize, usize>,
    /// Ranges whose stream-ordered free has run: start -> padded.
    free: BTreeMap<usize, usize>,
    /// Padded bytes of the blocks freed in stream order but not yet reached by it.
    freeing: usize,
}

impl Pool {
    fn reserved(&self) -> usize {
        self.live.values().sum::<usize>() + self.free.values().sum::<usize>() + self.freeing
    }
}

fn lookup_pool(st: &State, pool: aclrtMemPool) -> Result<u64, i32> {
    let id = runtime_handle_id(Kind::MemPool, pool)?;
    if st.pools.contains_key(&id) {
        Ok(id)
    } else {
        Err(stale_handle(st, Kind::MemPool, id))
    }
}

pub(crate) unsafe fn pool_create(
    mem_pool: *mut aclrtMemPool,
    props: *const aclrtMemPoolProps,
) -> aclError {
    crate::state::status_of(|| {
        let mut st = active_state()?;
        // SAFETY: NULL or writable and unaliased during the call, by the C contract.
        let out = unsafe { out_param(mem_pool, "memPool") }?;
        // SAFETY: NULL or readable for one `aclrtMemPoolProps`, by the C contract.
        let Some(p) = (unsafe { props.as_ref() }) else {
            return Err(fail(ACL_ERROR_INVALID_PARAM, "poolProps is NULL".into()));
        };
        if p.allocType != ACL_MEM_ALLOCATION_TYPE_PINNED {
            return Err(fail(
                ACL_ERROR_INVALID_PARAM,
                format!(
                    "poolProps.allocType {} is not ACL_MEM_ALLOCATION_TYPE_PINNED (0)",
                    p.allocType
                ),
            ));
        }
        if p.handleType != ACL_MEM_HANDLE_TYPE_NONE {
            return Err(fail(
                ACL_ERROR_INVALID_PARAM,
                format!(
                    "poolProps.handleType {} is not ACL_MEM_HANDLE_TYPE_NONE (0)",
                    p.handleType
                ),
            ));
        }
        if p.location.type_ != ACL_MEM_LOCATION_TYPE_DEVICE {
            return Err(fail(
                ACL_ERROR_INVALID_PARAM,
                format!(
                    "poolProps.location.type {} is not ACL_MEM_LOCATION_TYPE_DEVICE (1)",
                    p.location.type_
                ),
            ));
        }
        let device = p.location.id as usize;
        if device >= st.devices.len() {
            return Err(fail(
                ACL_ERROR_INVALID_PARAM,
                format!(
                    "poolProps.location.id {device} is not a device (there are {})",
                    st.devices.len()
                ),
            ));
        }
        let id = st.fresh_id();
        st.pools.insert(
            id,
            Pool {
                device,
                max_size: if p.maxSize == 0 {
                    usize::MAX
                } else {
                    p.maxSize
                },
                live: BTreeMap::new(),
                free: BTreeMap::new(),
                freeing: 0,
            },
        );
        out.write(encode(Kind::MemPool, id));
        Ok(())
    })
}

pub(crate) unsafe fn pool_destroy(mem_pool: aclrtMemPool) -> aclError {
    crate::state::status_of(|| {
        let mut st = active_state()?;
        let id = lookup_pool(&st, mem_pool)?;
        if let Some(pool) = st.pools.remove(&id) {
            let arena = &mut st.devices[pool.device].arena;
            for (start, padded) in pool.free {
                arena.give_back(start, padded);
            }
        }
        st.dead.insert(id, "destroyed by aclrtMemPoolDestroy");
        Ok(())
    })
}

pub(crate) unsafe fn pool_trim_to(mem_pool: aclrtMemPool, keep: usize) -> aclError {
    crate::state::status_of(|| {
        let mut st = active_state()?;
        let id = lookup_pool(&st, mem_pool)?;
        let st = &mut *st;
        let Some(pool) = st.pools.get_mut(&id) else {
            return Err(fail(ACL_ERROR_RT_INTERNAL_ERROR, "pool vanished".into()));
        };
        let arena = &mut st.devices[pool.device].arena;
        let mut reserved = pool.reserved();
        while reserved > keep {
            let Some((start, padded)) = pool.free.pop_last() else {
                break;
            };
            arena.give_back(start, padded);
            reserved -= padded;
        }
        Ok(())
    })
}

pub(crate) unsafe fn pool_malloc_async(
    ptr: *mut *mut c_void,
    size: usize,
    mem_pool: aclrtMemPool,
    stream: aclrtStream,
) -> aclError {
    crate::state::status_of(|| {
        let mut st = active_state()?;
        // SAFETY: NULL or writable and unaliased during the call, by the C contract.
        let out = unsafe { out_param(ptr, "ptr") }?;
        if size == 0 {
            return Err(fail(ACL_ERROR_INVALID_PARAM, "size is 0".into()));
        }
        let id = lookup_pool(&st, mem_pool)?;
        let (_, device) = resolve_stream(&mut st, stream)?;
        let st = &mut *st;
        let Some(pool) = st.pools.get_mut(&id) else {
            return Err(fail(ACL_ERROR_RT_INTERNAL_ERROR, "pool vanished".into()));
        };
        if pool.device != device {
            return Err(finding(
                ACL_ERROR_INVALID_PARAM,
                format!(
                    "the pool belongs to device {} and the stream to device {device}",
                    pool.device
                ),
            ));
        }
        let padded = padded_size(size).ok_or_else(|| {
            fail(
                ACL_ERROR_RT_MEMORY_ALLOCATION,
                format!("size {size} too large"),
            )
        })?;
        // Smallest free range that fits, split when it is at least twice as large.
        let fit = pool
            .free
            .iter()
            .filter(|&(_, &len)| len >= padded)
            .min_by_key(|&(_, &len)| len)
            .map(|(&s, &len)| (s, len));
        let start = match fit {
            Some((start, len)) => {
                pool.free.remove(&start);
                if len >= 2 * padded {
                    pool.free.insert(start + padded, len - padded);
                    start
                } else {
                    pool.live.insert(start, len);
                    start
                }
            }
            None => {
                let reserved = pool.reserved();
                if reserved.saturating_add(padded) > pool.max_size {
                    return Err(fail(
                        ACL_ERROR_RT_MEMORY_ALLOCATION,
                        format!(
                            "the pool holds {reserved} bytes; {padded} more exceed its maxSize {}",
                            pool.max_size
                        ),
                    ));
                }
                st.devices[device].arena.allocate(device, size, padded)?
            }
        };
        let held = *pool.live.entry(start).or_insert(padded);
        st.allocs.insert(
            start,
            Arc::new(Alloc {
                start,
                size,
                padded: held,
                device,
                data: Mutex::new(vec![0u8; size]),
                freed: AtomicBool::new(false),
                race: crate::racecheck::Shadow::default(),
                pool: id,
            }),
        );
        out.write(start as *mut c_void);
        Ok(())
    })
}

pub(crate) unsafe fn pool_free_async(ptr: *mut c_void, stream: aclrtStream) -> aclError {
    crate::state::status_of(|| {
        let mut st = active_state()?;
        let addr = non_null_address(ptr, "ptr")?;
        let Some(a) = st.allocs.get(&addr).cloned() else {
            let why = if st.is_device_addr(addr) {
                st.dead_memory(addr)
            } else {
                "is host memory, not a pool block".into()
            };
            return Err(finding(
                ACL_ERROR_INVALID_PARAM,
                format!("ptr {addr:#x} {why}"),
            ));
        };
        if a.pool == 0 {
            return Err(finding(
                ACL_ERROR_INVALID_PARAM,
                format!(
                    "ptr {addr:#x} came from aclrtMalloc, not from a memory pool: release it with aclrtFree"
                ),
            ));
        }
        let (queue, device) = resolve_stream(&mut st, stream)?;
        if device != a.device {
            return Err(finding(
                ACL_ERROR_INVALID_PARAM,
                format!(
                    "ptr {addr:#x} belongs to device {} and the stream to device {device}",
                    a.device
                ),
            ));
        }
        let padded = match st.pools.get_mut(&a.pool) {
            Some(pool) => match pool.live.remove(&addr) {
                Some(padded) => {
                    pool.freeing += padded;
                    padded
                }
                None => {
                    return Err(finding(
                        ACL_ERROR_INVALID_PARAM,
                        format!(
                            "ptr {addr:#x} was already given to aclrtMemPoolFreeAsync (double free)"
                        ),
                    ));
                }
            },
            // Blocks of a destroyed pool go back to the device when their free runs.
            None => a.padded,
        };
        queue.submit(Task::Fn(Box::new(move || {
            release(&a, padded);
            Ok(())
        })));
        Ok(())
    })
}

/// The stream-ordered part of `aclrtMemPoolFreeAsync`: the block is dead from now on.
fn release(a: &Arc<Alloc>, padded: usize) {
    let mut st = state();
    let st = &mut *st;
    a.freed.store(true, Ordering::SeqCst);
    if st.allocs.get(&a.start).is_some_and(|b| Arc::ptr_eq(a, b)) {
        st.allocs.remove(&a.start);
    } else {
        // A device reset invalidated it; the reset accounted for it.
        return;
    }
    match st.pools.get_mut(&a.pool) {
        Some(pool) => {
            pool.freeing -= padded;
            pool.free.insert(a.start, padded);
        }
        None => st.devices[a.device].arena.give_back(a.start, padded),
    }
}

/// A callback and its argument, moved to the stream's worker.
struct Callback {
    f: unsafe extern "C" fn(*mut c_void),
    user_data: *mut c_void,
}

// SAFETY: the caller of aclrtLaunchCallback hands `user_data` to the callback, which CANN
// runs on another thread (the subscribed one); making it usable there is the caller's
// documented contract.
unsafe impl Send for Callback {}

pub(crate) unsafe fn launch_callback(
    f: aclrtCallback,
    user_data: *mut c_void,
    block_type: aclrtCallbackBlockType,
    stream: aclrtStream,
) -> aclError {
    crate::state::status_of(|| {
        let mut st = active_state()?;
        let Some(f) = f else {
            return Err(fail(ACL_ERROR_INVALID_PARAM, "fn is NULL".into()));
        };
        if block_type > ACL_CALLBACK_BLOCK {
            return Err(fail(
                ACL_ERROR_INVALID_PARAM,
                format!(
                    "blockType {block_type} is not ACL_CALLBACK_NO_BLOCK (0) or ACL_CALLBACK_BLOCK (1)"
                ),
            ));
        }
        let (queue, _) = resolve_stream(&mut st, stream)?;
        let cb = Callback { f, user_data };
        // Both block types run the callback before the stream's later work here: the
        // stronger order, which every program written for either one may rely on.
        queue.submit(Task::Fn(Box::new(move || {
            let cb = cb;
            // A callback is host code (CANN runs it on the subscribed host thread).
            // SAFETY: the function and argument the caller passed, called once, in stream
            // order, as CANN does.
            crate::stream::as_host(|| unsafe { (cb.f)(cb.user_data) });
            Ok(())
        })));
        Ok(())
    })
}
