//! One whole session in its own process: environment configuration (memory size, faults
//! from ASCEND_SIM_FAULT), counters, no leaked threads, zero live objects after a clean
//! shutdown, and nothing usable after aclFinalize.

mod common;
use ascend_sim::{Counters, api, counters};
use ascend_sys::*;
use common::*;
use std::ptr::null_mut;

fn threads() -> usize {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("Threads:"))
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

#[test]
fn clean_session_leaves_nothing_behind() {
    // Before aclInit nothing works (tensors excepted: they need no runtime).
    // SAFETY: plain value.
    assert_eq!(unsafe { api::aclrtSetDevice(0) }, ACL_ERROR_UNINITIALIZE);
    init_with(&[
        ("ASCEND_SIM_MEM_BYTES", "1M"),
        ("ASCEND_SIM_FAULT", "aclrtCreateStream:2"),
        ("ASCEND_SIM_DEVICES", "Ascend910B4,Ascend910A"),
    ]);
    set_device(0);
    let base_threads = threads();
    assert_eq!(counters(), Counters::default());

    // Memory size from the environment.
    let mut p = null_mut();
    // SAFETY: valid out-pointer.
    assert_eq!(
        unsafe { api::aclrtMalloc(&mut p, (1 << 20) + 1, 0) },
        ACL_ERROR_RT_MEMORY_ALLOCATION
    );
    assert!(err_msg().contains("out of device memory"), "{}", err_msg());
    let (mut free_b, mut total) = (0usize, 0usize);
    // SAFETY: valid out-pointers.
    assert_eq!(
        unsafe { api::aclrtGetMemInfo(ACL_HBM_MEM, &mut free_b, &mut total) },
        ACL_SUCCESS
    );
    assert_eq!((free_b, total), (1 << 20, 1 << 20));

    // The 2nd aclrtCreateStream of the process fails (ASCEND_SIM_FAULT).
    let s1 = create_stream();
    let mut s2 = null_mut();
    // SAFETY: valid out-pointer.
    assert_eq!(
        unsafe { api::aclrtCreateStream(&mut s2) },
        ACL_ERROR_RT_INTERNAL_ERROR
    );
    let s2 = create_stream();
    let streams: Vec<_> = (0..200).map(|_| create_stream()).collect();
    assert_eq!(threads(), base_threads + 202);

    // A full workload with every kind of object.
    let mut ctx = null_mut();
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { api::aclrtCreateContext(&mut ctx, 1) }, ACL_SUCCESS);
    set_device(0);
    let ev = create_event();
    let mut host = null_mut();
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { api::aclrtMallocHost(&mut host, 64) }, ACL_SUCCESS);
    let out = mish_backward_f32(&[1.0; 6], &[0.5; 6], &[2, 3]);
    assert_eq!(out[5], ascend_sim::kernel::mish_grad_f32(1.0, 0.5));
    let d = malloc(100);
    let t = tensor(&[25], ACL_FLOAT, d);
    let (rc, _, ex) = phase1(t, t, t);
    assert_eq!(rc, ACLNN_SUCCESS);
    assert_eq!(
        counters(),
        Counters {
            allocations: 2,
            allocated_bytes: 164,
            tensors: 1,
            executors: 1,
            streams: 202,
            events: 1,
            contexts: 1,
            ..Counters::default()
        }
    );
    // SAFETY: live handles, released in the documented order.
    unsafe {
        assert_eq!(api::aclrtRecordEvent(ev, s1), ACL_SUCCESS);
        assert_eq!(api::aclnnMishBackward(null_mut(), 0, ex, s1), ACLNN_SUCCESS);
        assert_eq!(api::aclrtStreamWaitEvent(s2, ev), ACL_SUCCESS);
        assert_eq!(api::aclrtSynchronizeEvent(ev), ACL_SUCCESS);
        assert_eq!(sync(s1), ACL_SUCCESS);
        assert_eq!(sync(s2), ACL_SUCCESS);
        assert_eq!(api::aclrtDestroyEvent(ev), ACL_SUCCESS);
        for s in streams.into_iter().chain([s1, s2]) {
            destroy_stream(s);
        }
        assert_eq!(api::aclrtDestroyContext(ctx), ACL_SUCCESS);
        destroy_tensor(t);
        free(d);
        assert_eq!(api::aclrtFreeHost(host), ACL_SUCCESS);
    }
    assert_eq!(threads(), base_threads, "every stream worker was joined");
    reset_device(0);
    reset_device(0);
    assert_eq!(counters(), Counters::default());
    ascend_sim::clear_last_report();
    // SAFETY: no arguments.
    assert_eq!(unsafe { api::aclFinalize() }, ACL_SUCCESS);
    assert_eq!(
        ascend_sim::last_report(),
        None,
        "no leak report on a clean shutdown"
    );
    // Nothing works after aclFinalize.
    // SAFETY: plain values / valid out-pointers.
    unsafe {
        assert_eq!(api::aclFinalize(), ACL_ERROR_UNINITIALIZE);
        assert_eq!(api::aclInit(std::ptr::null()), ACL_ERROR_UNINITIALIZE);
        assert_eq!(api::aclrtSetDevice(0), ACL_ERROR_UNINITIALIZE);
        assert_eq!(api::aclrtMalloc(&mut p, 8, 0), ACL_ERROR_UNINITIALIZE);
        assert!(api::aclrtGetSocName().is_null());
    }
}
