//! aclnnReduceSum: the vendor's checks in order, dims normalising and repeats, empty
//! `dims` reducing everything, keepDims, the empty self filled with 0, one-element shapes,
//! the BOOL-to-INT64 compute, and results through strided views.

use crate::common;
use crate::opkit;
use ascend_sim::api;
use ascend_sys::*;
use common::*;
use half::bf16;
use opkit::*;
use std::ptr::null_mut;

fn rsum(
    x: *mut aclTensor,
    dims: &[i64],
    keep: bool,
    dtype: aclDataType,
    out: *mut aclTensor,
) -> Got {
    let d = int_array(dims);
    // SAFETY: simulator handles or NULL; out-pointers from `p1`.
    let g =
        p1(|ws, ex| unsafe { api::aclnnReduceSumGetWorkspaceSize(x, d, keep, dtype, out, ws, ex) });
    // The dims are consumed at phase 1.
    destroy_int_array(d);
    g
}

#[test]
fn checks_in_order() {
    let _gate = crate::common::shared();
    on(A2);
    let f = |d: &[i64]| meta(d, ACL_FLOAT);
    let d = int_array(&[0]);
    let mut ex = null_mut();
    // SAFETY: deliberate NULLs.
    unsafe {
        let rc = api::aclnnReduceSumGetWorkspaceSize(
            null_mut(),
            d,
            false,
            ACL_FLOAT,
            null_mut(),
            null_mut(),
            &mut ex,
        );
        assert_fails_with(rc, ACLNN_ERR_PARAM_NULLPTR, &["workspaceSize is nullptr"]);
        let mut ws = 0;
        let rc = api::aclnnReduceSumGetWorkspaceSize(
            f(&[2]),
            null_mut(),
            false,
            ACL_FLOAT,
            f(&[]),
            &mut ws,
            &mut ex,
        );
        assert_fails_with(rc, ACLNN_ERR_PARAM_NULLPTR, &["dims is nullptr"]);
    }
    refused(
        rsum(NULL_T, &[0], false, ACL_FLOAT, f(&[])),
        ACLNN_ERR_PARAM_NULLPTR,
        &["self is nullptr"],
    );
    refused(
        rsum(f(&[2]), &[0], false, ACL_FLOAT, NULL_T),
        ACLNN_ERR_PARAM_NULLPTR,
        &["out is nullptr"],
    );
    refused(
        rsum(meta(&[2], ACL_UINT16), &[0], false, ACL_FLOAT, f(&[])),
        ACLNN_ERR_PARAM_INVALID,
        &["self dtype UINT16"],
    );
    refused(
        rsum(f(&[2]), &[0], false, ACL_FLOAT, meta(&[], ACL_UINT32)),
        ACLNN_ERR_PARAM_INVALID,
        &["out dtype UINT32"],
    );
    refused(
        rsum(f(&[2]), &[0], false, ACL_UINT64, f(&[])),
        ACLNN_ERR_PARAM_INVALID,
        &["dtype UINT64"],
    );
    refused(
        rsum(f(&[2]), &[0], false, ACL_DOUBLE, f(&[])),
        ACLNN_ERR_PARAM_INVALID,
        &["out dtype FLOAT is not dtype DOUBLE"],
    );
    refused(
        rsum(f(&[1; 9]), &[0], false, ACL_FLOAT, f(&[1; 8])),
        ACLNN_ERR_PARAM_INVALID,
        &["9 dims"],
    );
    refused(
        rsum(f(&[2, 3]), &[2], false, ACL_FLOAT, f(&[2])),
        ACLNN_ERR_PARAM_INVALID,
        &["dim 2 is out of range [-2, 1]"],
    );
    refused(
        rsum(f(&[2, 3]), &[1, -1], false, ACL_FLOAT, f(&[2])),
        ACLNN_ERR_PARAM_INVALID,
        &["more than once"],
    );
    // A 0-D self has r = 1: dims 0 and -1 both name its one dim.
    assert_eq!(
        status(rsum(f(&[]), &[-1], false, ACL_FLOAT, f(&[]))),
        ACLNN_SUCCESS
    );
    refused(
        rsum(f(&[]), &[1], false, ACL_FLOAT, f(&[])),
        ACLNN_ERR_PARAM_INVALID,
        &["out of range [-1, 0]"],
    );
    // Shapes, keepDims, one-element shapes all equal.
    refused(
        rsum(f(&[2, 3]), &[1], false, ACL_FLOAT, f(&[3])),
        ACLNN_ERR_PARAM_INVALID,
        &["out shape [3]", "[2]"],
    );
    assert_eq!(
        status(rsum(f(&[2, 3]), &[1], true, ACL_FLOAT, f(&[2, 1]))),
        ACLNN_SUCCESS
    );
    assert_eq!(
        status(rsum(f(&[2, 3]), &[], true, ACL_FLOAT, f(&[]))),
        ACLNN_SUCCESS
    );
    // An empty self: out's shape is not checked; a complex out cannot be filled.
    let g = rsum(f(&[0, 3]), &[0], false, ACL_FLOAT, f(&[7]));
    assert_eq!((g.0, g.1), (ACLNN_SUCCESS, 0));
    status(g);
    let c = meta(&[0], ACL_COMPLEX64);
    refused(
        rsum(c, &[0], false, ACL_COMPLEX64, meta(&[], ACL_COMPLEX64)),
        ACLNN_ERR_PARAM_INVALID,
        &["cannot be filled"],
    );
    // BF16 only on A2/A3.
    set_device(P310);
    let b = meta(&[2], ACL_BF16);
    refused(
        rsum(b, &[0], false, ACL_BF16, meta(&[], ACL_BF16)),
        ACLNN_ERR_PARAM_INVALID,
        &["self dtype BF16"],
    );
    destroy_int_array(d);
}

#[test]
fn sums() {
    let _gate = crate::common::shared();
    on(A2);
    let v: Vec<f32> = (1..=24).map(|x| x as f32).collect();
    let (x, _) = f32_tensor(&[2, 3, 4], &v);
    let sum_of = |dims: &[i64], keep: bool, out: &[i64]| {
        let n = out.iter().product::<i64>() as usize;
        let (o, po) = f32_tensor(out, &vec![0.0; n]);
        run(rsum(x, dims, keep, ACL_FLOAT, o), api::aclnnReduceSum);
        d2h::<f32>(po, n)
    };
    assert_eq!(sum_of(&[], false, &[]), [300.0]);
    assert_eq!(
        sum_of(&[0], false, &[3, 4]),
        (0..12).map(|i| (2 * i + 14) as f32).collect::<Vec<_>>()
    );
    assert_eq!(sum_of(&[-1, 0], true, &[1, 3, 1]), [68., 100., 132.]);
    assert_eq!(
        sum_of(&[1], false, &[2, 4]),
        [15., 18., 21., 24., 51., 54., 57., 60.]
    );
    // A transposed self: the columns of [[1, 2], [3, 4]] stored column-major.
    let pt = upload(&[1f32, 3., 2., 4.]);
    let xt = tensor_view(&[2, 2], &[1, 2], 0, &[4], ACL_FLOAT, pt);
    let (o, po) = f32_tensor(&[2], &[0.0; 2]);
    run(rsum(xt, &[0], false, ACL_FLOAT, o), api::aclnnReduceSum);
    assert_eq!(d2h::<f32>(po, 2), [4., 6.]);
    // An empty self fills out with 0.
    let (o, po) = f32_tensor(&[3], &[9.0; 3]);
    run(
        rsum(meta(&[0, 3], ACL_FLOAT), &[0], false, ACL_FLOAT, o),
        api::aclnnReduceSum,
    );
    assert_eq!(d2h::<f32>(po, 3), [0.0; 3]);
    // BOOL self into INT64 counts; f32 self into INT32 truncates each element first.
    let pb = upload(&[1u8, 0, 1, 1]);
    let pi = upload(&[0i64]);
    run(
        rsum(
            tensor(&[4], ACL_BOOL, pb),
            &[0],
            false,
            ACL_INT64,
            tensor(&[], ACL_INT64, pi),
        ),
        api::aclnnReduceSum,
    );
    assert_eq!(d2h::<i64>(pi, 1), [3]);
    let (xf, _) = f32_tensor(&[3], &[1.9, 2.9, -0.5]);
    let pj = upload(&[0i32]);
    run(
        rsum(xf, &[0], false, ACL_INT32, tensor(&[], ACL_INT32, pj)),
        api::aclnnReduceSum,
    );
    assert_eq!(d2h::<i32>(pj, 1), [3]);
    // bf16: summed in f32, rounded once.
    let r = |v: f32| bf16::from_f32(v);
    let vals = [1.0f32, 0.0078125, 0.0078125, 0.0078125];
    let ph = upload(&vals.map(|v| r(v).to_bits()));
    let pz = upload(&[0u16]);
    run(
        rsum(
            tensor(&[4], ACL_BF16, ph),
            &[],
            false,
            ACL_BF16,
            tensor(&[], ACL_BF16, pz),
        ),
        api::aclnnReduceSum,
    );
    assert_eq!(d2h::<u16>(pz, 1), [r(1.0234375).to_bits()]);
}
