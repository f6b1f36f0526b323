//! `Runtime::auto()` falls back to the simulator only when no CANN installation exists; a
//! broken one is an error naming the library and the reason, and the choice is reported
//! through `tracing`. One `#[test]`: it sets `ASCEND_HOME_PATH`.

use ascendcl::{Backend, Error, LoadError, Runtime};
use logs::Collect;

#[path = "common/logs.rs"]
mod logs;

fn toolkit(tag: &str) -> std::path::PathBuf {
    let root = std::env::temp_dir().join(format!("ascendcl-auto-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(root.join("lib64")).unwrap();
    root
}

#[test]
fn auto_falls_back_only_when_no_installation_exists() {
    let (logs, _guard) = Collect::install();

    // A toolkit whose runtime library is not a loadable shared object.
    let broken = toolkit("broken");
    let lib = broken.join("lib64").join("libascendcl.so");
    std::fs::write(&lib, b"not an ELF file").unwrap();
    // SAFETY: the only test of this binary; nothing else reads the environment meanwhile.
    unsafe { std::env::set_var("ASCEND_HOME_PATH", &broken) };
    let err = Runtime::auto().expect_err("a broken install must not fall back");
    let Error::Load(LoadError::Unusable { searched }) = &err else {
        panic!("expected Load(Unusable), got {err:?}");
    };
    let text = err.to_string();
    assert!(text.contains("libascendcl.so"), "{text}");
    assert!(
        text.contains(&broken.join("lib64").display().to_string()),
        "{text}"
    );
    assert!(!searched.is_empty());
    assert!(
        logs.lines().iter().any(|l| l.contains("cannot be used")),
        "{:?}",
        logs.lines()
    );

    // An empty toolkit directory and nothing anywhere else: the simulator, and why.
    let empty = toolkit("empty");
    // SAFETY: as above.
    unsafe { std::env::set_var("ASCEND_HOME_PATH", &empty) };
    let rt = Runtime::auto().expect("fallback to the simulator");
    assert_eq!(rt.backend(), Backend::Simulator);
    assert!(
        logs.lines()
            .iter()
            .any(|l| l.contains("backend: the simulator") && l.contains("searched")),
        "{:?}",
        logs.lines()
    );
    for dir in [broken, empty] {
        let _ = std::fs::remove_dir_all(dir);
    }
}
