//! Reuse and release of cached blocks under queued work: emptying never frees memory
//! that queued work still uses, a stream reuses its own freed blocks at once, idle pieces
//! merge back, a lost stream's blocks are not handed out, and one device has one cache.

use super::SERIAL;
use crate::common::*;
use ascendcl::{Device, DeviceTensor, mish, mish_inplace};
use ndarray::Array2;

/// A 4 MiB cached block, still written by held work on stream `h1`, is split: `t` (an
/// upload queued on held stream `h2`) takes one half. On another thread `empty` then
/// empties the cache (directly, or through an allocation that runs out of memory): it
/// takes the free half and waits for `h1` outside the lock. Meanwhile `t` is dropped with
/// its upload still queued. Once `h1` is released the emptying ends, and it must not free
/// the segment: `t`'s half still has queued work. The segment goes once that work ran.
fn emptying_keeps_a_segment_whose_returned_piece_has_queued_work(
    empty: impl FnOnce(&Device) + Send,
) {
    let dev = device(A2);
    dev.set_caching(true);
    dev.empty_cache();
    let (h1, h2) = (dev.stream().unwrap(), dev.stream().unwrap());
    let xs = Array2::from_shape_fn((4, 1024), |(i, j)| (i as f32 - j as f32) * 0.001);
    let x = DeviceTensor::from_array(&h1, &xs).unwrap();
    let mut y = DeviceTensor::<f32>::zeros(&h1, [1024, 1024]).unwrap();
    h1.synchronize().unwrap();
    let hold1 = ascend_sim::testing::hold_stream(h1.as_raw()).unwrap();
    // Through a view: the block keeps no descriptor, so it may be split under the work.
    mish(&x, y.view_mut().slice(0, 0, 4, 1).unwrap(), &h1).unwrap();
    drop(y);
    let before = dev.memory_stats();
    let hold2 = ascend_sim::testing::hold_stream(h2.as_raw()).unwrap();
    let th = Array2::<f32>::from_elem((512, 1024), 2.0);
    let t = DeviceTensor::from_array(&h2, &th).unwrap();
    let split = dev.memory_stats();
    assert_eq!(split.splits, before.splits + 1, "t is half of y's block");
    assert_eq!(split.device_allocations, before.device_allocations);
    let syncs = ascend_sim::call_count("aclrtSynchronizeStream");
    std::thread::scope(|sc| {
        let emptier = sc.spawn(|| empty(&dev));
        // Until the emptying thread waits for `h1` (the free half's work).
        while ascend_sim::call_count("aclrtSynchronizeStream") == syncs {
            assert!(!emptier.is_finished(), "the emptying did not wait for h1");
            std::thread::yield_now();
        }
        drop(t); // its upload is still queued behind `hold2`
        hold1.release();
        emptier.join().unwrap();
    });
    assert_eq!(
        ascend_sim::last_report(),
        None,
        "no allocation freed under queued work"
    );
    hold2.release();
    h2.synchronize().unwrap();
    h1.synchronize().unwrap();
    drop(x);
    dev.empty_cache();
    let end = dev.memory_stats();
    assert_eq!((end.allocated, end.reserved), (0, 0));
    assert_eq!(ascend_sim::last_report(), None);
}

#[test]
fn empty_cache_keeps_a_segment_whose_returned_piece_has_queued_work() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    emptying_keeps_a_segment_whose_returned_piece_has_queued_work(|dev| dev.empty_cache());
}

#[test]
fn an_out_of_memory_retry_keeps_a_segment_whose_returned_piece_has_queued_work() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    emptying_keeps_a_segment_whose_returned_piece_has_queued_work(|dev| {
        let s = dev.stream().unwrap();
        // The first aclrtMalloc fails: the allocator empties the cache and retries.
        ascend_sim::set_fault("aclrtMalloc", 1).unwrap();
        let big = DeviceTensor::<f32>::zeros(&s, [4096, 1024]);
        ascend_sim::set_fault("aclrtMalloc", 0).unwrap();
        // The only cached segment cannot be freed (its other piece came back with queued
        // work), so the allocation may fail: out of memory, typed.
        if let Err(e) = big {
            assert!(matches!(e, ascendcl::Error::Acl { .. }), "{e}");
        }
    });
}

/// 200 rounds of upload, in-place kernel and drop on one stream with no synchronisation:
/// each round's upload takes the block the round before dropped (its work runs first on
/// that stream), so after warm-up no `aclrtMalloc` is made, and the values are right.
#[test]
fn a_stream_reuses_the_blocks_it_freed_without_a_synchronisation() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dev = device(A2);
    dev.set_caching(true);
    let s = dev.stream().unwrap();
    let xs = Array2::from_shape_fn((64, 64), |(i, j)| (i as f32 - j as f32) * 0.03);
    let round = || {
        let mut t = DeviceTensor::from_array(&s, &xs).unwrap();
        mish_inplace(&mut t, &s).unwrap();
        t
    };
    for _ in 0..20 {
        drop(round());
    }
    let mallocs = ascend_sim::call_count("aclrtMalloc");
    let before = dev.memory_stats();
    for _ in 0..200 {
        drop(round());
    }
    let made = ascend_sim::call_count("aclrtMalloc") - mallocs;
    let after = dev.memory_stats();
    eprintln!(
        "200 unsynchronised rounds: {made} aclrtMalloc, {} cache hits",
        after.cache_hits - before.cache_hits
    );
    assert_eq!(made, 0, "aclrtMalloc calls over 200 rounds");
    assert_eq!(after.device_allocations, before.device_allocations);
    let last = round();
    let want = ascendcl::reference::mish(xs.view()).unwrap().into_dyn();
    let (mere, _) = mere_mare(&last.to_array(&s).unwrap(), &want);
    assert!(mere < threshold(ascendcl::DType::F32), "{mere}");
    assert_eq!(ascend_sim::last_report(), None);
}

/// Two pieces of one segment dropped with a descriptor and queued work stay apart; once
/// a synchronisation proved that work finished, they merge again: a request of the whole
/// segment is served from the cache.
#[test]
fn idle_pieces_merge_after_a_synchronisation() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dev = device(A2);
    dev.set_caching(true);
    dev.empty_cache();
    let s = dev.stream().unwrap();
    drop(DeviceTensor::<f32>::zeros(&s, [16384]).unwrap()); // one 64 KiB segment
    let ones = Array2::<f32>::ones((64, 64));
    let mut a = DeviceTensor::from_array(&s, &ones).unwrap();
    let mut b = DeviceTensor::from_array(&s, &ones).unwrap();
    s.synchronize().unwrap();
    let hold = ascend_sim::testing::hold_stream(s.as_raw()).unwrap();
    mish_inplace(&mut a, &s).unwrap();
    mish_inplace(&mut b, &s).unwrap();
    drop((a, b));
    hold.release();
    s.synchronize().unwrap();
    let before = dev.memory_stats();
    assert_eq!(before.reserved, 65536);
    // Apart until then: the figures show the fragmentation.
    assert_eq!(before.free_bytes, 65536);
    assert_eq!((before.free_pieces, before.largest_free), (3, 32768));
    let whole = DeviceTensor::<f32>::zeros(&s, [16384]).unwrap();
    let after = dev.memory_stats();
    assert_eq!(
        after.device_allocations, before.device_allocations,
        "served by the merged pieces"
    );
    assert_eq!(after.reserved, 65536);
    drop(whole);
    dev.empty_cache();
    assert_eq!(dev.memory_stats().reserved, 0);
    assert_eq!(ascend_sim::last_report(), None);
}

/// A stream dropped after its drain failed leaves blocks whose work can never be proved
/// finished. New tensors of their size on a live stream still work: such a block is not
/// handed out (it is leaked, counted, when the cache is emptied).
#[test]
fn blocks_of_a_stream_lost_in_a_failed_drain_are_not_handed_out() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dev = device(A2);
    dev.set_caching(true);
    dev.empty_cache();
    let (s, lost) = (dev.stream().unwrap(), dev.stream().unwrap());
    let xs = Array2::from_shape_fn((16, 16), |(i, j)| (i * 16 + j) as f32 * 0.01);
    let x = DeviceTensor::from_array(&lost, &xs.slice(ndarray::s![..8, ..])).unwrap();
    let mut y = DeviceTensor::<f32>::zeros(&lost, [16, 16]).unwrap();
    mish(&x, y.view_mut().slice(0, 0, 8, 1).unwrap(), &lost).unwrap();
    ascend_sim::set_fault("aclrtSynchronizeStream", 1).unwrap();
    drop(lost); // its drain fails: its queued work may still run
    ascend_sim::set_fault("aclrtSynchronizeStream", 0).unwrap();
    drop((x, y));
    for round in 0..3 {
        let t = DeviceTensor::from_array(&s, &xs);
        let t = t.unwrap_or_else(|e| panic!("round {round}: upload: {e}"));
        let got = t.to_array(&s);
        let got = got.unwrap_or_else(|e| panic!("round {round}: download: {e}"));
        assert_eq!(got, xs.clone().into_dyn());
        let mut z = DeviceTensor::<f32>::zeros(&s, [16, 16]).unwrap();
        mish(&t, &mut z, &s).unwrap();
        s.synchronize().unwrap();
    }
    let leaks = dev.leaks();
    dev.empty_cache();
    assert!(
        dev.leaks().bytes > leaks.bytes,
        "the lost blocks are leaked"
    );
    let st = dev.memory_stats();
    assert_eq!((st.allocated, st.reserved), (0, 0));
}

/// Two handles of one device share its cache: a block dropped through one serves the
/// other without an `aclrtMalloc`, and an allocation through one that runs out of memory
/// frees the other's cached memory before it retries.
#[test]
fn two_handles_of_one_device_share_one_cache() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let (d1, d2) = (device(A2), device(A2));
    let (s1, s2) = (d1.stream().unwrap(), d2.stream().unwrap());
    d1.empty_cache();
    d2.empty_cache();
    drop(DeviceTensor::<f32>::zeros(&s1, [1 << 20]).unwrap());
    s1.synchronize().unwrap();
    let frees = ascend_sim::call_count("aclrtFree");
    // The first aclrtMalloc fails: only d1 holds cached memory.
    ascend_sim::set_fault("aclrtMalloc", 1).unwrap();
    let big = DeviceTensor::<f32>::zeros(&s2, [4 << 20]);
    ascend_sim::set_fault("aclrtMalloc", 0).unwrap();
    let big = big.expect("retried after emptying the device's cache");
    assert!(
        ascend_sim::call_count("aclrtFree") > frees,
        "d1's block freed"
    );
    drop(big);
    s2.synchronize().unwrap();
    let mallocs = ascend_sim::call_count("aclrtMalloc");
    let t = DeviceTensor::<f32>::zeros(&s1, [4 << 20]).unwrap();
    assert_eq!(
        ascend_sim::call_count("aclrtMalloc"),
        mallocs,
        "d2's block serves d1"
    );
    drop(t);
    d1.empty_cache();
    d2.empty_cache();
    assert_eq!(d1.memory_stats().reserved, 0);
    assert_eq!(d2.memory_stats().reserved, 0);
    assert_eq!(ascend_sim::last_report(), None);
}
