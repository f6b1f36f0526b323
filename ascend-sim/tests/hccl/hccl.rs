//! Simulated HCCL through its C entry points: the collectives' results (every rank,
//! every reduction, in rank order in the element type), the vendor's argument checks and
//! the product rules, the error strings. One process with five devices; the tests run one
//! at a time (they read process-wide counters).

use crate::common;
use crate::hccl_common;

use ascend_sim::api;
use ascend_sim::hccl::HcclCounters;
use ascend_sys::hccl::*;
use ascend_sys::*;
use common::*;
use half::f16;
use hccl_common::*;
use std::ffi::{CStr, c_void};

#[test]
fn all_reduce_combines_in_rank_order_on_every_rank() {
    let _g = hccl_serial();
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
        let got = all_reduce_per_rank(&devices, &comms, HCCL_DATA_TYPE_FP32, op, false, |rank| {
            (0..n).map(|i| value(rank, i)).collect::<Vec<f32>>()
        });
        for (rank, out) in got.iter().enumerate() {
            assert_eq!(out, &want, "op {op}, rank {rank}");
        }
    }
    // Half types, in place: each step rounded to the type (f32 arithmetic, round to nearest even).
    let got = all_reduce_per_rank(
        &devices,
        &comms,
        HCCL_DATA_TYPE_FP16,
        HCCL_REDUCE_SUM,
        true,
        |rank| {
            (0..n)
                .map(|i| f16::from_f32(value(rank, i) * 0.1).to_bits())
                .collect::<Vec<u16>>()
        },
    );
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

/// Every rank's `HcclAllReduce` of its `mine(rank)`, into a buffer of its own or, with
/// `in_place`, into the send buffer; each rank's result as read back after its stream
/// drains.
fn all_reduce_per_rank<T: Copy + Default + Send>(
    devices: &[i32],
    comms: &[H],
    dt: HcclDataType,
    op: HcclReduceOp,
    in_place: bool,
    mine: impl Fn(usize) -> Vec<T> + Sync,
) -> Vec<Vec<T>> {
    per_rank(devices, |rank, _| {
        let s = create_stream();
        let mine = mine(rank);
        let n = mine.len();
        let send = upload(&mine);
        let recv = if in_place {
            send
        } else {
            malloc(std::mem::size_of_val(mine.as_slice()))
        };
        let rc = all_reduce(send, recv, n as u64, dt, op, comms[rank], s);
        assert_eq!(rc, HCCL_SUCCESS, "in place {in_place}: {}", err_msg());
        assert_eq!(sync(s), ACL_SUCCESS, "{}", err_msg());
        let out = d2h(recv, n);
        free(send);
        if !in_place {
            free(recv);
        }
        destroy_stream(s);
        out
    })
}

#[test]
fn broadcast_all_gather_and_reduce_scatter_move_the_right_elements() {
    let _g = hccl_serial();
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
    let _g = hccl_serial();
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
    // One argument wrong at a time, in the order the vendor looks at them: the code, and
    // what the message names where it is checked.
    let fp32 = HCCL_DATA_TYPE_FP32;
    let cases: [(_, _, _, _, _, _, &[&str]); 7] = [
        (nul, buf, fp32, 0, s, HCCL_E_PTR, &["sendBuf is NULL"]),
        (buf, nul, fp32, 0, s, HCCL_E_PTR, &[]),
        (buf, buf, 12, 0, s, HCCL_E_NOT_SUPPORT, &["does not model"]),
        (buf, buf, 300, 0, s, HCCL_E_NOT_SUPPORT, &[]),
        (buf, buf, fp32, 0, nul, HCCL_E_PTR, &["stream is NULL"]),
        (buf, buf, fp32, 7, s, HCCL_E_NOT_SUPPORT, &[]),
        // Atlas A2 refuses PROD on BFP16 and INT16.
        (
            buf,
            buf,
            HCCL_DATA_TYPE_BFP16,
            HCCL_REDUCE_PROD,
            s,
            HCCL_E_NOT_SUPPORT,
            &["PROD", "BFP16", "Ascend910B4"],
        ),
    ];
    for (send, recv, dt, op, stream, want, names) in cases {
        let rc = all_reduce(send, recv, 4, dt, op, c0, stream);
        assert_eq!(rc, want, "type {dt}, op {op}: {}", err_msg());
        assert_err_msg_contains(names);
    }
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
    assert_err_msg_contains(&[
        "sendBuf",
        "is host memory, not inside any device allocation",
    ]);
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
    let _g = hccl_serial();
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
fn error_strings_are_the_vendors() {
    let _g = hccl_serial();
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
