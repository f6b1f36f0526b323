//! The bookkeeping of the chaos properties (`proof_*_chaos`): faults armed at random calls,
//! one thread per random program, the checks every case ends with, and the tallies that
//! show a property was not vacuous.

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use std::sync::atomic::{AtomicU64, Ordering};

/// Downloads compared with the model, calls that failed, and leaks counted, over all the
/// cases of the binary (asserted non-zero where the property would otherwise be vacuous).
pub static CHECKED: AtomicU64 = AtomicU64::new(0);
pub static FAILED: AtomicU64 = AtomicU64::new(0);
pub static LEAKED: AtomicU64 = AtomicU64::new(0);

/// `(checked, failed, leaked)` so far.
pub fn tallies() -> (u64, u64, u64) {
    (
        CHECKED.load(Ordering::Relaxed),
        FAILED.load(Ordering::Relaxed),
        LEAKED.load(Ordering::Relaxed),
    )
}

/// Arms the fault `(f, nth)` of each entry: the `nth` call of `names[f]` fails.
pub fn arm_faults(names: &[&str], faults: &[(usize, u64)]) {
    for &(f, nth) in faults {
        ascend_sim::set_fault(names[f], nth).unwrap();
    }
}

/// Disarms what [`arm_faults`] armed.
pub fn disarm_faults(names: &[&str], faults: &[(usize, u64)]) {
    for &(f, _) in faults {
        ascend_sim::set_fault(names[f], 0).unwrap();
    }
}

/// Runs each program on its own thread, all at once; the results in program order.
pub fn on_threads<P: Sync>(
    programs: &[P],
    run: impl Fn(&P) -> Result<(), String> + Sync,
) -> Vec<Result<(), String>> {
    std::thread::scope(|sc| {
        let run = &run;
        let handles: Vec<_> = programs
            .iter()
            .map(|program| sc.spawn(move || run(program)))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

/// The first failure of a thread, as the case's.
pub fn threads_passed(results: Vec<Result<(), String>>) -> Result<(), TestCaseError> {
    for r in results {
        r.map_err(TestCaseError::fail)?;
    }
    Ok(())
}

/// The simulator's sanitizer reported nothing.
pub fn no_report() -> Result<(), TestCaseError> {
    let report = ascend_sim::last_report();
    prop_assert!(report.is_none(), "simulator report: {report:?}");
    Ok(())
}
