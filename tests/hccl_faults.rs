//! Fault sweep over the HCCL symbols through the safe API (own process, 200 ms HCCL
//! timeout): every call of every HCCL function a clean two-rank workload makes is failed
//! once in turn. Each run ends in a typed error naming the faulted function with
//! `HCCL_E_INTERNAL` (or a peer's consequence of it: `HCCL_E_TIMEOUT`, `HCCL_E_PARA`), or
//! succeeds where the failure is one the crate can only report (`HcclCommDestroy` in a
//! drop); it never panics or hangs, and leaves nothing behind but the one communicator a
//! failed `HcclCommDestroy` cannot release.

mod hccl_common;

use ascend_sys::hccl::{HCCL_E_INTERNAL, HCCL_E_PARA, HCCL_E_TIMEOUT};
use ascendcl::hccl::{Communicator, ReduceOp, RootInfo};
use ascendcl::{DeviceTensor, Error, Runtime};
use hccl_common::*;
use ndarray::Array1;
use std::collections::BTreeMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::{Duration, Instant};

fn rt() -> Runtime {
    runtime_with("Ascend910B4,Ascend910B4", Some(200))
}

/// Faults are process-wide: the tests run one at a time.
fn serial() -> std::sync::MutexGuard<'static, ()> {
    static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

/// Every collective on two ranks; the first error of any rank, else rank 0's result.
fn workload() -> Result<Vec<f32>, Error> {
    let comms = Communicator::init_all(&devices(rt(), &[0, 1]))?;
    let results = on_ranks(&comms, |comm, stream| -> Result<Vec<f32>, Error> {
        let r = comm.rank() as f32;
        let send = DeviceTensor::from_array(stream, &Array1::from_elem(4, r + 1.0))?;
        let mut sum = DeviceTensor::<f32>::zeros(stream, [4])?;
        comm.all_reduce(&send, &mut sum, ReduceOp::Sum, stream)?;
        let mut buf = DeviceTensor::from_array(stream, &Array1::from_elem(2, r))?;
        comm.broadcast(&mut buf, 1, stream)?;
        let mut all = DeviceTensor::<f32>::zeros(stream, [8])?;
        comm.all_gather(&send, &mut all, stream)?;
        let mut part = DeviceTensor::<f32>::zeros(stream, [2])?;
        comm.reduce_scatter(&send, &mut part, ReduceOp::Max, stream)?;
        comm.barrier(stream)?;
        stream.synchronize()?;
        comm.async_error()?;
        let mut out: Vec<f32> = sum
            .to_array::<ndarray::IxDyn>(stream)?
            .into_iter()
            .collect();
        out.extend(buf.to_array::<ndarray::IxDyn>(stream)?);
        out.extend(all.to_array::<ndarray::IxDyn>(stream)?);
        out.extend(part.to_array::<ndarray::IxDyn>(stream)?);
        Ok(out)
    });
    drop(comms);
    let out = results
        .into_iter()
        .reduce(|a, b| a.and(b))
        .expect("two ranks")?;
    // A second group, joined through a root info.
    let devs = devices(rt(), &[1, 0]);
    let info = RootInfo::new(&devs[0])?;
    let joined = std::thread::scope(|s| {
        let handles: Vec<_> = devs
            .iter()
            .enumerate()
            .map(|(rank, d)| {
                let info = &info;
                s.spawn(move || Communicator::from_root_info(d, info, 2, rank as u32))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("rank thread"))
            .collect::<Vec<_>>()
    });
    let pair = joined.into_iter().collect::<Result<Vec<_>, Error>>()?;
    let synced = on_ranks(&pair, |comm, stream| {
        comm.barrier(stream)?;
        stream.synchronize()
    });
    synced.into_iter().collect::<Result<Vec<()>, Error>>()?;
    Ok(out)
}

fn hccl_symbols() -> Vec<&'static str> {
    ascend_sim::SYMBOLS
        .iter()
        .copied()
        .filter(|s| s.starts_with("Hccl"))
        .collect()
}

#[test]
fn every_hccl_fault_is_a_typed_error_or_a_documented_leak() {
    let _serial = serial();
    let want = vec![
        3.0, 3.0, 3.0, 3.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0,
    ];
    assert_eq!(workload().expect("clean workload"), want);
    let before: Vec<u64> = hccl_symbols()
        .iter()
        .map(|s| ascend_sim::call_count(s))
        .collect();
    assert_eq!(workload().expect("clean workload"), want);
    let calls: BTreeMap<&str, u64> = hccl_symbols()
        .into_iter()
        .zip(before)
        .map(|(s, b)| (s, ascend_sim::call_count(s) - b))
        .filter(|(_, n)| *n > 0)
        .collect();
    println!("HCCL calls per clean workload: {calls:?}");
    assert_eq!(
        calls.len(),
        12,
        "every HCCL function but HcclGetErrorString is called"
    );
    let mut injected = 0;
    for (&symbol, &n_calls) in &calls {
        for n in 1..=n_calls {
            let objects = ascend_sim::counters().objects();
            let communicators = ascend_sim::hccl::counters().communicators;
            ascend_sim::set_fault(symbol, n).unwrap();
            let started = Instant::now();
            let result = catch_unwind(AssertUnwindSafe(workload));
            ascend_sim::set_fault(symbol, 0).unwrap();
            injected += 1;
            let what = format!("{symbol} call {n}/{n_calls}");
            let result = result.unwrap_or_else(|_| panic!("{what}: panicked"));
            assert!(
                started.elapsed() < Duration::from_secs(5),
                "{what}: took {:?}",
                started.elapsed()
            );
            match result {
                Err(Error::Hccl { api, code, .. })
                    if (api == symbol && code == HCCL_E_INTERNAL)
                        || code == HCCL_E_TIMEOUT
                        || code == HCCL_E_PARA => {}
                Ok(out) if symbol == "HcclCommDestroy" => assert_eq!(out, want, "{what}"),
                other => panic!("{what}: {other:?}"),
            }
            let leaked_by_design = u64::from(symbol == "HcclCommDestroy");
            assert_eq!(
                ascend_sim::hccl::counters().communicators,
                communicators + leaked_by_design,
                "{what}: communicators"
            );
            assert_eq!(ascend_sim::counters().objects(), objects, "{what}: objects");
        }
    }
    assert!(injected >= 22, "{injected} faults injected");
    ascend_sim::clear_last_report();
    // After the sweep, the workload still works.
    assert_eq!(workload().expect("clean workload"), want);
}

#[test]
fn an_error_whose_text_cannot_be_fetched_is_still_typed() {
    let _serial = serial();
    let device = rt().device(0).unwrap();
    let garbage = RootInfo::from_bytes(&[1; ascendcl::hccl::ROOT_INFO_BYTES]).unwrap();
    ascend_sim::set_fault("HcclGetErrorString", 1).unwrap();
    let e = Communicator::from_root_info(&device, &garbage, 2, 0).unwrap_err();
    let Error::Hccl {
        api, code, message, ..
    } = &e
    else {
        panic!("{e:?}");
    };
    assert_eq!((*api, *code), ("HcclCommInitRootInfo", HCCL_E_PARA));
    // No HCCL text; the runtime's latest text is the fault's own.
    assert!(!message.contains("parameter error"), "{message}");
    assert!(message.contains("injected fault"), "{message}");
    ascend_sim::clear_last_report();
}
