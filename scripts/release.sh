#!/usr/bin/env bash
# `make release`: every npm tarball of a release in one folder
# (target/release-pkgs/, or $RELEASE_OUT): the main package doom-loop-wasm
# (pkg/, `make build`) and one native platform package per npm/<platform>/,
# each around `doomloop` cross-built for its Rust target with zig as the
# linker (cargo-zigbuild). The toolchain comes from the project's own
# scripts (install-tools.sh's `cross` step, from the registries); then
# scripts/check-release.mjs checks every binary in its tarball: format and
# architecture always, the hook scenario where this machine can run it
# (linux-x64 natively, linux-arm64 under qemu-aarch64, win32-x64 under Wine
# when Wine starts it; darwin by format only). Not part of `make test`.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
OUT="${RELEASE_OUT:-$ROOT/target/release-pkgs}"
export PATH="$ROOT/.tools/bin:$ROOT/node_modules/.bin:$PATH"
log() { printf '[release] %s\n' "$*" >&2; }

bash scripts/install-tools.sh rust wasm-bindgen wasm-pack npm cross
bash scripts/build-pkg.sh
rm -rf "$OUT"
mkdir -p "$OUT/folders"
while read -r platform target; do
  t=$SECONDS
  log "$platform: cargo zigbuild --release --target $target"
  cargo zigbuild --release --locked --quiet -p doom-loop-cli --bin doomloop --target "$target"
  exe=doomloop
  case "$target" in *windows*) exe=doomloop.exe ;; esac
  folder="$(node scripts/platform-pkg.mjs "$platform" "target/$target/release/$exe" "$OUT/folders")"
  log "$platform: $(npm pack "$folder" --pack-destination "$OUT" --ignore-scripts --loglevel=error | tail -n 1) ($(( SECONDS - t ))s)"
done < <(node scripts/platform-pkg.mjs --list)
log "main: $(npm pack ./pkg --pack-destination "$OUT" --ignore-scripts --loglevel=error | tail -n 1)"
rm -rf "$OUT/folders"
node scripts/check-release.mjs "$OUT"
bash scripts/release-python.sh
