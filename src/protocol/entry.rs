//! An operator's two C entry points, found by name in the loaded toolkit.

use crate::device::DeviceInner;
use crate::error::{Error, Result};
use ascend_sys::{Api, OperatorLaunchFn};
use std::ffi::c_void;
use std::ptr::NonNull;
use std::sync::OnceLock;

/// The two entry points of one operator, looked up by name ([`Api::operator_symbol`])
/// the first time a runtime uses them and remembered per runtime, so that a toolkit
/// lacking the operator still loads and the call reports [`Error::UnsupportedOperator`].
/// One `static` per operator; a lookup in steady state is an atomic load and a compare.
#[doc(hidden)]
pub struct EntryPoints {
    /// `aclnnXxxGetWorkspaceSize`.
    pub(crate) phase1: &'static str,
    /// `aclnnXxx`, also the operator's name in errors.
    pub(crate) phase2: &'static str,
    /// One entry per runtime that used the operator (a process has at most a few: CANN
    /// and the simulator). A runtime beyond the last slot looks the symbols up on every
    /// call.
    resolved: [OnceLock<Lookup>; RUNTIME_SLOTS],
}

const RUNTIME_SLOTS: usize = 4;

/// The lookup result of one runtime.
#[derive(Clone, Copy)]
struct Lookup {
    /// Which runtime (compared, never dereferenced).
    api: *const Api,
    phase1: Option<NonNull<c_void>>,
    phase2: Option<NonNull<c_void>>,
}

// SAFETY: the pointers are addresses of immutable code (functions of a library that
// stays loaded for the life of the process) and an identity key; nothing is mutated.
unsafe impl Send for Lookup {}
// SAFETY: as above.
unsafe impl Sync for Lookup {}

/// An operator's entry points in one runtime.
#[derive(Clone, Copy)]
pub(crate) struct OperatorFns {
    pub(crate) phase1: NonNull<c_void>,
    pub(crate) phase2: OperatorLaunchFn,
}

// SAFETY: addresses of immutable code, as for `Lookup`.
unsafe impl Send for OperatorFns {}
// SAFETY: as above.
unsafe impl Sync for OperatorFns {}

impl EntryPoints {
    /// The entry points of the operator with these two C names.
    pub const fn new(phase1: &'static str, phase2: &'static str) -> Self {
        EntryPoints {
            phase1,
            phase2,
            resolved: [const { OnceLock::new() }; RUNTIME_SLOTS],
        }
    }

    /// The entry points in the runtime of `device`.
    ///
    /// # Errors
    /// [`Error::UnsupportedOperator`] naming the first symbol the runtime lacks.
    #[inline]
    pub(crate) fn get(&self, device: &DeviceInner) -> Result<OperatorFns> {
        let api: &'static Api = &device.rt.api;
        let key: *const Api = api;
        for slot in &self.resolved {
            let found = match slot.get() {
                Some(r) => r,
                None => slot.get_or_init(|| self.look_up(api)),
            };
            if found.api == key {
                return self.usable(found, device);
            }
        }
        self.usable(&self.look_up(api), device)
    }

    #[cold]
    fn look_up(&self, api: &'static Api) -> Lookup {
        Lookup {
            api,
            phase1: api.operator_symbol(self.phase1),
            phase2: api.operator_symbol(self.phase2),
        }
    }

    #[inline]
    fn usable(&self, r: &Lookup, device: &DeviceInner) -> Result<OperatorFns> {
        match (r.phase1, r.phase2) {
            (Some(phase1), Some(phase2)) => Ok(OperatorFns {
                phase1,
                // SAFETY: `operator_symbol` returns the address of the function named
                // `self.phase2`, an aclnn phase 2, whose prototype is `OperatorLaunchFn`
                // (checked against the header where the operator is declared).
                phase2: unsafe {
                    std::mem::transmute::<*mut c_void, OperatorLaunchFn>(phase2.as_ptr())
                },
            }),
            (None, _) => Err(self.missing(self.phase1, device)),
            (_, None) => Err(self.missing(self.phase2, device)),
        }
    }

    #[cold]
    #[inline(never)]
    fn missing(&self, symbol: &'static str, device: &DeviceInner) -> Error {
        Error::UnsupportedOperator {
            operator: self.phase2,
            soc: device.soc().to_owned(),
            missing_symbol: Some(symbol),
            backend: device.rt.backend,
        }
    }
}
