//! nnopbase's attribute objects through the C ABI: scalars, arrays and lists, with the
//! vendor's NULL and zero-length rules, counters and stale-handle findings.

use crate::common;
use ascend_sim::{api, counters};
use ascend_sys::*;
use common::*;
use std::ffi::c_void;
use std::ptr::{null, null_mut};

fn live() -> [u64; 3] {
    counters().attributes()
}

#[test]
fn scalars_copy_their_value_and_refuse_null_or_sizeless_dtypes() {
    let _serial = serial();
    setup();
    let before = live();
    let mut v = 2.5f64;
    // SAFETY: `v` is a live double for the call; the scalar copies it.
    let s = unsafe { api::aclCreateScalar((&raw mut v).cast(), ACL_DOUBLE) };
    assert!(!s.is_null(), "{}", err_msg());
    assert_eq!(live()[0], before[0] + 1);
    // SAFETY: NULL value and a dtype without bytes are refused with NULL.
    unsafe {
        assert!(api::aclCreateScalar(null_mut(), ACL_FLOAT).is_null());
        assert_err_msg_contains(&["aclCreateScalar", "value is nullptr"]);
        assert!(api::aclCreateScalar((&raw mut v).cast(), ACL_STRING).is_null());
        assert_err_msg_contains(&["STRING"]);
        assert!(api::aclCreateScalar((&raw mut v).cast(), -1).is_null());
        // Every numeric dtype has one, f16 and bool included.
        let mut h = 0x3c00u16;
        let f = api::aclCreateScalar((&raw mut h).cast(), ACL_FLOAT16);
        assert!(!f.is_null());
        assert_eq!(api::aclDestroyScalar(f), ACLNN_SUCCESS);
        assert_eq!(api::aclDestroyScalar(s), ACLNN_SUCCESS);
        assert_eq!(live(), before);
        // Double destroy: a finding naming the object; NULL is a no-op.
        assert_fails_with(
            api::aclDestroyScalar(s),
            ACLNN_ERR_PARAM_INVALID,
            &[
                "aclScalar handle",
                "stale",
                "destroyed by its aclDestroy* call",
            ],
        );
        assert_eq!(api::aclDestroyScalar(null()), ACLNN_SUCCESS);
    }
}

#[test]
fn arrays_with_null_value_or_zero_size_are_valid_and_empty() {
    let _serial = serial();
    setup();
    let before = live();
    let v = [3i64, -1, 7];
    let mut n = 99u64;
    // SAFETY: live slices and out-pointers for each call.
    unsafe {
        let full = api::aclCreateIntArray(v.as_ptr(), 3);
        let zero = api::aclCreateIntArray(v.as_ptr(), 0);
        let null_value = api::aclCreateIntArray(null(), 5);
        for a in [full, zero, null_value] {
            assert!(!a.is_null());
        }
        assert_eq!(live()[1], before[1] + 3);
        assert_eq!(api::aclGetIntArraySize(full, &mut n), ACLNN_SUCCESS);
        assert_eq!(n, 3);
        assert_eq!(api::aclGetIntArraySize(null_value, &mut n), ACLNN_SUCCESS);
        assert_eq!(n, 0);
        assert_fails_with(
            api::aclGetIntArraySize(null(), &mut n),
            ACLNN_ERR_PARAM_NULLPTR,
            &["array is nullptr"],
        );
        assert_fails_with(
            api::aclGetIntArraySize(full, null_mut()),
            ACLNN_ERR_PARAM_NULLPTR,
            &["size is nullptr"],
        );
        let f = [1.5f32, 2.5];
        let fa = api::aclCreateFloatArray(f.as_ptr(), 2);
        let b = [true, false, true];
        let ba = api::aclCreateBoolArray(b.as_ptr(), 3);
        assert_eq!(api::aclGetFloatArraySize(fa, &mut n), ACLNN_SUCCESS);
        assert_eq!(n, 2);
        assert_eq!(api::aclGetBoolArraySize(ba, &mut n), ACLNN_SUCCESS);
        assert_eq!(n, 3);
        assert_eq!(live()[1], before[1] + 5);
        for a in [full, zero, null_value] {
            assert_eq!(api::aclDestroyIntArray(a), ACLNN_SUCCESS);
        }
        assert_eq!(api::aclDestroyFloatArray(fa), ACLNN_SUCCESS);
        assert_eq!(api::aclDestroyBoolArray(ba), ACLNN_SUCCESS);
        assert_eq!(live(), before);
        assert_fails_with(
            api::aclGetIntArraySize(full, &mut n),
            ACLNN_ERR_PARAM_INVALID,
            &["aclIntArray handle", "stale"],
        );
    }
}

#[test]
fn a_foreign_handle_is_recognised() {
    let _serial = serial();
    setup();
    let d = malloc(64);
    let t = tensor(&[2], ACL_FLOAT, d);
    // SAFETY: handles are checked, never dereferenced.
    unsafe {
        assert_fails_with(
            api::aclDestroyScalar(t.cast::<c_void>().cast()),
            ACLNN_ERR_PARAM_INVALID,
            &["not a aclScalar handle"],
        );
        assert_fails_with(
            api::aclDestroyIntArray(0x1234usize as *const aclIntArray),
            ACLNN_ERR_PARAM_INVALID,
            &["foreign or corrupted"],
        );
        assert_eq!(api::aclDestroyTensor(t), ACLNN_SUCCESS);
    }
    free(d);
}

#[test]
fn destroying_a_list_destroys_its_elements() {
    let _serial = serial();
    setup();
    let d = malloc(64);
    let a = tensor(&[2], ACL_FLOAT, d);
    let b = tensor(&[2], ACL_FLOAT, d);
    let tensors = counters().tensors;
    let before = live();
    let mut n = 0u64;
    // SAFETY: live handles and out-pointers.
    unsafe {
        let elems = [a.cast_const(), b.cast_const()];
        let list = api::aclCreateTensorList(elems.as_ptr(), 2);
        assert!(!list.is_null());
        assert_eq!(live()[2], before[2] + 1);
        assert_eq!(api::aclGetTensorListSize(list, &mut n), ACLNN_SUCCESS);
        assert_eq!(n, 2);
        assert_eq!(api::aclDestroyTensorList(list), ACLNN_SUCCESS);
        assert_eq!(counters().tensors, tensors - 2);
        assert_eq!(live(), before);
        // The element went with the list: destroying it again is a double free.
        assert_fails_with(
            api::aclDestroyTensor(a),
            ACLNN_ERR_PARAM_INVALID,
            &["destroyed with the list holding it"],
        );

        let mut x = 1i32;
        let s1 = api::aclCreateScalar((&raw mut x).cast(), ACL_INT32);
        let s2 = api::aclCreateScalar((&raw mut x).cast(), ACL_INT32);
        let scalars = [s1.cast_const(), s2.cast_const()];
        let sl = api::aclCreateScalarList(scalars.as_ptr(), 2);
        assert_eq!(api::aclGetScalarListSize(sl, &mut n), ACLNN_SUCCESS);
        assert_eq!(n, 2);
        // One element destroyed by hand first: the list's destroy reports the double free
        // and still releases the other element.
        assert_eq!(api::aclDestroyScalar(s1), ACLNN_SUCCESS);
        assert_fails_with(
            api::aclDestroyScalarList(sl),
            ACLNN_ERR_PARAM_INVALID,
            &["element 0", "double free"],
        );
        assert_eq!(live(), before);
        // Empty lists, from NULL or a size of 0, are valid objects.
        let e = api::aclCreateTensorList(null(), 3);
        assert!(!e.is_null());
        assert_eq!(api::aclGetTensorListSize(e, &mut n), ACLNN_SUCCESS);
        assert_eq!(n, 0);
        assert_eq!(api::aclDestroyTensorList(e), ACLNN_SUCCESS);
        assert_eq!(api::aclDestroyTensorList(null()), ACLNN_SUCCESS);
    }
    free(d);
}
