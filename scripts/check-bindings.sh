#!/usr/bin/env bash
# Regenerates ascend-sys's bindings from the project's header with bindgen and fails on
# any difference from the committed ascend-sys/src/bindings.rs and ascend-sys/src/hccl/bindings.rs.
# Needs libclang.
set -euo pipefail
cd "$(dirname "$0")/.."
# A clear failure instead of bindgen's panic when libclang is missing.
bash scripts/libclang.sh >/dev/null
ASCEND_SYS_BINDGEN_HEADER=project cargo build -p ascend-sys --features bindgen --locked --quiet
out=$(dirname "$(ls -t target/debug/build/ascend-sys-*/out/bindings.rs | head -n 1)")
stale=0
for pair in "bindings.rs:ascend-sys/src/bindings.rs:ascendcl_sys.h" \
            "hccl_bindings.rs:ascend-sys/src/hccl/bindings.rs:hccl_sys.h"; do
    IFS=: read -r generated committed header <<<"$pair"
    if ! diff -u "$committed" "$out/$generated"; then
        echo "$committed is stale: regenerate with" >&2
        echo "  ASCEND_SYS_BINDGEN_HEADER=project cargo build -p ascend-sys --features bindgen && cp $out/$generated $committed" >&2
        stale=1
    else
        echo "$committed matches include/$header"
    fi
done
exit $stale
