//! Lifetimes around collectives, on the simulator: buffers of a queued collective stay
//! allocated until it has run, a communicator dropped with queued collectives waits for
//! them before `HcclCommDestroy`, every drop order of communicator, stream, buffers and
//! device releases everything, and nothing leaks (the simulator's objects and HCCL's
//! communicators back where they were, no finding).

use crate::hccl_common;
#[path = "../common/orders.rs"]
mod orders;

use ascendcl::hccl::{Communicator, ReduceOp};
use ascendcl::{DeviceTensor, Runtime};
use hccl_common::*;
use ndarray::arr1;
use orders::permutations;
use std::time::{Duration, Instant};

fn rt() -> Runtime {
    runtime_with(FOUR_A2, None)
}

const HOLD: Duration = Duration::from_millis(150);

#[test]
fn dropping_buffers_of_a_queued_collective_waits_for_it() {
    let _leaks = LeakCheck::start(rt());
    let comms = Communicator::init_all(&devices(rt(), &[0, 1])).unwrap();
    let results = on_ranks(&comms, |comm, stream| {
        // Rank 1's stream is busy for a while: the collective cannot run before.
        let hold =
            (comm.rank() == 1).then(|| ascend_sim::testing::hold_stream(stream.as_raw()).unwrap());
        let send = DeviceTensor::from_array(stream, &arr1(&[comm.rank() as f32 + 1.0; 3])).unwrap();
        let mut recv = DeviceTensor::<f32>::zeros(stream, [3]).unwrap();
        comm.all_reduce(&send, &mut recv, ReduceOp::Sum, stream)
            .unwrap();
        if let Some(hold) = hold {
            std::thread::sleep(HOLD);
            hold.release();
            recv.to_array::<ndarray::IxDyn>(stream)
                .unwrap()
                .into_iter()
                .collect()
        } else {
            // Rank 0 drops its buffers at once: the drops return (the device's cache
            // keeps the blocks) and freeing them waits for the collective.
            let started = Instant::now();
            drop(send);
            drop(recv);
            stream.device().empty_cache();
            assert!(started.elapsed() >= HOLD / 2, "{:?}", started.elapsed());
            Vec::new()
        }
    });
    assert_eq!(results[1], [3.0; 3]);
}

#[test]
fn a_communicator_dropped_with_queued_collectives_is_destroyed_after_them() {
    let _leaks = LeakCheck::start(rt());
    let comms = Communicator::init_all(&devices(rt(), &[2, 3])).unwrap();
    let mut slots: Vec<Option<Communicator>> = comms.into_iter().map(Some).collect();
    std::thread::scope(|s| {
        for slot in &mut slots {
            s.spawn(move || {
                let comm = slot.take().unwrap();
                let stream = comm.device().stream().unwrap();
                let hold = ascend_sim::testing::hold_stream(stream.as_raw()).unwrap();
                let mut buf = DeviceTensor::from_array(&stream, &arr1(&[1.0f32, 2.0])).unwrap();
                comm.broadcast(&mut buf, 0, &stream).unwrap();
                comm.barrier(&stream).unwrap();
                let releaser = std::thread::spawn(move || {
                    std::thread::sleep(HOLD);
                    hold.release();
                });
                let started = Instant::now();
                drop(comm);
                assert!(
                    started.elapsed() >= HOLD / 2,
                    "the drop waited for the collectives"
                );
                releaser.join().unwrap();
                assert_eq!(
                    buf.to_array::<ndarray::IxDyn>(&stream)
                        .unwrap()
                        .into_iter()
                        .collect::<Vec<_>>(),
                    [1.0, 2.0]
                );
            });
        }
    });
    // HcclCommDestroy found nothing queued (it would have reported it).
    assert!(ascend_sim::last_report().is_none());
}

#[test]
fn every_drop_order_releases_everything() {
    let _leaks = LeakCheck::start(rt());
    let orders = permutations(4);
    for (i, order) in orders.iter().enumerate() {
        let ids = [(i % 4) as i32, ((i + 1) % 4) as i32];
        let devs = devices(rt(), &ids);
        let comms = Communicator::init_all(&devs).unwrap();
        drop(devs);
        let mut slots: Vec<Option<Communicator>> = comms.into_iter().map(Some).collect();
        std::thread::scope(|s| {
            for slot in &mut slots {
                s.spawn(move || {
                    let comm = slot.take().unwrap();
                    let device = comm.device();
                    let stream = device.stream().unwrap();
                    let send =
                        DeviceTensor::from_array(&stream, &arr1(&[comm.rank() as f32; 5])).unwrap();
                    let mut recv = DeviceTensor::<f32>::zeros(&stream, [10]).unwrap();
                    comm.all_gather(&send, &mut recv, &stream).unwrap();
                    let mut things: Vec<Option<Box<dyn Send>>> = vec![
                        Some(Box::new(comm)),
                        Some(Box::new(stream)),
                        Some(Box::new(send)),
                        Some(Box::new(recv)),
                    ];
                    drop(device);
                    for &k in order {
                        things[k] = None;
                    }
                });
            }
        });
    }
    assert_eq!(orders.len(), 24);
}
