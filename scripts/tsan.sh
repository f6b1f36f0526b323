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
# Whole binaries, then the modules of ascend-sim's gathered test binaries
# (`tests/<binary>/main.rs`) that share tensors, events and streams between threads: a
# filter names a module (`mish::` runs `ascend-sim/tests/operators/mish.rs`; no other module
# of these binaries contains one of these names). Both packages in each run, so that their
# features unify and the two runs share one instrumented build. Extra arguments are cargo
# options, passed to both runs.
run() {
    cargo +"$NIGHTLY" test -Zbuild-std --target "$TRIPLE" --locked --no-fail-fast \
        -p ascendcl -p ascend-sim "$@"
}
tests=(
    proof_concurrency proof_drop_order api_lifetimes proof_event_race
    proof_stream_ordering proof_parked_errors api_host
    proof_stream_deaths proof_stream_chaos error_text phase1
)
args=()
for t in "${tests[@]}"; do args+=(--test "$t"); done
status=0
run "${args[@]}" "$@" || status=1
run --test runtime --test operators "$@" -- runtime:: error_text:: mish:: || status=1
exit "$status"
