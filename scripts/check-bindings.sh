#!/usr/bin/env bash
# Regenerates ascend-sys's bindings from the project's header with bindgen and fails on
# any difference from the committed ascend-sys/src/bindings.rs. Needs libclang.
set -euo pipefail
cd "$(dirname "$0")/.."
# A clear failure instead of bindgen's panic when libclang is missing.
bash scripts/libclang.sh >/dev/null
ASCEND_SYS_BINDGEN_HEADER=project cargo build -p ascend-sys --features bindgen --locked --quiet
generated=$(ls -t target/debug/build/ascend-sys-*/out/bindings.rs | head -n 1)
if ! diff -u ascend-sys/src/bindings.rs "$generated"; then
    echo "ascend-sys/src/bindings.rs is stale: regenerate with" >&2
    echo "  ASCEND_SYS_BINDGEN_HEADER=project cargo build -p ascend-sys --features bindgen && cp $generated ascend-sys/src/bindings.rs" >&2
    exit 1
fi
echo "bindings match include/ascendcl_sys.h"
