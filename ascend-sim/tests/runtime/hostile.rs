//! Hostile descriptors get a typed status, never a panic, a wrapped size or a
//! silent read out of bounds: strides and offsets whose products overflow, 2^62
//! elements on 4-byte allocations, then a sweep of random i64 dims, strides, offsets and
//! storage through aclCreateTensor and both phases of every operator.

use crate::common;
use ascend_sim::api;
use ascend_sys::*;
use common::*;
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::select;
use proptest::test_runner::TestRunner;
use std::cell::Cell;
use std::ffi::c_void;
use std::ptr::null_mut;

/// A tensor descriptor as the test built it.
#[derive(Clone, Debug)]
struct Desc {
    dims: Vec<i64>,
    strides: Vec<i64>,
    offset: i64,
    storage: Vec<i64>,
}

fn create(d: &Desc, dtype: i32, data: *mut c_void) -> *mut aclTensor {
    // SAFETY: the arrays are live slices of the stated lengths.
    let t = unsafe {
        api::aclCreateTensor(
            d.dims.as_ptr(),
            d.dims.len() as u64,
            dtype,
            d.strides.as_ptr(),
            d.offset,
            2,
            d.storage.as_ptr(),
            d.storage.len() as u64,
            data,
        )
    };
    assert!(!t.is_null(), "{d:?}: {}", err_msg());
    t
}

/// Whether every element of `d` (4-byte elements at `data_off` bytes into an allocation
/// of `alloc` bytes) lies inside the allocation and inside its storage, in exact
/// arithmetic.
fn inside(d: &Desc, data_off: i128, alloc: i128, elem: i128) -> bool {
    if d.dims.iter().any(|&x| x < 0) {
        return false;
    }
    if d.dims.contains(&0) {
        return true;
    }
    let (mut lo, mut hi) = (0i128, 0i128);
    for (&n, &s) in d.dims.iter().zip(&d.strides) {
        let reach = i128::from(s) * i128::from(n - 1);
        if reach < 0 {
            lo += reach;
        } else {
            hi += reach;
        }
    }
    let storage: i128 = d.storage.iter().map(|&x| i128::from(x)).product();
    let (first, last) = (i128::from(d.offset) + lo, i128::from(d.offset) + hi);
    first >= 0
        && last < storage
        && data_off + first * elem >= 0
        && data_off + (last + 1) * elem <= alloc
}

/// The statuses a hostile call may give: success or a documented failure, never the
/// 500000 of a caught panic.
#[track_caller]
fn typed(rc: i32, what: &str) {
    assert!(
        [
            ACLNN_SUCCESS,
            ACLNN_ERR_PARAM_NULLPTR,
            ACLNN_ERR_PARAM_INVALID,
            ACLNN_ERR_INNER
        ]
        .contains(&rc),
        "{what}: status {rc}: {}",
        err_msg()
    );
}

/// A successful phase 1 asks for no wrapped size: each temporary holds the whole result
/// (`out`'s elements, 4 bytes each).
fn phase1_ws(rc: i32, ws: u64, out: &Desc, what: &str) {
    typed(rc, what);
    if rc == ACLNN_SUCCESS && ws > 0 {
        let numel: i128 = out.dims.iter().map(|&d| i128::from(d)).product();
        assert!(i128::from(ws) >= numel * 4, "{what}: workspace {ws}");
    }
}

#[test]
fn strides_offsets_and_storage_sizes_that_overflow_are_refused() {
    let _gate = crate::common::serial();
    setup();
    let (g, x, o) = (malloc(16), malloc(16), malloc(16));
    h2d(x, &[0.5f32, 1.0, 1.5, 2.0]);
    let tg = tensor(&[4], ACL_FLOAT, g);
    let to = tensor(&[4], ACL_FLOAT, o);
    let d = |dims: &[i64], strides: &[i64], offset: i64, storage: &[i64]| Desc {
        dims: dims.to_vec(),
        strides: strides.to_vec(),
        offset,
        storage: storage.to_vec(),
    };
    let big = 1i64 << 62;
    for (case, fine) in [
        (d(&[4], &[1], 1, &[4]), false),
        (d(&[4], &[2], 0, &[4]), false),
        (d(&[4], &[1], 0, &[2]), false),
        (d(&[4], &[2], 0, &[8]), false),
        (d(&[4], &[1], 10, &[100]), false),
        (d(&[4], &[-1], 3, &[4]), true),
        (d(&[4], &[1], -1, &[4]), false),
        (d(&[4], &[0], 0, &[4]), true),
        (d(&[4], &[1], 0, &[]), false),
        (d(&[4], &[1], big, &[big + 4]), false),
        (d(&[4], &[big], 0, &[i64::MAX]), false),
        (d(&[4], &[1 << 61], 0, &[i64::MAX]), false),
    ] {
        let tx = create(&case, ACL_FLOAT, x);
        let (rc, ws, ex) = phase1(tg, tx, to);
        assert_eq!(rc, ACLNN_SUCCESS, "{case:?}: {}", err_msg());
        let w = if ws > 0 {
            malloc(ws as usize)
        } else {
            null_mut()
        };
        let rc = phase2(w, ws, ex, null_mut());
        if fine {
            assert_eq!(rc, ACLNN_SUCCESS, "{case:?}: {}", err_msg());
            assert_eq!(sync(null_mut()), ACL_SUCCESS, "{}", err_msg());
        } else {
            assert_fails_with(rc, ACLNN_ERR_PARAM_INVALID, &["self"]);
            assert_released_by_failed_phase2(ex);
        }
        if !w.is_null() {
            free(w);
        }
        destroy_tensor(tx);
    }
    for t in [tg, to] {
        destroy_tensor(t);
    }
    for p in [g, x, o] {
        free(p);
    }
}

#[test]
fn two_to_the_62_elements_on_four_bytes_are_refused() {
    let _gate = crate::common::serial();
    setup();
    let (g, x, o) = (malloc(4), malloc(4), malloc(4));
    for n in [1i64 << 62, 1 << 61] {
        let d = Desc {
            dims: vec![n],
            strides: vec![0],
            offset: 0,
            storage: vec![1],
        };
        let (tg, tx, to) = (
            create(&d, ACL_FLOAT, g),
            create(&d, ACL_FLOAT, x),
            create(&d, ACL_FLOAT, o),
        );
        let (rc, ws, ex) = phase1(tg, tx, to);
        assert_fails_with(
            rc,
            ACLNN_ERR_PARAM_INVALID,
            &["the workspace for a temporary of shape", "overflows"],
        );
        assert!(ex.is_null() && ws == 0, "no executor, no workspace size");
        for t in [tg, tx, to] {
            destroy_tensor(t);
        }
    }
    for p in [g, x, o] {
        free(p);
    }
}

const DIMS: [i64; 12] = [
    0,
    1,
    1,
    2,
    3,
    4,
    -1,
    1 << 31,
    1 << 61,
    1 << 62,
    i64::MAX,
    i64::MIN,
];
const STRIDES: [i64; 12] = [
    0,
    1,
    1,
    2,
    -1,
    -2,
    4,
    1 << 61,
    1 << 62,
    i64::MAX,
    i64::MIN,
    3,
];
const OFFSETS: [i64; 8] = [0, 0, 1, 3, -1, 1 << 62, i64::MAX, i64::MIN];

/// Half the descriptors come from small values that fit the 64-byte allocations, so that
/// launches reach the kernels; the other half from the edges of i64, and any i64 at all.
fn desc() -> impl Strategy<Value = Desc> {
    let any_i64 = || prop_oneof![4 => select(&DIMS[..]), 1 => any::<i64>()];
    let any_stride = || prop_oneof![4 => select(&STRIDES[..]), 1 => any::<i64>()];
    let small = (0usize..4).prop_flat_map(|n| {
        (
            vec(select(&[1i64, 2, 2, 3][..]), n),
            vec(select(&[0i64, 1, 2, -1, 3][..]), n),
            select(&[0i64, 1, 2, 5][..]),
        )
            .prop_map(|(dims, strides, offset)| Desc {
                dims,
                strides,
                offset,
                storage: vec![16],
            })
    });
    let edge = (0usize..4).prop_flat_map(move |n| {
        (
            vec(any_i64(), n),
            vec(any_stride(), n),
            prop_oneof![4 => select(&OFFSETS[..]), 1 => any::<i64>()],
            vec(any_i64(), 0..3),
        )
            .prop_map(|(dims, strides, offset, storage)| Desc {
                dims,
                strides,
                offset,
                storage,
            })
    });
    prop_oneof![small, edge]
}

/// Launches `ex` (from a successful phase 1 of `ws` bytes) through `launch`; when it is
/// accepted, every descriptor must lie inside its allocation, and the queued work must
/// finish without a panic.
fn launch_checked(
    ex: *mut aclOpExecutor,
    ws: u64,
    launch: unsafe extern "C" fn(*mut c_void, u64, *mut aclOpExecutor, aclrtStream) -> i32,
    descs: &[&Desc],
    alloc: usize,
    what: &str,
) -> bool {
    let w = if ws > 0 && ws <= 1 << 20 {
        malloc(ws as usize)
    } else {
        null_mut()
    };
    // SAFETY: the executor of phase 1, a workspace of its size or NULL, the default stream.
    let rc = unsafe { launch(w, ws, ex, null_mut()) };
    typed(rc, what);
    if rc == ACLNN_SUCCESS {
        // With an empty tensor nothing is read or written, as in CANN.
        if descs.iter().all(|d| !d.dims.contains(&0)) {
            for d in descs {
                assert!(inside(d, 0, alloc as i128, 4), "{what}: accepted {d:?}");
            }
        }
        let s = sync(null_mut());
        assert_eq!(s, ACL_SUCCESS, "{what}: {}", err_msg());
    } else if w.is_null() && ws > 0 {
        assert_double_release(ex, &["NULL workspace with a non-zero workspaceSize"]);
    } else {
        assert_released_by_failed_phase2(ex);
    }
    if !w.is_null() {
        free(w);
    }
    rc == ACLNN_SUCCESS
}

/// Runs one case (three descriptors over three 64-byte allocations) through both phases
/// of every operator; returns whether MishBackward's phase 1 accepted it and how many Mish
/// launches ran.
fn sweep_case(ds: &[Desc], bufs: [*mut c_void; 3], alloc: usize) -> (bool, bool) {
    let ts: Vec<_> = ds
        .iter()
        .zip(bufs)
        .map(|(d, b)| create(d, ACL_FLOAT, b))
        .collect();
    let what = format!("{ds:?}");
    let (rc, ws, ex) = phase1(ts[0], ts[1], ts[2]);
    phase1_ws(rc, ws, &ds[2], &what);
    let accepted = rc == ACLNN_SUCCESS;
    if accepted {
        let operands = [&ds[0], &ds[1], &ds[2]];
        launch_checked(ex, ws, api::aclnnMishBackward, &operands, alloc, &what);
    }
    let (mut ws, mut ex) = (0u64, null_mut());
    // SAFETY: simulator handles; valid out-pointers.
    let rc = unsafe { api::aclnnMishGetWorkspaceSize(ts[1], ts[2], &mut ws, &mut ex) };
    phase1_ws(rc, ws, &ds[2], &what);
    let launched = rc == ACLNN_SUCCESS
        && launch_checked(ex, ws, api::aclnnMish, &[&ds[1], &ds[2]], alloc, &what);
    // SAFETY: as above.
    let rc = unsafe { api::aclnnInplaceCopyGetWorkspaceSize(ts[0], ts[1], &mut ws, &mut ex) };
    phase1_ws(rc, ws, &ds[0], &what);
    if rc == ACLNN_SUCCESS {
        let operands = [&ds[0], &ds[1]];
        launch_checked(ex, ws, api::aclnnInplaceCopy, &operands, alloc, &what);
    }
    for t in ts {
        destroy_tensor(t);
    }
    (accepted, launched)
}

/// A fuzz of hostile descriptors: proptest draws three random descriptors a case (dims, strides,
/// offsets and storage from the edges of i64 and anywhere in it, or small values that
/// reach the kernels) and sends them through aclCreateTensor and both phases of every
/// operator. A panic, a wrapped workspace size or an accepted view outside its allocation
/// fails the case (and proptest shrinks it).
#[test]
fn random_i64_descriptors_through_every_operator() {
    let _gate = crate::common::serial();
    setup();
    const ALLOC: usize = 64;
    const CASES: u32 = 20_000;
    let bufs = [malloc(ALLOC), malloc(ALLOC), malloc(ALLOC)];
    let (accepted, launched) = (Cell::new(0u32), Cell::new(0u32));
    ascend_sim::clear_last_report();
    let config = ProptestConfig {
        cases: CASES,
        failure_persistence: None,
        ..ProptestConfig::default()
    };
    let mut runner = TestRunner::new(config);
    let outcome = runner.run(&vec(desc(), 3), |ds| {
        let (a, l) = sweep_case(&ds, bufs, ALLOC);
        accepted.set(accepted.get() + u32::from(a));
        launched.set(launched.get() + u32::from(l));
        Ok(())
    });
    if let Err(e) = outcome {
        panic!("{e}");
    }
    let report = ascend_sim::last_report().unwrap_or_default();
    assert!(!report.contains("panic"), "{report}");
    let (accepted, launched) = (accepted.get(), launched.get());
    println!(
        "{CASES} proptest cases: {accepted} accepted by MishBackward's phase 1, {launched} Mish launches ran"
    );
    assert!(
        accepted > 100 && launched > 100,
        "the sweep reaches the kernels"
    );
    for b in bufs {
        free(b);
    }
}
