//! Descriptors are made once, not per call. With the device's executor cache on (the
//! default), a one-off call's descriptors belong to its cached executor: made at the first
//! call of a key, reused by every later one, released with the entry. With it off, the
//! `aclTensor` descriptor cached on a whole `DeviceTensor` serves instead: made once on
//! first use, shared by later (and concurrent) calls, never rebound by plans, kept with
//! the tensor's block in the device's cache when the tensor is dropped, handed to the next
//! tensor of the same layout there, and released when the cache lets the block go.

use ascendcl::{DeviceTensor, MishBackwardPlan, Runtime, Stream, mish_backward};
use ndarray::{ArrayD, IxDyn};
// The simulator's counters are process-wide: these tests take the binary's gate exclusive.
use crate::common::serial;

fn stream() -> Stream {
    crate::common::runtime()
        .device(0)
        .unwrap()
        .stream()
        .unwrap()
}

/// A stream on a device handle whose executor cache is off, so that one-off calls use
/// the descriptors cached on whole tensors.
fn stream_without_executor_cache() -> Stream {
    let s = stream();
    s.device().set_executor_cache_capacity(0);
    s
}

fn values(n: usize, seed: u32) -> ArrayD<f32> {
    ArrayD::from_shape_fn(IxDyn(&[n]), |i| {
        ((i[0] as u32).wrapping_mul(2654435761).wrapping_add(seed) % 1000) as f32 / 250.0 - 2.0
    })
}

fn reference(g: &ArrayD<f32>, x: &ArrayD<f32>) -> ArrayD<f32> {
    ascendcl::reference::mish_backward(g.view(), x.view()).unwrap()
}

fn assert_close(got: &ArrayD<f32>, want: &ArrayD<f32>, what: &str) {
    for (a, b) in got.iter().zip(want) {
        assert!(
            (a - b).abs() <= 1e-5 * b.abs().max(1.0),
            "{what}: {a} vs {b}"
        );
    }
}

#[test]
fn whole_tensors_create_their_descriptor_once_and_release_it_with_their_block() {
    let _serial = serial();
    let s = stream_without_executor_cache();
    let dev = s.device();
    dev.empty_cache();
    let base = ascend_sim::counters().tensors;
    let (gh, xh) = (values(64, 1), values(64, 2));
    let g = DeviceTensor::from_array(&s, &gh).unwrap();
    let x = DeviceTensor::from_array(&s, &xh).unwrap();
    let mut out = DeviceTensor::<f32>::zeros(&s, [64]).unwrap();
    let creates = ascend_sim::call_count("aclCreateTensor");
    mish_backward(&g, &x, &mut out, &s).unwrap();
    assert_eq!(ascend_sim::call_count("aclCreateTensor"), creates + 3);
    assert_eq!(ascend_sim::counters().tensors, base + 3, "three cached");
    for _ in 0..10 {
        mish_backward(&g, &x, &mut out, &s).unwrap();
    }
    assert_eq!(
        ascend_sim::call_count("aclCreateTensor"),
        creates + 3,
        "reused, not recreated"
    );
    // A view with a layout of its own gets a per-call descriptor, destroyed after the call.
    let first_half = x.view().slice(0, 0, 32, 1).unwrap();
    let mut half_out = DeviceTensor::<f32>::zeros(&s, [32]).unwrap();
    let gv = g.view().slice(0, 0, 32, 1).unwrap();
    mish_backward(gv, first_half, &mut half_out, &s).unwrap();
    assert_eq!(ascend_sim::call_count("aclCreateTensor"), creates + 6);
    assert_eq!(
        ascend_sim::counters().tensors,
        base + 4,
        "+ half_out's cached"
    );
    assert_close(&out.to_array(&s).unwrap(), &reference(&gh, &xh), "whole");
    drop(out);
    assert_eq!(
        ascend_sim::counters().tensors,
        base + 4,
        "kept with out's cached block"
    );
    dev.empty_cache();
    assert_eq!(
        ascend_sim::counters().tensors,
        base + 3,
        "released with out's block"
    );
    drop((g, x, half_out));
    dev.empty_cache();
    assert_eq!(ascend_sim::counters().tensors, base);
    s.synchronize().unwrap();
}

/// A tensor that takes a dropped tensor's block gets its descriptor when its layout is
/// the same (no `aclCreateTensor`), and a fresh one otherwise (the old one destroyed); the
/// results are right either way.
#[test]
fn a_cached_block_hands_its_descriptor_to_a_tensor_of_the_same_layout() {
    let _serial = serial();
    let s = stream_without_executor_cache();
    let dev = s.device();
    dev.empty_cache();
    let base = ascend_sim::counters().tensors;
    let (gh, xh) = (values(64, 8), values(64, 9));
    let g = DeviceTensor::from_array(&s, &gh).unwrap();
    let x = DeviceTensor::from_array(&s, &xh).unwrap();
    let mut out = DeviceTensor::<f32>::zeros(&s, [64]).unwrap();
    mish_backward(&g, &x, &mut out, &s).unwrap();
    s.synchronize().unwrap();
    drop(out);
    let creates = ascend_sim::call_count("aclCreateTensor");
    let hits = dev.memory_stats().cache_hits;
    let mut same = DeviceTensor::<f32>::zeros(&s, [64]).unwrap();
    mish_backward(&g, &x, &mut same, &s).unwrap();
    assert_eq!(dev.memory_stats().cache_hits, hits + 1, "out's block");
    assert_eq!(
        ascend_sim::call_count("aclCreateTensor"),
        creates,
        "out's descriptor handed over"
    );
    assert_eq!(ascend_sim::counters().tensors, base + 3);
    assert_close(&same.to_array(&s).unwrap(), &reference(&gh, &xh), "same");
    s.synchronize().unwrap();
    drop(same);
    // Another layout of the same size class: the old descriptor goes, a new one is made.
    let mut other = DeviceTensor::<f32>::zeros(&s, [8, 8]).unwrap();
    let (g2, x2) = (
        DeviceTensor::from_array(&s, &gh.clone().into_shape_with_order((8, 8)).unwrap()).unwrap(),
        DeviceTensor::from_array(&s, &xh.clone().into_shape_with_order((8, 8)).unwrap()).unwrap(),
    );
    let creates = ascend_sim::call_count("aclCreateTensor");
    mish_backward(&g2, &x2, &mut other, &s).unwrap();
    assert_eq!(ascend_sim::call_count("aclCreateTensor"), creates + 3);
    assert_eq!(
        ascend_sim::counters().tensors,
        base + 5,
        "g, x, g2, x2, other"
    );
    let want = reference(&gh, &xh)
        .into_shape_with_order(IxDyn(&[8, 8]))
        .unwrap();
    assert_close(&other.to_array(&s).unwrap(), &want, "other");
    drop((g, x, g2, x2, other));
    dev.empty_cache();
    assert_eq!(ascend_sim::counters().tensors, base);
    assert_eq!(ascend_sim::last_report(), None);
}

#[test]
fn concurrent_calls_share_input_descriptors() {
    let _serial = serial();
    let s = stream_without_executor_cache();
    s.device().empty_cache();
    let base = ascend_sim::counters().tensors;
    ascend_sim::clear_last_report();
    let (gh, xh) = (values(256, 3), values(256, 4));
    let want = reference(&gh, &xh);
    {
        let g = DeviceTensor::from_array(&s, &gh).unwrap();
        let x = DeviceTensor::from_array(&s, &xh).unwrap();
        s.synchronize().unwrap();
        // No call yet: the threads race to create and install the shared descriptors.
        std::thread::scope(|sc| {
            for _ in 0..4 {
                sc.spawn(|| {
                    let my = g.view().device_id();
                    let dev = Runtime::simulator().unwrap().device(my).unwrap();
                    dev.set_executor_cache_capacity(0);
                    let st = dev.stream().unwrap();
                    let mut out = DeviceTensor::<f32>::zeros(&st, [256]).unwrap();
                    for _ in 0..50 {
                        mish_backward(&g, &x, &mut out, &st).unwrap();
                    }
                    assert_close(&out.to_array(&st).unwrap(), &want, "thread");
                });
            }
        });
        // g, x: one descriptor each, whichever thread won (and the outputs' in the
        // cache, with their blocks).
        s.device().empty_cache();
        assert_eq!(ascend_sim::counters().tensors, base + 2);
    }
    s.device().empty_cache();
    assert_eq!(ascend_sim::counters().tensors, base);
    assert_eq!(ascend_sim::last_report(), None);
}

#[test]
fn plans_never_rebind_a_cached_descriptor() {
    let _serial = serial();
    let s = stream_without_executor_cache();
    let (ah, bh, xh) = (values(48, 5), values(48, 6), values(48, 7));
    let a = DeviceTensor::from_array(&s, &ah).unwrap();
    let b = DeviceTensor::from_array(&s, &bh).unwrap();
    let x = DeviceTensor::from_array(&s, &xh).unwrap();
    let mut out_a = DeviceTensor::<f32>::zeros(&s, [48]).unwrap();
    let mut out_b = DeviceTensor::<f32>::zeros(&s, [48]).unwrap();
    let mut out_c = DeviceTensor::<f32>::zeros(&s, [48]).unwrap();
    mish_backward(&a, &x, &mut out_a, &s).unwrap(); // caches a's, x's, out_a's
    let mut plan = MishBackwardPlan::new(&a, &x, &out_a, &s).unwrap();
    assert!(plan.is_reusable());
    let rebinds = ascend_sim::call_count("aclSetInputTensorAddr");
    plan.launch(&a, &x, &mut out_a, &s).unwrap();
    assert_eq!(
        ascend_sim::call_count("aclSetInputTensorAddr"),
        rebinds,
        "same addresses: nothing rebound"
    );
    plan.launch(&b, &x, &mut out_b, &s).unwrap(); // rebinds the plan's own descriptors
    assert_eq!(ascend_sim::call_count("aclSetInputTensorAddr"), rebinds + 1);
    mish_backward(&a, &x, &mut out_c, &s).unwrap(); // a's cached descriptor: still a
    plan.launch(&a, &x, &mut out_a, &s).unwrap();
    assert_close(&out_c.to_array(&s).unwrap(), &reference(&ah, &xh), "safe a");
    assert_close(&out_b.to_array(&s).unwrap(), &reference(&bh, &xh), "plan b");
    assert_close(&out_a.to_array(&s).unwrap(), &reference(&ah, &xh), "plan a");
}

#[test]
fn with_the_executor_cache_on_a_key_makes_its_descriptors_once() {
    let _serial = serial();
    let s = stream();
    let dev = s.device();
    dev.set_executor_cache_capacity(64);
    dev.empty_cache();
    ascend_sim::clear_last_report();
    let base = ascend_sim::counters().tensors;
    let (gh, xh) = (values(64, 8), values(64, 9));
    let g = DeviceTensor::from_array(&s, &gh).unwrap();
    let x = DeviceTensor::from_array(&s, &xh).unwrap();
    let mut out = DeviceTensor::<f32>::zeros(&s, [64]).unwrap();
    let creates = ascend_sim::call_count("aclCreateTensor");
    let hits = dev.executor_cache_stats().hits;
    mish_backward(&g, &x, &mut out, &s).unwrap();
    // The entry's own three, not the tensors' cached ones.
    assert_eq!(ascend_sim::call_count("aclCreateTensor"), creates + 3);
    assert_eq!(
        ascend_sim::counters().tensors,
        base + 3,
        "held by the entry"
    );
    for _ in 0..10 {
        mish_backward(&g, &x, &mut out, &s).unwrap();
    }
    assert_eq!(
        ascend_sim::call_count("aclCreateTensor"),
        creates + 3,
        "hits make none"
    );
    assert_eq!(dev.executor_cache_stats().hits, hits + 10);
    // Other tensors of the same layouts hit the same entry (a rebind, no descriptor).
    let g2 = DeviceTensor::from_array(&s, &xh).unwrap();
    let mut out2 = DeviceTensor::<f32>::zeros(&s, [64]).unwrap();
    mish_backward(&g2, &x, &mut out2, &s).unwrap();
    assert_eq!(ascend_sim::call_count("aclCreateTensor"), creates + 3);
    assert_close(&out2.to_array(&s).unwrap(), &reference(&xh, &xh), "rebound");
    // A view of another layout is another key: one more entry with its own three.
    let half = x.view().slice(0, 0, 32, 1).unwrap();
    let mut half_out = DeviceTensor::<f32>::zeros(&s, [32]).unwrap();
    mish_backward(
        g.view().slice(0, 0, 32, 1).unwrap(),
        half,
        &mut half_out,
        &s,
    )
    .unwrap();
    assert_eq!(ascend_sim::call_count("aclCreateTensor"), creates + 6);
    assert_eq!(ascend_sim::counters().tensors, base + 6);
    assert_close(&out.to_array(&s).unwrap(), &reference(&gh, &xh), "whole");
    // Turning the cache off releases the entries, with their descriptors, once their
    // launches have run.
    s.synchronize().unwrap();
    dev.set_executor_cache_capacity(0);
    drop((g, g2, x, out, out2, half_out));
    dev.empty_cache();
    assert_eq!(ascend_sim::counters().tensors, base);
    assert_eq!(ascend_sim::last_report(), None);
}
