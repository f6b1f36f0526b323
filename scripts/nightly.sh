# Sourced by the sanitizer scripts: the pinned nightly (so that CI is reproducible), the
# target triple that keeps sanitizer flags off build scripts and proc-macros, and the
# toolchain installed when missing.
NIGHTLY="${NIGHTLY:-nightly-2026-05-20}"
TRIPLE=x86_64-unknown-linux-gnu
rustup toolchain list | grep -q "^$NIGHTLY" ||
    rustup toolchain install "$NIGHTLY" --profile minimal
