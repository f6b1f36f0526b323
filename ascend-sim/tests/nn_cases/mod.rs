//! The vendor's phase-1 unit-test cases as text: a tensor is `DT:dims[:FORMAT[:strides:
//! offset:storage]]` (`-` for 0-D dims, `null` for a NULL tensor), an expectation `OK`,
//! `INVALID` or `NULLPTR`. Shared by the classifier operators' replay tests.
#![allow(dead_code)]

use ascend_sim::api;
use ascend_sys::*;
use std::ptr::null_mut;

/// The dtype named `name` as the vendor's tables spell it.
pub fn dtype(name: &str) -> aclDataType {
    match name {
        "F32" => ACL_FLOAT,
        "F16" => ACL_FLOAT16,
        "BF16" => ACL_BF16,
        "F64" => ACL_DOUBLE,
        "I8" => ACL_INT8,
        "I16" => ACL_INT16,
        "I32" => ACL_INT32,
        "I64" => ACL_INT64,
        "U8" => ACL_UINT8,
        "U16" => ACL_UINT16,
        "U32" => ACL_UINT32,
        "U64" => ACL_UINT64,
        "BOOL" => ACL_BOOL,
        "C64" => ACL_COMPLEX64,
        "C128" => ACL_COMPLEX128,
        "UNDEF" => ACL_DT_UNDEFINED,
        other => panic!("dtype {other}"),
    }
}

fn ints(text: &str) -> Vec<i64> {
    match text {
        "-" => vec![],
        t => t.split(',').map(|v| v.parse().unwrap()).collect(),
    }
}

/// The tensor a case names, without data (NULL for `null`).
pub fn tensor(text: &str) -> *mut aclTensor {
    if text == "null" {
        return null_mut();
    }
    let parts: Vec<&str> = text.split(':').collect();
    let dt = dtype(parts[0]);
    let dims = ints(parts[1]);
    let format = match parts.get(2).copied().unwrap_or("ND") {
        "ND" => ACL_FORMAT_ND,
        "NCHW" => ACL_FORMAT_NCHW,
        "NHWC" => ACL_FORMAT_NHWC,
        "HWCN" => ACL_FORMAT_HWCN,
        "NDHWC" => ACL_FORMAT_NDHWC,
        "NCDHW" => ACL_FORMAT_NCDHW,
        "NC1HWC0" => ACL_FORMAT_NC1HWC0,
        "NZ" => ACL_FORMAT_FRACTAL_NZ,
        other => panic!("format {other}"),
    };
    let (strides, offset, storage) = if parts.len() > 3 {
        (ints(parts[3]), parts[4].parse().unwrap(), ints(parts[5]))
    } else {
        let mut s = vec![1i64; dims.len()];
        for i in (0..dims.len().saturating_sub(1)).rev() {
            s[i] = s[i + 1] * dims[i + 1].max(1);
        }
        (s, 0, dims.clone())
    };
    // SAFETY: the arrays are live slices of the stated lengths; no data.
    let t = unsafe {
        api::aclCreateTensor(
            dims.as_ptr(),
            dims.len() as u64,
            dt,
            strides.as_ptr(),
            offset,
            format,
            storage.as_ptr(),
            storage.len() as u64,
            null_mut(),
        )
    };
    assert!(!t.is_null(), "aclCreateTensor({text})");
    t
}

pub fn destroy(t: *mut aclTensor) {
    if !t.is_null() {
        // SAFETY: a tensor from aclCreateTensor.
        assert_eq!(unsafe { api::aclDestroyTensor(t) }, ACLNN_SUCCESS);
    }
}

/// The status an expectation names.
pub fn status(text: &str) -> i32 {
    match text {
        "OK" => ACLNN_SUCCESS,
        "INVALID" => ACLNN_ERR_PARAM_INVALID,
        "NULLPTR" => ACLNN_ERR_PARAM_NULLPTR,
        other => panic!("expectation {other}"),
    }
}

/// The non-empty lines of a table, split on whitespace.
pub fn rows(table: &str) -> Vec<Vec<&str>> {
    table
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| l.split_whitespace().collect())
        .collect()
}

/// Destroys the executor of a successful phase 1.
pub fn release(rc: i32, ex: *mut aclOpExecutor) {
    if rc == ACLNN_SUCCESS && !ex.is_null() {
        // SAFETY: an executor phase 1 just made.
        assert_eq!(unsafe { api::aclDestroyAclOpExecutor(ex) }, ACLNN_SUCCESS);
    }
}
