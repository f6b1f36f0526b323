#!/usr/bin/env bash
# Hardware smoke test for an Atlas machine with CANN installed: loads the real CANN,
# prints the SoC and CANN versions, runs the examples with CANN forced (data_parallel on
# every NPU, through HCCL, with threads and with one process per NPU), and the #[ignore]d NPU test set (the property suite against the
# CPU reference). Never run in CI here.
set -euo pipefail
cd "$(dirname "$0")/.."

for env in "${ASCEND_HOME_PATH:-}/../set_env.sh" /usr/local/Ascend/ascend-toolkit/set_env.sh /usr/local/Ascend/cann/set_env.sh; do
    if [ -f "$env" ]; then
        echo "sourcing $env"
        # shellcheck disable=SC1090
        set +u; source "$env"; set -u
        break
    fi
done

root="${ASCEND_HOME_PATH:-${ASCEND_TOOLKIT_HOME:-}}"
if [ -z "$root" ] || [ ! -f "$root/lib64/libascendcl.so" ]; then
    echo "error: no CANN toolkit found (ASCEND_HOME_PATH unset or without lib64/libascendcl.so)." >&2
    echo "Install CANN and source its set_env.sh, e.g. /usr/local/Ascend/ascend-toolkit/set_env.sh." >&2
    exit 1
fi
echo "CANN toolkit: $root"
if [ -f "$root/version.cfg" ]; then
    echo "CANN version.cfg:"; sed 's/^/  /' "$root/version.cfg"
fi
for info in "$root"/*/ascend_toolkit_install.info "$root"/ascend_toolkit_install.info; do
    [ -f "$info" ] && { echo "$info:"; sed 's/^/  /' "$info"; }
done
command -v npu-smi >/dev/null && npu-smi info || true

# Force CANN: the example uses Runtime::auto(), which would fall back to the simulator;
# the test below fails instead of falling back.
echo "== SoC (Runtime::cann) =="
cargo test --test npu_smoke -- --ignored --nocapture npu_soc_and_sample_values
echo "== example =="
cargo run --no-default-features --example mish_backward
echo "== data-parallel example: every NPU one rank, HCCL all_reduce =="
cargo run --release --no-default-features --example data_parallel
echo "== data-parallel example as a job: one process per NPU, Communicator::from_env =="
cargo run --release --no-default-features --example data_parallel -- --processes all
echo "== training example: Mish forward and backward on preallocated tensors =="
cargo run --no-default-features --example mish_layer_training
echo "== MLP training example: the whole step on the device, checked against the CPU reference =="
cargo run --no-default-features --example mlp_training
echo "== property suite on the NPU =="
cargo test --test npu_smoke -- --ignored --nocapture npu_property_suite_against_the_reference
