#!/usr/bin/env bash
# Checks ascend-sys/include/ascendcl_sys.h against the vendor's own AscendCL headers, and
# ascend-sys/include/hccl_sys.h against the vendor's hccl.h / hccl_types.h.
#
# The runtime headers ship inside the PyPI wheel torch-npu (pinned below, verified by
# sha256). Since 2.9 they are C++-only (constexpr), so the check compiles, as C++, a file that includes the vendor headers and
# then:
#   * static_asserts every enum value and status-code constant of the project's header that
#     the vendor headers define (the aclnn codes are not in that wheel; for those the
#     reference file is the source),
#   * includes the project's header again in prototype-only mode, so that every runtime
#     function is redeclared next to the vendor's declaration: any difference in a
#     parameter or return type is a compile error ("conflicting declaration").
# The HCCL header is checked the same way (every HCCL_ constant static_asserted, every
# prototype redeclared next to the vendor's hccl.h, the root info's size compared).
# `--self-test` also proves that both checks fail on a wrong value and on a wrong prototype.
set -euo pipefail
cd "$(dirname "$0")/.."

WHEEL_VERSION="2.9.0"
WHEEL_FILE="torch_npu-${WHEEL_VERSION}-cp311-cp311-manylinux_2_28_x86_64.whl"
WHEEL_SHA256="afe075e10593b3a7e5414322bff7ff54e6d5a8836e9af8f00bc3e4466dadf6bb"
CACHE="${ASCENDCL_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ascendcl}"
HEADER="ascend-sys/include/ascendcl_sys.h"
HCCL_HEADER="ascend-sys/include/hccl_sys.h"

mkdir -p "$CACHE"
if [ ! -f "$CACHE/$WHEEL_FILE" ] || ! echo "$WHEEL_SHA256  $CACHE/$WHEEL_FILE" | sha256sum -c --quiet - 2>/dev/null; then
    rm -f "$CACHE/$WHEEL_FILE"
    python3 -m pip download --quiet --no-deps --only-binary=:all: \
        --python-version 3.11 --platform manylinux_2_28_x86_64 \
        "torch-npu==${WHEEL_VERSION}" -d "$CACHE"
fi
echo "$WHEEL_SHA256  $CACHE/$WHEEL_FILE" | sha256sum -c --quiet -

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
python3 - "$CACHE/$WHEEL_FILE" "$WORK/vendor" "$WORK/vendor_root" <<'PY'
import os, sys, zipfile
# The runtime headers by themselves (include "acl/acl.h"), and the tree hccl.h expects
# (it includes "third_party/hccl/inc/hccl/hccl_types.h" and "third_party/acl/inc/acl/acl.h").
trees = [("torch_npu/include/third_party/acl/inc/", sys.argv[2] + "/"),
         ("torch_npu/include/third_party/", sys.argv[3] + "/third_party/")]
with zipfile.ZipFile(sys.argv[1]) as wheel:
    for name in wheel.namelist():
        for prefix, root in trees:
            if name.startswith(prefix) and name.endswith(".h"):
                target = root + name[len(prefix):]
                os.makedirs(os.path.dirname(target), exist_ok=True)
                with open(target, "wb") as out:
                    out.write(wheel.read(name))
PY
VENDOR_INC="$WORK/vendor"
VENDOR_ROOT="$WORK/vendor_root"

# The start of both checks' Python, read before each one's own part: its arguments (our
# header, the vendor's header directory, the output file's stem), our header's text, and
# constants(DEFINE, ENUM), the (name, value) pairs of the #defines and enum members whose
# names match those patterns.
PY_COMMON=$(cat <<'PY'
import re, sys, pathlib
ours, vendor_dir, out = sys.argv[1], pathlib.Path(sys.argv[2]), sys.argv[3]
text = pathlib.Path(ours).read_text()
def constants(define, enum):
    return (re.findall(r'#define\s+(%s)\s+(-?\d+)' % define, text)
            + re.findall(r'^\s*(%s)\s*=\s*(-?\d+)\s*,?\s*$' % enum, text, re.M))
PY
)

# check HEADER_DIR OUT: compile the conformance check of the header in HEADER_DIR (its
# steps return on failure: callers test it in `if`, where `set -e` does not apply).
check() {
    local header_dir=$1 out=$2
    { echo "$PY_COMMON"; cat <<'PY'; } | python3 - "$header_dir/ascendcl_sys.h" "$VENDOR_INC" "$out" || return 1
values = constants(r'ACLN?N?_\w+', r'ACL_\w+')
vendor_text = "\n".join(p.read_text(errors="replace") for p in (vendor_dir / "acl").rglob("*.h"))
checked, absent = [], []
for name, value in values:
    (checked if re.search(r'\b%s\b' % name, vendor_text) else absent).append((name, value))
with open(out + ".cpp", "w") as f:
    f.write('#include "acl/acl.h"\n')
    for name, value in checked:
        f.write('static_assert((long long)(%s) == %sLL, "%s differs from the vendor header");\n'
                % (name, value, name))
    f.write('#define ASCENDCL_SYS_NO_TYPES\n#define ASCENDCL_SYS_NO_ACLNN_API\n')
    f.write('#include "ascendcl_sys.h"\n')
runtime = text.split("#ifndef ASCENDCL_SYS_NO_RUNTIME_API")[1].split("#endif")[0]
protos = re.findall(r'^(?:aclError|const char \*)\s*(\w+)\(', runtime, re.M)
missing = [p for p in protos if not re.search(r'\b%s\s*\(' % p, vendor_text)]
if missing:
    sys.exit("runtime functions missing from the vendor headers: " + ", ".join(missing))
print("%d constants compared, %d prototypes redeclared; not in the vendor runtime headers "
      "(taken from the reference file): %s" % (len(checked), len(protos),
      ", ".join(n for n, _ in absent) or "none"))
# Values of CANN 8.x's acl_base_rt.h that the pinned wheel's headers predate: they are
# declared from the reference file's full enum lists, so they cannot be compared here.
newer = {"ACL_HIFLOAT8", "ACL_FLOAT8_E5M2", "ACL_FLOAT8_E4M3FN", "ACL_FLOAT8_E8M0",
         "ACL_FLOAT6_E3M2", "ACL_FLOAT6_E2M3", "ACL_FLOAT4_E2M1", "ACL_FLOAT4_E1M2",
         "ACL_FORMAT_FRACTAL_NZ_C0_2", "ACL_FORMAT_FRACTAL_NZ_C0_4", "ACL_FORMAT_FRACTAL_NZ_C0_8"}
bad = [n for n, _ in absent if not n.startswith("ACLNN_") and n not in newer]
if bad:
    sys.exit("runtime constants the vendor headers do not define: " + ", ".join(bad))
PY
    g++ -std=c++17 -fsyntax-only -Werror -I "$VENDOR_INC" -I "$header_dir" "$out.cpp"
}

# check_hccl HEADER_DIR OUT: the conformance check of hccl_sys.h (with the ascendcl_sys.h
# beside it) against the vendor's hccl.h.
check_hccl() {
    local header_dir=$1 out=$2
    local vendor_hccl="$VENDOR_ROOT/third_party/hccl/inc/hccl"
    { echo "$PY_COMMON"; cat <<'PY'; } | python3 - "$header_dir/hccl_sys.h" "$vendor_hccl" "$out" || return 1
values = constants(r'HCCL_\w+', r'HCCL_\w+')
vendor_text = "\n".join(p.read_text(errors="replace") for p in vendor_dir.glob("hccl*.h"))
absent = [n for n, _ in values if not re.search(r'\b%s\b' % n, vendor_text)]
if absent:
    sys.exit("HCCL constants the vendor headers do not define: " + ", ".join(absent))
api = text.split("#ifndef HCCL_SYS_NO_API")[1].split("#endif")[0]
protos = re.findall(r'^(?:HcclResult|const char \*)\s*(\w+)\(', api, re.M)
missing = [p for p in protos if not re.search(r'\b%s\s*\(' % p, vendor_text)]
if missing:
    sys.exit("HCCL functions missing from the vendor headers: " + ", ".join(missing))
with open(out + ".cpp", "w") as f:
    f.write('#include "third_party/hccl/inc/hccl/hccl.h"\n')
    for name, value in values:
        f.write('static_assert((long long)(%s) == %sLL, "%s differs from the vendor header");\n'
                % (name, value, name))
    f.write('static_assert(sizeof(HcclRootInfo) == %s, "HcclRootInfo size differs");\n'
            % dict(values)["HCCL_ROOT_INFO_BYTES"])
    f.write('#define ASCENDCL_SYS_NO_TYPES\n#define ASCENDCL_SYS_NO_ACLNN_API\n'
            '#define HCCL_SYS_NO_TYPES\n#include "hccl_sys.h"\n')
print("HCCL: %d constants compared, %d prototypes redeclared" % (len(values), len(protos)))
PY
    g++ -std=c++17 -fsyntax-only -Werror -I "$VENDOR_ROOT" -I "$header_dir" "$out.cpp"
}

# Both headers are checked even when the first fails, so one run reports every mismatch.
status=0
if check "$(dirname "$HEADER")" "$WORK/conformance"; then
    echo "ascendcl_sys.h agrees with the vendor headers of torch-npu $WHEEL_VERSION"
else
    echo "ascendcl_sys.h DIFFERS from the vendor headers of torch-npu $WHEEL_VERSION" >&2
    status=1
fi
if check_hccl "$(dirname "$HCCL_HEADER")" "$WORK/hccl_conformance"; then
    echo "hccl_sys.h agrees with the vendor's hccl.h of torch-npu $WHEEL_VERSION"
else
    echo "hccl_sys.h DIFFERS from the vendor's hccl.h of torch-npu $WHEEL_VERSION" >&2
    status=1
fi

if [ "${1:-}" = "--self-test" ]; then
    mkdir -p "$WORK/bad_value" "$WORK/bad_proto"
    sed 's/^\(#define ACL_ERROR_RT_CONTEXT_NULL *\)107002/\1107012/' "$HEADER" >"$WORK/bad_value/ascendcl_sys.h"
    sed 's/^aclError aclrtMemset(void \*devPtr, size_t maxCount, int32_t value, size_t count);/aclError aclrtMemset(void *devPtr, size_t maxCount, int64_t value, size_t count);/' \
        "$HEADER" >"$WORK/bad_proto/ascendcl_sys.h"
    # expect_rejected CASE ORIGINAL MUTATED CHECK: the mutation changed the header, and
    # CHECK (`check` or `check_hccl`) fails on the case's directory.
    expect_rejected() {
        local case="$1" original="$2" mutated="$3" checker="$4"
        if cmp -s "$original" "$mutated"; then
            echo "self-test: could not make the $case mutation" >&2
            exit 1
        fi
        if "$checker" "$WORK/$case" "$WORK/$case/conformance" >"$WORK/$case.log" 2>&1; then
            echo "self-test: $checker passed a header with a ${case#hccl_}; it must fail" >&2
            exit 1
        fi
        echo "self-test: $case rejected: $(grep -m1 -E 'error' "$WORK/$case.log")"
    }
    for case in bad_value bad_proto; do
        expect_rejected "$case" "$HEADER" "$WORK/$case/ascendcl_sys.h" check
    done
    mkdir -p "$WORK/hccl_bad_value" "$WORK/hccl_bad_proto" "$WORK/hccl_bad_p2p"
    for case in hccl_bad_value hccl_bad_proto hccl_bad_p2p; do
        cp "$HEADER" "$WORK/$case/"
    done
    sed 's/^\( *HCCL_E_TIMEOUT = \)9,/\110,/' "$HCCL_HEADER" >"$WORK/hccl_bad_value/hccl_sys.h"
    sed 's/^HcclResult HcclGetRankId(HcclComm comm, uint32_t \*rank);/HcclResult HcclGetRankId(HcclComm comm, int32_t *rank);/' \
        "$HCCL_HEADER" >"$WORK/hccl_bad_proto/hccl_sys.h"
    sed 's/^HcclResult HcclSend(void \*sendBuf, uint64_t count, HcclDataType dataType, uint32_t destRank,/HcclResult HcclSend(void *sendBuf, uint32_t count, HcclDataType dataType, uint32_t destRank,/' \
        "$HCCL_HEADER" >"$WORK/hccl_bad_p2p/hccl_sys.h"
    for case in hccl_bad_value hccl_bad_proto hccl_bad_p2p; do
        expect_rejected "$case" "$HCCL_HEADER" "$WORK/$case/hccl_sys.h" check_hccl
    done
fi
exit $status
