//! `aclnnCat` through the C ABI: the vendor's phase-1 unit-test cases replayed (tensor
//! lists built with `aclCreateTensorList`), its kernel over dtypes, views and empty
//! elements, and an executor over more tensors than fit inline, relaunched with a list
//! element rebound by its input index.

use crate::common;

use ascend_sim::{api, symbol};
use ascend_sys::*;
use common::*;
use std::ffi::c_void;
use std::ptr::null_mut;

type CatPhase1 = unsafe extern "C" fn(
    *const aclTensorList,
    i64,
    *mut aclTensor,
    *mut u64,
    *mut *mut aclOpExecutor,
) -> i32;
type Phase2 = unsafe extern "C" fn(*mut c_void, u64, *mut aclOpExecutor, aclrtStream) -> i32;

fn phase1_fn() -> CatPhase1 {
    let p = symbol("aclnnCatGetWorkspaceSize").expect("aclnnCat is simulated");
    // SAFETY: the simulator's aclnnCatGetWorkspaceSize has this prototype.
    unsafe { std::mem::transmute::<*const c_void, CatPhase1>(p) }
}

fn phase2_fn() -> Phase2 {
    let p = symbol("aclnnCat").expect("aclnnCat is simulated");
    // SAFETY: the simulator's aclnnCat has the common phase-2 prototype.
    unsafe { std::mem::transmute::<*const c_void, Phase2>(p) }
}

/// A tensor of `dims` (contiguous unless `strides` are given) in `format`, over `data`.
fn desc(
    dims: &[i64],
    dtype: aclDataType,
    format: aclFormat,
    strides: Option<&[i64]>,
    data: *mut c_void,
) -> *mut aclTensor {
    let contiguous = contiguous_strides(dims);
    let strides = strides.unwrap_or(&contiguous);
    // The storage every element reaches.
    let reach = 1 + dims
        .iter()
        .zip(strides)
        .map(|(&d, &s)| (d - 1).max(0) * s)
        .sum::<i64>();
    let storage = [if dims.contains(&0) { 0 } else { reach }];
    // SAFETY: live arrays of the stated lengths.
    let t = unsafe {
        api::aclCreateTensor(
            dims.as_ptr(),
            dims.len() as u64,
            dtype,
            strides.as_ptr(),
            0,
            format,
            storage.as_ptr(),
            1,
            data,
        )
    };
    assert!(!t.is_null(), "{}", err_msg());
    t
}

/// A list of the tensors (which it owns from now on).
fn list(tensors: &[*mut aclTensor]) -> *mut aclTensorList {
    let ptrs: Vec<*const aclTensor> = tensors.iter().map(|&t| t.cast_const()).collect();
    // SAFETY: a live array of `len` tensor handles.
    let l = unsafe { api::aclCreateTensorList(ptrs.as_ptr(), ptrs.len() as u64) };
    assert!(!l.is_null(), "{}", err_msg());
    l
}

fn destroy_list(l: *mut aclTensorList) {
    // SAFETY: a list from aclCreateTensorList, destroyed once (with its elements).
    assert_eq!(
        unsafe { api::aclDestroyTensorList(l) },
        ACLNN_SUCCESS,
        "{}",
        err_msg()
    );
}

/// Phase 1 with status only (a successful executor is destroyed).
fn status(tensors: *const aclTensorList, dim: i64, out: *mut aclTensor) -> i32 {
    let (mut ws, mut ex) = (0u64, null_mut());
    // SAFETY: simulator handles or NULL, valid out-pointers.
    let rc = unsafe { phase1_fn()(tensors, dim, out, &mut ws, &mut ex) };
    if rc == ACLNN_SUCCESS {
        // SAFETY: the executor of a successful phase 1.
        assert_eq!(unsafe { api::aclDestroyAclOpExecutor(ex) }, ACLNN_SUCCESS);
    }
    rc
}

/// One vendor case: the list's (dims, dtype, format), dim, out's (dims, dtype, format).
struct Case {
    name: &'static str,
    tensors: Vec<(Vec<i64>, aclDataType, aclFormat)>,
    dim: i64,
    out: Option<(Vec<i64>, aclDataType, aclFormat)>,
    want: i32,
}

fn case(
    name: &'static str,
    tensors: &[(&[i64], aclDataType)],
    dim: i64,
    out: &[i64],
    want: i32,
) -> Case {
    Case {
        name,
        tensors: tensors
            .iter()
            .map(|(d, t)| (d.to_vec(), *t, ACL_FORMAT_ND))
            .collect(),
        dim,
        out: Some((out.to_vec(), tensors[0].1, ACL_FORMAT_ND)),
        want,
    }
}

fn run_case(c: &Case) {
    let ts: Vec<*mut aclTensor> = c
        .tensors
        .iter()
        .map(|(d, t, f)| desc(d, *t, *f, None, null_mut()))
        .collect();
    let l = list(&ts);
    let out = c
        .out
        .as_ref()
        .map_or(null_mut(), |(d, t, f)| desc(d, *t, *f, None, null_mut()));
    let rc = status(l, c.dim, out);
    assert_eq!(rc, c.want, "vendor case {}: {}", c.name, err_msg());
    destroy_list(l);
    if !out.is_null() {
        destroy_tensor(out);
    }
}

const OK: i32 = ACLNN_SUCCESS;
const INVALID: i32 = ACLNN_ERR_PARAM_INVALID;

#[test]
fn vendor_phase1_cases_give_the_vendors_statuses() {
    on_device(0, || {
        let mut cases = Vec::new();
        // cat_dtype_all_support (Atlas A2): every listed dtype, COMPLEX128 refused.
        for (t, want) in [
            (ACL_FLOAT, OK),
            (ACL_FLOAT16, OK),
            (ACL_INT8, OK),
            (ACL_INT32, OK),
            (ACL_UINT8, OK),
            (ACL_INT16, OK),
            (ACL_INT64, OK),
            (ACL_DOUBLE, OK),
            (ACL_BOOL, OK),
            (ACL_COMPLEX64, OK),
            (ACL_COMPLEX128, INVALID),
        ] {
            cases.push(case(
                "dtype_all_support",
                &[(&[3, 5], t), (&[2, 5], t)],
                0,
                &[5, 5],
                want,
            ));
        }
        // cat_different_dtype_format.
        let mixed = [(&[3i64, 5][..], ACL_FLOAT), (&[2, 5][..], ACL_FLOAT16)];
        cases.push(case("different_dtype", &mixed, 0, &[5, 5], OK));
        let mut to_int = case("different_dtype_int_out", &mixed, 0, &[5, 5], INVALID);
        to_int.out = Some((vec![5, 5], ACL_INT32, ACL_FORMAT_ND));
        cases.push(to_int);
        let mut formats = case(
            "different_format",
            &[(&[3, 5], ACL_FLOAT), (&[2, 5], ACL_FLOAT)],
            0,
            &[5, 5],
            INVALID,
        );
        formats.tensors[1].2 = ACL_FORMAT_NCHW;
        cases.push(formats);
        cases.push(case(
            "different_rank",
            &[(&[3, 5], ACL_FLOAT), (&[5], ACL_FLOAT)],
            0,
            &[5, 5],
            INVALID,
        ));
        // cat_dtype_all_format: NC1HWC0 refused, the plain formats accepted.
        for (f, want) in [
            (ACL_FORMAT_NC1HWC0, INVALID),
            (ACL_FORMAT_NCHW, OK),
            (ACL_FORMAT_NHWC, OK),
            (ACL_FORMAT_ND, OK),
            (ACL_FORMAT_HWCN, OK),
            (ACL_FORMAT_NDHWC, OK),
            (ACL_FORMAT_NCDHW, OK),
        ] {
            let mut c = case(
                "all_format",
                &[(&[3, 5], ACL_FLOAT), (&[2, 5], ACL_FLOAT)],
                0,
                &[5, 5],
                want,
            );
            for t in &mut c.tensors {
                t.2 = f;
            }
            c.out = Some((vec![5, 5], ACL_FLOAT, f));
            cases.push(c);
        }
        // cat_nullptr: NULL out.
        let mut no_out = case(
            "nullptr_out",
            &[(&[3, 5], ACL_FLOAT), (&[2, 5], ACL_FLOAT)],
            0,
            &[5, 5],
            ACLNN_ERR_PARAM_NULLPTR,
        );
        no_out.out = None;
        cases.push(no_out);
        // cat_dim_all.
        for (dim, want) in [(1, OK), (-1, OK), (-2, INVALID), (2, INVALID)] {
            cases.push(case(
                "dim_all",
                &[(&[3, 2], ACL_FLOAT), (&[3, 3], ACL_FLOAT)],
                dim,
                &[3, 5],
                want,
            ));
        }
        // cat_many_tensors: 34 and 66 tensors.
        let many: Vec<(&[i64], aclDataType)> = vec![(&[2, 3], ACL_FLOAT); 34];
        cases.push(case("many_tensors_34", &many, 0, &[68, 3], OK));
        let many: Vec<(&[i64], aclDataType)> = vec![(&[2, 3], ACL_FLOAT); 66];
        cases.push(case("many_tensors_66", &many, 1, &[2, 198], OK));
        // cat_empty_tensors and cat_only_one_tensor.
        let (a, e, b) = (&[2i64, 2, 3][..], &[0i64, 2, 3][..], &[3i64, 2, 3][..]);
        cases.push(case(
            "empty_two_left",
            &[(a, ACL_FLOAT), (e, ACL_FLOAT), (b, ACL_FLOAT)],
            0,
            &[5, 2, 3],
            OK,
        ));
        cases.push(case(
            "empty_none_left",
            &[(e, ACL_FLOAT); 3],
            0,
            &[0, 2, 3],
            OK,
        ));
        cases.push(case(
            "empty_one_left",
            &[(a, ACL_FLOAT), (e, ACL_FLOAT)],
            0,
            &[2, 2, 3],
            OK,
        ));
        cases.push(case(
            "empty_first",
            &[(e, ACL_FLOAT), (a, ACL_FLOAT)],
            0,
            &[2, 2, 3],
            OK,
        ));
        cases.push(case("only_one", &[(a, ACL_FLOAT)], 0, &[2, 2, 3], OK));
        cases.push(case("only_one_empty", &[(e, ACL_FLOAT)], 0, &[0, 2, 3], OK));
        // cat_9dim.
        let nine = &[2i64, 2, 3, 2, 2, 3, 2, 2, 3][..];
        cases.push(case(
            "9dim",
            &[(nine, ACL_FLOAT), (nine, ACL_FLOAT)],
            0,
            &[4, 2, 3, 2, 2, 3, 2, 2, 3],
            INVALID,
        ));
        // cat_one_dim1_empty_tensor: a [0] is dropped before any check.
        cases.push(case(
            "one_dim1_empty",
            &[(&[2, 3], ACL_FLOAT), (&[0], ACL_FLOAT)],
            0,
            &[2, 3],
            OK,
        ));
        // dtype_promote_to_complex128.
        let mut c128 = case(
            "promote_to_complex128",
            &[(&[2, 3], ACL_COMPLEX64), (&[1, 3], ACL_DOUBLE)],
            0,
            &[3, 3],
            INVALID,
        );
        c128.out = Some((vec![3, 3], ACL_COMPLEX64, ACL_FORMAT_ND));
        cases.push(c128);
        for c in &cases {
            run_case(c);
        }
        assert_eq!(cases.len(), 38);
        // cat_nullptr: a NULL list.
        let out = desc(&[5, 5], ACL_FLOAT, ACL_FORMAT_ND, None, null_mut());
        assert_fails_with(
            status(std::ptr::null(), 0, out),
            ACLNN_ERR_PARAM_NULLPTR,
            &["tensors"],
        );
        destroy_tensor(out);
        // cat_non_contiguous: transposed views joined along dim 1.
        let t1 = desc(&[5, 3], ACL_FLOAT, ACL_FORMAT_ND, Some(&[1, 5]), null_mut());
        let t2 = desc(&[5, 2], ACL_FLOAT, ACL_FORMAT_ND, Some(&[1, 5]), null_mut());
        let l = list(&[t1, t2]);
        let out = desc(&[5, 5], ACL_FLOAT, ACL_FORMAT_ND, None, null_mut());
        assert_eq!(status(l, 1, out), OK, "non_contiguous: {}", err_msg());
        destroy_list(l);
        destroy_tensor(out);
    });
}

#[test]
fn bf16_is_refused_on_the_inference_series() {
    on_device(2, || {
        let c = Case {
            name: "ascend310P_bfloat16",
            tensors: vec![
                (vec![2, 3], ACL_BF16, ACL_FORMAT_ND),
                (vec![1, 3], ACL_BF16, ACL_FORMAT_ND),
            ],
            dim: 0,
            out: Some((vec![3, 3], ACL_FLOAT, ACL_FORMAT_ND)),
            want: INVALID,
        };
        run_case(&c);
    });
}

#[test]
fn a_null_element_is_a_null_pointer_and_a_wrong_out_shape_is_refused() {
    on_device(0, || {
        let a = desc(&[2, 3], ACL_FLOAT, ACL_FORMAT_ND, None, null_mut());
        let ptrs = [a.cast_const(), std::ptr::null()];
        // SAFETY: a live array of two handles (one NULL, which the list keeps).
        let l = unsafe { api::aclCreateTensorList(ptrs.as_ptr(), 2) };
        assert!(!l.is_null());
        let out = desc(&[4, 3], ACL_FLOAT, ACL_FORMAT_ND, None, null_mut());
        assert_fails_with(status(l, 0, out), ACLNN_ERR_PARAM_NULLPTR, &["tensors[1]"]);
        destroy_list(l);
        // Two non-empty tensors into an out of another shape: 161002; one: the copy fails.
        let l = list(&[
            desc(&[2, 3], ACL_FLOAT, ACL_FORMAT_ND, None, null_mut()),
            desc(&[1, 3], ACL_FLOAT, ACL_FORMAT_ND, None, null_mut()),
        ]);
        assert_fails_with(status(l, 0, out), INVALID, &["joined shape"]);
        destroy_list(l);
        let l = list(&[desc(&[2, 3], ACL_FLOAT, ACL_FORMAT_ND, None, null_mut())]);
        assert_fails_with(
            status(l, 0, out),
            ACLNN_ERR_INNER_NULLPTR,
            &["copy into out"],
        );
        destroy_list(l);
        destroy_tensor(out);
    });
}

#[test]
fn joins_mixed_dtypes_views_and_empty_elements_and_rebinds_an_element() {
    on_device(0, || {
        // a: [2, 2] f32; b: the transpose of a [3, 2] f16 buffer, so a [2, 3] view; an
        // empty [2, 0] and a dropped [0]: out [2, 5] f32 along dim 1.
        let a_vals = [1.0f32, 2.0, 3.0, 4.0];
        let b_vals: Vec<half::f16> = [10.0f32, 20.0, 30.0, 40.0, 50.0, 60.0]
            .iter()
            .map(|&v| half::f16::from_f32(v))
            .collect();
        let (da, db, dout) = (malloc(16), malloc(12), malloc(40));
        h2d(da, &a_vals);
        h2d(db, &b_vals);
        let elements = [
            desc(&[2, 2], ACL_FLOAT, ACL_FORMAT_ND, None, da),
            desc(&[2, 0], ACL_FLOAT, ACL_FORMAT_ND, None, null_mut()),
            desc(&[2, 3], ACL_FLOAT16, ACL_FORMAT_ND, Some(&[1, 2]), db),
            desc(&[0], ACL_FLOAT, ACL_FORMAT_ND, None, null_mut()),
        ];
        let l = list(&elements);
        let out = desc(&[2, 5], ACL_FLOAT, ACL_FORMAT_ND, None, dout);
        let (mut ws, mut ex) = (0u64, null_mut());
        // SAFETY: live handles, valid out-pointers.
        let rc = unsafe { phase1_fn()(l, -1, out, &mut ws, &mut ex) };
        assert_eq!(rc, OK, "{}", err_msg());
        assert_eq!(ws, 0);
        // SAFETY: a fresh executor.
        assert_eq!(unsafe { api::aclSetAclOpExecutorRepeatable(ex) }, OK);
        let s = create_stream();
        // SAFETY: a repeatable executor, a live stream.
        assert_eq!(
            unsafe { phase2_fn()(null_mut(), 0, ex, s) },
            OK,
            "{}",
            err_msg()
        );
        assert_eq!(sync(s), ACL_SUCCESS, "{}", err_msg());
        let got: Vec<f32> = d2h(dout, 10);
        assert_eq!(
            got,
            [1.0, 2.0, 10.0, 30.0, 50.0, 3.0, 4.0, 20.0, 40.0, 60.0]
        );
        // Input index 0 is element 0: rebound to other data, the relaunch reads it.
        let da2 = malloc(16);
        h2d(da2, &[-1.0f32, -2.0, -3.0, -4.0]);
        // SAFETY: the live repeatable executor and its element 0.
        let rc = unsafe { api::aclSetInputTensorAddr(ex, 0, elements[0], da2) };
        assert_eq!(rc, OK, "{}", err_msg());
        // Index 4 is past the four elements.
        // SAFETY: as above; the index is out of range, which the call reports.
        let rc = unsafe { api::aclSetInputTensorAddr(ex, 4, elements[0], da2) };
        assert_fails_with(rc, INVALID, &["out of range"]);
        // SAFETY: as above.
        assert_eq!(
            unsafe { phase2_fn()(null_mut(), 0, ex, s) },
            OK,
            "{}",
            err_msg()
        );
        assert_eq!(sync(s), ACL_SUCCESS);
        let got: Vec<f32> = d2h(dout, 10);
        assert_eq!(
            got,
            [-1.0, -2.0, 10.0, 30.0, 50.0, -3.0, -4.0, 20.0, 40.0, 60.0]
        );
        // SAFETY: the repeatable executor, destroyed once.
        assert_eq!(unsafe { api::aclDestroyAclOpExecutor(ex) }, OK);
        destroy_list(l);
        destroy_tensor(out);
        destroy_stream(s);
        for p in [da, da2, db, dout] {
            free(p);
        }
    });
}

#[test]
fn forty_tensors_join_into_one_executor() {
    on_device(0, || {
        // More slots than an executor keeps inline: each element is one row.
        let n = 40usize;
        let bufs: Vec<*mut c_void> = (0..n).map(|_| malloc(8)).collect();
        for (k, &b) in bufs.iter().enumerate() {
            h2d(b, &[k as i32, -(k as i32)]);
        }
        let elements: Vec<*mut aclTensor> = bufs
            .iter()
            .map(|&b| desc(&[1, 2], ACL_INT32, ACL_FORMAT_ND, None, b))
            .collect();
        let l = list(&elements);
        let dout = malloc(n * 8);
        let out = desc(&[n as i64, 2], ACL_INT32, ACL_FORMAT_ND, None, dout);
        let (mut ws, mut ex) = (0u64, null_mut());
        // SAFETY: live handles, valid out-pointers.
        let rc = unsafe { phase1_fn()(l, 0, out, &mut ws, &mut ex) };
        assert_eq!(rc, OK, "{}", err_msg());
        let s = create_stream();
        // SAFETY: the executor of phase 1, consumed by this call.
        assert_eq!(
            unsafe { phase2_fn()(null_mut(), 0, ex, s) },
            OK,
            "{}",
            err_msg()
        );
        assert_eq!(sync(s), ACL_SUCCESS, "{}", err_msg());
        let got: Vec<i32> = d2h(dout, 2 * n);
        let want: Vec<i32> = (0..n as i32).flat_map(|k| [k, -k]).collect();
        assert_eq!(got, want);
        destroy_list(l);
        destroy_tensor(out);
        destroy_stream(s);
        for b in bufs {
            free(b);
        }
        free(dout);
    });
}
