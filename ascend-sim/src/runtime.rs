//! `libascendcl.so`: process, devices, contexts, streams and events.

use crate::mem::{Arena, plan_copy};
use crate::state::{
    CURRENT_CTX, Context, Device, EventRec, Kind, Life, State, StreamRec, decode, encode, fail,
    finding, set_fault_absolute, state, symbol_index,
};
use crate::stream::{EventShared, StreamHandle, StreamShared};
use ascend_sys::*;
use std::ffi::{CStr, CString, c_char, c_void};
use std::sync::Arc;

/// Default `ASCEND_SIM_DEVICES`.
pub const DEFAULT_DEVICES: &str = "Ascend910B4";
/// Default `ASCEND_SIM_MEM_BYTES` (1 GiB).
pub const DEFAULT_MEM_BYTES: usize = 1 << 30;

fn parse_bytes(s: &str) -> Option<usize> {
    let s = s.trim();
    let (num, mult) = match s.char_indices().last()? {
        (i, 'k' | 'K') => (&s[..i], 1usize << 10),
        (i, 'm' | 'M') => (&s[..i], 1 << 20),
        (i, 'g' | 'G') => (&s[..i], 1 << 30),
        _ => (s, 1),
    };
    num.trim().parse::<usize>().ok()?.checked_mul(mult)
}

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
    let devices = std::env::var("ASCEND_SIM_DEVICES").unwrap_or_else(|_| DEFAULT_DEVICES.into());
    let socs: Vec<&str> = devices.split(',').map(str::trim).collect();
    if socs.iter().any(|s| s.is_empty()) {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            format!("ASCEND_SIM_DEVICES={devices:?} has an empty SoC name"),
        );
    }
    let mem = match std::env::var("ASCEND_SIM_MEM_BYTES") {
        Ok(v) => match parse_bytes(&v) {
            Some(n) if n > 0 => n,
            _ => {
                return fail(
                    ACL_ERROR_INVALID_PARAM,
                    format!("ASCEND_SIM_MEM_BYTES={v:?} is not a positive byte count"),
                );
            }
        },
        Err(_) => DEFAULT_MEM_BYTES,
    };
    let mut faults = Vec::new();
    if let Ok(spec) = std::env::var("ASCEND_SIM_FAULT") {
        for item in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let parsed = item.split_once(':').and_then(|(sym, n)| {
                Some((symbol_index(sym.trim())?, n.trim().parse::<u64>().ok()?))
            });
            match parsed {
                Some(f) => faults.push(f),
                None => {
                    return fail(
                        ACL_ERROR_INVALID_PARAM,
                        format!(
                            "ASCEND_SIM_FAULT item {item:?} is not `symbol:n` with a simulated symbol"
                        ),
                    );
                }
            }
        }
    }
    let mut devs = Vec::with_capacity(socs.len());
    for soc in socs {
        let arena = match Arena::reserve(mem) {
            Ok(a) => a,
            Err(m) => return fail(ACL_ERROR_RT_DEV_SETUP_ERROR, m),
        };
        let name = CString::new(soc).unwrap_or_default();
        devs.push(Device {
            // Leaked once per device; aclInit runs at most once per process.
            soc: Box::leak(name.into_boxed_c_str()),
            arena,
            refcount: 0,
            default_ctx: None,
        });
    }
    for (i, n) in faults {
        set_fault_absolute(i, n);
    }
    st.devices = devs;
    st.life = Life::Active;
    ACL_SUCCESS
}

pub(crate) unsafe fn finalize() -> aclError {
    let handles = {
        let mut st = state();
        if let Err(e) = st.require_active() {
            return e;
        }
        let c = st.counters();
        if c != crate::Counters::default() {
            crate::state::report(format!("aclFinalize with live objects: {c:?}"));
        }
        let mut handles: Vec<StreamHandle> = st.streams.drain().map(|(_, s)| s.handle).collect();
        handles.extend(
            st.contexts
                .values_mut()
                .filter_map(|c| c.default_stream.take()),
        );
        st.life = Life::Finalized;
        handles
    };
    CURRENT_CTX.with(|c| c.set(0));
    for h in handles {
        h.shutdown();
    }
    ACL_SUCCESS
}

fn check_device(st: &State, id: i32) -> Result<usize, i32> {
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
    let mut st = state();
    if let Err(e) = st.require_active() {
        return e;
    }
    let d = match check_device(&st, device_id) {
        Ok(d) => d,
        Err(e) => return e,
    };
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
    ACL_SUCCESS
}

pub(crate) unsafe fn reset_device(device_id: i32) -> aclError {
    let handles = {
        let mut st = state();
        if let Err(e) = st.require_active() {
            return e;
        }
        let d = match check_device(&st, device_id) {
            Ok(d) => d,
            Err(e) => return e,
        };
        if st.devices[d].refcount == 0 {
            return finding(
                ACL_ERROR_RT_PARAM_INVALID,
                format!("device {d} is not set (aclrtSetDevice reference count is 0)"),
            );
        }
        st.devices[d].refcount -= 1;
        if st.devices[d].refcount > 0 {
            return ACL_SUCCESS;
        }
        let Some(ctx) = st.devices[d].default_ctx.take() else {
            return ACL_SUCCESS;
        };
        let mut handles = Vec::new();
        if let Some(mut c) = st.contexts.remove(&ctx) {
            handles.extend(c.default_stream.take());
        }
        st.dead.insert(ctx, "released by aclrtResetDevice");
        let ids: Vec<u64> = st
            .streams
            .iter()
            .filter(|(_, s)| s.ctx == ctx)
            .map(|(id, _)| *id)
            .collect();
        for id in ids {
            if let Some(s) = st.streams.remove(&id) {
                handles.push(s.handle);
            }
            st.dead.insert(id, "released by aclrtResetDevice");
        }
        handles
    };
    for h in handles {
        h.shutdown();
    }
    ACL_SUCCESS
}

pub(crate) unsafe fn get_device(device_id: *mut i32) -> aclError {
    let st = state();
    if let Err(e) = st.require_active() {
        return e;
    }
    if device_id.is_null() {
        return fail(ACL_ERROR_INVALID_PARAM, "deviceId is NULL".into());
    }
    match st.current_ctx() {
        Ok((_, d)) => {
            // SAFETY: non-null and writable by the C contract.
            unsafe { *device_id = d as i32 };
            ACL_SUCCESS
        }
        Err(e) => e,
    }
}

pub(crate) unsafe fn get_device_count(count: *mut u32) -> aclError {
    let st = state();
    if let Err(e) = st.require_active() {
        return e;
    }
    if count.is_null() {
        return fail(ACL_ERROR_INVALID_PARAM, "count is NULL".into());
    }
    // SAFETY: non-null and writable by the C contract.
    unsafe { *count = st.devices.len() as u32 };
    ACL_SUCCESS
}

pub(crate) unsafe fn create_context(context: *mut aclrtContext, device_id: i32) -> aclError {
    let mut st = state();
    if let Err(e) = st.require_active() {
        return e;
    }
    if context.is_null() {
        return fail(ACL_ERROR_INVALID_PARAM, "context is NULL".into());
    }
    let d = match check_device(&st, device_id) {
        Ok(d) => d,
        Err(e) => return e,
    };
    let id = st.fresh_id();
    st.contexts.insert(
        id,
        Context {
            device: d,
            explicit: true,
            default_stream: None,
        },
    );
    CURRENT_CTX.with(|c| c.set(id));
    // SAFETY: non-null and writable by the C contract.
    unsafe { *context = encode(Kind::Context, id) };
    ACL_SUCCESS
}

fn lookup_ctx(st: &State, context: aclrtContext) -> Result<u64, i32> {
    let id = decode(Kind::Context, context).map_err(|m| {
        if context.is_null() {
            fail(ACL_ERROR_INVALID_PARAM, m)
        } else {
            finding(ACL_ERROR_RT_INVALID_HANDLE, m)
        }
    })?;
    if st.contexts.contains_key(&id) {
        Ok(id)
    } else {
        Err(finding(
            ACL_ERROR_RT_INVALID_HANDLE,
            st.stale(Kind::Context, id),
        ))
    }
}

pub(crate) unsafe fn destroy_context(context: aclrtContext) -> aclError {
    let handles = {
        let mut st = state();
        if let Err(e) = st.require_active() {
            return e;
        }
        let id = match lookup_ctx(&st, context) {
            Ok(id) => id,
            Err(e) => return e,
        };
        if !st.contexts[&id].explicit {
            return finding(
                ACL_ERROR_RT_PARAM_INVALID,
                "a device's default context cannot be destroyed (use aclrtResetDevice)".into(),
            );
        }
        let mut handles = Vec::new();
        if let Some(mut c) = st.contexts.remove(&id) {
            handles.extend(c.default_stream.take());
        }
        st.dead.insert(id, "destroyed by aclrtDestroyContext");
        let ids: Vec<u64> = st
            .streams
            .iter()
            .filter(|(_, s)| s.ctx == id)
            .map(|(sid, _)| *sid)
            .collect();
        if !ids.is_empty() {
            crate::state::report(format!(
                "aclrtDestroyContext: {} stream(s) of the context were still alive and were destroyed with it (destroy streams first)",
                ids.len()
            ));
        }
        for sid in ids {
            if let Some(s) = st.streams.remove(&sid) {
                handles.push(s.handle);
            }
            st.dead.insert(sid, "destroyed with its context");
        }
        handles
    };
    for h in handles {
        h.shutdown();
    }
    ACL_SUCCESS
}

pub(crate) unsafe fn set_current_context(context: aclrtContext) -> aclError {
    let st = state();
    if let Err(e) = st.require_active() {
        return e;
    }
    match lookup_ctx(&st, context) {
        Ok(id) => {
            CURRENT_CTX.with(|c| c.set(id));
            ACL_SUCCESS
        }
        Err(e) => e,
    }
}

pub(crate) unsafe fn get_current_context(context: *mut aclrtContext) -> aclError {
    let st = state();
    if let Err(e) = st.require_active() {
        return e;
    }
    if context.is_null() {
        return fail(ACL_ERROR_INVALID_PARAM, "context is NULL".into());
    }
    match st.current_ctx() {
        Ok((id, _)) => {
            // SAFETY: non-null and writable by the C contract.
            unsafe { *context = encode(Kind::Context, id) };
            ACL_SUCCESS
        }
        Err(e) => e,
    }
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
            let h = StreamHandle::spawn(format!("ascend-sim-default-{ctx}"))
                .map_err(|m| fail(ACL_ERROR_RT_INTERNAL_ERROR, m))?;
            c.default_stream = Some(h);
        }
        let shared = c.default_stream.as_ref().map(|h| Arc::clone(&h.shared));
        return shared
            .map(|s| (s, device))
            .ok_or_else(|| fail(ACL_ERROR_RT_INTERNAL_ERROR, "no default stream".into()));
    }
    let id = decode(Kind::Stream, stream).map_err(|m| finding(ACL_ERROR_RT_INVALID_HANDLE, m))?;
    let Some(s) = st.streams.get(&id) else {
        return Err(finding(
            ACL_ERROR_RT_INVALID_HANDLE,
            st.stale(Kind::Stream, id),
        ));
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
    let mut st = state();
    if let Err(e) = st.require_active() {
        return e;
    }
    if stream.is_null() {
        return fail(ACL_ERROR_INVALID_PARAM, "stream is NULL".into());
    }
    let (ctx, device) = match st.current_ctx() {
        Ok(c) => c,
        Err(e) => return e,
    };
    let id = st.fresh_id();
    let handle = match StreamHandle::spawn(format!("ascend-sim-stream-{id}")) {
        Ok(h) => h,
        Err(m) => return fail(ACL_ERROR_RT_INTERNAL_ERROR, m),
    };
    st.streams.insert(
        id,
        StreamRec {
            ctx,
            device,
            handle,
        },
    );
    // SAFETY: non-null and writable by the C contract.
    unsafe { *stream = encode(Kind::Stream, id) };
    ACL_SUCCESS
}

pub(crate) unsafe fn destroy_stream(stream: aclrtStream) -> aclError {
    let handle = {
        let mut st = state();
        if let Err(e) = st.require_active() {
            return e;
        }
        if stream.is_null() {
            return fail(
                ACL_ERROR_INVALID_PARAM,
                "stream is NULL (the default stream cannot be destroyed)".into(),
            );
        }
        let id = match decode(Kind::Stream, stream) {
            Ok(id) => id,
            Err(m) => return finding(ACL_ERROR_RT_INVALID_HANDLE, m),
        };
        let Some(s) = st.streams.remove(&id) else {
            let m = st.stale(Kind::Stream, id);
            return finding(ACL_ERROR_RT_INVALID_HANDLE, m);
        };
        st.dead.insert(id, "destroyed by aclrtDestroyStream");
        s.handle
    };
    // Drains queued work; an error in it was already reported when it happened.
    handle.shutdown();
    ACL_SUCCESS
}

fn async_error(msg: String) -> aclError {
    finding(
        ACL_ERROR_RT_INTERNAL_ERROR,
        format!("error in asynchronous work on the stream: {msg}"),
    )
}

pub(crate) unsafe fn synchronize_stream(stream: aclrtStream) -> aclError {
    let shared = {
        let mut st = state();
        if let Err(e) = st.require_active() {
            return e;
        }
        match resolve_stream(&mut st, stream) {
            Ok((s, _)) => s,
            Err(e) => return e,
        }
    };
    match shared.synchronize() {
        None => ACL_SUCCESS,
        Some(m) => async_error(m),
    }
}

pub(crate) unsafe fn create_event(event: *mut aclrtEvent) -> aclError {
    let mut st = state();
    if let Err(e) = st.require_active() {
        return e;
    }
    if event.is_null() {
        return fail(ACL_ERROR_INVALID_PARAM, "event is NULL".into());
    }
    let (_, device) = match st.current_ctx() {
        Ok(c) => c,
        Err(e) => return e,
    };
    let id = st.fresh_id();
    st.events.insert(
        id,
        EventRec {
            device,
            shared: Arc::new(EventShared::default()),
        },
    );
    // SAFETY: non-null and writable by the C contract.
    unsafe { *event = encode(Kind::Event, id) };
    ACL_SUCCESS
}

fn lookup_event(st: &State, event: aclrtEvent) -> Result<(u64, Arc<EventShared>), i32> {
    let id = decode(Kind::Event, event).map_err(|m| {
        if event.is_null() {
            fail(ACL_ERROR_INVALID_PARAM, m)
        } else {
            finding(ACL_ERROR_RT_INVALID_HANDLE, m)
        }
    })?;
    match st.events.get(&id) {
        Some(e) => {
            let _ = e.device;
            Ok((id, Arc::clone(&e.shared)))
        }
        None => Err(finding(
            ACL_ERROR_RT_INVALID_HANDLE,
            st.stale(Kind::Event, id),
        )),
    }
}

pub(crate) unsafe fn destroy_event(event: aclrtEvent) -> aclError {
    let mut st = state();
    if let Err(e) = st.require_active() {
        return e;
    }
    match lookup_event(&st, event) {
        Ok((id, _)) => {
            st.events.remove(&id);
            st.dead.insert(id, "destroyed by aclrtDestroyEvent");
            ACL_SUCCESS
        }
        Err(e) => e,
    }
}

pub(crate) unsafe fn record_event(event: aclrtEvent, stream: aclrtStream) -> aclError {
    with_event_and_stream(event, stream, |ev, s| ev.record(s))
}

pub(crate) unsafe fn stream_wait_event(stream: aclrtStream, event: aclrtEvent) -> aclError {
    with_event_and_stream(event, stream, |ev, s| ev.wait_on(s))
}

/// Checks the runtime, the event handle and the stream (under the current context), in
/// that order, then enqueues `act`'s work: the shared part of record and wait.
fn with_event_and_stream(
    event: aclrtEvent,
    stream: aclrtStream,
    act: impl FnOnce(&Arc<EventShared>, &StreamShared),
) -> aclError {
    let mut st = state();
    let checked = st.require_active().and_then(|()| {
        let (_, ev) = lookup_event(&st, event)?;
        let (s, _) = resolve_stream(&mut st, stream)?;
        Ok((ev, s))
    });
    match checked {
        Ok((ev, s)) => {
            act(&ev, &s);
            ACL_SUCCESS
        }
        Err(e) => e,
    }
}

pub(crate) unsafe fn synchronize_event(event: aclrtEvent) -> aclError {
    let ev = {
        let st = state();
        if let Err(e) = st.require_active() {
            return e;
        }
        match lookup_event(&st, event) {
            Ok((_, ev)) => ev,
            Err(e) => return e,
        }
    };
    ev.synchronize();
    ACL_SUCCESS
}

pub(crate) unsafe fn memcpy_async(
    dst: *mut c_void,
    dest_max: usize,
    src: *const c_void,
    count: usize,
    kind: aclrtMemcpyKind,
    stream: aclrtStream,
) -> aclError {
    let mut st = state();
    if let Err(e) = st.require_active() {
        return e;
    }
    let plan = match plan_copy(&st, dst as usize, dest_max, src as usize, count, kind) {
        Ok(p) => p,
        Err(e) => return e,
    };
    let shared = match resolve_stream(&mut st, stream) {
        Ok((s, _)) => s,
        Err(e) => return e,
    };
    if let Some((plan, count)) = plan {
        shared.submit(crate::stream::Task::Copy(plan, count));
    }
    ACL_SUCCESS
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
    crate::state::err_msg_ptr()
}
