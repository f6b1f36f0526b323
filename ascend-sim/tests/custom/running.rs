//! Running: phase 1's shared steps and declared checks in order, the kernel queued in
//! order on the stream, the executor protocol of shipped operators, faults and counts.

use super::*;

#[test]
fn the_kernel_runs_in_order_on_the_stream_with_its_fixed_arguments() {
    // Faults armed on AXPY's symbols by another test must not hit this one.
    let _serial = serial();
    setup();
    register(&AXPY).unwrap();
    let (x, y) = ([1.0f32, -2.5, 3.25, 1e3], [0.5f32, 4.0, -1.0, 2.0]);
    let call = Axpy::new(&x, &y, 2.0);
    let values = (0.25, true, 3);
    let (rc, ws, ex) = call.phase1(values);
    assert_eq!((rc, ws), (ACLNN_SUCCESS, 0), "{}", err_msg());
    // The kernel waits for the work queued before it, and the copy after it sees its result.
    let s = create_stream();
    let hold = ascend_sim::testing::hold_stream(s).expect("a created stream");
    assert_eq!(axpy_phase2(ex, s), ACLNN_SUCCESS, "{}", err_msg());
    let mut host = [0f32; 4];
    let rc = memcpy_async(
        host.as_mut_ptr().cast(),
        16,
        call.bufs[2],
        16,
        ACL_MEMCPY_DEVICE_TO_HOST,
        s,
    );
    assert_eq!(rc, ACL_SUCCESS, "{}", err_msg());
    assert_eq!(host, [0.0; 4], "nothing ran while the stream is held");
    hold.release();
    assert_eq!(sync(s), ACL_SUCCESS, "{}", err_msg());
    assert_eq!(host.to_vec(), expected(&x, &y, 2.0, values));
    // The executor was consumed, as a shipped operator's is.
    assert_consumed(ex);
    destroy_stream(s);
}

/// The executor is gone after its one phase 2.
fn assert_consumed(ex: *mut aclOpExecutor) {
    assert_double_release(ex, &["consumed by its phase-2 call"]);
}

#[test]
fn a_repeatable_executor_relaunches_with_rebound_addresses() {
    // Faults armed on AXPY's symbols by another test must not hit this one.
    let _serial = serial();
    setup();
    register(&AXPY).unwrap();
    let (x, y) = ([1.0f32, 2.0, 3.0], [10.0f32, 20.0, 30.0]);
    let call = Axpy::new(&x, &y, 1.0);
    let values = (0.0, false, 1);
    let (rc, _, ex) = call.phase1(values);
    assert_eq!(rc, ACLNN_SUCCESS, "{}", err_msg());
    // SAFETY: a live executor.
    assert_eq!(unsafe { api::aclSetAclOpExecutorRepeatable(ex) }, 0);
    for _ in 0..2 {
        assert_eq!(axpy_phase2(ex, null_mut()), ACLNN_SUCCESS, "{}", err_msg());
    }
    assert_eq!(sync(null_mut()), ACL_SUCCESS, "{}", err_msg());
    assert_eq!(call.out(3), [11.0, 22.0, 33.0]);
    // Input index 1 is `other`, output index 0 is `out`: rebind both, launch again.
    let (other2, out2) = (malloc(12), malloc(12));
    h2d(other2, &[-1.0f32, -2.0, -3.0]);
    // SAFETY: live executor, tensors and device addresses.
    unsafe {
        assert_eq!(
            api::aclSetInputTensorAddr(ex, 1, call.tensors[1], other2),
            0,
            "{}",
            err_msg()
        );
        assert_eq!(
            api::aclSetOutputTensorAddr(ex, 0, call.tensors[2], out2),
            0,
            "{}",
            err_msg()
        );
        assert_eq!(
            api::aclSetInputTensorAddr(ex, 2, call.tensors[1], other2),
            ACLNN_ERR_PARAM_INVALID,
            "AXPY has two inputs"
        );
    }
    assert_eq!(axpy_phase2(ex, null_mut()), ACLNN_SUCCESS, "{}", err_msg());
    assert_eq!(sync(null_mut()), ACL_SUCCESS, "{}", err_msg());
    assert_eq!(d2h::<f32>(out2, 3), [0.0, 0.0, 0.0]);
    // SAFETY: a live repeatable executor.
    assert_eq!(unsafe { api::aclDestroyAclOpExecutor(ex) }, 0);
    [other2, out2].into_iter().for_each(free);
}

#[test]
fn phase1_runs_the_shared_steps_then_the_declared_checks_in_order() {
    // Faults armed on AXPY's symbols by another test must not hit this one.
    let _serial = serial();
    setup();
    register(&AXPY).unwrap();
    let call = Axpy::new(&[1.0, 2.0], &[3.0, 4.0], 1.0);
    let [x, y, out] = call.tensors;
    let ok = (0.0, false, 1);
    let (mut ws, mut ex) = (0u64, null_mut());
    // SAFETY: NULL out-pointers are checked before anything else.
    let rc = unsafe {
        aclnnUserAxpyGetWorkspaceSize(x, y, call.alpha, 0.0, false, 1, out, null_mut(), &mut ex)
    };
    assert_fails_with(rc, ACLNN_ERR_PARAM_NULLPTR, &["workspaceSize"]);
    // SAFETY: as above.
    let rc = unsafe {
        aclnnUserAxpyGetWorkspaceSize(x, y, call.alpha, 0.0, false, 1, out, &mut ws, null_mut())
    };
    assert_fails_with(rc, ACLNN_ERR_PARAM_NULLPTR, &["executor"]);
    // Pointer arguments in their order, by their vendor names.
    let (rc, ..) = axpy_phase1(null_mut(), null_mut(), null_mut(), ok, null_mut());
    assert_fails_with(rc, ACLNN_ERR_PARAM_NULLPTR, &["self is nullptr"]);
    let (rc, ..) = axpy_phase1(x, y, null_mut(), ok, null_mut());
    assert_fails_with(rc, ACLNN_ERR_PARAM_NULLPTR, &["alpha is nullptr"]);
    let (rc, ..) = axpy_phase1(x, y, call.alpha, ok, null_mut());
    assert_fails_with(rc, ACLNN_ERR_PARAM_NULLPTR, &["out is nullptr"]);
    // The declared checks: dtypes, shapes, values, then out's.
    let i32buf = malloc(8);
    let ints = tensor(&[2], ACL_INT32, i32buf);
    let (rc, ..) = axpy_phase1(ints, y, call.alpha, ok, out);
    assert_fails_with(
        rc,
        ACLNN_ERR_PARAM_INVALID,
        &[
            "self dtype INT32 is not supported on Ascend910B4",
            "FLOAT16",
        ],
    );
    let (rc, ..) = axpy_phase1(x, ints, call.alpha, ok, out);
    assert_fails_with(
        rc,
        ACLNN_ERR_PARAM_INVALID,
        &["other dtype INT32 is not self's dtype FLOAT"],
    );
    let (rc, ..) = axpy_phase1(x, y, call.alpha, (0.0, false, 0), out);
    assert_fails_with(
        rc,
        ACLNN_ERR_PARAM_INVALID,
        &["times 0 should be at least 1"],
    );
    let (rc, ..) = axpy_phase1(x, y, call.alpha, ok, ints);
    assert_fails_with(
        rc,
        ACLNN_ERR_PARAM_INVALID,
        &["out dtype INT32 is not self's dtype FLOAT"],
    );
    let wide = tensor(&[1, 2], ACL_FLOAT, call.bufs[2]);
    let (rc, ..) = axpy_phase1(x, y, call.alpha, ok, wide);
    assert_fails_with(
        rc,
        ACLNN_ERR_PARAM_INVALID,
        &["out shape [1, 2] is not self's shape [2]"],
    );
    // A stale tensor handle is a finding, as for shipped operators.
    destroy_tensor(ints);
    let (rc, ..) = axpy_phase1(x, y, call.alpha, ok, ints);
    assert_eq!(rc, ACLNN_ERR_PARAM_INVALID, "{}", err_msg());
    assert!(ascend_sim::last_report().is_some_and(|r| r.contains("out")));
    destroy_tensor(wide);
    free(i32buf);
}

#[test]
fn faults_and_call_counts_work_under_the_c_names() {
    let _serial = serial();
    setup();
    register(&AXPY).unwrap();
    let call = Axpy::new(&[1.0], &[2.0], 1.0);
    let ok = (0.0, false, 1);
    let (p1, p2) = ("aclnnUserAxpyGetWorkspaceSize", "aclnnUserAxpy");
    let (n1, n2) = (call_count(p1), call_count(p2));
    set_fault(p1, 1).unwrap();
    let (rc, _, ex) = call.phase1(ok);
    assert_fails_with(rc, ACLNN_ERR_INNER_CREATE_EXECUTOR, &["injected fault", p1]);
    assert!(ex.is_null());
    let (rc, _, ex) = call.phase1(ok);
    assert_eq!(rc, ACLNN_SUCCESS, "the fault fired once: {}", err_msg());
    set_fault(p2, 1).unwrap();
    assert_fails_with(
        axpy_phase2(ex, null_mut()),
        ACLNN_ERR_RUNTIME_ERROR,
        &["injected fault", p2],
    );
    // Like a failed phase 2 on CANN, the fault released the executor.
    assert_released_by_failed_phase2(ex);
    let (_, _, ex) = call.phase1(ok);
    assert_eq!(axpy_phase2(ex, null_mut()), ACLNN_SUCCESS, "{}", err_msg());
    assert_eq!(sync(null_mut()), ACL_SUCCESS, "{}", err_msg());
    assert_eq!(call.out(1), [3.0]);
    assert_eq!(call_count(p1), n1 + 3);
    assert_eq!(call_count(p2), n2 + 2);
}

#[test]
fn an_in_place_operator_reads_and_writes_its_tensor_as_stored() {
    setup();
    register(&DOUBLE).unwrap();
    let buf = malloc(4 * 6);
    h2d(buf, &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]);
    // The transposed view of a 2×3 matrix: doubled through its strides.
    let t = tensor_view(&[3, 2], &[1, 3], 0, &[6], ACL_FLOAT, buf);
    let (mut ws, mut ex) = (0u64, null_mut());
    // SAFETY: a live tensor and valid out-pointers; the phase 2 gets the executor.
    unsafe {
        assert_eq!(
            aclnnUserInplaceDoubleGetWorkspaceSize(t, &mut ws, &mut ex),
            0,
            "{}",
            err_msg()
        );
        assert_eq!(
            aclnnUserInplaceDouble(null_mut(), 0, ex, null_mut()),
            0,
            "{}",
            err_msg()
        );
    }
    assert_eq!(sync(null_mut()), ACL_SUCCESS, "{}", err_msg());
    assert_eq!(d2h::<f32>(buf, 6), [2.0, 4.0, 6.0, 8.0, 10.0, 12.0]);
    // f16 is refused by the declaration's output check.
    let h = tensor(&[2], ACL_FLOAT16, buf);
    // SAFETY: as above.
    let rc = unsafe { aclnnUserInplaceDoubleGetWorkspaceSize(h, &mut ws, &mut ex) };
    assert_fails_with(
        rc,
        ACLNN_ERR_PARAM_INVALID,
        &["selfRef dtype FLOAT16 is not supported"],
    );
    [t, h].into_iter().for_each(destroy_tensor);
    free(buf);
}

#[test]
fn a_kernel_error_fails_the_stream_with_its_text() {
    setup();
    let (x, out) = (malloc(12), malloc(12));
    let (tx, tout) = (tensor(&[3], ACL_FLOAT, x), tensor(&[3], ACL_FLOAT, out));
    let (mut ws, mut ex) = (0u64, null_mut());
    // SAFETY: live tensors and valid out-pointers; the phase 2 gets the executor.
    unsafe {
        assert_eq!(
            aclnnUserShortGetWorkspaceSize(tx, tout, &mut ws, &mut ex),
            0,
            "{}",
            err_msg()
        );
        assert_eq!(
            aclnnUserShort(null_mut(), 0, ex, null_mut()),
            0,
            "{}",
            err_msg()
        );
    }
    assert_fails_with(
        sync(null_mut()),
        ACL_ERROR_RT_INTERNAL_ERROR,
        &[
            "aclnnUserShort (queued)",
            "wrote 2 values to out, which has 3 elements",
        ],
    );
    [tx, tout].into_iter().for_each(destroy_tensor);
    [x, out].into_iter().for_each(free);
}

#[test]
fn an_executor_of_a_user_operator_is_refused_by_another_operators_phase2() {
    // Faults armed on AXPY's symbols by another test must not hit this one.
    let _serial = serial();
    setup();
    register(&AXPY).unwrap();
    let call = Axpy::new(&[1.0], &[1.0], 1.0);
    let (rc, _, ex) = call.phase1((0.0, false, 1));
    assert_eq!(rc, ACLNN_SUCCESS, "{}", err_msg());
    // SAFETY: a live executor, checked against its operator.
    let rc = unsafe { api::aclnnMish(null_mut(), 0, ex, null_mut()) };
    assert_fails_with(
        rc,
        ACLNN_ERR_PARAM_INVALID,
        &["made by the phase 1 of UserAxpy", "aclnnUserAxpy"],
    );
}
