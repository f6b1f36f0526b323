#!/usr/bin/env bash
# Model-checks the stream bookkeeping with loom, over every interleaving of its threads:
# the event ledger (src/ledger.rs: the record a wait credits is the one it awaited), the
# stream clocks (src/clock.rs: a dropping stream is busy until drained, a failed drain
# never counts as done, a failure is seen or the work stays unchecked) and the use
# records built on them (src/uses.rs: release and host reads wait for a stream dropped
# elsewhere, or leak and fail after a failed drain). Uses its own target directory, since
# `--cfg loom` rebuilds everything.
set -euo pipefail
cd "$(dirname "$0")/.."
export RUSTFLAGS="--cfg loom"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target}/loom"
cargo test -p ascendcl --lib --release --locked -- ledger::loom_tests clock::loom_tests uses::loom_tests "$@"
