#!/usr/bin/env bash
# Runs the workspace's tests (unit and integration; doctests are left to the plain run; the
# scope is below) under AddressSanitizer with leak detection on. Nightly is pinned so that CI is reproducible;
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
# What runs instrumented, decided per package and per test binary:
#   - ascend-sim, ascend-sys: every test (the simulator's C ABI, its kernels and HCCL; the
#     loader's dlopen): the FFI and unsafe code ASan is for.
#   - ascendcl: its unit tests and every test binary but `npu_smoke` (its tests need an NPU
#     and are ignored here: building them instrumented would buy nothing). The `reference`
#     binary runs: the CPU reference has unsafe SIMD loads and gathers (src/reference/simd,
#     gather.rs, narrow.rs), which its golden, linear, pointwise and semantic tests reach
#     with every length and tail; its exhaustive and random accuracy sweeps (the
#     `--skip`s) repeat the same code paths over more values (values cannot make a load go
#     out of bounds, lengths can) and cost minutes instrumented: they run in the suite.
#   - not ascend-ops (`#![forbid(unsafe_code)]`: tables and formulas; its code runs
#     instrumented inside the simulator's tests), not the examples (no tests), not
#     burn-ascend (safe Rust over ascendcl, whose unsafe code is instrumented here; burn's
#     dependency tree would double the instrumented build).
# One package set for both runs, so that features unify and they share one build.
# `hccl_processes` has its own `main`, which would take the `--skip` names for filters:
# it runs apart.
targets=()
for t in tests/*.rs tests/*/main.rs ascend-sim/tests/*.rs ascend-sim/tests/*/main.rs \
    ascend-sys/tests/*.rs ascend-sys/tests/*/main.rs; do
    [ -e "$t" ] || continue
    t=${t%/main.rs}
    t=${t%.rs}
    t=${t##*/}
    case "$t" in npu_smoke | hccl_processes) ;; *) targets+=(--test "$t") ;; esac
done
run() {
    cargo +"$NIGHTLY" test -p ascend-sim -p ascend-sys -p ascendcl --target "$TRIPLE" \
        --locked --no-fail-fast "$@"
}
status=0
run --lib "${targets[@]}" "$@" -- \
    --skip exhaustive_x_always_correctly_rounded --skip random_correctly_rounded || status=1
run --test hccl_processes "$@" || status=1
exit "$status"
