#!/usr/bin/env bash
# Smoke-run every fuzz target for a short time (see fuzz/README.md).
#
# Usage: scripts/fuzz-smoke.sh [TARGET...]      (default: every target)
# Environment:
#   FUZZ_SECONDS=N   seconds per target (default 20)
#   FUZZ_NICE=N      nice level for the fuzzers (default 10)
#   FUZZ_RSS_MB=N    libFuzzer -rss_limit_mb (default 2048)
#
# Needs cargo-fuzz (`cargo install cargo-fuzz --locked`) and runs it on
# stable Rust through RUSTC_BOOTSTRAP=1 (it uses -Zsanitizer=address).
# Targets run one after another, each from its seeds (fuzz/seeds/<target>,
# committed) plus its working corpus (fuzz/corpus/<target>, gitignored,
# grows across runs). Exits non-zero on the first crash, leak, timeout or
# OOM, leaving the input in fuzz/artifacts/<target>/.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

SECONDS_PER_TARGET="${FUZZ_SECONDS:-20}"
NICE="${FUZZ_NICE:-10}"
RSS_MB="${FUZZ_RSS_MB:-2048}"
ALL_TARGETS=(parse canonicalize raw_strings prefix restore text monitor session import_bytes import_value evaluate walk jsonl_recovery hook_event hook_config command gateway install html_report)
TARGETS=("$@")
[ "${#TARGETS[@]}" -eq 0 ] && TARGETS=("${ALL_TARGETS[@]}")

log() { printf '[fuzz-smoke] %s\n' "$*" >&2; }
die() { printf '[fuzz-smoke] ERROR: %s\n' "$*" >&2; exit 1; }

for t in "${TARGETS[@]}"; do
  case " ${ALL_TARGETS[*]} " in *" $t "*) ;; *) die "unknown target '$t' (expected: ${ALL_TARGETS[*]})";; esac
done
case "$SECONDS_PER_TARGET" in ''|*[!0-9]*) die "FUZZ_SECONDS must be a whole number of seconds";; esac
if ! cargo fuzz --version >/dev/null 2>&1; then
  log "installing cargo-fuzz (cargo install cargo-fuzz --locked)"
  cargo install cargo-fuzz --locked >&2 || die "could not install cargo-fuzz"
fi

export RUSTC_BOOTSTRAP=1
log "building fuzz targets"
nice -n "$NICE" cargo fuzz build >&2

LOG_DIR="$(mktemp -d)"
trap 'rm -rf "$LOG_DIR"' EXIT
status=0
for t in "${TARGETS[@]}"; do
  mkdir -p "fuzz/corpus/$t"
  log "$t: ${SECONDS_PER_TARGET}s"
  if nice -n "$NICE" cargo fuzz run "$t" "fuzz/corpus/$t" "fuzz/seeds/$t" -- \
      -max_total_time="$SECONDS_PER_TARGET" -rss_limit_mb="$RSS_MB" -timeout=30 \
      -print_final_stats=1 >"$LOG_DIR/$t.log" 2>&1; then
    execs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$LOG_DIR/$t.log" | tail -n 1)"
    cov="$(grep -Eo 'cov: [0-9]+ ft: [0-9]+' "$LOG_DIR/$t.log" | tail -n 1)"
    log "$t: ok, ${execs:-?} execs, ${cov:-no coverage line}"
  else
    status=1
    log "$t: FAILED; libFuzzer's report:"
    grep -E -A 30 'panicked at|ERROR: libFuzzer|ERROR: AddressSanitizer|Test unit written' "$LOG_DIR/$t.log" | head -n 60 >&2 || tail -n 40 "$LOG_DIR/$t.log" >&2
    break
  fi
done
exit "$status"
