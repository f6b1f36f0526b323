//! The binary family through the C ABI: every row of `ascend_ops::binary` on every
//! product, its phase-1 checks, the vendor's own phase-1 unit-test cases replayed, and its
//! kernel against the row's exact values in every floating dtype and its integer rule,
//! with broadcast, strided views, in place, empty and 0-D.

use crate::common;
use crate::opkit;

use ascend_ops::Product;
use ascend_ops::binary::{Binary, Check, Output, ROWS, Role};
use ascend_sim::{api, call_count, set_fault, simulated_symbols, symbol};
use ascend_sys::*;
use common::*;
use half::{bf16, f16};
use opkit::Phase2;
use std::ffi::c_void;
use std::ptr::null_mut;

type Phase1 = unsafe extern "C" fn(
    *const aclTensor,
    *const aclTensor,
    *mut aclTensor,
    *mut u64,
    *mut *mut aclOpExecutor,
) -> i32;
type AlphaPhase1 = unsafe extern "C" fn(
    *const aclTensor,
    *const aclTensor,
    *const aclScalar,
    *mut aclTensor,
    *mut u64,
    *mut *mut aclOpExecutor,
) -> i32;
type InplacePhase1 = unsafe extern "C" fn(
    *mut aclTensor,
    *const aclTensor,
    *mut u64,
    *mut *mut aclOpExecutor,
) -> i32;
type InplaceAlphaPhase1 = unsafe extern "C" fn(
    *mut aclTensor,
    *const aclTensor,
    *const aclScalar,
    *mut u64,
    *mut *mut aclOpExecutor,
) -> i32;

/// The products of [`FIVE_SOCS`], by device.
const PRODUCTS: [Product; 5] = [
    Product::AtlasA2,
    Product::Training910,
    Product::Inference310P,
    Product::Atlas310B,
    Product::AtlasA3,
];
const A2: i32 = 0;

/// The simulator's entry point `name` as the function-pointer type `F`.
fn entry<F: Copy>(name: &str) -> F {
    let p = symbol(name).unwrap_or_else(|| panic!("{name} is not simulated"));
    assert_eq!(std::mem::size_of::<F>(), std::mem::size_of_val(&p));
    // SAFETY: every caller names `F` as the C prototype of `name`, a function pointer.
    unsafe { std::mem::transmute_copy::<*const c_void, F>(&p) }
}

/// Phase 1 of `row` on `x`, `y` and `out` (alpha 1 where the row takes one, or `alpha`).
fn p1_alpha(
    row: &Binary,
    x: *mut aclTensor,
    y: *mut aclTensor,
    alpha: *mut aclScalar,
    out: *mut aclTensor,
) -> opkit::Got {
    let name = format!("aclnn{}GetWorkspaceSize", row.name);
    if row.alpha {
        let f: AlphaPhase1 = entry(&name);
        // SAFETY: simulator handles or NULL; valid out-pointers.
        opkit::p1(|ws, ex| unsafe { f(x, y, alpha, out, ws, ex) })
    } else {
        let f: Phase1 = entry(&name);
        // SAFETY: as above.
        opkit::p1(|ws, ex| unsafe { f(x, y, out, ws, ex) })
    }
}

fn p1(row: &Binary, x: *mut aclTensor, y: *mut aclTensor, out: *mut aclTensor) -> opkit::Got {
    let one = opkit::f64_scalar(1.0);
    let g = p1_alpha(row, x, y, one, out);
    opkit::destroy_scalar(one);
    g
}

/// Phase 1 of the in-place twin `twin` of `row`.
fn inplace_p1(row: &Binary, twin: &str, x: *mut aclTensor, y: *mut aclTensor) -> opkit::Got {
    let name = format!("aclnn{twin}GetWorkspaceSize");
    if row.alpha {
        let f: InplaceAlphaPhase1 = entry(&name);
        let one = opkit::f64_scalar(1.0);
        // SAFETY: simulator handles or NULL; valid out-pointers.
        let g = opkit::p1(|ws, ex| unsafe { f(x, y, one, ws, ex) });
        opkit::destroy_scalar(one);
        g
    } else {
        let f: InplacePhase1 = entry(&name);
        // SAFETY: as above.
        opkit::p1(|ws, ex| unsafe { f(x, y, ws, ex) })
    }
}

fn phase2_of(name: &str) -> Phase2 {
    entry(&format!("aclnn{name}"))
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
            ACL_BOOL => vec![u8::from(x != 0.0)],
            _ => panic!("encode {dt}"),
        })
        .collect()
}

fn size(dt: aclDataType) -> usize {
    match dt {
        ACL_DOUBLE | ACL_INT64 => 8,
        ACL_FLOAT | ACL_INT32 => 4,
        ACL_FLOAT16 | ACL_BF16 | ACL_INT16 => 2,
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
            _ => panic!("decode {dt}"),
        })
        .collect()
}

/// The integer `v` wrapped to `dt`'s width (BOOL: nonzero).
fn wrap(dt: aclDataType, v: i64) -> f64 {
    match dt {
        ACL_INT8 => f64::from(v as i8),
        ACL_INT16 => f64::from(v as i16),
        ACL_INT32 => f64::from(v as i32),
        ACL_UINT8 => f64::from(v as u8),
        ACL_BOOL => f64::from(u8::from(v != 0)),
        _ => v as f64,
    }
}

/// `v` as `dt` holds it.
fn held(dt: aclDataType, v: f64) -> f64 {
    decode(dt, &encode(dt, &[v]))[0]
}

/// Runs `row` out of place on `x` and `y` (values of `dt`, shapes `xd` and `yd`) with
/// `alpha`, into a new `dt` tensor of shape `od`.
fn compute(
    row: &Binary,
    dt: aclDataType,
    (xd, x): (&[i64], &[f64]),
    (yd, y): (&[i64], &[f64]),
    alpha: f64,
    od: &[i64],
) -> Vec<f64> {
    let n = od.iter().product::<i64>() as usize;
    let (xp, yp, op) = (
        opkit::upload(&encode(dt, x)),
        opkit::upload(&encode(dt, y)),
        opkit::upload(&encode(dt, &vec![0.0; n])),
    );
    let (xt, yt, ot) = (tensor(xd, dt, xp), tensor(yd, dt, yp), tensor(od, dt, op));
    let a = if ascend_ops::binary::is_floating(dt) {
        opkit::f64_scalar(alpha)
    } else {
        opkit::scalar(alpha as i64, ACL_INT64)
    };
    opkit::run(p1_alpha(row, xt, yt, a, ot), phase2_of(row.name));
    let got = decode(dt, &d2h::<u8>(op, n * size(dt)));
    opkit::destroy_scalar(a);
    for t in [xt, yt, ot] {
        destroy_tensor(t);
    }
    for p in [xp, yp, op] {
        free(p);
    }
    got
}

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
            assert!(listed.contains(&name.as_str()), "{name} is not listed");
        }
    }
    on_device(A2, || {
        for row in ROWS {
            let name = format!("aclnn{}GetWorkspaceSize", row.name);
            let before = call_count(&name);
            set_fault(&name, 1).unwrap();
            let x = opkit::meta(&[2], ACL_FLOAT);
            let g = p1(row, x, x, x);
            assert_fails_with(g.0, ACLNN_ERR_INNER_CREATE_EXECUTOR, &["injected fault"]);
            assert_eq!(call_count(&name), before + 1);
            assert_eq!(
                opkit::status(p1(row, x, x, x)),
                ACLNN_SUCCESS,
                "{}",
                err_msg()
            );
            destroy_tensor(x);
        }
    });
}

#[test]
fn every_row_checks_nulls_products_dtypes_and_shapes() {
    for (device, product) in PRODUCTS.iter().enumerate() {
        let product = *product;
        on_device(device as i32, move || {
            for row in ROWS {
                let x = opkit::meta(&[2, 3], ACL_FLOAT);
                opkit::nullptr(p1(row, null_mut(), x, x), "self");
                opkit::nullptr(p1(row, x, null_mut(), x), row.other);
                opkit::nullptr(p1(row, x, x, null_mut()), "out");
                if row.alpha {
                    opkit::nullptr(p1_alpha(row, x, x, null_mut(), x), "alpha");
                }
                let g = p1(row, x, x, x);
                assert!(row.available_on(product));
                assert_eq!(
                    opkit::status(g),
                    ACLNN_SUCCESS,
                    "{} F32: {}",
                    row.name,
                    err_msg()
                );
                for &(dt, name) in DTYPES {
                    // Listed, or (for rows that hold the promote against their list) a
                    // BOOL computed as a listed type.
                    let listed = row.dtypes.allows(product, dt)
                        || row.checks.contains(&Check::PromoteIn)
                            && row
                                .dtypes
                                .allows(product, row.compute_dtype(product, dt, dt, dt));
                    let both_bool = dt == ACL_BOOL && row.checks.contains(&Check::NotBothBool);
                    let t = opkit::meta(&[2, 3], dt);
                    let o = opkit::meta(
                        &[2, 3],
                        if row.output == Output::Bool {
                            ACL_BOOL
                        } else {
                            dt
                        },
                    );
                    let one = if row.alpha && !ascend_ops::binary::is_floating(dt) {
                        opkit::scalar(1i64, ACL_INT64)
                    } else {
                        opkit::f64_scalar(1.0)
                    };
                    let g = p1_alpha(row, t, t, one, o);
                    let complex = ascend_ops::binary::is_complex(dt);
                    if !listed || both_bool {
                        opkit::refused(g, ACLNN_ERR_PARAM_INVALID, &[]);
                    } else if complex {
                        // The simulator does not model complex arithmetic.
                        opkit::refused(g, ACLNN_ERR_INNER, &["complex"]);
                    } else {
                        assert_eq!(
                            opkit::status(g),
                            ACLNN_SUCCESS,
                            "{} {name} on {product:?}: {}",
                            row.name,
                            err_msg()
                        );
                    }
                    opkit::destroy_scalar(one);
                    destroy_tensor(t);
                    destroy_tensor(o);
                }
                let nine = opkit::meta(&[1; 9], ACL_FLOAT);
                opkit::invalid(p1(row, nine, nine, nine), "dims");
                let (a, b) = (
                    opkit::meta(&[3, 2], ACL_FLOAT),
                    opkit::meta(&[4], ACL_FLOAT),
                );
                opkit::invalid(p1(row, x, a, x), "broadcast");
                opkit::invalid(p1(row, x, b, x), "broadcast");
                let (col, bigger) = (
                    opkit::meta(&[2, 1], ACL_FLOAT),
                    opkit::meta(&[4, 3], ACL_FLOAT),
                );
                opkit::invalid(p1(row, x, col, bigger), "broadcast");
                assert_eq!(opkit::status(p1(row, x, col, x)), ACLNN_SUCCESS);
                let empty = opkit::meta(&[2, 0], ACL_FLOAT);
                let g = p1(row, empty, empty, empty);
                assert_eq!(g.1, 0, "{}: an empty input needs no workspace", row.name);
                assert_eq!(opkit::status(g), ACLNN_SUCCESS);
                for t in [x, nine, a, b, col, bigger, empty] {
                    destroy_tensor(t);
                }
            }
        });
    }
}

#[test]
fn each_row_checks_in_its_vendors_order() {
    on_device(A2, || {
        // The arithmetic rows; the comparisons' orders are checked by their vendor cases.
        for row in ROWS.iter().filter(|r| r.output == Output::Promote) {
            // A nine-dim U32 pair: the dtype check or the dims check, whichever comes first.
            let bad = opkit::meta(&[1; 9], ACL_UINT32);
            let g = p1(row, bad, bad, bad);
            let first = row
                .checks
                .iter()
                .find(|c| matches!(c, Check::MaxDims | Check::Dtype(_)))
                .unwrap();
            let fragment = if *first == Check::MaxDims {
                "dims"
            } else {
                "dtype UINT32"
            };
            opkit::refused(g, ACLNN_ERR_PARAM_INVALID, &[fragment]);
            destroy_tensor(bad);
            // Only out's dtype wrong: caught by the rows that check it against their list,
            // otherwise by the cast of the promote.
            let (x, o) = (opkit::meta(&[2], ACL_FLOAT), opkit::meta(&[2], ACL_UINT32));
            let fragment = if row.checks_dtype_of(Role::Out) {
                "out dtype UINT32"
            } else {
                "can not cast"
            };
            opkit::refused(p1(row, x, x, o), ACLNN_ERR_PARAM_INVALID, &[fragment]);
            for t in [x, o] {
                destroy_tensor(t);
            }
        }
    });
}

#[test]
fn every_row_computes_its_exact_values_in_every_floating_dtype() {
    on_device(A2, || {
        for row in ROWS {
            for dt in [ACL_FLOAT, ACL_FLOAT16, ACL_BF16, ACL_DOUBLE] {
                for &(x, y, alpha, want) in row.golden {
                    let got = compute(row, dt, (&[1], &[x]), (&[1], &[y]), alpha, &[1])[0];
                    let (hx, hy) = (held(dt, x), held(dt, y));
                    let want = if (hx, hy) == (x, y) {
                        want
                    } else {
                        (row.f64)(hx, hy, alpha)
                    };
                    let want = held(dt, want);
                    assert!(
                        close(got, want, tolerance(dt)),
                        "{}({x}, {y}, {alpha}) in {dt}: {got}, want {want}",
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
            for dt in [
                ACL_INT8, ACL_INT16, ACL_INT32, ACL_INT64, ACL_UINT8, ACL_BOOL,
            ] {
                if !row.dtypes.allows(Product::AtlasA2, dt)
                    || dt == ACL_BOOL && row.checks.contains(&Check::NotBothBool)
                {
                    continue;
                }
                let (xs, ys): (Vec<f64>, Vec<f64>) = match dt {
                    ACL_BOOL => (vec![0.0, 1.0, 1.0], vec![1.0, 1.0, 0.0]),
                    ACL_UINT8 => (vec![7.0, 2.0, 9.0], vec![2.0, 3.0, 1.0]),
                    _ => (vec![-7.0, 3.0, 100.0], vec![2.0, -3.0, 3.0]),
                };
                let compute_dt = row.compute_dtype(Product::AtlasA2, dt, dt, dt);
                let out_dt = match row.output {
                    Output::Bool => ACL_BOOL,
                    _ if ascend_ops::binary::is_floating(compute_dt) => compute_dt,
                    _ => dt,
                };
                let n = xs.len();
                let (xp, yp, op) = (
                    opkit::upload(&encode(dt, &xs)),
                    opkit::upload(&encode(dt, &ys)),
                    opkit::upload(&vec![0u8; n * size(out_dt)]),
                );
                let d = [n as i64];
                let (xt, yt, ot) = (
                    tensor(&d, dt, xp),
                    tensor(&d, dt, yp),
                    tensor(&d, out_dt, op),
                );
                let two = opkit::scalar(2i64, ACL_INT64);
                opkit::run(p1_alpha(row, xt, yt, two, ot), phase2_of(row.name));
                let got = decode(out_dt, &d2h::<u8>(op, n * size(out_dt)));
                // alpha becomes a tensor of the compute dtype: BOOL holds 2 as true.
                let alpha = if row.alpha { wrap(dt, 2) as i64 } else { 1 };
                for k in 0..n {
                    let want = match row.integer.filter(|_| out_dt == dt) {
                        Some(g) => wrap(dt, g(xs[k] as i64, ys[k] as i64, alpha)),
                        None => held(
                            out_dt,
                            f64::from((row.f32)(xs[k] as f32, ys[k] as f32, alpha as f32)),
                        ),
                    };
                    assert_eq!(got[k], want, "{}({}, {}) of {dt}", row.name, xs[k], ys[k]);
                }
                opkit::destroy_scalar(two);
                for t in [xt, yt, ot] {
                    destroy_tensor(t);
                }
                for p in [xp, yp, op] {
                    free(p);
                }
            }
        }
    });
}

#[test]
fn broadcast_strided_views_in_place_and_zero_dims_give_the_plain_values() {
    on_device(A2, || {
        let xs: Vec<f64> = (0..12).map(|i| 0.25 + f64::from(i) * 0.5).collect();
        let ys: Vec<f64> = vec![1.5, 2.0, 0.75];
        for row in ROWS {
            // The broadcast result, element by element.
            let want: Vec<f64> = (0..12)
                .map(|k| held(ACL_FLOAT, (row.f64)(xs[k], ys[k % 3], 1.0)))
                .collect();
            let plain = compute(row, ACL_FLOAT, (&[4, 3], &xs), (&[3], &ys), 1.0, &[4, 3]);
            for (g, w) in plain.iter().zip(&want) {
                assert!(close(*g, *w, 4e-7), "{} broadcast: {g}, want {w}", row.name);
            }
            // self read transposed from a 3×4 storage, out written through the same view.
            let stored: Vec<f64> = (0..12).map(|k| xs[(k % 4) * 3 + k / 4]).collect();
            let xp = opkit::upload(&encode(ACL_FLOAT, &stored));
            let yp = opkit::upload(&encode(ACL_FLOAT, &ys));
            let op = opkit::upload(&encode(ACL_FLOAT, &[0.0; 12]));
            let xv = tensor_view(&[4, 3], &[1, 4], 0, &[12], ACL_FLOAT, xp);
            let ov = tensor_view(&[4, 3], &[1, 4], 0, &[12], ACL_FLOAT, op);
            let yt = tensor(&[3], ACL_FLOAT, yp);
            opkit::run(p1(row, xv, yt, ov), phase2_of(row.name));
            let got = decode(ACL_FLOAT, &d2h::<u8>(op, 48));
            // The kernel's own plain result, in the storage's order.
            let want_stored: Vec<f64> = (0..12).map(|k| plain[(k % 4) * 3 + k / 4]).collect();
            assert_eq!(got, want_stored, "{} through views", row.name);
            if let Some((twin, _)) = row.inplace {
                opkit::run(inplace_p1(row, twin, xv, yt), phase2_of(twin));
                let got = decode(ACL_FLOAT, &d2h::<u8>(xp, 48));
                assert_eq!(got, want_stored, "{twin} in place");
            }
            for t in [xv, ov, yt] {
                destroy_tensor(t);
            }
            for p in [xp, yp, op] {
                free(p);
            }
            // 0-D with 0-D, and 0-D broadcast against a vector.
            let (x, y, _, _) = row.golden[0];
            let w = held(ACL_FLOAT, (row.f64)(x, y, 1.0));
            let got = compute(row, ACL_FLOAT, (&[], &[x]), (&[], &[y]), 1.0, &[]);
            assert!(close(got[0], w, 4e-7), "{} 0-D", row.name);
            let got = compute(row, ACL_FLOAT, (&[], &[x]), (&[2], &[y, y]), 1.0, &[2]);
            assert!(
                got.iter().all(|&g| close(g, w, 4e-7)),
                "{} 0-D broadcast: {got:?}",
                row.name
            );
        }
    });
}

#[test]
fn the_in_place_pre_check_of_div_comes_before_the_out_parameters() {
    on_device(A2, || {
        for row in ROWS {
            let Some((twin, kind)) = row.inplace else {
                continue;
            };
            let (x, y) = (
                opkit::meta(&[3], ACL_FLOAT),
                opkit::meta(&[2, 3], ACL_FLOAT),
            );
            let name = format!("aclnn{twin}GetWorkspaceSize");
            let mut ex = null_mut();
            let rc = if row.alpha {
                let f: InplaceAlphaPhase1 = entry(&name);
                let one = opkit::f64_scalar(1.0);
                // SAFETY: simulator handles and a deliberate NULL workspaceSize.
                unsafe { f(x, y, one, null_mut(), &mut ex) }
            } else {
                let f: InplacePhase1 = entry(&name);
                // SAFETY: as above.
                unsafe { f(x, y, null_mut(), &mut ex) }
            };
            if kind == ascend_ops::binary::Inplace::BroadcastFirst {
                assert_fails_with(rc, ACLNN_ERR_PARAM_INVALID, &["selfRef shape [3]"]);
            } else {
                assert_fails_with(rc, ACLNN_ERR_PARAM_NULLPTR, &["workspaceSize is nullptr"]);
            }
            opkit::invalid(inplace_p1(row, twin, x, y), "selfRef shape [3]");
            assert_eq!(opkit::status(inplace_p1(row, twin, y, x)), ACLNN_SUCCESS);
            for t in [x, y] {
                destroy_tensor(t);
            }
        }
    });
}

/// The vendor's phase-1 unit-test cases (`math/{sub,div,pow,logical_and,logical_or}/tests/
/// ut/op_api/` of ops-math) on Atlas A2, one per line: operator, `self`, `other` (`exponent`), alpha's
/// dtype (`-`: none), `out` (`-` in place), expected status. A tensor is
/// `DTYPE:dims[:FORMAT]` (dims comma-separated, `-` 0-D, `9d` nine dims of 1) or `null`.
const VENDOR_CASES: &str = "
Sub F32:2 F32:2 F32 F32:2 OK
Sub F16:2:NHWC F16:2:NHWC F32 F16:2:NHWC OK
Sub U8:6,3:NCDHW U8:2,5,6,3:NCDHW I64 U8:2,5,6,3:NCDHW OK
Sub I8:2,3,4,5:NDHWC I8:2,3,4,5:NDHWC I64 I8:2,3,4,5:NDHWC OK
Sub I32:7,9,11,3,4,6 I32:7,9,11,3,4,6 I64 I32:7,9,11,3,4,6 OK
Sub BOOL:2,3 BOOL:2,3 I64 BOOL:2,3 OK
Sub I64:7,9,11,3,4,6,9 I64:7,9,11,3,4,6,1 I64 I64:7,9,11,3,4,6,9 OK
Sub F32:2 F32:2 F32 F32:2 OK
Sub F32:4 F32:1 F32 F32:4 OK
Sub F32:0 F32:0 F32 F32:0 OK
Sub BF16:2,3,4,5 BF16:2,3,4,5 F32 BF16:2,3,4,5 OK
Sub null F32:2 F32 F32:2 NULLPTR
Sub F32:2 null F32 F32:2 NULLPTR
Sub F32:2 F32:2 F32 null NULLPTR
Sub U32:2 U32:2 I64 U32:2 INVALID
Sub F32:2 F32:2 F32 I32:2 INVALID
Sub F32:5,2 F32:5,3 F32 F32:5,2 INVALID
Sub F32:7,9,11,3,4,6,9,2,2 F32:7,9,11,3,4,6,9,2,2 F32 F32:7,9,11,3,4,6,9,2,2 INVALID
Div F32:2,3 F16:2,3 - F32:2,3 OK
Div I16:2,3 I8:2,3 - F32:2,3 OK
Div I64:4,5 I32:4,5 - F32:4,5 OK
Div U8:4,5 U8:4,5 - F32:4,5 OK
Div BOOL:4,5 BOOL:4,5 - F32:4,5 OK
Div F32:3,5:ND F32:3,5:ND - F32:3,5:ND OK
Div F32:3,5:NCHW F32:3,5:NCHW - F32:3,5:NCHW OK
Div F32:3,5:NHWC F32:3,5:NHWC - F32:3,5:NHWC OK
Div F32:3,5:HWCN F32:3,5:HWCN - F32:3,5:HWCN OK
Div F32:3,5:NDHWC F32:3,5:NDHWC - F32:3,5:NDHWC OK
Div F32:3,5:NCDHW F32:3,5:NCDHW - F32:3,5:NCDHW OK
Div F32:3,5:NZ F32:3,5 - F32:3,5 INVALID
Div F32:3,5 F32:3,5:NZ - F32:3,5 INVALID
Div F32:3,5 F32:3,5 - F32:3,5:NZ INVALID
Div F32:5,4 F32:5,4 - F32:5,4 OK
Div U32:10,5 U32:10,5 - U32:10,5 INVALID
Div F32:10,5 F32:3,5 - F32:10,5 INVALID
Div null null - F32:2,3 NULLPTR
Div F32:7,0 F32:7,0 - F32:7,0 OK
Div F32:1,2,3,4,5,6,7,8,9:NCHW F32:1,2,3,4,5,6,7,8,9:NCHW - F32:1,2,3,4,5,6,7,8,9:NCHW INVALID
InplaceDiv F32:4,5 F32:4,5 - - OK
PowTensorTensor F32:1,11 F32:23,11 - F32:23,11 OK
PowTensorTensor F16:17,17:NCHW F16:17,17:NCHW - F16:17,17:NCHW OK
PowTensorTensor U8:16,31,31,16:NHWC U8:16,31,1,1:NHWC - F16:16,31,31,16:NHWC OK
PowTensorTensor I8:1,1,16,12:HWCN I8:32,32,16,1:HWCN - I32:32,32,16,12:HWCN OK
PowTensorTensor F32:1,11,21,16 F16:12,1,1,1:NCHW - F32:12,11,21,16 OK
PowTensorTensor F32:0,2 F32:1,2 - F32:0,2 OK
PowTensorTensor I8:100 I8:100 - I8:100 OK
PowTensorTensor I32:100 I32:100 - I32:100 OK
PowTensorTensor F16:1,2 F16:2,1 - F16:2,2 OK
PowTensorTensor F32:5,4 F32:5,4 - F32:5,4 OK
PowTensorTensor null F32:10,5 - F32:10,5 NULLPTR
PowTensorTensor F32:11,2 F32:11,2 - F32:11,2 OK
PowTensorTensor F32:11,2 F32:11,2 - F32:8,2 INVALID
PowTensorTensor F32:2,3,4,5,6,7,8,9,10 F32:2,3,4,5,6,7,8,9,1 - F32:2,3,4,5,6,7,8,9,10 INVALID
PowTensorTensor U64:11,16:NHWC U64:11,16:NHWC - U64:11,16:NHWC INVALID
PowTensorTensor F32:11,1:NHWC F32:11,1:NHWC - I32:11,1:NHWC INVALID
PowTensorTensor F32:2,7 BOOL:2,7 - F32:2,7 OK
PowTensorTensor BOOL:2,7 BOOL:2,7 - F32:2,7 INVALID
LogicalAnd F16:223,32,17,17:NCHW F16:223,1,1,17:NCHW - F16:223,32,17,17:NCHW OK
LogicalAnd F64:11,32,1,12 F64:11,1,1,12 - F64:11,32,1,12 OK
LogicalAnd I32:1,5,1,16,129:NDHWC I32:32,5,32,16,1:NDHWC - I32:32,5,32,16,129:NDHWC OK
LogicalAnd I64:23,71,16,5,1:NCDHW I64:1,1,16,5,23:NCDHW - I64:23,71,16,5,23:NCDHW OK
LogicalAnd I8:1,1,16,129:HWCN I8:32,32,16,1:HWCN - I8:32,32,16,129:HWCN OK
LogicalAnd U8:64,31,31,16:NHWC U8:64,31,1,1:NHWC - U8:64,31,31,16:NHWC OK
LogicalAnd BOOL:23,71,16,5,1 BOOL:1,1,16,5,23 - BOOL:23,71,16,5,23 OK
LogicalAnd U8:64,31,31,16:NHWC U8:64,31,1,1:NHWC - F16:64,31,31,16:NHWC OK
LogicalAnd I8:1,1,16,129:HWCN I8:32,32,16,1:HWCN - I32:32,32,16,129:HWCN OK
LogicalAnd I16:1,5,1,16,129:NDHWC I32:32,5,32,16,1:NDHWC - F32:32,5,32,16,129:NDHWC OK
LogicalAnd F32:1,11,21,16 F16:12,1,1,1:NCHW - F32:12,11,21,16 OK
LogicalAnd F32:1,11,21,16 I32:12,1,1,1:NCHW - BOOL:12,11,21,16 OK
LogicalAnd F32:0,2 F32:1,2 - F32:0,2 OK
LogicalAnd I8:100 I8:100 - I8:100 OK
LogicalAnd I32:100 I32:100 - I32:100 OK
LogicalAnd F16:1,2 F16:2,1 - F16:2,2 OK
LogicalAnd F32:5,4 F32:5,4 - F32:5,4 OK
LogicalAnd null F32:10,5 - F32:10,5 NULLPTR
LogicalAnd F32:10,5 null - F32:10,5 NULLPTR
LogicalAnd F32:10,5 F32:10,5 - null NULLPTR
LogicalAnd F32:123,11,2 F32:123,8,2 - F32:123,11,2 INVALID
LogicalAnd F32:123,11,2 F32:123,11,2 - F32:123,8,2 INVALID
LogicalAnd F32:2,3,4,5,6,7,8,9,10 F32:2,3,4,5,6,7,8,9,1 - F32:2,3,4,5,6,7,8,9,10 INVALID
LogicalAnd U64:6,12,11,16:NHWC U64:6,12,11,1:NHWC - U64:6,12,11,16:NHWC INVALID
InplaceLogicalAnd I32:2,3,4,5 I32:2,3,4,5 - - OK
LogicalOr F16:223,32,17,17:NCHW F16:223,1,1,17:NCHW - F16:223,32,17,17:NCHW OK
LogicalOr BF16:32,1,12 BF16:1,1,12 - BF16:32,1,12 OK
LogicalOr I32:1,5,1,16,129:NDHWC I32:32,5,32,16,1:NDHWC - I32:32,5,32,16,129:NDHWC OK
LogicalOr I64:23,71,16,5,1:NCDHW I64:1,1,16,5,23:NCDHW - I64:23,71,16,5,23:NCDHW OK
LogicalOr I8:1,1,16,129:HWCN I8:32,32,16,1:HWCN - I8:32,32,16,129:HWCN OK
LogicalOr BOOL:23,71,16,5,1 BOOL:1,1,16,5,23 - BOOL:23,71,16,5,23 OK
LogicalOr I8:1,1,16,129:HWCN I8:32,32,16,1:HWCN - I32:32,32,16,129:HWCN OK
LogicalOr F32:1,11,21,16 F16:12,1,1,1:NCHW - F32:12,11,21,16 OK
LogicalOr F32:1,11,21,16 I32:12,1,1,1:NCHW - BOOL:12,11,21,16 OK
LogicalOr F32:0,2 F32:1,2 - F32:0,2 OK
LogicalOr I8:100 I8:100 - I8:100 OK
LogicalOr I32:100 I32:100 - I32:100 OK
LogicalOr F16:1,2 F16:2,1 - F16:2,2 OK
LogicalOr F32:5,4 F32:5,4 - F32:5,4 OK
LogicalOr F32:123,11,2 F32:123,8,2 - F32:123,11,2 INVALID
LogicalOr F32:123,11,2 F32:123,11,2 - F32:123,8,2 INVALID
LogicalOr F32:2,3,4,5,6,7,8,9,10 F32:2,3,4,5,6,7,8,9,1 - F32:2,3,4,5,6,7,8,9,10 INVALID
LogicalOr U64:6,12,11,16:NHWC U64:6,12,11,1:NHWC - U64:6,12,11,16:NHWC INVALID
InplaceLogicalOr I32:2 I32:2 - - OK
";

fn named(name: &str) -> aclDataType {
    DTYPES
        .iter()
        .find(|d| d.1 == name)
        .unwrap_or_else(|| panic!("dtype {name}"))
        .0
}

/// The tensor a case names, without data (NULL for `null`).
fn case_tensor(text: &str) -> *mut aclTensor {
    if text == "null" {
        return null_mut();
    }
    let mut parts = text.split(':');
    let dt = named(parts.next().unwrap());
    let dims: Vec<i64> = match parts.next().unwrap() {
        "-" => vec![],
        "9d" => vec![1; 9],
        d => d.split(',').map(|v| v.parse().unwrap()).collect(),
    };
    let format = match parts.next().unwrap_or("ND") {
        "ND" => ACL_FORMAT_ND,
        "NCHW" => ACL_FORMAT_NCHW,
        "NHWC" => ACL_FORMAT_NHWC,
        "HWCN" => ACL_FORMAT_HWCN,
        "NDHWC" => ACL_FORMAT_NDHWC,
        "NCDHW" => ACL_FORMAT_NCDHW,
        "NZ" => ACL_FORMAT_FRACTAL_NZ,
        other => panic!("format {other}"),
    };
    let strides = contiguous_strides(&dims);
    // SAFETY: the arrays are live slices of the stated lengths; no data.
    unsafe {
        api::aclCreateTensor(
            dims.as_ptr(),
            dims.len() as u64,
            dt,
            strides.as_ptr(),
            0,
            format,
            dims.as_ptr(),
            dims.len() as u64,
            null_mut(),
        )
    }
}

#[test]
fn the_vendors_phase1_unit_test_cases_replay() {
    let cases: Vec<Vec<String>> = VENDOR_CASES
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.split_whitespace().map(String::from).collect())
        .collect();
    let count = cases.len();
    on_device(A2, move || {
        for c in &cases {
            let op = c[0].as_str();
            let row = ascend_ops::binary::row(op).unwrap_or_else(|| panic!("{op} is not a row"));
            let (x, y) = (case_tensor(&c[1]), case_tensor(&c[2]));
            let alpha = match c[3].as_str() {
                "-" | "F32" => opkit::f64_scalar(1.2),
                "I64" => opkit::scalar(2i64, ACL_INT64),
                other => panic!("alpha {other}"),
            };
            let g = if row.name == op {
                let out = case_tensor(&c[4]);
                let rc = opkit::status(p1_alpha(row, x, y, alpha, out));
                if !out.is_null() {
                    destroy_tensor(out);
                }
                rc
            } else {
                opkit::status(inplace_p1(row, op, x, y))
            };
            let want = match c[5].as_str() {
                "OK" => ACLNN_SUCCESS,
                "INVALID" => ACLNN_ERR_PARAM_INVALID,
                "NULLPTR" => ACLNN_ERR_PARAM_NULLPTR,
                other => panic!("{other}"),
            };
            assert_eq!(g, want, "vendor case `{}`: {}", c.join(" "), err_msg());
            opkit::destroy_scalar(alpha);
            for t in [x, y] {
                if !t.is_null() {
                    destroy_tensor(t);
                }
            }
        }
    });
    assert!(count >= 100, "{count} cases");
}
