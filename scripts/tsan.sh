#!/usr/bin/env bash
# Runs the tests that share tensors, events and streams between threads under
# ThreadSanitizer. std is rebuilt instrumented (`-Zbuild-std`), so that its mutexes and
# condition variables are seen as synchronisation; that needs the pinned nightly's rust-src.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/nightly.sh
rustup component list --toolchain "$NIGHTLY" --installed | grep -q '^rust-src' ||
    rustup component add rust-src --toolchain "$NIGHTLY"
export RUSTFLAGS="-Zsanitizer=thread"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target}/tsan"
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1"
# Whole binaries, then the modules of the gathered test binaries (`tests/<binary>/main.rs`)
# that share tensors, events and streams between threads: a filter names a module
# (`concurrency::` runs `tests/proofs/concurrency.rs`; `runtime::` and `error_text::` in
# ascend-sim's `runtime` binary, `host::` and `error_text::` in ascendcl's; no other module
# of these binaries contains one of these names). Both packages in each run, so that their
# features unify and the two runs share one instrumented build. Extra arguments are cargo
# options, passed to both runs.
run() {
    cargo +"$NIGHTLY" test -Zbuild-std --target "$TRIPLE" --locked --no-fail-fast \
        -p ascendcl -p ascend-sim "$@"
}
status=0
run --test api_lifetimes --test proof_parked_errors --test proof_stream_deaths \
    --test proof_stream_chaos --test phase1 "$@" || status=1
run --test proofs --test runtime --test operators "$@" -- \
    concurrency:: drop_order:: event_race:: stream_ordering:: host:: error_text:: \
    runtime:: mish:: || status=1
exit "$status"
