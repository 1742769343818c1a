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
OUT="$ROOT/pkg"
WASM="$ROOT/target/wasm32-unknown-unknown/wasm/doom_loop_wasm.wasm"

cargo build --quiet -p doom-loop-wasm --target wasm32-unknown-unknown --profile wasm
rm -rf "$OUT"
mkdir -p "$OUT"
wasm-bindgen --target web --weak-refs --out-name doom_loop --out-dir "$OUT" "$WASM"
wasm-bindgen --target nodejs --weak-refs --out-name doom_loop_node --out-dir "$OUT" "$WASM"
for module in "$OUT"/doom_loop_bg.wasm "$OUT"/doom_loop_node_bg.wasm; do
  wasm-opt -O3 --enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext \
    --enable-mutable-globals --strip-debug --strip-producers "$module" -o "$module.opt"
  mv "$module.opt" "$module"
done
rm -f "$OUT"/*.d.ts "$OUT"/.gitignore "$OUT"/package.json
node scripts/assemble-pkg.mjs "$OUT"
echo "built $OUT: $(wc -c < "$OUT/doom_loop_bg.wasm") bytes wasm, $(gzip -9c "$OUT/doom_loop_bg.wasm" | wc -c) gzipped"
