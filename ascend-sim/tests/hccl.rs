//! Simulated HCCL through its C entry points: the collectives' results, the vendor's
//! argument checks, the meetings (mismatches and missing ranks end in typed errors within
//! the timeout), root infos, buffer checks and the live-object counters. One process with
//! five devices and a short timeout; the tests run one at a time (they read process-wide
//! counters and measure waits).

mod common;

use ascend_sim::api;
use ascend_sim::hccl::HcclCounters;
use ascend_sys::hccl::*;
use ascend_sys::*;
use common::*;
use half::f16;
use std::ffi::{CStr, c_void};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

const TIMEOUT_MS: u64 = 400;

fn serial() -> MutexGuard<'static, ()> {
    static SERIAL: Mutex<()> = Mutex::new(());
    let g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    init_with(&[
        (
            "ASCEND_SIM_DEVICES",
            "Ascend910B4,Ascend910B4,Ascend910B4,Ascend910B4,Ascend910A",
        ),
        ("ASCEND_SIM_HCCL_TIMEOUT_MS", "400"),
    ]);
    g
}

/// A raw handle that may cross threads (the simulator's handles are thread-agnostic).
#[derive(Clone, Copy)]
struct H(usize);
impl H {
    fn p<T>(self) -> *mut T {
        self.0 as *mut T
    }
}
fn h<T>(p: *mut T) -> H {
    H(p as usize)
}

/// `HcclCommInitAll` (which, like HCCL, needs a current device on the calling thread).
fn init_all(devices: &[i32]) -> Vec<H> {
    set_device(devices[0]);
    let mut ids = devices.to_vec();
    let mut comms = vec![std::ptr::null_mut(); devices.len()];
    // SAFETY: `ids` and `comms` hold `devices.len()` elements each.
    let rc =
        unsafe { api::HcclCommInitAll(ids.len() as u32, ids.as_mut_ptr(), comms.as_mut_ptr()) };
    assert_eq!(rc, HCCL_SUCCESS, "{}", err_msg());
    reset_device(devices[0]);
    comms.into_iter().map(h).collect()
}

/// `HcclCommDestroy` (from a thread with a current device, as HCCL needs).
fn destroy(comm: H) {
    set_device(0);
    // SAFETY: a communicator handle.
    let rc = unsafe { api::HcclCommDestroy(comm.p()) };
    assert_eq!(rc, HCCL_SUCCESS, "{}", err_msg());
    reset_device(0);
}

fn hccl_counters() -> HcclCounters {
    ascend_sim::hccl::counters()
}

/// Runs `f(rank, device)` on one thread per device (each with its device set, reset
/// afterwards), returning the results in rank order.
fn per_rank<R: Send>(devices: &[i32], f: impl Fn(usize, i32) -> R + Sync) -> Vec<R> {
    std::thread::scope(|s| {
        let f = &f;
        let handles: Vec<_> = devices
            .iter()
            .enumerate()
            .map(|(rank, &d)| {
                s.spawn(move || {
                    set_device(d);
                    let out = f(rank, d);
                    reset_device(d);
                    out
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("rank thread"))
            .collect()
    })
}

fn upload<T: Copy>(values: &[T]) -> *mut c_void {
    let p = malloc(std::mem::size_of_val(values).max(1));
    h2d(p, values);
    p
}

#[allow(clippy::too_many_arguments)]
fn all_reduce(
    send: *mut c_void,
    recv: *mut c_void,
    count: u64,
    dt: HcclDataType,
    op: HcclReduceOp,
    comm: H,
    s: aclrtStream,
) -> HcclResult {
    // SAFETY: simulator handles and device pointers (or deliberately bad ones).
    unsafe { api::HcclAllReduce(send, recv, count, dt, op, comm.p(), s) }
}

/// Every rank's values: rank r, element i.
fn value(rank: usize, i: usize) -> f32 {
    ((rank * 7 + i * 3) % 11) as f32 * 0.25 - 1.0
}

#[test]
fn all_reduce_combines_in_rank_order_on_every_rank() {
    let _g = serial();
    let devices = [0, 1, 2, 3];
    let comms = init_all(&devices);
    let n = 33;
    for op in [
        HCCL_REDUCE_SUM,
        HCCL_REDUCE_PROD,
        HCCL_REDUCE_MAX,
        HCCL_REDUCE_MIN,
    ] {
        let want: Vec<f32> = (0..n)
            .map(|i| {
                (1..4).fold(value(0, i), |acc, r| match op {
                    HCCL_REDUCE_SUM => acc + value(r, i),
                    HCCL_REDUCE_PROD => acc * value(r, i),
                    HCCL_REDUCE_MAX => acc.max(value(r, i)),
                    _ => acc.min(value(r, i)),
                })
            })
            .collect();
        let got = per_rank(&devices, |rank, _| {
            let s = create_stream();
            let mine: Vec<f32> = (0..n).map(|i| value(rank, i)).collect();
            let send = upload(&mine);
            let recv = malloc(n * 4);
            let rc = all_reduce(
                send,
                recv,
                n as u64,
                HCCL_DATA_TYPE_FP32,
                op,
                comms[rank],
                s,
            );
            assert_eq!(rc, HCCL_SUCCESS, "{}", err_msg());
            assert_eq!(sync(s), ACL_SUCCESS, "{}", err_msg());
            let out: Vec<f32> = d2h(recv, n);
            free(send);
            free(recv);
            destroy_stream(s);
            out
        });
        for (rank, out) in got.iter().enumerate() {
            assert_eq!(out, &want, "op {op}, rank {rank}");
        }
    }
    // Half types: each step rounded to the type (f32 arithmetic, round to nearest even).
    let got = per_rank(&devices, |rank, _| {
        let s = create_stream();
        let mine: Vec<f16> = (0..n)
            .map(|i| f16::from_f32(value(rank, i) * 0.1))
            .collect();
        let send = upload(&mine);
        let rc = all_reduce(
            send,
            send,
            n as u64,
            HCCL_DATA_TYPE_FP16,
            HCCL_REDUCE_SUM,
            comms[rank],
            s,
        );
        assert_eq!(rc, HCCL_SUCCESS, "in place: {}", err_msg());
        assert_eq!(sync(s), ACL_SUCCESS, "{}", err_msg());
        let out: Vec<u16> = d2h(send, n);
        free(send);
        destroy_stream(s);
        out
    });
    for i in 0..n {
        let mut acc = f16::from_f32(value(0, i) * 0.1);
        for r in 1..4 {
            acc = f16::from_f32(acc.to_f32() + f16::from_f32(value(r, i) * 0.1).to_f32());
        }
        assert!(got.iter().all(|g| g[i] == acc.to_bits()), "element {i}");
    }
    comms.into_iter().for_each(destroy);
    assert_eq!(hccl_counters(), HcclCounters::default());
}

#[test]
fn broadcast_all_gather_and_reduce_scatter_move_the_right_elements() {
    let _g = serial();
    let devices = [1, 3, 0];
    let comms = init_all(&devices);
    let n = 5usize;
    let results = per_rank(&devices, |rank, _| {
        let s = create_stream();
        let comm = comms[rank].p();
        // Broadcast from rank 2.
        let buf = upload(&vec![rank as i32 * 100; n]);
        // SAFETY: handles and device buffers of this rank.
        let rc = unsafe { api::HcclBroadcast(buf, n as u64, HCCL_DATA_TYPE_INT32, 2, comm, s) };
        assert_eq!(rc, HCCL_SUCCESS, "{}", err_msg());
        // AllGather: every rank's n elements, rank after rank.
        let send = upload(&(0..n).map(|i| (rank * 10 + i) as i32).collect::<Vec<_>>());
        let gathered = malloc(3 * n * 4);
        // SAFETY: as above; `gathered` holds 3 * n elements.
        let rc =
            unsafe { api::HcclAllGather(send, gathered, n as u64, HCCL_DATA_TYPE_INT32, comm, s) };
        assert_eq!(rc, HCCL_SUCCESS, "{}", err_msg());
        // ReduceScatter: rank r gets the sum of chunk r of every rank's 3 * n elements.
        let big = upload(
            &(0..3 * n)
                .map(|i| (rank + 1) as i32 * i as i32)
                .collect::<Vec<_>>(),
        );
        let part = malloc(n * 4);
        // SAFETY: as above.
        let rc = unsafe {
            api::HcclReduceScatter(
                big,
                part,
                n as u64,
                HCCL_DATA_TYPE_INT32,
                HCCL_REDUCE_SUM,
                comm,
                s,
            )
        };
        assert_eq!(rc, HCCL_SUCCESS, "{}", err_msg());
        // SAFETY: as above.
        assert_eq!(
            unsafe { api::HcclBarrier(comm, s) },
            HCCL_SUCCESS,
            "{}",
            err_msg()
        );
        assert_eq!(sync(s), ACL_SUCCESS, "{}", err_msg());
        let out = (
            d2h::<i32>(buf, n),
            d2h::<i32>(gathered, 3 * n),
            d2h::<i32>(part, n),
        );
        for p in [buf, send, gathered, big, part] {
            free(p);
        }
        destroy_stream(s);
        out
    });
    for (rank, (b, g, p)) in results.iter().enumerate() {
        assert_eq!(b, &vec![200; n], "broadcast, rank {rank}");
        let want_g: Vec<i32> = (0..3)
            .flat_map(|r| (0..n).map(move |i| (r * 10 + i) as i32))
            .collect();
        assert_eq!(g, &want_g, "all-gather, rank {rank}");
        let want_p: Vec<i32> = (0..n).map(|i| 6 * (rank * n + i) as i32).collect();
        assert_eq!(p, &want_p, "reduce-scatter, rank {rank}");
    }
    comms.into_iter().for_each(destroy);
}

#[test]
fn arguments_are_checked_in_the_vendors_order() {
    let _g = serial();
    let comms = init_all(&[0, 1]);
    let c0 = comms[0];
    // No current device on this thread: HCCL asks the runtime first.
    let rc = std::thread::scope(|s| {
        s.spawn(|| {
            all_reduce(
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                0,
                0,
                0,
                c0,
                std::ptr::null_mut(),
            )
        })
        .join()
        .unwrap()
    });
    assert_eq!(rc, HCCL_E_RUNTIME);
    set_device(0);
    let s = create_stream();
    let buf = malloc(64);
    let nul = std::ptr::null_mut();
    // A zero count succeeds before anything else is looked at (no meeting either).
    assert_eq!(all_reduce(nul, nul, 0, 99, 99, H(0), nul), HCCL_SUCCESS);
    let rc = all_reduce(buf, buf, 4, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, H(0), s);
    assert_eq!(rc, HCCL_E_PTR);
    assert_err_msg_contains(&["HcclAllReduce failed with HCCL_E_PTR (2)", "comm is NULL"]);
    assert_eq!(
        all_reduce(nul, buf, 4, HCCL_DATA_TYPE_FP32, 0, c0, s),
        HCCL_E_PTR
    );
    assert_err_msg_contains(&["sendBuf is NULL"]);
    assert_eq!(
        all_reduce(buf, nul, 4, HCCL_DATA_TYPE_FP32, 0, c0, s),
        HCCL_E_PTR
    );
    assert_eq!(all_reduce(buf, buf, 4, 12, 0, c0, s), HCCL_E_NOT_SUPPORT);
    assert_err_msg_contains(&["does not model"]);
    assert_eq!(all_reduce(buf, buf, 4, 300, 0, c0, s), HCCL_E_NOT_SUPPORT);
    assert_eq!(
        all_reduce(buf, buf, 4, HCCL_DATA_TYPE_FP32, 0, c0, nul),
        HCCL_E_PTR
    );
    assert_err_msg_contains(&["stream is NULL"]);
    assert_eq!(
        all_reduce(buf, buf, 4, HCCL_DATA_TYPE_FP32, 7, c0, s),
        HCCL_E_NOT_SUPPORT
    );
    // Atlas A2 refuses PROD on BFP16 and INT16.
    let rc = all_reduce(buf, buf, 4, HCCL_DATA_TYPE_BFP16, HCCL_REDUCE_PROD, c0, s);
    assert_eq!(rc, HCCL_E_NOT_SUPPORT);
    assert_err_msg_contains(&["PROD", "BFP16", "Ascend910B4"]);
    // A foreign pointer and a root outside the group.
    let rc = all_reduce(buf, buf, 4, HCCL_DATA_TYPE_FP32, 0, H(0x1234), s);
    assert_eq!(rc, HCCL_E_PARA);
    assert_err_msg_contains(&["not a communicator of this simulator"]);
    // SAFETY: handles and a device buffer.
    let rc = unsafe { api::HcclBroadcast(buf, 4, HCCL_DATA_TYPE_FP32, 2, c0.p(), s) };
    assert_eq!(rc, HCCL_E_PARA);
    assert_err_msg_contains(&["root 2 is not a rank"]);
    // Buffers: inside one allocation of the rank's device, count elements long.
    let rc = all_reduce(buf, buf, 17, HCCL_DATA_TYPE_FP32, 0, c0, s);
    assert_eq!(rc, HCCL_E_PARA);
    assert_err_msg_contains(&["overruns the device allocation"]);
    let host = [0f32; 4];
    let rc = all_reduce(
        host.as_ptr() as *mut c_void,
        buf,
        4,
        HCCL_DATA_TYPE_FP32,
        0,
        c0,
        s,
    );
    assert_eq!(rc, HCCL_E_PARA);
    assert_err_msg_contains(&["not inside any live device allocation"]);
    // Memory and a stream of device 1, made on another thread.
    let (other, s1) = std::thread::scope(|sc| {
        sc.spawn(|| {
            set_device(1);
            (h(malloc(64)), h(create_stream()))
        })
        .join()
        .unwrap()
    });
    let (other, s1): (*mut c_void, aclrtStream) = (other.p(), s1.p());
    let rc = all_reduce(buf, other, 4, HCCL_DATA_TYPE_FP32, 0, c0, s);
    assert_eq!(rc, HCCL_E_PARA);
    assert_err_msg_contains(&[
        "memory of device 1",
        "rank 0 of the communicator is on device 0",
    ]);
    let rc = all_reduce(buf, buf, 4, HCCL_DATA_TYPE_FP32, 0, c0, s1);
    assert_eq!(rc, HCCL_E_PARA);
    assert_err_msg_contains(&["belongs to device 1"]);
    // The rank on device 1 with its stream, from a thread whose context is device 0.
    let rc = all_reduce(other, other, 4, HCCL_DATA_TYPE_FP32, 0, comms[1], s1);
    assert_eq!(rc, HCCL_E_RUNTIME);
    assert_err_msg_contains(&["current context is on device 0"]);
    // Queries.
    let (mut size, mut rank) = (0u32, 0u32);
    // SAFETY: valid out-pointers and handles.
    unsafe {
        assert_eq!(api::HcclGetRankSize(comms[1].p(), &mut size), HCCL_SUCCESS);
        assert_eq!(api::HcclGetRankId(comms[1].p(), &mut rank), HCCL_SUCCESS);
        assert_eq!(
            api::HcclGetRankId(comms[1].p(), std::ptr::null_mut()),
            HCCL_E_PTR
        );
        assert_eq!(
            api::HcclGetRankSize(std::ptr::null_mut(), &mut size),
            HCCL_E_PTR
        );
    }
    assert_eq!((size, rank), (2, 1));
    // HcclCommInitAll's own checks.
    let mut comm_out = [std::ptr::null_mut(); 2];
    let mut dup = [1, 1];
    // SAFETY: arrays of two elements.
    unsafe {
        assert_eq!(
            api::HcclCommInitAll(0, dup.as_mut_ptr(), comm_out.as_mut_ptr()),
            HCCL_E_PARA
        );
        assert_eq!(
            api::HcclCommInitAll(2, dup.as_mut_ptr(), comm_out.as_mut_ptr()),
            HCCL_E_PARA
        );
        assert_err_msg_contains(&["both device 1"]);
        let mut bad = [0, 9];
        assert_eq!(
            api::HcclCommInitAll(2, bad.as_mut_ptr(), comm_out.as_mut_ptr()),
            HCCL_E_INTERNAL
        );
        assert_eq!(
            api::HcclCommInitAll(2, bad.as_mut_ptr(), std::ptr::null_mut()),
            HCCL_E_PTR
        );
    }
    // Destroy: NULL is accepted, a stale handle is not.
    // SAFETY: handles.
    unsafe {
        assert_eq!(api::HcclCommDestroy(std::ptr::null_mut()), HCCL_SUCCESS);
    }
    comms.iter().copied().for_each(destroy);
    // SAFETY: a destroyed handle.
    assert_eq!(unsafe { api::HcclCommDestroy(c0.p()) }, HCCL_E_PARA);
    assert_err_msg_contains(&["stale", "destroyed by HcclCommDestroy"]);
    assert_eq!(
        all_reduce(buf, buf, 4, HCCL_DATA_TYPE_FP32, 0, c0, s),
        HCCL_E_PARA
    );
    destroy_stream(s1);
    free(other);
    destroy_stream(s);
    free(buf);
    reset_device(0);
    reset_device(1);
}

#[test]
fn the_training_series_refuses_int16_reductions() {
    let _g = serial();
    let comms = init_all(&[4, 0]);
    set_device(4);
    let s = create_stream();
    let buf = malloc(64);
    let rc = all_reduce(
        buf,
        buf,
        4,
        HCCL_DATA_TYPE_INT16,
        HCCL_REDUCE_SUM,
        comms[0],
        s,
    );
    assert_eq!(rc, HCCL_E_NOT_SUPPORT);
    assert_err_msg_contains(&["INT16", "Ascend910A"]);
    free(buf);
    destroy_stream(s);
    reset_device(4);
    comms.into_iter().for_each(destroy);
}

#[test]
fn ranks_that_disagree_all_fail_with_para() {
    let _g = serial();
    let devices = [0, 1, 2];
    let comms = init_all(&devices);
    type Call = (u64, HcclDataType, HcclReduceOp);
    let cases: [(&str, [Call; 3]); 3] = [
        (
            "count 8 where rank 0 has 4",
            [(4, 4, 0), (4, 4, 0), (8, 4, 0)],
        ),
        (
            "dtype FP16 where rank 0 has FP32",
            [(4, 4, 0), (4, 3, 0), (4, 4, 0)],
        ),
        (
            "op MAX where rank 0 has SUM",
            [(4, 4, 0), (4, 4, 2), (4, 4, 0)],
        ),
    ];
    for (text, calls) in cases {
        let started = Instant::now();
        let got = per_rank(&devices, |rank, _| {
            let s = create_stream();
            let buf = malloc(64);
            let (count, dt, op) = calls[rank];
            let rc = all_reduce(buf, buf, count, dt, op, comms[rank], s);
            let msg = err_msg();
            assert_eq!(sync(s), ACL_SUCCESS, "nothing was enqueued");
            free(buf);
            destroy_stream(s);
            (rc, msg)
        });
        assert!(
            started.elapsed() < Duration::from_millis(TIMEOUT_MS),
            "no waiting out the timeout"
        );
        for (rank, (rc, msg)) in got.iter().enumerate() {
            assert_eq!(*rc, HCCL_E_PARA, "{text}: rank {rank}: {msg}");
            assert!(
                msg.contains(text) && msg.contains("HCCL_E_PARA"),
                "rank {rank}: {msg}"
            );
        }
    }
    // A different collective, and a different root.
    let got = per_rank(&devices, |rank, _| {
        let s = create_stream();
        let buf = malloc(64);
        let comm = comms[rank].p();
        // SAFETY: handles and device buffers of this rank.
        let (rc, roots) = unsafe {
            let rc = if rank == 1 {
                api::HcclBroadcast(buf, 4, HCCL_DATA_TYPE_FP32, 0, comm, s)
            } else {
                api::HcclAllReduce(buf, buf, 4, HCCL_DATA_TYPE_FP32, 0, comm, s)
            };
            let root = rank.min(1) as u32;
            (
                rc,
                api::HcclBroadcast(buf, 4, HCCL_DATA_TYPE_FP32, root, comm, s),
            )
        };
        free(buf);
        destroy_stream(s);
        (rc, roots)
    });
    assert!(
        got.iter()
            .all(|&(a, b)| a == HCCL_E_PARA && b == HCCL_E_PARA),
        "{got:?}"
    );
    // The meetings stay in step: a matching call afterwards works.
    let got = per_rank(&devices, |rank, _| {
        let s = create_stream();
        let buf = upload(&[rank as f32; 4]);
        let rc = all_reduce(
            buf,
            buf,
            4,
            HCCL_DATA_TYPE_FP32,
            HCCL_REDUCE_SUM,
            comms[rank],
            s,
        );
        assert_eq!(sync(s), ACL_SUCCESS, "{}", err_msg());
        let out: Vec<f32> = d2h(buf, 4);
        free(buf);
        destroy_stream(s);
        (rc, out)
    });
    assert!(
        got.iter()
            .all(|(rc, out)| *rc == HCCL_SUCCESS && out == &[3.0; 4]),
        "{got:?}"
    );
    comms.into_iter().for_each(destroy);
}

#[test]
fn a_rank_that_never_calls_times_out_the_others() {
    let _g = serial();
    let devices = [0, 1, 2];
    let comms = init_all(&devices);
    let started = Instant::now();
    let got = per_rank(&devices[..2], |rank, _| {
        let s = create_stream();
        let buf = malloc(16);
        let rc = all_reduce(buf, buf, 4, HCCL_DATA_TYPE_FP32, 0, comms[rank], s);
        let msg = err_msg();
        free(buf);
        destroy_stream(s);
        (rc, msg)
    });
    let waited = started.elapsed();
    assert!(waited >= Duration::from_millis(TIMEOUT_MS), "{waited:?}");
    assert!(
        waited < Duration::from_millis(10 * TIMEOUT_MS),
        "{waited:?}"
    );
    for (rc, msg) in &got {
        assert_eq!(*rc, HCCL_E_TIMEOUT, "{msg}");
        assert!(
            msg.contains("rank(s) [2] did not call it within 400 ms"),
            "{msg}"
        );
    }
    // The late rank finds the meeting given up and fails at once.
    let started = Instant::now();
    let late = per_rank(&devices[2..], |_, _| {
        let s = create_stream();
        let buf = malloc(16);
        let rc = all_reduce(buf, buf, 4, HCCL_DATA_TYPE_FP32, 0, comms[2], s);
        free(buf);
        destroy_stream(s);
        rc
    });
    assert_eq!(late, [HCCL_E_TIMEOUT]);
    assert!(started.elapsed() < Duration::from_millis(TIMEOUT_MS));
    comms.into_iter().for_each(destroy);
}

#[test]
fn a_stream_that_never_reaches_the_collective_times_out_its_peers() {
    let _g = serial();
    let devices = [0, 1];
    let comms = init_all(&devices);
    let got = per_rank(&devices, |rank, _| {
        let s = create_stream();
        // Rank 1's stream is held until long after the timeout.
        let hold = (rank == 1).then(|| ascend_sim::testing::hold_stream(s).expect("hold"));
        let buf = malloc(16);
        let rc = all_reduce(buf, buf, 4, HCCL_DATA_TYPE_FP32, 0, comms[rank], s);
        assert_eq!(rc, HCCL_SUCCESS, "the calls meet: {}", err_msg());
        if let Some(hold) = hold {
            std::thread::sleep(Duration::from_millis(2 * TIMEOUT_MS));
            hold.release();
        }
        let synced = sync(s);
        let msg = err_msg();
        let mut async_error = HCCL_SUCCESS;
        // SAFETY: a live handle and an out-pointer.
        let rc = unsafe { api::HcclGetCommAsyncError(comms[rank].p(), &mut async_error) };
        assert_eq!(rc, HCCL_SUCCESS);
        free(buf);
        destroy_stream(s);
        (synced, msg, async_error)
    });
    for (rank, (synced, msg, async_error)) in got.iter().enumerate() {
        assert_eq!(*synced, ACL_ERROR_RT_INTERNAL_ERROR, "rank {rank}");
        assert!(msg.contains("HCCL_E_TIMEOUT"), "rank {rank}: {msg}");
        assert_eq!(*async_error, HCCL_E_TIMEOUT, "rank {rank}");
    }
    assert!(
        got[0].1.contains("rank(s) [1] did not reach it"),
        "{}",
        got[0].1
    );
    assert_eq!(hccl_counters().queued_collectives, 0);
    comms.into_iter().for_each(destroy);
}

#[test]
fn memory_freed_under_a_queued_collective_is_reported() {
    let _g = serial();
    let devices = [0, 1];
    let comms = init_all(&devices);
    let got = per_rank(&devices, |rank, _| {
        let s = create_stream();
        let hold = ascend_sim::testing::hold_stream(s).expect("hold");
        let buf = malloc(16);
        let rc = all_reduce(buf, buf, 4, HCCL_DATA_TYPE_FP32, 0, comms[rank], s);
        assert_eq!(rc, HCCL_SUCCESS, "{}", err_msg());
        if rank == 1 {
            free(buf);
        }
        hold.release();
        let synced = sync(s);
        let msg = err_msg();
        if rank == 0 {
            free(buf);
        }
        destroy_stream(s);
        (synced, msg)
    });
    for (rank, (synced, msg)) in got.iter().enumerate() {
        assert_eq!(*synced, ACL_ERROR_RT_INTERNAL_ERROR, "rank {rank}");
        assert!(
            msg.contains("rank 1's") && msg.contains("freed while queued work"),
            "{msg}"
        );
    }
    comms.into_iter().for_each(destroy);
}

#[test]
fn root_info_joins_ranks_across_threads() {
    let _g = serial();
    set_device(0);
    let mut root = HcclRootInfo {
        internal: [0; HCCL_ROOT_INFO_BYTES as usize],
    };
    // SAFETY: a valid out-pointer.
    assert_eq!(unsafe { api::HcclGetRootInfo(&mut root) }, HCCL_SUCCESS);
    let devices = [2, 0, 3];
    let join = |root: &HcclRootInfo, n: u32, rank: u32| {
        let mut comm = std::ptr::null_mut();
        // SAFETY: a root info and an out-pointer.
        let rc = unsafe { api::HcclCommInitRootInfo(n, root, rank, &mut comm) };
        (rc, h(comm), err_msg())
    };
    let got = per_rank(&devices, |rank, _| join(&root, 3, rank as u32));
    for (rank, (rc, comm, msg)) in got.iter().enumerate() {
        assert_eq!(*rc, HCCL_SUCCESS, "rank {rank}: {msg}");
        let (mut r, mut n) = (9, 9);
        // SAFETY: a live handle and out-pointers.
        unsafe {
            api::HcclGetRankId(comm.p(), &mut r);
            api::HcclGetRankSize(comm.p(), &mut n);
        }
        assert_eq!((r, n), (rank as u32, 3));
    }
    // The communicator works: rank r on device devices[r].
    let sums = per_rank(&devices, |rank, _| {
        let s = create_stream();
        let buf = upload(&[rank as f32 + 1.0; 2]);
        let rc = all_reduce(buf, buf, 2, HCCL_DATA_TYPE_FP32, 0, got[rank].1, s);
        assert_eq!((rc, sync(s)), (HCCL_SUCCESS, ACL_SUCCESS), "{}", err_msg());
        let out: Vec<f32> = d2h(buf, 2);
        free(buf);
        destroy_stream(s);
        out
    });
    assert!(sums.iter().all(|s| s == &[6.0, 6.0]), "{sums:?}");
    // A root info serves one communicator.
    let (rc, _, msg) = join(&root, 3, 0);
    assert_eq!(rc, HCCL_E_PARA);
    assert!(msg.contains("already formed"), "{msg}");
    got.iter().for_each(|g| destroy(g.1));
    // Garbage bytes, argument checks.
    let garbage = HcclRootInfo {
        internal: [7; HCCL_ROOT_INFO_BYTES as usize],
    };
    let (rc, _, msg) = join(&garbage, 2, 0);
    assert_eq!(rc, HCCL_E_PARA);
    assert!(msg.contains("not produced by HcclGetRootInfo"), "{msg}");
    assert_eq!(join(&root, 0, 0).0, HCCL_E_PARA);
    assert_eq!(join(&root, 2, 2).0, HCCL_E_PARA);
    // Disagreeing ranks, two ranks on one device, a missing rank: every joiner fails.
    let fresh = || {
        let mut r = HcclRootInfo {
            internal: [0; HCCL_ROOT_INFO_BYTES as usize],
        };
        // SAFETY: a valid out-pointer.
        assert_eq!(unsafe { api::HcclGetRootInfo(&mut r) }, HCCL_SUCCESS);
        r
    };
    let r = fresh();
    let got = per_rank(&[0, 1], |rank, _| join(&r, 2 + rank as u32, rank as u32));
    assert!(
        got.iter()
            .all(|g| g.0 == HCCL_E_PARA && g.2.contains("nRanks")),
        "{:?}",
        got.iter().map(|g| &g.2).collect::<Vec<_>>()
    );
    let r = fresh();
    let got = per_rank(&[1, 1], |rank, _| join(&r, 2, rank as u32));
    assert!(
        got.iter()
            .all(|g| g.0 == HCCL_E_PARA && g.2.contains("both on device 1"))
    );
    let r = fresh();
    let started = Instant::now();
    let got = per_rank(&[0, 1], |rank, _| join(&r, 3, rank as u32));
    assert!(started.elapsed() >= Duration::from_millis(TIMEOUT_MS));
    assert!(
        got.iter()
            .all(|g| g.0 == HCCL_E_TIMEOUT && g.2.contains("rank(s) [2] did not join")),
        "{}",
        got[0].2
    );
    reset_device(0);
    assert_eq!(hccl_counters(), HcclCounters::default());
}

#[test]
fn error_strings_are_the_vendors() {
    let _g = serial();
    let text = |code| {
        // SAFETY: returns a static NUL-terminated string.
        unsafe { CStr::from_ptr(api::HcclGetErrorString(code)) }
            .to_str()
            .unwrap()
            .to_owned()
    };
    assert_eq!(text(HCCL_SUCCESS), "no error");
    assert_eq!(text(HCCL_E_PARA), "parameter error");
    assert_eq!(text(HCCL_E_TIMEOUT), "timeout");
    assert_eq!(text(24), "unknow error");
    assert_eq!(
        ascend_sys::hccl::result_name(HCCL_E_NOT_SUPPORT),
        "HCCL_E_NOT_SUPPORT"
    );
}
