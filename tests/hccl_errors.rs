//! Typed errors of the collectives, on the simulator with a 300 ms HCCL timeout: lengths,
//! layouts, devices and the bf16 product rule are refused before any HCCL call; ranks that
//! disagree fail with `HCCL_E_PARA` on every rank at once; a missing rank, or a rank whose
//! stream never reaches the collective, ends in `HCCL_E_TIMEOUT` within the timeout, never
//! a hang; root infos join ranks across threads.

mod hccl_common;

use ascend_sys::hccl::{HCCL_E_PARA, HCCL_E_TIMEOUT};
use ascendcl::hccl::{Communicator, ReduceOp, RootInfo};
use ascendcl::{DType, Device, DeviceTensor, Error, Runtime};
use half::bf16;
use hccl_common::*;
use std::time::{Duration, Instant};

const TIMEOUT: Duration = Duration::from_millis(300);

fn rt() -> Runtime {
    runtime_with(
        "Ascend910B4,Ascend910B4,Ascend910B4,Ascend910A",
        Some(TIMEOUT.as_millis() as u64),
    )
}

/// HCCL calls made so far in this process.
fn hccl_calls() -> u64 {
    ascend_sim::SYMBOLS
        .iter()
        .filter(|s| s.starts_with("Hccl"))
        .map(|s| ascend_sim::call_count(s))
        .sum()
}

/// Device `r` of `devs` joins `info`'s group of `nranks` as rank `r`, each on its own
/// thread, all at once.
fn join_by_root_info(
    devs: &[Device],
    info: &RootInfo,
    nranks: u32,
) -> Vec<Result<Communicator, Error>> {
    std::thread::scope(|s| {
        let handles: Vec<_> = devs
            .iter()
            .enumerate()
            .map(|(rank, d)| {
                s.spawn(move || Communicator::from_root_info(d, info, nranks, rank as u32))
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

#[test]
fn wrong_arguments_are_refused_before_any_hccl_call() {
    let _leaks = LeakCheck::start(rt());
    let devs = devices(rt(), &[0, 1, 3]);
    let comms = Communicator::init_all(&devs[..2]).unwrap();
    let c0 = &comms[0];
    let s0 = devs[0].stream().unwrap();
    let s1 = devs[1].stream().unwrap();
    let (a4, mut b4, mut b5) = (zeros(&s0, 4), zeros(&s0, 4), zeros(&s0, 5));
    let mut b8 = zeros(&s0, 8);
    let other = zeros(&s1, 4);
    let before = hccl_calls();

    let h = DeviceTensor::<bf16>::zeros(&s0, [4]).unwrap();
    let mut h2 = DeviceTensor::<bf16>::zeros(&s0, [4]).unwrap();
    let m = DeviceTensor::<bool>::zeros(&s0, [4]).unwrap();
    let mut m2 = DeviceTensor::<bool>::zeros(&s0, [4]).unwrap();
    let length = |argument, expected, actual| Error::LengthMismatch {
        argument,
        expected,
        actual,
    };
    let device = |argument, expected, found| Error::DeviceMismatch {
        argument,
        expected,
        found,
    };
    let bf16_product = Error::UnsupportedDtype {
        argument: "send",
        dtype: DType::BF16,
        operator: "HcclAllReduce",
        soc: "Ascend910B4".into(),
    };
    let exact = [
        (
            c0.all_reduce(&a4, &mut b5, ReduceOp::Sum, &s0),
            length("recv", 4, 5),
        ),
        (
            c0.reduce_scatter(&a4, &mut b4, ReduceOp::Max, &s0),
            length("send", 8, 4),
        ),
        (
            c0.all_reduce(&a4, &mut b4, ReduceOp::Sum, &s1),
            device("communicator", 1, 0),
        ),
        (
            c0.all_reduce(&other, &mut b4, ReduceOp::Sum, &s0),
            device("send", 0, 1),
        ),
        (
            c0.all_reduce(&h, &mut h2, ReduceOp::Prod, &s0),
            bf16_product,
        ),
        (
            c0.all_reduce(&m, &mut m2, ReduceOp::Max, &s0),
            Error::UnsupportedDtype {
                argument: "send",
                dtype: DType::Bool,
                operator: "HcclAllReduce",
                soc: "Ascend910B4".into(),
            },
        ),
    ];
    for (got, want) in &exact {
        assert_eq!(got.as_ref().unwrap_err(), want);
    }
    let e = exact[2].0.as_ref().unwrap_err().to_string();
    assert!(e.contains("communicator lives on device 0"), "{e}");
    let e = c0.all_gather(&a4, &mut b5, &s0).unwrap_err();
    assert!(
        matches!(e, Error::LengthMismatch { expected: 8, .. }),
        "{e}"
    );
    // Invalid arguments, each with a fragment of its message ("" where any will do).
    let strided = b8.view().reshape([4, 2]).unwrap().t();
    let twice = [devs[1].clone(), devs[1].clone()];
    let info = RootInfo::from_bytes(&[0; ascendcl::hccl::ROOT_INFO_BYTES]).unwrap();
    let invalid = [
        (
            c0.all_reduce(&strided, &mut b4, ReduceOp::Sum, &s0),
            "not contiguous",
        ),
        (c0.broadcast(&mut b8, 2, &s0), "root 2"),
        (Communicator::init_all(&[]).map(drop), ""),
        (Communicator::init_all(&twice).map(drop), "listed twice"),
        (
            Communicator::from_root_info(&devs[0], &info, 2, 2).map(drop),
            "",
        ),
    ];
    for (got, fragment) in &invalid {
        assert!(
            matches!(got, Err(Error::InvalidArgument(m)) if m.contains(fragment)),
            "{got:?}"
        );
    }
    assert_eq!(hccl_calls(), before, "no HCCL call was made");

    // The training series (Ascend910A) takes a product of bf16: the rule is A2/A3's.
    let pair = Communicator::init_all(&[devs[2].clone(), devs[0].clone()]).unwrap();
    let results = on_ranks(&pair, |comm, stream| {
        let send = DeviceTensor::<bf16>::from_array(
            stream,
            &ndarray::Array1::from_elem(2, bf16::from_f32(1.5)),
        )
        .unwrap();
        let mut recv = DeviceTensor::<bf16>::zeros(stream, [2]).unwrap();
        comm.all_reduce(&send, &mut recv, ReduceOp::Prod, stream)
            .map(|()| recv.to_array::<ndarray::IxDyn>(stream).unwrap())
    });
    // Rank 1 (Atlas A2) refuses before calling; rank 0 (910A) then waits for it in vain.
    assert!(
        matches!(results[1], Err(Error::UnsupportedDtype { .. })),
        "{:?}",
        results[1]
    );
    assert!(
        matches!(&results[0], Err(e) if is_hccl(e, "HcclAllReduce", HCCL_E_TIMEOUT)),
        "{:?}",
        results[0]
    );
    expected_report("did not call it");
}

#[test]
fn ranks_that_disagree_fail_on_every_rank_at_once() {
    let _leaks = LeakCheck::start(rt());
    let comms = Communicator::init_all(&devices(rt(), &[0, 1, 2])).unwrap();
    let started = Instant::now();
    let results = on_ranks(&comms, |comm, stream| {
        all_reduce_zeros(comm, stream, if comm.rank() == 2 { 8 } else { 4 })
    });
    assert!(started.elapsed() < TIMEOUT, "{:?}", started.elapsed());
    for r in &results {
        let e = r.as_ref().unwrap_err();
        assert!(is_hccl(e, "HcclAllReduce", HCCL_E_PARA), "{e}");
        let text = e.to_string();
        assert!(
            text.contains("parameter error") && text.contains("count 8 where rank 0 has 4"),
            "{text}"
        );
    }
    // A root that differs between ranks.
    let results = on_ranks(&comms, |comm, stream| {
        let mut buf = zeros(stream, 3);
        comm.broadcast(&mut buf, comm.rank().min(1), stream)
    });
    assert!(
        results
            .iter()
            .all(|r| matches!(r, Err(e) if is_hccl(e, "HcclBroadcast", HCCL_E_PARA)))
    );
    // The group is still usable.
    expected_report("the ranks disagree");
    let results = barrier_on_ranks(&comms);
    assert!(results.iter().all(Result::is_ok), "{results:?}");
}

#[test]
fn a_missing_rank_ends_in_a_timeout_not_a_hang() {
    let _leaks = LeakCheck::start(rt());
    let comms = Communicator::init_all(&devices(rt(), &[0, 1, 2])).unwrap();
    let started = Instant::now();
    let results = on_ranks(&comms[..2], |comm, stream| {
        all_reduce_zeros(comm, stream, 4)
    });
    let waited = started.elapsed();
    assert!(waited >= TIMEOUT && waited < 5 * TIMEOUT, "{waited:?}");
    for r in &results {
        let e = r.as_ref().unwrap_err();
        assert!(is_hccl(e, "HcclAllReduce", HCCL_E_TIMEOUT), "{e}");
        assert!(e.to_string().contains("rank(s) [2] did not call it"), "{e}");
    }
    // The rank that never came fails at once when it finally calls.
    let late = on_ranks(&comms[2..], |comm, stream| {
        all_reduce_zeros(comm, stream, 4)
    });
    assert!(matches!(&late[0], Err(e) if is_hccl(e, "HcclAllReduce", HCCL_E_TIMEOUT)));
    expected_report("did not call it");
}

#[test]
fn a_stream_that_never_arrives_fails_its_peers_work_within_the_timeout() {
    let _leaks = LeakCheck::start(rt());
    let comms = Communicator::init_all(&devices(rt(), &[0, 1])).unwrap();
    let results = on_ranks(&comms, |comm, stream| {
        let _buffers = all_reduce_with_rank_1_held(comm, stream, 2 * TIMEOUT);
        let synced = stream.synchronize();
        (synced, comm.async_error())
    });
    for (rank, (synced, async_error)) in results.iter().enumerate() {
        let e = synced.as_ref().unwrap_err();
        assert!(
            matches!(
                e,
                Error::Acl {
                    api: "aclrtSynchronizeStream",
                    code: 507000,
                    ..
                }
            ),
            "rank {rank}: {e}"
        );
        assert!(e.to_string().contains("HCCL_E_TIMEOUT"), "{e}");
        let e = async_error.as_ref().unwrap_err();
        assert!(
            is_hccl(e, "HcclGetCommAsyncError", HCCL_E_TIMEOUT),
            "rank {rank}: {e}"
        );
    }
    expected_report("did not reach it");
}

#[test]
fn root_info_joins_ranks_across_threads() {
    let _leaks = LeakCheck::start(rt());
    let devs = devices(rt(), &[2, 0, 1]);
    let info = RootInfo::new(&devs[0]).unwrap();
    // Through bytes, as another process would receive it.
    let info = RootInfo::from_bytes(info.as_bytes()).unwrap();
    let comms: Vec<Communicator> = join_by_root_info(&devs, &info, 3)
        .into_iter()
        .map(Result::unwrap)
        .collect();
    for (rank, comm) in comms.iter().enumerate() {
        assert_eq!((comm.rank(), comm.size()), (rank as u32, 3));
        assert_eq!(comm.device().id(), devs[rank].id());
    }
    let sums = on_ranks(&comms, |comm, stream| {
        let send = DeviceTensor::from_array(stream, &ndarray::arr1(&[comm.rank() as f32])).unwrap();
        let mut recv = zeros(stream, 1);
        comm.all_reduce(&send, &mut recv, ReduceOp::Sum, stream)
            .unwrap();
        recv.to_array::<ndarray::IxDyn>(stream).unwrap()[0]
    });
    assert_eq!(sums, [3.0; 3]);

    // A rank that never joins: the others time out.
    let info = RootInfo::new(&devs[0]).unwrap();
    let started = Instant::now();
    let results = join_by_root_info(&devs[..2], &info, 3);
    assert!(started.elapsed() >= TIMEOUT);
    for r in results {
        let e = r.unwrap_err();
        assert!(is_hccl(&e, "HcclCommInitRootInfo", HCCL_E_TIMEOUT), "{e}");
    }
    expected_report("did not join");
}
