//! The training operators' steady state: a repeatable executor of each, launched again and
//! again after a warm-up, allocates nothing on the heap anywhere in the process (but for
//! the GEMM's packing buffer), keeps the attributes phase 1 fixed, and follows a rebound
//! address.

mod common;
mod opkit;
use ascend_sim::api;
use ascend_sys::*;
use common::*;
use opkit::*;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

struct Counting;
static ALLOCS: AtomicU64 = AtomicU64::new(0);
static ON: AtomicBool = AtomicBool::new(false);

// SAFETY: forwards to the system allocator; the counters are atomics.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if ON.load(Ordering::Relaxed) {
            ALLOCS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: the caller's contract.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if ON.load(Ordering::Relaxed) {
            ALLOCS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: the caller's contract.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// A repeatable executor from a successful phase 1.
fn repeatable(g: Got) -> *mut aclOpExecutor {
    assert_eq!(g.0, ACLNN_SUCCESS, "{}", err_msg());
    assert_eq!(g.1, 0);
    // SAFETY: the executor of phase 1, right after it.
    assert_eq!(
        unsafe { api::aclSetAclOpExecutorRepeatable(g.2) },
        ACLNN_SUCCESS
    );
    g.2
}

fn launch_all(plans: &[(*mut aclOpExecutor, Phase2)], s: aclrtStream) {
    for &(ex, f) in plans {
        // SAFETY: live repeatable executors, no workspace, a live stream.
        assert_eq!(
            unsafe { f(std::ptr::null_mut(), 0, ex, s) },
            ACLNN_SUCCESS,
            "{}",
            err_msg()
        );
    }
    assert_eq!(sync(s), ACL_SUCCESS);
}

#[test]
fn repeated_launches_allocate_nothing_and_keep_their_attributes() {
    on(A2);
    let s = create_stream();
    let f = |d: &[i64], v: f32| f32_tensor(d, &vec![v; d.iter().product::<i64>() as usize]).0;
    let (w, pw) = f32_tensor(&[4, 8], &[0.5; 32]);
    let (x, y, b) = (f(&[16, 4], 1.0), f(&[16, 8], 0.0), f(&[8], 0.25));
    let (h, loss, gl) = (f(&[16, 8], 0.0), f(&[], 0.0), f(&[16, 8], 0.0));
    let (gw, pgw) = f32_tensor(&[4, 8], &[0.0; 32]);
    let gb = f(&[8], 0.0);
    let xt = tensor_view(
        &[4, 16],
        &[1, 4],
        0,
        &[64],
        ACL_FLOAT,
        upload(&[1.0f32; 64]),
    );
    let (one, minus) = (f64_scalar(1.0), f64_scalar(-0.1));
    let dims = int_array(&[0]);
    // SAFETY: live handles and out-pointers for every phase 1.
    let plans: Vec<(*mut aclOpExecutor, Phase2)> = unsafe {
        vec![
            (
                repeatable(p1(|ws, ex| {
                    api::aclnnAddmmGetWorkspaceSize(b, x, w, one, one, h, 0, ws, ex)
                })),
                api::aclnnAddmm,
            ),
            (
                repeatable(p1(|ws, ex| {
                    api::aclnnMseLossGetWorkspaceSize(h, y, 1, loss, ws, ex)
                })),
                api::aclnnMseLoss,
            ),
            (
                repeatable(p1(|ws, ex| {
                    api::aclnnMseLossBackwardGetWorkspaceSize(loss, h, y, 1, gl, ws, ex)
                })),
                api::aclnnMseLossBackward,
            ),
            (
                repeatable(p1(|ws, ex| {
                    api::aclnnMatmulGetWorkspaceSize(xt, gl, gw, 0, ws, ex)
                })),
                api::aclnnMatmul,
            ),
            (
                repeatable(p1(|ws, ex| {
                    api::aclnnReduceSumGetWorkspaceSize(gl, dims, false, ACL_FLOAT, gb, ws, ex)
                })),
                api::aclnnReduceSum,
            ),
            (
                repeatable(p1(|ws, ex| {
                    api::aclnnInplaceAddGetWorkspaceSize(w, gw, minus, ws, ex)
                })),
                api::aclnnInplaceAdd,
            ),
            (
                repeatable(p1(|ws, ex| api::aclnnMulGetWorkspaceSize(h, h, gl, ws, ex))),
                api::aclnnMul,
            ),
            (
                repeatable(p1(|ws, ex| {
                    api::aclnnInplaceMulGetWorkspaceSize(gl, h, ws, ex)
                })),
                api::aclnnInplaceMul,
            ),
            (
                repeatable(p1(|ws, ex| {
                    api::aclnnAddGetWorkspaceSize(h, b, one, gl, ws, ex)
                })),
                api::aclnnAdd,
            ),
            (
                repeatable(p1(|ws, ex| {
                    api::aclnnInplaceFillScalarGetWorkspaceSize(gb, minus, ws, ex)
                })),
                api::aclnnInplaceFillScalar,
            ),
            (
                repeatable(p1(|ws, ex| {
                    api::aclnnInplaceZeroGetWorkspaceSize(gb, ws, ex)
                })),
                api::aclnnInplaceZero,
            ),
        ]
    };
    // The attribute objects may go: executors hold their values.
    destroy_scalar(one);
    destroy_scalar(minus);
    destroy_int_array(dims);
    let before: Vec<f32> = d2h(pw, 32);
    launch_all(&plans, s);
    launch_all(&plans, s);
    // matrixmultiply allocates its packing buffer on every call (it takes no caller
    // buffer): one heap allocation per GEMM launch, on the stream's worker thread. Every
    // other launch allocates nothing.
    let gemms = [api::aclnnAddmm as Phase2, api::aclnnMatmul as Phase2];
    for &(ex, f) in &plans {
        ALLOCS.store(0, Ordering::SeqCst);
        ON.store(true, Ordering::SeqCst);
        for _ in 0..10 {
            launch_all(&[(ex, f)], s);
        }
        ON.store(false, Ordering::SeqCst);
        let want = if gemms.contains(&f) { 10 } else { 0 };
        assert_eq!(
            ALLOCS.load(Ordering::SeqCst),
            want,
            "heap allocations of 10 launches"
        );
    }
    // w moved by -0.1·gw at each of the 22 rounds.
    let after: Vec<f32> = d2h(pw, 32);
    assert_ne!(before, after);
    // Rebinding InplaceAdd's selfRef (input 0 and output 0) to a copy: only the copy moves.
    let pw2 = upload(&after);
    let ex = plans[5].0;
    // SAFETY: the executor's own selfRef descriptor, pointed at another live buffer.
    unsafe {
        assert_eq!(api::aclSetInputTensorAddr(ex, 0, w, pw2), ACLNN_SUCCESS);
        assert_eq!(api::aclSetOutputTensorAddr(ex, 0, w, pw2), ACLNN_SUCCESS);
        assert_eq!(
            api::aclnnInplaceAdd(std::ptr::null_mut(), 0, ex, s),
            ACLNN_SUCCESS
        );
    }
    assert_eq!(sync(s), ACL_SUCCESS);
    assert_eq!(d2h::<f32>(pw, 32), after, "the old buffer is left alone");
    let gwv: Vec<f32> = d2h(pgw, 32);
    let want: Vec<f32> = after
        .iter()
        .zip(&gwv)
        .map(|(a, g)| a + -0.1f32 * g)
        .collect();
    assert_eq!(d2h::<f32>(pw2, 32), want, "alpha -0.1 kept from phase 1");
    for (ex, _) in plans {
        // SAFETY: repeatable executors, released once.
        assert_eq!(unsafe { api::aclDestroyAclOpExecutor(ex) }, ACLNN_SUCCESS);
    }
    destroy_stream(s);
}
