//! aclnnCast and aclnnInplaceOne: the vendor's phase-1 unit-test cases replayed through
//! the C ABI, the rules those cases leave out, and the kernels: every dtype pair of Atlas
//! A2 casts exactly as aclnnInplaceCopy does, with round to nearest even, truncation toward
//! zero, saturation and wrapping where the vendor's cast has them; InplaceOne writes 1 in
//! every dtype it takes, through any view.

use crate::casekit;
use crate::common;
use crate::opkit;

use ascend_sys::*;
use casekit::*;
use common::*;
use half::{bf16, f16};
use opkit::*;
use std::ffi::c_void;

type CastPhase1 = unsafe extern "C" fn(
    *const aclTensor,
    aclDataType,
    *mut aclTensor,
    *mut u64,
    *mut *mut aclOpExecutor,
) -> i32;
type OnePhase1 = unsafe extern "C" fn(*const aclTensor, *mut u64, *mut *mut aclOpExecutor) -> i32;
type CopyPhase1 = unsafe extern "C" fn(
    *mut aclTensor,
    *const aclTensor,
    *mut u64,
    *mut *mut aclOpExecutor,
) -> i32;

fn cast(x: *mut aclTensor, dtype: aclDataType, out: *mut aclTensor) -> Got {
    // SAFETY: Cast's phase 1 has this prototype.
    let f = unsafe {
        std::mem::transmute::<*const c_void, CastPhase1>(entry("aclnnCastGetWorkspaceSize"))
    };
    // SAFETY: simulator handles or NULL; out-pointers from `p1`.
    p1(|ws, ex| unsafe { f(x, dtype, out, ws, ex) })
}

fn one(x: *mut aclTensor) -> Got {
    // SAFETY: InplaceOne's phase 1 has this prototype.
    let f = unsafe {
        std::mem::transmute::<*const c_void, OnePhase1>(entry("aclnnInplaceOneGetWorkspaceSize"))
    };
    // SAFETY: as above.
    p1(|ws, ex| unsafe { f(x, ws, ex) })
}

fn copy(dst: *mut aclTensor, src: *mut aclTensor) -> Got {
    // SAFETY: InplaceCopy's phase 1 has this prototype.
    let f = unsafe {
        std::mem::transmute::<*const c_void, CopyPhase1>(entry("aclnnInplaceCopyGetWorkspaceSize"))
    };
    // SAFETY: as above.
    p1(|ws, ex| unsafe { f(dst, src, ws, ex) })
}

fn phase2(op: &str) -> Phase2 {
    // SAFETY: every phase 2 has the common prototype.
    unsafe { std::mem::transmute::<*const c_void, Phase2>(entry(&format!("aclnn{op}"))) }
}

/// A case's expected status: casekit's names, and `VIEWCOPY` for the 561103 of the
/// vendor's ViewCopy into an out of another dtype.
fn want(text: &str) -> i32 {
    match text {
        "VIEWCOPY" => ACLNN_ERR_INNER_NULLPTR,
        other => expected(other).unwrap(),
    }
}

/// The vendor's Cast phase-1 cases (ops-math `math/cast/tests/ut/op_api/
/// test_aclnn_cast.cpp`: case_1 to case_29, the `ascend910B2_` case_30 and case_33 to
/// case_46, case_47 to case_73), one per line: SoC (`910` the UT's default platform, `A2`
/// for the `ascend910B2_` cases), self, the `dtype` argument, out, expected status.
const CAST_CASES: &str = "
910 F16:2,3 F32 F32:2,3 OK
910 F32:2,3 I32 I32:2,3 OK
910 I32:2,3 F16 F16:2,3 OK
910 I32:2,3 F32 F32:2,3 OK
910 I8:2,3 F16 F16:2,3 OK
910 U8:2,3 F16 F16:2,3 OK
910 BOOL:2,3 F16 F16:2,3 OK
910 F16:2,3 U8 U8:2,3 OK
910 F16:2,3 I8 I8:2,3 OK
910 F16:2,3 BOOL BOOL:2,3 OK
910 F16:2,3 I64 I64:2,3 OK
910 I64:2,3 F16 F16:2,3 OK
910 I64:2,3 I32 I32:2,3 OK
910 I32:2,3 I64 I64:2,3 OK
910 F32:2,3 BOOL BOOL:2,3 OK
910 BOOL:2,3 F32 F32:2,3 OK
910 BOOL:2,3 I32 I32:2,3 OK
910 U8:2,3 I64 I64:2,3 OK
910 I64:2,3 U8 U8:2,3 OK
910 BOOL:2,3 I64 I64:2,3 OK
910 I64:2,3 BOOL BOOL:2,3 OK
910 BOOL:2,3 I8 I8:2,3 OK
910 I8:2,3 BOOL BOOL:2,3 OK
910 F16:2,3 F16 F16:2,3 OK
910 F16:0 F32 F32:0 OK
910 null F32 F32:2,3 NULLPTR
910 F16:2,3 F32 null NULLPTR
910 F16:2,4 F32 F32:2,3 INVALID
910 F16:1,1,1,1,1,1,1,1,1 F32 F32:1,1,1,1,1,1,1,1,1 INVALID
A2 BF16:2,3 F32 F32:2,3 OK
A2 F32:2,3 BF16 BF16:2,3 OK
A2 BF16:2,3 I32 I32:2,3 OK
A2 I32:2,3 BF16 BF16:2,3 OK
A2 BF16:2,3 F16 F16:2,3 OK
A2 F16:2,3 BF16 BF16:2,3 OK
A2 BF16:2,3 BOOL BOOL:2,3 OK
A2 BOOL:2,3 BF16 BF16:2,3 OK
A2 BF16:2,3 I8 I8:2,3 OK
A2 I8:2,3 BF16 BF16:2,3 OK
A2 BF16:2,3 U8 U8:2,3 OK
A2 U8:2,3 BF16 BF16:2,3 OK
A2 BF16:2,3 I64 I64:2,3 OK
A2 I64:2,3 BF16 BF16:2,3 OK
A2 BF16:2,3 BF16 BF16:2,3 OK
910 F64:2,3 F32 F32:2,3 OK
910 F64:2,3 I32 I32:2,3 OK
910 F64:2,3 I64 I64:2,3 OK
910 I16:2,3 F16 F16:2,3 OK
910 U16:2,3 F16 F16:2,3 OK
910 U32:2,3 F16 F16:2,3 OK
910 U64:2,3 F16 F16:2,3 OK
910 I16:2,3 F32 F32:2,3 OK
910 U16:2,3 F32 F32:2,3 OK
910 U32:2,3 F32 F32:2,3 OK
910 U64:2,3 F32 F32:2,3 OK
910 F32:2,3 I16 I16:2,3 OK
910 F32:2,3 U16 U16:2,3 OK
910 F32:2,3 U32 U32:2,3 OK
910 F32:2,3 U64 U64:2,3 OK
910 F16:2,3 I16 I16:2,3 OK
910 F16:2,3 U16 U16:2,3 OK
910 F16:2,3 U32 U32:2,3 OK
910 F16:2,3 U64 U64:2,3 OK
910 I32:2,3 I16 I16:2,3 OK
910 I32:2,3 U16 U16:2,3 OK
910 I32:2,3 U32 U32:2,3 OK
910 I32:2,3 U64 U64:2,3 OK
910 I64:2,3 I16 I16:2,3 OK
910 I64:2,3 U16 U16:2,3 OK
910 I64:2,3 U32 U32:2,3 OK
910 I64:2,3 U64 U64:2,3 OK
";

/// Further cases of Cast's rules (`op_api/aclnn_cast.cpp`), in its order: NULL before any
/// dtype; self's dtype, then `dtype`, per product (BF16 only on A2 / A3); a `dtype` outside
/// the list; rank, then out's shape; an INT4 out with a non-contiguous self; an empty self
/// returns before out's dtype is looked at; out's dtype not `dtype` fails in the ViewCopy.
const CAST_RULE_CASES: &str = "
910 null BF16 BF16:2,3 NULLPTR
910 BF16:2,3 F32 null NULLPTR
910 BF16:2,3 F32 F32:2,3 INVALID
910 F32:2,3 BF16 BF16:2,3 INVALID
310P F32:2,3 BF16 BF16:2,3 INVALID
310B BF16:2,3 F32 F32:2,3 INVALID
A3 BF16:2,3 F32 F32:2,3 OK
A3 F32:2,3 BF16 BF16:2,3 OK
310B F32:2,3 F16 F16:2,3 OK
A2 C64:2,3 BF16 BF16:2,3 OK
A2 C128:2,3 U64 U64:2,3 OK
A2 U16:2,3 BOOL BOOL:2,3 OK
A2 F32:2,3 UNDEF F32:2,3 INVALID
A2 INT4:2,3 F32 F32:2,3 INVALID
A2 F32:2,3 INT4 INT4:2,3 INVALID
A2 BOOL:2,3,1,1,1,1,1,1,1 UNDEF F32:2,3 INVALID
A2 F32:1,1,1,1,1,1,1,1,1 F32 F32:1 INVALID
A2 F32:2,3 F32 F32:3,2 INVALID
A2 F32:2,3 F32 F32:- INVALID
A2 F32:- I64 I64:- OK
A2 F32:3,2:ND:1,3:0:2,3 F32 INT4:3,2 INVALID
A2 F32:2,3 F32 INT4:2,3 VIEWCOPY
A2 F32:2,0 F32 F16:2,0 OK
A2 F32:2,3 F16 F32:2,3 VIEWCOPY
A2 F16:2,3 F16 F32:2,3 VIEWCOPY
A2 F32:3,2:ND:1,3:0:2,3 I8 I8:3,2 OK
";

fn replay_cast_on(soc: &str, c: &[&str]) {
    set_device(device_of(soc));
    let (x, o) = (case_tensor(c[1]), case_tensor(c[3]));
    let rc = status(cast(x, dtype(c[2]), o));
    assert_eq!(
        rc,
        want(c[4]),
        "case `{}` on {soc}: {}",
        c.join(" "),
        err_msg()
    );
    release(&[x, o]);
}

/// Replays `table`; with `also_a2`, each `910` case (none of which has BF16) again on A2,
/// the simulator's default product.
fn replay_cast(table: &str, also_a2: bool) -> usize {
    let rows = cases(table);
    for c in &rows {
        replay_cast_on(c[0], c);
        if also_a2 && c[0] == "910" {
            replay_cast_on("A2", c);
        }
    }
    rows.len()
}

#[test]
fn the_vendors_cast_phase1_unit_test_cases_replay() {
    let _serial = serial();
    on(A2);
    assert_eq!(replay_cast(CAST_CASES, true), 71);
}

#[test]
fn cast_checks_follow_the_vendors_rules_in_order() {
    let _serial = serial();
    on(A2);
    assert_eq!(replay_cast(CAST_RULE_CASES, false), 26);
    let (x, o) = (case_tensor("F32:2,3"), case_tensor("F16:2,3"));
    assert_eq!(
        status(cast(x, ACL_FLOAT16, o)),
        ACLNN_SUCCESS,
        "{}",
        err_msg()
    );
    refused(
        cast(x, ACL_FLOAT, o),
        ACLNN_ERR_INNER_NULLPTR,
        &["ViewCopy", "FLOAT16"],
    );
    refused(
        cast(x, 40, o),
        ACLNN_ERR_PARAM_INVALID,
        &["param dtype", "FLOAT4_E2M1"],
    );
    release(&[x, o]);
}

/// The dtypes of Cast on Atlas A2, BF16 last (the training series' list is the rest).
const A2_DTYPES: [aclDataType; 15] = [
    ACL_FLOAT16,
    ACL_FLOAT,
    ACL_DOUBLE,
    ACL_INT8,
    ACL_UINT8,
    ACL_INT16,
    ACL_INT32,
    ACL_INT64,
    ACL_UINT16,
    ACL_UINT32,
    ACL_UINT64,
    ACL_BOOL,
    ACL_COMPLEX64,
    ACL_COMPLEX128,
    ACL_BF16,
];

fn size_of(dt: aclDataType) -> usize {
    match dt {
        ACL_INT8 | ACL_UINT8 | ACL_BOOL => 1,
        ACL_FLOAT16 | ACL_BF16 | ACL_INT16 | ACL_UINT16 => 2,
        ACL_FLOAT | ACL_INT32 | ACL_UINT32 => 4,
        ACL_COMPLEX128 => 16,
        _ => 8,
    }
}

/// `v` as `dt` holds it in the test's own terms (Rust's `as`, which saturates; a complex
/// value gets imaginary part `v / 2`).
fn enc(dt: aclDataType, v: f64) -> Vec<u8> {
    match dt {
        ACL_FLOAT => (v as f32).to_le_bytes().to_vec(),
        ACL_FLOAT16 => f16::from_f64(v).to_le_bytes().to_vec(),
        ACL_BF16 => bf16::from_f64(v).to_le_bytes().to_vec(),
        ACL_DOUBLE => v.to_le_bytes().to_vec(),
        ACL_INT8 => (v as i8).to_le_bytes().to_vec(),
        ACL_UINT8 => (v as u8).to_le_bytes().to_vec(),
        ACL_INT16 => (v as i16).to_le_bytes().to_vec(),
        ACL_UINT16 => (v as u16).to_le_bytes().to_vec(),
        ACL_INT32 => (v as i32).to_le_bytes().to_vec(),
        ACL_UINT32 => (v as u32).to_le_bytes().to_vec(),
        ACL_INT64 => (v as i64).to_le_bytes().to_vec(),
        ACL_UINT64 => (v as u64).to_le_bytes().to_vec(),
        ACL_BOOL => vec![u8::from(v != 0.0)],
        ACL_COMPLEX64 => [(v as f32).to_le_bytes(), ((v / 2.0) as f32).to_le_bytes()].concat(),
        ACL_COMPLEX128 => [v.to_le_bytes(), (v / 2.0).to_le_bytes()].concat(),
        other => panic!("dtype {other}"),
    }
}

/// Values that round, truncate, saturate and wrap differently in different targets.
const VALUES: [f64; 16] = [
    0.0,
    -0.0,
    1.5,
    -2.5,
    2.5,
    3.7,
    -3.7,
    255.0,
    300.0,
    -129.0,
    65504.0,
    1e10,
    -1e-8,
    1.0e20,
    f64::NAN,
    f64::INFINITY,
];

/// A device tensor of `VALUES` as `dt`, and its memory.
fn values_in(dt: aclDataType) -> (*mut aclTensor, *mut c_void) {
    let bytes: Vec<u8> = VALUES.iter().flat_map(|&v| enc(dt, v)).collect();
    let p = opkit::upload(&bytes);
    (tensor(&[4, 4], dt, p), p)
}

#[test]
fn every_a2_dtype_pair_casts_as_inplace_copy_converts() {
    let _serial = serial();
    on(A2);
    let mut pairs = 0;
    for from in A2_DTYPES {
        let (x, px) = values_in(from);
        for to in A2_DTYPES {
            let n = 16 * size_of(to);
            let (o, po) = (malloc(n), malloc(n));
            let (out, dst) = (tensor(&[4, 4], to, o), tensor(&[4, 4], to, po));
            run(cast(x, to, out), phase2("Cast"));
            run(copy(dst, x), phase2("InplaceCopy"));
            let (a, b) = (d2h::<u8>(o, n), d2h::<u8>(po, n));
            assert_eq!(a, b, "Cast and InplaceCopy differ from {from} to {to}");
            if from == to {
                assert_eq!(
                    a,
                    d2h::<u8>(px, n),
                    "Cast to its own dtype {from} is a copy"
                );
            }
            release(&[out, dst]);
            free(o);
            free(po);
            pairs += 1;
        }
        release(&[x]);
        free(px);
    }
    assert_eq!(pairs, 225);
}

#[test]
fn the_training_series_casts_every_pair_but_bf16() {
    let _serial = serial();
    on(A2);
    let (mut ok, mut refused_bf16) = (0, 0);
    for from in A2_DTYPES {
        for to in A2_DTYPES {
            set_device(TRAINING);
            let (x, o) = (meta(&[2, 3], from), meta(&[2, 3], to));
            let rc = status(cast(x, to, o));
            if from == ACL_BF16 || to == ACL_BF16 {
                assert_eq!(rc, ACLNN_ERR_PARAM_INVALID, "{from} to {to}");
                refused_bf16 += 1;
            } else {
                assert_eq!(rc, ACLNN_SUCCESS, "{from} to {to}: {}", err_msg());
                ok += 1;
            }
            release(&[x, o]);
        }
    }
    assert_eq!((ok, refused_bf16), (196, 29));
}

/// Runs Cast of `src` (as `from`, a vector) to `to` and returns out's bytes.
fn cast_bytes(from: aclDataType, src: &[u8], to: aclDataType) -> Vec<u8> {
    let n = src.len() / size_of(from);
    let p = opkit::upload(src);
    let o = malloc(n * size_of(to));
    let (x, out) = (tensor(&[n as i64], from, p), tensor(&[n as i64], to, o));
    run(cast(x, to, out), phase2("Cast"));
    let got = d2h::<u8>(o, n * size_of(to));
    release(&[x, out]);
    free(p);
    free(o);
    got
}

fn f32s(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

#[test]
fn cast_truncates_saturates_wraps_and_rounds_to_nearest_even() {
    let _serial = serial();
    on(A2);
    // Float to integer: toward zero, NaN to 0, saturating at the target's range.
    let x = f32s(&[
        -2.7,
        2.7,
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        3e9,
        -0.5,
    ]);
    let want: Vec<u8> = [-2i32, 2, 0, i32::MAX, i32::MIN, i32::MAX, 0]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    assert_eq!(cast_bytes(ACL_FLOAT, &x, ACL_INT32), want);
    let d: Vec<u8> = [-1.0f64, 256.7, 7.9]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    assert_eq!(cast_bytes(ACL_DOUBLE, &d, ACL_UINT8), [0, 255, 7]);
    // Integers wrap to the target's width.
    let i: Vec<u8> = [300i32, -129, -1]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    assert_eq!(cast_bytes(ACL_INT32, &i, ACL_INT8), [44, 127, 255]);
    // To nearest even: 1 + 2^-11 is a tie between two f16 values (to 1.0), 1 + 3·2^-11 one
    // above (to 1 + 2^-9); 65520 rounds past f16's largest finite value.
    let h = f32s(&[1.0 + 2f32.powi(-11), 1.0 + 3.0 * 2f32.powi(-11), 65520.0]);
    let want: Vec<u8> = [f16::ONE, f16::from_f32(1.0 + 2f32.powi(-9)), f16::INFINITY]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    assert_eq!(cast_bytes(ACL_FLOAT, &h, ACL_FLOAT16), want);
    // Nonzero is true, NaN included; a complex number keeps its real part.
    let b = f32s(&[0.0, -0.0, 0.5, f32::NAN]);
    assert_eq!(cast_bytes(ACL_FLOAT, &b, ACL_BOOL), [0, 0, 1, 1]);
    let c = f32s(&[1.5, 2.0, -3.25, 9.0]);
    assert_eq!(
        cast_bytes(ACL_COMPLEX64, &c, ACL_FLOAT),
        f32s(&[1.5, -3.25])
    );
    let t = [1u8, 0];
    assert_eq!(cast_bytes(ACL_BOOL, &t, ACL_FLOAT), f32s(&[1.0, 0.0]));
}

#[test]
fn cast_reads_a_transposed_self_and_writes_a_stepped_out() {
    let _serial = serial();
    on(A2);
    // self: the transpose (3, 2) of a (2, 3) storage [[0.5, 1.5, 2.5], [-0.5, -1.5, -2.5]].
    let p = opkit::upload(&[0.5f32, 1.5, 2.5, -0.5, -1.5, -2.5]);
    let x = tensor_view(&[3, 2], &[1, 3], 0, &[2, 3], ACL_FLOAT, p);
    // out: every other element of 12 i64 from the second, pre-filled with 9.
    let o = opkit::upload(&[9i64; 12]);
    let out = tensor_view(&[3, 2], &[4, 2], 1, &[12], ACL_INT64, o);
    let g = cast(x, ACL_INT64, out);
    assert!(g.1 > 0, "the contiguous copy and the cast take a workspace");
    run(g, phase2("Cast"));
    assert_eq!(d2h::<i64>(o, 12), [9, 0, 9, 0, 9, 1, 9, -1, 9, 2, 9, -2]);
    // A contiguous self of out's dtype is moved as it is: no workspace.
    let y = tensor(&[2, 3], ACL_FLOAT, p);
    let o2 = opkit::upload(&[0f32; 6]);
    let out2 = tensor(&[2, 3], ACL_FLOAT, o2);
    let g = cast(y, ACL_FLOAT, out2);
    assert_eq!(g.1, 0);
    run(g, phase2("Cast"));
    assert_eq!(d2h::<f32>(o2, 6), [0.5, 1.5, 2.5, -0.5, -1.5, -2.5]);
    release(&[x, out, y, out2]);
    for q in [p, o, o2] {
        free(q);
    }
}

#[test]
fn an_empty_cast_writes_nothing_and_a_0d_one_its_element() {
    let _serial = serial();
    on(A2);
    let o = opkit::upload(&[7u8; 4]);
    let (x, out) = (meta(&[0, 3], ACL_FLOAT), tensor(&[0, 3], ACL_INT8, o));
    let g = cast(x, ACL_INT8, out);
    assert_eq!(g.1, 0);
    run(g, phase2("Cast"));
    assert_eq!(d2h::<u8>(o, 4), [7; 4]);
    let p = opkit::upload(&[-7.9f64]);
    let (s, out0) = (tensor(&[], ACL_DOUBLE, p), tensor(&[], ACL_INT8, o));
    run(cast(s, ACL_INT8, out0), phase2("Cast"));
    assert_eq!(d2h::<u8>(o, 4), [(-7i8) as u8, 7, 7, 7]);
    release(&[x, out, s, out0]);
    free(o);
    free(p);
}

/// The vendor's InplaceOne phase-1 cases (ops-math `math/ones_like/tests/ut/op_api/
/// test_aclnn_ones_like.cpp`, its 25 live tests; the commented-out ones are left out), one
/// per line: SoC (`910` the UT's default platform and its `ascend910_` case, `A2` the
/// `ascend910b_` case, `A3` the `ascend910_93_` case), selfRef, expected status.
const ONE_CASES: &str = "
910 F32:2,0 OK
910 C64:2,3 INVALID
910 C128:2,3 INVALID
A2 BF16:2,3 OK
910 BF16:2,3 INVALID
910 F32:2,3,1,1,1,1,1,1,1 INVALID
910 F16:2,3 OK
910 F32:2,3 OK
910 I8:2,3 OK
910 I32:2,3 OK
910 U8:2,3 OK
910 BOOL:2,3 OK
910 F64:2,3 OK
910 I16:2,3 OK
910 I64:2,3 OK
910 F32:16 OK
910 F32:2,3,4 OK
910 F32:2,3,4,5 OK
910 F32:1,2,3,4,5 OK
910 F32:1024,1024 OK
910 F32:1 OK
910 F32:3,4 OK
910 F32:5,4:ND:1,5:0:4,5 OK
910 F32:- OK
A3 BF16:2,3 OK
";

/// Further cases of InplaceOne's rules (`op_api/aclnn_ones.cpp`): NULL; UINT16, which the
/// documentation lists and the code refuses; BF16 off A2 / A3; no product refused; the
/// dtype before the rank.
const ONE_RULE_CASES: &str = "
A2 null NULLPTR
A2 U16:2,3 INVALID
910 U16:2,3 INVALID
A2 U32:2,3 INVALID
310P BF16:2,3 INVALID
310B F32:2,3 OK
310P F64:2,3 OK
A2 C64:1,1,1,1,1,1,1,1,1 INVALID
A2 BF16:1,1,1,1,1,1,1,1 OK
A2 BF16:0,3,1,1,1,1,1,1,1 INVALID
";

fn replay_one(table: &str) -> usize {
    let rows = cases(table);
    for c in &rows {
        set_device(device_of(c[0]));
        let x = case_tensor(c[1]);
        let rc = status(one(x));
        assert_eq!(rc, want(c[2]), "case `{}`: {}", c.join(" "), err_msg());
        release(&[x]);
    }
    rows.len()
}

#[test]
fn the_vendors_inplace_one_phase1_unit_test_cases_replay() {
    let _serial = serial();
    on(A2);
    assert_eq!(replay_one(ONE_CASES), 25);
    assert_eq!(replay_one(ONE_RULE_CASES), 10);
}

#[test]
fn inplace_one_writes_one_in_every_dtype_it_takes() {
    let _serial = serial();
    on(A2);
    let dtypes = [
        ACL_FLOAT,
        ACL_FLOAT16,
        ACL_INT8,
        ACL_INT16,
        ACL_INT32,
        ACL_INT64,
        ACL_UINT8,
        ACL_BOOL,
        ACL_DOUBLE,
        ACL_BF16,
    ];
    for dt in dtypes {
        let n = 6 * size_of(dt);
        let p = opkit::upload(&vec![0xa5u8; n]);
        let x = tensor(&[2, 3], dt, p);
        run(one(x), phase2("InplaceOne"));
        let want: Vec<u8> = (0..6).flat_map(|_| enc(dt, 1.0)).collect();
        assert_eq!(d2h::<u8>(p, n), want, "dtype {dt}");
        release(&[x]);
        free(p);
    }
}

#[test]
fn inplace_one_writes_only_its_views_elements() {
    let _serial = serial();
    on(A2);
    let p = opkit::upload(&[9i32; 8]);
    // Every other element from the second: 1, 3, 5, 7 as a (2, 2) transposed view.
    let x = tensor_view(&[2, 2], &[2, 4], 1, &[8], ACL_INT32, p);
    run(one(x), phase2("InplaceOne"));
    assert_eq!(d2h::<i32>(p, 8), [9, 1, 9, 1, 9, 1, 9, 1]);
    // Empty: success with nothing written; 0-D: its one element.
    let e = tensor(&[0, 2], ACL_INT32, p);
    let g = one(e);
    assert_eq!(g.1, 0);
    run(g, phase2("InplaceOne"));
    assert_eq!(d2h::<i32>(p, 8), [9, 1, 9, 1, 9, 1, 9, 1]);
    let s = tensor_view(&[], &[], 2, &[8], ACL_INT32, p);
    run(one(s), phase2("InplaceOne"));
    assert_eq!(d2h::<i32>(p, 8), [9, 1, 1, 1, 9, 1, 9, 1]);
    release(&[x, e, s]);
    free(p);
}
