//! The collectives a training loop needs beyond the basic four, on the simulator with four
//! Atlas A2 devices and a 300 ms timeout: the in-place all-reduce, and point-to-point
//! `send`/`recv` in a ring (two streams per rank, or one stream ordered by rank), with the
//! simulator's matching checks (a length mismatch, a receive that never comes).

mod hccl_common;

use ascend_sys::hccl::{HCCL_E_PARA, HCCL_E_TIMEOUT};
use ascendcl::hccl::{Communicator, ReduceOp};
use ascendcl::{DeviceTensor, Element, Error, Runtime};
use half::{bf16, f16};
use hccl_common::*;
use std::time::Duration;

const TIMEOUT: Duration = Duration::from_millis(300);

fn rt() -> Runtime {
    runtime_with(FOUR_A2, Some(TIMEOUT.as_millis() as u64))
}

/// Small integers, so that every dtype sums them exactly.
fn inputs<T: Element>(ranks: usize, n: usize) -> Vec<Vec<T>> {
    (0..ranks)
        .map(|r| {
            (0..n)
                .map(|i| T::from_f32(((i * 7 + r * 3) % 17) as f32 - 8.0))
                .collect()
        })
        .collect()
}

fn in_place_all_reduce<T: Element>(comms: &[Communicator], n: usize, op: ReduceOp) {
    let inputs = inputs::<T>(comms.len(), n);
    let want: Vec<T> = (0..n).map(|i| reduce(&inputs, i, op)).collect();
    let got = on_ranks(comms, |comm, stream| {
        let mut buf = upload(stream, &inputs[comm.rank() as usize]);
        comm.all_reduce_inplace(&mut buf, op, stream).unwrap();
        download(stream, &buf)
    });
    for (rank, g) in got.iter().enumerate() {
        assert_bits(g, &want, &format!("{:?} {op} rank {rank}", T::DTYPE));
    }
}

#[test]
fn all_reduce_in_place_equals_the_two_buffer_result() {
    let _leaks = LeakCheck::start(rt());
    let comms = Communicator::init_all(&devices(rt(), &[0, 1, 2, 3])).unwrap();
    for op in [ReduceOp::Sum, ReduceOp::Max, ReduceOp::Prod] {
        in_place_all_reduce::<f32>(&comms, 33, op);
        in_place_all_reduce::<f16>(&comms, 33, op);
    }
    in_place_all_reduce::<bf16>(&comms, 33, ReduceOp::Sum);
    in_place_all_reduce::<f32>(&comms, 0, ReduceOp::Sum);
    // The same as with two buffers, bit for bit.
    let inputs = inputs::<f32>(4, 1000);
    let both = on_ranks(&comms, |comm, stream| {
        let send = upload(stream, &inputs[comm.rank() as usize]);
        let mut recv = DeviceTensor::<f32>::zeros(stream, [1000]).unwrap();
        comm.all_reduce(&send, &mut recv, ReduceOp::Sum, stream)
            .unwrap();
        let mut buf = upload(stream, &inputs[comm.rank() as usize]);
        comm.all_reduce_inplace(&mut buf, ReduceOp::Sum, stream)
            .unwrap();
        (download(stream, &recv), download(stream, &buf))
    });
    for (two, one) in &both {
        assert_bits(one, two, "in place against two buffers");
    }
}

/// Every rank sends `inputs[r]` to `r + 1` and receives from `r - 1`, on two streams.
fn ring_on_two_streams<T: Element>(comms: &[Communicator], n: usize) {
    let size = comms.len() as u32;
    let inputs = inputs::<T>(comms.len(), n);
    let got = on_ranks(comms, |comm, stream| {
        let r = comm.rank();
        let other = comm.device().stream().unwrap();
        let send = upload(stream, &inputs[r as usize]);
        let mut recv = DeviceTensor::<T>::zeros(&other, [n]).unwrap();
        comm.send(&send, (r + 1) % size, stream).unwrap();
        comm.recv(&mut recv, (r + size - 1) % size, &other).unwrap();
        stream.synchronize().unwrap();
        download(&other, &recv)
    });
    for (r, g) in got.iter().enumerate() {
        let from = (r + comms.len() - 1) % comms.len();
        assert_bits(g, &inputs[from], &format!("{:?} ring rank {r}", T::DTYPE));
    }
}

#[test]
fn send_and_recv_move_a_ring_on_two_streams_and_on_one_ordered_by_rank() {
    let _leaks = LeakCheck::start(rt());
    let comms = Communicator::init_all(&devices(rt(), &[0, 1, 2, 3])).unwrap();
    ring_on_two_streams::<f32>(&comms, 100);
    ring_on_two_streams::<f16>(&comms, 7);
    ring_on_two_streams::<bf16>(&comms, 7);
    ring_on_two_streams::<f32>(&comms[..2], 1 << 20);
    // One stream per rank: even ranks send first, odd ranks receive first; three rounds
    // on one pair of directions, so the k-th send meets the k-th receive.
    let inputs = inputs::<f32>(4, 16);
    let got = on_ranks(&comms, |comm, stream| {
        let r = comm.rank();
        let (next, prev) = ((r + 1) % 4, (r + 3) % 4);
        let mut recvs = Vec::new();
        for round in 0..3 {
            let mut x = inputs[r as usize].clone();
            x.iter_mut().for_each(|v| *v += round as f32 * 100.0);
            let send = upload(stream, &x);
            let mut recv = DeviceTensor::<f32>::zeros(stream, [16]).unwrap();
            if r % 2 == 0 {
                comm.send(&send, next, stream).unwrap();
                comm.recv(&mut recv, prev, stream).unwrap();
            } else {
                comm.recv(&mut recv, prev, stream).unwrap();
                comm.send(&send, next, stream).unwrap();
            }
            recvs.push(download(stream, &recv));
        }
        recvs
    });
    for (r, rounds) in got.iter().enumerate() {
        for (round, g) in rounds.iter().enumerate() {
            let mut want = inputs[(r + 3) % 4].clone();
            want.iter_mut().for_each(|v| *v += round as f32 * 100.0);
            assert_bits(g, &want, &format!("rank {r} round {round}"));
        }
    }
}

#[test]
fn wrong_peers_are_refused_before_any_hccl_call() {
    let _leaks = LeakCheck::start(rt());
    let comms = Communicator::init_all(&devices(rt(), &[0, 1])).unwrap();
    let stream = comms[0].device().stream().unwrap();
    let mut buf = DeviceTensor::<f32>::zeros(&stream, [4]).unwrap();
    let before = ascend_sim::call_count("HcclSend") + ascend_sim::call_count("HcclRecv");
    for peer in [0, 2, u32::MAX] {
        assert!(matches!(
            comms[0].send(&buf, peer, &stream),
            Err(Error::InvalidArgument(_))
        ));
        assert!(matches!(
            comms[0].recv(&mut buf, peer, &stream),
            Err(Error::InvalidArgument(_))
        ));
    }
    let other = comms[1].device().stream().unwrap();
    assert!(matches!(
        comms[0].send(&buf, 1, &other),
        Err(Error::DeviceMismatch { .. })
    ));
    let after = ascend_sim::call_count("HcclSend") + ascend_sim::call_count("HcclRecv");
    assert_eq!(after, before, "no HCCL call was made");
}

#[test]
fn mismatched_or_missing_sides_fail_both_streams_within_the_timeout() {
    let _leaks = LeakCheck::start(rt());
    let comms = Communicator::init_all(&devices(rt(), &[0, 1])).unwrap();
    // Lengths that differ: both sides fail, HCCL_E_PARA as the asynchronous error.
    // (The buffers outlive the failed synchronisation: one dropped under failed work is
    // leaked on purpose, and counted.)
    let got = on_ranks(&comms, |comm, stream| {
        let mut buf = DeviceTensor::<f32>::zeros(stream, [4 + comm.rank() as usize]).unwrap();
        if comm.rank() == 0 {
            comm.send(&buf, 1, stream).unwrap();
        } else {
            comm.recv(&mut buf, 0, stream).unwrap();
        }
        (stream.synchronize(), comm.async_error())
    });
    for (rank, (synced, async_error)) in got.iter().enumerate() {
        let text = synced.as_ref().unwrap_err().to_string();
        assert!(
            text.contains("transfer #0 from rank 0 to rank 1 of communicator group")
                && text.contains("HcclSend posted 4 elements of FP32, HcclRecv 5 of FP32"),
            "rank {rank}: {text}"
        );
        assert!(
            matches!(async_error, Err(Error::Hccl { code, .. }) if *code == HCCL_E_PARA),
            "rank {rank}: {async_error:?}"
        );
    }
    expected_report("both sides must agree");
    drop(comms);
    // A receive that never comes: the sender's stream fails after the timeout.
    let comms = Communicator::init_all(&devices(rt(), &[0, 1])).unwrap();
    let stream = comms[0].device().stream().unwrap();
    let buf = DeviceTensor::<f32>::zeros(&stream, [4]).unwrap();
    comms[0].send(&buf, 1, &stream).unwrap();
    let text = stream.synchronize().unwrap_err().to_string();
    assert!(
        text.contains("transfer #0 from rank 0 to rank 1 of communicator group")
            && text.contains("the stream of rank 1 did not reach its HcclRecv within 300 ms"),
        "{text}"
    );
    assert!(matches!(
        comms[0].async_error(),
        Err(Error::Hccl { code, .. }) if code == HCCL_E_TIMEOUT
    ));
    // The failed communicator now refuses transfers at once.
    assert!(matches!(
        comms[0].send(&buf, 1, &stream),
        Err(Error::CommunicatorFailed { rank: 0, .. })
    ));
    ascend_sim::clear_last_report();
}
