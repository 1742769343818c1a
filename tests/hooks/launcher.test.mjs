// The plugins' launcher, plugins/launcher/doomloop-hook, finding the binary
// in fake install layouts built in a temp dir: $DOOMLOOP_BIN; the platform
// package of an npm-installed doom-loop-wasm beside it (npm's global layout),
// nested in it, behind a link elsewhere, or in npx's cache; `doomloop` on
// PATH; ~/.cargo/bin; nothing at all (the call allowed, one notice, said
// once); and a binary that cannot start or fails (allowed, one line, exit 0).
// Each run sees only a scratch HOME and a PATH of the few tools the
// launcher uses, so nothing installed on this machine is found.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { root, doomloop } from './agents.mjs';

const launcher = join(root, 'plugins/launcher/doomloop-hook');
const host = `${process.platform}-${process.arch}`;
const which = (tool) => ['/usr/bin', '/bin'].map((d) => join(d, tool)).find(existsSync);

/** A scratch world: HOME, and a PATH holding only the tools the launcher may start. */
function world() {
  const base = mkdtempSync(join(tmpdir(), 'doomloop-launcher-'));
  const tools = join(base, 'tools');
  mkdirSync(tools);
  // (cat: the fakes read their stdin.)
  for (const tool of ['readlink', 'uname', 'mkdir', 'cat']) symlinkSync(which(tool), join(tools, tool));
  mkdirSync(join(base, 'home'));
  return { base, home: join(base, 'home'), path: [tools] };
}
/** A fake `doomloop` at `path` that says which one it is and what it was asked. */
function fake(path, body = 'echo "ran $0 $*"') {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `#!/bin/sh\ncat >/dev/null\n${body}\n`);
  chmodSync(path, 0o755);
  return path;
}
/** npm's global install of doom-loop-wasm under PREFIX: bin/doomloop linking to the package's CLI. */
function npmGlobal(prefix) {
  const cli = fake(join(prefix, 'lib/node_modules/doom-loop-wasm/cli.cjs'), 'echo "ran the wasm CLI"');
  mkdirSync(join(prefix, 'bin'), { recursive: true });
  symlinkSync('../lib/node_modules/doom-loop-wasm/cli.cjs', join(prefix, 'bin/doomloop'));
  return cli;
}
function launch(w, { agent = 'claude-code', env = {}, input = '{}' } = {}) {
  const r = spawnSync('/bin/sh', [launcher, agent], {
    input,
    encoding: 'utf8',
    env: { HOME: w.home, PATH: w.path.join(':'), ...env },
  });
  return { ...r, lines: r.stderr.split('\n').filter(Boolean) };
}
function ran(r, bin, agent = 'claude-code') {
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, `ran ${bin} hook ${agent}\n`);
  assert.equal(r.stderr, '');
}

test('launcher: $DOOMLOOP_BIN comes first', () => {
  const w = world();
  const prefix = join(w.base, 'prefix');
  npmGlobal(prefix);
  fake(join(prefix, `lib/node_modules/doom-loop-wasm-${host}/bin/doomloop`));
  w.path.unshift(join(prefix, 'bin'));
  const mine = fake(join(w.base, 'mine/doomloop'));
  ran(launch(w, { env: { DOOMLOOP_BIN: mine } }), mine);
});

test('launcher: npm global install, the platform package beside doom-loop-wasm (PREFIX/lib/node_modules)', () => {
  const w = world();
  const prefix = join(w.base, 'prefix');
  npmGlobal(prefix);
  const native = fake(join(prefix, `lib/node_modules/doom-loop-wasm-${host}/bin/doomloop`));
  w.path.unshift(join(prefix, 'bin'));
  ran(launch(w), native);
  ran(launch(w, { agent: 'gemini-cli' }), native, 'gemini-cli');
});

test('launcher: npm global install, the platform package nested in doom-loop-wasm/node_modules', () => {
  const w = world();
  const prefix = join(w.base, 'prefix');
  npmGlobal(prefix);
  const native = fake(join(prefix, `lib/node_modules/doom-loop-wasm/node_modules/doom-loop-wasm-${host}/bin/doomloop`));
  w.path.unshift(join(prefix, 'bin'));
  ran(launch(w), native);
});

test('launcher: `doomloop` on PATH linking into another node_modules is resolved (readlink -f)', () => {
  const w = world();
  const nm = join(w.base, 'elsewhere/node_modules');
  fake(join(nm, 'doom-loop-wasm/cli.mjs'), 'echo "ran the wasm CLI"');
  const native = fake(join(nm, `doom-loop-wasm-${host}/bin/doomloop`));
  mkdirSync(join(w.base, 'links'));
  symlinkSync(join(nm, 'doom-loop-wasm/cli.mjs'), join(w.base, 'links/doomloop'));
  w.path.unshift(join(w.base, 'links'));
  ran(launch(w), native);
});

test('launcher: with several platform packages, this machine\'s', () => {
  const w = world();
  const prefix = join(w.base, 'prefix');
  npmGlobal(prefix);
  const others = ['darwin-arm64', 'linux-arm64', 'linux-x64', 'darwin-x64'].filter((p) => p !== host);
  for (const p of others) fake(join(prefix, `lib/node_modules/doom-loop-wasm-${p}/bin/doomloop`), `echo "wrong platform ${p}"`);
  const native = fake(join(prefix, `lib/node_modules/doom-loop-wasm-${host}/bin/doomloop`));
  w.path.unshift(join(prefix, 'bin'));
  ran(launch(w), native);
});

test('launcher: npx\'s cache (~/.npm/_npx/*/node_modules), nothing on PATH', () => {
  const w = world();
  fake(join(w.home, '.npm/_npx/0123abcd/node_modules/doom-loop-wasm/cli.mjs'));
  const native = fake(join(w.home, `.npm/_npx/0123abcd/node_modules/doom-loop-wasm-${host}/bin/doomloop`));
  ran(launch(w), native);
});

test('launcher: no platform package: `doomloop` on PATH as it is (the npm CLI\'s wasm, or a cargo install there)', () => {
  const w = world();
  const prefix = join(w.base, 'prefix');
  npmGlobal(prefix);
  w.path.unshift(join(prefix, 'bin'));
  const r = launch(w);
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, 'ran the wasm CLI\n');
});

test('launcher: an empty or relative PATH entry is not the project: a `./doomloop` where the agent works never runs', () => {
  const w = world();
  const project = join(w.base, 'project');
  fake(join(project, 'doomloop'), 'echo "ran the project\'s doomloop"');
  fake(join(project, 'bin/doomloop'), 'echo "ran the project\'s bin/doomloop"');
  const cargo = fake(join(w.home, '.cargo/bin/doomloop'));
  w.path.push('', '.', 'bin');
  const r = spawnSync('/bin/sh', [launcher, 'claude-code'], { cwd: project, input: '{}', encoding: 'utf8', env: { HOME: w.home, PATH: w.path.join(':') } });
  ran({ ...r, lines: [] }, cargo);
});

test('launcher: ~/.cargo/bin/doomloop when nothing else is there', () => {
  const w = world();
  const cargo = fake(join(w.home, '.cargo/bin/doomloop'));
  ran(launch(w), cargo);
});

test('launcher: nothing installed allows the call (exit 0; Gemini CLI gets {}) and names what to install once, on stderr and as a systemMessage, remembered in the state directory', () => {
  for (const [env, stateDir] of [
    [{}, (w) => join(w.home, '.local/state/doomloop')],
    [{ XDG_STATE_HOME: 'XDG' }, (w) => join(w.base, 'xdg/doomloop')],
    [{ DOOMLOOP_STATE_DIR: 'STATE' }, (w) => join(w.base, 'state')],
  ]) {
    const w = world();
    const resolved = Object.fromEntries(Object.entries(env).map(([k, v]) => [k, join(w.base, v.toLowerCase())]));
    const first = launch(w, { env: resolved });
    assert.equal(first.status, 0);
    assert.equal(first.lines.length, 1, first.stderr);
    assert.match(first.lines[0], /no doomloop binary found.*npm i -g doom-loop-wasm/);
    // The same words to the user: an allowing answer carrying them as its systemMessage.
    assert.deepEqual(JSON.parse(first.stdout), { systemMessage: first.lines[0] });
    assert.ok(readdirSync(stateDir(w)).includes('no-doomloop-notice'), JSON.stringify(env));
    for (const agent of ['claude-code', 'gemini-cli', 'codex']) {
      const again = launch(w, { agent, env: resolved });
      assert.equal(again.status, 0);
      assert.equal(again.stderr, '', 'said once');
      assert.equal(again.stdout, agent === 'gemini-cli' ? '{}\n' : '');
    }
  }
});

test('launcher: a state directory that cannot be written still allows the call, with the notice (each time: nothing remembers it)', () => {
  const w = world();
  writeFileSync(join(w.base, 'a-file'), '');
  for (let i = 0; i < 2; i++) {
    const r = launch(w, { agent: 'gemini-cli', env: { DOOMLOOP_STATE_DIR: join(w.base, 'a-file/state') } });
    assert.equal(r.status, 0);
    assert.match(JSON.parse(r.stdout).systemMessage, /no doomloop binary found/);
    assert.equal(r.lines.length, 1, r.stderr);
  }
});

test('launcher: a binary that cannot start or fails allows the call with one line of its own and exit 0, never 2', () => {
  const w = world();
  const notExecutable = join(w.base, 'plain/doomloop');
  mkdirSync(dirname(notExecutable));
  writeFileSync(notExecutable, 'not a program');
  // Another machine's binary: this one's `true` marked for a different CPU (ELF e_machine).
  const foreign = join(w.base, 'foreign/doomloop');
  mkdirSync(dirname(foreign));
  copyFileSync(which('true'), foreign);
  const patch = spawnSync('/bin/sh', ['-c', `printf '\\267\\000' | dd of="${foreign}" bs=1 seek=18 conv=notrunc 2>/dev/null`]);
  assert.equal(patch.status, 0);
  chmodSync(foreign, 0o755);
  const usage = fake(join(w.base, 'old/doomloop'), 'echo "error: unrecognized subcommand" >&2; exit 2');
  const crash = fake(join(w.base, 'crash/doomloop'), 'kill -SEGV $$');
  for (const [bin, own] of [[notExecutable, 0], [foreign, 1], [usage, 1], [crash, 1], [join(w.base, 'missing'), 0]]) {
    for (const agent of ['claude-code', 'gemini-cli']) {
      const r = launch(w, { agent, env: { DOOMLOOP_BIN: bin } });
      assert.equal(r.status, 0, `${bin}: ${r.stderr}`);
      assert.equal(r.stdout, agent === 'gemini-cli' ? '{}\n' : '', bin);
      // The launcher's one line (after the shell's or the binary's own, when they said something).
      const ours = r.lines.filter((l) => l.startsWith('doom-loop: '));
      assert.equal(ours.length, 1, `${bin}: ${r.stderr}`);
      assert.match(ours[0], /allowing the call/);
      assert.ok(r.lines.length <= 1 + own, `${bin}: ${r.stderr}`);
    }
  }
});

test('launcher: the real binary in npm\'s layout gets the event on stdin and keeps its state where the hook does', { skip: existsSync(doomloop) ? false : `no ${doomloop}` }, () => {
  const w = world();
  const prefix = join(w.base, 'prefix');
  npmGlobal(prefix);
  const native = join(prefix, `lib/node_modules/doom-loop-wasm-${host}/bin/doomloop`);
  mkdirSync(dirname(native), { recursive: true });
  symlinkSync(doomloop, native);
  w.path.unshift(join(prefix, 'bin'));
  const state = join(w.base, 'state');
  const event = (n) => JSON.stringify({
    session_id: 'launcher', transcript_path: '/nonexistent', cwd: '/tmp', hook_event_name: 'PreToolUse',
    tool_name: 'Bash', tool_input: { command: 'cat missing.txt' }, tool_use_id: `toolu_${n}`,
  });
  const r = launch(w, { input: event(1), env: { DOOMLOOP_STATE_DIR: state } });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stderr, '');
  assert.deepEqual(readdirSync(state).filter((f) => f.endsWith('.json')), ['claude-code-launcher.json']);
});
