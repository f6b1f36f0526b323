//! Every allocation, stream and event belongs to one device, and using it
//! from another fails or is reported as CANN documents (own process: two devices).

mod common;
use ascend_sim::api;
use ascend_sys::*;
use common::*;
use std::ptr::null_mut;

fn report() -> String {
    ascend_sim::last_report().unwrap_or_default()
}

#[test]
fn device_ownership_is_checked() {
    init_with(&[("ASCEND_SIM_DEVICES", "Ascend910B4,Ascend910B4")]);
    set_device(0);
    let s0 = create_stream();
    let (g, x, o) = (malloc(16), malloc(16), malloc(16));
    h2d(x, &[0.5f32; 4]);
    let (tg, tx, to) = (
        tensor(&[4], ACL_FLOAT, g),
        tensor(&[4], ACL_FLOAT, x),
        tensor(&[4], ACL_FLOAT, o),
    );
    let (rc, _, ex0) = phase1(tg, tx, to);
    assert_eq!(rc, ACLNN_SUCCESS);

    let (rc, _, ex0b) = phase1(tg, tx, to);
    assert_eq!(rc, ACLNN_SUCCESS);

    set_device(1);
    // A: a device-0 stream while device 1 is current.
    assert_fails_with(
        phase2(null_mut(), 0, ex0, s0),
        ACLNN_ERR_RUNTIME_ERROR,
        &["belongs to device 0"],
    );
    assert_released_by_failed_phase2(ex0);
    // B: a device-0 executor on a device-1 stream.
    let s1 = create_stream();
    assert_fails_with(
        phase2(null_mut(), 0, ex0b, s1),
        ACLNN_ERR_RUNTIME_ERROR,
        &["created on device 0 but the stream is on device 1"],
    );
    assert_released_by_failed_phase2(ex0b);
    // C: a device-1 executor over device-0 memory.
    let (rc, _, ex1) = phase1(tg, tx, to);
    assert_eq!(rc, ACLNN_SUCCESS);
    assert_fails_with(
        phase2(null_mut(), 0, ex1, s1),
        ACLNN_ERR_PARAM_INVALID,
        &[
            "gradOutput data",
            "is memory of device 0, but the operator runs on device 1",
        ],
    );
    assert_released_by_failed_phase2(ex1);
    // D: device-to-device copies between the devices need peer access.
    let d1 = malloc(16);
    assert_fails_with(
        memcpy(d1, 16, x, 16, ACL_MEMCPY_DEVICE_TO_DEVICE),
        ACL_ERROR_INVALID_PARAM,
        &[
            "src is memory of device 0, but the copy runs on device 1, which has not enabled \
           peer access to it (aclrtDeviceEnablePeerAccess(0, 0) on device 1 first)",
        ],
    );
    let mut can = -1;
    // SAFETY: a writable out-pointer; valid ids.
    assert_eq!(
        unsafe { api::aclrtDeviceCanAccessPeer(&mut can, 1, 0) },
        ACL_SUCCESS
    );
    assert_eq!(can, 1);
    // SAFETY: as above.
    assert_eq!(
        unsafe { api::aclrtDeviceCanAccessPeer(&mut can, 1, 1) },
        ACL_SUCCESS
    );
    assert_eq!(can, 0, "a device is not its own peer");
    assert_fails_with(
        // SAFETY: as above, with an invalid peer id.
        unsafe { api::aclrtDeviceCanAccessPeer(&mut can, 1, 2) },
        ACL_ERROR_RT_INVALID_DEVICEID,
        &["deviceId 2 is invalid"],
    );
    assert_fails_with(
        // SAFETY: takes any values.
        unsafe { api::aclrtDeviceEnablePeerAccess(0, 1) },
        ACL_ERROR_INVALID_PARAM,
        &["flags 1 must be 0 (reserved)"],
    );
    assert_fails_with(
        // SAFETY: takes any values.
        unsafe { api::aclrtDeviceEnablePeerAccess(1, 0) },
        ACL_ERROR_INVALID_PARAM,
        &["peerDeviceId 1 is the current device"],
    );
    // SAFETY: takes any values.
    assert_eq!(
        unsafe { api::aclrtDeviceEnablePeerAccess(0, 0) },
        ACL_SUCCESS
    );
    ascend_sim::clear_last_report();
    assert_eq!(
        memcpy(d1, 16, x, 16, ACL_MEMCPY_DEVICE_TO_DEVICE),
        ACL_SUCCESS,
        "{}",
        err_msg()
    );
    assert_eq!(report(), "");
    assert_eq!(d2h::<f32>(d1, 4), [0.5; 4]);
    assert_fails_with(
        memcpy(d1, 16, x, 16, 6),
        ACL_ERROR_INVALID_PARAM,
        &["ACL_MEMCPY_INNER_DEVICE_TO_DEVICE but a copy from device 0 memory to device 1 memory"],
    );
    ascend_sim::clear_last_report();
    assert_eq!(memcpy(d1, 16, x, 16, 7), ACL_SUCCESS, "{}", err_msg());
    // SAFETY: takes any values.
    assert_eq!(unsafe { api::aclrtDeviceDisablePeerAccess(0) }, ACL_SUCCESS);
    assert_fails_with(
        memcpy(d1, 16, x, 16, 7),
        ACL_ERROR_INVALID_PARAM,
        &["which has not enabled peer access to it"],
    );
    // G: an asynchronous copy on a device-1 stream of device-0 memory.
    let mut back = [0f32; 4];
    assert_eq!(
        memcpy_async(
            back.as_mut_ptr().cast(),
            16,
            x,
            16,
            ACL_MEMCPY_DEVICE_TO_HOST,
            s1
        ),
        ACL_SUCCESS
    );
    assert_eq!(sync(s1), ACL_SUCCESS);
    assert!(
        report().contains("device 1 stream touches device 0 memory"),
        "{}",
        report()
    );
    assert_eq!(back, [0.5; 4]);

    // E: a device-1 workspace for a device-0 launch.
    set_device(0);
    let t1 = tensor(&[1], ACL_FLOAT, x);
    let (rc, ws, ex2) = phase1(tg, t1, to);
    assert!(rc == ACLNN_SUCCESS && ws > 0);
    set_device(1);
    let w1 = malloc(ws as usize);
    set_device(0);
    assert_fails_with(
        phase2(w1, ws, ex2, s0),
        ACLNN_ERR_PARAM_INVALID,
        &[
            "workspace",
            "is memory of device 1, but the operator runs on device 0",
        ],
    );
    assert_released_by_failed_phase2(ex2);
    // F: events and streams of different devices.
    let e0 = create_event();
    // SAFETY: live handles.
    unsafe {
        assert_eq!(api::aclrtRecordEvent(e0, s0), ACL_SUCCESS);
        set_device(1);
        assert_fails_with(
            api::aclrtStreamWaitEvent(s1, e0),
            ACL_ERROR_RT_STREAM_CONTEXT,
            &["the event belongs to device 0 and the stream to device 1"],
        );
        assert_fails_with(
            api::aclrtRecordEvent(e0, s1),
            ACL_ERROR_RT_STREAM_CONTEXT,
            &["the event belongs to device 0"],
        );
        // Waiting for another device's event from the host is allowed.
        assert_eq!(api::aclrtSynchronizeEvent(e0), ACL_SUCCESS);
        assert_eq!(api::aclrtDestroyEvent(e0), ACL_SUCCESS);
    }
    free(w1);
    free(d1);
    destroy_stream(s1);
    set_device(0);
    destroy_stream(s0);
    for t in [tg, tx, to, t1] {
        destroy_tensor(t);
    }
    for p in [g, x, o] {
        free(p);
    }
}
