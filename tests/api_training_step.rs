//! A two-layer MLP regression with Mish trained on the device
//! through plans — forward (addmm, mish, addmm), loss (mse_loss, mean), backward
//! (mse_loss_backward, matmul on transposed views, reduce_sum for the bias gradients,
//! mish_backward) and the SGD update (add_inplace with alpha = −lr) — for 200 steps after
//! warm-up: 0 heap allocations on every host thread, 0 device and 0 pinned allocations, the loss
//! falls, and the parameters agree with the same steps computed on the CPU with
//! `ascendcl::reference`, by the precision standard.

mod common;

use ascendcl::reference as r;
use ascendcl::*;
use common::counting::{
    Counting, SimCalls, assert_mlp_steps_allocate_on_no_host_thread, host_and_device_during,
};
use common::*;
use ndarray::{ArrayD, Ix2, IxDyn, arr0};

#[global_allocator]
static GLOBAL: Counting = Counting;

const BATCH: usize = 16;
const IN: usize = 8;
const HIDDEN: usize = 16;
const OUT: usize = 4;
const WARM_UP: usize = 20;
const STEPS: usize = 200;
const LR: f64 = 0.05;

/// The parameters, on the host.
#[derive(Clone)]
struct Params {
    w1: ArrayD<f32>,
    b1: ArrayD<f32>,
    w2: ArrayD<f32>,
    b2: ArrayD<f32>,
}

fn two(a: &ArrayD<f32>) -> ndarray::ArrayView2<'_, f32> {
    a.view().into_dimensionality::<Ix2>().unwrap()
}

/// One step on the CPU with the references, in the device's order; returns the loss.
fn cpu_step(p: &mut Params, x: &ArrayD<f32>, y: &ArrayD<f32>) -> f32 {
    let keep = CubeMath::KeepDtype;
    let h = r::addmm(p.b1.view(), two(x), two(&p.w1), 1, 1, keep)
        .unwrap()
        .into_dyn();
    let a = r::mish(h.view()).unwrap();
    let pred = r::addmm(p.b2.view(), two(&a), two(&p.w2), 1, 1, keep)
        .unwrap()
        .into_dyn();
    let loss = r::mse_loss(pred.view(), y.view(), Reduction::Mean).unwrap();
    let one = arr0(1.0f32).into_dyn();
    let dp = r::mse_loss_backward(one.view(), pred.view(), y.view(), Reduction::Mean).unwrap();
    let dw2 = r::matmul(a.view().t(), dp.view(), keep).unwrap();
    let db2 = r::reduce_sum(dp.view(), &[0], false).unwrap();
    let da = r::matmul(dp.view(), p.w2.view().t(), keep).unwrap();
    let dh = r::mish_backward(da.view(), h.view()).unwrap();
    let dw1 = r::matmul(x.view().t(), dh.view(), keep).unwrap();
    let db1 = r::reduce_sum(dh.view(), &[0], false).unwrap();
    for (w, g) in [
        (&mut p.w1, &dw1),
        (&mut p.b1, &db1),
        (&mut p.w2, &dw2),
        (&mut p.b2, &db2),
    ] {
        *w = r::add(w.view(), g.view(), -LR).unwrap();
    }
    loss[[]]
}

#[test]
fn two_hundred_training_steps_on_the_device_through_plans() {
    let _leaks = LeakCheck::start();
    ascend_sim::clear_last_report();
    let dev = device(A2);
    let s = dev.stream().unwrap();
    let math = CubeMath::default_for_device(&dev);
    assert_eq!(math, CubeMath::KeepDtype);
    // A fixed regression task: y = sin(x·A).
    let x = array::<f32>(&[BATCH, IN], 1, -1.0, 1.0);
    let mix = array::<f32>(&[IN, OUT], 2, -1.0, 1.0);
    let y = r::matmul(x.view(), mix.view(), math)
        .unwrap()
        .mapv(f32::sin);
    let scale = |fan_in: usize| 1.0 / (fan_in as f32).sqrt();
    let mut cpu = Params {
        w1: array::<f32>(&[IN, HIDDEN], 3, -scale(IN), scale(IN)),
        b1: array::<f32>(&[HIDDEN], 4, -0.1, 0.1),
        w2: array::<f32>(&[HIDDEN, OUT], 5, -scale(HIDDEN), scale(HIDDEN)),
        b2: array::<f32>(&[OUT], 6, -0.1, 0.1),
    };
    let up = |a: &ArrayD<f32>| DeviceTensor::from_array(&s, a).unwrap();
    let zeros = |shape: &[usize]| DeviceTensor::<f32>::zeros(&s, shape).unwrap();
    let (dx, dy) = (up(&x), up(&y));
    let (mut w1, mut b1, mut w2, mut b2) = (up(&cpu.w1), up(&cpu.b1), up(&cpu.w2), up(&cpu.b2));
    let (mut h, mut a, mut pred) = (
        zeros(&[BATCH, HIDDEN]),
        zeros(&[BATCH, HIDDEN]),
        zeros(&[BATCH, OUT]),
    );
    let (mut loss, one) = (zeros(&[]), up(&arr0(1.0f32).into_dyn()));
    let (mut dp, mut da, mut dh) = (
        zeros(&[BATCH, OUT]),
        zeros(&[BATCH, HIDDEN]),
        zeros(&[BATCH, HIDDEN]),
    );
    let (mut dw1, mut db1, mut dw2, mut db2) = (
        zeros(&[IN, HIDDEN]),
        zeros(&[HIDDEN]),
        zeros(&[HIDDEN, OUT]),
        zeros(&[OUT]),
    );

    // Every launch of a step, planned once.
    let mut fc1 = AddmmPlan::new(&b1, &dx, &w1, 1.0, 1.0, &h, math, &s).unwrap();
    let mut act = MishPlan::new(&h, &a, &s).unwrap();
    let mut fc2 = AddmmPlan::new(&b2, &a, &w2, 1.0, 1.0, &pred, math, &s).unwrap();
    let mut mse = MseLossPlan::new(&pred, &dy, Reduction::Mean, &loss, &s).unwrap();
    let mut mse_back =
        MseLossBackwardPlan::new(&one, &pred, &dy, Reduction::Mean, &dp, &s).unwrap();
    let mut g_w2 = MatmulPlan::new(a.view().t(), &dp, &dw2, math, &s).unwrap();
    let mut g_b2 = ReduceSumPlan::new(&dp, &[0], false, &db2, &s).unwrap();
    let mut g_a = MatmulPlan::new(&dp, w2.view().t(), &da, math, &s).unwrap();
    let mut g_h = MishBackwardPlan::new(&da, &h, &dh, &s).unwrap();
    let mut g_w1 = MatmulPlan::new(dx.view().t(), &dh, &dw1, math, &s).unwrap();
    let mut g_b1 = ReduceSumPlan::new(&dh, &[0], false, &db1, &s).unwrap();
    let mut sgd_w1 = InplaceAddPlan::new(&w1, &dw1, -LR, &s).unwrap();
    let mut sgd_b1 = InplaceAddPlan::new(&b1, &db1, -LR, &s).unwrap();
    let mut sgd_w2 = InplaceAddPlan::new(&w2, &dw2, -LR, &s).unwrap();
    let mut sgd_b2 = InplaceAddPlan::new(&b2, &db2, -LR, &s).unwrap();

    let mut loss_host = ArrayD::<f32>::zeros(IxDyn(&[]));
    let mut losses = [0.0f32; 8];
    let mut step = |i: usize, losses: &mut [f32; 8]| {
        fc1.launch(&b1, &dx, &w1, &mut h, &s).unwrap();
        act.launch(&h, &mut a, &s).unwrap();
        fc2.launch(&b2, &a, &w2, &mut pred, &s).unwrap();
        mse.launch(&pred, &dy, &mut loss, &s).unwrap();
        mse_back.launch(&one, &pred, &dy, &mut dp, &s).unwrap();
        g_w2.launch(a.view().t(), &dp, &mut dw2, &s).unwrap();
        g_b2.launch(&dp, &mut db2, &s).unwrap();
        g_a.launch(&dp, w2.view().t(), &mut da, &s).unwrap();
        g_h.launch(&da, &h, &mut dh, &s).unwrap();
        g_w1.launch(dx.view().t(), &dh, &mut dw1, &s).unwrap();
        g_b1.launch(&dh, &mut db1, &s).unwrap();
        sgd_w1.launch(&mut w1, &dw1, &s).unwrap();
        sgd_b1.launch(&mut b1, &db1, &s).unwrap();
        sgd_w2.launch(&mut w2, &dw2, &s).unwrap();
        sgd_b2.launch(&mut b2, &db2, &s).unwrap();
        // The host reads only the loss, every 30 steps (and waits for each step, so
        // that the simulator's queue stays as short as in warm-up).
        if i.is_multiple_of(30) {
            loss.copy_to_array(&s, &mut loss_host).unwrap();
            losses[(i / 30) % 8] = loss_host[[]];
        } else {
            s.synchronize().unwrap();
        }
    };
    let mut cpu_losses = Vec::new();
    for i in 0..WARM_UP {
        step(i, &mut losses);
    }
    for _ in 0..WARM_UP {
        cpu_losses.push(cpu_step(&mut cpu, &x, &y));
    }
    let calls = SimCalls::now(&["aclnnAddmmGetWorkspaceSize", "aclnnAddmm"]);
    let heap = host_and_device_during(|| {
        for i in WARM_UP..WARM_UP + STEPS {
            step(i, &mut losses);
        }
    });
    assert_mlp_steps_allocate_on_no_host_thread(heap, STEPS);
    calls.assert_no_memory_allocated();
    assert_eq!(
        calls.since("aclnnAddmmGetWorkspaceSize"),
        0,
        "plans: no phase 1"
    );
    assert_eq!(calls.since("aclnnAddmm"), 2 * STEPS as u64);
    for _ in 0..STEPS {
        cpu_losses.push(cpu_step(&mut cpu, &x, &y));
    }
    // The loss fell, on the device and on the CPU alike.
    loss.copy_to_array(&s, &mut loss_host).unwrap();
    let (first, last) = (losses[0], loss_host[[]]);
    println!(
        "loss {first} -> {last} over {} steps; heap allocations {heap:?}",
        WARM_UP + STEPS
    );
    assert!(last < 0.5 * first, "device loss {first} -> {last}");
    assert!((last - cpu_losses[cpu_losses.len() - 1]).abs() <= 1e-3 * last.abs().max(1e-3));
    // Step 0's loss (read on the device) is the CPU's step 0 loss.
    assert!(
        (first - cpu_losses[0]).abs() <= 1e-5 * first.abs(),
        "{first} vs {}",
        cpu_losses[0]
    );
    // The parameters agree with the CPU's by the precision standard.
    for (name, dev, host) in [
        ("w1", &w1, &cpu.w1),
        ("b1", &b1, &cpu.b1),
        ("w2", &w2, &cpu.w2),
        ("b2", &b2, &cpu.b2),
    ] {
        let got = dev.to_array(&s).unwrap();
        assert_precise(&got, host, threshold(DType::F32), name);
    }
    drop((
        fc1, act, fc2, mse, mse_back, g_w2, g_b2, g_a, g_h, g_w1, g_b1,
    ));
    drop((sgd_w1, sgd_b1, sgd_w2, sgd_b2));
    assert_eq!(ascend_sim::last_report(), None);
}
