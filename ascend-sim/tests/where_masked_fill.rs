//! aclnnSWhere and aclnnInplaceMaskedFillScalar: the vendor's phase-1 unit-test cases
//! replayed through the C ABI, further cases of their rules in the vendor's order, and the
//! kernels against their definitions (broadcast, promotion, views, in place).

mod casekit;
mod common;
mod opkit;
use ascend_sys::*;
use casekit::*;
use common::*;
use opkit::*;
use std::ffi::c_void;
use std::ptr::null_mut;

type SWherePhase1 = unsafe extern "C" fn(
    *const aclTensor,
    *const aclTensor,
    *const aclTensor,
    *mut aclTensor,
    *mut u64,
    *mut *mut aclOpExecutor,
) -> i32;

type MaskedFillPhase1 = unsafe extern "C" fn(
    *mut aclTensor,
    *const aclTensor,
    *const aclScalar,
    *mut u64,
    *mut *mut aclOpExecutor,
) -> i32;

fn s_where(
    condition: *mut aclTensor,
    x: *mut aclTensor,
    other: *mut aclTensor,
    out: *mut aclTensor,
) -> Got {
    // SAFETY: SWhere's phase 1 has this prototype.
    let f = unsafe {
        std::mem::transmute::<*const c_void, SWherePhase1>(entry("aclnnSWhereGetWorkspaceSize"))
    };
    // SAFETY: simulator handles or NULL; out-pointers from `p1`.
    p1(|ws, ex| unsafe { f(condition, x, other, out, ws, ex) })
}

fn masked_fill(x: *mut aclTensor, mask: *mut aclTensor, value: *mut aclScalar) -> Got {
    // SAFETY: InplaceMaskedFillScalar's phase 1 has this prototype.
    let f = unsafe {
        std::mem::transmute::<*const c_void, MaskedFillPhase1>(entry(
            "aclnnInplaceMaskedFillScalarGetWorkspaceSize",
        ))
    };
    // SAFETY: simulator handles or NULL; out-pointers from `p1`.
    p1(|ws, ex| unsafe { f(x, mask, value, ws, ex) })
}

fn phase2(op: &str) -> Phase2 {
    // SAFETY: every phase 2 has the common prototype.
    unsafe { std::mem::transmute::<*const c_void, Phase2>(entry(&format!("aclnn{op}"))) }
}

/// The scalar a case names: `DTYPE:value` (F32, F64, I64, I32, BOOL), or NULL for `null`.
fn case_scalar(text: &str) -> *mut aclScalar {
    if text == "null" {
        return null_mut();
    }
    let (dt, v) = text.split_once(':').unwrap();
    match dt {
        "F32" => scalar(v.parse::<f32>().unwrap(), ACL_FLOAT),
        "F64" => scalar(v.parse::<f64>().unwrap(), ACL_DOUBLE),
        "I64" => scalar(v.parse::<i64>().unwrap(), ACL_INT64),
        "I32" => scalar(v.parse::<i32>().unwrap(), ACL_INT32),
        "BOOL" => scalar(u8::from(v == "true"), ACL_BOOL),
        other => panic!("scalar dtype {other}"),
    }
}

/// The vendor's SWhere phase-1 cases (ops-math `math/select/tests/ut/op_api/
/// test_aclnn_s_where.cpp`, all 11), one per line: SoC (`910`, the UT's default
/// platform), condition, self, other, out, expected status. The NULL cases only expect
/// "not 561103"; the vendor's CheckNotNull4Tensor gives 161001, which is asserted.
const S_WHERE_CASES: &str = "
910 null F32:4,2 F32:4,2 F32:4,2 NULLPTR
910 BOOL:4,2 null F32:4,2 F32:4,2 NULLPTR
910 BOOL:4,2 F32:4,2 null F32:4,2 NULLPTR
910 BOOL:4,2 F32:4,2 F32:4,2 null NULLPTR
910 BOOL:4,2 F32:4,2 F32:4,2 F32:4,2 OK
910 BOOL:4,2 F16:4,2 F16:4,2 F16:4,2 OK
910 BOOL:4,2 I32:4,2 I32:4,2 I32:4,2 OK
910 BOOL:4,2 I64:4,2 I64:4,2 I64:4,2 OK
910 BOOL:2,3,4 F32:2,3,4 F32:2,3,4 F32:2,3,4 OK
910 BOOL:4,0 F32:4,0 F32:4,0 F32:4,0 OK
910 BOOL:2,2,1,1,1,1,1,1,1,1 F32:2,2,1,1,1,1,1,1,1,1 F32:2,2,1,1,1,1,1,1,1,1 F32:2,2,1,1,1,1,1,1,1,1 INVALID
";

/// Further cases of SWhere's rules (`op_api/aclnn_s_where.cpp`), in its order: the NULL
/// order (self before condition); the dtype lists (UINT8 condition, BF16 only on A2/A3,
/// the wide unsigned and complex types everywhere, out's list but no cast check); ranks;
/// the two broadcasts and out's shape; empty inputs before the promotion.
const S_WHERE_RULE_CASES: &str = "
A2 null null F32:2 F32:2 NULLPTR
A2 U8:4,2 F32:4,2 F32:4,2 F32:4,2 OK
A2 F32:4,2 F32:4,2 F32:4,2 F32:4,2 INVALID
A2 I8:4,2 F32:4,2 F32:4,2 F32:4,2 INVALID
910 BOOL:2 BF16:2 BF16:2 BF16:2 INVALID
A2 BOOL:2 BF16:2 BF16:2 BF16:2 OK
310P BOOL:2 U64:2 U64:2 U64:2 OK
910 BOOL:2 C64:2 F32:2 C64:2 OK
A2 BOOL:2 F64:2 F32:2 I8:2 OK
A2 BOOL:2 F32:2 F32:2 BOOL:2 OK
A2 BOOL:2 F32:2 F32:2 UNDEF:2 INVALID
A2 BOOL:2 F32:2:NC1HWC0 F32:2 F32:2 OK
A2 BOOL:4,1 F32:1,3 F32:3 F32:4,3 OK
A2 BOOL:- F32:- F32:- F32:- OK
A2 BOOL:3 F32:4 F32:4 F32:4 INVALID
A2 BOOL:2,3 F32:3 F32:2,1 F32:2,3 OK
A2 BOOL:3 F32:2,1 F32:2 F32:2,2 INVALID
A2 BOOL:2,1 F32:3 F32:3 F32:3 INVALID
A2 BOOL:2,1 F32:3 F32:3 F32:2,3,1 INVALID
A2 BOOL:1,1,1,1,1,1,1,1,1 F32:2 F32:2 F32:1,1,1,1,1,1,1,1,2 INVALID
A2 BOOL:1 F32:2 F32:2 F32:1,1,1,1,1,1,1,1,1,2 INVALID
A2 BOOL:2,0 U16:1 I8:0 F32:2,0 OK
A2 BOOL:0 F32:3 F32:3 F32:0 INVALID
";

fn replay_s_where(table: &str) -> usize {
    let rows = cases(table);
    for c in &rows {
        set_device(device_of(c[0]));
        let (k, x, y, o) = (
            case_tensor(c[1]),
            case_tensor(c[2]),
            case_tensor(c[3]),
            case_tensor(c[4]),
        );
        let rc = status(s_where(k, x, y, o));
        let want = expected(c[5]).unwrap();
        assert_eq!(rc, want, "case `{}`: {}", c.join(" "), err_msg());
        release(&[k, x, y, o]);
    }
    rows.len()
}

/// The vendor's InplaceMaskedFillScalar phase-1 cases (ops-math `conversion/masked_fill/
/// tests/ut/op_api/test_aclnn_masked_fill_scalar_l2.cpp`: its 24 tests, case_017's three
/// calls one line each), one per line: SoC, selfRef, mask, value, expected status.
/// `test_not_support_bf16` runs on the default platform (910), `ascend910B2_support_bf16`
/// on A2. case_017's second and third calls re-run its first `ut` (a NULL selfRef) in the
/// vendor's file; here they pass the NULL mask and value their descriptors name.
const MASKED_FILL_CASES: &str = "
910 F32:8,9 BOOL:8,9 F32:8.88888 OK
910 F16:8,9 BOOL:8,9 F32:8.88888 OK
910 BF16:8,9 I8:8,9 F32:8.88888 INVALID
A2 BF16:8,9 BOOL:8,9 F32:8.88888 OK
910 I32:8,9 BOOL:8,9 F32:8.88888 OK
910 I8:8,9 BOOL:8,9 F32:8.88888 OK
910 BOOL:8,9 BOOL:8,9 I64:0 OK
910 I32:8,9:NHWC BOOL:8,9 F32:8.88888 OK
910 I32:2,0,3:NHWC BOOL:2,0,3 F32:8.88888 OK
910 I8:5,4:ND:1,5:0:4,5 BOOL:5,4:ND:1,5:0:4,5 F32:8.88888 OK
910 F32:2,3,2,3,2,2,2,2,3 BOOL:2,3,2,3,2,2,2,2,3 F32:8.88888 INVALID
910 null BOOL:8,9 F32:8.88888 NULLPTR
910 I32:8,9:NHWC null F32:8.88888 NULLPTR
910 I32:8,9:NHWC BOOL:8,9 null NULLPTR
910 U32:8,9 BOOL:8,9 F32:8.88888 INVALID
910 F32:8,9 F32:8,9 F32:8.88888 INVALID
910 I32:8,9:NC1HWC0 BOOL:8,9 F32:8.88888 OK
910 F32:2,3,4 BOOL:3,4 F32:8.88888 OK
910 F32:2,3,4 BOOL:2,3,5 F32:8.88888 INVALID
910 F32:- BOOL:- F32:8.88888 OK
910 F32:100 BOOL:100 F32:8.88888 OK
910 F32:8,9:NCHW BOOL:8,9 F32:8.88888 OK
910 F32:8,9:NHWC BOOL:8,9 F32:8.88888 OK
910 F32:8,9:HWCN BOOL:8,9 F32:8.88888 OK
910 F32:8,9:NDHWC BOOL:8,9 F32:8.88888 OK
910 F32:8,9:NCDHW BOOL:8,9 F32:8.88888 OK
";

/// Further cases of InplaceMaskedFillScalar's rules, in its order: BF16 off A2/A3 before
/// the list; the mask's one dtype; ranks; a broadcast that would grow selfRef; the value's
/// dtype unchecked; empty.
const MASKED_FILL_RULE_CASES: &str = "
310P BF16:2 BOOL:2 F32:1 INVALID
310P I64:2 BOOL:2 F64:1.5 OK
A2 F64:2 BOOL:2 F32:1 INVALID
A2 I16:2 BOOL:2 F32:1 INVALID
A2 F32:2 U8:2 F32:1 INVALID
A2 F32:2 BOOL:1,1,1,1,1,1,1,1,2 F32:1 INVALID
A2 F32:2,3,4 BOOL:2,1,4 F32:1 OK
A2 F32:3,4 BOOL:2,3,4 F32:1 INVALID
A2 F32:- BOOL:3 F32:1 INVALID
A2 F32:3 BOOL:- F32:1 OK
A2 I8:3 BOOL:3 F64:1e300 OK
A2 BOOL:3 BOOL:3 BOOL:true OK
A2 F32:0,3 BOOL:1,3 I32:2 OK
";

fn replay_masked_fill(table: &str) -> usize {
    let rows = cases(table);
    for c in &rows {
        set_device(device_of(c[0]));
        let (x, m, v) = (case_tensor(c[1]), case_tensor(c[2]), case_scalar(c[3]));
        let rc = status(masked_fill(x, m, v));
        let want = expected(c[4]).unwrap();
        assert_eq!(rc, want, "case `{}`: {}", c.join(" "), err_msg());
        release(&[x, m]);
        if !v.is_null() {
            destroy_scalar(v);
        }
    }
    rows.len()
}

#[test]
fn the_vendors_s_where_phase1_unit_test_cases_replay() {
    let _serial = serial();
    on(A2);
    assert_eq!(replay_s_where(S_WHERE_CASES), 11);
}

#[test]
fn s_where_checks_follow_the_vendors_rules_in_order() {
    let _serial = serial();
    on(A2);
    assert_eq!(replay_s_where(S_WHERE_RULE_CASES), 23);
}

#[test]
fn the_vendors_masked_fill_scalar_phase1_unit_test_cases_replay() {
    let _serial = serial();
    on(A2);
    assert_eq!(replay_masked_fill(MASKED_FILL_CASES), 26);
}

#[test]
fn masked_fill_scalar_checks_follow_the_vendors_rules_in_order() {
    let _serial = serial();
    on(A2);
    assert_eq!(replay_masked_fill(MASKED_FILL_RULE_CASES), 13);
}

#[test]
fn s_where_refuses_null_pointers_in_the_vendors_order() {
    let _serial = serial();
    on(A2);
    let t = || case_tensor("F32:2");
    let (x, y, o) = (t(), t(), t());
    nullptr(s_where(null_mut(), null_mut(), y, o), "self is nullptr");
    nullptr(
        s_where(null_mut(), x, y, null_mut()),
        "condition is nullptr",
    );
    // SAFETY: SWhere's phase 1 with a NULL workspaceSize.
    refuses_null_workspace_size(|ex| unsafe {
        std::mem::transmute::<*const c_void, SWherePhase1>(entry("aclnnSWhereGetWorkspaceSize"))(
            null_mut(),
            null_mut(),
            null_mut(),
            null_mut(),
            null_mut(),
            ex,
        )
    });
    release(&[x, y, o]);
}

#[test]
fn s_where_inputs_that_do_not_promote_fail_at_the_vendors_cast() {
    let _serial = serial();
    on(A2);
    let (k, x, y, o) = (
        case_tensor("BOOL:2"),
        case_tensor("U16:2"),
        case_tensor("I8:2"),
        case_tensor("F32:2"),
    );
    refused(
        s_where(k, x, y, o),
        ACLNN_ERR_INNER_NULLPTR,
        &["UINT16", "INT8"],
    );
    release(&[k, x, y, o]);
}

#[test]
fn s_where_selects_the_broadcast_inputs_in_their_promote_type() {
    let _serial = serial();
    on(A2);
    // condition [2,1], self [1,3] (I64), other [2,3] (I32): promote I64.
    let (k, pk) = filled(&[2, 1], ACL_BOOL, &[1.0, 0.0]);
    let big = (1i64 << 53) + 1;
    let px = opkit::upload(&[big, -2, 3]);
    let x = tensor(&[1, 3], ACL_INT64, px);
    let (y, py) = filled(&[2, 3], ACL_INT32, &[10.0, 11.0, 12.0, 13.0, 14.0, 15.0]);
    let (o, po) = filled(&[2, 3], ACL_INT64, &[0.0; 6]);
    run(s_where(k, x, y, o), phase2("SWhere"));
    // Selected bit for bit: 2^53 + 1 survives, which an f64 path would round.
    assert_eq!(d2h::<i64>(po, 6), [big, -2, 3, 13, 14, 15]);
    // A UINT8 condition: nonzero is true; the I64 selection cast to an F32 out.
    let (u, pu) = filled(&[2, 1], ACL_UINT8, &[0.0, 7.0]);
    let (f, pf) = filled(&[2, 3], ACL_FLOAT, &[0.0; 6]);
    run(s_where(u, x, y, f), phase2("SWhere"));
    assert_eq!(d2h::<f32>(pf, 6), [10.0, 11.0, 12.0, big as f32, -2.0, 3.0]);
    release(&[k, x, y, o, u, f]);
    for p in [pk, px, py, po, pu, pf] {
        free(p);
    }
}

#[test]
fn s_where_casts_the_selection_to_out_and_writes_through_its_view() {
    let _serial = serial();
    on(A2);
    // A DOUBLE selection into an INT8 out truncates (the vendor checks no cast).
    let (k, pk) = filled(&[2], ACL_BOOL, &[1.0, 0.0]);
    let (x, px) = filled(&[2], ACL_DOUBLE, &[2.7, 5.0]);
    let (y, py) = filled(&[2], ACL_FLOAT, &[1.0, -3.9]);
    let (o, po) = filled(&[2], ACL_INT8, &[0.0; 2]);
    run(s_where(k, x, y, o), phase2("SWhere"));
    assert_eq!(d2h::<i8>(po, 2), [2, -3]);
    // Two BOOL inputs into a transposed BOOL out ([3,2] view of [2,3] storage).
    let (c, pc) = filled(&[3, 2], ACL_BOOL, &[1.0, 0.0, 0.0, 1.0, 1.0, 1.0]);
    let (a, pa) = filled(&[3, 2], ACL_BOOL, &[1.0, 1.0, 1.0, 1.0, 0.0, 0.0]);
    let (b, pb) = filled(&[2], ACL_BOOL, &[0.0, 1.0]);
    let pt = opkit::upload(&[9u8; 6]);
    let t = tensor_view(&[3, 2], &[1, 3], 0, &[2, 3], ACL_BOOL, pt);
    run(s_where(c, a, b, t), phase2("SWhere"));
    // Row-major [3,2] values [1,1, 0,1, 0,0] stored column by column.
    assert_eq!(d2h::<u8>(pt, 6), [1, 0, 0, 1, 1, 0]);
    // An empty selection computes nothing.
    let (e, pe) = filled(&[0, 2], ACL_BOOL, &[]);
    let (eo, peo) = filled(&[0, 2], ACL_FLOAT, &[]);
    let g = s_where(e, x, y, eo);
    assert_eq!(g.1, 0);
    run(g, phase2("SWhere"));
    release(&[k, x, y, o, c, a, b, t, e, eo]);
    for p in [pk, px, py, po, pc, pa, pb, pt, pe, peo] {
        free(p);
    }
}

#[test]
fn masked_fill_writes_the_converted_value_where_the_broadcast_mask_is_true() {
    let _serial = serial();
    on(A2);
    let (x, px) = filled(&[2, 3], ACL_INT32, &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let (m, pm) = filled(&[3], ACL_BOOL, &[1.0, 0.0, 1.0]);
    let v = scalar(8.88888f32, ACL_FLOAT);
    run(masked_fill(x, m, v), phase2("InplaceMaskedFillScalar"));
    // 8.88888 truncates to 8 in INT32.
    assert_eq!(d2h::<i32>(px, 6), [8, 2, 8, 8, 5, 8]);
    // A transposed selfRef ([3,2] view of a [2,3] F32 storage), mask [3,1].
    let (s, ps) = filled(&[2, 3], ACL_FLOAT, &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let t = tensor_view(&[3, 2], &[1, 3], 0, &[2, 3], ACL_FLOAT, ps);
    let (n, pn) = filled(&[3, 1], ACL_BOOL, &[0.0, 1.0, 0.0]);
    let w = scalar(-0.5f64, ACL_DOUBLE);
    run(masked_fill(t, n, w), phase2("InplaceMaskedFillScalar"));
    // The view's row 1 is storage column 1.
    assert_eq!(d2h::<f32>(ps, 6), [1.0, -0.5, 3.0, 4.0, -0.5, 6.0]);
    // A BOOL selfRef filled with an integer 0.
    let (b, pb) = filled(&[3], ACL_BOOL, &[1.0, 1.0, 0.0]);
    let z = scalar(0i64, ACL_INT64);
    run(masked_fill(b, m, z), phase2("InplaceMaskedFillScalar"));
    assert_eq!(d2h::<u8>(pb, 3), [0, 1, 0]);
    for sc in [v, w, z] {
        destroy_scalar(sc);
    }
    release(&[x, m, s, t, n, b]);
    for p in [px, pm, ps, pn, pb] {
        free(p);
    }
}

#[test]
fn a_repeated_masked_fill_keeps_the_value_of_its_phase1() {
    let _serial = serial();
    on(A2);
    let (x, px) = filled(&[2], ACL_FLOAT, &[1.0, 2.0]);
    let (m, pm) = filled(&[2], ACL_BOOL, &[0.0, 1.0]);
    let v = scalar(4.0f32, ACL_FLOAT);
    let g = masked_fill(x, m, v);
    destroy_scalar(v);
    run(g, phase2("InplaceMaskedFillScalar"));
    assert_eq!(d2h::<f32>(px, 2), [1.0, 4.0]);
    release(&[x, m]);
    for p in [px, pm] {
        free(p);
    }
}
