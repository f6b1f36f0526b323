//! `libascendcl.so`: process, devices, contexts, streams and events.

use crate::copy::plan_copy;
use crate::mem::Arena;
use crate::racecheck::Who;
use crate::state::{
    CURRENT_CTX, Context, Device, EventRec, Kind, Life, State, StreamRec, active_state, decode,
    encode, fail, finding, out_param, set_fault_absolute, state, status_of,
};
use crate::stream::{EventShared, StreamHandle, StreamShared};
use ascend_sys::*;
use std::ffi::{CStr, c_char, c_void};
use std::sync::Arc;

pub(crate) unsafe fn init(config_path: *const c_char) -> aclError {
    let mut st = state();
    match st.life {
        Life::Active => {
            return fail(
                ACL_ERROR_REPEAT_INITIALIZE,
                "aclInit may be called only once per process".into(),
            );
        }
        Life::Finalized => {
            return fail(
                ACL_ERROR_UNINITIALIZE,
                "aclFinalize has already been called; ACL cannot be initialized again".into(),
            );
        }
        Life::NotInitialized => {}
    }
    if !config_path.is_null() {
        // SAFETY: non-null, and by the C contract a NUL-terminated string.
        let path = unsafe { CStr::from_ptr(config_path) }
            .to_string_lossy()
            .into_owned();
        if !path.is_empty() && !std::path::Path::new(&path).is_file() {
            return fail(
                ACL_ERROR_INVALID_PARAM,
                format!("configPath {path:?} is not a readable file"),
            );
        }
    }
    let config = match crate::config::for_init() {
        Ok(c) => c,
        Err(m) => return fail(ACL_ERROR_INVALID_PARAM, m),
    };
    let mut devs = Vec::with_capacity(config.devices.len());
    for (soc, family, mem_bytes) in config.devices {
        let arena = match Arena::reserve(mem_bytes) {
            Ok(a) => a,
            Err(m) => return fail(ACL_ERROR_RT_DEV_SETUP_ERROR, m),
        };
        devs.push(Device {
            soc,
            family,
            arena,
            refcount: 0,
            default_ctx: None,
            peers: Vec::new(),
        });
    }
    for (i, n) in config.faults {
        set_fault_absolute(i, n);
    }
    crate::hccl::set_timeout_ms(config.hccl_timeout_ms);
    crate::racecheck::set_enabled(config.racecheck);
    st.devices = devs;
    st.life = Life::Active;
    ACL_SUCCESS
}

pub(crate) unsafe fn finalize() -> aclError {
    status_of(|| {
        let workers = {
            let mut st = active_state()?;
            let c = st.counters();
            if c != crate::Counters::default() {
                crate::state::report(format!("aclFinalize with live objects: {c:?}"));
            }
            let mut workers: Vec<StreamHandle> =
                st.streams.drain().map(|(_, s)| s.handle).collect();
            workers.extend(
                st.contexts
                    .values_mut()
                    .filter_map(|c| c.default_stream.take()),
            );
            st.life = Life::Finalized;
            workers
        };
        CURRENT_CTX.with(|c| c.set(0));
        shut_down(workers);
        Ok(())
    })
}

/// Stops stream workers. Draining a queue waits for its work, so callers release the
/// state lock first: other threads' calls must not stall behind it.
fn shut_down(workers: Vec<StreamHandle>) {
    for w in workers {
        w.shutdown();
    }
}

pub(crate) fn check_device(st: &State, id: i32) -> Result<usize, i32> {
    if id < 0 || id as usize >= st.devices.len() {
        Err(fail(
            ACL_ERROR_RT_INVALID_DEVICEID,
            format!(
                "deviceId {id} is invalid: {} device(s) configured (ASCEND_SIM_DEVICES)",
                st.devices.len()
            ),
        ))
    } else {
        Ok(id as usize)
    }
}

pub(crate) unsafe fn set_device(device_id: i32) -> aclError {
    status_of(|| {
        let mut st = active_state()?;
        let d = check_device(&st, device_id)?;
        let ctx = match st.devices[d].default_ctx {
            Some(c) => c,
            None => {
                let id = st.fresh_id();
                st.contexts.insert(
                    id,
                    Context {
                        device: d,
                        explicit: false,
                        default_stream: None,
                    },
                );
                st.devices[d].default_ctx = Some(id);
                id
            }
        };
        st.devices[d].refcount += 1;
        CURRENT_CTX.with(|c| c.set(ctx));
        Ok(())
    })
}

pub(crate) unsafe fn reset_device(device_id: i32) -> aclError {
    status_of(|| {
        let (d, workers) = {
            let mut st = active_state()?;
            let d = check_device(&st, device_id)?;
            let device = &mut st.devices[d];
            if device.refcount == 0 {
                return Err(finding(
                    ACL_ERROR_RT_PARAM_INVALID,
                    format!("device {d} is not set (aclrtSetDevice reference count is 0)"),
                ));
            }
            device.refcount -= 1;
            if device.refcount > 0 {
                return Ok(());
            }
            let Some(ctx) = device.default_ctx.take() else {
                return Ok(());
            };
            let released = "released by aclrtResetDevice";
            let mut workers = remove_context(&mut st, ctx, released, released).0;
            let explicit: Vec<u64> = st
                .contexts
                .iter()
                .filter(|(_, c)| c.device == d)
                .map(|(&id, _)| id)
                .collect();
            let by_reset = "released by aclrtResetDevice of its device";
            for c in &explicit {
                workers.extend(remove_context(&mut st, *c, by_reset, by_reset).0);
            }
            (d, workers)
        };
        // Queued work finishes before the device's memory goes, as on hardware.
        shut_down(workers);
        release_device(d);
        Ok(())
    })
}

/// The rest of a device's reset, once its streams have drained: its events and memory
/// are invalidated. What the caller should have released first stays counted as leaked
/// (and `aclFinalize` reports it); any later use of it is use after reset.
fn release_device(d: usize) {
    let mut st = state();
    // A thread may have set the device again meanwhile: then it is in use.
    if st.devices[d].refcount > 0 {
        return;
    }
    st.devices[d].peers.clear();
    let events: Vec<u64> = st
        .events
        .iter()
        .filter(|(_, e)| e.device == d)
        .map(|(&id, _)| id)
        .collect();
    for id in &events {
        st.events.remove(id);
        st.dead
            .insert(*id, "released by aclrtResetDevice of its device");
        st.reset_leaks.events += 1;
    }
    st.invalidate_device_memory(d);
}

/// Removes a context with its streams, keeping why their handles died for later messages.
/// Returns the workers to [`shut_down`] and how many of the streams came from
/// `aclrtCreateStream` (the default stream is not counted).
fn remove_context(
    st: &mut State,
    ctx: u64,
    ctx_death: &'static str,
    stream_death: &'static str,
) -> (Vec<StreamHandle>, usize) {
    let mut workers = Vec::new();
    if let Some(mut c) = st.contexts.remove(&ctx) {
        workers.extend(c.default_stream.take());
    }
    st.dead.insert(ctx, ctx_death);
    let orphans: Vec<u64> = st
        .streams
        .iter()
        .filter(|(_, s)| s.ctx == ctx)
        .map(|(id, _)| *id)
        .collect();
    for id in &orphans {
        if let Some(s) = st.streams.remove(id) {
            workers.push(s.handle);
        }
        st.dead.insert(*id, stream_death);
    }
    (workers, orphans.len())
}

pub(crate) unsafe fn get_device(device_id: *mut i32) -> aclError {
    status_of(|| {
        let st = active_state()?;
        // SAFETY: NULL or writable and unaliased during the call, by the C contract.
        let out = unsafe { out_param(device_id, "deviceId") }?;
        let (_, device) = st.current_ctx()?;
        out.write(device as i32);
        Ok(())
    })
}

pub(crate) unsafe fn get_device_count(count: *mut u32) -> aclError {
    status_of(|| {
        let st = active_state()?;
        // SAFETY: NULL or writable and unaliased during the call, by the C contract.
        let out = unsafe { out_param(count, "count") }?;
        out.write(st.devices.len() as u32);
        Ok(())
    })
}

pub(crate) unsafe fn create_context(context: *mut aclrtContext, device_id: i32) -> aclError {
    status_of(|| {
        let mut st = active_state()?;
        // SAFETY: NULL or writable and unaliased during the call, by the C contract.
        let out = unsafe { out_param(context, "context") }?;
        let device = check_device(&st, device_id)?;
        let id = st.fresh_id();
        st.contexts.insert(
            id,
            Context {
                device,
                explicit: true,
                default_stream: None,
            },
        );
        CURRENT_CTX.with(|c| c.set(id));
        out.write(encode(Kind::Context, id));
        Ok(())
    })
}

/// The id in a context, stream or event handle. NULL is a bad argument; a pointer that is
/// no handle of this simulator is a caller bug, so it is also a sanitizer finding.
pub(crate) fn runtime_handle_id<T>(kind: Kind, handle: *const T) -> Result<u64, i32> {
    decode(kind, handle).map_err(|m| {
        if handle.is_null() {
            fail(ACL_ERROR_INVALID_PARAM, m)
        } else {
            finding(ACL_ERROR_RT_INVALID_HANDLE, m)
        }
    })
}

/// The finding for a well-formed runtime handle whose object no longer exists.
pub(crate) fn stale_handle(st: &State, kind: Kind, id: u64) -> i32 {
    finding(ACL_ERROR_RT_INVALID_HANDLE, st.stale(kind, id))
}

fn lookup_ctx(st: &State, context: aclrtContext) -> Result<u64, i32> {
    let id = runtime_handle_id(Kind::Context, context)?;
    if st.contexts.contains_key(&id) {
        Ok(id)
    } else {
        Err(stale_handle(st, Kind::Context, id))
    }
}

pub(crate) unsafe fn destroy_context(context: aclrtContext) -> aclError {
    status_of(|| {
        let workers = {
            let mut st = active_state()?;
            let id = lookup_ctx(&st, context)?;
            if !st.contexts[&id].explicit {
                return Err(finding(
                    ACL_ERROR_RT_PARAM_INVALID,
                    "a device's default context cannot be destroyed (use aclrtResetDevice)".into(),
                ));
            }
            let (workers, streams) = remove_context(
                &mut st,
                id,
                "destroyed by aclrtDestroyContext",
                "destroyed with its context",
            );
            if streams > 0 {
                crate::state::report(format!(
                    "aclrtDestroyContext: {streams} stream(s) of the context were still alive and were destroyed with it (destroy streams first)"
                ));
            }
            workers
        };
        shut_down(workers);
        Ok(())
    })
}

pub(crate) unsafe fn set_current_context(context: aclrtContext) -> aclError {
    status_of(|| {
        let st = active_state()?;
        let id = lookup_ctx(&st, context)?;
        CURRENT_CTX.with(|c| c.set(id));
        Ok(())
    })
}

pub(crate) unsafe fn get_current_context(context: *mut aclrtContext) -> aclError {
    status_of(|| {
        let st = active_state()?;
        // SAFETY: NULL or writable and unaliased during the call, by the C contract.
        let out = unsafe { out_param(context, "context") }?;
        let (id, _) = st.current_ctx()?;
        out.write(encode(Kind::Context, id));
        Ok(())
    })
}

/// Resolves a stream argument under the calling thread's current context (`NULL`: the
/// context's default stream, started on first use). Runtime error codes.
pub(crate) fn resolve_stream(
    st: &mut State,
    stream: aclrtStream,
) -> Result<(Arc<StreamShared>, usize), i32> {
    let (ctx, device) = st.current_ctx()?;
    if stream.is_null() {
        let c = st
            .contexts
            .get_mut(&ctx)
            .ok_or_else(|| fail(ACL_ERROR_RT_CONTEXT_NULL, "current context vanished".into()))?;
        if c.default_stream.is_none() {
            let who = Who::Default(encode::<u8>(Kind::Context, ctx) as usize);
            let h = StreamHandle::spawn(format!("ascend-sim-default-{ctx}"), who)
                .map_err(|m| fail(ACL_ERROR_RT_INTERNAL_ERROR, m))?;
            c.default_stream = Some(h);
        }
        let shared = c.default_stream.as_ref().map(|h| Arc::clone(&h.shared));
        return shared
            .map(|s| (s, device))
            .ok_or_else(|| fail(ACL_ERROR_RT_INTERNAL_ERROR, "no default stream".into()));
    }
    let id = runtime_handle_id(Kind::Stream, stream)?;
    let Some(s) = st.streams.get(&id) else {
        return Err(stale_handle(st, Kind::Stream, id));
    };
    if s.device != device {
        return Err(finding(
            ACL_ERROR_RT_STREAM_CONTEXT,
            format!(
                "stream {stream:p} belongs to device {}, but the current context is on device {device}",
                s.device
            ),
        ));
    }
    Ok((Arc::clone(&s.handle.shared), device))
}

pub(crate) unsafe fn create_stream(stream: *mut aclrtStream) -> aclError {
    status_of(|| {
        let mut st = active_state()?;
        // SAFETY: NULL or writable and unaliased during the call, by the C contract.
        let out = unsafe { out_param(stream, "stream") }?;
        let (ctx, device) = st.current_ctx()?;
        let id = st.fresh_id();
        let who = Who::Stream(encode::<u8>(Kind::Stream, id) as usize);
        let handle = StreamHandle::spawn(format!("ascend-sim-stream-{id}"), who)
            .map_err(|m| fail(ACL_ERROR_RT_INTERNAL_ERROR, m))?;
        st.streams.insert(
            id,
            StreamRec {
                ctx,
                device,
                handle,
            },
        );
        out.write(encode(Kind::Stream, id));
        Ok(())
    })
}

pub(crate) unsafe fn destroy_stream(stream: aclrtStream) -> aclError {
    status_of(|| {
        let worker = {
            let mut st = active_state()?;
            if stream.is_null() {
                return Err(fail(
                    ACL_ERROR_INVALID_PARAM,
                    "stream is NULL (the default stream cannot be destroyed)".into(),
                ));
            }
            let id = runtime_handle_id(Kind::Stream, stream)?;
            let Some(s) = st.streams.remove(&id) else {
                return Err(stale_handle(&st, Kind::Stream, id));
            };
            st.dead.insert(id, "destroyed by aclrtDestroyStream");
            s.handle
        };
        // Drains queued work; an error in it was already reported when it happened.
        worker.shutdown();
        Ok(())
    })
}

fn async_error(msg: String) -> aclError {
    finding(
        ACL_ERROR_RT_INTERNAL_ERROR,
        format!("error in asynchronous work on the stream: {msg}"),
    )
}

pub(crate) unsafe fn synchronize_stream(stream: aclrtStream) -> aclError {
    status_of(|| {
        // Waits without the state lock: queued work may depend on other threads' calls.
        let (queue, _) = {
            let mut st = active_state()?;
            resolve_stream(&mut st, stream)?
        };
        match queue.synchronize() {
            None => Ok(()),
            Some(m) => Err(async_error(m)),
        }
    })
}

pub(crate) unsafe fn create_event(event: *mut aclrtEvent) -> aclError {
    status_of(|| {
        let mut st = active_state()?;
        // SAFETY: NULL or writable and unaliased during the call, by the C contract.
        let out = unsafe { out_param(event, "event") }?;
        let (_, device) = st.current_ctx()?;
        let id = st.fresh_id();
        st.events.insert(
            id,
            EventRec {
                device,
                shared: Arc::new(EventShared::default()),
            },
        );
        out.write(encode(Kind::Event, id));
        Ok(())
    })
}

/// A live event: its id, device and shared state.
fn lookup_event(st: &State, event: aclrtEvent) -> Result<(u64, usize, Arc<EventShared>), i32> {
    let id = runtime_handle_id(Kind::Event, event)?;
    match st.events.get(&id) {
        Some(e) => Ok((id, e.device, Arc::clone(&e.shared))),
        None => Err(stale_handle(st, Kind::Event, id)),
    }
}

pub(crate) unsafe fn destroy_event(event: aclrtEvent) -> aclError {
    status_of(|| {
        let mut st = active_state()?;
        let (id, _, _) = lookup_event(&st, event)?;
        st.events.remove(&id);
        st.dead.insert(id, "destroyed by aclrtDestroyEvent");
        Ok(())
    })
}

pub(crate) unsafe fn record_event(event: aclrtEvent, stream: aclrtStream) -> aclError {
    with_event_and_stream(event, stream, |ev, s| ev.record(s))
}

pub(crate) unsafe fn stream_wait_event(stream: aclrtStream, event: aclrtEvent) -> aclError {
    with_event_and_stream(event, stream, |ev, s| ev.wait_on(s))
}

/// Checks the runtime, the event handle, the stream (under the current context) and that
/// both belong to one device, in that order, then enqueues `act`'s work: the shared part
/// of record and wait.
fn with_event_and_stream(
    event: aclrtEvent,
    stream: aclrtStream,
    act: impl FnOnce(&Arc<EventShared>, &StreamShared),
) -> aclError {
    status_of(|| {
        let mut st = active_state()?;
        let (_, event_device, ev) = lookup_event(&st, event)?;
        let (queue, device) = resolve_stream(&mut st, stream)?;
        // CANN: an event and a stream of different devices cannot be recorded or waited.
        if event_device != device {
            return Err(finding(
                ACL_ERROR_RT_STREAM_CONTEXT,
                format!(
                    "the event belongs to device {event_device} and the stream to device {device}"
                ),
            ));
        }
        act(&ev, &queue);
        Ok(())
    })
}

pub(crate) unsafe fn synchronize_event(event: aclrtEvent) -> aclError {
    status_of(|| {
        // An event of another device than the current one may be waited for (CANN).
        let (_, _, ev) = {
            let st = active_state()?;
            lookup_event(&st, event)?
        };
        ev.synchronize();
        Ok(())
    })
}

pub(crate) unsafe fn memcpy_async(
    dst: *mut c_void,
    dest_max: usize,
    src: *const c_void,
    count: usize,
    kind: aclrtMemcpyKind,
    stream: aclrtStream,
) -> aclError {
    status_of(|| {
        let mut st = active_state()?;
        let plan = plan_copy(&st, dst as usize, dest_max, src as usize, count, kind)?;
        let (queue, device) = resolve_stream(&mut st, stream)?;
        if let Some((plan, _)) = &plan
            && let Some(other) = plan
                .devices()
                .find(|&d| d != device && !st.devices[device].peers.contains(&d))
        {
            crate::state::report(format!(
                "aclrtMemcpyAsync on a device {device} stream touches device {other} memory, \
                 without peer access from device {device} to it (aclrtDeviceEnablePeerAccess)"
            ));
        }
        if let Some((plan, count)) = plan {
            let plan = if kind == crate::copy::MEMCPY_HOST_TO_BUF_TO_DEVICE {
                // SAFETY: the host source is valid for `count` bytes during the call, by
                // the C contract.
                unsafe { plan.buffered(count) }
            } else {
                plan
            };
            queue.submit(crate::stream::Task::Copy(plan, count));
        }
        Ok(())
    })
}

pub(crate) unsafe fn get_soc_name() -> *const c_char {
    let st = state();
    if st.life != Life::Active {
        fail(ACL_ERROR_UNINITIALIZE, "aclInit has not been called".into());
        return std::ptr::null();
    }
    let d = st.current_device_quiet().unwrap_or(0);
    st.devices[d].soc.as_ptr()
}

pub(crate) unsafe fn get_recent_err_msg() -> *const c_char {
    crate::errmsg::fetch()
}
