//! A collective that fails (an HCCL timeout, 200 ms here) while an operator on another
//! stream of the same rank is ordered after it by the crate: the operator's download is
//! an error naming the collective's stream, never `Ok` zeros; the
//! collective's own stream still reports the timeout.

mod hccl_common;

use ascendcl::hccl::{Communicator, ReduceOp};
use ascendcl::{DeviceTensor, Error, mish};
use hccl_common::*;
use ndarray::Array1;
use std::time::Duration;

fn mish1(x: f32) -> f32 {
    x * (1.0 + x.exp()).ln().tanh()
}

#[test]
fn consumers_of_a_failed_collective_get_an_error() {
    let rt = runtime_with("Ascend910B4,Ascend910B4", Some(200));
    let _leaks = LeakCheck::start(rt);
    let comms = Communicator::init_all(&devices(rt, &[0, 1])).unwrap();
    let results = on_ranks(&comms, |comm, a| {
        let b = comm.device().stream().unwrap();
        let send =
            DeviceTensor::from_array(a, &Array1::from_elem(4, comm.rank() as f32 + 1.0)).unwrap();
        let mut recv = DeviceTensor::<f32>::zeros(a, [4]).unwrap();
        a.synchronize().unwrap();
        // Rank 1's collective starts long after rank 0's has timed out.
        let hold =
            (comm.rank() == 1).then(|| ascend_sim::testing::hold_stream(a.as_raw()).unwrap());
        let releaser = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(800));
            drop(hold);
        });
        comm.all_reduce(&send, &mut recv, ReduceOp::Sum, a).unwrap();
        let mut out = DeviceTensor::<f32>::zeros(&b, [4]).unwrap();
        let consumed = mish(&recv, &mut out, &b).and_then(|()| out.to_array::<ndarray::IxDyn>(&b));
        releaser.join().unwrap();
        let own = a.synchronize();
        (comm.rank(), consumed, own)
    });
    for (rank, consumed, own) in &results {
        match consumed {
            Ok(v) => {
                // Only a collective that completed may give values, and then the right ones.
                assert!(own.is_ok(), "rank {rank}: Ok({v:?}) after {own:?}");
                assert!(
                    v.iter().all(|x| (x - mish1(3.0)).abs() < 1e-5),
                    "rank {rank}: {v:?}"
                );
            }
            Err(Error::DependencyFailed { source, .. }) => {
                assert!(
                    matches!(**source, Error::Hccl { .. } | Error::Acl { .. }),
                    "rank {rank}: {source:?}"
                );
            }
            Err(e) => panic!("rank {rank}: {e:?}"),
        }
    }
    // Rank 0's collective ran alone: it cannot have succeeded.
    assert!(results[0].1.is_err(), "{:?}", results[0]);
    // ... and its own stream still reports the failure.
    assert!(results[0].2.is_err(), "{:?}", results[0]);
    drop(comms);
    ascend_sim::clear_last_report();
}
