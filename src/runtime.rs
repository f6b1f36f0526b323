//! [`Runtime`]: one initialised CANN (or simulator) per process.

use crate::alloc::Cache;
use crate::device::Device;
use crate::error::{Error, Result};
use crate::sys;
use ascend_sys::{Api, FnTable, LoadOptions};
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError, Weak};

/// Which implementation of the CANN API a [`Runtime`] drives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Backend {
    /// The real CANN libraries (`libascendcl.so`, `libnnopbase.so`, `libopapi.so`).
    Cann,
    /// The in-process simulator of the `ascend-sim` crate.
    Simulator,
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Backend::Cann => "CANN",
            Backend::Simulator => "simulator (ascend-sim)",
        })
    }
}

pub(crate) struct RuntimeInner {
    pub(crate) api: Api,
    pub(crate) backend: Backend,
    /// Each open device's caching allocator, shared by all handles of the device.
    caches: Mutex<Vec<(i32, Weak<Cache>)>>,
}

impl RuntimeInner {
    fn new(api: Api, backend: Backend) -> RuntimeInner {
        RuntimeInner {
            api,
            backend,
            caches: Mutex::new(Vec::new()),
        }
    }

    /// The caching allocator of device `id`: one per device while any handle of it
    /// lives, so that memory one handle caches serves the others.
    pub(crate) fn cache(&self, id: i32) -> Arc<Cache> {
        let mut caches = self.caches.lock().unwrap_or_else(PoisonError::into_inner);
        caches.retain(|(_, c)| c.strong_count() > 0);
        let found = caches.iter().find(|(i, _)| *i == id);
        if let Some(cache) = found.and_then(|(_, c)| c.upgrade()) {
            return cache;
        }
        let cache = Arc::new(Cache::new());
        caches.push((id, Arc::downgrade(&cache)));
        cache
    }

    #[inline]
    pub(crate) fn table(&self) -> &FnTable {
        &self.api
    }
}

static CANN: Mutex<Option<&'static RuntimeInner>> = Mutex::new(None);
#[cfg(feature = "sim")]
static SIMULATOR: Mutex<Option<&'static RuntimeInner>> = Mutex::new(None);

/// An initialised CANN runtime: the entry point of the crate.
///
/// # Lifetime and finalisation
/// CANN allows `aclInit` once per process and nothing after `aclFinalize`. Each backend is
/// therefore initialised at most once per process, on the first `Runtime::cann()` /
/// `Runtime::simulator()`; every later call returns a handle to the same process-wide
/// instance (a `Runtime` is a cheap `Copy` handle). The runtime is **never finalised
/// automatically**: it lives until the process exits, when the operating system and the
/// driver reclaim it. Devices, streams and memory are still released deterministically
/// when their Rust handles are dropped. If `aclInit` reports that it was already called
/// (`ACL_ERROR_REPEAT_INITIALIZE`, e.g. by another library in the process), the runtime is
/// used as is.
///
/// `Runtime` is `Send + Sync + Copy`: it is a shared reference to immutable, process-wide
/// state (a table of function pointers).
///
/// ```
/// # fn main() -> ascendcl::Result<()> {
/// let rt = ascendcl::Runtime::auto()?;
/// println!("running on {}, {} device(s)", rt.backend(), rt.device_count()?);
/// let device = rt.device(0)?;
/// println!("SoC {}", device.soc_name());
/// # Ok(()) }
/// ```
#[derive(Clone, Copy)]
pub struct Runtime {
    pub(crate) inner: &'static RuntimeInner,
}

impl fmt::Debug for Runtime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Runtime")
            .field("backend", &self.inner.backend)
            .field("api", &self.inner.api)
            .finish()
    }
}

impl Runtime {
    /// Loads the real CANN libraries (searched as [`LoadOptions::default`] does: the
    /// `ASCEND_HOME_PATH` / `ASCEND_TOOLKIT_HOME` toolkit, the standard install roots,
    /// then the dynamic linker's path) and calls `aclInit` once per process.
    ///
    /// # Errors
    /// [`Error::Load`] when the libraries are missing, [`Error::Acl`] when `aclInit` fails.
    pub fn cann() -> Result<Runtime> {
        Self::cann_with(&LoadOptions::default())
    }

    /// Like [`Runtime::cann`], searching where `options` say. Only the first successful
    /// call in a process loads anything; later calls return that runtime.
    ///
    /// # Errors
    /// As [`Runtime::cann`].
    pub fn cann_with(options: &LoadOptions) -> Result<Runtime> {
        init(&CANN, Backend::Cann, || Ok(Api::load(options)?))
    }

    /// The in-process simulator (`ascend-sim`), initialised once per process. Unless
    /// [`Runtime::simulator_with`] configured it first, the simulated machine is set up
    /// from these environment variables, read at its `aclInit`:
    ///
    /// | variable | format | default |
    /// |---|---|---|
    /// | `ASCEND_SIM_DEVICES` | comma-separated SoC names, device 0 first (`Ascend910B4,Ascend310P3`) | `Ascend910B4` |
    /// | `ASCEND_SIM_MEM_BYTES` | memory of each device: digits, optional `K`/`M`/`G` (`512M`) | `1G` |
    /// | `ASCEND_SIM_HCCL_TIMEOUT_MS` | how long an HCCL rank waits for the others, in ms | `30000` |
    /// | `ASCEND_SIM_FAULT` | `symbol:n[,symbol:n...]`: the `n`-th call of `symbol` fails | none |
    /// | `ASCEND_SIM_VERBOSE` | `1`/`true`/`yes`/`on`: sanitizer findings also go to stderr | off |
    ///
    /// A malformed value or an unknown `ASCEND_SIM_*` name fails `aclInit`, with a message
    /// naming what is accepted.
    ///
    /// # Errors
    /// [`Error::Acl`] when the simulator's `aclInit` fails.
    #[cfg(feature = "sim")]
    pub fn simulator() -> Result<Runtime> {
        init(&SIMULATOR, Backend::Simulator, || {
            Ok(Api::from_table_with_resolver(
                ascend_sim::fn_table(),
                "ascend-sim",
                ascend_sim::symbol,
            ))
        })
    }

    /// The simulator, set up as `config` says instead of by the environment: the devices
    /// (SoCs and memory), the HCCL timeout, faults and the verbose switch.
    ///
    /// A process has one simulated machine: the simulator models CANN's runtime, which is
    /// initialised once per process (`aclInit`) and whose devices, memory and streams are
    /// process-wide; `ascendcl`'s handles refer to that one state. So the first call (or
    /// [`Runtime::simulator`], or [`Runtime::auto`] falling back) fixes the machine for
    /// the process. Asking again with the same configuration returns the same runtime; a
    /// different one is [`Error::SimulatorConfigured`]. Test binaries that need several
    /// machines run them in separate processes (each integration-test file is one).
    ///
    /// ```
    /// # fn main() -> ascendcl::Result<()> {
    /// use ascendcl::{Runtime, SimConfig, SimDevice};
    /// let config = SimConfig::new()
    ///     .devices(["Ascend910B4"; 4])
    ///     .mem_bytes(256 << 20)
    ///     .hccl_timeout_ms(5_000);
    /// let rt = Runtime::simulator_with(&config)?;
    /// assert_eq!(rt.device_count()?, 4);
    /// assert_eq!(rt.device(3)?.memory_info()?.total, 256 << 20);
    ///
    /// let other = SimConfig::new().devices([SimDevice::new("Ascend310P3")]);
    /// assert!(matches!(
    ///     Runtime::simulator_with(&other),
    ///     Err(ascendcl::Error::SimulatorConfigured { .. })
    /// ));
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a configuration the simulator cannot run (an unknown
    /// SoC or fault symbol, no devices, zero memory or timeout);
    /// [`Error::SimulatorConfigured`] when the simulator already runs another one;
    /// [`Error::Acl`] when its `aclInit` fails.
    #[cfg(feature = "sim")]
    pub fn simulator_with(config: &ascend_sim::SimConfig) -> Result<Runtime> {
        Self::configure_simulator(config)?;
        let rt = Self::simulator()?;
        same_machine(config)?;
        Ok(rt)
    }

    /// Sets up the simulator as `config` says for when it starts, without starting it: by
    /// [`Runtime::simulator`], or by [`Runtime::auto`] when it falls back. Use it before
    /// `auto()` to describe the machine a run without CANN simulates; with CANN found,
    /// it has no effect.
    ///
    /// ```
    /// # fn main() -> ascendcl::Result<()> {
    /// use ascendcl::{Runtime, SimConfig};
    /// Runtime::configure_simulator(&SimConfig::new().devices(["Ascend910B4"; 2]))?;
    /// let rt = Runtime::auto()?;
    /// if rt.backend() == ascendcl::Backend::Simulator {
    ///     assert_eq!(rt.device_count()?, 2);
    /// }
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// As [`Runtime::simulator_with`], except [`Error::Acl`].
    #[cfg(feature = "sim")]
    pub fn configure_simulator(config: &ascend_sim::SimConfig) -> Result<()> {
        if ascend_sim::active_config().is_none() {
            match ascend_sim::configure(config.clone()) {
                Ok(()) => return Ok(()),
                // Refused for an invalid value, or because an `aclInit` won the race (then
                // the comparison reports the configuration it applied).
                Err(message) if ascend_sim::active_config().is_none() => {
                    return Err(Error::InvalidArgument(message));
                }
                Err(_) => {}
            }
        }
        same_machine(config)
    }

    /// The simulator with the four executor-reuse functions (`aclSetAclOpExecutorRepeatable`,
    /// `aclDestroyAclOpExecutor`, `aclSetInputTensorAddr`, `aclSetOutputTensorAddr`) removed
    /// from the table, like a CANN release before 8.0: a separate runtime handle over the
    /// same (already initialised) simulator, for testing the fallbacks.
    #[cfg(all(test, feature = "sim"))]
    pub(crate) fn simulator_without_executor_reuse() -> Result<Runtime> {
        static NO_REUSE: Mutex<Option<&'static RuntimeInner>> = Mutex::new(None);
        Self::simulator()?; // aclInit, once per process
        let mut guard = NO_REUSE.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(inner) = *guard {
            return Ok(Runtime { inner });
        }
        let mut table = ascend_sim::fn_table();
        table.aclSetAclOpExecutorRepeatable = None;
        table.aclDestroyAclOpExecutor = None;
        table.aclSetInputTensorAddr = None;
        table.aclSetOutputTensorAddr = None;
        let inner: &'static RuntimeInner = Box::leak(Box::new(RuntimeInner::new(
            Api::from_table_with_resolver(
                table,
                "ascend-sim without executor reuse",
                ascend_sim::symbol,
            ),
            Backend::Simulator,
        )));
        *guard = Some(inner);
        Ok(Runtime { inner })
    }

    /// The simulator's runtime and nnopbase functions without any operator, like a toolkit
    /// whose `libopapi.so` predates every operator of the crate: a separate runtime handle
    /// over the same (already initialised) simulator.
    #[cfg(all(test, feature = "sim"))]
    pub(crate) fn simulator_without_operators() -> Result<Runtime> {
        static NO_OPS: Mutex<Option<&'static RuntimeInner>> = Mutex::new(None);
        Self::simulator()?; // aclInit, once per process
        let mut guard = NO_OPS.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(inner) = *guard {
            return Ok(Runtime { inner });
        }
        let inner: &'static RuntimeInner = Box::leak(Box::new(RuntimeInner::new(
            Api::from_table(ascend_sim::fn_table(), "ascend-sim without operators"),
            Backend::Simulator,
        )));
        *guard = Some(inner);
        Ok(Runtime { inner })
    }

    /// The backend chosen by the `ASCENDCL_BACKEND` environment variable, read at each
    /// call:
    ///
    /// | value | backend |
    /// |---|---|
    /// | unset, empty or `auto` | CANN when an installation is found, otherwise the simulator (with feature `sim`), announced once on stderr |
    /// | `cann` | [`Runtime::cann`]: never the simulator |
    /// | `simulator` (or `sim`) | [`Runtime::simulator`], without the announcement |
    ///
    /// [`Runtime::backend`] tells which one was chosen. A deployment that must run on the
    /// NPU sets `ASCENDCL_BACKEND=cann`, or calls [`Runtime::cann`], or builds without the
    /// `sim` feature.
    ///
    /// In `auto` mode the simulator is chosen only when no place searched by
    /// [`Runtime::cann`] has CANN's runtime library at all. An installation that is found
    /// but cannot be loaded (a broken toolkit, a library missing a function) is an error,
    /// never a silent switch to simulated results. The first fallback in a process prints
    /// one line to stderr (`ascendcl: no CANN installation found; running on the
    /// simulator ...`), unless `ASCENDCL_QUIET` is set to anything but `0` or the empty
    /// string. The choice and its reason are also reported through `tracing` (target
    /// `ascendcl::runtime`).
    ///
    /// ```
    /// # fn main() -> ascendcl::Result<()> {
    /// let rt = ascendcl::Runtime::auto()?;
    /// println!("running on {}", rt.backend());
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for another value of `ASCENDCL_BACKEND`; [`Error::Load`]
    /// for an installation that cannot be loaded (or, with `cann`, none at all);
    /// [`Error::Acl`] when `aclInit` fails; without feature `sim`, also when no
    /// installation is found or the simulator is asked for.
    pub fn auto() -> Result<Runtime> {
        match BackendChoice::from_env()? {
            BackendChoice::Cann => Self::cann(),
            BackendChoice::Simulator => Self::simulator_by_name(),
            BackendChoice::Auto => Self::cann_or_simulator(),
        }
    }

    #[cfg(feature = "sim")]
    fn simulator_by_name() -> Result<Runtime> {
        Self::simulator()
    }

    #[cfg(not(feature = "sim"))]
    fn simulator_by_name() -> Result<Runtime> {
        Err(Error::InvalidArgument(format!(
            "{BACKEND_VAR} asks for the simulator, but ascendcl was built without its `sim` \
             feature"
        )))
    }

    fn cann_or_simulator() -> Result<Runtime> {
        match Self::cann() {
            Ok(rt) => {
                tracing::info!(origin = ?rt.api().origin(), "backend: CANN");
                Ok(rt)
            }
            #[cfg(feature = "sim")]
            Err(Error::Load(ascend_sys::LoadError::NotFound { searched })) => {
                tracing::info!(
                    ?searched,
                    "backend: the simulator (no CANN installation found in any place searched)"
                );
                announce_fallback();
                Self::simulator()
            }
            Err(e) => {
                tracing::warn!(error = %e, "CANN was found but cannot be used");
                Err(e)
            }
        }
    }

    /// The CANN toolkit root that the build script found (`ASCEND_HOME_PATH`,
    /// `ASCEND_TOOLKIT_HOME` or a standard install path holding `lib64/libascendcl.so`),
    /// if any. Informational: the libraries are located again at run time by
    /// [`Runtime::cann`].
    ///
    /// ```
    /// match ascendcl::Runtime::build_toolkit() {
    ///     Some(root) => println!("built next to the CANN toolkit at {root}"),
    ///     None => println!("built without a CANN toolkit"),
    /// }
    /// ```
    pub fn build_toolkit() -> Option<&'static str> {
        Some(env!("ASCENDCL_BUILD_TOOLKIT")).filter(|root| !root.is_empty())
    }

    /// Which backend this runtime drives.
    pub fn backend(&self) -> Backend {
        self.inner.backend
    }

    /// The function table in use, for callers that need a raw call the safe API lacks.
    pub fn api(&self) -> &'static Api {
        &self.inner.api
    }

    /// HCCL (collectives between devices) for this runtime: `libhccl.so` from the
    /// directory CANN was loaded from, or the simulator's. Loaded on first use; see
    /// [`hccl`](crate::hccl).
    ///
    /// # Errors
    /// [`Error::HcclUnavailable`] when this runtime has no HCCL.
    pub fn hccl(&self) -> Result<&'static ascend_sys::hccl::Hccl> {
        crate::hccl::library(self.inner)
    }

    /// Number of devices (`aclrtGetDeviceCount`), of the same type as the ids that
    /// [`Runtime::device`] takes and [`Device::id`] returns (CANN's `int32_t`).
    ///
    /// ```
    /// # fn main() -> ascendcl::Result<()> {
    /// let rt = ascendcl::Runtime::auto()?;
    /// let n = rt.device_count()?;
    /// let last = rt.device(n - 1)?;
    /// assert_eq!(last.id(), n - 1);
    /// let all = (0..n).map(|id| rt.device(id)).collect::<ascendcl::Result<Vec<_>>>()?;
    /// assert_eq!(all.len(), n as usize);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// [`Error::Acl`] from `aclrtGetDeviceCount`.
    pub fn device_count(&self) -> Result<i32> {
        sys::device_count(self.inner.table())
    }

    /// Opens device `id` (`aclrtSetDevice`); see [`Device`].
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a negative id, [`Error::Acl`] when the runtime
    /// rejects it (e.g. `ACL_ERROR_RT_INVALID_DEVICEID`).
    pub fn device(&self, id: i32) -> Result<Device> {
        Device::open(self.inner, id)
    }
}

/// The environment variable that [`Runtime::auto`] reads.
const BACKEND_VAR: &str = "ASCENDCL_BACKEND";
/// Set (not to `0`) to silence the stderr line of a fallback to the simulator.
#[cfg(feature = "sim")]
const QUIET_VAR: &str = "ASCENDCL_QUIET";

/// The values of `ASCENDCL_BACKEND`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BackendChoice {
    Auto,
    Cann,
    Simulator,
}

impl BackendChoice {
    fn from_env() -> Result<BackendChoice> {
        match std::env::var(BACKEND_VAR) {
            Err(std::env::VarError::NotPresent) => Ok(BackendChoice::Auto),
            Err(std::env::VarError::NotUnicode(v)) => Err(Self::refuse(&v.to_string_lossy())),
            Ok(v) => Self::parse(&v),
        }
    }

    fn parse(value: &str) -> Result<BackendChoice> {
        match value.trim().to_ascii_lowercase().as_str() {
            "" | "auto" => Ok(BackendChoice::Auto),
            "cann" => Ok(BackendChoice::Cann),
            "simulator" | "sim" => Ok(BackendChoice::Simulator),
            _ => Err(Self::refuse(value)),
        }
    }

    fn refuse(value: &str) -> Error {
        Error::InvalidArgument(format!(
            "{BACKEND_VAR}={value:?} is not a backend: use `cann` (CANN only), `simulator` or \
             `auto` (CANN when installed, else the simulator)"
        ))
    }
}

/// One line on stderr for the first fallback of the process, so that a job that forgot
/// `set_env.sh` does not train on the CPU unnoticed.
#[cfg(feature = "sim")]
fn announce_fallback() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    let quiet = std::env::var_os(QUIET_VAR).is_some_and(|v| !v.is_empty() && v != "0");
    if quiet {
        return;
    }
    ONCE.call_once(|| {
        eprintln!(
            "ascendcl: no CANN installation found; running on the simulator (ascend-sim). \
             Set {BACKEND_VAR}=cann to require CANN, {BACKEND_VAR}=simulator or \
             {QUIET_VAR}=1 to silence this line."
        );
    });
}

/// Whether the running simulator is the machine `config` describes.
#[cfg(feature = "sim")]
fn same_machine(config: &ascend_sim::SimConfig) -> Result<()> {
    match ascend_sim::active_config() {
        Some(active) if active == *config => Ok(()),
        active => Err(Error::SimulatorConfigured {
            active: active.map_or_else(String::new, |a| a.to_string()),
            requested: config.to_string(),
        }),
    }
}

fn init(
    slot: &'static Mutex<Option<&'static RuntimeInner>>,
    backend: Backend,
    make: impl FnOnce() -> Result<Api>,
) -> Result<Runtime> {
    let mut guard = slot.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(inner) = *guard {
        return Ok(Runtime { inner });
    }
    let api = make()?;
    // SAFETY: called at most once per backend in this process (guarded by `slot`).
    unsafe { sys::init(&api) }?;
    // The runtime lives for the rest of the process (see the type's docs).
    let inner: &'static RuntimeInner = Box::leak(Box::new(RuntimeInner::new(api, backend)));
    *guard = Some(inner);
    Ok(Runtime { inner })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backend_values() {
        assert_eq!(BackendChoice::parse("").unwrap(), BackendChoice::Auto);
        assert_eq!(BackendChoice::parse("auto").unwrap(), BackendChoice::Auto);
        assert_eq!(BackendChoice::parse("CANN").unwrap(), BackendChoice::Cann);
        assert_eq!(
            BackendChoice::parse(" simulator ").unwrap(),
            BackendChoice::Simulator
        );
        assert_eq!(
            BackendChoice::parse("sim").unwrap(),
            BackendChoice::Simulator
        );
        assert_eq!(
            BackendChoice::parse("npu").unwrap_err().to_string(),
            "invalid argument: ASCENDCL_BACKEND=\"npu\" is not a backend: use `cann` (CANN only), \
             `simulator` or `auto` (CANN when installed, else the simulator)"
        );
    }
}
