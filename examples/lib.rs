//! The examples of `ascendcl`, a package of their own so that `cargo run --example <name>`
//! builds only `ascendcl` and its dependencies, not the test and bench dependencies of the
//! library. Every example is an `[[example]]` of `examples/Cargo.toml`.
