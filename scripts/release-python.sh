#!/usr/bin/env bash
# The Python release (make release): the sdist, the linux x86_64 and aarch64
# wheels (manylinux2014, cross-built by maturin with zig as the linker:
# install-tools.sh's `cross` step), into target/release-python/. Each is
# installed in a clean environment and imported:
# - the x86_64 wheel in a venv of this machine's Python;
# - the aarch64 wheel by Debian's arm64 CPython under qemu-aarch64 (the
#   interpreter from Debian's packages, scripts/aarch64-python.sh), pip
#   checking the wheel's tags against it; where that interpreter cannot be
#   had, the wheel's module is checked as an AArch64 ELF only, and said so;
# - the sdist unpacked in a scratch folder outside the repository, a wheel
#   built from it alone by pip (maturin pinned; the dev profile: it proves
#   the sources are whole, the release wheels above are the optimized ones),
#   installed in a clean venv. Every file its crates read is inside their
#   packages (replay's bundled example is the CLI crate's, which the wheel
#   does not depend on).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export PATH="$ROOT/.tools/bin:$PATH"
# shellcheck source=python-env.sh
source scripts/python-env.sh
export CARGO_TARGET_DIR="$ROOT/$OUT/cargo-release"
DIST="$ROOT/target/release-python"
FINGERPRINT=b84a3e324e9dc95335f72cfee5e5898465349be72cb1348fe7927c49c8d65d92
# What each installed wheel runs: a fingerprint as the reference's, and
# the billing loop stopped at the reference's 6th identical round.
CHECK="import doom_loop, platform
assert doom_loop.fingerprint_tool_call('list_tasks', '{}') == '$FINGERPRINT'
session = doom_loop.DoomLoopSession(True)
for n in range(6):
    outcome = session.on_response(None, [(f'c{n}', 'get_invoice', '{\"invoice_id\":\"INV-2291\"}')])
assert outcome['halt']['action'] == 'stop' and outcome['halt']['streak'] == 6, outcome
print(platform.machine(), doom_loop.__file__)"
log() { printf '[release-python] %s\n' "$*" >&2; }

ensure_maturin
MATURIN="$ROOT/$OUT/build-venv/bin/maturin"
rustup target list --installed | grep -qx aarch64-unknown-linux-gnu || rustup target add aarch64-unknown-linux-gnu
rm -rf "$DIST"
mkdir -p "$DIST"
(cd python && "$MATURIN" sdist -o "$DIST")
for target in x86_64-unknown-linux-gnu aarch64-unknown-linux-gnu; do
  t=$SECONDS
  (cd python && "$MATURIN" build --quiet --release --zig --target "$target" --compatibility manylinux2014 -o "$DIST")
  log "$target: built ($(( SECONDS - t ))s)"
done
ls -l "$DIST" >&2

venv="$ROOT/$OUT/release-check-wheel"
rm -rf "$venv"
"$PY" -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check "$(ls "$DIST"/doom_loop-*manylinux2014_x86_64*.whl)"
(cd / && "$venv/bin/python" -c "$CHECK") >&2
log "x86_64 wheel: installed in a clean venv, imported, fingerprints and stops as the reference"

aarch64_wheel="$(ls "$DIST"/doom_loop-*manylinux2014_aarch64*.whl)"
"$PY" - "$aarch64_wheel" <<'PYCHECK'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as wheel:
    so = [n for n in wheel.namelist() if n.endswith(".so")]
    header = wheel.read(so[0])[:20]
assert header[:4] == b"\x7fELF" and int.from_bytes(header[18:20], "little") == 183, "not an AArch64 ELF"
print(f"[release-python] aarch64 wheel: {so[0]} is an AArch64 ELF", file=sys.stderr)
PYCHECK
if sysroot="$(bash scripts/aarch64-python.sh)" && command -v qemu-aarch64 >/dev/null; then
  export QEMU_LD_PREFIX="$sysroot"
  python_arm64="$(compgen -G "$sysroot/usr/bin/python3.*[0-9]" | head -n 1)"
  venv="$ROOT/$OUT/release-check-aarch64"
  rm -rf "$venv"
  qemu-aarch64 "$python_arm64" -m venv --without-pip "$venv"
  # Debian's pip wheel, run from the wheel as ensurepip runs it.
  qemu-aarch64 "$venv/bin/python3" "$(ls "$sysroot"/usr/share/python-wheels/pip-*.whl)/pip" install \
    --quiet --disable-pip-version-check --no-index --no-deps "$aarch64_wheel"
  (cd / && qemu-aarch64 "$venv/bin/python3" -c "$CHECK") >&2
  unset QEMU_LD_PREFIX
  log "aarch64 wheel: installed by pip in a clean venv of Debian's arm64 $(basename "$python_arm64") under qemu-aarch64, imported, fingerprints and stops as the reference"
else
  log "aarch64 wheel: NOT installed (no arm64 Python from Debian's packages, or no qemu-aarch64): checked by format only"
fi

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
tar -xzf "$DIST"/doom_loop-*.tar.gz -C "$scratch"
"$PY" -m venv "$scratch/build"
"$scratch/build/bin/pip" install --quiet --disable-pip-version-check "maturin==$MATURIN_VERSION"
t=$SECONDS
(cd "$scratch" && PATH="$scratch/build/bin:$PATH" CARGO_TARGET_DIR="$ROOT/$OUT/cargo" MATURIN_PEP517_ARGS="--profile dev" \
  "$scratch/build/bin/pip" wheel --quiet --disable-pip-version-check --no-deps --no-build-isolation -w "$scratch/wheel" "$scratch"/doom_loop-*/)
"$PY" -m venv "$scratch/check"
"$scratch/check/bin/pip" install --quiet --disable-pip-version-check "$scratch"/wheel/doom_loop-*.whl
(cd / && "$scratch/check/bin/python" -c "$CHECK") >&2
log "sdist: a wheel built from it alone outside the repository ($(( SECONDS - t ))s), installed in a clean venv, imported"
