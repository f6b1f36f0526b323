#!/usr/bin/env bash
# Model-checks the event/ticket bookkeeping (src/ledger.rs) with loom: every interleaving
# of a recording thread and a synchronising thread. Uses its own target directory, since
# `--cfg loom` rebuilds everything.
set -euo pipefail
cd "$(dirname "$0")/.."
export RUSTFLAGS="--cfg loom"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target}/loom"
cargo test -p ascendcl --lib --release --locked -- ledger::loom_tests "$@"
