// How `doomloop hook install` and the hook's state store treat a user's
// files, natively and under `npx doomloop` (the same Rust in wasm over
// Node's fs: each host's exclusive create, mode and link handling is its
// own code, so both run every case). A cloned repository's planted links,
// a user's dotfiles link and modes, a shared state directory.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { doomloop } from './agents.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));
const npx = join(root, 'pkg/cli.mjs');
const CLIS = { native: [doomloop], npx: [process.execPath, npx] };
const skip = existsSync(doomloop) && existsSync(npx) ? false : `needs ${doomloop} and ${npx} (cargo build --release -p doom-loop-cli --bin doomloop; make build)`;
const AGENTS = [
  ['claude-code', '.claude', 'settings.json'], ['gemini-cli', '.gemini', 'settings.json'], ['codex', '.codex', 'hooks.json'],
  ['copilot', '.github/hooks', 'doom-loop.json'],
];

/** A scratch folder with `home/` and `project/`. */
function scratch() {
  const base = mkdtempSync(join(tmpdir(), 'doomloop-install-safety-'));
  mkdirSync(join(base, 'home'));
  mkdirSync(join(base, 'project'));
  return { base, home: join(base, 'home'), project: join(base, 'project') };
}

function run(cli, where, args, input) {
  const [cmd, ...pre] = CLIS[cli];
  // DOOMLOOP_WASM: the npm bin runs the wasm CLI even where a native package is installed.
  const env = { ...process.env, HOME: where.home, DOOMLOOP_WASM: '1' };
  for (const name of ['CODEX_HOME', 'DOOMLOOP_STATE_DIR', 'XDG_STATE_HOME']) delete env[name];
  return spawnSync(cmd, [...pre, ...args], { cwd: where.project, env, input, encoding: 'utf8', timeout: 20_000 });
}
const install = (cli, where, agent, scope) => run(cli, where, ['hook', 'install', agent, scope, '--command', 'doomloop hook x']);

for (const cli of Object.keys(CLIS)) {
  test(`${cli}: a project install never writes through a link planted at its temporary name`, { skip }, () => {
    for (const [agent, dir, file] of AGENTS) {
      const w = scratch();
      writeFileSync(join(w.home, '.bashrc'), '# the victim\n');
      mkdirSync(join(w.project, dir), { recursive: true });
      writeFileSync(join(w.project, dir, file), '{"a": "$(touch PWNED)"}');
      symlinkSync(join(w.home, '.bashrc'), join(w.project, dir, `${file}.tmp`));
      const r = install(cli, w, agent, '--project');
      assert.equal(r.status, 0, `${agent}: ${r.stderr}`);
      assert.equal(readFileSync(join(w.home, '.bashrc'), 'utf8'), '# the victim\n', agent);
      assert.match(readFileSync(join(w.project, dir, file), 'utf8'), /doomloop hook x/);
      assert.ok(lstatSync(join(w.project, dir, file)).isFile());
      rmSync(w.base, { recursive: true });
    }
  });

  test(`${cli}: project settings or their folder linking out of the project are refused, nothing written`, { skip }, () => {
    for (const [agent, dir, file] of AGENTS) {
      const w = scratch();
      writeFileSync(join(w.home, 'victim.json'), '{}');
      mkdirSync(join(w.project, dir), { recursive: true });
      symlinkSync(join(w.home, 'victim.json'), join(w.project, dir, file));
      const r = install(cli, w, agent, '--project');
      assert.equal(r.status, 2, agent);
      assert.match(r.stderr, /leads out of the project/);
      assert.equal(readFileSync(join(w.home, 'victim.json'), 'utf8'), '{}');
      const v = scratch();
      mkdirSync(join(v.home, dir), { recursive: true });
      mkdirSync(join(v.project, dir, '..'), { recursive: true });
      symlinkSync(join(v.home, dir), join(v.project, dir));
      const s = install(cli, v, agent, '--project');
      assert.equal(s.status, 2, agent);
      assert.match(s.stderr, /leads out of the project/);
      assert.deepEqual(readdirSync(join(v.home, dir)), []);
      rmSync(w.base, { recursive: true });
      rmSync(v.base, { recursive: true });
    }
  });
}

const PRE = JSON.stringify({ session_id: 's', hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_use_id: 't1', tool_input: { command: 'cat secrets' } });
const mode = (path) => statSync(path).mode & 0o777;

for (const cli of Object.keys(CLIS)) {
  test(`${cli}: a user's settings keep their mode and their dotfiles link, and the previous file is kept as FILE.bak`, { skip }, () => {
    const w = scratch();
    mkdirSync(join(w.home, '.claude'));
    const claude = join(w.home, '.claude/settings.json');
    const secret = '{"env":{"ANTHROPIC_API_KEY":"sk-ant-secret"}}';
    writeFileSync(claude, secret, { mode: 0o600 });
    assert.equal(install(cli, w, 'claude-code', '--user').status, 0);
    assert.equal(mode(claude), 0o600);
    assert.equal(readFileSync(`${claude}.bak`, 'utf8'), secret);
    assert.equal(mode(`${claude}.bak`), 0o600);
    const again = install(cli, w, 'claude-code', '--user');
    assert.match(again.stdout, /nothing changed/);
    assert.equal(readFileSync(`${claude}.bak`, 'utf8'), secret, 'the backup still holds the file before the hook');
    mkdirSync(join(w.home, 'dotfiles'));
    mkdirSync(join(w.home, '.gemini'));
    writeFileSync(join(w.home, 'dotfiles/gemini.json'), '{"model":"gemini-2.5-pro"}', { mode: 0o640 });
    symlinkSync('../dotfiles/gemini.json', join(w.home, '.gemini/settings.json'));
    assert.equal(install(cli, w, 'gemini-cli', '--user').status, 0);
    assert.ok(lstatSync(join(w.home, '.gemini/settings.json')).isSymbolicLink());
    assert.match(readFileSync(join(w.home, 'dotfiles/gemini.json'), 'utf8'), /doomloop hook x/);
    assert.equal(mode(join(w.home, 'dotfiles/gemini.json')), 0o640);
    // A link planted at the backup's name is replaced, not followed.
    writeFileSync(join(w.home, 'victim'), 'victim\n');
    mkdirSync(join(w.project, '.codex'));
    writeFileSync(join(w.project, '.codex/hooks.json'), '{}');
    symlinkSync(join(w.home, 'victim'), join(w.project, '.codex/hooks.json.bak'));
    assert.equal(install(cli, w, 'codex', '--project').status, 0);
    assert.equal(readFileSync(join(w.home, 'victim'), 'utf8'), 'victim\n');
    assert.equal(readFileSync(join(w.project, '.codex/hooks.json.bak'), 'utf8'), '{}');
    rmSync(w.base, { recursive: true });
  });

  test(`${cli}: an install changes only its own entries: numbers as written, comments, duplicate keys and order stay`, { skip }, () => {
    const w = scratch();
    mkdirSync(join(w.home, '.gemini'));
    const file = join(w.home, '.gemini/settings.json');
    const head = '{\n    // my model\n    "feedbackSurveyId": 12345678901234567890,\n    "maxSize": 1e400,\n    "dup": 1, "dup": 2,\n    "hooks": {\n        "Stop": [ {"hooks": [{"type": "command", "command": "say done"}]} ]';
    const tail = '\n    },\n    "z": [1,2,3]\n}\n';
    writeFileSync(file, `${head}${tail}`);
    assert.equal(install(cli, w, 'gemini-cli', '--user').status, 0);
    const after = readFileSync(file, 'utf8');
    assert.ok(after.startsWith(head), after);
    assert.ok(after.endsWith(tail), after);
    assert.match(after, /"BeforeTool": \[\s*\{\s*"matcher": "\*"/);
    // Not JSONC: refused, untouched.
    writeFileSync(file, "{'single': 1}");
    const r = install(cli, w, 'gemini-cli', '--user');
    assert.equal(r.status, 2);
    assert.match(r.stderr, /not JSON/);
    assert.equal(readFileSync(file, 'utf8'), "{'single': 1}");
    rmSync(w.base, { recursive: true });
  });

  test(`${cli}: a state directory others can write is refused with one line and the call allowed; a planted state .tmp link is never followed`, { skip }, () => {
    const w = scratch();
    for (const bits of [0o777, 0o1777, 0o770]) {
      const dir = mkdtempSync(join(w.base, 'shared-'));
      chmodSync(dir, bits);
      const r = run(cli, w, ['hook', 'claude-code', '--state-dir', dir], PRE);
      assert.equal(r.status, 0);
      assert.equal(r.stdout, '');
      assert.equal(r.stderr.split('\n').filter(Boolean).length, 1, r.stderr);
      assert.match(r.stderr, /can be written by other users.*allowing the call/);
      assert.deepEqual(readdirSync(dir), []);
    }
    const mine = join(w.base, 'mine');
    mkdirSync(mine, { mode: 0o700 });
    writeFileSync(join(w.base, 'victim'), 'victim\n');
    symlinkSync(join(w.base, 'victim'), join(mine, 'claude-code-s.json.tmp'));
    const r = run(cli, w, ['hook', 'claude-code', '--state-dir', mine], PRE);
    assert.equal(r.status, 0);
    assert.equal(r.stderr, '');
    assert.equal(readFileSync(join(w.base, 'victim'), 'utf8'), 'victim\n');
    assert.equal(mode(join(mine, 'claude-code-s.json')), 0o600);
    rmSync(w.base, { recursive: true });
  });
}
