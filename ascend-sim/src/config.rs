//! The simulator's environment variables, read and checked once, at `aclInit`. A value
//! the simulator cannot use, or an `ASCEND_SIM_*` name it does not know (a typo would
//! otherwise be ignored in silence), fails `aclInit` with a message naming what is
//! accepted.

use crate::state::symbol_index;
use crate::tables::{Family, SOCS, soc_list};
use std::env::VarError;
use std::ffi::CStr;

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

/// What `aclInit` configures.
pub(crate) struct Config {
    /// One SoC per device.
    pub socs: Vec<(&'static CStr, Family)>,
    pub mem_bytes: usize,
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

/// Reads and checks every simulator variable.
pub(crate) fn from_env() -> Result<Config, String> {
    for (name, _) in std::env::vars_os() {
        let name = name.to_string_lossy();
        if name.starts_with("ASCEND_SIM_") && !KNOWN.contains(&&*name) {
            return Err(format!(
                "{name} is not a simulator variable; the simulator reads {}",
                KNOWN.join(", ")
            ));
        }
    }
    if let Some(v) = var(VERBOSE)? {
        parse_switch(&v).ok_or_else(|| {
            format!("{VERBOSE}={v:?} is not a switch: use 1, true, yes or on (0, false, no, off or empty: off)")
        })?;
    }
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
    Ok(Config {
        socs,
        mem_bytes,
        faults,
        hccl_timeout_ms,
        racecheck,
    })
}

/// Whether sanitizer findings are also printed (`ASCEND_SIM_VERBOSE`; checked at
/// `aclInit`, read leniently before it).
pub(crate) fn verbose() -> bool {
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
            SOCS.iter()
                .find(|s| s.0.to_bytes() == name.as_bytes())
                .map(|s| (s.0, s.1))
                .ok_or_else(|| {
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
