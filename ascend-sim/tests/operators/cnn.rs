//! The CNN operators through the C ABI: the vendor's phase-1 unit-test cases of
//! `aclnnConvolution`, `aclnnConvolutionBackward`, `aclnnMaxPool2dWithIndices` and its
//! backward, replayed with the expected status per case, and a small kernel run of each.
//!
//! The vendor's op_api unit tests run on the stub platform of ops-nn
//! (`tests/ut/op_api/stub/opdev/platform.cpp`), whose SoC is Ascend910B (Atlas A2) with
//! every ability: the cases replay on the Atlas A2 device. Cases for the 950 (HIFLOAT8,
//! FP8, NHWC storage) are left out: the simulator has no 950.

use crate::common;
use crate::opkit;

use ascend_sim::{api, symbol};
use ascend_sys::*;
use common::*;
use std::ffi::c_void;
use std::ptr::null_mut;

const A2: i32 = 0;

/// The simulator's entry point `name` as the function-pointer type `F`.
fn entry<F: Copy>(name: &str) -> F {
    let p = symbol(name).unwrap_or_else(|| panic!("{name} is not simulated"));
    assert_eq!(std::mem::size_of::<F>(), std::mem::size_of_val(&p));
    // SAFETY: every caller names `F` as the C prototype of `name`, a function pointer.
    unsafe { std::mem::transmute_copy::<*const c_void, F>(&p) }
}

fn dtype(name: &str) -> aclDataType {
    match name {
        "F32" => ACL_FLOAT,
        "F16" => ACL_FLOAT16,
        "BF16" => ACL_BF16,
        "F64" => ACL_DOUBLE,
        "I8" => ACL_INT8,
        "I32" => ACL_INT32,
        "I64" => ACL_INT64,
        "U8" => ACL_UINT8,
        "BOOL" => ACL_BOOL,
        other => panic!("dtype {other}"),
    }
}

fn format(name: &str) -> aclFormat {
    match name {
        "ND" => ACL_FORMAT_ND,
        "NCL" => ACL_FORMAT_NCL,
        "NCHW" => ACL_FORMAT_NCHW,
        "NHWC" => ACL_FORMAT_NHWC,
        "NCDHW" => ACL_FORMAT_NCDHW,
        "NDHWC" => ACL_FORMAT_NDHWC,
        "FZ" => ACL_FORMAT_FRACTAL_Z,
        "FZ3D" => ACL_FRACTAL_Z_3D,
        other => panic!("format {other}"),
    }
}

/// A tensor without data from `DT:d0,d1,...:FORMAT` (`-` for 0-D dims), or NULL for
/// `null`/`none`.
fn case_tensor(text: &str) -> *mut aclTensor {
    if text == "null" || text == "none" {
        return null_mut();
    }
    let mut parts = text.split(':');
    let dt = dtype(parts.next().unwrap());
    let dims: Vec<i64> = match parts.next().unwrap() {
        "-" => vec![],
        d => d.split(',').map(|v| v.parse().unwrap()).collect(),
    };
    let fmt = format(parts.next().unwrap_or("ND"));
    let strides = contiguous_strides(&dims);
    // SAFETY: the arrays are live slices of the stated lengths; no data.
    unsafe {
        api::aclCreateTensor(
            dims.as_ptr(),
            dims.len() as u64,
            dt,
            strides.as_ptr(),
            0,
            fmt,
            dims.as_ptr(),
            dims.len() as u64,
            null_mut(),
        )
    }
}

/// An int array from `1,2` (`-` empty, `null` NULL).
fn case_ints(text: &str) -> *mut aclIntArray {
    match text {
        "null" => null_mut(),
        "-" => opkit::int_array(&[]),
        t => opkit::int_array(&t.split(',').map(|v| v.parse().unwrap()).collect::<Vec<_>>()),
    }
}

fn expected(text: &str) -> Option<i32> {
    match text {
        "OK" => Some(ACLNN_SUCCESS),
        "NULLPTR" => Some(ACLNN_ERR_PARAM_NULLPTR),
        "INVALID" => Some(ACLNN_ERR_PARAM_INVALID),
        "!OK" => None,
        other => panic!("expectation {other}"),
    }
}

/// Replays `cases` (one per line, whitespace-separated fields, the expectation last)
/// with `call`, which returns phase 1's status; returns how many ran.
fn replay(table: &str, call: fn(&[&str]) -> i32) -> usize {
    replay_on(A2, table, call)
}

/// [`replay`] on device `device` of [`FIVE_SOCS`].
fn replay_on(device: i32, table: &str, call: fn(&[&str]) -> i32) -> usize {
    let cases: Vec<Vec<String>> = table
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| l.split_whitespace().map(String::from).collect())
        .collect();
    let count = cases.len();
    on_device(device, move || {
        for c in &cases {
            let fields: Vec<&str> = c.iter().map(String::as_str).collect();
            let rc = call(&fields[1..fields.len() - 1]);
            let want = fields[fields.len() - 1];
            match expected(want) {
                Some(code) => assert_eq!(rc, code, "{}: {}", fields[0], err_msg()),
                None => assert_ne!(rc, ACLNN_SUCCESS, "{}", fields[0]),
            }
        }
    });
    count
}

fn release(g: opkit::Got) -> i32 {
    opkit::status(g)
}

type ConvPhase1 = unsafe extern "C" fn(
    *const aclTensor,
    *const aclTensor,
    *const aclTensor,
    *const aclIntArray,
    *const aclIntArray,
    *const aclIntArray,
    bool,
    *const aclIntArray,
    i64,
    *mut aclTensor,
    i8,
    *mut u64,
    *mut *mut aclOpExecutor,
) -> i32;

/// `name input weight bias stride padding dilation transposed outputPadding groups
/// output cubeMathType expected` (from `conv/convolution_forward/tests/ut/op_host/
/// test_aclnn_convolution.cpp`; a case looping over dtypes is one line per dtype; the
/// vendor's `cubeMathType` default there is 1).
const CONV_CASES: &str = "
fp16_fp16_out_fp32_bias_f32 F16:2,16,32,16:NCHW F16:16,16,3,3:NCHW F32:16:NCHW 1,2 1,2 1,2 0 0,0 1 F32:2,16,32,8:NCHW 1 OK
fp16_fp16_out_fp32_bias_f16 F16:2,16,32,16:NCHW F16:16,16,3,3:NCHW F16:16:NCHW 1,2 1,2 1,2 0 0,0 1 F32:2,16,32,8:NCHW 1 OK
fp32_fp32_out_fp16 F32:2,16,32,16:NCHW F32:16,16,3,3:NCHW F32:16:NCHW 1,2 1,2 1,2 0 0,0 1 F16:2,16,32,8:NCHW 1 OK
fp32_fp16_out_fp16 F32:2,16,32,16:NCHW F16:16,16,3,3:NCHW F16:16:NCHW 1,2 1,2 1,2 0 0,0 1 F16:2,16,32,8:NCHW 1 OK
fp32_fp16_out_fp32 F32:2,16,32,16:NCHW F16:16,16,3,3:NCHW F16:16:NCHW 1,2 1,2 1,2 0 0,0 1 F32:2,16,32,8:NCHW 1 OK
fp16_fp32_out_fp32 F16:2,16,32,16:NCHW F32:16,16,3,3:NCHW F16:16:NCHW 1,2 1,2 1,2 0 0,0 1 F32:2,16,32,8:NCHW 1 OK
fp16_fp32_out_fp16 F16:2,16,32,16:NCHW F32:16,16,3,3:NCHW F16:16:NCHW 1,2 1,2 1,2 0 0,0 1 F16:2,16,32,8:NCHW 1 OK
conv2D_NCHW_f32 F32:2,16,32,16:NCHW F32:16,16,3,3:NCHW F32:16:NCHW 1,2 1,2 1,2 0 0,0 1 F32:2,16,32,8:NCHW 1 OK
conv2D_NCHW_f16 F16:2,16,32,16:NCHW F16:16,16,3,3:NCHW F16:16:NCHW 1,2 1,2 1,2 0 0,0 1 F16:2,16,32,8:NCHW 1 OK
conv2D_weight_NHWC_error F16:2,16,32,16:NCHW F16:16,16,3,3:NHWC F16:16:NCHW 1,2 1,2 1,2 0 0,0 1 F16:2,16,32,8:NCHW 1 INVALID
conv2D_NHWC_f32 F32:2,32,16,16:NHWC F32:16,16,3,3:NCHW F32:16:NCHW 1,2 1,2 1,2 0 0,0 1 F32:2,32,8,16:NHWC 1 !OK
conv2D_NHWC_f16 F16:2,32,16,16:NHWC F16:16,16,3,3:NCHW F16:16:NCHW 1,2 1,2 1,2 0 0,0 1 F16:2,32,8,16:NHWC 1 !OK
conv1D_FP32 F32:16,16,16:NCL F32:8,16,3:NCL F32:8:NCL 1 1 1 0 0,0 1 F32:16,8,16:NCL 1 OK
specialConv1D_FP16 F16:16,1,64:NCL F16:8,1,64:NCL F16:1,8,1:NCL 64 0 1 0 0,0 1 F16:16,8,1:NCL 1 INVALID
conv2DTranspose_NCHW_f32 F32:2,16,32,18:NCHW F32:16,16,3,3:NCHW F32:16:NCHW 1,1 1,1 1,2 1 0,0 1 F32:2,16,32,20:NCHW 1 OK
conv2DTranspose_NCHW_f16 F16:2,16,32,18:NCHW F16:16,16,3,3:NCHW F16:16:NCHW 1,1 1,1 1,2 1 0,0 1 F16:2,16,32,20:NCHW 1 OK
conv2DTranspose_NHWC F16:2,32,18,16:NHWC F16:16,16,3,3:NCHW F16:16:NCHW 1,1 1,1 1,2 1 0,0 1 F16:2,32,20,16:NHWC 1 !OK
conv1DTranspose_FP16 F16:2,16,32:NCL F16:16,16,3:NCL F16:16:NCL 1 1 2 1 1 1 F16:2,16,35:NCL 1 OK
conv1DTranspose_FP32 F32:2,16,32:NCL F32:16,16,3:NCL F32:16:NCL 1 1 2 1 1 1 F32:2,16,35:NCL 1 OK
conv1D_infershape_error F16:16,16,16:NCL F16:8,16,3:NCL F16:1,8,1:NCL 1 1 1 0 0,0 1 F16:16,8,17:NCL 1 INVALID
conv2D_infershape_error F16:2,16,32,16:NCHW F16:16,16,3,3:NCHW F16:1,16,1,1:NCHW 1,2 1,2 1,2 0 0,0 1 F16:2,16,33,9:NCHW 1 INVALID
conv1DTranspose_infershape_error F16:2,16,32:NCL F16:16,16,3:NCL F16:16:NCL 1 1 2 1 1 1 F16:2,16,36:NCL 1 INVALID
conv2DTranspose_infershape_error F16:2,16,32,18:NCHW F16:16,16,3,3:NCHW F16:16:NCHW 1,1 1,1 1,2 1 0,0 1 F16:2,16,33,21:NCHW 1 INVALID
dataType_error_I8 I8:16,16,16:NCL I8:8,16,3:NCL I8:1,8,1:NCL 1 1 1 0 0,0 1 I8:16,8,16:NCL 1 INVALID
dataType_error_I32 I32:16,16,16:NCL I32:8,16,3:NCL I32:1,8,1:NCL 1 1 1 0 0,0 1 I32:16,8,16:NCL 1 INVALID
dataType_error_F64 F64:16,16,16:NCL F64:8,16,3:NCL F64:1,8,1:NCL 1 1 1 0 0,0 1 F64:16,8,16:NCL 1 INVALID
dataType_error_BOOL BOOL:16,16,16:NCL BOOL:8,16,3:NCL BOOL:1,8,1:NCL 1 1 1 0 0,0 1 BOOL:16,8,16:NCL 1 INVALID
dataType_error_BF16 BF16:16,16,16:NCL BF16:8,16,3:NCL BF16:1,8,1:NCL 1 1 1 0 0,0 1 BF16:16,8,16:NCL 1 INVALID
1D_format_error_NCHW F16:16,16,16:NCHW F16:8,16,3:NCHW F16:1,8,1:NCHW 1 1 1 0 0,0 1 F16:16,8,16:NCHW 1 INVALID
1D_format_error_ND F16:16,16,16:ND F16:8,16,3:ND F16:1,8,1:ND 1 1 1 0 0,0 1 F16:16,8,16:ND 1 INVALID
2D_format_error_ND F16:2,16,32,16:ND F16:16,16,3,3:ND F16:1,16,1,1:ND 1,2 1,2 1,2 0 0,0 1 F16:2,16,32,8:ND 1 INVALID
2D_format_error_NCL F16:2,16,32,16:NCL F16:16,16,3,3:NCL F16:1,16,1,1:NCL 1,2 1,2 1,2 0 0,0 1 F16:2,16,32,8:NCL 1 INVALID
input_weight_dim_error_1 F16:2,16,32,16:NCHW F16:16,16,3:NCHW F16:1,16,1,1:NCHW 1,2 1,2 1,2 0 0,0 1 F16:2,16,32,8:NCHW 1 INVALID
attr_dim_error F16:2,16,32,16:NCHW F16:16,16,3,3:NCHW F16:1,16,1,1:NCHW 1,2,1 1,2,1 1,2,1 0 0,0,0 1 F16:2,16,32,8:NCHW 1 INVALID
dim_format_error_NCDHW F16:2,16,32,16:NCDHW F16:16,16,3,3:NCDHW F16:1,16,1,1:NCDHW 1,2 1,2 1,2 0 0,0 1 F16:2,16,32,8:NCDHW 1 INVALID
input_weight_dim_error_2 F16:2,16:NCHW F16:16,16,3,3,3,3:NCHW F16:1,16,1,1:NCHW 1,2 1,2 1,2 0 0,0 1 F16:2,16,32,8:NCHW 1 INVALID
nullptr_error null null F16:16:NCHW null null null 1 null 1 null 1 NULLPTR
shape_error_2 F16:2,16,32,18:NCHW F16:16,16,3,3:NCHW F16:16:NCHW -1,0 -1,1 -1,0 1 0,0 1 F16:2,16,32,20:NCHW 1 INVALID
shape_error_3 F32:2,16,32,16:NCHW F32:16,16,48,48:NCHW F32:1,16,1,1:NCHW 1,2 1,2 1,2 0 0,0 1 F32:2,16,32,8:NCHW 1 INVALID
shape_transpose_pass F32:2,16,32,16:NCHW F32:16,16,48,48:NCHW F32:16:NCHW 1,2 1,2 1,2 1 0,1 1 F32:2,16,77,122:NCHW 1 OK
bias_shape F16:2,16,32,16:NCHW F16:16,16,3,3:NCHW F16:1,16:NCHW 1,2 1,2 1,2 0 0,0 1 F16:2,16,32,8:NCHW 1 INVALID
bias_equal_outChannel F16:2,16,32,16:NCHW F16:16,16,3,3:NCHW F16:1,8,1,1:NCHW 1,2 1,2 1,2 0 0,0 1 F16:2,16,32,8:NCHW 1 INVALID
bias_shape_transpose F16:2,16,32,18:NCHW F16:16,16,3,3:NCHW F16:1,16:NCHW 1,1 1,1 1,2 1 0,0 1 F16:2,16,32,20:NCHW 1 INVALID
groups_1 F16:2,16,32,16:NCHW F16:16,16,3,3:NCHW F16:1,16,1,1:NCHW 1,2 1,2 1,2 0 0,0 0 F16:2,16,32,8:NCHW 1 INVALID
groups_2 F16:2,16,32,16:NCHW F16:16,16,3,3:NCHW F16:1,16,1,1:NCHW 1,2 1,2 1,2 0 0,0 3 F16:2,16,32,8:NCHW 1 INVALID
weight_1stDim_transpose F16:2,16,32,18:NCHW F16:8,16,3,3:NCHW F16:16:NCHW 1,1 1,1 1,2 1 0,0 1 F16:2,16,32,20:NCHW 1 INVALID
outputPadding_transpose F16:2,16,32,18:NCHW F16:16,16,3,3:NCHW F16:16:NCHW 1,1 1,1 1,2 1 1,2 1 F16:2,16,32,20:NCHW 1 INVALID
channel_group F16:2,16,32,16:NCHW F16:16,4,3,3:NCHW F16:1,16,1,1:NCHW 1,2 1,2 1,2 0 0,0 2 F16:2,16,32,8:NCHW 1 INVALID
empty_tensor_conv2d_Batch F32:0,16,32,16:NCHW F32:16,16,3,3:NCHW F32:1,16,1,1:NCHW 1,2 1,2 1,2 0 0,0 1 F32:0,16,32,8:NCHW 1 INVALID
empty_tensor_conv1d F16:2,0,5:NCL F16:8,0,3:NCL F16:8:NCL 1 0 1 0 0,0 1 F16:2,0,3:NCL 1 INVALID
empty_tensor_conv2d F32:0,2,1,0:NCHW F32:3,2,1,1:NCHW F32:3:NCHW 1,1 2,2 1,1 0 0,0 1 F32:0,3,5,4:NCHW 1 OK
empty_tensor_conv2d_Channel F32:2,0,32,16:NCHW F32:16,0,3,3:NCHW F32:1,16,1,1:NCHW 1,2 1,2 1,2 0 0,0 1 F32:2,16,32,8:NCHW 1 INVALID
empty_tensor_conv2dTranspose_Batch F16:0,16,32,18:NCHW F16:16,16,3,3:NCHW F16:16:NCHW 1,1 1,1 1,2 1 0,0 1 F16:0,16,32,20:NCHW 1 OK
empty_tensor_conv2dTranspose_Channel F16:2,0,32,18:NCHW F16:0,16,3,3:NCHW F16:16:NCHW 1,1 1,1 1,2 1 0,0 1 F16:2,16,32,20:NCHW 1 INVALID
empty_tensor_conv2dTranspose_H F16:2,16,0,18:NCHW F16:16,16,3,3:NCHW F16:16:NCHW 1,1 1,1 1,2 1 0,0 1 F16:0,16,32,20:NCHW 1 INVALID
empty_tensor_conv2dTranspose_W F16:2,16,32,18:NCHW F16:16,16,3,0:NCHW F16:16:NCHW 1,1 1,1 1,2 1 0,0 1 F16:0,16,32,20:NCHW 1 INVALID
weight_spatial_dim F16:2,16,32,16:NCHW F16:16,16,0,3:NCHW F16:1,16,1,1:NCHW 1,2 1,2 1,2 0 0,0 1 F16:2,16,32,8:NCHW 1 INVALID
conv2D_group_larger_1 F32:2,16,32,16:NCHW F32:16,8,3,3:NCHW F32:16:NCHW 1,2 1,2 1,2 0 0,0 2 F32:2,16,32,8:NCHW 1 OK
910B2_conv2D_NCHW_bf16 BF16:2,16,32,16:NCHW BF16:16,16,3,3:NCHW BF16:16:NCHW 1,2 1,2 1,2 0 0,0 1 BF16:2,16,32,8:NCHW 1 OK
910B2_conv1D_FP32 F32:16,16,16:NCL F32:8,16,3:NCL F32:8:NCL 1 1 1 0 0,0 1 F32:16,8,16:NCL 1 OK
910B2_conv2DTranspose_NCHW_bf16 BF16:2,16,32,18:NCHW BF16:16,16,3,3:NCHW BF16:16:NCHW 1,1 1,1 1,2 1 0,0 1 BF16:2,16,32,20:NCHW 1 OK
910B2_conv2D_C04 F16:320,3,224,224:NCHW F16:768,3,32,32:NCHW none 32,32 0,0 1,1 0 0,0 1 F16:320,768,7,7:NCHW 1 OK
conv1D_with_asymmetric_pad F32:16,64,122:NCL F32:31,64,10:NCL F32:31:NCL 4 2,2 1 0 0,0 1 F32:16,31,30:NCL 1 OK
bias_NHWC_f32 F16:2,16,32,16:NCHW F16:16,16,3,3:NCHW F32:16:NHWC 1,2 1,2 1,2 0 0,0 1 F32:2,16,32,8:NCHW 1 INVALID
conv2D_NCHW_splitW_1 F16:3,1,410,410:NCHW F16:1,1,51,51:NCHW F16:1:NCHW 1,1 0,0 1,1 0 0,0 1 F16:3,1,360,360:NCHW 1 OK
bf16_usefp16 BF16:2,16,32,16:NCHW BF16:16,16,3,3:NCHW BF16:16:ND 1,2 1,2 1,2 0 0,0 1 BF16:2,16,32,8:NCHW 2 OK
empty_input_zero_output_nonzero F32:2,1,32,0:NCHW F32:16,1,3,3:NCHW F32:16:NCHW 1,1 1,5 1,1 0 0,0 1 F32:2,16,32,8:NCHW 1 INVALID
conv1d_transpose_with_bias F32:1,384,258:NCL F32:384,1,3:NCL F32:384:ND 1 2 1 1 0 384 F32:1,384,256:NCL 1 OK
conv1d_transpose_matmul F32:4,272,1:NCL F32:272,128,73:NCL none 8 0 1 1 0 1 F32:4,128,73:NCL 3 OK
";

fn conv_case(f: &[&str]) -> i32 {
    let p1: ConvPhase1 = entry("aclnnConvolutionGetWorkspaceSize");
    let (x, w, b) = (case_tensor(f[0]), case_tensor(f[1]), case_tensor(f[2]));
    let (s, p, d) = (case_ints(f[3]), case_ints(f[4]), case_ints(f[5]));
    let transposed = f[6] == "1";
    let op = case_ints(f[7]);
    let groups: i64 = f[8].parse().unwrap();
    let out = case_tensor(f[9]);
    let cmt: i8 = f[10].parse().unwrap();
    // SAFETY: simulator handles or NULL; valid out-pointers.
    let rc = release(opkit::p1(|ws, ex| unsafe {
        p1(x, w, b, s, p, d, transposed, op, groups, out, cmt, ws, ex)
    }));
    for t in [x, w, b, out] {
        if !t.is_null() {
            destroy_tensor(t);
        }
    }
    for a in [s, p, d, op] {
        if !a.is_null() {
            opkit::destroy_int_array(a);
        }
    }
    rc
}

#[test]
fn the_vendors_convolution_phase1_cases_replay() {
    let _gate = crate::common::serial();
    assert_eq!(replay(CONV_CASES, conv_case), 69);
}

/// The vendor's check order where two checks both fail: NULL before dtype, dtype before
/// rank, rank before format, format before values, values before the output's shape.
#[test]
fn convolution_checks_run_in_the_vendors_order() {
    let table = "
null_weight_and_bad_dtype I32:2,1,5,5:NCHW null none 1,1 0,0 1,1 0 0,0 1 F32:2,1,3,3:NCHW 1 NULLPTR
dtype_before_rank F32:2,1,5,5:NCHW F32:1,1,3,3:NCHW none 1,1 0,0 1,1 0 0,0 1 I32:2,1,3:NCHW 1 INVALID
format_refused F32:2,1,5,5:ND F32:1,1,3,3:NCHW none 1,1 0,0 1,1 0 0,0 1 F32:2,1,3,3:ND 1 INVALID
cube_math_out_of_range F32:2,1,5,5:NCHW F32:1,1,3,3:NCHW none 1,1 0,0 1,1 0 0,0 1 F32:2,1,3,3:NCHW 5 INVALID
keep_dtype_f32 F32:2,1,5,5:NCHW F32:1,1,3,3:NCHW none 1,1 0,0 1,1 0 0,0 1 F32:2,1,3,3:NCHW 0 OK
four_sided_padding F32:2,1,5,5:NCHW F32:1,1,3,3:NCHW none 1,1 1,0,0,1 1,1 0 0,0 1 F32:2,1,4,4:NCHW 0 OK
";
    assert_eq!(replay(table, conv_case), 6);
    on_device(A2, || {
        // ND is refused with a message naming the format.
        let f = "F32:2,1,5,5:ND F32:1,1,3,3:NCHW none 1,1 0,0 1,1 0 0,0 1 F32:2,1,3,3:ND 1";
        let v: Vec<&str> = f.split_whitespace().collect();
        assert_eq!(conv_case(&v), ACLNN_ERR_PARAM_INVALID);
        assert_err_msg_contains(&["input format ND is not NCHW"]);
    });
}

/// A 2-D convolution with a bias on the device through the C ABI, against a direct sum.
#[test]
#[allow(clippy::needless_range_loop)] // the direct sum reads as the formula
fn convolution_computes_a_small_2d_case() {
    on_device(A2, || {
        let xv: Vec<f32> = (0..2 * 2 * 4 * 4).map(|i| (i % 7) as f32 - 3.0).collect();
        let wv: Vec<f32> = (0..3 * 2 * 3 * 3)
            .map(|i| (i % 5) as f32 * 0.5 - 1.0)
            .collect();
        let bv = [0.5f32, -1.0, 2.0];
        let (x, xp) = torch_f32(&[2, 2, 4, 4], &xv);
        let (w, wp) = torch_f32(&[3, 2, 3, 3], &wv);
        let (b, bp) = torch_f32(&[3], &bv);
        let (o, op_) = torch_f32(&[2, 3, 2, 2], &[0.0; 24]);
        let (s, p, d, opad) = (
            opkit::int_array(&[1, 1]),
            opkit::int_array(&[0, 0]),
            opkit::int_array(&[1, 1]),
            opkit::int_array(&[0, 0]),
        );
        let p1: ConvPhase1 = entry("aclnnConvolutionGetWorkspaceSize");
        // SAFETY: simulator handles; valid out-pointers.
        let g = opkit::p1(|ws, ex| unsafe { p1(x, w, b, s, p, d, false, opad, 1, o, 0, ws, ex) });
        opkit::run(g, entry("aclnnConvolution"));
        let got: Vec<f32> = d2h(op_, 24);
        for n in 0..2 {
            for co in 0..3 {
                for oh in 0..2 {
                    for ow in 0..2 {
                        let mut acc = bv[co] as f64;
                        for ci in 0..2 {
                            for kh in 0..3 {
                                for kw in 0..3 {
                                    let xi = ((n * 2 + ci) * 4 + oh + kh) * 4 + ow + kw;
                                    let wi = ((co * 2 + ci) * 3 + kh) * 3 + kw;
                                    acc += xv[xi] as f64 * wv[wi] as f64;
                                }
                            }
                        }
                        let at = ((n * 3 + co) * 2 + oh) * 2 + ow;
                        assert!(
                            (got[at] as f64 - acc).abs() < 1e-4,
                            "{at}: {} vs {acc}",
                            got[at]
                        );
                    }
                }
            }
        }
        for t in [x, w, b, o] {
            destroy_tensor(t);
        }
        for a in [s, p, d, opad] {
            opkit::destroy_int_array(a);
        }
        for m in [xp, wp, bp, op_] {
            free(m);
        }
    });
}

/// A device buffer holding `v` and its contiguous f32 tensor of `dims`, described in the
/// format torch_npu gives its rank (NCL, NCHW, NCDHW, else ND).
fn torch_f32(dims: &[i64], v: &[f32]) -> (*mut aclTensor, *mut c_void) {
    let p = opkit::upload(v);
    let fmt = match dims.len() {
        3 => ACL_FORMAT_NCL,
        4 => ACL_FORMAT_NCHW,
        5 => ACL_FORMAT_NCDHW,
        _ => ACL_FORMAT_ND,
    };
    let strides = contiguous_strides(dims);
    // SAFETY: the arrays are live slices of the stated lengths; `p` holds the data.
    let t = unsafe {
        api::aclCreateTensor(
            dims.as_ptr(),
            dims.len() as u64,
            ACL_FLOAT,
            strides.as_ptr(),
            0,
            fmt,
            dims.as_ptr(),
            dims.len() as u64,
            p,
        )
    };
    assert!(!t.is_null(), "{}", err_msg());
    (t, p)
}

/// A bool array from `1,0,1` (`null` NULL).
fn case_bools(text: &str) -> *mut aclBoolArray {
    if text == "null" {
        return null_mut();
    }
    let v: Vec<bool> = text.split(',').map(|b| b == "1").collect();
    // SAFETY: a live slice of the stated length.
    let a = unsafe { api::aclCreateBoolArray(v.as_ptr(), v.len() as u64) };
    assert!(!a.is_null());
    a
}

type ConvBackwardPhase1 = unsafe extern "C" fn(
    *const aclTensor,
    *const aclTensor,
    *const aclTensor,
    *const aclIntArray,
    *const aclIntArray,
    *const aclIntArray,
    *const aclIntArray,
    bool,
    *const aclIntArray,
    i32,
    *const aclBoolArray,
    i8,
    *mut aclTensor,
    *mut aclTensor,
    *mut aclTensor,
    *mut u64,
    *mut *mut aclOpExecutor,
) -> i32;

/// `name gradOutput input weight biasSizes stride padding dilation transposed
/// outputPadding groups outputMask cubeMathType gradInput gradWeight gradBias expected`
/// (from `conv/convolution_backward/tests/ut/op_api/test_aclnn_convolutin_backward.cpp`,
/// a representative subset of its 84 cases: every check it exercises, the 1-D, 2-D and 3-D
/// and transposed successes, the masks; the 950-only cases are left out, and
/// `dw_bf16_out_fp32`, refused by the vendor's kernel selection rather than its checker).
const CONV_BACKWARD_CASES: &str = "
Conv2DBackward_Fp16_keep_dtype F16:512,2048,7,7:NCHW F16:512,512,7,7:NCHW F16:2048,512,1,1:NCHW 1 1,1 0,0 1,1 0 0,0 1 1,1,1 0 F16:512,512,7,7:NCHW F16:2048,512,1,1:NCHW F16:2048 OK
Conv2DBackward_Fp32_allow_fp32_down_precision F32:512,2048,7,7:NCHW F32:512,512,7,7:NCHW F32:2048,512,1,1:NCHW 1 1,1 0,0 1,1 0 0,0 1 1,1,1 1 F32:512,512,7,7:NCHW F32:2048,512,1,1:NCHW F32:2048 OK
Conv2DBackward_Fp32_use_fp16 F32:512,2048,7,7:NCHW F32:512,512,7,7:NCHW F32:2048,512,1,1:NCHW 1 1,1 0,0 1,1 0 0,0 1 1,1,1 2 F32:512,512,7,7:NCHW F32:2048,512,1,1:NCHW F32:2048 OK
Conv1DBackward_Fp16 F16:16,8,16:NCL F16:16,16,16:NCL F16:8,16,3:NCL 1 1 1 1 0 0 1 1,1,1 0 F16:16,16,16:NCL F16:8,16,3:NCL F16:8 OK
Conv1DBackward_invalid_format_error F16:16,8,16:NCL F16:16,16,16:NCHW F16:8,16,3:NCL 1 1 1 1 0 0 1 1,1,1 0 F16:16,16,16:NCL F16:8,16,3:NCL F16:8 INVALID
ConvBackward_empty_error F16:16,16,32,8:NCHW F16:16,16,0,16:NCHW F16:16,16,3,3:NCHW 16 1,2 1,2 1,2 0 0,0 1 1,1,1 0 F16:-:NCHW F16:16,16,3,3:NCHW F16:16 INVALID
910B2_Conv2DBackward_Fp32_keep_dtype F32:512,2048,7,7:NCHW F32:512,512,7,7:NCHW F32:2048,512,1,1:NCHW 2048 1,1 0,0 1,1 0 0,0 1 1,1,1 0 F32:512,512,7,7:NCHW F32:2048,512,1,1:NCHW F32:2048 OK
910B2_Conv2DBackward_Fp32_use_hf32 F32:512,2048,7,7:NCHW F32:512,512,7,7:NCHW F32:2048,512,1,1:NCHW 2048 1,1 0,0 1,1 0 0,0 1 1,1,1 3 F32:512,512,7,7:NCHW F32:2048,512,1,1:NCHW F32:2048 OK
910B2_ConvBackward_post_dilation_FP32 F32:512,2048,2,2:NCHW F32:512,512,4,4:NCHW F32:2048,512,1,1:NCHW 2048 3,3 1,1 1,1 0 0,0 1 1,1,1 0 F32:512,512,4,4:NCHW F32:2048,512,1,1:NCHW F32:2048 OK
910B2_Conv2DBackward_Bf16 BF16:512,2048,7,7:NCHW BF16:512,512,7,7:NCHW BF16:2048,512,1,1:NCHW 2048 1,1 0,0 1,1 0 0,0 1 1,1,1 0 BF16:512,512,7,7:NCHW BF16:2048,512,1,1:NCHW BF16:2048 OK
910B2_Conv3DBackward_Bf16 BF16:512,512,7,7,7:NCDHW BF16:512,512,7,7,7:NCDHW BF16:512,512,1,1,1:NCDHW 512 1,1,1 0,0,0 1,1,1 0 0,0,0 1 1,1,1 0 BF16:512,512,7,7,7:NCDHW BF16:512,512,1,1,1:NCDHW BF16:512 OK
910B2_Conv3DBackward_attr_error F32:1,1,1,1,1:NCDHW F32:1,1,1,1,1:NCDHW F32:1,1,1,1,1:NCDHW 1 0,1,1 -1,0,0 0,1,1 0 0,0,0 1 1,1,1 0 F32:1,1,1,1,1:NCDHW F32:1,1,1,1,1:NCDHW F32:1 INVALID
910B2_Conv3DBackwardInput_1x1Kernel F16:8,512,2,14,14:NCDHW F16:8,64,2,14,14:NCDHW F16:512,64,1,1,1:NCDHW 512 1,1,1 0,0,0 1,1,1 0 0,0,0 1 1,1,0 0 F16:8,64,2,14,14:NCDHW F16:512,64,1,1,1:NCDHW none OK
910B2_Conv3DBackward_depthwise BF16:128,128,7,7,7:NCDHW BF16:128,128,7,7,7:NCDHW BF16:128,1,1,1,1:NCDHW 128 1,1,1 0,0,0 1,1,1 0 0,0,0 128 1,1,1 0 BF16:128,128,7,7,7:NCDHW BF16:128,1,1,1,1:NCDHW BF16:128 OK
910B2_Conv3DBackward_Bf16_NDHWC BF16:512,512,7,7,7:NDHWC BF16:512,512,7,7,7:NDHWC BF16:512,512,1,1,1:NDHWC 512 1,1,1 0,0,0 1,1,1 0 0,0,0 1 1,1,1 0 BF16:512,512,7,7,7:NDHWC BF16:512,512,1,1,1:NDHWC BF16:512 INVALID
910B2_Conv3DBackward_Bf16_dilation BF16:1,16,1,6,6:NCDHW BF16:1,16,1,10,10:NCDHW BF16:16,16,1,3,3:NCDHW 16 1,1,1 0,0,0 1,2,2 0 0,0,0 1 1,1,1 0 BF16:1,16,1,10,10:NCDHW BF16:16,16,1,3,3:NCDHW BF16:16 OK
910B2_Conv3DBackward_Bf16_stride BF16:1,16,1,8,3:NCDHW BF16:1,16,1,10,10:NCDHW BF16:16,16,1,3,4:NCDHW 16 1,1,3 0,0,0 1,1,1 0 0,0,0 1 1,1,1 0 BF16:1,16,1,10,10:NCDHW BF16:16,16,1,3,4:NCDHW BF16:16 OK
910B2_Conv3DBackward_Bf16_pad BF16:1,16,1,7,13:NCDHW BF16:1,16,1,10,10:NCDHW BF16:16,16,1,4,4:NCDHW 16 1,1,1 0,0,3 1,1,1 0 0,0,0 1 1,1,1 0 BF16:1,16,1,10,10:NCDHW BF16:16,16,1,4,4:NCDHW BF16:16 OK
910B2_Conv3DBackward_Bf16_strideD_GT_kernelD BF16:1,16,6,5,5:NCDHW BF16:1,16,11,10,10:NCDHW BF16:16,16,1,2,2:NCDHW 16 2,2,2 0,0,0 1,1,1 0 0,0,0 1 1,1,1 0 BF16:1,16,11,10,10:NCDHW BF16:16,16,1,2,2:NCDHW BF16:16 OK
910B2_Conv2DBackpropInputV2_WhiteCase F32:4,320,80,80:NCHW F32:4,320,80,80:NCHW F32:320,320,3,3:NCHW 320 1,1 1,1 1,1 0 0,0 1 1,0,0 0 F32:4,320,80,80:NCHW F32:320,320,3,3:NCHW F32:320 OK
910B2_Conv2DBackpropFilterV3_WhiteCase F16:1,640,104,152:NCHW F16:1,640,104,152:NCHW F16:640,640,3,3:NCHW 640 1,1 1,1 1,1 0 0,0 1 0,1,0 0 F16:1,640,104,152:NCHW F16:640,640,3,3:NCHW F16:640 OK
910B2_Conv3DBackward_Fp16_USE_HF32 F16:1,16,2,10,10:NCDHW F16:1,16,2,10,10:NCDHW F16:16,16,1,3,3:NCDHW 16 1,1,1 0,1,1 1,1,1 0 0,0,0 1 1,1,1 3 F16:1,16,2,10,10:NCDHW F16:16,16,1,3,3:NCDHW F16:16 OK
910B2_Conv3DBackward_DH_Swap F32:1,512,4096,1,16:NCDHW F32:1,512,4099,1,16:NCDHW F32:512,1,4,1,1:NCDHW 512 1,1,1 0,0,0 1,1,1 0 0,0,0 512 1,1,1 0 F32:1,512,4099,1,16:NCDHW F32:512,1,4,1,1:NCDHW F32:512 OK
910B2_groups_zero_error F16:1,16,10,10:NCHW F16:1,16,10,10:NCHW F16:16,16,3,3:NCHW 16 1,1 1,1 1,1 0 0,0 0 1,1,1 0 F16:1,16,10,10:NCHW F16:16,16,3,3:NCHW F16:16 INVALID
910B2_weightCout_not_divisible_by_groups_error F16:1,17,10,10:NCHW F16:1,16,10,10:NCHW F16:17,16,3,3:NCHW 17 1,1 1,1 1,1 0 0,0 2 1,1,1 0 F16:1,16,10,10:NCHW F16:17,16,3,3:NCHW F16:17 INVALID
910B2_input_dim_less_than_3_error F16:1,16,10,10:NCHW F16:0,0:NCHW F16:16,16,3,3:NCHW 16 1,1 1,1 1,1 0 0,0 1 1,1,1 0 F16:0,0:NCHW F16:16,16,3,3:NCHW F16:16 INVALID
910B2_gradOutput_input_dim_not_equal_error F16:1,16,10,10:NCHW F16:1,16,10:NCL F16:16,16,3:NCL 16 1 1 1 0 0 1 1,1,1 0 F16:1,16,10:NCL F16:16,16,3:NCL F16:16 INVALID
910B2_empty_tensor_biasSizes_nullptr_error F16:0,16,10,10:NCHW F16:0,16,10,10:NCHW F16:16,16,3,3:NCHW null 1,1 1,1 1,1 0 0,0 1 1,1,1 0 F16:0,16,10,10:NCHW F16:16,16,3,3:NCHW F16:16 INVALID
910B2_gradOutput_empty_tensor_error F16:0,16,8,8:NCHW F16:1,16,10,10:NCHW F16:16,16,3,3:NCHW 16 1,1 1,1 1,1 0 0,0 1 1,1,1 0 F16:1,16,10,10:NCHW F16:16,16,3,3:NCHW F16:16 INVALID
910B2_weight_empty_tensor_error F16:1,16,8,8:NCHW F16:1,16,10,10:NCHW F16:0,16,3,3:NCHW 16 1,1 1,1 1,1 0 0,0 1 1,1,1 0 F16:1,16,10,10:NCHW F16:0,16,3,3:NCHW F16:16 INVALID
910B2_Conv1DTransposeBackward_FP16 F16:4,8,16:NCL F16:4,16,16:NCL F16:16,8,3:NCL 8 1 1 1 1 0 1 1,1,1 0 F16:4,16,16:NCL F16:16,8,3:NCL F16:8 OK
910B2_Conv2DTransposeBackward_FP32 F32:1,16,7,7:NCHW F32:1,16,7,7:NCHW F32:16,16,3,3:NCHW 16 1,1 1,1 1,1 1 0,0 1 0,1,0 0 F32:1,16,7,7:NCHW F32:16,16,3,3:NCHW F32:16 OK
910B2_Conv3DTransposeBackward_BF16 BF16:1,16,1,7,7:NCDHW BF16:1,16,1,7,7:NCDHW BF16:16,16,1,3,3:NCDHW 16 1,1,1 0,1,1 1,1,1 1 0,0,0 1 1,1,1 0 BF16:1,16,1,7,7:NCDHW BF16:16,16,1,3,3:NCDHW BF16:16 OK
910B2_PreDilation_FP16_2dim_padding F16:1,32,5,5:NCHW F16:1,16,14,14:NCHW F16:32,16,3,3:NCHW 32 3,3 1,1 1,1 0 0,0 1 1,1,1 0 F16:1,16,14,14:NCHW F16:32,16,3,3:NCHW F16:32 OK
910B2_PreDilation_FP32_4dim_padding F32:1,32,5,5:NCHW F32:1,16,14,14:NCHW F32:32,16,3,3:NCHW 32 3,3 1,1,1,1 1,1 0 0,0,0,0 1 1,1,1 0 F32:1,16,14,14:NCHW F32:32,16,3,3:NCHW F32:32 OK
910B2_PreDilation_FP32_gradOutputH1 F32:1,32,1,5:NCHW F32:1,16,4,14:NCHW F32:32,16,3,3:NCHW 32 10,3 0,1 1,1 0 0,0 1 1,1,1 0 F32:1,16,4,14:NCHW F32:32,16,3,3:NCHW F32:32 OK
910B2_PreDilation_FP16_gradOutputW1 F16:1,32,5,1:NCHW F16:1,16,14,4:NCHW F16:32,16,3,3:NCHW 32 3,10 1,0 1,1 0 0,0 1 1,1,1 0 F16:1,16,14,4:NCHW F16:32,16,3,3:NCHW F16:32 OK
910B2_Conv2DBackpropFilterBy1x1Dw F16:1024,1024,14,14:NCHW F16:1024,3,224,224:NCHW F16:1024,3,16,16:NCHW 1024 16,16 0,0 1,1 0 0,0 1 1,1,0 0 F16:1024,3,224,224:NCHW F16:1024,3,16,16:NCHW F16:1024 OK
910B2_Conv3DBackwardDwByMmMode_FmEqKernel F16:1,6,1,1,1:NCDHW F16:1,4,2,2,2:NCDHW F16:6,4,2,2,2:NCDHW 6 1,1,1 0,0,0 1,1,1 0 0,0,0 1 0,1,0 0 F16:1,4,2,2,2:NCDHW F16:6,4,2,2,2:NCDHW F16:6 OK
910B2_Conv3DBackward_Fp32_USE_HF32 F32:1,16,2,10,10:NCDHW F32:1,16,2,10,10:NCDHW F32:16,16,1,3,3:NCDHW 16 1,1,1 0,1,1 1,1,1 0 0,0,0 1 1,1,1 3 F32:1,16,2,10,10:NCDHW F32:16,16,1,3,3:NCDHW F32:16 OK
";

fn conv_backward_case(f: &[&str]) -> i32 {
    let p1: ConvBackwardPhase1 = entry("aclnnConvolutionBackwardGetWorkspaceSize");
    let (go, x, w) = (case_tensor(f[0]), case_tensor(f[1]), case_tensor(f[2]));
    let bs = case_ints(f[3]);
    let (s, p, d) = (case_ints(f[4]), case_ints(f[5]), case_ints(f[6]));
    let transposed = f[7] == "1";
    let op = case_ints(f[8]);
    let groups: i32 = f[9].parse().unwrap();
    let mask = case_bools(f[10]);
    let cmt: i8 = f[11].parse().unwrap();
    let (gi, gw, gb) = (case_tensor(f[12]), case_tensor(f[13]), case_tensor(f[14]));
    // SAFETY: simulator handles or NULL; valid out-pointers.
    let rc = release(opkit::p1(|ws, ex| unsafe {
        p1(
            go, x, w, bs, s, p, d, transposed, op, groups, mask, cmt, gi, gw, gb, ws, ex,
        )
    }));
    for t in [go, x, w, gi, gw, gb] {
        if !t.is_null() {
            destroy_tensor(t);
        }
    }
    for a in [bs, s, p, d, op] {
        if !a.is_null() {
            opkit::destroy_int_array(a);
        }
    }
    if !mask.is_null() {
        // SAFETY: an array from aclCreateBoolArray.
        assert_eq!(unsafe { api::aclDestroyBoolArray(mask) }, ACLNN_SUCCESS);
    }
    rc
}

#[test]
fn the_vendors_convolution_backward_phase1_cases_replay() {
    let _gate = crate::common::serial();
    assert_eq!(replay(CONV_BACKWARD_CASES, conv_backward_case), 40);
}

/// The NULL checks of the backward: outputPadding is required even when not transposed,
/// an output the mask asks for must be given, one it does not ask for may be NULL.
#[test]
fn convolution_backward_masks_decide_which_outputs_may_be_null() {
    let _gate = crate::common::serial();
    let table = "
no_output_padding F32:1,2,3,3:NCHW F32:1,1,5,5:NCHW F32:2,1,3,3:NCHW 2 1,1 0,0 1,1 0 null 1 1,1,1 0 F32:1,1,5,5:NCHW F32:2,1,3,3:NCHW F32:2 NULLPTR
no_mask F32:1,2,3,3:NCHW F32:1,1,5,5:NCHW F32:2,1,3,3:NCHW 2 1,1 0,0 1,1 0 0,0 1 null 0 F32:1,1,5,5:NCHW F32:2,1,3,3:NCHW F32:2 NULLPTR
mask_of_two F32:1,2,3,3:NCHW F32:1,1,5,5:NCHW F32:2,1,3,3:NCHW 2 1,1 0,0 1,1 0 0,0 1 1,1 0 F32:1,1,5,5:NCHW F32:2,1,3,3:NCHW F32:2 INVALID
asked_but_null F32:1,2,3,3:NCHW F32:1,1,5,5:NCHW F32:2,1,3,3:NCHW 2 1,1 0,0 1,1 0 0,0 1 1,1,1 0 F32:1,1,5,5:NCHW null F32:2 NULLPTR
not_asked_and_null F32:1,2,3,3:NCHW F32:1,1,5,5:NCHW F32:2,1,3,3:NCHW 2 1,1 0,0 1,1 0 0,0 1 1,0,0 0 F32:1,1,5,5:NCHW null null OK
gradBias_not_nd F32:1,2,3,3:NCHW F32:1,1,5,5:NCHW F32:2,1,3,3:NCHW 2 1,1 0,0 1,1 0 0,0 1 1,1,1 0 F32:1,1,5,5:NCHW F32:2,1,3,3:NCHW F32:2:NCL INVALID
output_padding_not_zero F32:1,2,3,3:NCHW F32:1,1,5,5:NCHW F32:2,1,3,3:NCHW 2 1,1 0,0 1,1 0 1,0 1 1,1,1 0 F32:1,1,5,5:NCHW F32:2,1,3,3:NCHW F32:2 INVALID
cube_math_4 F32:1,2,3,3:NCHW F32:1,1,5,5:NCHW F32:2,1,3,3:NCHW 2 1,1 0,0 1,1 0 0,0 1 1,1,1 4 F32:1,1,5,5:NCHW F32:2,1,3,3:NCHW F32:2 INVALID
";
    assert_eq!(replay(table, conv_backward_case), 8);
}

const TRAINING: i32 = 1;

type PoolPhase1 = unsafe extern "C" fn(
    *const aclTensor,
    *const aclIntArray,
    *const aclIntArray,
    *const aclIntArray,
    *const aclIntArray,
    bool,
    *mut aclTensor,
    *mut aclTensor,
    *mut u64,
    *mut *mut aclOpExecutor,
) -> i32;

/// `name self kernelSize stride padding dilation ceilMode out indices expected` (every
/// case of `pooling/max_pool3d_with_argmax_v2/tests/ut/op_api/
/// test_aclnn_max_pool2d_with_indices.cpp`; its SoC-dependent cases expect success on
/// Ascend910B and 161002 elsewhere: the Atlas A2 expectation here, the training series'
/// in `POOL_CASES_TRAINING`).
const POOL_CASES: &str = "
normal_float F32:2,3,2,2:NCHW 2,2 1,1 0,0 1,1 1 F32:2,3,1,1:NCHW I32:2,3,1,1:NCHW OK
normal_bfloat16_int64 BF16:2,3,2,2:NCHW 2,2 1,1 0,0 1,1 1 BF16:2,3,1,1:NCHW I64:2,3,1,1:NCHW OK
normal_float_stride_null F32:2,3,2,2:NCHW 2 - 0 1 1 F32:2,3,1,1:NCHW I32:2,3,1,1:NCHW OK
normal_kernel_size2 F32:2,3,2,2:NCHW 2,2 1,1 0,0 1,1 1 F32:2,3,1,1:NCHW I32:2,3,1,1:NCHW OK
normal_ceilMode_true F32:2,3,2,2:NCHW 2,2 2,2 0,0 1,1 1 F32:2,3,1,1:NCHW I32:2,3,1,1:NCHW OK
normal_ceilMode_false F32:2,3,2,2:NCHW 2,2 1,1 0,0 1,1 0 F32:2,3,1,1:NCHW I32:2,3,1,1:NCHW OK
normal_nbatch0 F32:0,3,2,2:NCHW 2,2 1,1 0,0 1,1 0 F32:0,3,1,1:NCHW I32:0,3,1,1:NCHW OK
abnormal_nInputPlane0 F32:2,0,2,2:NCHW 2,2 1,1 0,0 1,1 0 F32:2,0,1,1:NCHW I32:2,0,1,1:NCHW INVALID
abnormal_int I32:2,3,2,2:NCHW 2,2 1,1 0,0 1,1 0 I32:2,3,1,1:NCHW I32:2,3,1,1:NCHW INVALID
normal_self_nullptr null 2,2 1,1 0,0 1,1 0 F32:2,3,1,1:NCHW I32:2,3,1,1:NCHW NULLPTR
abnormal_kernel_nullptr F32:2,3,2,2:NCHW null 1,1 0,0 1,1 0 F32:2,3,1,1:NCHW I32:2,3,1,1:NCHW NULLPTR
abnormal_indices_float F32:2,3,2,2:NCHW 2,2 1,1 0,0 1,1 0 F32:2,3,1,1:NCHW F32:2,3,1,1:NCHW INVALID
abnormal_out_int F32:2,3,2,2:NCHW 2,2 1,1 0,0 1,1 0 I32:2,3,1,1:NCHW I32:2,3,1,1:NCHW INVALID
abnormal_self_out_diff F32:2,3,2,2:NCHW 2,2 1,1 0,0 1,1 0 F16:2,3,1,1:NCHW F32:2,3,1,1:NCHW INVALID
abnormal_self_2d F32:2,3:NCHW 2,2 1,1 0,0 1,1 0 F32:2,3:NCHW I32:2,3:NCHW INVALID
abnormal_self_5d F32:2,3,2,2,2:NCHW 2,2 1,1 0,0 1,1 0 F32:2,3,1,1,2:NCHW I32:2,3,1,1,2:NCHW INVALID
abnormal_self_privateFormat F32:3,2,2:FZ3D 2,2 1,1 0,0 1,1 0 F32:3,1,1:FZ3D I32:3,1,1:NCHW INVALID
abnormal_kenelSize_0 F32:3,2,2,2:NCHW - 1,1 0,0 1,1 0 F32:3,1,1,2:NCHW I32:3,1,1,2:NCHW INVALID
abnormal_kernelValue_0 F32:3,2,2,2:NCHW 0,1 1,1 0,0 1,1 0 F32:3,1,1,2:NCHW I32:3,1,1,2:NCHW INVALID
abnormal_strideValue_0 F32:3,2,2,2:NCHW 2,2 0,1 0,0 1,1 0 F32:3,1,1,2:NCHW I32:2,3,1,1:NCHW INVALID
abnormal_padValue F32:3,2,2,2:NCHW 2,2 1,1 2,0 1,1 0 F32:3,1,1,2:NCHW I32:3,1,1,2:NCHW INVALID
abnormal_dilation F32:3,2,2,2:NCHW 2,2 1,1 0,0 2,1 0 F32:3,1,1,2:NCHW I32:3,1,1,2:NCHW INVALID
abnormal_paddingSize F32:3,2,2,2:NCHW 2,2 1,1 - 1,1 0 F32:3,1,1,2:NCHW I32:3,1,1,2:NCHW INVALID
abnormal_dilationSize F32:3,2,2,2:NCHW 2,2 1,1 0,0 - 0 F32:3,1,1,2:NCHW I32:3,1,1,2:NCHW INVALID
abnormal_out_indices_diff F32:3,2,2,2:NCHW 2,2 1,1 0,0 1,1 0 F32:3,1,1,2:NCHW I32:2,1,1,2:NCHW INVALID
abnormal_out_shape F32:3,2,2,2:NCHW 3,3 2,2 0,0 1,1 0 F32:3,1,1,2:NCHW I32:3,1,1,2:NCHW INVALID
";

/// The SoC-dependent cases of `POOL_CASES` as the vendor expects them off Ascend910B.
const POOL_CASES_TRAINING: &str = "
normal_float F32:2,3,2,2:NCHW 2,2 1,1 0,0 1,1 1 F32:2,3,1,1:NCHW I32:2,3,1,1:NCHW INVALID
normal_bfloat16_int64 BF16:2,3,2,2:NCHW 2,2 1,1 0,0 1,1 1 BF16:2,3,1,1:NCHW I64:2,3,1,1:NCHW INVALID
normal_kernel_size2 F32:2,3,2,2:NCHW 2,2 1,1 0,0 1,1 1 F32:2,3,1,1:NCHW I32:2,3,1,1:NCHW INVALID
normal_ceilMode_true F32:2,3,2,2:NCHW 2,2 2,2 0,0 1,1 1 F32:2,3,1,1:NCHW I32:2,3,1,1:NCHW INVALID
normal_ceilMode_false F32:2,3,2,2:NCHW 2,2 1,1 0,0 1,1 0 F32:2,3,1,1:NCHW I32:2,3,1,1:NCHW INVALID
normal_nbatch0 F32:0,3,2,2:NCHW 2,2 1,1 0,0 1,1 0 F32:0,3,1,1:NCHW I32:0,3,1,1:NCHW INVALID
";

fn pool_case(f: &[&str]) -> i32 {
    let p1: PoolPhase1 = entry("aclnnMaxPool2dWithIndicesGetWorkspaceSize");
    let x = case_tensor(f[0]);
    let lists = [
        case_ints(f[1]),
        case_ints(f[2]),
        case_ints(f[3]),
        case_ints(f[4]),
    ];
    let ceil = f[5] == "1";
    let (out, idx) = (case_tensor(f[6]), case_tensor(f[7]));
    // SAFETY: simulator handles or NULL; valid out-pointers.
    let rc = release(opkit::p1(|ws, ex| unsafe {
        p1(
            x, lists[0], lists[1], lists[2], lists[3], ceil, out, idx, ws, ex,
        )
    }));
    for t in [x, out, idx] {
        if !t.is_null() {
            destroy_tensor(t);
        }
    }
    for a in lists {
        if !a.is_null() {
            opkit::destroy_int_array(a);
        }
    }
    rc
}

#[test]
fn the_vendors_max_pool_phase1_cases_replay() {
    let _gate = crate::common::serial();
    assert_eq!(replay(POOL_CASES, pool_case), 26);
    assert_eq!(replay_on(TRAINING, POOL_CASES_TRAINING, pool_case), 6);
}

type PoolBackwardPhase1 = unsafe extern "C" fn(
    *const aclTensor,
    *const aclTensor,
    *const aclTensor,
    *const aclIntArray,
    *const aclIntArray,
    *const aclIntArray,
    *const aclIntArray,
    bool,
    *mut aclTensor,
    *mut u64,
    *mut *mut aclOpExecutor,
) -> i32;

/// `name gradOutput self indices kernelSize stride padding dilation ceilMode gradInput
/// expected` (every case of `pooling/max_pool3d_grad_with_argmax/tests/ut/op_api/
/// test_aclnn_max_pool2d_with_indices_backward.cpp` but its two 950 ones; the
/// SoC-dependent ones with the Ascend910B expectation, and off it in
/// `POOL_BACKWARD_CASES_TRAINING`).
const POOL_BACKWARD_CASES: &str = "
normal_float F32:2,3,1,1:NCHW F32:2,3,2,2:NCHW I32:2,3,1,1:NCHW 2 1 0 1 1 F32:2,3,2,2:NCHW OK
normal_float_CHW F32:3,1,1:NCL F32:3,2,2:NCL I32:3,1,1:NCL 2 1 0 1 1 F32:3,2,2:NCL OK
normal_attr_size2 F32:2,3,1,1:NCHW F32:2,3,2,2:NCHW I32:2,3,1,1:NCHW 2,2 1,1 0,0 1,1 1 F32:2,3,2,2:NCHW OK
normal_ceilMode_true F32:2,3,1,1:NCHW F32:2,3,2,2:NCHW I32:2,3,1,1:NCHW 2,2 2,2 0,0 1,1 1 F32:2,3,2,2:NCHW OK
normal_ceilMode_false F32:2,3,1,1:NCHW F32:2,3,2,2:NCHW I32:2,3,1,1:NCHW 2,2 1,1 0,0 1,1 0 F32:2,3,2,2:NCHW OK
normal_nbatch0 F32:0,3,1,1:NCHW F32:0,3,2,2:NCHW I32:0,3,1,1:NCHW 2,2 1,1 0,0 1,1 0 F32:0,3,2,2:NCHW OK
abnormal_nInputPlane0 F32:2,0,1,1:NCHW F32:2,0,2,2:NCHW I32:2,0,1,1:NCHW 2,2 1,1 0,0 1,1 0 F32:2,0,2,2:NCHW INVALID
abnormal_int I32:2,3,1,1:NCHW I32:2,3,2,2:NCHW I32:2,3,1,1:NCHW 2,2 1,1 0,0 1,1 0 I32:2,3,2,2:NCHW INVALID
abnormal_float16 F16:2,3,1,1:NCHW F16:2,3,2,2:NCHW I32:2,3,1,1:NCHW 2 - 0 1 1 F16:2,3,2,2:NCHW INVALID
normal_self_nullptr F32:2,3,1,1:NCHW null I32:2,3,1,1:NCHW 2,2 1,1 0,0 1,1 0 F32:2,3,2,2:NCHW NULLPTR
abnormal_kernel_nullptr F32:2,3,1,1:NCHW F32:2,3,2,2:NCHW I32:2,3,1,1:NCHW null 1,1 0,0 1,1 0 F32:2,3,2,2:NCHW NULLPTR
abnormal_indices_float F32:2,3,1,1:NCHW F32:2,3,2,2:NCHW F32:2,3,1,1:NCHW 2,2 1,1 0,0 1,1 0 F32:2,3,2,2:NCHW INVALID
abnormal_out_int F32:2,3,1,1:NCHW F32:2,3,2,2:NCHW I32:2,3,1,1:NCHW 2,2 1,1 0,0 1,1 0 I32:2,3,2,2:NCHW INVALID
abnormal_self_out_diff F16:2,3,1,1:NCHW F32:2,3,2,2:NCHW I32:2,3,1,1:NCHW 2,2 1,1 0,0 1,1 0 F32:2,3,2,2:NCHW INVALID
abnormal_self_2d F32:2,3:NCHW F32:2,3:NCHW I32:4,64:NCHW 2,2 1,1 0,0 1,1 0 F32:2,3:NCHW INVALID
abnormal_self_5d F32:2,3,1,1,2:NCHW F32:2,3,2,2,2:NCHW I32:2,3,1,1,2:NCHW 2,2 1,1 0,0 1,1 0 F32:2,3,2,2,2:NCHW INVALID
abnormal_self_privateFormat F32:3,1,1:FZ3D F32:3,2,2:FZ3D I32:3,1,1:FZ3D 2,2 1,1 0,0 1,1 0 F32:3,2,2:FZ3D INVALID
abnormal_kenelSize_0 F32:3,1,1,2:NCHW F32:3,2,2,2:NCHW I32:3,1,1,2:NCHW - 1,1 0,0 1,1 0 F32:3,2,2,2:NCHW INVALID
abnormal_kernelValue_0 F32:3,1,1,2:NCHW F32:3,2,2,2:NCHW I32:3,1,1,2:NCHW 0,1 1,1 0,0 1,1 0 F32:3,2,2,2:NCHW INVALID
abnormal_strideValue_0 F32:3,1,1,2:NCHW F32:3,2,2,2:NCHW I32:3,1,1,2:NCHW 2,2 0,1 0,0 1,1 0 F32:3,2,2,2:NCHW INVALID
abnormal_padValue F32:3,1,1,2:NCHW F32:3,2,2,2:NCHW I32:3,1,1,2:NCHW 2,2 1,1 2,0 1,1 0 F32:3,2,2,2:NCHW INVALID
abnormal_dilation F32:3,1,1,2:NCHW F32:3,2,2,2:NCHW I32:3,1,1,2:NCHW 2,2 1,1 0,0 2,1 0 F32:3,2,2,2:NCHW INVALID
abnormal_paddingSize F32:3,1,1,2:NCHW F32:3,2,2,2:NCHW I32:3,1,1,2:NCHW 2,2 1,1 - 1,1 0 F32:3,2,2,2:NCHW INVALID
abnormal_dilationSize F32:3,1,1,2:NCHW F32:3,2,2,2:NCHW I32:3,1,1,2:NCHW 2,2 1,1 0,0 - 0 F32:3,2,2,2:NCHW INVALID
abnormal_out_indices_diff F32:3,1,1,2:NCHW F32:3,2,2,2:NCHW I32:3,1,2,2:NCHW 2,2 1,1 0,0 1,1 0 F32:3,2,2,2:NCHW INVALID
abnormal_out_shape F32:3,1,1,2:NCHW F32:3,2,2,2:NCHW I32:3,1,1,2:NCHW 3,3 2,2 0,0 1,1 0 F32:3,2,2,2:NCHW INVALID
";

/// The SoC-dependent cases of `POOL_BACKWARD_CASES` as the vendor expects them off
/// Ascend910B.
const POOL_BACKWARD_CASES_TRAINING: &str = "
normal_float F32:2,3,1,1:NCHW F32:2,3,2,2:NCHW I32:2,3,1,1:NCHW 2 1 0 1 1 F32:2,3,2,2:NCHW INVALID
normal_float_CHW F32:3,1,1:NCL F32:3,2,2:NCL I32:3,1,1:NCL 2 1 0 1 1 F32:3,2,2:NCL INVALID
normal_attr_size2 F32:2,3,1,1:NCHW F32:2,3,2,2:NCHW I32:2,3,1,1:NCHW 2,2 1,1 0,0 1,1 1 F32:2,3,2,2:NCHW INVALID
normal_ceilMode_true F32:2,3,1,1:NCHW F32:2,3,2,2:NCHW I32:2,3,1,1:NCHW 2,2 2,2 0,0 1,1 1 F32:2,3,2,2:NCHW INVALID
normal_ceilMode_false F32:2,3,1,1:NCHW F32:2,3,2,2:NCHW I32:2,3,1,1:NCHW 2,2 1,1 0,0 1,1 0 F32:2,3,2,2:NCHW INVALID
normal_nbatch0 F32:0,3,1,1:NCHW F32:0,3,2,2:NCHW I32:0,3,1,1:NCHW 2,2 1,1 0,0 1,1 0 F32:0,3,2,2:NCHW INVALID
";

fn pool_backward_case(f: &[&str]) -> i32 {
    let p1: PoolBackwardPhase1 = entry("aclnnMaxPool2dWithIndicesBackwardGetWorkspaceSize");
    let (g, x, idx) = (case_tensor(f[0]), case_tensor(f[1]), case_tensor(f[2]));
    let lists = [
        case_ints(f[3]),
        case_ints(f[4]),
        case_ints(f[5]),
        case_ints(f[6]),
    ];
    let ceil = f[7] == "1";
    let gi = case_tensor(f[8]);
    // SAFETY: simulator handles or NULL; valid out-pointers.
    let rc = release(opkit::p1(|ws, ex| unsafe {
        p1(
            g, x, idx, lists[0], lists[1], lists[2], lists[3], ceil, gi, ws, ex,
        )
    }));
    for t in [g, x, idx, gi] {
        if !t.is_null() {
            destroy_tensor(t);
        }
    }
    for a in lists {
        if !a.is_null() {
            opkit::destroy_int_array(a);
        }
    }
    rc
}

#[test]
fn the_vendors_max_pool_backward_phase1_cases_replay() {
    let _gate = crate::common::serial();
    assert_eq!(replay(POOL_BACKWARD_CASES, pool_backward_case), 26);
    assert_eq!(
        replay_on(TRAINING, POOL_BACKWARD_CASES_TRAINING, pool_backward_case),
        6
    );
}
