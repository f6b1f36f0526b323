#!/usr/bin/env bash
# Checks ascend-sys/include/ascendcl_sys.h against the vendor's own AscendCL headers.
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
# `--self-test` also proves that the check fails on a wrong value and on a wrong prototype.
set -euo pipefail
cd "$(dirname "$0")/.."

WHEEL_VERSION="2.9.0"
WHEEL_FILE="torch_npu-${WHEEL_VERSION}-cp311-cp311-manylinux_2_28_x86_64.whl"
WHEEL_SHA256="afe075e10593b3a7e5414322bff7ff54e6d5a8836e9af8f00bc3e4466dadf6bb"
CACHE="${ASCENDCL_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ascendcl}"
HEADER="ascend-sys/include/ascendcl_sys.h"

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
python3 - "$CACHE/$WHEEL_FILE" "$WORK/vendor" <<'PY'
import sys, zipfile
prefix = "torch_npu/include/third_party/acl/inc/"
with zipfile.ZipFile(sys.argv[1]) as wheel:
    for name in wheel.namelist():
        if name.startswith(prefix) and name.endswith(".h"):
            target = sys.argv[2] + "/" + name[len(prefix):]
            import os
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with open(target, "wb") as out:
                out.write(wheel.read(name))
PY
VENDOR_INC="$WORK/vendor"

# check HEADER_DIR: compile the conformance check of the header in HEADER_DIR.
check() {
    local header_dir=$1 out=$2
    python3 - "$header_dir/ascendcl_sys.h" "$VENDOR_INC" "$out" <<'PY'
import re, sys, pathlib
ours, vendor_dir, out = sys.argv[1], pathlib.Path(sys.argv[2]), sys.argv[3]
text = pathlib.Path(ours).read_text()
values = re.findall(r'#define\s+(ACLN?N?_\w+)\s+(-?\d+)', text)
values += re.findall(r'^\s*(ACL_\w+)\s*=\s*(-?\d+)\s*,?\s*$', text, re.M)
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
bad = [n for n, _ in absent if not n.startswith("ACLNN_")]
if bad:
    sys.exit("runtime constants the vendor headers do not define: " + ", ".join(bad))
PY
    g++ -std=c++17 -fsyntax-only -Werror -I "$VENDOR_INC" -I "$header_dir" "$out.cpp"
}

check "$(dirname "$HEADER")" "$WORK/conformance"
echo "ascendcl_sys.h agrees with the vendor headers of torch-npu $WHEEL_VERSION"

if [ "${1:-}" = "--self-test" ]; then
    mkdir -p "$WORK/bad_value" "$WORK/bad_proto"
    sed 's/^\(#define ACL_ERROR_RT_CONTEXT_NULL *\)107002/\1107012/' "$HEADER" >"$WORK/bad_value/ascendcl_sys.h"
    sed 's/^aclError aclrtMemset(void \*devPtr, size_t maxCount, int32_t value, size_t count);/aclError aclrtMemset(void *devPtr, size_t maxCount, int64_t value, size_t count);/' \
        "$HEADER" >"$WORK/bad_proto/ascendcl_sys.h"
    for case in bad_value bad_proto; do
        if cmp -s "$HEADER" "$WORK/$case/ascendcl_sys.h"; then
            echo "self-test: could not make the $case mutation" >&2
            exit 1
        fi
        if check "$WORK/$case" "$WORK/$case/conformance" >"$WORK/$case.log" 2>&1; then
            echo "self-test: the check passed a header with a $case; it must fail" >&2
            exit 1
        fi
        echo "self-test: $case rejected: $(grep -m1 -E 'error' "$WORK/$case.log")"
    done
fi
