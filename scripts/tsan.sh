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
tests=(
    # ascendcl: threads, drops, lifetimes, events and stream ordering
    proof_concurrency proof_drop_order api_lifetimes proof_event_race
    proof_stream_ordering proof_parked_errors api_host
    # streams dropped on other threads, failed calls, random interleavings
    proof_stream_deaths proof_stream_chaos
    # ascend-sim: tests that call the runtime from several threads
    runtime error_text mish phase1
)
args=()
for t in "${tests[@]}"; do args+=(--test "$t"); done
cargo +"$NIGHTLY" test -Zbuild-std --target "$TRIPLE" --locked --no-fail-fast \
    -p ascendcl -p ascend-sim "${args[@]}" "$@"
