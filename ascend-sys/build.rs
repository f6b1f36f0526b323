//! Chooses the declarations that `src/lib.rs` compiles.
//!
//! Without the `bindgen` feature nothing is generated: the committed, pre-generated
//! `src/bindings.rs` is used, so a build needs neither libclang nor CANN. With it,
//! bindgen runs against the real CANN headers when a toolkit is found, else against
//! the project's own `include/ascendcl_sys.h`, and writes `$OUT_DIR/bindings.rs`; likewise
//! `$OUT_DIR/hccl_bindings.rs` from the toolkit's `hccl/hccl.h` or `include/hccl_sys.h`.
//!
//! It also tells dependents' build scripts which toolkit it saw (`links = "ascendcl"`):
//! `DEP_ASCENDCL_ROOT` is the toolkit root holding `lib64/libascendcl.so`, empty when
//! none, and `DEP_ASCENDCL_SEARCHED` the roots that were tried (`:`-separated).

use std::env;
use std::path::PathBuf;

const TOOLKIT_VARS: [&str; 2] = ["ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME"];
const TOOLKIT_DIRS: [&str; 2] = [
    "/usr/local/Ascend/ascend-toolkit/latest",
    "/usr/local/Ascend/cann",
];
/// Set to `project` to regenerate from the project's header even where CANN is installed.
const HEADER_CHOICE_VAR: &str = "ASCEND_SYS_BINDGEN_HEADER";

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=include/ascendcl_sys.h");
    println!("cargo:rerun-if-changed=src/bindings.rs");
    println!("cargo:rerun-if-changed=include/hccl_sys.h");
    println!("cargo:rerun-if-changed=src/hccl/bindings.rs");
    for var in TOOLKIT_VARS.iter().chain([&HEADER_CHOICE_VAR]) {
        println!("cargo:rerun-if-env-changed={var}");
    }
    println!("cargo::rustc-check-cfg=cfg(ascend_sys_generated)");

    let roots = toolkit_roots();
    let found = roots
        .iter()
        .find(|root| root.join("lib64/libascendcl.so").is_file());
    let show = |p: &PathBuf| p.display().to_string();
    println!("cargo:root={}", found.map(show).unwrap_or_default());
    let searched: Vec<String> = roots.iter().map(show).collect();
    println!("cargo:searched={}", searched.join(":"));

    #[cfg(feature = "bindgen")]
    generate::run();
}

/// Candidate toolkit roots, in the order the run-time loader searches them.
fn toolkit_roots() -> Vec<PathBuf> {
    TOOLKIT_VARS
        .iter()
        .filter_map(env::var_os)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .chain(TOOLKIT_DIRS.iter().map(PathBuf::from))
        .collect()
}

/// The include directory of an installed toolkit, if any.
#[cfg_attr(not(feature = "bindgen"), allow(dead_code))]
fn toolkit_include_dir() -> Option<PathBuf> {
    toolkit_roots()
        .into_iter()
        .map(|root| root.join("include"))
        .find(|inc| inc.join("acl/acl.h").is_file())
}

#[cfg(feature = "bindgen")]
mod generate {
    use super::*;

    pub fn run() {
        let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("cargo sets it"));
        let out = PathBuf::from(env::var("OUT_DIR").expect("cargo sets it")).join("bindings.rs");
        let force_project = env::var(HEADER_CHOICE_VAR).is_ok_and(|v| v == "project");

        let mut builder = bindgen::Builder::default()
            .rust_target(bindgen::RustTarget::stable(85, 0).expect("valid target"))
            .rust_edition(bindgen::RustEdition::Edition2024)
            .allowlist_function("acl.*")
            .allowlist_type("acl.*")
            .allowlist_var("ACL.*")
            .prepend_enum_name(false)
            .default_enum_style(bindgen::EnumVariation::Consts)
            .generate_comments(false)
            .layout_tests(true)
            .derive_default(false)
            .formatter(bindgen::Formatter::Rustfmt)
            .parse_callbacks(Box::new(StatusCodesAreSigned));

        let source = match toolkit_include_dir().filter(|_| !force_project) {
            Some(include) => {
                let wrapper = "#include \"acl/acl.h\"\n\
                               #include \"aclnn/acl_meta.h\"\n\
                               #include \"aclnnop/aclnn_mish_backward.h\"\n";
                builder = builder
                    .header_contents("cann_wrapper.h", wrapper)
                    .clang_arg(format!("-I{}", include.display()));
                format!("vendor headers in {}", include.display())
            }
            None => {
                let header = manifest.join("include/ascendcl_sys.h");
                builder = builder.header(header.to_string_lossy());
                "include/ascendcl_sys.h".to_owned()
            }
        };

        let bindings = builder
            .generate()
            .unwrap_or_else(|e| panic!("bindgen failed on {source}: {e}"));
        bindings
            .write_to_file(&out)
            .unwrap_or_else(|e| panic!("cannot write {}: {e}", out.display()));
        println!("cargo:rustc-cfg=ascend_sys_generated");
        println!("cargo:rustc-env=ASCEND_SYS_BINDINGS_SOURCE={source}");
        hccl(&manifest, force_project);
    }

    /// HCCL's declarations, in a module of their own (`crate::hccl`): the runtime types
    /// they use come from the main bindings.
    fn hccl(manifest: &std::path::Path, force_project: bool) {
        let out =
            PathBuf::from(env::var("OUT_DIR").expect("cargo sets it")).join("hccl_bindings.rs");
        let mut builder = bindgen::Builder::default()
            .rust_target(bindgen::RustTarget::stable(85, 0).expect("valid target"))
            .rust_edition(bindgen::RustEdition::Edition2024)
            .allowlist_function("Hccl.*")
            .allowlist_type("Hccl.*")
            .allowlist_var("HCCL_.*")
            .blocklist_type("acl.*")
            .raw_line("use crate::bindings::aclrtStream;")
            .prepend_enum_name(false)
            .default_enum_style(bindgen::EnumVariation::Consts)
            .generate_comments(false)
            .layout_tests(true)
            .derive_default(false)
            .formatter(bindgen::Formatter::Rustfmt);
        let vendor = toolkit_include_dir()
            .filter(|inc| inc.join("hccl/hccl.h").is_file())
            .filter(|_| !force_project);
        let source = match vendor {
            // The vendor's hccl_types.h sizes the root info with a C++ constant.
            Some(include) => {
                builder = builder
                    .header_contents("hccl_wrapper.h", "#include \"hccl/hccl.h\"\n")
                    .clang_args(["-x", "c++", "-std=c++14"])
                    .clang_arg(format!("-I{}", include.display()));
                format!("vendor headers in {}", include.display())
            }
            None => {
                let include = manifest.join("include");
                builder = builder
                    .header(include.join("hccl_sys.h").to_string_lossy())
                    .clang_arg(format!("-I{}", include.display()));
                "include/hccl_sys.h".to_owned()
            }
        };
        builder
            .generate()
            .unwrap_or_else(|e| panic!("bindgen failed on {source}: {e}"))
            .write_to_file(&out)
            .unwrap_or_else(|e| panic!("cannot write {}: {e}", out.display()));
        println!("cargo:rustc-env=ASCEND_SYS_HCCL_BINDINGS_SOURCE={source}");
    }

    /// `aclError` is `int` and `aclnnStatus` is `int32_t`: give the code macros that type,
    /// so that Rust compares them without casts.
    #[derive(Debug)]
    struct StatusCodesAreSigned;

    impl bindgen::callbacks::ParseCallbacks for StatusCodesAreSigned {
        fn int_macro(&self, name: &str, _value: i64) -> Option<bindgen::callbacks::IntKind> {
            (name.starts_with("ACL_") || name.starts_with("ACLNN_"))
                .then_some(bindgen::callbacks::IntKind::I32)
        }
    }
}
