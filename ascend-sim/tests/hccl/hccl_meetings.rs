//! The simulated HCCL's meetings through its C entry points: ranks that disagree fail
//! together with HCCL_E_PARA, a missing rank or a stalled stream ends in HCCL_E_TIMEOUT
//! within the timeout, memory freed under a queued collective is reported, and root infos
//! join ranks across threads. One process with five devices and a 400 ms timeout; the
//! tests run one at a time (they measure waits).

use crate::common;
use crate::hccl_common;

use ascend_sim::api;
use ascend_sim::hccl::HcclCounters;
use ascend_sys::hccl::*;
use ascend_sys::*;
use common::*;
use hccl_common::*;
use std::time::{Duration, Instant};

#[test]
fn ranks_that_disagree_all_fail_with_para() {
    let _g = hccl_serial();
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
    let _g = hccl_serial();
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
    let _g = hccl_serial();
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
    let _g = hccl_serial();
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
    let _g = hccl_serial();
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
