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
gcc -std=c11 -Wall -Wextra -Werror \
    -I ascend-sys/include \
    ascend-sim/tests/c/sim_smoke.c \
    -o "$out_dir/sim_smoke" \
    -L "$lib_dir" -lascend_sim -Wl,-rpath,"$lib_dir" -lm
"$out_dir/sim_smoke"
gcc -std=c11 -Wall -Wextra -Werror \
    -I ascend-sys/include \
    ascend-sim/tests/c/hccl_smoke.c \
    -o "$out_dir/hccl_smoke" \
    -L "$lib_dir" -lascend_sim -Wl,-rpath,"$lib_dir" -lpthread
"$out_dir/hccl_smoke"
