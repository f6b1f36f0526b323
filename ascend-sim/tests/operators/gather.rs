//! aclnnGather and aclnnIndexSelect: the vendor's phase-1 unit-test cases replayed
//! through the C ABI, the kernels' copies, and an index out of range failing the launch
//! with its position.

use crate::casekit;
use crate::common;
use crate::opkit;

use ascend_sys::*;
use casekit::*;
use common::*;
use opkit::*;
use std::ffi::c_void;
use std::ptr::null_mut;

type Phase1Fn = unsafe extern "C" fn(
    *const aclTensor,
    i64,
    *const aclTensor,
    *mut aclTensor,
    *mut u64,
    *mut *mut aclOpExecutor,
) -> i32;

fn call(op: &str, x: *mut aclTensor, dim: i64, index: *mut aclTensor, out: *mut aclTensor) -> Got {
    let name = format!("aclnn{op}GetWorkspaceSize");
    // SAFETY: Gather's and IndexSelect's phase 1 have this prototype.
    let f = unsafe { std::mem::transmute::<*const c_void, Phase1Fn>(entry(&name)) };
    // SAFETY: simulator handles or NULL; out-pointers from `p1`.
    p1(|ws, ex| unsafe { f(x, dim, index, out, ws, ex) })
}

fn phase2(op: &str) -> Phase2 {
    // SAFETY: every phase 2 has the common prototype.
    unsafe { std::mem::transmute::<*const c_void, Phase2>(entry(&format!("aclnn{op}"))) }
}

/// The vendor's phase-1 cases (ops-nn `index/gather_elements_v2/tests/ut/op_host/
/// test_aclnn_gather.cpp`, `index/gather_v2/tests/ut/op_api/test_aclnn_index_select.cpp`),
/// one per line: SoC (`910` the UT's default platform, `A2` its `ascend910B2_` cases),
/// operator, self, dim, index, out, expected status. Not replayed: Gather's two
/// `ascend910B2_expand`/`last_dim` cases (they call no phase 1) and the 950 cases (no
/// 950 is simulated).
const VENDOR_CASES: &str = "
910 Gather F32:4,4 1 I64:4,5 F32:4,5 OK
910 Gather F32:1,4,8,4,4,9,4 0 I64:1,1,1,1,1,1,1 F32:1,1,1,1,1,1,1 OK
910 Gather F16:4,4:NCHW -1 I64:4,5:NCHW F16:4,5:NCHW OK
910 Gather I32:4,4:NCHW 0 I64:4,4 I32:4,4 OK
910 Gather I16:4,4 1 I64:4,4 I16:4,4 OK
910 Gather U16:4,4 1 I64:4,4 U16:4,4 OK
910 Gather U32:4,4 1 I64:4,4 U32:4,4 OK
910 Gather U64:4,4 1 I64:4,4 U64:4,4 OK
910 Gather I64:4,4 1 I64:4,4 I64:4,4 OK
910 Gather null 1 I64:4,4 U16:4,4 NULLPTR
910 Gather U16:4,4 1 null U16:4,4 NULLPTR
910 Gather U16:4,4 1 I64:4,4 null NULLPTR
910 Gather C64:4,4 1 I64:4,4 C64:4,4 INVALID
910 Gather F32:1,1,1,1,1,1,1,1,1 1 I64:1,1,1,1,1,1,1,1,1 F32:1,1,1,1,1,1,1,1,1 INVALID
910 Gather F32:1,1,1,1,1 1 I64:1,1,1,1 F32:1,1,1,1 INVALID
910 Gather F32:4,4 5 I64:4,4 F32:4,4 INVALID
910 Gather F32:4,4 1 I64:4,4 F32:4,1 INVALID
910 Gather F32:4,4 1 I64:4,4 F16:4,4 INVALID
910 Gather F32:4,4:NC1HWC0 1 I64:4,4:NC1HWC0 F32:4,4:NC1HWC0 OK
910 Gather F32:4,4 1 I64:4,0 F32:4,0 OK
910 Gather F32:4,4:UNDEFINED 1 I64:4,4:UNDEFINED F32:4,4:UNDEFINED OK
910 Gather UNDEF:4,4 1 UNDEF:4,4 UNDEF:4,4 INVALID
910 Gather F32:2,4:ND:1,2:0:4,2 0 I64:2,4:ND:1,2:0:4,2 F32:2,4:ND:1,2:0:4,2 OK
910 IndexSelect F32:2,3,4,1 2 I64:2 F32:2,3,2,1 OK
910 IndexSelect I64:1,2,2,2:NCDHW 2 I32:1 I64:1,2,1,2 OK
910 IndexSelect F16:1,2,2,2 2 I32:1 F16:1,2,1,2 OK
910 IndexSelect I16:1,2,2,2 2 I32:1 I16:1,2,1,2 OK
910 IndexSelect I8:1,2,2,2 2 I32:1 I8:1,2,1,2 OK
910 IndexSelect U8:1,2,2,2 2 I64:1 U8:1,2,1,2 OK
910 IndexSelect BOOL:1,2,2,2:NCHW 2 I32:1 BOOL:1,2,1,2:NHWC OK
910 IndexSelect U64:1,2,2,2 2 I32:1 U64:1,2,1,2 OK
910 IndexSelect U32:1,2,2,2 2 I32:1 U32:1,2,1,2 OK
910 IndexSelect U16:1,2,2,2 2 I32:1 U16:1,2,1,2 OK
910 IndexSelect I16:3,3 0 I32:3 I16:3,3 OK
910 IndexSelect I16:3,3 1 I32:3 I16:3,3 OK
910 IndexSelect F64:3,3 0 I64:3 F64:3,3:NCHW OK
910 IndexSelect C64:3,3 0 I64:3 C64:3,3:NCHW OK
910 IndexSelect C128:3,3 0 I64:1 C128:1,3:NCHW OK
910 IndexSelect F64:3,3 4 I32:3 F64:3,3:NCHW INVALID
910 IndexSelect null -2 null I16:- NULLPTR
910 IndexSelect UNDEF:2,2,2 0 I32:1 UNDEF:2,1,2 INVALID
910 IndexSelect F32:2,2,2 1 I32:1 UNDEF:2,1,2 INVALID
910 IndexSelect F32:2,2,2:NC1HWC0 1 I32:1 F32:2,1,2 INVALID
910 IndexSelect F32:2,2,2 1 I32:1,2 F32:2,1,2 INVALID
910 IndexSelect F32:1,2,3,4,5,6,7,8,9 1 I32:1 F32:1,1,3,4,5,6,7,8,9 INVALID
910 IndexSelect F32:2,4,6,8 0 I32:1 F32:1,4,6,8 OK
910 IndexSelect F32:2,4:ND:1,2:0:4,2 1 I32:3 F32:2,3 OK
910 IndexSelect F32:2,4 1 I32:- F32:2,1 OK
910 IndexSelect BF16:4 0 I32:2 F32:2 INVALID
910 IndexSelect F32:4,3 -1 I32:2 F32:4,2 OK
A2 IndexSelect F32:2,3,4,1 2 I64:2 F32:2,3,2,1 OK
";

#[test]
fn the_vendors_phase1_unit_test_cases_replay() {
    let _serial = serial();
    on(A2);
    let table = cases(VENDOR_CASES);
    for c in &table {
        set_device(device_of(c[0]));
        let (x, i, o) = (case_tensor(c[2]), case_tensor(c[4]), case_tensor(c[5]));
        let rc = status(call(c[1], x, c[3].parse().unwrap(), i, o));
        let want = expected(c[6]).unwrap();
        assert_eq!(rc, want, "vendor case `{}`: {}", c.join(" "), err_msg());
        release(&[x, i, o]);
    }
    assert_eq!(table.len(), 51);
}

#[test]
fn gather_and_index_select_copy_the_picked_elements() {
    let _serial = serial();
    on(A2);
    let (x, px) = filled(&[2, 3], ACL_INT64, &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let (i, pi) = filled(&[2, 2], ACL_INT32, &[2.0, 0.0, 1.0, 1.0]);
    let (o, po) = filled(&[2, 2], ACL_INT64, &[0.0; 4]);
    run(call("Gather", x, 1, i, o), phase2("Gather"));
    assert_eq!(d2h::<i64>(po, 4), [3, 1, 5, 5]);
    // dim 0: out[r][c] = x[i[r][c]][c].
    release(&[i]);
    let (i, pj) = filled(&[2, 2], ACL_INT32, &[1.0, 0.0, 0.0, 1.0]);
    run(call("Gather", x, 0, i, o), phase2("Gather"));
    assert_eq!(d2h::<i64>(po, 4), [4, 2, 1, 5]);
    let (s, ps) = filled(&[3], ACL_INT64, &[2.0, 2.0, 0.0]);
    let (o2, po2) = filled(&[2, 3], ACL_INT64, &[0.0; 6]);
    run(call("IndexSelect", x, 1, s, o2), phase2("IndexSelect"));
    assert_eq!(d2h::<i64>(po2, 6), [3, 3, 1, 6, 6, 4]);
    release(&[x, i, o, s, o2]);
    for p in [px, pi, pj, po, ps, po2] {
        free(p);
    }
}

#[test]
fn an_index_out_of_range_fails_the_launch_naming_it() {
    let _serial = serial();
    on(A2);
    let (x, px) = filled(&[2, 3], ACL_FLOAT, &[0.0; 6]);
    let (i, pi) = filled(&[2, 2], ACL_INT64, &[0.0, 1.0, 3.0, 0.0]);
    let (o, po) = filled(&[2, 2], ACL_FLOAT, &[0.0; 4]);
    for (op, dim, fragments) in [
        ("Gather", 1, ["index value 3", "[1, 0]", "[0, 3)"]),
        ("IndexSelect", 0, ["index value -1", "[1]", "[0, 2)"]),
    ] {
        let (idx, out) = if op == "Gather" {
            (i, o)
        } else {
            (filled(&[2], ACL_INT64, &[0.0, -1.0]).0, o)
        };
        let out = if op == "Gather" {
            out
        } else {
            filled(&[2, 3], ACL_FLOAT, &[0.0; 6]).0
        };
        let g = call(op, x, dim, idx, out);
        assert_eq!(g.0, ACLNN_SUCCESS, "{}", err_msg());
        // SAFETY: the executor of a successful phase 1; no workspace.
        let rc = unsafe { phase2(op)(null_mut(), g.1, g.2, null_mut()) };
        assert_eq!(rc, ACLNN_SUCCESS);
        assert_ne!(sync(null_mut()), ACL_SUCCESS);
        assert_err_msg_contains(&fragments);
    }
    release(&[x, i, o]);
    for p in [px, pi, po] {
        free(p);
    }
}
