#!/usr/bin/env bash
# The doom-loop crate as crates.io would receive it: `cargo package`, then
# the unpacked crate's own tests, offline, in a temporary directory — with
# default features and with all of them. Also checks what the crate holds
# (no JS, no scripts, no npm lockfile, the licences and the upstream
# vectors present) and that `cargo publish --dry-run` has nothing to warn
# about.
#
# Usage: scripts/package-test.sh            (from anywhere in the repository)
# Env:   PACKAGE_TEST_KEEP=1 keeps the temporary directory.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf 'package-test: %s\n' "$*" >&2; }
die() { log "FAIL: $*"; exit 1; }

version="$(cargo pkgid -p doom-loop | sed 's/.*[#@]//')"
crate="doom-loop-$version"
# A dirty tree is packaged as it is (the test is about the manifest, not
# about what is committed); a fresh clone is clean anyway.
dirty=(--allow-dirty)

log "listing $crate"
list="$(cargo package -p doom-loop "${dirty[@]}" --list --offline)"
for required in Cargo.toml README.md LICENSE-MIT LICENSE-APACHE src/lib.rs \
  vectors/upstream-vectors.json tests/fixtures/recommended-state-64-digit-evidence.json docs/rust.md docs/detectors.md docs/rust-serde.md; do
  grep -qx "$required" <<<"$list" || die "$required is missing from the crate"
done
# Cargo.lock is cargo's own (cargo >= 1.84 always adds it; dependents ignore it).
forbidden="$(grep -E '\.(js|mjs|cjs|ts|sh|py)$|package(-lock)?\.json$|^(js|scripts|playground|worker-example|node_modules|pkg)/|^tests/(js|e2e|playground|runtimes)/|^vectors/reference/' <<<"$list" || true)"
[ -z "$forbidden" ] || die "the crate holds files it must not: $forbidden"

# The published crates at once: doom-loop-trace, doom-loop-guard and
# doom-loop-cli depend on the ones below them by path + version, which a lone
# dry run would look up on crates.io (cargo >= 1.90 publishes them as one
# batch, in dependency order).
log "cargo publish --dry-run of doom-loop, doom-loop-trace, doom-loop-guard and doom-loop-cli (must not warn)"
dry="$(cargo publish -p doom-loop -p doom-loop-trace -p doom-loop-guard -p doom-loop-cli --dry-run "${dirty[@]}" --no-verify 2>&1)" || { printf '%s\n' "$dry" >&2; die "publish --dry-run failed"; }
if grep -i '^warning' <<<"$dry" | grep -v 'aborting upload due to dry run'; then die "publish --dry-run warned"; fi

log "cargo package"
cargo package -p doom-loop "${dirty[@]}" --no-verify --offline --quiet
archive="target/package/$crate.crate"
[ -f "$archive" ] || die "$archive not written"

tmp="$(mktemp -d)"
if [ -z "${PACKAGE_TEST_KEEP:-}" ]; then trap 'rm -rf "$tmp"' EXIT; else log "keeping $tmp"; fi
tar -xzf "$archive" -C "$tmp"
cd "$tmp/$crate"
# The crate's tests resolve their dev-dependencies offline from the cache
# the repository build filled; its own packaged lock pins them.
export CARGO_TARGET_DIR="$tmp/target"
# Line tables only: the unpacked crate's test binaries are linked a second
# time here, beside the repository's own; full debug info doubles the disk
# and linker memory they take and no test reads it.
export CARGO_PROFILE_DEV_DEBUG=line-tables-only CARGO_PROFILE_TEST_DEBUG=line-tables-only

# One `cargo test` in the unpacked crate, its summary lines on stderr. On
# failure the whole cause is printed (the filtered lines alone once showed
# only "could not compile … (test \"session\")", not why), with the
# machine's free memory and disk, which a killed rustc or linker points at.
# A rustc or linker killed by a signal (the kernel's OOM killer: two test
# crates linking at once) is the machine, not the crate: that one case is
# retried once, a job at a time, and says so.
crate_tests() {
  local label="$1" log_file="$tmp/$1.log"; shift
  log "cargo test in the unpacked crate ($label)"
  if cargo test --offline --quiet "$@" >"$log_file" 2>&1; then
    grep -E '^(test result|SKIPPED)' "$log_file" >&2 || true
    return 0
  fi
  if grep -qE 'signal: (9|SIGKILL)|SIGKILL' "$log_file"; then
    log "a compiler process was killed (SIGKILL; memory?): retrying once with one job"
    { free -m; } >&2 2>/dev/null || true
    if cargo test --offline --quiet -j 1 "$@" >"$log_file" 2>&1; then
      grep -E '^(test result|SKIPPED)' "$log_file" >&2 || true
      return 0
    fi
  fi
  log "cargo test ($label) failed; its output from the first error on:"
  awk '/^error|^warning: build failed|Caused by/ { on = 1 } on' "$log_file" | head -n 200 >&2
  log "the last lines of its output:"
  tail -n 40 "$log_file" >&2
  { free -m; df -h "$tmp"; } >&2 2>/dev/null || true
  die "the unpacked crate's tests ($label) failed"
}
crate_tests default-features
crate_tests all-features --all-features
# The corpus test skips here (the 12 MB corpus stays in the repository);
# libtest captures a passing test's output, so ask for it.
skipped="$(cargo test --offline --quiet --all-features --test serde_state -- --nocapture 2>&1 | grep -o 'SKIPPED: .*' || true)"
printf '%s\n' "$skipped" >&2
[ "$(grep -c 'vectors/reference' <<<"$skipped")" = 1 ] \
  || die "the corpus test did not say it skipped (is vectors/reference in the crate?)"
log "ok: $crate packages, and its tests pass on their own"
