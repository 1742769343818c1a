#!/usr/bin/env bash
# Runtime test matrix of the npm package doom-loop-wasm (pkg/, built by
# scripts/build-pkg.sh): the same suite (tests/runtimes/suite.mjs: the
# upstream vectors, a slice of the reference corpus and per-runtime checks)
# in every runtime, each loading the package by bare name through its
# exports map from a throwaway consumer project (tests/runtimes/.consumer,
# made from `npm pack pkg/`).
#
# Usage: scripts/test-runtimes.sh
# Environment:
#   DOOM_LOOP_RUNTIME=NAME[,NAME...]  run only these runtimes, out of
#       node-esm node-cjs bun deno workerd chromium vite
#   DOOM_LOOP_RUNTIME_TIMEOUT=SECONDS  per-runner time limit (default 180)
# Prints each runtime's `RUNTIME: N passed, M failed` line and, last,
# `N passed, M failed` over all of them; exits non-zero if any failed.
# Tools: node_modules (scripts/install-tools.sh npm) and Debian chromium
# (scripts/install-tools.sh chromium).
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
ALL=(node-esm node-cjs bun deno workerd chromium vite)
LIMIT="${DOOM_LOOP_RUNTIME_TIMEOUT:-180}"
CONSUMER="$ROOT/tests/runtimes/.consumer"
export DO_NOT_TRACK=1 DENO_NO_UPDATE_CHECK=1 WRANGLER_SEND_METRICS=false

tool() {  # tool NAME -> path of the project's binary (from scripts/install-tools.sh)
  if [ -x "$ROOT/.tools/bin/$1" ]; then echo "$ROOT/.tools/bin/$1"; else echo "$ROOT/node_modules/.bin/$1"; fi
}

if [ -n "${DOOM_LOOP_RUNTIME:-}" ]; then
  IFS=', ' read -r -a SELECTED <<< "$DOOM_LOOP_RUNTIME"
  for rt in "${SELECTED[@]}"; do
    case " ${ALL[*]} " in *" $rt "*) ;; *) echo "unknown runtime '$rt' (expected one of: ${ALL[*]})" >&2; exit 2;; esac
  done
else
  SELECTED=("${ALL[@]}")
fi

# The consumer project: pkg/ packed and unpacked into its node_modules.
timeout --kill-after=5 60 node tests/runtimes/consumer.mjs || { echo "could not set up the consumer project (is pkg/ built?)"; echo "0 passed, ${#SELECTED[@]} failed"; exit 1; }

run() {  # run RUNTIME -> the runner's command, run with a time limit
  case "$1" in
    node-esm) node tests/runtimes/run-local.mjs ;;
    node-cjs) node tests/runtimes/run-local.mjs --cjs ;;
    bun)      (cd "$CONSUMER" && "$(tool bun)" run ../run-local.mjs) ;;
    deno)     (cd "$CONSUMER" && "$(tool deno)" run --allow-read --no-prompt --no-lock --node-modules-dir=manual ../run-local.mjs) ;;
    workerd)  node tests/runtimes/run-workerd.mjs ;;
    chromium) node tests/runtimes/run-browser.mjs chromium ;;
    vite)     node tests/runtimes/run-browser.mjs vite ;;
  esac
}
export -f run tool
export ROOT CONSUMER

PASSED=0
FAILED=0
FAILED_RUNTIMES=()
OUT="$(mktemp)"
trap 'rm -f "$OUT"' EXIT
for rt in "${SELECTED[@]}"; do
  start=$SECONDS
  # timeout(1) signals the runner's whole process group (browser, workerd too).
  timeout --kill-after=10 "$LIMIT" bash -c 'run "$1"' _ "$rt" > "$OUT" 2>&1
  rc=$?
  line="$(grep -E "^$rt: [0-9]+ passed, [0-9]+ failed$" "$OUT" | tail -n 1)"
  grep -vE "^$rt: [0-9]+ passed, [0-9]+ failed$" "$OUT"
  if [ -n "$line" ]; then
    p="$(sed -E 's/^[^:]+: ([0-9]+) passed, ([0-9]+) failed$/\1/' <<< "$line")"
    f="$(sed -E 's/^[^:]+: ([0-9]+) passed, ([0-9]+) failed$/\2/' <<< "$line")"
  else
    p=0 f=0
  fi
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
    f=1
    [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ] && why="timed out after ${LIMIT}s" || why="runner exited with $rc"
    line="$rt: $p passed, $f failed ($why)"
  fi
  [ -n "$line" ] || line="$rt: $p passed, $f failed"
  echo "$line  [$(( SECONDS - start ))s]"
  PASSED=$(( PASSED + p ))
  FAILED=$(( FAILED + f ))
  [ "$f" -eq 0 ] || FAILED_RUNTIMES+=("$rt")
done
[ "${#FAILED_RUNTIMES[@]}" -eq 0 ] || echo "failed runtimes: ${FAILED_RUNTIMES[*]}"
echo "$PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ] && [ "${#FAILED_RUNTIMES[@]}" -eq 0 ]
