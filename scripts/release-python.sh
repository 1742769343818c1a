#!/usr/bin/env bash
# The Python release (make release): the sdist, the linux x86_64 wheel
# (manylinux2014) and the linux aarch64 wheel (musllinux_1_2), cross-built
# by maturin with zig as the linker (install-tools.sh's `cross` step), into
# target/release-python/. The x86_64 wheel is installed in a clean venv and
# imported; the aarch64 wheel is checked by format (its module is an
# AArch64 ELF): no aarch64 CPython is at hand to run it under qemu-aarch64.
# The sdist builds on its own: every file its crates read is inside their
# packages (replay's bundled example is the CLI crate's, which the wheel
# does not depend on).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export PATH="$ROOT/.tools/bin:$PATH"
# shellcheck source=python-env.sh
source scripts/python-env.sh
export CARGO_TARGET_DIR="$ROOT/$OUT/cargo-release"
DIST="$ROOT/target/release-python"
log() { printf '[release-python] %s\n' "$*" >&2; }

ensure_maturin
MATURIN="$ROOT/$OUT/build-venv/bin/maturin"
rm -rf "$DIST"
mkdir -p "$DIST"
(cd python && "$MATURIN" sdist -o "$DIST")
(cd python && "$MATURIN" build --quiet --release --zig --target x86_64-unknown-linux-gnu --compatibility manylinux2014 -o "$DIST")
(cd python && "$MATURIN" build --quiet --release --zig --target aarch64-unknown-linux-musl -o "$DIST")
ls -l "$DIST" >&2

venv="$ROOT/$OUT/release-check-wheel"
rm -rf "$venv"
"$PY" -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check "$(ls "$DIST"/doom_loop-*manylinux*x86_64*.whl)"
(cd / && "$venv/bin/python" -c 'import doom_loop; assert doom_loop.fingerprint_tool_call("list_tasks", "{}") == "b84a3e324e9dc95335f72cfee5e5898465349be72cb1348fe7927c49c8d65d92"')
log "x86_64 wheel: installed in a clean venv, imported, fingerprints as the reference"
"$PY" - "$(ls "$DIST"/doom_loop-*musllinux*aarch64*.whl)" <<'PYCHECK'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as wheel:
    so = [n for n in wheel.namelist() if n.endswith(".so")]
    header = wheel.read(so[0])[:20]
assert header[:4] == b"\x7fELF" and int.from_bytes(header[18:20], "little") == 183, "not an AArch64 ELF"
print(f"[release-python] aarch64 wheel: {so[0]} is an AArch64 ELF", file=sys.stderr)
PYCHECK
