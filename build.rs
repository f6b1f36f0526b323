//! Detects an installed CANN toolkit at build time.
//!
//! Nothing is linked: the libraries are opened at run time. What is found is recorded in
//! `ASCENDCL_BUILD_TOOLKIT` (the toolkit root, empty when none), which
//! [`Runtime`](crate) documentation and diagnostics can show. The build stays silent
//! unless `ASCENDCL_BUILD_VERBOSE` is set, in which case the result is printed as a cargo
//! warning.

use std::env;
use std::path::PathBuf;

const TOOLKIT_VARS: [&str; 2] = ["ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME"];
const TOOLKIT_DIRS: [&str; 2] = [
    "/usr/local/Ascend/ascend-toolkit/latest",
    "/usr/local/Ascend/cann",
];
const VERBOSE_VAR: &str = "ASCENDCL_BUILD_VERBOSE";

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    for var in TOOLKIT_VARS.iter().chain([&VERBOSE_VAR]) {
        println!("cargo:rerun-if-env-changed={var}");
    }

    let candidates = TOOLKIT_VARS
        .iter()
        .filter_map(|var| env::var_os(var).map(|v| (format!("${var}"), PathBuf::from(v))))
        .filter(|(_, root)| !root.as_os_str().is_empty())
        .chain(
            TOOLKIT_DIRS
                .iter()
                .map(|d| (d.to_string(), PathBuf::from(d))),
        );
    let mut found = None;
    let mut tried = Vec::new();
    for (source, root) in candidates {
        if root.join("lib64/libascendcl.so").is_file() {
            found = Some((source, root));
            break;
        }
        tried.push(root.display().to_string());
    }

    let root = found
        .as_ref()
        .map(|(_, root)| root.display().to_string())
        .unwrap_or_default();
    println!("cargo:rustc-env=ASCENDCL_BUILD_TOOLKIT={root}");

    if env::var_os(VERBOSE_VAR).is_some() {
        match &found {
            Some((source, root)) => println!(
                "cargo:warning=ascendcl: CANN toolkit found at {} (from {source})",
                root.display()
            ),
            None => println!(
                "cargo:warning=ascendcl: no CANN toolkit found (tried {}); the simulator backend will be used at run time",
                tried.join(", ")
            ),
        }
    }
}
