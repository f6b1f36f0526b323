//! The gate every test of a merged test binary holds (see [`Gate`]).

/// The gate of a test binary: every test holds it, shared or exclusive, for its whole run.
///
/// A test binary gathers the modules of one theme (`tests/<binary>/main.rs`), and the
/// simulator's state is process-wide: [`super::LeakCheck`] compares its live-object
/// counters before and after a test, and its reports and the caches' figures are
/// process-wide too. `LeakCheck::start` and [`serial`] take the gate exclusive (no other
/// test of the process runs meanwhile); every other test that reaches the simulator takes
/// [`shared`], so that its objects never show up in a concurrent leak check, whichever
/// module it comes from. A test that takes neither could make another test's leak check
/// fail (or hide a leak).
///
/// Re-entry on one thread is a no-op (a helper may take the gate its test already holds);
/// asking for the exclusive gate while holding the shared one is a test bug (it would wait
/// for itself) and panics. Threads a test spawns do not hold the gate and must not ask
/// for it: their test holds it for them.
pub struct Gate {
    held: Option<GateGuard>,
}

enum GateGuard {
    Shared(std::sync::RwLockReadGuard<'static, ()>),
    Exclusive(std::sync::RwLockWriteGuard<'static, ()>),
}

static GATE: std::sync::RwLock<()> = std::sync::RwLock::new(());

thread_local! {
    /// What this thread holds: 0 nothing, 1 shared, 2 exclusive.
    static HELD: std::cell::Cell<u8> = const { std::cell::Cell::new(0) };
}

impl Drop for Gate {
    fn drop(&mut self) {
        if self.held.take().is_some() {
            HELD.with(|h| h.set(0));
        }
    }
}

/// The shared gate: for a test that reaches the simulator without a [`super::LeakCheck`].
pub fn shared() -> Gate {
    if HELD.with(std::cell::Cell::get) != 0 {
        return Gate { held: None };
    }
    let g = GATE
        .read()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    HELD.with(|h| h.set(1));
    Gate {
        held: Some(GateGuard::Shared(g)),
    }
}

/// The exclusive gate (what [`super::LeakCheck`] holds): for a test that reads
/// process-wide counters or leaks on purpose; no other test of the binary runs meanwhile.
pub fn serial() -> Gate {
    match HELD.with(std::cell::Cell::get) {
        2 => return Gate { held: None },
        1 => panic!(
            "serial() or LeakCheck::start() while this test holds shared(): take only the exclusive gate"
        ),
        _ => {}
    }
    let g = GATE
        .write()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    HELD.with(|h| h.set(2));
    Gate {
        held: Some(GateGuard::Exclusive(g)),
    }
}
