#!/usr/bin/env bash
# Checks docs/unsafe-map.md against the tree: every file under src/, ascend-sys/src/ and
# ascend-sim/src/ with unsafe code has exactly one line in the map, and every line of the
# map names a file that has unsafe code. Fails naming the line to add or remove.
#
# Unsafe code is, outside `//` comments: an `unsafe { … }` block, `unsafe impl`,
# `unsafe trait`, an `unsafe fn` (or `unsafe extern "C" fn`) with a name, an
# `unsafe extern` block, or an `#[unsafe(…)]` attribute. A function-pointer type
# (`unsafe extern "C" fn(…)`) is not: it runs nothing.
#
#   scripts/unsafe-map.sh              check the tree
#   scripts/unsafe-map.sh --list       print the files with unsafe code, one a line
#   scripts/unsafe-map.sh --self-test  prove the check passes on this tree's copy and fails
#                                      on an undocumented file, a stale line and a duplicate
set -euo pipefail
cd "$(dirname "$0")/.."

MAP=docs/unsafe-map.md
DIRS=(src ascend-sys/src ascend-sim/src)
PATTERN='\bunsafe\s*\{|\bunsafe\s+(impl|trait)\b|\bunsafe\s+(extern\s+"[^"]*"\s+)?fn\s+[A-Za-z_]|\bunsafe\s+extern\s+("[^"]*"\s*)?\{|#!?\[unsafe\('

# The first line of unsafe code of file $1 ("N: text"), or nothing.
first_unsafe() {
    sed -E 's://.*$::' "$1" | grep -nP -m1 "$PATTERN" || true
}

# The files with unsafe code below root $1, sorted, paths relative to it.
unsafe_files() {
    local root=$1 dir f
    for dir in "${DIRS[@]}"; do
        [ -d "$root/$dir" ] || continue
        while IFS= read -r f; do
            if [ -n "$(first_unsafe "$root/$f")" ]; then echo "$f"; fi
        done < <(cd "$root" && find "$dir" -name '*.rs' -type f | sort)
    done | sort
}

# The map's entries below root $1: "line-number path", from lines "- `path` — why".
map_entries() {
    { grep -nE '^- `[^`]+`' "$1/$MAP" || true; } | sed -E 's/^([0-9]+):- `([^`]+)`.*/\1 \2/'
}

# Checks root $1; prints what is wrong and returns 1, or prints a summary.
check() {
    local root=$1 failed=0 f line path
    if [ ! -f "$root/$MAP" ]; then
        echo "unsafe-map: $MAP is missing" >&2
        return 1
    fi
    local found entries
    found=$(unsafe_files "$root")
    entries=$(map_entries "$root")
    while IFS= read -r f; do
        [ -n "$f" ] || continue
        if ! awk -v p="$f" '$2 == p { ok = 1 } END { exit !ok }' <<<"$entries"; then
            echo "unsafe-map: $f has unsafe code (line $(first_unsafe "$root/$f" | sed -E 's/^([0-9]+):\s*/\1: /' | cut -c1-100))" >&2
            echo "  but no line in $MAP; add one under its crate's heading:" >&2
            echo "  - \`$f\` — <what needs unsafe there, and why it cannot be safe code>" >&2
            failed=1
        fi
    done <<<"$found"
    while read -r line path; do
        [ -n "$path" ] || continue
        if ! grep -qxF "$path" <<<"$found"; then
            echo "unsafe-map: $MAP:$line lists $path, which has no unsafe code (or does not exist); remove that line" >&2
            failed=1
        fi
    done <<<"$entries"
    local dup
    dup=$(awk '{ print $2 }' <<<"$entries" | sort | uniq -d)
    if [ -n "$dup" ]; then
        echo "unsafe-map: $MAP lists more than once: $dup" >&2
        failed=1
    fi
    [ "$failed" = 0 ] || return 1
    echo "unsafe-map: $(grep -c . <<<"$found") files with unsafe code, each in $MAP"
}

case "${1:-}" in
--list)
    unsafe_files .
    ;;
--self-test)
    WORK=$(mktemp -d)
    trap 'rm -rf "$WORK"' EXIT
    mkdir -p "$WORK/docs"
    cp "$MAP" "$WORK/$MAP"
    for dir in "${DIRS[@]}"; do
        mkdir -p "$WORK/$(dirname "$dir")"
        cp -r "$dir" "$WORK/$dir"
    done
    check "$WORK" >/dev/null || { echo "self-test: the copy of this tree should pass" >&2; exit 1; }
    # Mentions in comments and function-pointer types are not unsafe code.
    printf '%s\n' '//! Nothing here is `unsafe { }`.' \
        'pub type F = unsafe extern "C" fn(i32) -> i32; // unsafe impl Send' \
        >"$WORK/src/undocumented_selftest.rs"
    check "$WORK" >/dev/null || { echo "self-test: comments and fn-pointer types counted as unsafe code" >&2; exit 1; }
    # An unsafe block in an undocumented file fails, naming the line to add.
    printf '%s\n' 'pub fn f(p: *const u8) -> u8 {' '    // SAFETY: test input' \
        '    unsafe { *p }' '}' >>"$WORK/src/undocumented_selftest.rs"
    if out=$(check "$WORK" 2>&1); then
        echo "self-test: an unsafe block in an undocumented file passed" >&2
        exit 1
    fi
    grep -qF -- '- `src/undocumented_selftest.rs` — ' <<<"$out" ||
        { echo "self-test: the failure does not name the line to add:" >&2; echo "$out" >&2; exit 1; }
    # Each other kind of unsafe code is found too.
    for code in 'unsafe impl Send for S {}' 'unsafe fn g() {}' 'pub unsafe extern "C" fn h() {}' \
        'unsafe extern "C" {' '#[unsafe(no_mangle)]' 'unsafe trait T {}'; do
        printf '%s\n' "$code" >"$WORK/src/undocumented_selftest.rs"
        if check "$WORK" >/dev/null 2>&1; then
            echo "self-test: not found as unsafe code: $code" >&2
            exit 1
        fi
    done
    rm "$WORK/src/undocumented_selftest.rs"
    # A line naming a file without unsafe code fails, naming the line to remove.
    echo '- `src/no_such_file.rs` — stale' >>"$WORK/$MAP"
    if out=$(check "$WORK" 2>&1); then
        echo "self-test: a stale line passed" >&2
        exit 1
    fi
    grep -qF "lists src/no_such_file.rs" <<<"$out" || { echo "self-test: stale line not named: $out" >&2; exit 1; }
    # A file listed twice fails.
    cp "$MAP" "$WORK/$MAP"
    map_entries . | head -n 1 | awk '{ printf "- `%s` — again\n", $2 }' >>"$WORK/$MAP"
    if check "$WORK" >/dev/null 2>&1; then
        echo "self-test: a duplicate line passed" >&2
        exit 1
    fi
    echo "unsafe-map self-test: 11 cases ok"
    check .
    ;;
"")
    check .
    ;;
*)
    echo "usage: scripts/unsafe-map.sh [--list | --self-test]" >&2
    exit 2
    ;;
esac
