#!/usr/bin/env bash
# Finds the libclang that bindgen (through clang-sys) can load: `libclang.so`,
# `libclang-<version>.so` or `libclang.so.<version>`, in $LIBCLANG_PATH or the linker cache.
# `libclang-cpp.so` is a different library (the C++ API) that bindgen cannot use.
#
#   scripts/libclang.sh             prints the path, or fails with a message
#   scripts/libclang.sh --self-test checks the matching on sample linker-cache lines
set -euo pipefail

# Reads `ldconfig -p` lines on stdin, prints the first usable libclang path.
pick_libclang() {
    awk -F' => ' 'NF == 2 { print $2 }' |
        grep -E '/libclang(-[0-9][0-9.]*)?\.so(\.[0-9]+)*$' |
        head -n 1 || true
}

if [ "${1:-}" = "--self-test" ]; then
    only_cpp=$'\tlibclang-cpp.so.14 (libc6,x86-64) => /lib/x86_64-linux-gnu/libclang-cpp.so.14'
    versioned=$'\tlibclang-cpp.so.14 (libc6,x86-64) => /usr/lib/libclang-cpp.so.14\n\tlibclang-14.so.13 (libc6,x86-64) => /usr/lib/libclang-14.so.13'
    plain=$'\tlibclang.so.1 (libc6,x86-64) => /usr/lib/libclang.so.1'
    [ -z "$(pick_libclang <<<"$only_cpp")" ] || { echo "libclang-cpp taken for libclang" >&2; exit 1; }
    [ "$(pick_libclang <<<"$versioned")" = /usr/lib/libclang-14.so.13 ] || { echo "versioned libclang missed" >&2; exit 1; }
    [ "$(pick_libclang <<<"$plain")" = /usr/lib/libclang.so.1 ] || { echo "libclang.so.1 missed" >&2; exit 1; }
    echo "libclang detection: 3 cases ok"
    exit 0
fi

if [ -n "${LIBCLANG_PATH:-}" ]; then
    found=$(ls "$LIBCLANG_PATH"/libclang*.so* 2>/dev/null | grep -E '/libclang(-[0-9][0-9.]*)?\.so(\.[0-9]+)*$' | head -n 1 || true)
else
    found=$(ldconfig -p 2>/dev/null | pick_libclang)
fi
if [ -z "$found" ]; then
    echo "no libclang for bindgen (libclang.so / libclang-N.so; libclang-cpp does not count): apt-get install libclang-dev, or set LIBCLANG_PATH" >&2
    exit 1
fi
echo "$found"
