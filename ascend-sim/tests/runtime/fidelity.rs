//! Never stricter than CANN: every value of the vendor's enums is accepted where CANN
//! accepts it (formats and dtypes at aclCreateTensor, malloc policies, memory attributes,
//! memcpy kinds), NULL is answered as nnopbase answers it, and the vendor's own
//! MishBackward test with an HWCN output passes.

use crate::common;
use ascend_sim::{api, kernel::mish_grad_f32, testing};
use ascend_sys::*;
use common::*;
use std::ffi::c_void;
use std::ptr::null_mut;

/// Every `aclFormat` of the vendor's header (CANN 8.x).
const FORMATS: [i32; 20] = [
    -1, 0, 1, 2, 3, 4, 12, 16, 27, 29, 30, 32, 33, 35, 47, 50, 51, 52, 53, 54,
];
/// Every `aclDataType` of the vendor's header (CANN 8.x).
const DTYPES: [i32; 28] = [
    -1, 0, 1, 2, 3, 4, 6, 7, 8, 9, 10, 11, 12, 13, 16, 17, 27, 29, 30, 33, 34, 35, 36, 37, 38, 39,
    40, 41,
];
const HWCN: i32 = 16;
const NCHW: i32 = 0;
const NCDHW: i32 = 30;

#[allow(clippy::too_many_arguments)]
fn create(
    dims: &[i64],
    strides: Option<&[i64]>,
    offset: i64,
    storage: &[i64],
    dtype: i32,
    format: i32,
    data: *mut c_void,
) -> *mut aclTensor {
    // SAFETY: the arrays are live slices of the stated lengths; a NULL stride is allowed.
    unsafe {
        api::aclCreateTensor(
            dims.as_ptr(),
            dims.len() as u64,
            dtype,
            strides.map_or(std::ptr::null(), <[i64]>::as_ptr),
            offset,
            format,
            storage.as_ptr(),
            storage.len() as u64,
            data,
        )
    }
}

#[test]
fn every_vendor_format_and_dtype_is_a_valid_tensor() {
    let _serial = serial();
    // t15_formats_order.c / t16_dtypes.c: "format 16 is not a valid aclFormat".
    let d = [4i64];
    for f in FORMATS {
        ascend_sim::clear_last_report();
        let t = create(&d, Some(&[1]), 0, &d, ACL_FLOAT, f, null_mut());
        assert!(!t.is_null(), "format {f}: {}", err_msg());
        assert_eq!(ascend_sim::last_report(), None, "format {f} is not odd");
        destroy_tensor(t);
    }
    for dt in DTYPES {
        ascend_sim::clear_last_report();
        let t = create(&d, Some(&[1]), 0, &d, dt, 2, 0x1000 as *mut c_void);
        assert!(!t.is_null(), "dtype {dt}: {}", err_msg());
        assert_eq!(ascend_sim::last_report(), None, "dtype {dt} is not odd");
        destroy_tensor(t);
    }
    // A 5-D NCDHW tensor.
    let d5 = [1i64, 1, 1, 2, 2];
    let t = create(
        &d5,
        Some(&[4, 4, 4, 2, 1]),
        0,
        &d5,
        ACL_FLOAT,
        NCDHW,
        null_mut(),
    );
    assert!(!t.is_null(), "{}", err_msg());
    destroy_tensor(t);
}

/// Uploads `v` as f32 and returns the buffer.
fn upload(v: &[f32]) -> *mut c_void {
    let p = malloc(std::mem::size_of_val(v).max(1));
    h2d(p, v);
    p
}

#[test]
fn vendor_case_007_not_contiguous_with_an_hwcn_output() {
    let _serial = serial();
    setup();
    // gradOutput and self: dims [5, 4], strides [1, 5] over storage [4, 5]; gradInput:
    // [5, 4] contiguous, format HWCN; values in [-2, 2].
    let mut rng = Rng(7);
    let gs: Vec<f32> = (0..20).map(|_| rng.uniform(-2.0, 2.0) as f32).collect();
    let xs: Vec<f32> = (0..20).map(|_| rng.uniform(-2.0, 2.0) as f32).collect();
    let (dg, dx, dout) = (upload(&gs), upload(&xs), malloc(80));
    let tg = create(&[5, 4], Some(&[1, 5]), 0, &[4, 5], ACL_FLOAT, 2, dg);
    let tx = create(&[5, 4], Some(&[1, 5]), 0, &[4, 5], ACL_FLOAT, 2, dx);
    let tout = create(&[5, 4], Some(&[4, 1]), 0, &[5, 4], ACL_FLOAT, HWCN, dout);
    assert!(!tout.is_null(), "{}", err_msg());
    run_mish_backward(tg, tx, tout);
    let out = d2h::<f32>(dout, 20);
    for i in 0..5 {
        for j in 0..4 {
            let k = i + 5 * j;
            let want = golden(gs[k] as f64, xs[k] as f64);
            let got = out[i * 4 + j] as f64;
            assert!(
                (got - want).abs() <= 1e-4 * (1.0 + want.abs()),
                "{got} {want}"
            );
            assert_eq!(out[i * 4 + j], mish_grad_f32(gs[k], xs[k]));
        }
    }
    for t in [tg, tx, tout] {
        destroy_tensor(t);
    }
    for p in [dg, dx, dout] {
        free(p);
    }
}

#[test]
fn labelled_formats_and_null_strides_compute_like_nd() {
    let _serial = serial();
    setup();
    let xs: Vec<f32> = (0..24).map(|i| i as f32 * 0.3 - 3.0).collect();
    let gs = vec![1.25f32; 24];
    for (dims, format) in [(&[1i64, 2, 3, 4][..], NCHW), (&[1, 2, 1, 3, 4][..], NCDHW)] {
        let (dg, dx, dout) = (upload(&gs), upload(&xs), malloc(96));
        // NULL strides: CANN takes the view as contiguous.
        let tg = create(dims, None, 0, dims, ACL_FLOAT, format, dg);
        let tx = create(dims, None, 0, dims, ACL_FLOAT, format, dx);
        let tout = create(dims, None, 0, dims, ACL_FLOAT, format, dout);
        run_mish_backward(tg, tx, tout);
        let out = d2h::<f32>(dout, 24);
        for k in 0..24 {
            assert_eq!(out[k], mish_grad_f32(gs[k], xs[k]), "format {format}");
        }
        for t in [tg, tx, tout] {
            destroy_tensor(t);
        }
        for p in [dg, dx, dout] {
            free(p);
        }
    }
}

#[test]
fn negative_strides_read_backwards_and_hostile_descriptors_are_refused_in_phase_1() {
    let _serial = serial();
    setup();
    let xs: Vec<f32> = (0..6).map(|i| i as f32 - 2.5).collect();
    let (dx, dout) = (upload(&xs), malloc(24));
    // self read backwards: element k is xs[5 - k].
    let tx = create(&[6], Some(&[-1]), 5, &[6], ACL_FLOAT, 2, dx);
    let tout = tensor(&[6], ACL_FLOAT, dout);
    run_mish_backward(tx, tx, tout);
    let out = d2h::<f32>(dout, 6);
    for k in 0..6 {
        assert_eq!(out[k], mish_grad_f32(xs[5 - k], xs[5 - k]));
    }
    // A view reaching before its storage is refused at phase 2.
    let before = create(&[6], Some(&[-1]), 4, &[6], ACL_FLOAT, 2, dx);
    let (rc, ws, ex) = phase1(before, before, tout);
    assert_eq!(rc, ACLNN_SUCCESS, "{}", err_msg());
    let w = malloc(ws as usize);
    assert_fails_with(
        phase2(w, ws, ex, null_mut()),
        ACLNN_ERR_PARAM_INVALID,
        &["reaches elements [-1, 4]"],
    );
    free(w);
    assert_released_by_failed_phase2(ex);
    // Negative dims, element counts past i64 and unknown dtypes: 161002 in phase 1.
    let neg = create(&[2, -3], None, 0, &[6], ACL_FLOAT, 2, dx);
    let (rc, _, _) = phase1(tout, neg, tout);
    assert_eq!(rc, ACLNN_ERR_PARAM_INVALID);
    assert_err_msg_contains(&["self has a negative dim -3"]);
    let huge = create(&[1 << 40, 1 << 40], None, 0, &[1], ACL_FLOAT, 2, dx);
    let (rc, _, _) = phase1(huge, huge, huge);
    assert_eq!(rc, ACLNN_ERR_PARAM_INVALID);
    assert_err_msg_contains(&["more than i64::MAX elements"]);
    let odd = create(&[6], None, 0, &[6], 5, 2, dx);
    let (rc, _, _) = phase1(tout, odd, tout);
    assert_eq!(rc, ACLNN_ERR_PARAM_INVALID);
    assert_err_msg_contains(&["aclDataType(5)"]);
    for t in [tx, tout, before, neg, huge, odd] {
        destroy_tensor(t);
    }
    free(dx);
    free(dout);
}

#[test]
fn executor_api_answers_null_as_nnopbase_does() {
    let _serial = serial();
    setup();
    let d = malloc(64);
    let t = tensor(&[4], ACL_FLOAT, d);
    let (rc, _, ex) = phase1(t, t, t);
    assert_eq!(rc, ACLNN_SUCCESS);
    // SAFETY: NULLs are deliberate; the other handles are live.
    unsafe {
        assert_eq!(
            api::aclSetAclOpExecutorRepeatable(null_mut()),
            ACLNN_ERR_INNER_NULLPTR
        );
        assert_eq!(
            api::aclDestroyAclOpExecutor(null_mut()),
            ACLNN_ERR_INNER_NULLPTR
        );
        assert_eq!(api::aclSetAclOpExecutorRepeatable(ex), ACLNN_SUCCESS);
        assert_eq!(
            api::aclSetOutputTensorAddr(ex, 0, null_mut(), d),
            ACLNN_ERR_INNER_NULLPTR
        );
        assert_err_msg_contains(&["tensor is nullptr"]);
        assert_eq!(
            api::aclSetOutputTensorAddr(null_mut(), 0, t, d),
            ACLNN_ERR_INNER_NULLPTR
        );
        assert_err_msg_contains(&["executor is nullptr"]);
        // A NULL address is recorded (as by CANN); phase 2 refuses the tensor.
        assert_eq!(
            api::aclSetInputTensorAddr(ex, 0, t, null_mut()),
            ACLNN_SUCCESS
        );
        assert_fails_with(
            phase2(null_mut(), 0, ex, null_mut()),
            ACLNN_ERR_PARAM_NULLPTR,
            &["data address is NULL"],
        );
        // Phase 2 answers a NULL executor with 161001.
        assert_eq!(
            phase2(null_mut(), 0, null_mut(), null_mut()),
            ACLNN_ERR_PARAM_NULLPTR
        );
        assert_eq!(api::aclSetInputTensorAddr(ex, 0, t, d), ACLNN_SUCCESS);
        assert_eq!(
            phase2(null_mut(), 0, ex, null_mut()),
            ACLNN_SUCCESS,
            "{}",
            err_msg()
        );
        assert_eq!(sync(null_mut()), ACL_SUCCESS);
        assert_eq!(api::aclDestroyAclOpExecutor(ex), ACLNN_SUCCESS);
    }
    destroy_tensor(t);
    free(d);
}

#[test]
fn every_documented_malloc_policy_and_memory_attribute() {
    let _serial = serial();
    setup();
    // SAFETY: valid out-pointers; the buffers are freed below.
    unsafe {
        for policy in [
            0u32, 1, 2, 3, 4, 5, 6, 7, 0x100, 0x1000, 0x1002, 0x101, 0x10_0000,
        ] {
            let mut p = null_mut();
            assert_eq!(
                api::aclrtMalloc(&mut p, 64, policy),
                ACL_SUCCESS,
                "{policy:#x}: {}",
                err_msg()
            );
            free(p);
        }
        let (mut f, mut t) = (0usize, 0usize);
        for attr in 0..=17 {
            assert_eq!(
                api::aclrtGetMemInfo(attr, &mut f, &mut t),
                ACL_SUCCESS,
                "{attr}"
            );
            assert!(f <= t && t > 0);
        }
        assert_eq!(
            api::aclrtGetMemInfo(18, &mut f, &mut t),
            ACL_ERROR_INVALID_PARAM
        );
    }
}

#[test]
fn every_memcpy_kind_of_cann_8() {
    let _serial = serial();
    setup();
    let (a, b) = (malloc(16), malloc(16));
    let v = [1u32, 2, 3, 4];
    // 5: host to device through the runtime's buffer; 6 and 7: device to device.
    assert_eq!(
        memcpy(a, 16, v.as_ptr().cast(), 16, 5),
        ACL_SUCCESS,
        "{}",
        err_msg()
    );
    assert_eq!(memcpy(b, 16, a, 16, 6), ACL_SUCCESS, "{}", err_msg());
    assert_eq!(d2h::<u32>(b, 4), v);
    assert_eq!(
        memcpy(a, 16, v.as_ptr().cast(), 16, 7),
        ACL_ERROR_INVALID_PARAM
    );
    assert_err_msg_contains(&["ACL_MEMCPY_INTER_DEVICE_TO_DEVICE", "host memory"]);
    assert_eq!(memcpy(a, 16, b, 16, 8), ACL_ERROR_INVALID_PARAM);
    // Asynchronously, kind 5 takes the host bytes at the call: the caller may reuse them.
    let s = create_stream();
    let hold = testing::hold_stream(s).unwrap();
    let mut host = [9u32, 9, 9, 9];
    assert_eq!(
        memcpy_async(a, 16, host.as_ptr().cast(), 16, 5, s),
        ACL_SUCCESS
    );
    host = [0; 4];
    hold.release();
    assert_eq!(sync(s), ACL_SUCCESS);
    assert_eq!(d2h::<u32>(a, 4), [9, 9, 9, 9]);
    assert_eq!(host, [0; 4]);
    destroy_stream(s);
    free(a);
    free(b);
}

#[test]
fn tensors_are_recorded_as_cann_records_them() {
    let _serial = serial();
    let dims = [2i64, 3];
    let strides = [3i64, 1];
    let neg = [2i64, -3];
    // SAFETY: arrays are live; null pointers are deliberate.
    unsafe {
        let mk = |d: *const i64, n: u64, dt: i32, s: *const i64, off: i64, fmt: i32| {
            api::aclCreateTensor(d, n, dt, s, off, fmt, d, n, null_mut())
        };
        // A NULL array with a nonzero length is CANN's one failure.
        assert!(mk(std::ptr::null(), 2, ACL_FLOAT, strides.as_ptr(), 0, 2).is_null());
        assert!(err_msg().contains("viewDims is NULL"), "{}", err_msg());
        let t = api::aclCreateTensor(
            dims.as_ptr(),
            2,
            ACL_FLOAT,
            strides.as_ptr(),
            0,
            2,
            std::ptr::null(),
            1,
            null_mut(),
        );
        assert!(t.is_null());
        assert!(err_msg().contains("storageDims is NULL"), "{}", err_msg());
        // Everything else is recorded; what no operator can use is reported.
        ascend_sim::clear_last_report();
        for (d, s, off, dt, fmt, reported) in [
            (dims.as_ptr(), std::ptr::null(), 0, ACL_FLOAT, 2, None),
            (
                neg.as_ptr(),
                strides.as_ptr(),
                0,
                ACL_FLOAT,
                2,
                Some("negative dim"),
            ),
            (dims.as_ptr(), neg.as_ptr(), 0, ACL_FLOAT, 2, None),
            (
                dims.as_ptr(),
                strides.as_ptr(),
                -1,
                ACL_FLOAT,
                2,
                Some("offset -1"),
            ),
            (dims.as_ptr(), strides.as_ptr(), 0, 5, 2, Some("dataType 5")),
            (
                dims.as_ptr(),
                strides.as_ptr(),
                0,
                ACL_DT_UNDEFINED,
                2,
                None,
            ),
            (
                dims.as_ptr(),
                strides.as_ptr(),
                0,
                ACL_FLOAT,
                77,
                Some("format 77"),
            ),
        ] {
            let t = mk(d, 2, dt, s, off, fmt);
            assert!(!t.is_null(), "{}", err_msg());
            match reported {
                Some(what) => {
                    let r = ascend_sim::last_report().unwrap_or_default();
                    assert!(r.contains(what), "{what}: {r}");
                }
                None => assert_eq!(ascend_sim::last_report(), None),
            }
            ascend_sim::clear_last_report();
            assert_eq!(api::aclDestroyTensor(t), ACLNN_SUCCESS);
        }
        let t = mk(dims.as_ptr(), 2, ACL_FLOAT, strides.as_ptr(), 0, 2);
        assert!(!t.is_null());
        assert_eq!(api::aclDestroyTensor(t), ACLNN_SUCCESS);
        assert_eq!(api::aclDestroyTensor(t), ACLNN_ERR_PARAM_INVALID);
        // NULL is a no-op, as in CANN.
        assert_eq!(api::aclDestroyTensor(std::ptr::null()), ACLNN_SUCCESS);
    }
}
