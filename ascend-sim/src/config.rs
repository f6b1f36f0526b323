//! The simulated machine's configuration: given by [`configure`] before `aclInit`, or
//! else read from the environment variables at `aclInit`, and checked then. A value the
//! simulator cannot use, or an `ASCEND_SIM_*` name it does not know (a typo would
//! otherwise be ignored in silence), fails with a message naming what is accepted.

use crate::state::symbol_index;
use crate::tables::{Family, SOCS, soc_list};
use std::env::VarError;
use std::ffi::CStr;
use std::fmt;
use std::sync::{Mutex, PoisonError};

/// Default `ASCEND_SIM_DEVICES`.
pub const DEFAULT_DEVICES: &str = "Ascend910B4";
/// Default `ASCEND_SIM_MEM_BYTES` (1 GiB).
pub const DEFAULT_MEM_BYTES: usize = 1 << 30;

const DEVICES: &str = "ASCEND_SIM_DEVICES";
const MEM_BYTES: &str = "ASCEND_SIM_MEM_BYTES";
const FAULT: &str = "ASCEND_SIM_FAULT";
const VERBOSE: &str = "ASCEND_SIM_VERBOSE";
const HCCL_TIMEOUT_MS: &str = "ASCEND_SIM_HCCL_TIMEOUT_MS";
const RACECHECK: &str = "ASCEND_SIM_RACECHECK";
/// Every variable the simulator reads.
const KNOWN: [&str; 6] = [
    DEVICES,
    MEM_BYTES,
    FAULT,
    VERBOSE,
    HCCL_TIMEOUT_MS,
    RACECHECK,
];

/// What `aclInit` configures, checked.
pub(crate) struct Config {
    /// One SoC and memory size per device.
    pub devices: Vec<(&'static CStr, Family, usize)>,
    /// Faults armed from process start: symbol index and call number.
    pub faults: Vec<(usize, u64)>,
    /// How long an HCCL rank waits for the others.
    pub hccl_timeout_ms: u64,
    /// Whether the racecheck runs (`ASCEND_SIM_RACECHECK`, default on).
    pub racecheck: bool,
}

/// The value of `name`, `None` when unset.
fn var(name: &str) -> Result<Option<String>, String> {
    match std::env::var(name) {
        Ok(v) => Ok(Some(v)),
        Err(VarError::NotPresent) => Ok(None),
        Err(VarError::NotUnicode(v)) => Err(format!("{name}={v:?} is not valid UTF-8")),
    }
}

/// One simulated device: its SoC and its memory.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SimDevice {
    /// The SoC name, one of those listed for `ASCEND_SIM_DEVICES` (e.g. `"Ascend910B4"`).
    pub soc: String,
    /// Device memory in bytes (default [`DEFAULT_MEM_BYTES`]).
    pub mem_bytes: usize,
}

impl SimDevice {
    /// A device of SoC `soc` with [`DEFAULT_MEM_BYTES`] of memory.
    pub fn new(soc: &str) -> SimDevice {
        SimDevice {
            soc: soc.to_owned(),
            mem_bytes: DEFAULT_MEM_BYTES,
        }
    }

    /// The same device with `bytes` of memory.
    pub fn mem_bytes(mut self, bytes: usize) -> SimDevice {
        self.mem_bytes = bytes;
        self
    }
}

impl From<&str> for SimDevice {
    fn from(soc: &str) -> SimDevice {
        SimDevice::new(soc)
    }
}

/// The simulated machine: what the `ASCEND_SIM_*` environment variables say, as a value.
/// Give it to [`configure`] before `aclInit` to set up the simulator from code; the
/// environment is then not read.
///
/// ```
/// use ascend_sim::{SimConfig, SimDevice};
/// let config = SimConfig::new()
///     .devices(["Ascend910B4", "Ascend910B4"])
///     .hccl_timeout_ms(2_000);
/// assert_eq!(config.devices.len(), 2);
/// let mixed = SimConfig::new().devices([
///     SimDevice::new("Ascend910B4").mem_bytes(256 << 20),
///     SimDevice::new("Ascend310P3"),
/// ]);
/// assert_eq!(
///     mixed.to_string(),
///     "devices [Ascend910B4 256M, Ascend310P3 1024M], HCCL timeout 30000 ms, no faults, verbose off"
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct SimConfig {
    /// One entry per device, device 0 first (`ASCEND_SIM_DEVICES`, `ASCEND_SIM_MEM_BYTES`).
    pub devices: Vec<SimDevice>,
    /// How long an HCCL rank waits for the others (`ASCEND_SIM_HCCL_TIMEOUT_MS`).
    pub hccl_timeout_ms: u64,
    /// Faults armed from process start: the `n`-th call of the symbol fails
    /// (`ASCEND_SIM_FAULT`).
    pub faults: Vec<(String, u64)>,
    /// Sanitizer findings are also printed to stderr (`ASCEND_SIM_VERBOSE`).
    pub verbose: bool,
    /// Whether the racecheck runs (`ASCEND_SIM_RACECHECK`, default on).
    pub racecheck: bool,
}

impl Default for SimConfig {
    fn default() -> SimConfig {
        SimConfig {
            devices: vec![SimDevice::new(DEFAULT_DEVICES)],
            hccl_timeout_ms: crate::hccl::DEFAULT_HCCL_TIMEOUT_MS,
            faults: Vec::new(),
            verbose: false,
            racecheck: true,
        }
    }
}

impl SimConfig {
    /// The defaults: one `Ascend910B4` with 1 GiB, a 30 s HCCL timeout, no faults.
    pub fn new() -> SimConfig {
        SimConfig::default()
    }

    /// These devices instead of the current list, device 0 first: SoC names (each with
    /// [`DEFAULT_MEM_BYTES`]) or [`SimDevice`]s.
    pub fn devices<D: Into<SimDevice>>(mut self, devices: impl IntoIterator<Item = D>) -> Self {
        self.devices = devices.into_iter().map(Into::into).collect();
        self
    }

    /// Every device's memory.
    pub fn mem_bytes(mut self, bytes: usize) -> Self {
        for d in &mut self.devices {
            d.mem_bytes = bytes;
        }
        self
    }

    /// How long an HCCL rank waits for the others.
    pub fn hccl_timeout_ms(mut self, ms: u64) -> Self {
        self.hccl_timeout_ms = ms;
        self
    }

    /// Also fails the `nth` call of `symbol`, counted from process start.
    pub fn fault(mut self, symbol: &str, nth: u64) -> Self {
        self.faults.push((symbol.to_owned(), nth));
        self
    }

    /// Whether sanitizer findings are also printed to stderr.
    pub fn verbose(mut self, on: bool) -> Self {
        self.verbose = on;
        self
    }

    /// Whether the racecheck runs (on by default; off for benchmarks).
    pub fn racecheck(mut self, on: bool) -> Self {
        self.racecheck = on;
        self
    }

    /// The configuration the `ASCEND_SIM_*` variables describe (defaults for those unset).
    ///
    /// # Errors
    /// A message naming what is accepted, for a malformed value or an unknown
    /// `ASCEND_SIM_*` variable.
    pub fn from_env() -> Result<SimConfig, String> {
        from_env()
    }

    /// Checks every value, resolving the SoC and symbol names.
    fn check(&self) -> Result<Config, String> {
        if self.devices.is_empty() {
            return Err("the simulated machine needs at least one device".into());
        }
        let devices = self
            .devices
            .iter()
            .map(|d| {
                let (soc, family) = soc_of(&d.soc).ok_or_else(|| {
                    format!(
                        "{:?} is not a SoC the simulator knows; use one of {}",
                        d.soc,
                        soc_list()
                    )
                })?;
                if d.mem_bytes == 0 {
                    return Err(format!("device {} has no memory (0 bytes)", d.soc));
                }
                Ok((soc, family, d.mem_bytes))
            })
            .collect::<Result<Vec<_>, String>>()?;
        if self.hccl_timeout_ms == 0 {
            return Err("the HCCL timeout must be a positive number of milliseconds".into());
        }
        let faults = self
            .faults
            .iter()
            .map(|(sym, n)| {
                symbol_index(sym).map(|i| (i, *n)).ok_or_else(|| {
                    format!("{sym:?} is not a simulated symbol (see ascend_sim::SYMBOLS)")
                })
            })
            .collect::<Result<Vec<_>, String>>()?;
        Ok(Config {
            devices,
            faults,
            hccl_timeout_ms: self.hccl_timeout_ms,
            racecheck: self.racecheck,
        })
    }
}

/// `devices [Ascend910B4 1024M, ...], HCCL timeout 30000 ms, no faults, verbose off`.
impl fmt::Display for SimConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("devices [")?;
        for (i, d) in self.devices.iter().enumerate() {
            let sep = if i == 0 { "" } else { ", " };
            if d.mem_bytes % (1 << 20) == 0 {
                write!(f, "{sep}{} {}M", d.soc, d.mem_bytes >> 20)?;
            } else {
                write!(f, "{sep}{} {} bytes", d.soc, d.mem_bytes)?;
            }
        }
        write!(f, "], HCCL timeout {} ms, ", self.hccl_timeout_ms)?;
        if self.faults.is_empty() {
            f.write_str("no faults")?;
        } else {
            let items: Vec<String> = self
                .faults
                .iter()
                .map(|(s, n)| format!("{s}:{n}"))
                .collect();
            write!(f, "faults {}", items.join(","))?;
        }
        write!(f, ", verbose {}", if self.verbose { "on" } else { "off" })?;
        if !self.racecheck {
            f.write_str(", racecheck off")?;
        }
        Ok(())
    }
}

/// The configuration [`configure`] gave, for the coming `aclInit`.
static REQUESTED: Mutex<Option<SimConfig>> = Mutex::new(None);
/// The configuration the successful `aclInit` applied.
static ACTIVE: Mutex<Option<SimConfig>> = Mutex::new(None);

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Sets up the simulated machine from code, for the coming `aclInit` (which then does not
/// read the `ASCEND_SIM_*` variables). A process has one simulated machine, as it has one
/// CANN runtime: `aclInit` runs once, and its devices, memory and streams are
/// process-wide. So the configuration is fixed from `aclInit` on.
///
/// # Errors
/// A message naming what is accepted for an invalid value, or saying that the simulator
/// is already initialised (see [`active_config`] for what it runs with).
pub fn configure(config: SimConfig) -> Result<(), String> {
    config.check()?;
    // Under the state lock, so that an `aclInit` cannot run in between.
    let st = crate::state::state();
    if st.life != crate::state::Life::NotInitialized {
        return Err(format!(
            "the simulator is already initialised (running {}); its configuration is fixed \
             for the process",
            lock(&ACTIVE)
                .as_ref()
                .map_or_else(String::new, ToString::to_string)
        ));
    }
    *lock(&REQUESTED) = Some(config);
    drop(st);
    Ok(())
}

/// The configuration the simulator runs with: `None` before a successful `aclInit`.
pub fn active_config() -> Option<SimConfig> {
    lock(&ACTIVE).clone()
}

/// The configuration for `aclInit`: the one given to [`configure`], else the
/// environment's, checked. Records it as active.
pub(crate) fn for_init() -> Result<Config, String> {
    let requested = lock(&REQUESTED).clone();
    let config = match requested {
        Some(c) => c,
        None => from_env()?,
    };
    let checked = config.check()?;
    *lock(&ACTIVE) = Some(config);
    Ok(checked)
}

fn soc_of(name: &str) -> Option<(&'static CStr, Family)> {
    SOCS.iter()
        .find(|s| s.0.to_bytes() == name.as_bytes())
        .map(|s| (s.0, s.1))
}

/// Reads and checks every simulator variable.
fn from_env() -> Result<SimConfig, String> {
    for (name, _) in std::env::vars_os() {
        let name = name.to_string_lossy();
        if name.starts_with("ASCEND_SIM_") && !KNOWN.contains(&&*name) {
            return Err(format!(
                "{name} is not a simulator variable; the simulator reads {}",
                KNOWN.join(", ")
            ));
        }
    }
    let verbose = match var(VERBOSE)? {
        None => false,
        Some(v) => parse_switch(&v).ok_or_else(|| {
            format!("{VERBOSE}={v:?} is not a switch: use 1, true, yes or on (0, false, no, off or empty: off)")
        })?,
    };
    let socs = parse_devices(&var(DEVICES)?.unwrap_or_else(|| DEFAULT_DEVICES.into()))?;
    let mem_bytes = match var(MEM_BYTES)? {
        None => DEFAULT_MEM_BYTES,
        Some(v) => parse_bytes(&v).filter(|&n| n > 0).ok_or_else(|| {
            format!(
                "{MEM_BYTES}={v:?} is not a positive byte count: digits with an optional K, M or G suffix (e.g. 512M)"
            )
        })?,
    };
    let faults = match var(FAULT)? {
        None => Vec::new(),
        Some(v) => parse_faults(&v)?,
    };
    let hccl_timeout_ms = match var(HCCL_TIMEOUT_MS)? {
        None => crate::hccl::DEFAULT_HCCL_TIMEOUT_MS,
        Some(v) => v
            .trim()
            .parse::<u64>()
            .ok()
            .filter(|&n| n > 0)
            .ok_or_else(|| {
                format!("{HCCL_TIMEOUT_MS}={v:?} is not a positive number of milliseconds")
            })?,
    };
    let racecheck = match var(RACECHECK)? {
        None => true,
        Some(v) => parse_switch(&v).ok_or_else(|| {
            format!("{RACECHECK}={v:?} is not a switch: use 1, true, yes or on (0, false, no, off or empty: off)")
        })?,
    };
    Ok(SimConfig {
        devices: socs
            .into_iter()
            .map(|(soc, _)| SimDevice {
                soc: soc.to_string_lossy().into_owned(),
                mem_bytes,
            })
            .collect(),
        faults: faults
            .into_iter()
            .map(|(i, n)| (crate::catalog::name_of(i).to_owned(), n))
            .collect(),
        hccl_timeout_ms,
        verbose,
        racecheck,
    })
}

/// Whether sanitizer findings are also printed: the active or requested configuration's
/// switch, else `ASCEND_SIM_VERBOSE` read leniently (before `aclInit`).
pub(crate) fn verbose() -> bool {
    if let Some(c) = lock(&ACTIVE).as_ref().or(lock(&REQUESTED).as_ref()) {
        return c.verbose;
    }
    std::env::var(VERBOSE)
        .ok()
        .and_then(|v| parse_switch(&v))
        .unwrap_or(false)
}

fn parse_switch(v: &str) -> Option<bool> {
    match v.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Some(true),
        "" | "0" | "false" | "no" | "off" => Some(false),
        _ => None,
    }
}

fn parse_devices(v: &str) -> Result<Vec<(&'static CStr, Family)>, String> {
    v.split(',')
        .map(str::trim)
        .map(|name| {
            soc_of(name).ok_or_else(|| {
                    format!(
                        "{DEVICES}={v:?}: {name:?} is not a SoC the simulator knows; use a comma-separated list of {}",
                        soc_list()
                    )
                })
        })
        .collect()
}

fn parse_bytes(s: &str) -> Option<usize> {
    let s = s.trim();
    let (num, mult) = match s.char_indices().last()? {
        (i, 'k' | 'K') => (&s[..i], 1usize << 10),
        (i, 'm' | 'M') => (&s[..i], 1 << 20),
        (i, 'g' | 'G') => (&s[..i], 1 << 30),
        _ => (s, 1),
    };
    num.trim().parse::<usize>().ok()?.checked_mul(mult)
}

fn parse_faults(v: &str) -> Result<Vec<(usize, u64)>, String> {
    v.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|item| {
            let (sym, n) = item.split_once(':').ok_or_else(|| {
                format!("{FAULT} item {item:?} is not `symbol:n` (e.g. aclrtMalloc:3)")
            })?;
            let i = symbol_index(sym.trim()).ok_or_else(|| {
                format!(
                    "{FAULT} item {item:?}: {:?} is not a simulated symbol (see ascend_sim::SYMBOLS)",
                    sym.trim()
                )
            })?;
            let n = n.trim().parse::<u64>().map_err(|_| {
                format!("{FAULT} item {item:?}: {:?} is not a call number", n.trim())
            })?;
            Ok((i, n))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parsers() {
        assert_eq!(parse_bytes("512M"), Some(512 << 20));
        assert_eq!(parse_bytes("12x"), None);
        assert_eq!(parse_switch(" On "), Some(true));
        assert_eq!(parse_switch("2"), None);
        assert_eq!(parse_devices("Ascend910B4, Ascend310P3").unwrap().len(), 2);
        let e = parse_devices("Ascend910B4,Foo123").unwrap_err();
        assert!(
            e.contains("\"Foo123\"") && e.contains("Ascend910_9391"),
            "{e}"
        );
        assert!(parse_devices("").is_err());
        assert!(
            parse_faults("aclrtMalloc:x")
                .unwrap_err()
                .contains("call number")
        );
        assert_eq!(parse_faults("aclrtMalloc:2,").unwrap().len(), 1);
    }
}
