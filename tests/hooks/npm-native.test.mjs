// The native `doomloop` through npm, as a user installs it: the tarballs of
// this build — the main package (pkg/) and the host's platform package
// (npm/<platform>/ around target/release/doomloop, the binary test-hooks
// built; the cross-built ones are `make release`'s) — installed into a
// scratch global prefix offline. The `doomloop` bin (the launcher) runs the
// native binary, `--version` proving it; the hook answers through it;
// `hook install` writes the binary's own path. With the platform package
// removed, or DOOMLOOP_WASM=1, the wasm CLI answers the same events with
// the same state file; a binary that cannot start, or of another version,
// falls back to it too. No registry is reached.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { doomloop, root } from './agents.mjs';
import { failingLoop, pre, timeless } from './scenario.mjs';
import { platforms, writePackage } from '../../scripts/platform-pkg.mjs';

const host = `${process.platform}-${process.arch}`;
const pkg = join(root, 'pkg');
const skip = !existsSync(doomloop) || !existsSync(join(pkg, 'cli.mjs'))
  ? `needs ${doomloop} and pkg/ (cargo build --release -p doom-loop-cli --bin doomloop; make build)`
  : !platforms()[host] && `no platform package for ${host}`;
const work = mkdtempSync(join(tmpdir(), 'doomloop-npm-native-'));
const prefix = join(work, 'prefix');
const modules = join(prefix, 'lib/node_modules');
const { version } = JSON.parse(readFileSync(join(root, 'js/package.json'), 'utf8'));
const nativeVersion = `doomloop ${version} (native ${host})\n`;
const wasmVersion = `doomloop ${version} (wasm)\n`;

function npm(args, cwd = work) {
  const r = spawnSync('npm', [...args, '--offline', '--no-audit', '--no-fund', '--ignore-scripts', '--loglevel=error'], { cwd, encoding: 'utf8' });
  assert.equal(r.status, 0, `npm ${args.join(' ')}: ${r.stderr}`);
  return r.stdout.trim().split('\n').at(-1);
}

before(() => {
  if (skip) return;
  const main = join(work, npm(['pack', pkg, '--pack-destination', work]));
  const folder = writePackage(host, doomloop, join(work, 'platform'));
  const platform = join(work, npm(['pack', folder, '--pack-destination', work]));
  npm(['install', '-g', '--prefix', prefix, main, platform]);
});

/** A copy of the installed prefix to change (the bin link is relative, kept as is). */
function copyOfPrefix() {
  const copy = mkdtempSync(join(work, 'copy-'));
  cpSync(prefix, copy, { recursive: true, verbatimSymlinks: true });
  return copy;
}

/** `doomloop ARGS` through the npm bin of `at` (a prefix). */
function bin(at, args, { input = '', env = {}, cwd = work } = {}) {
  return spawnSync(join(at, 'bin/doomloop'), args, { input, cwd, encoding: 'utf8', env: { ...process.env, DOOMLOOP_WASM: '', ...env } });
}

/** The failing loop's PreToolUse verdicts through the npm bin of `at`, and the state file it leaves. */
function hookLoop(at, env = {}) {
  const state = mkdtempSync(join(work, 'state-'));
  const answers = failingLoop((turn, event, input) => bin(at, ['hook', 'claude-code', '--state-dir', state], { input, env }), 's', 3);
  return { answers, state: readFileSync(join(state, 'claude-code-s.json'), 'utf8') };
}

test('npm_native_bin_runs_the_platform_binary: --version names it, which prints its path, the hook refuses the third call', { skip }, () => {
  const version = bin(prefix, ['--version']);
  assert.equal(version.status, 0, version.stderr);
  assert.equal(version.stdout, nativeVersion);
  const binary = join(modules, `doom-loop-wasm-${host}`, 'bin', 'doomloop');
  assert.equal(realpathSync(bin(prefix, ['which']).stdout.trim()), realpathSync(binary));
  assert.deepEqual(hookLoop(prefix).answers.slice(0, 3), ['allow', 'allow', 'deny']);
});

test('npm_native_found_by_the_plugins_launcher: sh doomloop-hook runs this install\'s platform binary itself, with no node on PATH', { skip }, () => {
  // PATH: the prefix's bin and only the tools the launcher may start — no
  // node, so the npm bin (a Node script) could not answer: the answers
  // below come from the platform binary the launcher found beside it.
  const tools = mkdtempSync(join(work, 'tools-'));
  for (const tool of ['readlink', 'uname', 'mkdir']) symlinkSync(['/usr/bin', '/bin'].map((d) => join(d, tool)).find(existsSync), join(tools, tool));
  const env = { PATH: `${join(prefix, 'bin')}:${tools}`, HOME: mkdtempSync(join(work, 'home-')), DOOMLOOP_STATE_DIR: mkdtempSync(join(work, 'state-')) };
  assert.notEqual(spawnSync(join(prefix, 'bin/doomloop'), ['--version'], { env }).status, 0, 'the npm bin needs node');
  const launcher = join(root, 'plugins/launcher/doomloop-hook');
  const answers = failingLoop((turn, event, input) => spawnSync('/bin/sh', [launcher, 'claude-code'], { input, env, encoding: 'utf8' }), 's', 3);
  assert.deepEqual(answers, ['allow', 'allow', 'deny']);
});

test('npm_native_hook_install_writes_the_binary_path: no Node start per tool call', { skip }, () => {
  const home = mkdtempSync(join(work, 'home-'));
  const r = bin(prefix, ['hook', 'install', 'claude-code'], { env: { HOME: home } });
  assert.equal(r.status, 0, r.stderr);
  const settings = readFileSync(join(home, '.claude/settings.json'), 'utf8');
  const binary = join(modules, `doom-loop-wasm-${host}`, 'bin', 'doomloop');
  assert.ok(settings.includes(`"command": "${binary} hook claude-code"`), settings);
  assert.ok(!settings.includes(process.execPath), settings);
  // The wasm CLI writes `node` and the launcher: the hook still runs (slower).
  const wasm = bin(prefix, ['hook', 'install', 'claude-code', '--print'], { env: { HOME: home, DOOMLOOP_WASM: '1' } });
  assert.equal(wasm.status, 0, wasm.stderr);
  assert.ok(wasm.stdout.includes(`"command": "${process.execPath} ${join(prefix, 'bin/doomloop')} hook claude-code"`), wasm.stdout);
  // ... replacing the native entry, not adding a second one.
  assert.equal(wasm.stdout.split('hook claude-code"').length - 1, settings.split('hook claude-code"').length - 1);
});

test('npm_native_launcher_passes_status_and_streams_through, and leaves proxy to Node', { skip }, () => {
  for (const at of [prefix]) {
    const usage = bin(at, ['frobnicate']);
    assert.equal(usage.status, 2);
    assert.match(usage.stderr, /unrecognized subcommand 'frobnicate'/);
    const bad = bin(at, ['canonicalize'], { input: '{' });
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /^doomloop: /);
    const ok = bin(at, ['fingerprint', 'bash', '{"a":1}']);
    assert.equal(ok.status, 0);
    assert.equal(ok.stdout, `${spawnSync(doomloop, ['fingerprint', 'bash', '{"a":1}'], { encoding: 'utf8' }).stdout}`);
    // `doomloop proxy` is Node's own server: the JS CLI answers it either way.
    const proxy = bin(at, ['proxy', '--help']);
    assert.equal(proxy.status, 0, proxy.stderr);
    assert.match(proxy.stdout, /^usage: doomloop proxy /);
  }
});

test('npm_wasm_fallback_same_state: without the platform package the wasm CLI answers the same events with the same state file', { skip }, () => {
  const native = hookLoop(prefix);
  const forced = hookLoop(prefix, { DOOMLOOP_WASM: '1' });
  const copy = copyOfPrefix();
  rmSync(join(copy, `lib/node_modules/doom-loop-wasm-${host}`), { recursive: true });
  assert.equal(bin(copy, ['--version']).stdout, wasmVersion);
  assert.equal(bin(prefix, ['--version'], { env: { DOOMLOOP_WASM: '1' } }).stdout, wasmVersion);
  const removed = hookLoop(copy);
  for (const wasm of [forced, removed]) {
    assert.deepEqual(wasm.answers, native.answers);
    assert.equal(timeless(wasm.state), timeless(native.state));
  }
});

test('npm_native_unusable_falls_back_to_wasm: a binary that cannot start (one line) or of another version', { skip }, () => {
  const broken = copyOfPrefix();
  const binary = join(broken, `lib/node_modules/doom-loop-wasm-${host}`, 'bin', 'doomloop');
  chmodSync(binary, 0o644);
  const r = bin(broken, ['--version']);
  assert.equal(r.status, 0);
  assert.equal(r.stdout, wasmVersion);
  assert.match(r.stderr, /^doomloop: cannot start .*doomloop \(EACCES\); running the wasm CLI\n$/);
  // As a hook: answered (allowed, exit 0) by the wasm CLI, the one line said.
  const event = bin(broken, ['hook', 'claude-code', '--state-dir', mkdtempSync(join(work, 'state-'))], { input: pre('s', 'c1') });
  assert.equal(event.status, 0);
  assert.equal(event.stdout, '');
  assert.equal(event.stderr.split('\n').filter(Boolean).length, 1, event.stderr);

  const other = copyOfPrefix();
  const manifest = join(other, `lib/node_modules/doom-loop-wasm-${host}`, 'package.json');
  writeFileSync(manifest, readFileSync(manifest, 'utf8').replace(`"version": "${version}"`, '"version": "0.0.0-other"'));
  const stale = bin(other, ['--version']);
  assert.equal(stale.stdout, wasmVersion);
  assert.equal(stale.stderr, '');
});

test('npm_platform_packages_match_the_launcher: one per platform, os/cpu, exact optional dependencies', { skip: !existsSync(join(pkg, 'package.json')) && 'needs pkg/' }, async () => {
  const main = JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8'));
  const templates = platforms();
  const { createRequire } = await import('node:module');
  const finder = createRequire(import.meta.url)(join(pkg, 'native.cjs'));
  assert.deepEqual([...finder.platforms].sort(), Object.keys(templates).sort());
  for (const [platform, manifest] of Object.entries(templates)) {
    assert.equal(manifest.name, `doom-loop-wasm-${platform}`);
    assert.deepEqual([`${manifest.os}-${manifest.cpu}`], [platform]);
    assert.equal(main.optionalDependencies[manifest.name], main.version);
  }
  assert.equal(Object.keys(main.optionalDependencies).length, Object.keys(templates).length);
  assert.deepEqual(readdirSync(join(root, 'npm')).filter((f) => !templates[f]), ['README.md']);
});
