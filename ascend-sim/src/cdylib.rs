//! Finding (or building) `libascend_sim.so` with its C exports, for tests of the real
//! `dlopen` path.

use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, PoisonError};

/// Whether `lib` is a loadable shared object exporting the simulator's C API.
fn exports_c_api(lib: &Path) -> bool {
    if !lib.is_file() {
        return false;
    }
    let Ok(path) = CString::new(lib.as_os_str().as_encoded_bytes()) else {
        return false;
    };
    // SAFETY: a NUL-terminated path of a library built from this crate (its initialisers
    // have no preconditions); one symbol is looked up and the handle is kept open, as the
    // caller is about to load the library anyway.
    unsafe {
        let handle = libc::dlopen(path.as_ptr(), libc::RTLD_NOW);
        !handle.is_null() && !libc::dlsym(handle, c"ascendSimGetCounters".as_ptr()).is_null()
    }
}

/// The path of `libascend_sim.so` with its C exports, for a test that loads the
/// simulator as CANN's libraries through `dlopen`.
///
/// `cargo test --workspace` leaves it next to the test executable (`target/<profile>/deps/`,
/// or uplifted to `target/<profile>/` by `cargo build`). A crate tested on its own (`cargo
/// test -p ascendcl`) builds the simulator only as an rlib without its C exports; then the
/// library is built here with cargo, into `target/<profile>/../ascend-sim-cdylib/` (its own
/// target directory: the running `cargo test` holds the lock of the main one). The result
/// is computed once per process.
///
/// # Errors
/// Why no library could be found or built.
pub fn cdylib_path() -> Result<PathBuf, String> {
    static FOUND: Mutex<Option<PathBuf>> = Mutex::new(None);
    let mut found = FOUND.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(path) = found.as_ref() {
        return Ok(path.clone());
    }
    let exe = std::env::current_exe().map_err(|e| format!("test executable path: {e}"))?;
    let deps = exe.parent().ok_or("the test executable has no directory")?;
    let profile_dir = deps
        .parent()
        .ok_or("tests run from target/<profile>/deps")?;
    let name = "libascend_sim.so";
    let candidates = [deps.join(name), profile_dir.join(name)];
    let path = match candidates.iter().find(|p| exports_c_api(p)) {
        Some(p) => p.clone(),
        None => build(profile_dir)?,
    };
    *found = Some(path.clone());
    Ok(path)
}

/// Builds the simulator's cdylib (default features: C exports on) in its own target dir.
fn build(profile_dir: &Path) -> Result<PathBuf, String> {
    let target_root = profile_dir
        .parent()
        .ok_or("tests run from target/<profile>/deps")?;
    let target_dir = target_root.join("ascend-sim-cdylib");
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = Command::new(&cargo)
        .args(["build", "--lib", "--locked", "--manifest-path"])
        .arg(&manifest)
        .env("CARGO_TARGET_DIR", &target_dir)
        // Flags meant for the test build (a sanitizer's, applied with `--target`) would also
        // reach this build's proc-macros, which cannot be loaded instrumented; an
        // uninstrumented simulator loads into any process.
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .status()
        .map_err(|e| format!("running {}: {e}", Path::new(&cargo).display()))?;
    if !status.success() {
        return Err(format!(
            "`cargo build --manifest-path {}` failed ({status})",
            manifest.display()
        ));
    }
    let lib = target_dir.join("debug").join("libascend_sim.so");
    if exports_c_api(&lib) {
        Ok(lib)
    } else {
        Err(format!("{} was built but exports no C API", lib.display()))
    }
}
