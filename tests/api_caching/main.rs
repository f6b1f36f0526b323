//! The caching allocator: drops that do not wait, reuse ordered after the old
//! work, and a loop of allocated-and-dropped intermediates that allocates nothing after
//! warm-up.

#[path = "../common/mod.rs"]
mod common;
mod interleave;
mod reuse;
mod steady;

use ascendcl::{DeviceTensor, mish, mish_new};
use common::counting::{Counting, allocations_during, host_and_device_during};
use common::*;
use ndarray::Array2;

#[global_allocator]
static GLOBAL: Counting = Counting;

/// The device's memory figures are shared: the tests of this file run one at a time.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// A held stream keeps `mish(x)` queued; dropping `x` returns while the hold is still in
/// this thread's hand (a waiting drop could never return), and another stream's tensor
/// that takes `x`'s block writes it only after the held kernel has read it.
#[test]
fn a_drop_does_not_wait_and_reuse_follows_the_old_work() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dev = device(A2);
    dev.set_caching(true);
    let (a, b) = (dev.stream().unwrap(), dev.stream().unwrap());
    let xs = Array2::from_shape_fn((8, 16), |(i, j)| (i as f32 - j as f32) * 0.25);
    let x = DeviceTensor::from_array(&a, &xs).unwrap();
    let mut y = DeviceTensor::<f32>::zeros(&a, [8, 16]).unwrap();
    a.synchronize().unwrap();
    let hold = ascend_sim::testing::hold_stream(a.as_raw()).unwrap();
    mish(&x, &mut y, &a).unwrap();
    drop(x);
    // Still held here: the drop returned without waiting for `a`. `x`'s block still has
    // queued work, so another stream's new tensor gets other memory.
    let hits = dev.memory_stats().cache_hits;
    let other = Array2::<f32>::from_elem((8, 16), 100.0);
    let z = DeviceTensor::from_array(&b, &other).unwrap();
    assert_eq!(
        dev.memory_stats().cache_hits,
        hits,
        "not reused under held work"
    );
    hold.release();
    a.synchronize().unwrap();
    // The held work ran: now the block may serve another stream.
    let w = DeviceTensor::from_array(&b, &other).unwrap();
    assert_eq!(
        dev.memory_stats().cache_hits,
        hits + 1,
        "reused after the work ran"
    );
    assert_eq!(w.to_array(&b).unwrap(), other.clone().into_dyn());
    assert_eq!(z.to_array(&b).unwrap(), other.into_dyn());
    drop(w);
    let want = ascendcl::reference::mish(xs.view()).unwrap();
    let (mere, _) = mere_mare(&y.to_array(&a).unwrap(), &want.into_dyn());
    assert!(mere < threshold(ascendcl::DType::F32), "{mere}");
    assert_eq!(ascend_sim::last_report(), None);
    drop(z);
    dev.empty_cache();
    let stats = dev.memory_stats();
    assert_eq!(stats.reserved, stats.allocated);
    dev.set_caching(false);
}

/// 200 steps, each allocating its output and dropping it: after warm-up 0 `aclrtMalloc`
/// calls, 0 heap allocations, and the results of the preallocated form.
#[test]
fn two_hundred_allocating_steps_make_no_device_allocation() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dev = device(A2);
    dev.set_caching(true);
    let s = dev.stream().unwrap();
    let xs = Array2::from_shape_fn((16, 32), |(i, j)| ((i * 32 + j) as f32 * 0.01).sin());
    let x = DeviceTensor::from_array(&s, &xs).unwrap();
    let mut pre = DeviceTensor::<f32>::zeros(&s, [16, 32]).unwrap();
    mish(&x, &mut pre, &s).unwrap();
    let mut host = Array2::<f32>::zeros((16, 32));
    let mut got = Array2::<f32>::zeros((16, 32));
    let step = |out: &mut Array2<f32>| {
        let mut y = DeviceTensor::<f32>::zeros(&s, [16, 32]).unwrap();
        mish(&x, &mut y, &s).unwrap();
        y.copy_to_array(&s, out).unwrap();
    };
    for _ in 0..300 {
        step(&mut host);
    }
    let mallocs = ascend_sim::call_count("aclrtMalloc");
    let before = dev.memory_stats();
    let (_, heap) = allocations_during(|| {
        for _ in 0..200 {
            step(&mut got);
        }
    });
    assert_eq!(
        ascend_sim::call_count("aclrtMalloc"),
        mallocs,
        "aclrtMalloc calls"
    );
    let after = dev.memory_stats();
    assert_eq!(after.device_allocations, before.device_allocations);
    assert_eq!(after.cache_hits, before.cache_hits + 200);
    assert_eq!(heap, 0, "heap allocations over 200 steps");
    pre.copy_to_array(&s, &mut host).unwrap();
    assert_eq!(
        got, host,
        "the allocating loop computes what the preallocated one does"
    );
    assert_eq!(ascend_sim::last_report(), None);
    dev.set_caching(false);
}

/// Allocate-launch-drop steps queued behind a held stream keep taking the block the step
/// before dropped (its work runs first on that stream), so 16 queued steps make no
/// `aclrtMalloc`; another stream's new output does not take that block while its work is
/// queued. All results are right once the hold is released.
#[test]
fn queued_allocating_steps_reuse_their_streams_block_and_no_other() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dev = device(A2);
    dev.set_caching(true);
    let (a, b) = (dev.stream().unwrap(), dev.stream().unwrap());
    let xs = Array2::from_shape_fn((8, 24), |(i, j)| i as f32 * 0.5 - j as f32 * 0.125);
    let x = DeviceTensor::from_array(&a, &xs).unwrap();
    a.synchronize().unwrap();
    dev.empty_cache();
    let hold = ascend_sim::testing::hold_stream(a.as_raw()).unwrap();
    drop(mish_new::<f32, DeviceTensor<f32>>(&x, &a).unwrap());
    let before = dev.memory_stats();
    let mut last = mish_new::<f32, DeviceTensor<f32>>(&x, &a).unwrap();
    for _ in 0..16 {
        drop(last);
        last = mish_new::<f32, DeviceTensor<f32>>(&x, &a).unwrap();
    }
    // One block (the cache was empty before the first step) served all 17.
    let queued = dev.memory_stats();
    assert_eq!(queued.device_allocations, before.device_allocations);
    assert_eq!(queued.reserved, before.reserved);
    assert_eq!(queued.cache_hits, before.cache_hits + 17);
    drop(last);
    let on_b = mish_new::<f32, DeviceTensor<f32>>(&x, &b).unwrap();
    let stats = dev.memory_stats();
    assert_eq!(stats.cache_hits, queued.cache_hits, "another stream waits");
    assert_eq!(stats.device_allocations, queued.device_allocations + 1);
    let last = mish_new::<f32, DeviceTensor<f32>>(&x, &a).unwrap();
    assert_eq!(dev.memory_stats().cache_hits, queued.cache_hits + 1);
    hold.release();
    let want = reference_mish(&xs);
    for (name, y, s) in [("on a", &last, &a), ("on b", &on_b, &b)] {
        let (mere, _) = mere_mare(&y.to_array(s).unwrap(), &want);
        assert!(mere < threshold(ascendcl::DType::F32), "{name}: {mere}");
    }
    assert_eq!(ascend_sim::last_report(), None);
    dev.set_caching(false);
}

/// A 64 KiB block serves two 16 KiB tensors (split, no `aclrtMalloc`); its segment is
/// freed only once both are dropped and the pieces have merged back into one block, which
/// then serves a 64 KiB request whole.
#[test]
fn a_cached_block_is_split_and_merged_back_whole() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dev = device(A2);
    let s = dev.stream().unwrap();
    drop(DeviceTensor::<f32>::zeros(&s, [16384]).unwrap());
    let start = dev.memory_stats();
    assert_eq!((start.allocated, start.reserved), (0, 65536));
    let (ah, bh) = (
        Array2::<f32>::from_elem((64, 64), 1.5),
        Array2::<f32>::from_elem((64, 64), -2.5),
    );
    let a = DeviceTensor::from_array(&s, &ah).unwrap();
    let b = DeviceTensor::from_array(&s, &bh).unwrap();
    let st = dev.memory_stats();
    assert_eq!(
        st.device_allocations, start.device_allocations,
        "no aclrtMalloc"
    );
    assert_eq!(st.splits, start.splits + 2);
    assert_eq!(st.cache_hits, start.cache_hits + 2);
    assert_eq!((st.allocated, st.reserved), (32768, 65536));
    // The pieces do not overlap.
    assert_eq!(a.to_array(&s).unwrap(), ah.clone().into_dyn());
    assert_eq!(b.to_array(&s).unwrap(), bh.into_dyn());
    // A segment with live pieces is not freed.
    dev.empty_cache();
    assert_eq!(dev.memory_stats().reserved, 65536);
    drop(a);
    dev.empty_cache();
    let st = dev.memory_stats();
    assert_eq!((st.allocated, st.reserved), (16384, 65536));
    assert_eq!(st.device_frees, start.device_frees);
    drop(b);
    // Merged: one block of the whole segment serves the whole size.
    let c = DeviceTensor::<f32>::zeros(&s, [16384]).unwrap();
    let st = dev.memory_stats();
    assert_eq!(st.device_allocations, start.device_allocations);
    assert_eq!(st.cache_hits, start.cache_hits + 3);
    drop(c);
    dev.empty_cache();
    let st = dev.memory_stats();
    assert_eq!((st.allocated, st.reserved), (0, 0));
    assert_eq!(st.device_frees, start.device_frees + 1);
    assert_eq!(ascend_sim::last_report(), None);
}

/// A piece split off a block that held work still writes carries that work's use: an
/// upload on another stream into the piece waits for it on the device, so the held kernel
/// cannot overwrite the uploaded values, and the racecheck sees no conflict.
#[test]
fn a_split_piece_waits_for_the_old_work_on_its_range() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dev = device(A2);
    let (a, b) = (dev.stream().unwrap(), dev.stream().unwrap());
    let xs = Array2::from_shape_fn((64, 64), |(i, j)| (i as f32 - j as f32) * 0.01);
    let x = DeviceTensor::from_array(&a, &xs).unwrap();
    // 128×64 f32 = 32 KiB; the kernel writes its first half through a view (no cached
    // descriptor, so the block may be split while the kernel is queued).
    let mut y = DeviceTensor::<f32>::zeros(&a, [128, 64]).unwrap();
    a.synchronize().unwrap();
    let hold = ascend_sim::testing::hold_stream(a.as_raw()).unwrap();
    mish(&x, y.view_mut().slice(0, 0, 64, 1).unwrap(), &a).unwrap();
    drop(y);
    let before = dev.memory_stats();
    let up = Array2::<f32>::from_elem((32, 64), 7.0);
    let z = DeviceTensor::from_array(&b, &up).unwrap();
    let st = dev.memory_stats();
    assert_eq!(st.splits, before.splits + 1, "a piece of y's block");
    assert_eq!(st.device_allocations, before.device_allocations);
    hold.release();
    b.synchronize().unwrap();
    assert_eq!(z.to_array(&b).unwrap(), up.into_dyn(), "not overwritten");
    a.synchronize().unwrap();
    assert_eq!(ascend_sim::last_report(), None);
}

/// Dropping a plan whose launch is still queued returns at once (the hold is still in
/// this thread's hand); the stream's workspace, replaced while the launch is queued,
/// returns to the cache with the stream's use, so an upload on another stream that takes
/// it runs after the held work; the results are right, and the plan's executor is
/// released once its launch has run.
#[test]
fn a_plan_and_its_workspace_drop_without_waiting() {
    use ascendcl::{InplaceCopyPlan, inplace_copy};
    use half::f16;
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dev = device(A2);
    let (a, b) = (dev.stream().unwrap(), dev.stream().unwrap());
    let src_h = Array2::from_shape_fn((8, 16), |(i, j)| f16::from_f32((i * 16 + j) as f32));
    let src = DeviceTensor::from_array(&a, &src_h).unwrap();
    let mut dst = DeviceTensor::<f32>::zeros(&a, [8, 16]).unwrap();
    // An f16 → f32 copy needs a workspace for its temporary.
    let mut plan = InplaceCopyPlan::new(&dst, &src, &a).unwrap();
    let big_h = Array2::from_elem((64, 64), f16::from_f32(3.0));
    let big = DeviceTensor::from_array(&a, &big_h).unwrap();
    let mut big_dst = DeviceTensor::<f32>::zeros(&a, [64, 64]).unwrap();
    a.synchronize().unwrap();
    let executors = ascend_sim::counters().executors;
    let hold = ascend_sim::testing::hold_stream(a.as_raw()).unwrap();
    plan.launch(&mut dst, &src, &a).unwrap();
    drop(plan);
    assert_eq!(
        ascend_sim::counters().executors,
        executors,
        "kept for its launch"
    );
    // A larger copy replaces the workspace the plan's launch uses.
    let reserved = dev.memory_stats().allocated;
    inplace_copy(&mut big_dst, &big, &a).unwrap();
    assert!(
        dev.memory_stats().allocated > reserved,
        "a larger workspace"
    );
    // Another stream's tensor of the old workspace's size class.
    let up = Array2::<f32>::from_elem((8, 16), -1.0);
    let z = DeviceTensor::from_array(&b, &up).unwrap();
    hold.release();
    b.synchronize().unwrap();
    a.synchronize().unwrap();
    assert_eq!(z.to_array(&b).unwrap(), up.into_dyn());
    assert_eq!(dst.to_array(&a).unwrap(), src_h.mapv(f32::from).into_dyn());
    assert_eq!(
        big_dst.to_array(&a).unwrap(),
        Array2::<f32>::from_elem((64, 64), 3.0).into_dyn()
    );
    dev.empty_cache();
    assert_eq!(
        ascend_sim::counters().executors,
        executors - 1,
        "released after its launch"
    );
    assert_eq!(ascend_sim::last_report(), None);
}

/// A cached block whose work cannot be proved finished (the synchronisation
/// `empty_cache` makes fails) is leaked and counted, never freed; the failure is parked
/// on its stream and returned once; the bytes leave `reserved` for `leaks`.
#[test]
fn emptying_a_block_whose_wait_fails_leaks_and_counts_it() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dev = device(A2);
    let s = dev.stream().unwrap();
    let x = DeviceTensor::from_array(&s, &Array2::<f32>::ones((4, 4))).unwrap();
    let mut y = DeviceTensor::<f32>::zeros(&s, [4, 4]).unwrap();
    mish(&x, y.view_mut(), &s).unwrap();
    drop(y); // queued work still writes it: cached with that use
    let (leaks, frees) = (dev.leaks(), dev.memory_stats().device_frees);
    ascend_sim::set_fault("aclrtSynchronizeStream", 1).unwrap();
    dev.empty_cache();
    ascend_sim::set_fault("aclrtSynchronizeStream", 0).unwrap();
    let after = dev.leaks();
    assert_eq!(after.allocations, leaks.allocations + 1);
    assert_eq!(after.bytes, leaks.bytes + 512);
    let st = dev.memory_stats();
    assert_eq!(st.device_frees, frees, "leaked, not freed");
    assert_eq!(st.reserved, st.allocated, "x's block is all that is held");
    assert!(s.synchronize().is_err(), "the parked failure, once");
    s.synchronize().unwrap();
    drop(x);
    dev.empty_cache();
    assert_eq!(dev.memory_stats().reserved, 0);
}

/// One step of a small regression (forward, loss, backward, update) twice: with the
/// allocating variants (every intermediate a new tensor, dropped at the end of the step)
/// and with preallocated outputs.
struct Model {
    x: DeviceTensor<f32>,
    t: DeviceTensor<f32>,
    w: DeviceTensor<f32>,
    b: DeviceTensor<f32>,
    one: DeviceTensor<f32>,
}

fn model(s: &ascendcl::Stream) -> Model {
    let xs = Array2::from_shape_fn((32, 8), |(i, j)| ((i * 8 + j) as f32 * 0.37).sin());
    let ts = Array2::from_shape_fn((32, 1), |(i, _)| (i as f32 * 0.11).cos());
    Model {
        x: DeviceTensor::from_array(s, &xs).unwrap(),
        t: DeviceTensor::from_array(s, &ts).unwrap(),
        w: DeviceTensor::from_array(s, &Array2::<f32>::from_elem((8, 1), 0.1)).unwrap(),
        b: DeviceTensor::from_array(s, &ndarray::arr1(&[0.0f32])).unwrap(),
        one: DeviceTensor::from_array(s, &ndarray::arr0(1.0f32)).unwrap(),
    }
}

fn allocating_step(m: &mut Model, s: &ascendcl::Stream, loss_out: &mut ndarray::Array0<f32>) {
    use ascendcl::*;
    let math = CubeMath::KeepDtype;
    let z: DeviceTensor<f32> = addmm_new(&m.b, &m.x, &m.w, 1.0, 1.0, math, s).unwrap();
    let h: DeviceTensor<f32> = mish_new(&z, s).unwrap();
    let loss: DeviceTensor<f32> = mse_loss_new(&h, &m.t, Reduction::Mean, s).unwrap();
    let dh: DeviceTensor<f32> =
        mse_loss_backward_new(&m.one, &h, &m.t, Reduction::Mean, s).unwrap();
    let dz: DeviceTensor<f32> = mish_backward_new(&dh, &z, s).unwrap();
    let dw: DeviceTensor<f32> = matmul_new(m.x.view().t(), &dz, math, s).unwrap();
    let db: DeviceTensor<f32> = reduce_sum_new(&dz, &[0], false, s).unwrap();
    let dw2: DeviceTensor<f32> = mul_new(&dw, &dw, s).unwrap();
    let step: DeviceTensor<f32> = add_new(&dw, &dw2, 0.01, s).unwrap();
    add_inplace(&mut m.w, &step, -0.1, s).unwrap();
    add_inplace(&mut m.b, &db, -0.1, s).unwrap();
    loss.copy_to_array(s, loss_out).unwrap();
}

/// The step without the matrix products, whose simulated kernels allocate packing
/// buffers on the simulator's worker thread (counted process-wide).
fn elementwise_step(m: &mut Model, s: &ascendcl::Stream, loss_out: &mut ndarray::Array0<f32>) {
    use ascendcl::*;
    let z: DeviceTensor<f32> = add_new(&m.t, &m.b, 1.0, s).unwrap();
    let h: DeviceTensor<f32> = mish_new(&z, s).unwrap();
    let loss: DeviceTensor<f32> = mse_loss_new(&h, &m.t, Reduction::Mean, s).unwrap();
    let dh: DeviceTensor<f32> =
        mse_loss_backward_new(&m.one, &h, &m.t, Reduction::Mean, s).unwrap();
    let dz: DeviceTensor<f32> = mish_backward_new(&dh, &z, s).unwrap();
    let sq: DeviceTensor<f32> = mul_new(&dz, &dz, s).unwrap();
    let db: DeviceTensor<f32> = reduce_sum_new(&sq, &[0], false, s).unwrap();
    add_inplace(&mut m.b, &db, -0.1, s).unwrap();
    loss.copy_to_array(s, loss_out).unwrap();
}

fn preallocated_step(m: &mut Model, s: &ascendcl::Stream, loss_out: &mut ndarray::Array0<f32>) {
    use ascendcl::*;
    let math = CubeMath::KeepDtype;
    let z0 = || DeviceTensor::<f32>::zeros(s, [32, 1]).unwrap();
    let (mut z, mut h, mut dh, mut dz) = (z0(), z0(), z0(), z0());
    let mut loss = DeviceTensor::<f32>::zeros(s, ndarray::Ix0()).unwrap();
    let (mut dw, mut dw2, mut step) = (
        DeviceTensor::<f32>::zeros(s, [8, 1]).unwrap(),
        DeviceTensor::<f32>::zeros(s, [8, 1]).unwrap(),
        DeviceTensor::<f32>::zeros(s, [8, 1]).unwrap(),
    );
    let mut db = DeviceTensor::<f32>::zeros(s, [1]).unwrap();
    addmm(&m.b, &m.x, &m.w, 1.0, 1.0, &mut z, math, s).unwrap();
    mish(&z, &mut h, s).unwrap();
    mse_loss(&h, &m.t, Reduction::Mean, &mut loss, s).unwrap();
    mse_loss_backward(&m.one, &h, &m.t, Reduction::Mean, &mut dh, s).unwrap();
    mish_backward(&dh, &z, &mut dz, s).unwrap();
    matmul(m.x.view().t(), &dz, &mut dw, math, s).unwrap();
    reduce_sum(&dz, &[0], false, &mut db, s).unwrap();
    mul(&dw, &dw, &mut dw2, s).unwrap();
    add(&dw, &dw2, 0.01, &mut step, s).unwrap();
    add_inplace(&mut m.w, &step, -0.1, s).unwrap();
    add_inplace(&mut m.b, &db, -0.1, s).unwrap();
    loss.copy_to_array(s, loss_out).unwrap();
}

/// 200 steps with the allocating variants of every operator: after warm-up 0
/// `aclrtMalloc` calls, and the parameters and losses of the same steps with
/// preallocated outputs, with 0 host heap allocations; 200 steps of the operators without
/// matrix products (whose simulated kernels allocate on the simulator's device threads)
/// make 0 heap allocations on any thread.
#[test]
fn two_hundred_steps_of_allocating_variants_allocate_nothing_and_match() {
    const WARM_UP: usize = 400;
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dev = device(A2);
    let s = dev.stream().unwrap();
    let (mut a, mut p) = (model(&s), model(&s));
    let (mut la, mut lp) = (ndarray::arr0(0.0f32), ndarray::arr0(0.0f32));
    // Warm-up: the cache's lists (free blocks, segments) grow to their steady size (4 host
    // allocations in the 200 steps after 100 warm-up steps; none in 3,000 after 400).
    for _ in 0..WARM_UP {
        allocating_step(&mut a, &s, &mut la);
    }
    let mallocs = ascend_sim::call_count("aclrtMalloc");
    let before = dev.memory_stats();
    let heap = host_and_device_during(|| {
        for _ in 0..200 {
            allocating_step(&mut a, &s, &mut la);
        }
    });
    // The simulator's device threads stand for the device (a GEMM's packing buffer per
    // matrix product); the host allocates nothing.
    assert_eq!(
        heap.host, 0,
        "host heap allocations over 200 steps: {heap:?}"
    );
    assert_eq!(
        ascend_sim::call_count("aclrtMalloc"),
        mallocs,
        "aclrtMalloc calls"
    );
    assert_eq!(
        dev.memory_stats().device_allocations,
        before.device_allocations
    );
    let mut e = model(&s);
    let mut le = ndarray::arr0(0.0f32);
    for _ in 0..WARM_UP {
        elementwise_step(&mut e, &s, &mut le);
    }
    let heap = host_and_device_during(|| {
        for _ in 0..200 {
            elementwise_step(&mut e, &s, &mut le);
        }
    });
    // Host threads only: a device thread's scratch may still grow.
    assert_eq!(
        heap.host, 0,
        "host heap allocations over 200 steps: {heap:?}"
    );
    assert!(le.into_scalar().is_finite());
    for _ in 0..WARM_UP + 200 {
        preallocated_step(&mut p, &s, &mut lp);
    }
    assert_eq!(la, lp, "the loss of the last step");
    assert_eq!(
        a.w.to_array::<ndarray::Ix2>(&s).unwrap(),
        p.w.to_array::<ndarray::Ix2>(&s).unwrap()
    );
    assert_eq!(
        a.b.to_array::<ndarray::Ix1>(&s).unwrap(),
        p.b.to_array::<ndarray::Ix1>(&s).unwrap()
    );
    assert_eq!(ascend_sim::last_report(), None);
}

/// The stream's staging buffer under held work. A staged upload (a transposed array) on a
/// held stream returns at once with its copy queued; the uploaded tensor, copied on the
/// device and dropped, drops without waiting. The staging buffer is not written again
/// before the held copy has read it: a second staged upload on that stream (another
/// thread) waits for the stream first, so the first tensor's values are not replaced by
/// the second's.
#[test]
fn a_staged_upload_is_not_overwritten_before_its_queued_copy_ran() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dev = device(A2);
    let s = dev.stream().unwrap();
    let ah = Array2::from_shape_fn((16, 8), |(i, j)| (i * 8 + j) as f32);
    let bh = Array2::from_shape_fn((16, 8), |(i, j)| -((i * 8 + j) as f32) - 1.0);
    s.synchronize().unwrap();
    let hold = ascend_sim::testing::hold_stream(s.as_raw()).unwrap();
    let a = DeviceTensor::from_array(&s, &ah.t()).unwrap();
    let keep = a.try_clone(&s).unwrap();
    drop(a);
    // Still held here: neither the upload nor the drop waited for the stream.
    let syncs = ascend_sim::call_count("aclrtSynchronizeStream");
    std::thread::scope(|sc| {
        let second = sc.spawn(|| DeviceTensor::from_array(&s, &bh.t()).unwrap());
        // Until the second upload has either waited for the stream or returned without
        // waiting (which would let it overwrite the staged data of the held copy).
        while ascend_sim::call_count("aclrtSynchronizeStream") == syncs && !second.is_finished() {
            std::thread::yield_now();
        }
        hold.release();
        let b = second.join().unwrap();
        assert_eq!(b.to_array(&s).unwrap(), bh.t().into_dyn());
    });
    assert_eq!(
        keep.to_array(&s).unwrap(),
        ah.t().into_dyn(),
        "the held copy read the first upload's data"
    );
    assert_eq!(ascend_sim::last_report(), None);
}

/// A plan dropped while its launch is held is parked; once the launch has run, the
/// stream's next `synchronize` releases its executor (no allocation, no `empty_cache`),
/// and a plan still parked when its device is dropped is released by that drop.
#[test]
fn parked_plans_go_on_synchronize_and_on_device_drop() {
    use ascendcl::MishPlan;
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let executors = ascend_sim::counters().executors;
    {
        let dev = device(A2);
        let s = dev.stream().unwrap();
        let x = DeviceTensor::from_array(&s, &Array2::<f32>::ones((4, 4))).unwrap();
        let mut y = DeviceTensor::<f32>::zeros(&s, [4, 4]).unwrap();
        let mut plan = MishPlan::new(&x, &y, &s).unwrap();
        s.synchronize().unwrap();
        let hold = ascend_sim::testing::hold_stream(s.as_raw()).unwrap();
        plan.launch(&x, &mut y, &s).unwrap();
        drop(plan);
        assert_eq!(ascend_sim::counters().executors, executors + 1, "parked");
        hold.release();
        s.synchronize().unwrap();
        assert_eq!(
            ascend_sim::counters().executors,
            executors,
            "released by the synchronisation"
        );
        // A second plan, parked, with the device's last handles dropped after its launch.
        let mut plan = MishPlan::new(&x, &y, &s).unwrap();
        let hold = ascend_sim::testing::hold_stream(s.as_raw()).unwrap();
        plan.launch(&x, &mut y, &s).unwrap();
        drop(plan);
        hold.release();
        assert_eq!(ascend_sim::counters().executors, executors + 1, "parked");
        let want = reference_mish(&Array2::<f32>::ones((4, 4)));
        let (mere, _) = mere_mare(&y.to_array(&s).unwrap(), &want);
        assert!(mere < threshold(ascendcl::DType::F32), "{mere}");
        // `to_array` drains the stream without `synchronize`: still parked.
        assert_eq!(ascend_sim::counters().executors, executors + 1);
        drop((x, y, s, dev));
    }
    assert_eq!(
        ascend_sim::counters().executors,
        executors,
        "released by the device's drop"
    );
    assert_eq!(ascend_sim::last_report(), None);
}

fn reference_mish(x: &Array2<f32>) -> ndarray::ArrayD<f32> {
    ascendcl::reference::mish(x.view()).unwrap().into_dyn()
}
