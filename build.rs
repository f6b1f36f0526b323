//! Reports the CANN toolkit that `ascend-sys`'s build script detected.
//!
//! Nothing is linked: the libraries are opened at run time. The toolkit root (empty when
//! none) is recorded in `ASCENDCL_BUILD_TOOLKIT` for `Runtime::build_toolkit()`. The
//! build stays silent unless `ASCENDCL_BUILD_VERBOSE` is set, in which case the result is
//! printed as a cargo warning. Detection itself (`ASCEND_HOME_PATH`,
//! `ASCEND_TOOLKIT_HOME`, the standard install roots) lives in `ascend-sys/build.rs`,
//! which reruns when those variables change and passes its findings on through
//! `DEP_ASCENDCL_ROOT` / `DEP_ASCENDCL_SEARCHED`.

use std::env;

const VERBOSE_VAR: &str = "ASCENDCL_BUILD_VERBOSE";

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed={VERBOSE_VAR}");

    let root = env::var("DEP_ASCENDCL_ROOT").unwrap_or_default();
    let searched = env::var("DEP_ASCENDCL_SEARCHED").unwrap_or_default();
    println!("cargo:rustc-env=ASCENDCL_BUILD_TOOLKIT={root}");

    if env::var_os(VERBOSE_VAR).is_some() {
        if root.is_empty() {
            println!(
                "cargo:warning=ascendcl: no CANN toolkit found (tried {}); the simulator backend will be used at run time",
                searched.replace(':', ", ")
            );
        } else {
            println!("cargo:warning=ascendcl: CANN toolkit found at {root}");
        }
    }
}
