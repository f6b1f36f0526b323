//! `HcclSend` and `HcclRecv` through the C entry points: the vendor's order of checks
//! (current device, zero count, NULL pointers, dtype), the simulator's checks of the peer,
//! the handle and the buffer, and the transfer itself between two ranks' threads. Five
//! devices and a 400 ms timeout, one test at a time.

mod common;
mod hccl_common;

use ascend_sim::api;
use ascend_sys::hccl::*;
use ascend_sys::*;
use common::*;
use hccl_common::*;
use std::ffi::c_void;

/// `HcclSend` and `HcclRecv` take the same arguments (the peer is the destination or the
/// source); here with the tests' thread-crossing communicator handle.
type P2p = fn(*mut c_void, u64, HcclDataType, u32, H, aclrtStream) -> HcclResult;

const SEND: P2p = |buf, count, dt, peer, comm, s| {
    // SAFETY: simulator handles and device pointers (or deliberately bad ones).
    unsafe { api::HcclSend(buf, count, dt, peer, comm.p(), s) }
};

const RECV: P2p = |buf, count, dt, peer, comm, s| {
    // SAFETY: as in `SEND`.
    unsafe { api::HcclRecv(buf, count, dt, peer, comm.p(), s) }
};

#[test]
fn arguments_are_checked_in_the_vendor_order() {
    let _g = hccl_serial();
    let comms = init_all(&[0, 1]);
    let null = H(0);
    // No current device comes first, before even a NULL buffer.
    assert_eq!(
        SEND(
            std::ptr::null_mut(),
            4,
            HCCL_DATA_TYPE_FP32,
            1,
            comms[0],
            std::ptr::null_mut()
        ),
        HCCL_E_RUNTIME
    );
    let _ = err_msg();
    per_rank(&[0], |_, _| {
        let s = create_stream();
        let buf = malloc(64);
        let fp32 = HCCL_DATA_TYPE_FP32;
        // A zero count succeeds before any pointer is looked at.
        assert_eq!(
            SEND(std::ptr::null_mut(), 0, fp32, 9, null, std::ptr::null_mut()),
            HCCL_SUCCESS
        );
        assert_eq!(
            RECV(std::ptr::null_mut(), 0, fp32, 9, null, std::ptr::null_mut()),
            HCCL_SUCCESS
        );
        // NULL pointers: comm, then the buffer, then the stream.
        let cases: [(HcclResult, &str); 3] = [
            (
                SEND(std::ptr::null_mut(), 4, fp32, 1, null, std::ptr::null_mut()),
                "comm is NULL",
            ),
            (
                SEND(
                    std::ptr::null_mut(),
                    4,
                    fp32,
                    1,
                    comms[0],
                    std::ptr::null_mut(),
                ),
                "sendBuf is NULL",
            ),
            (
                RECV(buf, 4, fp32, 1, comms[0], std::ptr::null_mut()),
                "stream is NULL",
            ),
        ];
        for (rc, text) in cases {
            assert_eq!(rc, HCCL_E_PTR, "{text}");
            assert_err_msg_contains(&[text]);
        }
        // Then the dtype, then the peer.
        assert_eq!(SEND(buf, 4, 99, 7, comms[0], s), HCCL_E_NOT_SUPPORT);
        assert_err_msg_contains(&["HcclSend", "dataType HcclDataType(99)"]);
        assert_eq!(SEND(buf, 4, fp32, 2, comms[0], s), HCCL_E_PARA);
        assert_err_msg_contains(&["destRank 2 is not a rank of the communicator (2 ranks)"]);
        assert_eq!(RECV(buf, 4, fp32, 0, comms[0], s), HCCL_E_PARA);
        assert_err_msg_contains(&["HcclRecv", "srcRank 0 is this rank"]);
        // A buffer shorter than count elements is a finding.
        assert_eq!(SEND(buf, 17, fp32, 1, comms[0], s), HCCL_E_PARA);
        let _ = err_msg();
        assert!(ascend_sim::last_report().is_some_and(|r| r.contains("sendBuf")));
        ascend_sim::clear_last_report();
        assert_eq!(sync(s), ACL_SUCCESS, "nothing was enqueued");
        free(buf);
        destroy_stream(s);
    });
    assert_eq!(hccl_counters().queued_collectives, 0);
    comms.into_iter().for_each(destroy);
}

#[test]
fn a_send_meets_the_receive_of_the_same_number_and_moves_the_bytes() {
    let _g = hccl_serial();
    let comms = init_all(&[0, 1]);
    let got = per_rank(&[0, 1], |rank, _| {
        let s = create_stream();
        // Rank 0 sends two buffers to rank 1, which receives them in the same order.
        let (transfer, peer, bufs) = if rank == 0 {
            let values: [Vec<i32>; 2] = [(0..5).collect(), (10..15).collect()];
            (SEND, 1, values.map(|v| upload(&v)))
        } else {
            (RECV, 0, [malloc(20), malloc(20)])
        };
        for buf in bufs {
            let rc = transfer(buf, 5, HCCL_DATA_TYPE_INT32, peer, comms[rank], s);
            assert_eq!(rc, HCCL_SUCCESS, "rank {rank}");
        }
        assert_eq!(sync(s), ACL_SUCCESS, "{}", err_msg());
        let out: Vec<i32> = match rank {
            0 => Vec::new(),
            _ => bufs.iter().flat_map(|&b| d2h::<i32>(b, 5)).collect(),
        };
        bufs.into_iter().for_each(free);
        destroy_stream(s);
        out
    });
    let want: Vec<i32> = (0..5).chain(10..15).collect();
    assert_eq!(got[1], want);
    assert_eq!(hccl_counters().queued_collectives, 0);
    assert!(ascend_sim::last_report().is_none());
    comms.into_iter().for_each(destroy);
}
