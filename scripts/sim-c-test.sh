#!/usr/bin/env bash
# Builds libascend_sim.so, compiles ascend-sim/tests/c/sim_smoke.c and hccl_smoke.c against
# the project's own headers (ascend-sys/include/ascendcl_sys.h, hccl_sys.h) and runs them.
# Exits non-zero on failure.
# Honors CARGO_TARGET_DIR (default: target/ in the repository root).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build -p ascend-sim --locked
target_dir="${CARGO_TARGET_DIR:-target}"
lib_dir="$(cd "$target_dir/debug" && pwd)"
out_dir="$target_dir/sim-c-test"
mkdir -p "$out_dir"
# Each smoke test with the extra libraries it links.
for test in "sim_smoke -lm" "hccl_smoke -lpthread"; do
    read -r name libs <<<"$test"
    # shellcheck disable=SC2086 # $libs is a list of linker flags
    gcc -std=c11 -Wall -Wextra -Werror \
        -I ascend-sys/include \
        "ascend-sim/tests/c/$name.c" \
        -o "$out_dir/$name" \
        -L "$lib_dir" -lascend_sim -Wl,-rpath,"$lib_dir" $libs
    "$out_dir/$name"
done
