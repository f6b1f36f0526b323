//! Fault injection over every HCCL symbol (own process: faults are process-wide): the
//! armed call fails with `HCCL_E_INTERNAL` (`HcclGetErrorString`: NULL) before any check,
//! says so in `aclGetRecentErrMsg`, is counted, and fires once. `ASCEND_SIM_FAULT` arms
//! HCCL symbols too.

mod common;
use ascend_sim::{SYMBOLS, api, call_count, set_fault};
use ascend_sys::hccl::*;
use ascend_sys::*;
use common::*;
use std::ptr::{null, null_mut};

/// Calls `sym` once with arguments that succeed or fail at once (no meeting with other
/// ranks); returns its status (pointers: 0 = NULL, 1 = not).
fn call(sym: &str, comm: HcclComm, stream: aclrtStream) -> u32 {
    let mut n = 0u32;
    let mut out = [null_mut(); 2];
    let mut devices = [0, 1];
    let mut root = HcclRootInfo {
        internal: [0; HCCL_ROOT_INFO_BYTES as usize],
    };
    let mut result = HCCL_SUCCESS;
    // SAFETY: valid out-pointers and simulator handles; zero counts touch no memory.
    unsafe {
        match sym {
            "HcclCommInitAll" => {
                let rc = api::HcclCommInitAll(2, devices.as_mut_ptr(), out.as_mut_ptr());
                if rc == HCCL_SUCCESS {
                    out.iter().for_each(|c| {
                        api::HcclCommDestroy(*c);
                    });
                }
                rc
            }
            "HcclGetRootInfo" => api::HcclGetRootInfo(&mut root),
            "HcclCommInitRootInfo" => api::HcclCommInitRootInfo(2, null(), 0, &mut out[0]),
            "HcclCommDestroy" => api::HcclCommDestroy(null_mut()),
            "HcclGetRankSize" => api::HcclGetRankSize(comm, &mut n),
            "HcclGetRankId" => api::HcclGetRankId(comm, &mut n),
            "HcclAllReduce" => api::HcclAllReduce(null_mut(), null_mut(), 0, 4, 0, comm, stream),
            "HcclBroadcast" => api::HcclBroadcast(null_mut(), 0, 4, 0, comm, stream),
            "HcclAllGather" => api::HcclAllGather(null_mut(), null_mut(), 0, 4, comm, stream),
            "HcclReduceScatter" => {
                api::HcclReduceScatter(null_mut(), null_mut(), 0, 4, 0, comm, stream)
            }
            "HcclBarrier" => api::HcclBarrier(null_mut(), stream),
            "HcclSend" => api::HcclSend(null_mut(), 0, 4, 1, comm, stream),
            "HcclRecv" => api::HcclRecv(null_mut(), 0, 4, 1, comm, stream),
            "HcclGetCommAsyncError" => api::HcclGetCommAsyncError(comm, &mut result),
            "HcclGetErrorString" => (!api::HcclGetErrorString(HCCL_E_PARA).is_null()) as u32,
            other => panic!("no call for {other}"),
        }
    }
}

#[test]
fn every_hccl_symbol_fails_on_its_nth_call() {
    init_with(&[
        ("ASCEND_SIM_DEVICES", "Ascend910B4,Ascend910B4"),
        ("ASCEND_SIM_FAULT", "HcclGetRankSize:1"),
    ]);
    set_device(0);
    let s = create_stream();
    let mut comms = [null_mut(); 2];
    let mut devices = [0, 1];
    // SAFETY: arrays of two elements.
    let rc = unsafe { api::HcclCommInitAll(2, devices.as_mut_ptr(), comms.as_mut_ptr()) };
    assert_eq!(rc, HCCL_SUCCESS, "{}", err_msg());
    let comm = comms[0];

    // Armed from process start by ASCEND_SIM_FAULT: the first call ever fails.
    assert_eq!(call("HcclGetRankSize", comm, s), HCCL_E_INTERNAL);
    assert_err_msg_contains(&[
        "HcclGetRankSize failed with HCCL_E_INTERNAL (4)",
        "injected fault",
    ]);
    assert_eq!(call("HcclGetRankSize", comm, s), HCCL_SUCCESS);

    let hccl: Vec<&str> = SYMBOLS
        .iter()
        .copied()
        .filter(|s| s.starts_with("Hccl"))
        .collect();
    assert_eq!(hccl.len(), 15);
    for &sym in &hccl {
        set_fault(sym, 2).unwrap();
        let before = call_count(sym);
        let first = call(sym, comm, s);
        let second = call(sym, comm, s);
        assert_eq!(call_count(sym), before + 2, "{sym}");
        let want = if sym == "HcclGetErrorString" {
            0
        } else {
            HCCL_E_INTERNAL
        };
        assert_eq!(second, want, "{sym}: injected failure");
        assert_ne!(
            first, want,
            "{sym}: the first call must not fail like the fault"
        );
        if sym != "HcclGetErrorString" {
            assert_err_msg_contains(&["HCCL_E_INTERNAL", "injected fault"]);
        }
        assert_ne!(call(sym, comm, s), want, "{sym}: the fault fires once");
    }
    // A fault leaves no communicator behind.
    set_fault("HcclCommInitAll", 1).unwrap();
    assert_eq!(call("HcclCommInitAll", comm, s), HCCL_E_INTERNAL);
    assert_eq!(ascend_sim::hccl::counters().communicators, 2);
    // SAFETY: live handles.
    unsafe {
        comms
            .iter()
            .for_each(|c| assert_eq!(api::HcclCommDestroy(*c), HCCL_SUCCESS));
    }
    assert_eq!(ascend_sim::hccl::counters(), Default::default());
    destroy_stream(s);
    reset_device(0);
}
