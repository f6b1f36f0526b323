//! Helpers of the random and indexing operators' tests: the vendor's unit-test cases
//! written as one line each, their tensors, and the operators' entry points by C name.
#![allow(dead_code)]

use crate::common::*;
use ascend_sys::*;
use std::ffi::c_void;
use std::ptr::null_mut;

/// The dtype names the case tables use.
pub const DTYPES: &[(aclDataType, &str)] = &[
    (ACL_FLOAT, "F32"),
    (ACL_FLOAT16, "F16"),
    (ACL_BF16, "BF16"),
    (ACL_DOUBLE, "F64"),
    (ACL_COMPLEX64, "C64"),
    (ACL_COMPLEX128, "C128"),
    (ACL_INT8, "I8"),
    (ACL_INT16, "I16"),
    (ACL_INT32, "I32"),
    (ACL_INT64, "I64"),
    (ACL_UINT8, "U8"),
    (ACL_UINT16, "U16"),
    (ACL_UINT32, "U32"),
    (ACL_UINT64, "U64"),
    (ACL_BOOL, "BOOL"),
    (ACL_INT4, "INT4"),
    (ACL_DT_UNDEFINED, "UNDEF"),
];

pub fn dtype(name: &str) -> aclDataType {
    DTYPES
        .iter()
        .find(|d| d.1 == name)
        .unwrap_or_else(|| panic!("dtype {name}"))
        .0
}

fn dims_of(text: &str) -> Vec<i64> {
    match text {
        "-" => vec![],
        d => d.split(',').map(|v| v.parse().unwrap()).collect(),
    }
}

/// The tensor a case names, without data: `DTYPE:dims[:FORMAT[:strides:offset:storage]]`
/// (dims comma-separated, `-` for 0-D), or NULL for `null`.
pub fn case_tensor(text: &str) -> *mut aclTensor {
    if text == "null" {
        return null_mut();
    }
    let parts: Vec<&str> = text.split(':').collect();
    let dt = dtype(parts[0]);
    let dims = dims_of(parts[1]);
    let format = match parts.get(2).copied().unwrap_or("ND") {
        "ND" => ACL_FORMAT_ND,
        "NCHW" => ACL_FORMAT_NCHW,
        "NHWC" => ACL_FORMAT_NHWC,
        "HWCN" => ACL_FORMAT_HWCN,
        "NDHWC" => ACL_FORMAT_NDHWC,
        "NCDHW" => ACL_FORMAT_NCDHW,
        "NC1HWC0" => ACL_FORMAT_NC1HWC0,
        "UNDEFINED" => ACL_FORMAT_UNDEFINED,
        other => panic!("format {other}"),
    };
    let (strides, offset, storage) = if parts.len() > 3 {
        (
            dims_of(parts[3]),
            parts[4].parse().unwrap(),
            dims_of(parts[5]),
        )
    } else {
        (contiguous_strides(&dims), 0, dims.clone())
    };
    // SAFETY: the arrays are live slices of the stated lengths; no data.
    let t = unsafe {
        ascend_sim::api::aclCreateTensor(
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
    assert!(!t.is_null(), "aclCreateTensor {text}: {}", err_msg());
    t
}

/// Destroys the non-NULL tensors.
pub fn release(ts: &[*mut aclTensor]) {
    for &t in ts {
        if !t.is_null() {
            destroy_tensor(t);
        }
    }
}

/// The expected status a case names.
pub fn expected(text: &str) -> Option<i32> {
    match text {
        "OK" => Some(ACLNN_SUCCESS),
        "INVALID" => Some(ACLNN_ERR_PARAM_INVALID),
        "NULLPTR" => Some(ACLNN_ERR_PARAM_NULLPTR),
        "ANY" => None,
        other => panic!("status {other}"),
    }
}

/// The simulator's entry point `name`.
pub fn entry(name: &str) -> *const c_void {
    ascend_sim::symbol(name).unwrap_or_else(|| panic!("{name} is not simulated"))
}

/// The lines of a case table, split into words (blank lines and `#` comments dropped).
pub fn cases(table: &str) -> Vec<Vec<&str>> {
    table
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| l.split_whitespace().collect())
        .collect()
}

/// The device a case runs on: `910` the training series, `A2` Atlas A2, `A3` Atlas A3,
/// `310P` and `310B` the inference products.
pub fn device_of(soc: &str) -> i32 {
    match soc {
        "910" => crate::opkit::TRAINING,
        "A2" => crate::opkit::A2,
        "A3" => crate::opkit::A3,
        "310P" => crate::opkit::P310,
        "310B" => crate::opkit::P310B,
        other => panic!("SoC {other}"),
    }
}

/// Device memory holding `v` as `dt` (floats rounded, integers truncated), and its
/// contiguous tensor of `dims`.
pub fn filled(dims: &[i64], dt: aclDataType, v: &[f64]) -> (*mut aclTensor, *mut c_void) {
    let bytes: Vec<u8> = v
        .iter()
        .flat_map(|&x| match dt {
            ACL_FLOAT => (x as f32).to_le_bytes().to_vec(),
            ACL_FLOAT16 => half::f16::from_f64(x).to_le_bytes().to_vec(),
            ACL_DOUBLE => x.to_le_bytes().to_vec(),
            ACL_INT8 => (x as i8).to_le_bytes().to_vec(),
            ACL_INT32 => (x as i32).to_le_bytes().to_vec(),
            ACL_INT64 => (x as i64).to_le_bytes().to_vec(),
            ACL_UINT8 => (x as u8).to_le_bytes().to_vec(),
            ACL_BOOL => vec![u8::from(x != 0.0)],
            other => panic!("dtype {other}"),
        })
        .collect();
    let p = crate::opkit::upload(&bytes);
    (tensor(dims, dt, p), p)
}
