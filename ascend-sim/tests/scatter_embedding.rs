//! aclnnScatterAdd, aclnnEmbedding and aclnnEmbeddingDenseBackward: the vendor's phase-1
//! unit-test cases replayed through the C ABI, the kernels against their definitions, and
//! an index out of range failing the launch with its position.

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

type EmbeddingPhase1 = unsafe extern "C" fn(
    *const aclTensor,
    *const aclTensor,
    *const aclTensor,
    *mut u64,
    *mut *mut aclOpExecutor,
) -> i32;

type EmbeddingDenseBackwardPhase1 = unsafe extern "C" fn(
    *const aclTensor,
    *const aclTensor,
    u64,
    u64,
    bool,
    *const aclTensor,
    *mut u64,
    *mut *mut aclOpExecutor,
) -> i32;

fn embedding(weight: *mut aclTensor, indices: *mut aclTensor, out: *mut aclTensor) -> Got {
    // SAFETY: Embedding's phase 1 has this prototype.
    let f = unsafe {
        std::mem::transmute::<*const c_void, EmbeddingPhase1>(entry(
            "aclnnEmbeddingGetWorkspaceSize",
        ))
    };
    // SAFETY: simulator handles or NULL; out-pointers from `p1`.
    p1(|ws, ex| unsafe { f(weight, indices, out, ws, ex) })
}

/// EmbeddingDenseBackward's phase 1; `padding_idx` −1 is the vendor's "none" (as u64).
fn dense_backward(
    grad: *mut aclTensor,
    indices: *mut aclTensor,
    (num_weights, padding_idx, scale): (u64, i64, bool),
    out: *mut aclTensor,
) -> Got {
    // SAFETY: EmbeddingDenseBackward's phase 1 has this prototype.
    let f = unsafe {
        std::mem::transmute::<*const c_void, EmbeddingDenseBackwardPhase1>(entry(
            "aclnnEmbeddingDenseBackwardGetWorkspaceSize",
        ))
    };
    let pad = padding_idx as u64;
    // SAFETY: simulator handles or NULL; out-pointers from `p1`.
    p1(|ws, ex| unsafe { f(grad, indices, num_weights, pad, scale, out, ws, ex) })
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

/// The vendor's Embedding phase-1 cases (ops-nn `index/embedding/tests/ut/op_api/
/// test_aclnn_embedding.cpp`, case_1 to case_33; it has no case_18), one per line: SoC,
/// weight, indices, out, expected status. case_7 (BF16, expected to pass) and the
/// `ascend910B2` case_33 run on A2, the products whose list has BF16.
const EMBEDDING_CASES: &str = "
910 F32:10,3 I32:4 F32:4,3 OK
910 F32:10,3 null F32:4,3 NULLPTR
910 null I32:4 F32:4,3 NULLPTR
910 F32:10,3 I32:4 null NULLPTR
910 F16:10,3 I64:4 F16:4,3 OK
910 F64:10,3 I32:4 F64:4,3 OK
A2 BF16:10,3 I32:4 BF16:4,3 OK
910 I8:10,3 I32:4 I8:4,3 OK
910 U8:10,3 I32:4 U8:4,3 OK
910 U8:10,3 I32:4 U8:4,3 OK
910 I64:10,3 I32:4 I64:4,3 OK
910 BOOL:10,3 I32:4 BOOL:4,3 OK
910 C64:10,3 I32:4 C64:4,3 OK
910 C128:10,3 I32:4 C128:4,3 OK
910 F32:10,3 F16:4 F32:4,3 INVALID
910 F32:10,3 F32:4 F32:4,3 INVALID
910 F32:10,3 F64:4 F32:4,3 INVALID
910 F32:10,3 U8:4 F32:4,3 INVALID
910 F32:10,3 I8:4 F32:4,3 INVALID
910 F32:10,3 I16:4 F32:4,3 INVALID
910 F32:10,3 BOOL:4 F32:4,3 INVALID
910 F32:10,3 C64:4 F32:4,3 INVALID
910 F32:10,3 C128:4 F32:4,3 INVALID
910 F32:10,0 I32:4 F32:4,0 OK
910 F32:10,3 I32:4,4,4,4,4,4,4,4,4 F32:4,3 INVALID
910 F32:2,4:ND:1,2:0:4,2 I32:3 F32:3,4 OK
910 F32:10,3 I32:2,2,2,2:NCHW F32:2,2,2,2,3 OK
910 F32:10,3 I32:2,2,2,2:NHWC F32:2,2,2,2,3 OK
910 F32:10,3 I32:2,2,2,2:HWCN F32:2,2,2,2,3 OK
910 F32:10,3 I32:2,2,2,2,2:NDHWC F32:2,2,2,2,2,3 OK
910 F32:10,3 I32:2,2,2,2,2:NCDHW F32:2,2,2,2,2,3 OK
A2 F32:2268,32 I32:8192,80 F32:8192,80,32 OK
";

/// Further cases of Embedding's rules (`op_api/aclnn_embedding.cpp`), in its order: BF16
/// off A2/A3; out's dtype; out's rank and leading dims; an empty indices.
const EMBEDDING_RULE_CASES: &str = "
910 BF16:10,3 I32:4 BF16:4,3 INVALID
A2 F32:10,3 I32:4 F16:4,3 INVALID
A2 F32:10,3 I32:4 F32:4,3,1 INVALID
A2 F32:10,3 I32:2,2 F32:2,3,3 INVALID
A2 F32:10,3 I64:0 F32:0,3 OK
A2 F32:10,3 I64:- F32:3 OK
";

/// The vendor's EmbeddingDenseBackward phase-1 cases (ops-nn `index/embedding_dense_grad_v2/
/// tests/ut/op_host/test_aclnn_embedding_dense_backward.cpp`: case_1 to case_27, case_31
/// to case_44 and `ascend950PR_9589_case`), one per line: SoC, grad, indices,
/// numWeights, paddingIdx, scaleGradByFreq, out, expected status. case_6 expects success
/// on 910B only: it runs on both products. The `ascend910B2` cases run on A2; the 950 is
/// not simulated, so its case's call runs on A2.
const DENSE_BACKWARD_CASES: &str = "
910 F32:4,3 I32:4 10 0 false F32:10,3 OK
910 null I32:4 10 0 false F32:10,3 NULLPTR
910 F32:4,3 null 10 0 false F32:10,3 NULLPTR
910 F32:4,3 I32:4 10 0 false null NULLPTR
910 F16:4,3 I32:4 10 0 false F32:10,3 OK
910 BF16:4,3 I32:4 10 0 false F32:10,3 INVALID
A2 BF16:4,3 I32:4 10 0 false F32:10,3 OK
910 F64:4,3 I32:4 10 0 false F32:10,3 INVALID
910 I32:4,3 I32:4 10 0 false F32:10,3 INVALID
910 I64:4,3 I32:4 10 0 false F32:10,3 INVALID
910 I16:4,3 I32:4 10 0 false F32:10,3 INVALID
910 I8:4,3 I32:4 10 0 false F32:10,3 INVALID
910 U8:4,3 I32:4 10 0 false F32:10,3 INVALID
910 BOOL:4,3 I32:4 10 0 false F32:10,3 INVALID
910 C64:4,3 I32:4 10 0 false F32:10,3 INVALID
910 C128:4,3 I32:4 10 0 false F32:10,3 INVALID
910 F32:4,3 F32:4 10 0 false F32:10,3 OK
910 F32:4,3 F16:4 10 0 false F32:10,3 OK
910 F32:4,3 BF16:4 10 0 false F32:10,3 INVALID
910 F32:4,3 F64:4 10 0 false F32:10,3 OK
910 F32:4,3 I64:4 10 0 false F32:10,3 OK
910 F32:4,3 I16:4 10 0 false F32:10,3 OK
910 F32:4,3 I8:4 10 0 false F32:10,3 OK
910 F32:4,3 U8:4 10 0 false F32:10,3 OK
910 F32:4,3 BOOL:4 10 0 false F32:10,3 OK
910 F32:4,3 C64:4 10 0 false F32:10,3 INVALID
910 F32:4,3 C128:4 10 0 false F32:10,3 INVALID
910 F32:4,3 I32:4 10 0 false F64:10,3 INVALID
910 F32:4,3 I32:4,3 10 0 false F32:10,3:UNDEFINED INVALID
910 F32:4,3 I32:2 10 0 false F32:10,3:UNDEFINED INVALID
910 F32:4,3,3,3,3:NCDHW I32:4,3,3,3:NCHW 10 0 false F32:10,3 OK
910 F32:4,3,3,3,3:NDHWC I32:4,3,3,3:NHWC 10 0 false F32:10,3 OK
910 F32:4,3,3,3,3:NDHWC I32:4,3,3,3:HWCN 10 0 false F32:10,3 OK
910 F32:4,3,3,3,0:NDHWC I32:4,3,3,3:HWCN 10 0 false F32:10,3 INVALID
910 F32:3,3,3,3,3,3,3,3,3 I32:3,3,3,3,3,3,3,3 10 0 false F32:10,3 INVALID
910 F32:4,3:ND:1,4:0:3,4 I32:4 10 0 false F32:10,3 OK
A2 F32:4,3,3,3,3:NDHWC I32:4,3,3,3:HWCN 10 0 false F32:10,3 OK
A2 F32:1,3:NDHWC I32:1:HWCN 10 -1 false F32:10,3 OK
910 F32:4,3:NC1HWC0 I32:4 10 0 false F32:10,3 INVALID
910 F32:4,3 I32:4:NC1HWC0 10 0 false F32:10,3 INVALID
910 F32:4,3 I32:4 10 0 false F32:10,3:NC1HWC0 INVALID
910 F32:0,4096:NDHWC I32:0:HWCN 155136 -1 false F32:155136,4096 OK
A2 F32:10,5 I32:10 20 -1 false F32:20,5 OK
";

/// Further cases of EmbeddingDenseBackward's rules, in its order: out's dtype need not be
/// grad's; a zero last dim skips the row count; out 2-D of `[numWeights, grad[-1]]`.
const DENSE_BACKWARD_RULE_CASES: &str = "
A2 F32:4,3 I64:2,2 10 0 true F16:10,3 OK
A2 F32:4,0 I64:3 10 0 false F32:10,0 OK
A2 F32:4,3 I64:4 10 0 false F32:10,3,1 INVALID
A2 F32:4,3 I64:4 9 0 false F32:10,3 INVALID
A2 F32:4,3 I64:4 10 0 false F32:10,2 INVALID
";

fn replay_embedding(table: &str) -> usize {
    let rows = cases(table);
    for c in &rows {
        set_device(device_of(c[0]));
        let (w, i, o) = (case_tensor(c[1]), case_tensor(c[2]), case_tensor(c[3]));
        let rc = status(embedding(w, i, o));
        let want = expected(c[4]).unwrap();
        assert_eq!(rc, want, "case `{}`: {}", c.join(" "), err_msg());
        release(&[w, i, o]);
    }
    rows.len()
}

fn replay_dense_backward(table: &str) -> usize {
    let rows = cases(table);
    for c in &rows {
        set_device(device_of(c[0]));
        let (g, i, o) = (case_tensor(c[1]), case_tensor(c[2]), case_tensor(c[6]));
        let attrs = (
            c[3].parse().unwrap(),
            c[4].parse().unwrap(),
            c[5].parse().unwrap(),
        );
        let rc = status(dense_backward(g, i, attrs, o));
        let want = expected(c[7]).unwrap();
        assert_eq!(rc, want, "case `{}`: {}", c.join(" "), err_msg());
        release(&[g, i, o]);
    }
    rows.len()
}

#[test]
fn the_vendors_embedding_phase1_unit_test_cases_replay() {
    let _serial = serial();
    on(A2);
    assert_eq!(replay_embedding(EMBEDDING_CASES), 32);
    assert_eq!(replay_embedding(EMBEDDING_RULE_CASES), 6);
}

#[test]
fn the_vendors_embedding_dense_backward_phase1_unit_test_cases_replay() {
    let _serial = serial();
    on(A2);
    assert_eq!(replay_dense_backward(DENSE_BACKWARD_CASES), 43);
    assert_eq!(replay_dense_backward(DENSE_BACKWARD_RULE_CASES), 5);
}

#[test]
fn an_embedding_out_of_another_row_width_fails_as_the_vendors_view_copy_does() {
    let _serial = serial();
    on(A2);
    let (w, i, o) = (
        case_tensor("F32:10,3"),
        case_tensor("I32:4"),
        case_tensor("F32:4,2"),
    );
    assert_eq!(status(embedding(w, i, o)), ACLNN_ERR_INNER_NULLPTR);
    assert_err_msg_contains(&["ViewCopy", "[4, 3]"]);
    release(&[w, i, o]);
}

#[test]
fn embedding_copies_the_indexed_rows() {
    let _serial = serial();
    on(A2);
    let wv: Vec<f64> = (0..12).map(f64::from).collect();
    let (w, pw) = filled(&[4, 3], ACL_INT64, &wv);
    for dt in [ACL_INT32, ACL_INT64] {
        let (i, pi) = filled(&[2, 2], dt, &[3.0, 0.0, 3.0, 1.0]);
        let (o, po) = filled(&[2, 2, 3], ACL_INT64, &[0.0; 12]);
        run(embedding(w, i, o), phase2("Embedding"));
        assert_eq!(d2h::<i64>(po, 12), [9, 10, 11, 0, 1, 2, 9, 10, 11, 3, 4, 5]);
        release(&[i, o]);
        free(pi);
        free(po);
    }
    release(&[w]);
    free(pw);
}

#[test]
fn embedding_dense_backward_sums_rows_skips_padding_and_scales_by_frequency() {
    let _serial = serial();
    on(A2);
    // Four rows of two: indices 1, 3, 1, 0.
    let (g, pg) = filled(
        &[2, 2, 2],
        ACL_FLOAT,
        &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0],
    );
    let (i, pi) = filled(&[2, 2], ACL_INT64, &[1.0, 3.0, 1.0, 0.0]);
    let (o, po) = filled(&[5, 2], ACL_FLOAT, &[9.0; 10]);
    run(
        dense_backward(g, i, (5, -1, false), o),
        phase2("EmbeddingDenseBackward"),
    );
    let want = [7.0, 8.0, 6.0, 8.0, 0.0, 0.0, 3.0, 4.0, 0.0, 0.0];
    assert_eq!(d2h::<f32>(po, 10), want);
    // Padding row 1 gets nothing; scaled, row 1's two hits would be halved.
    run(
        dense_backward(g, i, (5, 1, true), o),
        phase2("EmbeddingDenseBackward"),
    );
    let want = [7.0, 8.0, 0.0, 0.0, 0.0, 0.0, 3.0, 4.0, 0.0, 0.0];
    assert_eq!(d2h::<f32>(po, 10), want);
    run(
        dense_backward(g, i, (5, 3, true), o),
        phase2("EmbeddingDenseBackward"),
    );
    let want = [7.0, 8.0, 3.0, 4.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0];
    assert_eq!(d2h::<f32>(po, 10), want);
    // Empty indices: out is zeroed.
    let (e, pe) = filled(&[0], ACL_INT32, &[]);
    let (eg, peg) = filled(&[0, 2], ACL_FLOAT, &[]);
    run(
        dense_backward(eg, e, (5, -1, false), o),
        phase2("EmbeddingDenseBackward"),
    );
    assert_eq!(d2h::<f32>(po, 10), [0.0; 10]);
    release(&[g, i, o, e, eg]);
    for p in [pg, pi, po, pe, peg] {
        free(p);
    }
}

#[test]
fn an_embedding_index_out_of_range_fails_the_launch_naming_it() {
    let _serial = serial();
    on(A2);
    let (w, pw) = filled(&[3, 2], ACL_FLOAT, &[0.0; 6]);
    let (i, pi) = filled(&[2, 2], ACL_INT32, &[0.0, 1.0, 2.0, 3.0]);
    let (o, po) = filled(&[2, 2, 2], ACL_FLOAT, &[0.0; 8]);
    let g = embedding(w, i, o);
    assert_eq!(g.0, ACLNN_SUCCESS, "{}", err_msg());
    // SAFETY: the executor of a successful phase 1; no workspace.
    let rc = unsafe { phase2("Embedding")(null_mut(), g.1, g.2, null_mut()) };
    assert_eq!(rc, ACLNN_SUCCESS);
    assert_ne!(sync(null_mut()), ACL_SUCCESS);
    assert_err_msg_contains(&["indices value 3", "[1, 1]", "[0, 3)"]);
    let (gr, pg) = filled(&[4, 2], ACL_FLOAT, &[1.0; 8]);
    let (o2, po2) = filled(&[3, 2], ACL_FLOAT, &[0.0; 6]);
    let g = dense_backward(gr, i, (3, -1, false), o2);
    assert_eq!(g.0, ACLNN_SUCCESS, "{}", err_msg());
    // SAFETY: as above.
    let rc = unsafe { phase2("EmbeddingDenseBackward")(null_mut(), g.1, g.2, null_mut()) };
    assert_eq!(rc, ACLNN_SUCCESS);
    assert_ne!(sync(null_mut()), ACL_SUCCESS);
    assert_err_msg_contains(&["indices value 3", "[1, 1]", "[0, 3)"]);
    release(&[w, i, o, gr, o2]);
    for p in [pw, pi, po, pg, po2] {
        free(p);
    }
}
