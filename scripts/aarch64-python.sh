#!/usr/bin/env bash
# An aarch64 CPython for the release's wheel check under qemu-aarch64:
# Debian's own arm64 packages of the interpreter the host's Debian ships
# (pythonX.Y-minimal, its stdlib, ensurepip's pip wheel, the C libraries
# they link), unpacked into a sysroot — prints its path. apt-get runs with
# a private state folder, so the machine's apt configuration and package
# lists are untouched. Usage: scripts/aarch64-python.sh [SYSROOT]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SYSROOT="${1:-$ROOT/target/python/aarch64-root}"
if compgen -G "$SYSROOT/usr/bin/python3.*[0-9]" >/dev/null; then
  echo "$SYSROOT"
  exit 0
fi
STATE="$(mktemp -d)"
trap 'rm -rf "$STATE"' EXIT
mkdir -p "$STATE/lists/partial" "$STATE/cache/archives/partial"
touch "$STATE/status"
APT_OPTIONS=(-o APT::Architecture=arm64 -o APT::Architectures=arm64 -o APT::Sandbox::User=root
  -o "Dir::State::Lists=$STATE/lists" -o "Dir::State::status=$STATE/status" -o "Dir::Cache=$STATE/cache")
apt-get -qq "${APT_OPTIONS[@]}" update >&2
# The interpreter python3-minimal depends on (python3.11 on bookworm).
python="$(apt-cache "${APT_OPTIONS[@]}" depends python3-minimal | sed -n 's/^ *[A-Za-z]*Depends: \(python3\.[0-9]*\)-minimal.*/\1/p' | head -n 1)"
[ -n "$python" ] || { echo "aarch64-python: no arm64 python3-minimal in Debian's lists" >&2; exit 1; }
(cd "$STATE" && apt-get -qq "${APT_OPTIONS[@]}" download "$python-minimal" "lib$python-minimal" "lib$python-stdlib" \
  libc6 libgcc-s1 zlib1g libexpat1 libffi8 libssl3 python3-pip-whl python3-setuptools-whl >&2)
mkdir -p "$SYSROOT"
for deb in "$STATE"/*.deb; do dpkg-deb -x "$deb" "$SYSROOT"; done
echo "$SYSROOT"
