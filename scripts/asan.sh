#!/usr/bin/env bash
# Runs the workspace's tests (unit and integration; doctests are left to the plain run) under
# AddressSanitizer with leak detection on. Nightly is pinned so that CI is reproducible;
# `--target` keeps the sanitizer flags off build scripts and proc-macros, and the own
# target directory keeps the instrumented build apart from the normal one.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/nightly.sh
# The test executables export the ASan runtime's entry points, so that the instrumented
# simulator cdylib the dlopen tests load resolves them.
export RUSTFLAGS="-Zsanitizer=address -Clink-arg=-Wl,--export-dynamic-symbol=__asan_*"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target}/asan"
# allocator_may_return_null: the tests of huge host allocations expect the allocator to
# fail (Rust's `try_reserve` then returns an error); ASan would abort instead.
export ASAN_OPTIONS="detect_leaks=1:detect_stack_use_after_return=1:abort_on_error=0:allocator_may_return_null=1"
export LSAN_OPTIONS="suppressions=$PWD/scripts/lsan.supp:print_suppressions=0"
cargo +"$NIGHTLY" test --workspace --tests --target "$TRIPLE" --locked --no-fail-fast "$@"
