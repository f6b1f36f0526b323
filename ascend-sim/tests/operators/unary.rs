//! The unary family through the C ABI: every row of `ascend_ops::unary` on every product,
//! its phase-1 checks, the vendor's own phase-1 unit-test cases replayed, and its kernel
//! against the row's exact values in every dtype, through strided views, in place and
//! empty.

use crate::common;
use crate::opkit;

use ascend_ops::Product;
use ascend_ops::unary::{Integers, ROWS, Unary};
use ascend_sim::{call_count, set_fault, simulated_symbols, symbol};
use ascend_sys::*;
use common::*;
use half::{bf16, f16};
use opkit::Phase2;
use std::ffi::c_void;
use std::ptr::null_mut;

type Phase1 = unsafe extern "C" fn(
    *const aclTensor,
    *mut aclTensor,
    *mut u64,
    *mut *mut aclOpExecutor,
) -> i32;
type InplacePhase1 = unsafe extern "C" fn(*mut aclTensor, *mut u64, *mut *mut aclOpExecutor) -> i32;

/// The products of [`FIVE_SOCS`], by device.
const PRODUCTS: [Product; 5] = [
    Product::AtlasA2,
    Product::Training910,
    Product::Inference310P,
    Product::Atlas310B,
    Product::AtlasA3,
];
const A2: i32 = 0;

fn address(name: &str) -> *const c_void {
    symbol(name).unwrap_or_else(|| panic!("{name} is not simulated"))
}

fn phase1_of(name: &str) -> Phase1 {
    let p = address(&format!("aclnn{name}GetWorkspaceSize"));
    // SAFETY: the simulator's phase 1 of a unary row has this prototype.
    unsafe { std::mem::transmute::<*const c_void, Phase1>(p) }
}

fn inplace_phase1_of(name: &str) -> InplacePhase1 {
    let p = address(&format!("aclnn{name}GetWorkspaceSize"));
    // SAFETY: the simulator's phase 1 of an in-place unary row has this prototype.
    unsafe { std::mem::transmute::<*const c_void, InplacePhase1>(p) }
}

fn phase2_of(name: &str) -> Phase2 {
    let p = address(&format!("aclnn{name}"));
    // SAFETY: every phase 2 has the common prototype.
    unsafe { std::mem::transmute::<*const c_void, Phase2>(p) }
}

/// Phase 1 of `row` on `x` and `out` (metadata or real tensors).
fn p1(row: &Unary, x: *mut aclTensor, out: *mut aclTensor) -> opkit::Got {
    // SAFETY: simulator handles or NULL; valid out-pointers.
    opkit::p1(|ws, ex| unsafe { phase1_of(row.name)(x, out, ws, ex) })
}

fn inplace_p1(twin: &str, x: *mut aclTensor) -> opkit::Got {
    // SAFETY: a simulator handle or NULL; valid out-pointers.
    opkit::p1(|ws, ex| unsafe { inplace_phase1_of(twin)(x, ws, ex) })
}

const DTYPES: &[(aclDataType, &str)] = &[
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
];

/// `v` as `dt`'s little-endian bytes (integers truncated, bool nonzero).
fn encode(dt: aclDataType, v: &[f64]) -> Vec<u8> {
    v.iter()
        .flat_map(|&x| match dt {
            ACL_FLOAT => (x as f32).to_le_bytes().to_vec(),
            ACL_FLOAT16 => f16::from_f64(x).to_le_bytes().to_vec(),
            ACL_BF16 => bf16::from_f64(x).to_le_bytes().to_vec(),
            ACL_DOUBLE => x.to_le_bytes().to_vec(),
            ACL_INT8 => (x as i8).to_le_bytes().to_vec(),
            ACL_INT16 => (x as i16).to_le_bytes().to_vec(),
            ACL_INT32 => (x as i32).to_le_bytes().to_vec(),
            ACL_INT64 => (x as i64).to_le_bytes().to_vec(),
            ACL_UINT8 => (x as u8).to_le_bytes().to_vec(),
            ACL_UINT16 => (x as u16).to_le_bytes().to_vec(),
            ACL_UINT32 => (x as u32).to_le_bytes().to_vec(),
            ACL_UINT64 => (x as u64).to_le_bytes().to_vec(),
            ACL_BOOL => vec![u8::from(x != 0.0)],
            _ => panic!("encode {dt}"),
        })
        .collect()
}

fn size(dt: aclDataType) -> usize {
    match dt {
        ACL_DOUBLE | ACL_INT64 | ACL_UINT64 | ACL_COMPLEX64 => 8,
        ACL_FLOAT | ACL_INT32 | ACL_UINT32 => 4,
        ACL_FLOAT16 | ACL_BF16 | ACL_INT16 | ACL_UINT16 => 2,
        ACL_COMPLEX128 => 16,
        _ => 1,
    }
}

fn decode(dt: aclDataType, b: &[u8]) -> Vec<f64> {
    b.chunks(size(dt))
        .map(|c| match dt {
            ACL_FLOAT => f64::from(f32::from_le_bytes(c.try_into().unwrap())),
            ACL_FLOAT16 => f16::from_le_bytes(c.try_into().unwrap()).to_f64(),
            ACL_BF16 => bf16::from_le_bytes(c.try_into().unwrap()).to_f64(),
            ACL_DOUBLE => f64::from_le_bytes(c.try_into().unwrap()),
            ACL_INT8 => f64::from(c[0] as i8),
            ACL_INT16 => f64::from(i16::from_le_bytes(c.try_into().unwrap())),
            ACL_INT32 => f64::from(i32::from_le_bytes(c.try_into().unwrap())),
            ACL_INT64 => i64::from_le_bytes(c.try_into().unwrap()) as f64,
            ACL_UINT8 | ACL_BOOL => f64::from(c[0]),
            ACL_UINT16 => f64::from(u16::from_le_bytes(c.try_into().unwrap())),
            ACL_UINT32 => f64::from(u32::from_le_bytes(c.try_into().unwrap())),
            ACL_UINT64 => u64::from_le_bytes(c.try_into().unwrap()) as f64,
            _ => panic!("decode {dt}"),
        })
        .collect()
}

/// A device tensor of `dims` holding `v` as `dt`.
fn device_tensor(dt: aclDataType, dims: &[i64], v: &[f64]) -> (*mut aclTensor, *mut c_void) {
    let p = opkit::upload(&encode(dt, v));
    (tensor(dims, dt, p), p)
}

fn download(dt: aclDataType, p: *mut c_void, n: usize) -> Vec<f64> {
    decode(dt, &d2h::<u8>(p, n * size(dt)))
}

/// The relative error a result of `dt` may have against the exact value: one rounding
/// of the f32 evaluation, plus f32's own evaluation error for the half types' inputs.
fn tolerance(dt: aclDataType) -> f64 {
    match dt {
        ACL_DOUBLE => 1e-15,
        ACL_FLOAT => 4e-7,
        ACL_FLOAT16 => 1e-3,
        ACL_BF16 => 8e-3,
        _ => 0.0,
    }
}

fn close(got: f64, want: f64, tol: f64) -> bool {
    got == want
        || (got.is_nan() && want.is_nan())
        || (got - want).abs() <= tol * want.abs().max(1e-30)
}

/// Runs `row` out of place on `x` (values of `dt`) into a new `out_dt` tensor.
fn compute(row: &Unary, dt: aclDataType, out_dt: aclDataType, dims: &[i64], x: &[f64]) -> Vec<f64> {
    let (xt, xp) = device_tensor(dt, dims, x);
    let (ot, op) = device_tensor(out_dt, dims, &vec![0.0; x.len()]);
    opkit::run(p1(row, xt, ot), phase2_of(row.name));
    let got = download(out_dt, op, x.len());
    for t in [xt, ot] {
        destroy_tensor(t);
    }
    free(xp);
    free(op);
    got
}

#[test]
fn every_row_is_exported_counted_and_faultable_under_its_c_names() {
    let listed = simulated_symbols();
    for row in ROWS {
        let mut names = vec![
            format!("aclnn{}GetWorkspaceSize", row.name),
            format!("aclnn{}", row.name),
        ];
        if let Some((twin, _)) = row.inplace {
            names.push(format!("aclnn{twin}GetWorkspaceSize"));
            names.push(format!("aclnn{twin}"));
        }
        for name in &names {
            assert!(symbol(name).is_some(), "{name} has no address");
            assert!(
                listed.contains(&name.as_str()),
                "{name} is not in simulated_symbols()"
            );
        }
    }
    on_device(A2, || {
        let row = &ROWS[0];
        let name = format!("aclnn{}GetWorkspaceSize", row.name);
        let before = call_count(&name);
        set_fault(&name, 1).unwrap();
        let x = opkit::meta(&[2], ACL_FLOAT);
        let g = p1(row, x, x);
        assert_fails_with(g.0, ACLNN_ERR_INNER_CREATE_EXECUTOR, &["injected fault"]);
        assert_eq!(call_count(&name), before + 1);
        assert_eq!(opkit::status(p1(row, x, x)), ACLNN_SUCCESS, "{}", err_msg());
        destroy_tensor(x);
    });
}

#[test]
fn every_row_checks_nulls_products_dtypes_and_shapes() {
    for (device, product) in PRODUCTS.iter().enumerate() {
        let product = *product;
        on_device(device as i32, move || {
            for row in ROWS {
                let x = opkit::meta(&[2, 3], ACL_FLOAT);
                opkit::nullptr(p1(row, null_mut(), x), "self");
                opkit::nullptr(p1(row, x, null_mut()), "out");
                let g = p1(row, x, x);
                if !row.available_on(product) {
                    opkit::refused(
                        g,
                        ACLNN_ERR_INNER_FIND_KERNEL_ERROR,
                        &[row.name, "not supported"],
                    );
                    destroy_tensor(x);
                    continue;
                }
                assert_eq!(
                    opkit::status(g),
                    ACLNN_SUCCESS,
                    "{} F32: {}",
                    row.name,
                    err_msg()
                );
                for &(dt, name) in DTYPES {
                    let listed = row.dtypes.allows(product, dt);
                    let out_dt = row.default_out_dtype(dt);
                    let t = opkit::meta(&[2, 3], dt);
                    let o = opkit::meta(&[2, 3], if listed { out_dt } else { dt });
                    let g = p1(row, t, o);
                    if !listed {
                        opkit::refused(g, ACLNN_ERR_PARAM_INVALID, &["dtype"]);
                    } else {
                        assert_eq!(
                            opkit::status(g),
                            ACLNN_SUCCESS,
                            "{} {name} on {product:?}: {}",
                            row.name,
                            err_msg()
                        );
                    }
                    destroy_tensor(t);
                    destroy_tensor(o);
                }
                let nine = opkit::meta(&[1; 9], ACL_FLOAT);
                if row.rank_if_strided {
                    // Contiguous tensors of any rank pass; a strided one is held to 8 dims.
                    assert_eq!(opkit::status(p1(row, nine, nine)), ACLNN_SUCCESS);
                    let strides = [2i64, 1, 1, 1, 1, 1, 1, 1, 1];
                    let dims = [2i64, 1, 1, 1, 1, 1, 1, 1, 1];
                    let strided = tensor_view(&dims, &strides, 0, &[4], ACL_FLOAT, null_mut());
                    let plain = opkit::meta(&dims, ACL_FLOAT);
                    opkit::invalid(p1(row, strided, plain), "dims");
                    destroy_tensor(strided);
                    destroy_tensor(plain);
                } else {
                    opkit::invalid(p1(row, nine, nine), "dims");
                }
                let other = opkit::meta(&[3, 2], ACL_FLOAT);
                opkit::invalid(p1(row, x, other), "shape");
                let empty = opkit::meta(&[2, 0], ACL_FLOAT);
                let g = p1(row, empty, empty);
                assert_eq!(g.1, 0, "{}: an empty self needs no workspace", row.name);
                assert_eq!(opkit::status(g), ACLNN_SUCCESS);
                for t in [x, nine, other, empty] {
                    destroy_tensor(t);
                }
            }
        });
    }
}

#[test]
fn every_row_computes_its_exact_values_in_every_floating_dtype() {
    on_device(A2, || {
        for row in ROWS {
            let xs: Vec<f64> = row.golden.iter().map(|g| g.0).collect();
            for dt in [ACL_FLOAT, ACL_FLOAT16, ACL_BF16, ACL_DOUBLE] {
                if !row.dtypes.allows(Product::AtlasA2, dt) {
                    continue;
                }
                let got = compute(row, dt, dt, &[xs.len() as i64], &xs);
                for (&(x, want), got) in row.golden.iter().zip(got) {
                    // The input as the dtype holds it: the exact value is f of that input.
                    let held = decode(dt, &encode(dt, &[x]))[0];
                    let want = if held == x { want } else { (row.f64)(held) };
                    let want = decode(dt, &encode(dt, &[want]))[0];
                    assert!(
                        close(got, want, tolerance(dt)),
                        "{}({x}) in {dt}: {got}, want {want}",
                        row.name
                    );
                    assert_eq!(
                        got.is_sign_negative(),
                        want.is_sign_negative() || want.is_nan(),
                        "{}({x}) sign",
                        row.name
                    );
                }
            }
        }
    });
}

#[test]
fn integer_and_bool_inputs_follow_each_rows_integer_rule() {
    on_device(A2, || {
        for row in ROWS {
            for &(dt, name) in DTYPES {
                if !row.dtypes.allows(Product::AtlasA2, dt)
                    || ascend_ops::unary::is_floating_or_complex(dt)
                {
                    continue;
                }
                let xs: Vec<f64> = match dt {
                    ACL_BOOL => vec![0.0, 1.0],
                    ACL_UINT8 | ACL_UINT16 | ACL_UINT32 | ACL_UINT64 => vec![0.0, 1.0, 7.0],
                    _ => vec![-3.0, 0.0, 1.0, 7.0],
                };
                let out_dt = match row.integers {
                    Integers::Kernel(_) | Integers::Identity => dt,
                    _ => ACL_FLOAT,
                };
                let got = compute(row, dt, out_dt, &[xs.len() as i64], &xs);
                for (&x, got) in xs.iter().zip(got) {
                    let want = match row.integers {
                        Integers::Identity => x,
                        Integers::Kernel(g) => decode(dt, &encode(dt, &[g(x as i64) as f64]))[0],
                        _ => f64::from((row.f32)(x as f32)),
                    };
                    assert!(
                        close(got, want, 1e-7),
                        "{}({x}) of {name}: {got}, want {want}",
                        row.name
                    );
                }
            }
        }
    });
}

#[test]
fn in_place_twins_and_strided_views_give_the_out_of_place_values() {
    on_device(A2, || {
        let xs: Vec<f64> = (0..12).map(|i| 0.25 + f64::from(i) * 0.5).collect();
        for row in ROWS {
            let want = compute(row, ACL_FLOAT, ACL_FLOAT, &[12], &xs);
            // x holds the 3×4 storage; the view reads it transposed (4×3, strides 1, 4),
            // and out is written through the same transposed layout.
            let xp = opkit::upload(&encode(ACL_FLOAT, &xs));
            let op = opkit::upload(&encode(ACL_FLOAT, &[0.0; 12]));
            let xv = tensor_view(&[4, 3], &[1, 4], 0, &[12], ACL_FLOAT, xp);
            let ov = tensor_view(&[4, 3], &[1, 4], 0, &[12], ACL_FLOAT, op);
            opkit::run(p1(row, xv, ov), phase2_of(row.name));
            assert_eq!(
                download(ACL_FLOAT, op, 12),
                want,
                "{} through views",
                row.name
            );
            if let Some((twin, _)) = row.inplace {
                opkit::run(inplace_p1(twin, xv), phase2_of(twin));
                assert_eq!(download(ACL_FLOAT, xp, 12), want, "{twin} in place");
            }
            for t in [xv, ov] {
                destroy_tensor(t);
            }
            free(xp);
            free(op);
        }
    });
}

#[test]
fn a_zero_dim_tensor_is_one_element() {
    on_device(A2, || {
        for row in ROWS {
            let (x, want) = row.golden[0];
            let got = compute(row, ACL_FLOAT, ACL_FLOAT, &[], &[x]);
            assert!(
                close(
                    got[0],
                    decode(ACL_FLOAT, &encode(ACL_FLOAT, &[want]))[0],
                    4e-7
                ),
                "{} 0-D",
                row.name
            );
        }
    });
}

/// The vendor's phase-1 unit-test cases (`tests/ut/op_api/test_aclnn_<op>.cpp` of
/// ops-math and ops-nn), one per line: operator, product, `self` dtype and dims, `out`
/// dtype and dims (`-` for an in-place twin), expected status. Dims are comma-separated;
/// `-` is 0-D; `9d` is nine dims of 1.
const VENDOR_CASES: &str = "
Exp A2 F32 2 F32 2 OK
Exp A2 F16 2,2,2,2 F16 2,2,2,2 OK
Exp A2 BOOL 1,2,1,2,1 F32 1,2,1,2,1 OK
Exp A2 I64 2,2 F32 2,2 OK
Exp A2 BF16 2 BF16 2 OK
Exp A2 F32 0 F32 0 OK
Exp A2 I32 2 I32 2 INVALID
Exp A2 I16 2 I16 2 INVALID
Exp A2 I8 2 I8 2 INVALID
Exp A2 U8 2 U8 2 INVALID
Exp A2 I64 2 I64 2 INVALID
Exp A2 BOOL 2 BOOL 2 INVALID
Exp A2 F32 2 I32 2 INVALID
Exp A2 F16 2 F32 2 OK
Exp A2 C64 2 F32 2 INVALID
Exp A2 F32 2,2 F32 2 INVALID
Exp A2 F32 10d F32 10d INVALID
Exp A2 F32 2 F32 2 OK
InplaceExp A2 I64 2,4 - - INVALID
Expm1 A2 F32 2,5 F32 2,5 OK
Expm1 A2 F16 2,5 F16 2,5 OK
Expm1 A2 BF16 2,5 BF16 2,5 OK
Expm1 A2 F32 0 F32 0 OK
Expm1 A2 F16 5,5 F32 5,5 OK
Expm1 A2 BOOL 1,16,1,1 F16 1,16,1,1 OK
Expm1 A2 F32 1,1,4,4 F32 1,16,1,1 INVALID
Expm1 A2 C64 2 C64 2 INVALID
Expm1 A2 C128 2 C128 2 INVALID
Expm1 A2 F32 9d F32 9d INVALID
Expm1 A2 F32 16,16 F32 0 INVALID
Expm1 A2 I64 2 BOOL 2 INVALID
Expm1 A2 BOOL 2 I64 2 INVALID
Expm1 A2 I64 2 F32 2 OK
Expm1 A2 BOOL 2 F32 2 OK
Log1p A2 U8 1,1,3 F32 1,1,3 OK
Log1p A2 I8 1,1,3 F32 1,1,3 OK
Log1p A2 I16 1,1,3 F32 1,1,3 OK
Log1p A2 I32 1,1,3 F32 1,1,3 OK
Log1p A2 I64 1,1,3 F32 1,1,3 OK
Log1p A2 BOOL 1,1,3 F32 1,1,3 OK
Log1p A2 I32 1,16 I32 1,16 INVALID
Log1p A2 C64 1,16 C64 1,16 INVALID
Log1p A2 F32 3,3,3,3,3 F32 3,3,3,3,3 OK
Log1p A2 F32 9d F32 9d INVALID
Log1p A2 F32 1,0,1 F32 1,0,1 OK
Log1p A2 F32 1,3,1 F32 1,0,1 INVALID
Log1p A2 F32 1,0,1 F32 1,3,1 INVALID
Log1p A2 F32 1,0,1 F64 1,0,1 OK
Log1p A2 F32 1,16,1,1 F32 1,1,4,4 INVALID
Log1p A2 F32 1,16,1,1 F32 16,1,1 INVALID
Log1p A2 BF16 3,3,3,3 BF16 3,3,3,3 OK
InplaceLog1p A2 F32 3,3,3 - - OK
InplaceLog1p A2 F32 9d - - INVALID
Log A2 F16 2,3 F16 2,3 OK
Log A2 F32 2,3 F32 2,3 OK
Log A2 F64 2,3 F64 2,3 OK
Log A2 I32 2,3 F32 2,3 OK
Log A2 I64 2,3 F32 2,3 OK
Log A2 I8 2,3 F32 2,3 OK
Log A2 U8 2,3 F32 2,3 OK
Log A2 BOOL 2,3 F32 2,3 OK
Log A2 I16 2,3 F32 2,3 OK
Log A2 F16 0 F16 0 OK
Log A2 F32 2,4 F32 2,3 INVALID
Log A2 BF16 2,3 BF16 2,3 OK
Log A2 F16 2,3 F32 2,3 OK
Log A2 F16 2,3 F64 2,3 OK
Log A2 U16 2,3 F32 2,3 INVALID
Log A2 U32 2,3 F32 2,3 INVALID
Log A2 F16 9d F16 9d INVALID
Sqrt A2 U64 2,3 F32 2,3 INVALID
Sqrt A2 C128 2,4 C128 2,4 OK
Sqrt A2 F32 1,16,1,1 F32 1,16,1,1 OK
Sqrt A2 F32 2,0 F32 2,0 OK
Sqrt A2 F32 2,4 F32 2,4 OK
Sqrt A2 C64 2,4 C64 2,4 OK
Sqrt A2 F32 2,3 F32 4,7 INVALID
Sqrt A2 F32 9d F32 9d INVALID
InplaceSqrt A2 U64 2,3 - - INVALID
Rsqrt A2 F16 2,3 F16 2,3 OK
Rsqrt A2 F32 2,3 F32 2,3 OK
Rsqrt A2 F64 2,3 F64 2,3 OK
Rsqrt A2 I8 2,3 F32 2,3 OK
Rsqrt A2 I16 2,3 F32 2,3 OK
Rsqrt A2 I32 2,3 F32 2,3 OK
Rsqrt A2 I64 2,3 F32 2,3 OK
Rsqrt A2 U8 2,3 F32 2,3 OK
Rsqrt A2 BOOL 2,3 F32 2,3 OK
Rsqrt A2 F16 0 F16 0 OK
Rsqrt A2 F32 0 F32 0 OK
Rsqrt A2 F32 2,4 F32 2,3 INVALID
Rsqrt A2 F16 9d F16 9d INVALID
Rsqrt A2 BF16 2,3 BF16 2,3 OK
Rsqrt A2 F16 2,3 F64 2,3 OK
Rsqrt A2 U16 2,3 F32 2,3 INVALID
Rsqrt A2 U32 2,3 F32 2,3 INVALID
Rsqrt A2 U64 2,3 F32 2,3 INVALID
Rsqrt A2 C64 2,3 C64 2,3 OK
Rsqrt A2 C128 2,3 C128 2,3 OK
Rsqrt A2 F32 2,3 I32 2,3 INVALID
Rsqrt A2 F32 2,3 I64 2,3 INVALID
Rsqrt A2 F32 1,1,1,1,1,1,1,2 F32 1,1,1,1,1,1,1,2 OK
InplaceRsqrt A2 F32 2,3 - - OK
InplaceRsqrt A2 I32 2,3 - - INVALID
InplaceRsqrt A2 U64 2,3 - - INVALID
Neg A2 F64 2,3 F64 2,3 OK
Neg A2 F32 2,3 F32 2,3 OK
Neg A2 F16 2,3 F16 2,3 OK
Neg A2 I64 2,3 I64 2,3 OK
Neg A2 I32 2,3 I32 2,3 OK
Neg A2 I8 2,3 I8 2,3 OK
Neg A2 C64 6,3 C64 6,3 OK
Neg A2 C128 6,3 C128 6,3 OK
Neg A2 I16 2,3 I16 2,3 INVALID
Neg A2 BOOL 2,3 BOOL 2,3 INVALID
Neg 310P BF16 2,3 BF16 2,3 INVALID
Neg A2 F32 2,0 F32 2,0 OK
Neg A2 F32 9d F32 9d INVALID
Neg A2 I32 2,3 I64 2,3 OK
Abs A2 F32 3,3,3 F32 3,3,3 OK
Abs A2 F16 3,3,3 F16 3,3,3 OK
Abs A2 I32 3,3,3 I32 3,3,3 OK
Abs A2 I64 3,3,3 I64 3,3,3 OK
Abs A2 U8 3,3,3 U8 3,3,3 OK
Abs A2 BOOL 3,3,3 BOOL 3,3,3 OK
Abs A2 C64 3,3,3 C64 3,3,3 INVALID
Abs A2 F32 0,2,3 F32 0,2,3 OK
Abs A2 F32 9d F32 9d INVALID
Abs A2 F32 3,3,3 F16 3,3,3 INVALID
Abs A2 F32 3,3,3 F32 1,2,3 INVALID
Abs A2 C64 3,3,3 F32 3,3,3 OK
Abs A2 C64 3,3,3 F16 3,3,3 INVALID
Abs A2 C128 3,3,3 F64 3,3,3 INVALID
Reciprocal A2 F16 2,3 F16 2,3 OK
Reciprocal A2 F32 2,3 F32 2,3 OK
Reciprocal A2 F64 2,3 F64 2,3 OK
Reciprocal A2 I8 2,3 F32 2,3 OK
Reciprocal A2 I16 2,3 F32 2,3 OK
Reciprocal A2 I32 2,3 F32 2,3 OK
Reciprocal A2 I64 2,3 F32 2,3 OK
Reciprocal A2 U8 2,3 F32 2,3 OK
Reciprocal A2 BOOL 2,3 F32 2,3 OK
Reciprocal A2 F16 0 F16 0 OK
Reciprocal A2 F32 2,4 F32 2,3 INVALID
Reciprocal A2 F16 9d F16 9d INVALID
Reciprocal A2 BF16 2,3 BF16 2,3 OK
Reciprocal A2 F16 2,3 F64 2,3 OK
Reciprocal A2 U16 2,3 F32 2,3 INVALID
Reciprocal A2 U32 2,3 F32 2,3 INVALID
Reciprocal A2 U64 2,3 F32 2,3 INVALID
Sigmoid A2 F32 1,16,1,1 F32 1,16,1,1 OK
Sigmoid A2 F32 0 F32 0 OK
Sigmoid A2 I16 2,3 F32 2,3 OK
Sigmoid A2 F32 2,3 I16 2,3 INVALID
Sigmoid A2 F32 2,3 F16 2,3 OK
Sigmoid A2 F16 2,3 F32 2,3 OK
Sigmoid A2 F32 1,16,1,1 F32 1,1,4,4 INVALID
Sigmoid A2 F64 2,3 F64 2,3 OK
Sigmoid A2 C64 2,3 C64 2,3 OK
Sigmoid A2 C128 2,3 C128 2,3 OK
Sigmoid A2 BF16 2,3 BF16 2,3 OK
Sigmoid 910 BF16 2,3 BF16 2,3 INVALID
Sigmoid A2 F32 9d F32 9d INVALID
InplaceSigmoid A2 I64 2,3 - - INVALID
Sigmoid A2 F32 1,1,1,1,1,1,1,2 F32 1,1,1,1,1,1,1,2 OK
Sigmoid A2 F32 - F32 - OK
Tanh A2 F32 1,16,1,1 F32 1,16,1,1 OK
Tanh A2 F32 0 F32 0 OK
Tanh A2 I16 2,3 F32 2,3 OK
Tanh A2 F32 2,3 I16 2,3 INVALID
InplaceTanh A2 I16 2,3 - - INVALID
Tanh A2 F16 1,32,1,1 F16 1,32,1,1 OK
Tanh A2 F32 1,16,1,1 F32 1,1,4,4 INVALID
Tanh A2 F32 2,3 F16 2,3 OK
Tanh A2 U8 2,3 F32 2,3 OK
Tanh A2 BOOL 2,3 F32 2,3 OK
Tanh A2 I8 2,3 F32 2,3 OK
Tanh A2 I32 2,3 F32 2,3 OK
Tanh A2 I64 2,3 F32 2,3 OK
InplaceTanh A2 I32 2,3 - - INVALID
InplaceTanh A2 F32 2,3 - - OK
Relu A2 BOOL 2,4 F32 2,4 INVALID
Relu A2 F32 2,4 BOOL 2,4 INVALID
Relu A2 F32 2,4 F16 2,4 INVALID
Relu A2 F32 2,0 F32 2,0 OK
Relu A2 F32 2,4 F32 2,4 OK
Relu A2 U8 2,4 U8 2,4 OK
Relu A2 F16 2,4 F16 2,4 OK
Relu A2 I8 9d I8 9d INVALID
Relu A2 F32 9d F32 1,1,1,1,1,1,1,1 INVALID
Relu A2 F32 1,1,1,1,1,1,1,2 F32 1,1,1,1,1,1,1,2 OK
Relu A2 F32 - F32 - OK
Sin A2 F16 2,3 F16 2,3 OK
Sin A2 F32 2,3 F32 2,3 OK
Sin A2 F64 2,3 F64 2,3 OK
Sin A2 I8 2,3 F32 2,3 OK
Sin A2 I16 2,3 F32 2,3 OK
Sin A2 I32 2,3 F32 2,3 OK
Sin A2 I64 2,3 F32 2,3 OK
Sin A2 U8 2,3 F32 2,3 OK
Sin A2 BOOL 2,3 F32 2,3 OK
Sin A2 F16 0 F16 0 OK
Sin A2 F32 2,4 F32 2,3 INVALID
Sin A2 F16 9d F16 9d INVALID
Sin A2 BF16 2,3 BF16 2,3 OK
Sin A2 F16 2,3 F64 2,3 OK
Sin A2 U16 2,3 F32 2,3 INVALID
Sin A2 U32 2,3 F32 2,3 INVALID
Sin A2 U64 2,3 F32 2,3 INVALID
Sin A2 C64 2,3 C64 2,3 OK
Sin A2 C128 2,3 C128 2,3 OK
Sin 310P BF16 2,3 BF16 2,3 INVALID
InplaceSin A2 C64 2,3 - - OK
InplaceSin A2 I8 2,3 - - INVALID
Cos A2 F32 13,16,9 F32 13,16,9 OK
Cos A2 F32 13,0,9 F32 13,0,9 OK
Cos A2 F32 9d F32 9d INVALID
InplaceCos A2 F32 3,5 - - OK
Erf A2 I8 2,4 F32 2,4 INVALID
Erf A2 F32 2,4 I8 2,4 INVALID
Erf A2 F32 2,3,5 F32 2,3 INVALID
Erf A2 F32 2,0 F32 2,0 OK
Erf A2 F32 2,4 F32 2,4 OK
Erf A2 F16 2,4 F16 2,4 OK
Erf A2 I32 2,4 I32 2,4 INVALID
Erf A2 I64 2,4 I64 2,4 INVALID
Erf A2 BOOL 2,4 F32 2,4 OK
Erf A2 C64 2,4 C64 2,4 INVALID
Erf A2 C128 2,4 C128 2,4 INVALID
InplaceErf A2 F32 2,4 - - OK
Erf A2 F32 10d F32 10d INVALID
Erf A2 BOOL 2,4 I32 2,4 INVALID
Erf A2 F16 2,4 I32 2,4 INVALID
Floor A2 BOOL 2,4 F32 2,4 INVALID
Floor A2 F32 2,4 BOOL 2,4 INVALID
Floor A2 F32 2,4 F16 2,4 INVALID
Floor A2 F32 2,3,5 F32 2,3 INVALID
Floor A2 F32 2,0 F32 2,0 OK
Floor A2 F32 2,4 F32 2,4 OK
Floor A2 I32 2,4 I32 2,4 OK
Floor A2 I64 2,4 I64 2,4 OK
Floor A2 I16 2,4 I16 2,4 OK
Floor A2 I8 2,4 I8 2,4 OK
Floor A2 U8 2,4 U8 2,4 OK
Floor A2 BOOL 2,4 BOOL 2,4 INVALID
Floor A2 C64 2,4 C64 2,4 INVALID
Floor A2 C128 2,4 C128 2,4 INVALID
InplaceFloor A2 F32 2,4 - - OK
Floor A2 F32 10d F32 10d INVALID
Ceil A2 I8 2,4 F32 2,4 INVALID
Ceil A2 F32 2,4 I8 2,4 INVALID
Ceil A2 F32 2,4 F16 2,4 INVALID
Ceil A2 F32 2,3,5 F32 2,3 INVALID
Ceil A2 F32 2,0 F32 2,0 OK
Ceil A2 F16 2,2,2,2 F16 2,2,2,2 OK
Ceil A2 BF16 2,2,2,2 BF16 2,2,2,2 OK
Ceil A2 F32 2,4 F32 2,4 OK
Ceil A2 I32 2,4 I32 2,4 INVALID
Ceil A2 U8 2,4 U8 2,4 INVALID
Ceil A2 BOOL 2,4 BOOL 2,4 INVALID
InplaceCeil A2 I8 2,4 - - INVALID
Ceil A2 F64 9d F64 9d INVALID
InplaceCeil A2 F16 2,4 - - OK
InplaceCeil A2 F32 2,4 - - OK
Round A2 F16 2,3 F16 2,3 OK
Round A2 F16 0 F16 0 OK
Round A2 F32 2,4 F32 2,3 INVALID
Round A2 I16 2,3 I16 2,3 INVALID
Round A2 F16 2,3 F32 2,3 INVALID
Round A2 F16 9d F16 9d INVALID
Round A2 BF16 2,3 BF16 2,3 OK
InplaceRound A2 F32 2,3 - - OK
Round A2 F32 2,3 F32 2,3 OK
Round A2 I32 2,3 I32 2,3 OK
Round A2 I64 2,3 I64 2,3 OK
LogicalNot A2 F16 2,3 F16 2,3 OK
LogicalNot A2 F32 2,3 F32 2,3 OK
LogicalNot A2 F64 2,3 F64 2,3 OK
LogicalNot A2 I8 2,3 I8 2,3 OK
LogicalNot A2 I16 2,3 I16 2,3 OK
LogicalNot A2 I32 2,3 I32 2,3 OK
LogicalNot A2 I64 2,3 I64 2,3 OK
LogicalNot A2 U8 2,3 U8 2,3 OK
LogicalNot A2 BOOL 2,3 BOOL 2,3 OK
LogicalNot A2 F16 0 F16 0 OK
LogicalNot A2 F16 2,4 F16 2,3 INVALID
LogicalNot A2 BF16 2,3 BF16 2,3 OK
LogicalNot A2 F16 2,3 BOOL 2,3 OK
LogicalNot A2 F16 9d F16 9d OK
";

fn dims(text: &str) -> Vec<i64> {
    match text {
        "-" => vec![],
        "9d" => vec![1; 9],
        "10d" => vec![1; 10],
        _ => text.split(',').map(|d| d.parse().unwrap()).collect(),
    }
}

fn named(name: &str) -> aclDataType {
    DTYPES
        .iter()
        .find(|d| d.1 == name)
        .unwrap_or_else(|| panic!("dtype {name}"))
        .0
}

#[test]
fn the_vendors_phase1_unit_test_cases_replay() {
    let cases: Vec<Vec<String>> = VENDOR_CASES
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.split_whitespace().map(String::from).collect())
        .collect();
    for device in [(0, "A2"), (1, "910"), (2, "310P")] {
        let mine: Vec<Vec<String>> = cases.iter().filter(|c| c[1] == device.1).cloned().collect();
        on_device(device.0, move || {
            for c in &mine {
                let (op, x, o) = (&c[0], opkit::meta(&dims(&c[3]), named(&c[2])), &c[4]);
                let g = match ascend_ops::unary::row(op) {
                    Some(row) if row.name == op => {
                        let out = opkit::meta(&dims(&c[5]), named(o));
                        let g = p1(row, x, out);
                        let rc = opkit::status(g);
                        destroy_tensor(out);
                        rc
                    }
                    Some(_) => opkit::status(inplace_p1(op, x)),
                    None => panic!("{op} is not a row"),
                };
                let want = match c[6].as_str() {
                    "OK" => ACLNN_SUCCESS,
                    "INVALID" => ACLNN_ERR_PARAM_INVALID,
                    other => panic!("{other}"),
                };
                assert_eq!(g, want, "vendor case `{}`: {}", c.join(" "), err_msg());
                destroy_tensor(x);
            }
        });
    }
    assert!(cases.len() >= 250, "{} cases", cases.len());
}

#[test]
fn complex_rows_compute_in_complex_arithmetic() {
    on_device(A2, || {
        let z = [0.5f64, -1.25];
        for row in ROWS {
            let Some(f) = row.complex else { continue };
            if !row.dtypes.allows(Product::AtlasA2, ACL_COMPLEX128) {
                continue;
            }
            let p = opkit::upload(&z.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>());
            let op = opkit::upload(&[0u8; 16]);
            let (xt, ot) = (
                tensor(&[1], ACL_COMPLEX128, p),
                tensor(&[1], ACL_COMPLEX128, op),
            );
            opkit::run(p1(row, xt, ot), phase2_of(row.name));
            let got = d2h::<f64>(op, 2);
            let want = f(ascend_ops::unary::Complex64::new(z[0], z[1]));
            assert!(
                close(got[0], want.re, 1e-15) && close(got[1], want.im, 1e-15),
                "{} of {z:?}: {got:?}, want {want}",
                row.name
            );
            for t in [xt, ot] {
                destroy_tensor(t);
            }
            free(p);
            free(op);
        }
    });
}
