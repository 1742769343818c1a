#!/usr/bin/env bash
# Assemble the npm package doom-loop-wasm into pkg/.
#
# 1. the wasm binding crate, built for wasm32-unknown-unknown (profile `wasm`);
# 2. wasm-bindgen (the exact version Cargo.lock pins, from .tools/) twice:
#    `--target web` (ESM glue for Node ESM, Bun, Deno, workerd, browsers)
#    and `--target nodejs` (CommonJS glue for `require`);
# 3. wasm-opt from the npm `binaryen` package on both modules;
# 4. the hand-written shim from js/ (plus a CommonJS build of it), the
#    types, the package.json with its exports map, and the README.
# Generated glue is never edited or committed: pkg/ is rebuilt from scratch.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PATH="$ROOT/.tools/bin:$ROOT/node_modules/.bin:$PATH"
DEST="${1:-$ROOT/pkg}"
# Built beside the destination and swapped in at the end, so a reader of
# pkg/ never sees a half-built package.
OUT="$DEST.building.$$"
trap 'rm -rf "$OUT"' EXIT
WASM="$ROOT/target/wasm32-unknown-unknown/wasm/doom_loop_wasm.wasm"

cargo build --quiet -p doom-loop-wasm --target wasm32-unknown-unknown --profile wasm
mkdir -p "$OUT"
wasm-bindgen --target web --weak-refs --out-name doom_loop --out-dir "$OUT" "$WASM"
# The CommonJS glue, with the same --out-name so it loads the very same
# .wasm file (the name is written into the module); `.cjs` because the
# package is "type": "module".
wasm-bindgen --target nodejs --weak-refs --out-name doom_loop --out-dir "$OUT/cjs" "$WASM"
cmp -s "$OUT/doom_loop_bg.wasm" "$OUT/cjs/doom_loop_bg.wasm" || { echo "web and nodejs glue want different .wasm files" >&2; exit 1; }
mv "$OUT/cjs/doom_loop.js" "$OUT/doom_loop_node.cjs"
rm -rf "$OUT/cjs"
wasm-opt -O3 --enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext \
  --enable-mutable-globals --strip-debug --strip-producers "$OUT/doom_loop_bg.wasm" -o "$OUT/doom_loop_bg.wasm.opt"
mv "$OUT/doom_loop_bg.wasm.opt" "$OUT/doom_loop_bg.wasm"
rm -f "$OUT"/*.d.ts "$OUT"/.gitignore "$OUT"/package.json
node scripts/assemble-pkg.mjs "$OUT"
rm -rf "$DEST"
mv "$OUT" "$DEST"
echo "built $DEST: $(wc -c < "$DEST/doom_loop_bg.wasm") bytes wasm, $(gzip -9c "$DEST/doom_loop_bg.wasm" | wc -c) gzipped"
