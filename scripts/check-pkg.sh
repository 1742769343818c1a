#!/usr/bin/env bash
# The npm package as it would be published (`make test-pkg`): publint and
# @arethetypeswrong/cli (both pinned dev dependencies, offline) on the
# packed tarball, and `npm publish --dry-run`, which must print no warning.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PATH="$ROOT/node_modules/.bin:$PATH"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT

tarball="$TMP/$(npm pack ./pkg --ignore-scripts --pack-destination "$TMP" --loglevel=error | tail -n 1)"
echo "check-pkg: publint"
publint run ./pkg --strict --level suggestion
echo "check-pkg: @arethetypeswrong/cli"
# node10 resolution (TypeScript's `moduleResolution: node`) has no
# `exports`, so it cannot see the subpath entries; every other mode must be
# clean. The .wasm subpaths are assets, not modules. `./inline` is ESM only
# by design (it is for bundlers, which take ESM from `require` too; Node
# ≥ 20.19 can require() it as well), so for it alone a require() resolving
# to ESM is expected.
attw "$tarball" --profile node16 --format table-flipped --entrypoints . ./replay ./native
attw "$tarball" --profile node16 --format table-flipped --entrypoints ./inline --ignore-rules cjs-resolves-to-esm
# The framework adapters are ESM only too (each imports the main entry by
# name, so it runs on that runtime's one wasm instance).
attw "$tarball" --profile node16 --format table-flipped --entrypoints ./ai-sdk ./cloudflare-agents ./mastra --ignore-rules cjs-resolves-to-esm
echo "check-pkg: Deno finds the types by path (@ts-self-types)"
DENO_NO_UPDATE_CHECK=1 "$ROOT/.tools/bin/deno" check --quiet --no-lock --no-config tests/pkg/deno-types.ts
echo "check-pkg: npm publish --dry-run"
# A dry run needs no credentials, but npm warns when it finds none: a dummy
# token in a throwaway user config (nothing is sent).
printf '//registry.npmjs.org/:_authToken=dry-run-only\n' > "$TMP/npmrc"
out="$(cd pkg && NPM_CONFIG_USERCONFIG="$TMP/npmrc" npm publish --dry-run --ignore-scripts 2>&1)" || { echo "$out"; exit 1; }
if grep -iE '^npm (warn|error)' <<< "$out"; then
  echo "check-pkg: npm publish --dry-run warned (above)" >&2
  exit 1
fi
# The bin survives packing: installed from the tarball (offline), `doomloop`
# is linked and runs. (npm 11 drops a bin written "./cli.cjs" when
# publishing, with the warning above; "cli.cjs" is kept.)
echo "check-pkg: the doomloop bin, installed from the tarball"
mkdir -p "$TMP/install"
echo '{"name":"check-bin","private":true}' > "$TMP/install/package.json"
(cd "$TMP/install" && npm install --offline --no-audit --no-fund --ignore-scripts --loglevel=error "$tarball" >/dev/null)
want="$(node -e "process.stdout.write(require('node:crypto').createHash('sha256').update('bash\\n{\"a\":1}').digest('hex'))")"
got="$("$TMP/install/node_modules/.bin/doomloop" fingerprint bash '{"a":1}')"
[ "$got" = "$want" ] || { echo "check-pkg: doomloop fingerprint printed '$got', expected $want" >&2; exit 1; }
# ... and guards as a hook: the third identical call of a session is denied,
# its state file written (the native hook's lock and store, in wasm).
call='"tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"ID"'
pre='{"session_id":"pkg","hook_event_name":"PreToolUse",'"$call"'}'
batch='{"session_id":"pkg","hook_event_name":"PostToolBatch","tool_calls":[{'"$call"',"tool_response":"same"}]}'
hook() { "$TMP/install/node_modules/.bin/doomloop" hook claude-code --state-dir "$TMP/state" --option true; }
for id in 1 2 3; do
  answer="$(hook <<< "${pre/ID/$id}")"
  hook <<< "${batch/ID/$id}" >/dev/null
done
grep -q '"permissionDecision":"deny"' <<< "$answer" || { echo "check-pkg: doomloop hook did not deny the third call: '$answer'" >&2; exit 1; }
[ -f "$TMP/state/claude-code-pkg.json" ] || { echo "check-pkg: doomloop hook wrote no state file" >&2; exit 1; }
echo "check-pkg: ok ($(grep -E 'total files' <<< "$out" | sed 's/.*total files: *//') files)"
