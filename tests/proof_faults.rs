//! Fault injection: for every C function the crate calls in an end-to-end workload and
//! every call index n of it, the n-th call fails (`ascend_sim::set_fault`); the workload
//! must return an `Err` naming that function and its code (or, for release paths that
//! `Drop` cannot report, succeed with the right values), never panic, and leave exactly
//! the documented live objects behind: nothing, except the one object whose release
//! failed (release-path faults) — the crate leaks rather than frees under running work.
//!
//! One `#[test]`: faults and counters are process-global.

mod common;

use ascend_sys::*;
use ascendcl::{
    DeviceTensor, Error, InplaceMishPlan, MishBackwardPlan, MishPlan, mish, mish_backward,
    mish_inplace, reference,
};
use common::*;
use half::f16;
use ndarray::ArrayD;
use std::collections::BTreeMap;
use std::panic::{AssertUnwindSafe, catch_unwind};

fn inputs() -> (ArrayD<f16>, ArrayD<f32>) {
    (
        array::<f16>(&[4, 1, 8], 11, -3.0, 3.0),
        array::<f32>(&[3, 1], 12, -4.0, 4.0),
    )
}

/// Device, two streams, an event, uploads, a broadcast + cast `mish_backward` (needs a
/// workspace), a non-contiguous output, a reusable plan, `mish` into a permuted output,
/// `mish_inplace` on a slice, their plans, a download on another thread.
fn workload() -> ascendcl::Result<(ArrayD<f32>, ArrayD<f16>, ArrayD<f32>)> {
    let rt = runtime();
    let device = rt.device(A2)?;
    let stream = device.stream()?;
    let (g, x) = inputs();
    let gd = DeviceTensor::from_array(&stream, &g)?;
    let xd = DeviceTensor::from_array(&stream, &x)?;
    let mut out = DeviceTensor::<f32>::zeros(&stream, [4, 3, 8])?;
    mish_backward(&gd, &xd, &mut out, &stream)?;
    let mut out2 = DeviceTensor::<f16>::zeros(&stream, [8, 3, 4])?;
    mish_backward(&gd, &xd, out2.view_mut().permute(&[2, 1, 0])?, &stream)?;
    let mut plan = MishBackwardPlan::new(&gd, &xd, &out, &stream)?;
    plan.launch(&gd, &xd, &mut out, &stream)?;
    // Another output of the same layout: the plan rebinds its address.
    let mut out3 = DeviceTensor::<f32>::zeros(&stream, [4, 3, 8])?;
    plan.launch(&gd, &xd, &mut out3, &stream)?;
    drop(plan);
    drop(out3);
    // Mish forward on the result: one-off into a permuted output, through a plan (rebound
    // to another output), in place on a slice, and an in-place plan.
    let mut m = DeviceTensor::<f32>::zeros(&stream, [8, 3, 4])?;
    mish(&out, m.view_mut().permute(&[2, 1, 0])?, &stream)?;
    drop(m);
    let mut m2 = DeviceTensor::<f32>::zeros(&stream, [4, 3, 8])?;
    let mut m3 = DeviceTensor::<f32>::zeros(&stream, [4, 3, 8])?;
    let mut mplan = MishPlan::new(&out, &m3, &stream)?;
    mplan.launch(&out, &mut m3, &stream)?;
    mplan.launch(&m3, &mut m2, &stream)?; // both rebound: mish(mish(out))
    drop(mplan);
    drop(m3);
    mish_inplace(m2.view_mut().slice(0, 1, 3, 1)?, &stream)?;
    // Planned on another tensor: the launch rebinds selfRef (input and output).
    let layout = DeviceTensor::<f32>::zeros(&stream, [4, 3, 8])?;
    let mut iplan = InplaceMishPlan::new(&layout, &stream)?;
    iplan.launch(&mut m2, &stream)?;
    drop(iplan);
    drop(layout);
    let event = device.event()?;
    stream.record(&event)?;
    let other = device.stream()?;
    other.wait(&event)?;
    // The download runs on a fresh thread (context binding, tensor shared across threads).
    let r1 = std::thread::scope(|s| s.spawn(|| out.to_array(&other)).join().expect("thread"))?;
    let r2 = out2.view().permute(&[2, 1, 0])?.to_array(&stream)?;
    let r3 = m2.to_array(&stream)?;
    stream.synchronize()?;
    event.synchronize()?;
    Ok((r1, r2, r3))
}

fn live() -> [u64; 5] {
    let c = ascend_sim::counters();
    [c.allocations, c.tensors, c.executors, c.streams, c.events]
}

/// What a fault in a release path leaves behind (index into [`live`]); `None` when the
/// failure is reported as an error instead.
fn release_leak(symbol: &str) -> Option<[u64; 5]> {
    Some(match symbol {
        "aclrtFree" | "aclrtFreeHost" => [1, 0, 0, 0, 0],
        "aclDestroyTensor" => [0, 1, 0, 0, 0],
        "aclDestroyAclOpExecutor" => [0, 0, 1, 0, 0],
        // The stream stays alive, but aclrtResetDevice (when the device handle goes)
        // releases the streams created under the device: nothing is left.
        "aclrtDestroyStream" => [0, 0, 0, 0, 0],
        "aclrtDestroyEvent" => [0, 0, 0, 0, 1],
        // The default context is not counted; the error text is only read on errors.
        "aclrtResetDevice" | "aclGetRecentErrMsg" => [0; 5],
        _ => return None,
    })
}

/// The code the crate reports for an injected fault of `symbol`.
fn expected_code(symbol: &str) -> i32 {
    match symbol {
        "aclrtSetDevice" => ACL_ERROR_RT_DEV_SETUP_ERROR,
        "aclrtGetSocName" => ACL_ERROR_INTERNAL_ERROR, // NULL name, reported by Device::open
        "aclrtGetCurrentContext" => ACL_ERROR_RT_CONTEXT_NULL,
        "aclrtMalloc" | "aclrtMallocHost" => ACL_ERROR_RT_MEMORY_ALLOCATION,
        "aclrtSynchronizeStream" | "aclrtSynchronizeEvent" => ACL_ERROR_RT_STREAM_SYNC_TIMEOUT,
        "aclCreateTensor" => ACLNN_ERR_INNER_NULLPTR, // NULL tensor, reported as such
        "aclSetAclOpExecutorRepeatable" | "aclSetInputTensorAddr" | "aclSetOutputTensorAddr" => {
            ACLNN_ERR_INNER
        }
        "aclnnMishBackwardGetWorkspaceSize"
        | "aclnnMishGetWorkspaceSize"
        | "aclnnInplaceMishGetWorkspaceSize" => ACLNN_ERR_INNER_CREATE_EXECUTOR,
        "aclnnMishBackward" | "aclnnMish" | "aclnnInplaceMish" => ACLNN_ERR_RUNTIME_ERROR,
        _ => ACL_ERROR_RT_INTERNAL_ERROR,
    }
}

#[derive(Default, Debug)]
struct PerSymbol {
    calls: u64,
    injected: u64,
    survived: u64,
    errors: u64,
    leaked_by_design: u64,
    /// Synchronisation faults that left memory behind (error or drop path).
    sync_leaks: u64,
}

#[test]
fn every_fault_on_the_mish_path_is_an_error_or_a_documented_leak() {
    let (g, x) = inputs();
    let want1: ArrayD<f32> = reference::mish_backward(g.view(), x.view()).unwrap();
    let want2: ArrayD<f16> =
        reference::cast(&reference::mish_backward(g.view(), x.view()).unwrap());

    // Warm-up (lazy statics), then the calls of one clean run, per symbol.
    workload().expect("clean workload");
    let before: Vec<u64> = ascend_sim::SYMBOLS
        .iter()
        .map(|s| ascend_sim::call_count(s))
        .collect();
    let (r1, r2, r3) = workload().expect("clean workload");
    assert_precise(
        &r1,
        &want1,
        threshold_for(
            ascendcl::DType::F16,
            ascendcl::DType::F32,
            ascendcl::DType::F32,
        ),
        "clean f32",
    );
    assert_precise(&r2, &want2, threshold(ascendcl::DType::F16), "clean f16");
    // mish applied twice everywhere, three times on rows 1..3, and once more in place.
    let twice = reference::mish(reference::mish(r1.view()).unwrap().view()).unwrap();
    let mut want3 = twice.clone();
    for (i, mut row) in want3.outer_iter_mut().enumerate() {
        let times = if (1..3).contains(&i) { 2 } else { 1 };
        for _ in 0..times {
            let next = reference::mish(row.view()).unwrap();
            row.assign(&next);
        }
    }
    assert_precise(&r3, &want3, threshold(ascendcl::DType::F32), "clean mish");
    let calls: BTreeMap<&str, u64> = ascend_sim::SYMBOLS
        .iter()
        .zip(&before)
        .map(|(s, b)| (*s, ascend_sim::call_count(s) - b))
        .filter(|(_, n)| *n > 0)
        .collect();
    println!("calls per clean workload: {calls:?}");
    let opening = ["aclrtSetDevice", "aclrtCreateStream"];
    for needed in opening.into_iter().chain(MISH_BACKWARD_CALLS).chain([
        "aclnnMishGetWorkspaceSize",
        "aclnnMish",
        "aclnnInplaceMishGetWorkspaceSize",
        "aclnnInplaceMish",
        "aclSetOutputTensorAddr",
        "aclSetInputTensorAddr",
        "aclrtSynchronizeStream",
        "aclrtSetCurrentContext",
        "aclrtFree",
        "aclDestroyTensor",
    ]) {
        assert!(
            calls.contains_key(needed),
            "the workload never calls {needed}"
        );
    }

    let mut baseline = live();
    let mut table: BTreeMap<&str, PerSymbol> = BTreeMap::new();
    let mut failures = Vec::new();
    for (&symbol, &n_calls) in &calls {
        let row = table.entry(symbol).or_default();
        row.calls = n_calls;
        for n in 1..=n_calls {
            ascend_sim::set_fault(symbol, n).unwrap();
            let result = catch_unwind(AssertUnwindSafe(workload));
            ascend_sim::set_fault(symbol, 0).unwrap();
            row.injected += 1;
            let now = live();
            let what = format!("{symbol} call {n}/{n_calls}");
            let Ok(result) = result else {
                failures.push(format!("{what}: panicked"));
                baseline = now;
                continue;
            };
            let mut ok = true;
            match (&result, release_leak(symbol)) {
                (Err(Error::Acl { api, code, .. }), _)
                | (
                    Err(Error::Aclnn {
                        api, status: code, ..
                    }),
                    _,
                ) if *api == symbol && *code == expected_code(symbol) => {
                    row.errors += 1;
                    // Only a failed synchronisation may leave objects behind (documented:
                    // leaked rather than released under work that may still run): what
                    // waited on it (allocations, a plan's executor and descriptors, an
                    // event), never a stream. A failure inside a `Drop` is parked on its
                    // stream and returned by that stream's next call, so it lands here too.
                    let extra: Vec<i64> = now
                        .iter()
                        .zip(&baseline)
                        .map(|(a, b)| *a as i64 - *b as i64)
                        .collect();
                    if extra != [0; 5] {
                        if symbol.starts_with("aclrtSynchronize") && extra[3] == 0 {
                            row.sync_leaks += 1;
                        } else {
                            ok = false;
                            failures.push(format!(
                                "{what}: error {result:?} but live objects changed by {extra:?}"
                            ));
                        }
                    }
                }
                // A failed synchronisation inside a `Drop` whose stream is itself dropped
                // before any later call has nobody to return its error to (it goes to
                // `tracing`): the crate leaks what waited on it rather than free memory
                // queued work might still use. Asserted: right values, and the leak is only
                // of the objects that waited, never a stream.
                (Ok((a, b, c)), None) if symbol == "aclrtSynchronizeStream" => {
                    let extra: Vec<u64> = now.iter().zip(&baseline).map(|(a, b)| a - b).collect();
                    row.sync_leaks += 1;
                    println!(
                        "  {what}: failed inside a drop, leaked {extra:?} (allocations, tensors, executors, streams, events)"
                    );
                    if extra[3] != 0 || a != r1 || b != r2 || c != r3 {
                        ok = false;
                        failures.push(format!(
                            "{what}: drop-path sync failure leaked {extra:?} or changed values"
                        ));
                    }
                }
                (Ok((a, b, c)), Some(leak)) => {
                    row.leaked_by_design += u64::from(leak != [0; 5]);
                    let extra: Vec<u64> = now.iter().zip(&baseline).map(|(a, b)| a - b).collect();
                    if extra != leak {
                        ok = false;
                        failures.push(format!(
                            "{what}: release fault leaked {extra:?}, expected exactly {leak:?}"
                        ));
                    }
                    if a != r1 || b != r2 || c != r3 {
                        ok = false;
                        failures.push(format!("{what}: wrong values after a release fault"));
                    }
                }
                (other, _) => {
                    ok = false;
                    failures.push(format!(
                        "{what}: expected an error naming {symbol} with {}, got {}",
                        expected_code(symbol),
                        match other {
                            Ok(_) => "Ok".to_string(),
                            Err(e) => format!("{e:?}"),
                        }
                    ));
                }
            }
            if ascend_sim::last_report().is_some() {
                ok = false;
                failures.push(format!(
                    "{what}: simulator report {:?}",
                    ascend_sim::last_report()
                ));
                ascend_sim::clear_last_report();
            }
            row.survived += u64::from(ok);
            baseline = now;
        }
    }
    let injected: u64 = table.values().map(|r| r.injected).sum();
    let survived: u64 = table.values().map(|r| r.survived).sum();
    println!("fault injection: {injected} faults injected, {survived} survived");
    for (s, r) in &table {
        println!(
            "  {s:36} calls {:3} injected {:3} survived {:3} (errors {}, release leaks {}, sync leaks {})",
            r.calls, r.injected, r.survived, r.errors, r.leaked_by_design, r.sync_leaks
        );
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert_eq!(survived, injected);
}
