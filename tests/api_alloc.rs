//! The steady state of `mish_backward`, `mish`, `mish_inplace` and of their plans' `launch`
//! performs **zero** heap allocations: over 10,000 calls after warm-up (with a stream
//! synchronisation every 100 calls), counted process-wide (every thread, including the
//! simulator's stream worker that runs the kernel) and on the calling thread. The hand-written raw C sequence
//! (create descriptors → phase 1 → phase 2 → destroy) is measured the same way and is zero
//! too: the simulator's own hot path (slab-allocated tensors and executors, inline dims,
//! by-value task ring, worker scratch buffers) is allocation-free, so the figure of the
//! safe path is not hidden behind the simulator's bookkeeping.

mod common;

use ascendcl::{
    DeviceTensor, InplaceMishPlan, MishBackwardPlan, MishPlan, Stream, mish, mish_backward,
    mish_inplace,
};
use common::counting::{Counting, allocations_during};
use common::raw_entry::mish_backward_fns;
use common::*;
use std::ffi::c_void;

#[global_allocator]
static GLOBAL: Counting = Counting;

const CALLS: usize = 10_000;
const SYNC_EVERY: usize = 100;

/// Allocations `(this thread, whole process)` during `CALLS` calls of `f`, with
/// `stream.synchronize()` every `SYNC_EVERY` calls and at the end.
fn count(stream: &Stream, mut f: impl FnMut()) -> (u64, u64) {
    stream.synchronize().unwrap();
    allocations_during(|| {
        for i in 0..CALLS {
            f();
            if (i + 1) % SYNC_EVERY == 0 {
                stream.synchronize().unwrap();
            }
        }
        stream.synchronize().unwrap();
    })
}

/// Runs `f` until every grow-only buffer on the path (the simulator's launch-box pool and
/// queue, which start with room for 64 launches, fewer than a batch; its slabs; the
/// crate's caches) has reached the size the measured loop can need.
/// The stream is held while each batch is submitted, so a whole batch of `SYNC_EVERY`
/// launches is in flight at once: the most the measured loop (which synchronises every
/// `SYNC_EVERY` calls) can ever have queued, however the worker thread is scheduled.
fn warm_up(stream: &Stream, mut f: impl FnMut()) {
    for _ in 0..3 {
        let hold = ascend_sim::testing::hold_stream(stream.as_raw()).expect("a live stream");
        for _ in 0..SYNC_EVERY {
            f();
        }
        hold.release();
        stream.synchronize().unwrap();
    }
}

#[test]
fn steady_state_allocates_nothing_raw_safe_and_plan() {
    let _leaks = LeakCheck::start();
    let rt = runtime();
    let stream = rt.device(A2).unwrap().stream().unwrap();
    let shape = [2usize, 4];
    let g = DeviceTensor::from_array(&stream, &array::<f32>(&shape, 1, -2.0, 2.0)).unwrap();
    let x = DeviceTensor::from_array(&stream, &array::<f32>(&shape, 2, -2.0, 2.0)).unwrap();
    let xb = DeviceTensor::from_array(&stream, &array::<f32>(&[4], 3, -2.0, 2.0)).unwrap();
    let mut out = DeviceTensor::<f32>::zeros(&stream, shape).unwrap();

    // Raw buffers for the hand-written sequence.
    let t = rt.api();
    let (phase1, phase2) = mish_backward_fns(t);
    let bytes = 8 * 4;
    let mut raw = [std::ptr::null_mut::<c_void>(); 3];
    for p in &mut raw {
        // SAFETY: valid out-pointer; the device's context is current on this thread.
        assert_eq!(unsafe { (t.aclrtMalloc)(p, bytes, 0) }, 0);
    }
    let dims = [2i64, 4];
    let strides = [4i64, 1];
    let storage = [8i64];
    let raw_call = || {
        let mut d = [std::ptr::null_mut(); 3];
        for (slot, p) in d.iter_mut().zip(raw) {
            // SAFETY: valid arrays and a live device allocation of 8 f32.
            *slot = unsafe {
                (t.aclCreateTensor)(
                    dims.as_ptr(),
                    2,
                    0,
                    strides.as_ptr(),
                    0,
                    2,
                    storage.as_ptr(),
                    1,
                    p,
                )
            };
        }
        let mut ws = 0u64;
        let mut ex = std::ptr::null_mut();
        // SAFETY: live descriptors, valid out-pointers.
        let s1 = unsafe { phase1(d[0], d[1], d[2], &mut ws, &mut ex) };
        assert_eq!((s1, ws), (0, 0));
        // SAFETY: fresh executor, no workspace needed, live stream.
        let s2 = unsafe { phase2(std::ptr::null_mut(), 0, ex, stream.as_raw()) };
        assert_eq!(s2, 0);
        for p in d {
            // SAFETY: descriptors made above, destroyed once.
            unsafe { (t.aclDestroyTensor)(p) };
        }
    };

    let mut safe = || mish_backward(&g, &x, &mut out, &stream).unwrap();
    warm_up(&stream, raw_call);
    warm_up(&stream, &mut safe);
    let raw_n = count(&stream, raw_call);
    let safe_n = count(&stream, &mut safe);

    let mut plan = MishBackwardPlan::new(&g, &x, &out, &stream).unwrap();
    assert!(plan.is_reusable());
    let mut planned = || plan.launch(&g, &x, &mut out, &stream).unwrap();
    warm_up(&stream, &mut planned);
    let plan_n = count(&stream, &mut planned);
    drop(plan);

    // A broadcast input needs a workspace: the per-stream cache serves it.
    let mut bcast = || mish_backward(&g, &xb, &mut out, &stream).unwrap();
    warm_up(&stream, &mut bcast);
    let bcast_n = count(&stream, &mut bcast);
    let mut bplan = MishBackwardPlan::new(&g, &xb, &out, &stream).unwrap();
    let mut bplanned = || bplan.launch(&g, &xb, &mut out, &stream).unwrap();
    warm_up(&stream, &mut bplanned);
    let bplan_n = count(&stream, &mut bplanned);
    drop(bplan);

    // Mish forward: one-off into a transposed output (a per-call descriptor and a
    // workspace), in place, and both plans.
    let mut ot = DeviceTensor::<f32>::zeros(&stream, [4, 2]).unwrap();
    let mut fwd = || mish(&x, ot.view_mut().t(), &stream).unwrap();
    warm_up(&stream, &mut fwd);
    let fwd_n = count(&stream, &mut fwd);
    let mut inplace = || mish_inplace(&mut out, &stream).unwrap();
    warm_up(&stream, &mut inplace);
    let inplace_n = count(&stream, &mut inplace);
    let mut fplan = MishPlan::new(&x, ot.view().t(), &stream).unwrap();
    let mut iplan = InplaceMishPlan::new(&out, &stream).unwrap();
    let mut fplanned = || {
        fplan.launch(&x, ot.view_mut().t(), &stream).unwrap();
        iplan.launch(&mut out, &stream).unwrap();
    };
    warm_up(&stream, &mut fplanned);
    let fplan_n = count(&stream, &mut fplanned);
    drop((fplan, iplan));

    println!(
        "allocations over {CALLS} calls (calling thread, whole process): raw {raw_n:?}, \
         safe {safe_n:?}, plan {plan_n:?}, safe broadcast {bcast_n:?}, plan broadcast {bplan_n:?}, \
         mish {fwd_n:?}, mish_inplace {inplace_n:?}, MishPlan + InplaceMishPlan {fplan_n:?}"
    );
    assert_eq!(fwd_n, (0, 0), "mish into a transposed output");
    assert_eq!(inplace_n, (0, 0), "mish_inplace");
    assert_eq!(
        fplan_n,
        (0, 0),
        "MishPlan::launch and InplaceMishPlan::launch"
    );
    assert_eq!(raw_n, (0, 0), "raw C sequence");
    assert_eq!(safe_n, (0, 0), "safe mish_backward");
    assert_eq!(plan_n, (0, 0), "MishBackwardPlan::launch");
    assert_eq!(bcast_n, (0, 0), "safe mish_backward with a workspace");
    assert_eq!(bplan_n, (0, 0), "MishBackwardPlan::launch with a workspace");
    for p in raw {
        // SAFETY: allocated above; the stream is synchronised.
        unsafe { (t.aclrtFree)(p) };
    }
}
