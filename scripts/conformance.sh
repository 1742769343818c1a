#!/usr/bin/env bash
# Runs conformance corpora (folders or files) through the native CLI and the
# wasm package, then prints the combined total as the last line.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
[ "$#" -gt 0 ] || { echo "usage: conformance.sh PATH..." >&2; exit 2; }
cargo build --quiet --release -p doom-loop-cli --bin doomloop --manifest-path "$ROOT/Cargo.toml" || exit 1
total() { tail -n 1 | sed -nE 's/^([0-9]+) passed, ([0-9]+) failed$/\1 \2/p'; }
native=$("$ROOT/target/release/doomloop" conformance "$@"); native_rc=$?
echo "$native" | sed 's/^/[native] /'
wasm=$(node "$ROOT/tests/js/conformance-node.mjs" "$@"); wasm_rc=$?
echo "$wasm" | sed 's/^/[wasm]   /'
read -r np nf <<<"$(echo "$native" | total)"
read -r wp wf <<<"$(echo "$wasm" | total)"
if [ -z "${np:-}" ] || [ -z "${wp:-}" ]; then echo "a runner printed no total" >&2; exit 1; fi
echo "$((np + wp)) passed, $((nf + wf)) failed"
[ "$native_rc" -eq 0 ] && [ "$wasm_rc" -eq 0 ] && [ "$((nf + wf))" -eq 0 ]
