//! Every phase-1 check of aclnnMishBackwardGetWorkspaceSize, in the vendor's order, on
//! five simulated products in one process; and the cross-device context rule.

mod common;
use ascend_sim::api;
use ascend_sys::*;
use common::*;
use std::ptr::null_mut;

const ALL_DTYPES: [aclDataType; 16] = [
    ACL_FLOAT,
    ACL_FLOAT16,
    ACL_INT8,
    ACL_INT32,
    ACL_UINT8,
    ACL_INT16,
    ACL_UINT16,
    ACL_UINT32,
    ACL_INT64,
    ACL_UINT64,
    ACL_DOUBLE,
    ACL_BOOL,
    ACL_STRING,
    ACL_COMPLEX64,
    ACL_COMPLEX128,
    ACL_BF16,
];

/// Phase 1 on metadata-only tensors (phase 1 never touches data).
fn check(shapes: [&[i64]; 3], dtypes: [aclDataType; 3]) -> (i32, u64, String) {
    let ts: Vec<_> = (0..3)
        .map(|i| tensor(shapes[i], dtypes[i], null_mut()))
        .collect();
    let (rc, ws, ex) = phase1(ts[0], ts[1], ts[2]);
    let msg = err_msg();
    if rc == ACLNN_SUCCESS {
        // SAFETY: executor from phase 1.
        assert_eq!(unsafe { api::aclDestroyAclOpExecutor(ex) }, ACLNN_SUCCESS);
    }
    for t in ts {
        destroy_tensor(t);
    }
    (rc, ws, msg)
}

#[test]
fn socs_are_per_device() {
    for (d, soc) in FIVE_SOCS.iter().enumerate() {
        let soc = soc.to_string();
        on_device(d as i32, move || {
            // SAFETY: no arguments.
            let p = unsafe { api::aclrtGetSocName() };
            // SAFETY: non-null static string.
            assert_eq!(
                unsafe { std::ffi::CStr::from_ptr(p) }.to_str().unwrap(),
                soc
            );
        });
    }
}

#[test]
fn each_dtype_on_each_soc() {
    for (d, soc) in FIVE_SOCS.iter().enumerate() {
        let soc = soc.to_string();
        on_device(d as i32, move || {
            for dt in ALL_DTYPES {
                let (rc, ws, msg) = check([&[2, 3], &[2, 3], &[2, 3]], [dt; 3]);
                let bf16_ok = soc.starts_with("Ascend910B") || soc.starts_with("Ascend910_93");
                let want = if soc.starts_with("Ascend310B") {
                    ACLNN_ERR_INNER_FIND_KERNEL_ERROR
                } else if dt == ACL_FLOAT || dt == ACL_FLOAT16 || (dt == ACL_BF16 && bf16_ok) {
                    ACLNN_SUCCESS
                } else {
                    ACLNN_ERR_PARAM_INVALID
                };
                assert_eq!(rc, want, "{soc} dtype {dt}: {msg}");
                if want == ACLNN_SUCCESS {
                    assert_eq!(ws, 0, "contiguous same-dtype needs no workspace");
                }
                if want == ACLNN_ERR_INNER_FIND_KERNEL_ERROR {
                    assert!(msg.contains("not supported on Ascend310B1"), "{msg}");
                }
            }
        });
    }
}

#[test]
fn mixed_dtypes_and_castability() {
    on_device(0, || {
        let s: &[i64] = &[4];
        // self FLOAT cannot be cast to gradInput INT32: the castability check fires first.
        let (rc, _, msg) = check([s, s, s], [ACL_FLOAT, ACL_FLOAT, ACL_INT32]);
        assert_eq!(rc, ACLNN_ERR_PARAM_INVALID);
        assert!(
            msg.contains("self dtype FLOAT can not cast to gradInput dtype INT32"),
            "{msg}"
        );
        // FLOAT16 -> BOOL is not castable either.
        let (rc, _, msg) = check([s, s, s], [ACL_FLOAT16, ACL_FLOAT16, ACL_BOOL]);
        assert_eq!(rc, ACLNN_ERR_PARAM_INVALID);
        assert!(msg.contains("can not cast"), "{msg}");
        // INT32 -> FLOAT is castable, so the dtype list rejects self.
        let (rc, _, msg) = check([s, s, s], [ACL_FLOAT, ACL_INT32, ACL_FLOAT]);
        assert_eq!(rc, ACLNN_ERR_PARAM_INVALID);
        assert!(
            msg.contains("self dtype INT32 is not supported on Ascend910B4"),
            "{msg}"
        );
        let (rc, _, msg) = check([s, s, s], [ACL_DOUBLE, ACL_FLOAT, ACL_FLOAT]);
        assert_eq!(rc, ACLNN_ERR_PARAM_INVALID);
        assert!(msg.contains("gradOutput dtype DOUBLE"), "{msg}");
        // Mixed float dtypes are fine and need workspace for the casts.
        for dts in [
            [ACL_FLOAT, ACL_FLOAT16, ACL_FLOAT],
            [ACL_FLOAT16, ACL_BF16, ACL_FLOAT16],
            [ACL_BF16, ACL_FLOAT, ACL_BF16],
            [ACL_FLOAT16, ACL_FLOAT16, ACL_FLOAT],
        ] {
            let (rc, ws, msg) = check([s, s, s], dts);
            assert_eq!(rc, ACLNN_SUCCESS, "{dts:?}: {msg}");
            assert!(ws > 0, "{dts:?} needs casts");
        }
    });
    // BF16 is rejected on a product without it, naming the list.
    on_device(1, || {
        let s: &[i64] = &[4];
        let (rc, _, msg) = check([s, s, s], [ACL_FLOAT, ACL_FLOAT, ACL_BF16]);
        assert_eq!(rc, ACLNN_ERR_PARAM_INVALID);
        assert!(
            msg.contains(
                "gradInput dtype BF16 is not supported on Ascend910A, should be in [FLOAT, FLOAT16]"
            ),
            "{msg}"
        );
    });
}

#[test]
fn nulls_come_first() {
    on_device(0, || {
        let t = tensor(&[2], ACL_FLOAT, null_mut());
        let bad = tensor(&[2], ACL_INT8, null_mut());
        let (mut ws, mut ex) = (0u64, null_mut());
        // SAFETY: null pointers are deliberate; others are valid.
        unsafe {
            for (g, x, o, name) in [
                (null_mut(), t, t, "gradOutput"),
                (t, null_mut(), t, "self"),
                (bad, bad, null_mut(), "gradInput"),
            ] {
                let rc = api::aclnnMishBackwardGetWorkspaceSize(g, x, o, &mut ws, &mut ex);
                assert_eq!(rc, ACLNN_ERR_PARAM_NULLPTR);
                assert!(
                    err_msg().contains(&format!("{name} is nullptr")),
                    "{}",
                    err_msg()
                );
            }
            let rc = api::aclnnMishBackwardGetWorkspaceSize(t, t, t, null_mut(), &mut ex);
            assert_eq!(rc, ACLNN_ERR_PARAM_NULLPTR);
            let rc = api::aclnnMishBackwardGetWorkspaceSize(t, t, t, &mut ws, null_mut());
            assert_eq!(rc, ACLNN_ERR_PARAM_NULLPTR);
        }
        destroy_tensor(bad);
        // A destroyed tensor is a stale handle.
        destroy_tensor(t);
        let (rc, _, _) = phase1(t, t, t);
        assert_eq!(rc, ACLNN_ERR_PARAM_INVALID);
        assert!(err_msg().contains("stale"), "{}", err_msg());
    });
}

#[test]
fn shapes() {
    on_device(4, || {
        let f = [ACL_FLOAT; 3];
        let nine: &[i64] = &[1, 1, 1, 1, 1, 1, 1, 1, 2];
        let eight: &[i64] = &[1, 1, 1, 1, 1, 1, 1, 2];
        for shapes in [
            [nine, nine, nine],
            [eight, nine, nine],
            [eight, eight, nine],
        ] {
            let (rc, _, msg) = check(shapes, f);
            assert_eq!(rc, ACLNN_ERR_PARAM_INVALID);
            assert!(msg.contains("more than the supported maximum 8"), "{msg}");
        }
        let (rc, _, _) = check([eight, eight, eight], f);
        assert_eq!(rc, ACLNN_SUCCESS);
        // dims > 8 is checked before the dtype? No: dtypes come first.
        let (rc, _, msg) = check([nine, nine, nine], [ACL_INT32; 3]);
        assert_eq!(rc, ACLNN_ERR_PARAM_INVALID);
        assert!(msg.contains("dtype INT32"), "{msg}");
        // Not broadcastable.
        let (rc, _, msg) = check([&[2, 3], &[3, 2], &[2, 3]], f);
        assert_eq!(rc, ACLNN_ERR_PARAM_INVALID);
        assert!(msg.contains("can not broadcast"), "{msg}");
        // Wrong output shape.
        let (rc, _, msg) = check([&[2, 3], &[1, 3], &[1, 3]], f);
        assert_eq!(rc, ACLNN_ERR_PARAM_INVALID);
        assert!(
            msg.contains("gradInput shape [1, 3] is not equal to the broadcast shape [2, 3]"),
            "{msg}"
        );
        // Broadcasting is fine and needs workspace.
        let (rc, ws, msg) = check([&[2, 3], &[3], &[2, 3]], f);
        assert_eq!(rc, ACLNN_SUCCESS, "{msg}");
        assert!(ws > 0);
        let (rc, ws, _) = check([&[4, 1, 3], &[1, 5, 1], &[4, 5, 3]], f);
        assert_eq!(rc, ACLNN_SUCCESS);
        assert!(ws > 0);
        // Scalars.
        let (rc, ws, _) = check([&[], &[], &[]], f);
        assert_eq!((rc, ws), (ACLNN_SUCCESS, 0));
    });
}

#[test]
fn empty_tensors_succeed_with_no_workspace() {
    on_device(0, || {
        for shapes in [
            [&[0][..], &[0][..], &[0][..]],
            [&[2, 0, 3], &[2, 0, 3], &[2, 0, 3]],
            [&[0, 3], &[3], &[0, 3]],
        ] {
            let ts: Vec<_> = (0..3)
                .map(|i| tensor(shapes[i], ACL_FLOAT16, null_mut()))
                .collect();
            let (rc, ws, ex) = phase1(ts[0], ts[1], ts[2]);
            assert_eq!((rc, ws), (ACLNN_SUCCESS, 0), "{}", err_msg());
            let s = create_stream();
            assert_eq!(phase2(null_mut(), 0, ex, s), ACLNN_SUCCESS, "{}", err_msg());
            assert_eq!(sync(s), ACL_SUCCESS);
            destroy_stream(s);
            for t in ts {
                destroy_tensor(t);
            }
        }
        // An empty tensor with an invalid dtype still fails (checks come first).
        let (rc, _, _) = check([&[0], &[0], &[0]], [ACL_INT64; 3]);
        assert_eq!(rc, ACLNN_ERR_PARAM_INVALID);
    });
}

#[test]
fn no_context_in_phase1_is_runtime_error() {
    let _serial = init_five();
    std::thread::spawn(|| {
        let t = tensor(&[2], ACL_FLOAT, null_mut());
        let (rc, _, _) = phase1(t, t, t);
        assert_eq!(rc, ACLNN_ERR_RUNTIME_ERROR);
        assert!(err_msg().contains("no current context"), "{}", err_msg());
        destroy_tensor(t);
    })
    .join()
    .unwrap();
}

#[test]
fn stream_of_another_device_is_stream_context_error() {
    let _serial = init_five();
    std::thread::spawn(|| {
        set_device(0);
        let s = create_stream();
        let buf = malloc(32);
        set_device(2);
        assert_eq!(sync(s), ACL_ERROR_RT_STREAM_CONTEXT);
        assert!(err_msg().contains("belongs to device 0"), "{}", err_msg());
        let v = [0u8; 32];
        assert_eq!(
            memcpy_async(buf, 32, v.as_ptr().cast(), 32, ACL_MEMCPY_HOST_TO_DEVICE, s),
            ACL_ERROR_RT_STREAM_CONTEXT
        );
        // Phase 2 on that stream is refused too.
        let t = tensor(&[8], ACL_FLOAT, buf);
        let (rc, _, ex) = phase1(t, t, t);
        assert_eq!(rc, ACLNN_SUCCESS);
        let (rc, _, ex2) = phase1(t, t, t);
        assert_eq!(rc, ACLNN_SUCCESS);
        assert_eq!(phase2(null_mut(), 0, ex, s), ACLNN_ERR_RUNTIME_ERROR);
        assert_released_by_failed_phase2(ex);
        set_device(0);
        // The executor was made on device 2: device mismatch with a device-0 stream.
        assert_fails_with(
            phase2(null_mut(), 0, ex2, s),
            ACLNN_ERR_RUNTIME_ERROR,
            &["created on device 2 but the stream is on device 0"],
        );
        assert_released_by_failed_phase2(ex2);
        destroy_tensor(t);
        destroy_stream(s);
        free(buf);
        reset_device(0);
        reset_device(2);
        reset_device(0);
        // Reset below zero is a finding.
        // SAFETY: plain value.
        assert_eq!(
            unsafe { api::aclrtResetDevice(0) },
            ACL_ERROR_RT_PARAM_INVALID
        );
    })
    .join()
    .unwrap();
}
