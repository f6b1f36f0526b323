//! `ASCENDCL_BACKEND` and the announced fallback of `Runtime::auto()`. Each case runs this
//! binary again as a child process with its own environment, since the announcement is
//! printed once per process and the environment is process-wide.

use ascendcl::Runtime;
use std::process::Command;

const CHILD: &str = "ASCENDCL_BACKEND_TEST_CHILD";
const LINE: &str = "ascendcl: no CANN installation found; running on the simulator";

/// What the child saw: its stdout (one line per `auto()` call) and stderr.
fn run_child(vars: &[(&str, &str)], home: &std::path::Path) -> (String, String) {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args([
        "--exact",
        "backend_choice",
        "--nocapture",
        "--test-threads=1",
    ])
    .env(CHILD, "1")
    .env("ASCEND_HOME_PATH", home)
    .env_remove("ASCEND_TOOLKIT_HOME")
    .env_remove("ASCENDCL_BACKEND")
    .env_remove("ASCENDCL_QUIET");
    for (k, v) in vars {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    let seen = stdout
        .lines()
        // The harness may print `test backend_choice ... ` before the first line.
        .filter_map(|l| l.find("seen: ").map(|at| &l[at..]))
        .collect::<Vec<_>>()
        .join("\n");
    (seen, String::from_utf8(out.stderr).unwrap())
}

#[test]
fn backend_choice() {
    if std::env::var_os(CHILD).is_some() {
        for _ in 0..2 {
            match Runtime::auto() {
                Ok(rt) => println!("seen: backend {}", rt.backend()),
                Err(e) => println!("seen: error {e}"),
            }
        }
        return;
    }
    let home = std::env::temp_dir().join(format!("ascendcl-backend-{}", std::process::id()));
    std::fs::create_dir_all(home.join("lib64")).unwrap();
    let cann_installed = ascendcl::Runtime::cann().is_ok();
    let sim = "seen: backend simulator (ascend-sim)\nseen: backend simulator (ascend-sim)";

    let (seen, err) = run_child(&[], &home);
    if cann_installed {
        assert_eq!(seen, "seen: backend CANN\nseen: backend CANN");
        assert!(!err.contains(LINE), "{err}");
    } else {
        assert_eq!(seen, sim);
        assert_eq!(err.matches(LINE).count(), 1, "announced once: {err}");
        assert!(
            err.contains("Set ASCENDCL_BACKEND=cann to require CANN"),
            "{err}"
        );
    }

    if !cann_installed {
        let (seen, err) = run_child(&[("ASCENDCL_QUIET", "1")], &home);
        assert_eq!(seen, sim);
        assert!(!err.contains(LINE), "{err}");

        let (seen, err) = run_child(&[("ASCENDCL_BACKEND", "cann")], &home);
        assert!(
            seen.starts_with("seen: error CANN libraries (") && seen.contains("not found"),
            "{seen}"
        );
        assert!(!seen.contains("simulator (ascend-sim)"), "{seen}");
        assert!(!err.contains(LINE), "{err}");
    }

    let (seen, err) = run_child(&[("ASCENDCL_BACKEND", "simulator")], &home);
    assert_eq!(seen, sim);
    assert!(!err.contains(LINE), "chosen, so not announced: {err}");

    let (seen, _) = run_child(&[("ASCENDCL_BACKEND", "npu")], &home);
    assert_eq!(
        seen.lines().next().unwrap(),
        "seen: error invalid argument: ASCENDCL_BACKEND=\"npu\" is not a backend: use `cann` \
         (CANN only), `simulator` or `auto` (CANN when installed, else the simulator)"
    );
    let _ = std::fs::remove_dir_all(home);
}
