//! The simulated operators outside the one entry list of `lib.rs`: the families' rows
//! (each family module contributes its entries) and, later in a process, operators a
//! user registers. Each entry point has a call counter and a fault slot like the listed
//! symbols, numbered after them, so that `set_fault`, `call_count`, `ASCEND_SIM_FAULT` and
//! [`symbol`](crate::symbol) treat every simulated symbol alike.

use crate::{SYMBOL_COUNT, SYMBOLS};
use std::ffi::c_void;
use std::sync::{LazyLock, OnceLock, RwLock, RwLockReadGuard};

/// How many entry points the catalog can hold (the counters are static).
pub(crate) const CAPACITY: usize = 2048;

/// One entry point: its C name and its address, behind a function so that a `static`
/// table can hold it.
#[derive(Clone, Copy)]
pub(crate) struct Entry {
    pub name: &'static str,
    pub address: fn() -> *const c_void,
}

/// The families' entries, one slice per family.
fn families() -> impl Iterator<Item = &'static Entry> {
    crate::ops::FAMILIES.iter().flat_map(|family| family.iter())
}

static CATALOG: LazyLock<RwLock<Vec<Entry>>> =
    LazyLock::new(|| RwLock::new(families().copied().collect()));

/// Reads the catalog, ignoring poisoning (every writer leaves it valid).
fn read(c: &RwLock<Vec<Entry>>) -> RwLockReadGuard<'_, Vec<Entry>> {
    c.read().unwrap_or_else(|p| p.into_inner())
}

/// The counter index of the catalog entry named `name` (after the listed symbols).
pub(crate) fn index_of(name: &str) -> Option<usize> {
    read(&CATALOG)
        .iter()
        .position(|e| e.name == name)
        .map(|k| SYMBOL_COUNT + k)
}

/// The name of the symbol with counter index `i`, listed or catalogued.
pub(crate) fn name_of(i: usize) -> &'static str {
    match SYMBOLS.get(i) {
        Some(name) => name,
        None => read(&CATALOG)
            .get(i - SYMBOL_COUNT)
            .map_or("(unknown symbol)", |e| e.name),
    }
}

/// The address of the catalogued entry point named `name`.
pub(crate) fn address(name: &str) -> Option<*const c_void> {
    read(&CATALOG)
        .iter()
        .find(|e| e.name == name)
        .map(|e| (e.address)())
}

/// Every catalogued name, in counter order.
pub(crate) fn names() -> Vec<&'static str> {
    read(&CATALOG).iter().map(|e| e.name).collect()
}

/// Why [`register`] refused entries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// A name the simulator already has (listed, a family's, or registered before).
    Taken(&'static str),
    /// The counters are full.
    Full,
}

/// Adds entries (a user's operator), all or none; a name already simulated is refused.
pub(crate) fn register(entries: &[Entry]) -> Result<(), Refusal> {
    let mut catalog = CATALOG.write().unwrap_or_else(|p| p.into_inner());
    for e in entries {
        if SYMBOLS.contains(&e.name) || catalog.iter().any(|c| c.name == e.name) {
            return Err(Refusal::Taken(e.name));
        }
    }
    if catalog.len() + entries.len() > CAPACITY {
        return Err(Refusal::Full);
    }
    catalog.extend_from_slice(entries);
    Ok(())
}

/// The counter index of a catalogued entry point, found once per call site.
pub(crate) struct Slot {
    name: &'static str,
    index: OnceLock<usize>,
}

impl Slot {
    pub const fn new(name: &'static str) -> Slot {
        Slot {
            name,
            index: OnceLock::new(),
        }
    }

    /// Its counter index. Every entry point that has a slot is in the catalog, which
    /// never forgets an entry.
    pub fn index(&self) -> usize {
        *self.index.get_or_init(|| {
            index_of(self.name).unwrap_or_else(|| {
                panic!(
                    "{} has a slot but no catalog entry (bug in ascend-sim)",
                    self.name
                )
            })
        })
    }
}
