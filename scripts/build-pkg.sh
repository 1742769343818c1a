#!/usr/bin/env bash
# Build the npm package doom-loop-wasm into pkg/ — wasm-pack, tiktoken-style.
#
# 1. wasm-pack builds the binding crate (wasm/) twice:
#      lite  `--no-default-features`: the detector alone — the module the
#            main entry loads, the one every agent pays for;
#      full  default features: detector + trace tooling (replay, …) — the
#            module of `doom-loop-wasm/replay` (the CLI, the playground).
#    each with `--target web` (ESM glue: Node ESM, Bun, Deno, workerd,
#    browsers) and `--target nodejs` (CommonJS glue for `require`); the
#    second target of a feature set reuses cargo's build and must yield the
#    very same .wasm. Nothing is downloaded: `--mode no-install` makes
#    wasm-pack use the pinned wasm-bindgen on PATH (.tools/bin, installed
#    by scripts/install-tools.sh) and `--no-opt` turns its own wasm-opt
#    step off;
# 2. wasm-opt from the npm `binaryen` package on both modules (flags below);
# 3. the post-process, scripts/assemble-pkg.mjs: the per-runtime entries,
#    the shim and its CommonJS twins, types, package.json, licences.
# Generated glue is never edited or committed: pkg/ is rebuilt from scratch.
#
# Usage: scripts/build-pkg.sh [DEST]   (default pkg/)
# Environment: WASM_OPT_LITE / WASM_OPT_FULL override the wasm-opt level
# flags (measuring size against speed: `make bench`).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PATH="$ROOT/.tools/bin:$ROOT/node_modules/.bin:$PATH"
DEST="${1:-$ROOT/pkg}"
# Built beside the destination and swapped in at the end, so a reader of
# pkg/ never sees a half-built package.
OUT="$DEST.building.$$"
trap 'rm -rf "$OUT"' EXIT
command -v wasm-pack >/dev/null || { echo "wasm-pack missing: run make tools" >&2; exit 1; }

# The detector's hot paths are what agents run: speed first there, as
# before the split (-O3). The tooling module is loaded by the CLI and the
# playground, where size matters little and replay speed some: -O3 too.
WASM_OPT_LITE="${WASM_OPT_LITE:--O3}"
WASM_OPT_FULL="${WASM_OPT_FULL:--O3}"
WASM_FEATURES=(--enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext
  --enable-mutable-globals --strip-debug --strip-producers)

# wasm_pack NAME TARGET DIR [CARGO-ARGS…]
wasm_pack() {
  local name="$1" target="$2" dir="$3"; shift 3
  wasm-pack --quiet build "$ROOT/wasm" --profile wasm --no-opt --mode no-install --no-pack \
    --target "$target" --weak-refs --out-name "$name" --out-dir "$dir" -- "$@"
}

# build NAME [CARGO-ARGS…] -> $OUT/NAME.js, NAME_bg.wasm (optimised), NAME_node.cjs
build() {
  local name="$1"; shift
  local web="$OUT/.wasm-pack/$name-web" node="$OUT/.wasm-pack/$name-nodejs"
  wasm_pack "$name" web "$web" "$@"
  wasm_pack "$name" nodejs "$node" "$@"
  # The CommonJS glue reads the .wasm file of the same name (written into
  # it): one .wasm for both.
  cmp -s "$web/${name}_bg.wasm" "$node/${name}_bg.wasm" || { echo "$name: web and nodejs glue want different .wasm files" >&2; exit 1; }
  mv "$web/$name.js" "$OUT/$name.js"
  mv "$node/$name.js" "$OUT/${name}_node.cjs"
  local level="$WASM_OPT_LITE"
  [ "$name" = doom_loop_full ] && level="$WASM_OPT_FULL"
  # shellcheck disable=SC2086  # the level may be several flags
  wasm-opt $level "${WASM_FEATURES[@]}" "$web/${name}_bg.wasm" -o "$OUT/${name}_bg.wasm"
}

mkdir -p "$OUT"
build doom_loop --no-default-features
build doom_loop_full
rm -rf "$OUT/.wasm-pack"
node scripts/assemble-pkg.mjs "$OUT"
rm -rf "$DEST"
mv "$OUT" "$DEST"
size() { echo "$(wc -c < "$1") bytes, $(gzip -9c "$1" | wc -c) gzipped"; }
echo "built $DEST: detector module $(size "$DEST/doom_loop_bg.wasm"); full module $(size "$DEST/doom_loop_full_bg.wasm")"
