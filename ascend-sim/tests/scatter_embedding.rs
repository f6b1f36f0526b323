//! aclnnScatterAdd: the vendor's phase-1 unit-test cases replayed through the C ABI, the
//! kernel's accumulation, and an index out of range failing the launch with its position.

mod casekit;
mod common;
mod opkit;
use ascend_sys::*;
use casekit::*;
use common::*;
use opkit::*;
use std::ffi::c_void;
use std::ptr::null_mut;

type ScatterAddPhase1 = unsafe extern "C" fn(
    *const aclTensor,
    i64,
    *const aclTensor,
    *const aclTensor,
    *mut aclTensor,
    *mut u64,
    *mut *mut aclOpExecutor,
) -> i32;

fn scatter_add(
    x: *mut aclTensor,
    dim: i64,
    index: *mut aclTensor,
    src: *mut aclTensor,
    out: *mut aclTensor,
) -> Got {
    // SAFETY: ScatterAdd's phase 1 has this prototype.
    let f = unsafe {
        std::mem::transmute::<*const c_void, ScatterAddPhase1>(entry(
            "aclnnScatterAddGetWorkspaceSize",
        ))
    };
    // SAFETY: simulator handles or NULL; out-pointers from `p1`.
    p1(|ws, ex| unsafe { f(x, dim, index, src, out, ws, ex) })
}

fn phase2(op: &str) -> Phase2 {
    // SAFETY: every phase 2 has the common prototype.
    unsafe { std::mem::transmute::<*const c_void, Phase2>(entry(&format!("aclnn{op}"))) }
}

/// The vendor's phase-1 cases (ops-nn `index/scatter_elements_v2/tests/ut/op_api/
/// test_aclnn_scatter_add.cpp`; case_3's three calls one line each), one per line: SoC
/// (`910`, the UT's default platform), self, dim, index, src, out, expected status.
const SCATTER_ADD_CASES: &str = "
910 F32:0 0 I64:0 F32:2 F32:0 OK
910 null 0 I64:0 F32:2 F32:0 NULLPTR
910 F32:0 0 null F32:2 F32:0 NULLPTR
910 F32:0 0 I64:0 null F32:0 NULLPTR
910 null 0 I64:0 F32:2 null NULLPTR
910 F64:3,3 0 I64:1,3 F32:3,4 F64:3,3 INVALID
910 F64:3,3 0 I64:1,4 F64:3,4 F64:3,3 INVALID
910 F64:3,4 0 I64:1,4 F64:3,2 F64:3,4 INVALID
";

/// Further cases of the vendor's rules (`op_api/aclnn_scatter.cpp`), one per check in its
/// order: an empty index skips the shape checks; BF16 only on A2/A3; ranks; out's shape;
/// index against src and against self off `dim`; `dim`'s range; 0-D self with dim -1.
const RULE_CASES: &str = "
A2 F32:2,3 0 I64:0,3 F32:2 F32:2,3 OK
910 BF16:2,3 0 I64:1,3 BF16:2,3 BF16:2,3 INVALID
A2 BF16:2,3 0 I64:1,3 BF16:2,3 BF16:2,3 OK
A2 F32:2,3 0 F32:1,3 F32:2,3 F32:2,3 INVALID
A2 F32:2,3 0 I64:1,3 F16:2,3 F32:2,3 INVALID
A2 F32:2,3 0 I64:3 F32:2,3 F32:2,3 INVALID
A2 F32:2,3 0 I64:1,3 F32:2,3 F32:3,2 INVALID
A2 F32:2,3 0 I64:1,3 F32:2,3 F32:- OK
A2 F32:2,3 0 I64:3,3 F32:2,3 F32:2,3 INVALID
A2 F32:2,3 0 I64:3,3 F32:3,3 F32:2,3 OK
A2 F32:2,3 1 I64:3,3 F32:3,3 F32:2,3 INVALID
A2 F32:2,3 2 I64:1,3 F32:2,3 F32:2,3 INVALID
A2 F32:2,3 -3 I64:1,3 F32:2,3 F32:2,3 INVALID
A2 F32:2,3 -2 I64:1,3 F32:2,3 F32:2,3 OK
A2 F32:- -1 I64:- F32:- F32:- OK
A2 F32:- 1 I64:- F32:- F32:- INVALID
A2 C64:2 0 I32:2 C64:2 C64:2 OK
A2 U16:2 0 I32:2 U16:2 U16:2 INVALID
";

fn replay(table: &str) -> usize {
    let rows = cases(table);
    for c in &rows {
        set_device(device_of(c[0]));
        let (x, i, s, o) = (
            case_tensor(c[1]),
            case_tensor(c[3]),
            case_tensor(c[4]),
            case_tensor(c[5]),
        );
        let rc = status(scatter_add(x, c[2].parse().unwrap(), i, s, o));
        let want = expected(c[6]).unwrap();
        assert_eq!(rc, want, "case `{}`: {}", c.join(" "), err_msg());
        release(&[x, i, s, o]);
    }
    rows.len()
}

#[test]
fn the_vendors_scatter_add_phase1_unit_test_cases_replay() {
    let _serial = serial();
    on(A2);
    assert_eq!(replay(SCATTER_ADD_CASES), 8);
}

#[test]
fn scatter_add_checks_follow_the_vendors_rules_in_order() {
    let _serial = serial();
    on(A2);
    assert_eq!(replay(RULE_CASES), 18);
}

#[test]
fn scatter_add_accumulates_repeated_indices_into_a_copy_of_self() {
    let _serial = serial();
    on(A2);
    let (x, px) = filled(&[2, 3], ACL_INT64, &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    // dim 1: out[r][i[r][c]] += src[r][c]; row 0 hits column 2 twice.
    let (i, pi) = filled(&[2, 2], ACL_INT32, &[2.0, 2.0, 0.0, 1.0]);
    let (s, ps) = filled(&[2, 3], ACL_INT64, &[10.0, 20.0, 99.0, 30.0, 40.0, 99.0]);
    let (o, po) = filled(&[2, 3], ACL_INT64, &[0.0; 6]);
    run(scatter_add(x, 1, i, s, o), phase2("ScatterAdd"));
    assert_eq!(d2h::<i64>(po, 6), [1, 2, 33, 34, 45, 6]);
    // dim 0, in place (out is self).
    let (j, pj) = filled(&[1, 3], ACL_INT64, &[1.0, 0.0, 1.0]);
    run(scatter_add(x, 0, j, s, x), phase2("ScatterAdd"));
    assert_eq!(d2h::<i64>(px, 6), [1, 22, 3, 14, 5, 105]);
    // An empty index: out is a copy of self.
    let (e, pe) = filled(&[0, 3], ACL_INT64, &[]);
    run(scatter_add(x, 0, e, s, o), phase2("ScatterAdd"));
    assert_eq!(d2h::<i64>(po, 6), [1, 22, 3, 14, 5, 105]);
    release(&[x, i, s, o, j, e]);
    for p in [px, pi, ps, po, pj, pe] {
        free(p);
    }
}

#[test]
fn a_scatter_add_index_out_of_range_fails_the_launch_naming_it() {
    let _serial = serial();
    on(A2);
    let (x, px) = filled(&[2, 3], ACL_FLOAT, &[0.0; 6]);
    let (i, pi) = filled(&[2, 2], ACL_INT64, &[0.0, 1.0, 3.0, 0.0]);
    let (s, ps) = filled(&[2, 2], ACL_FLOAT, &[1.0; 4]);
    let (o, po) = filled(&[2, 3], ACL_FLOAT, &[0.0; 6]);
    let g = scatter_add(x, 1, i, s, o);
    assert_eq!(g.0, ACLNN_SUCCESS, "{}", err_msg());
    // SAFETY: the executor of a successful phase 1; no workspace.
    let rc = unsafe { phase2("ScatterAdd")(null_mut(), g.1, g.2, null_mut()) };
    assert_eq!(rc, ACLNN_SUCCESS);
    assert_ne!(sync(null_mut()), ACL_SUCCESS);
    assert_err_msg_contains(&["index value 3", "[1, 0]", "[0, 3)"]);
    release(&[x, i, s, o]);
    for p in [px, pi, ps, po] {
        free(p);
    }
}
