// `npx doomloop hook …` (pkg/cli.mjs) guards for real: the wasm CLI runs
// the native hook's own code over Node's fs, the same state file, the same
// FILE.lock (exclusive create with the pid, stale when the pid is dead),
// the same exclusive FILE.PID.tmp + rename. So it refuses where the native hook refuses,
// and native and npx processes answering one session — one after the
// other or in parallel — keep one consistent state. No agent needed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, writeFileSync, readFileSync, existsSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { doomloop } from './agents.mjs';
import { pre, failingLoop, answer, timeless } from './scenario.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));
const npx = join(root, 'pkg/cli.mjs');
const CLIS = { native: [doomloop], npx: [process.execPath, npx] };
const skip = existsSync(doomloop) && existsSync(npx) ? false : `needs ${doomloop} and ${npx} (cargo build --release -p doom-loop-cli --bin doomloop; make build)`;
const fresh = () => mkdtempSync(join(tmpdir(), 'doomloop-npx-'));

function hook(cli, dir, input, agent = 'claude-code', args = []) {
  const [cmd, ...pre_] = CLIS[cli];
  const r = spawnSync(cmd, [...pre_, 'hook', agent, '--state-dir', dir, ...args], { input, encoding: 'utf8' });
  assert.equal(r.status, 0, `${cli}: ${r.stderr}`);
  return r;
}
/** One identical failing call per turn, each event answered by `who(turn, event)`. */
const loop = (dir, session, turns, who) => failingLoop((turn, event, input) => hook(who(turn, event), dir, input), session, turns);

test('npx doomloop hook claude-code refuses the third identical failing call, as the native hook does', { skip }, () => {
  const native = loop(fresh(), 'loop', 4, () => 'native');
  const npm = loop(fresh(), 'loop', 4, () => 'npx');
  assert.deepEqual(native.slice(0, 3), ['allow', 'allow', 'deny']);
  assert.deepEqual(npm, native);
});

test('native and npx processes taking turns on one session keep one state: the same answers and the same file', { skip }, async () => {
  const { RECOMMENDED_DOOM_LOOP_OPTION } = await import('../../pkg/node.mjs');
  const [alone, mixed] = [fresh(), fresh()];
  const turns = RECOMMENDED_DOOM_LOOP_OPTION.ladder?.stop ?? 6;
  const native = loop(alone, 's', turns, () => 'native');
  const interleaved = loop(mixed, 's', turns, (turn, event) => ((turn + event) % 2 ? 'npx' : 'native'));
  assert.deepEqual(interleaved, native);
  assert.equal(interleaved.at(-1), 'stop', interleaved.join(' '));
  const stateOf = (dir) => timeless(readFileSync(join(dir, 'claude-code-s.json'), 'utf8'));
  assert.equal(stateOf(mixed), stateOf(alone));
  assert.deepEqual(readdirSync(mixed).sort(), ['claude-code-s.json']);
});

test('parallel native and npx hook processes of one message share the lock and lose no call', { skip }, async () => {
  const dir = fresh();
  const ids = Array.from({ length: 8 }, (_, i) => `p${i}`);
  // As installed (UserPromptSubmit beside PostToolBatch): one round, not inferred ones.
  hook('native', dir, JSON.stringify({ session_id: 'par', hook_event_name: 'UserPromptSubmit', prompt: 'go' }));
  await Promise.all(ids.map((id, i) => new Promise((resolve) => {
    const [cmd, ...pre_] = CLIS[i % 2 ? 'npx' : 'native'];
    const child = spawn(cmd, [...pre_, 'hook', 'claude-code', '--state-dir', dir], { stdio: ['pipe', 'ignore', 'inherit'] });
    child.stdin.end(pre('par', id, `echo ${id}`));
    child.on('close', resolve);
  })));
  const state = JSON.parse(readFileSync(join(dir, 'claude-code-par.json'), 'utf8'));
  assert.deepEqual(state.round.calls.map((c) => c.id).sort(), ids);
  assert.deepEqual(readdirSync(dir).filter((f) => f.endsWith('.lock') || f.endsWith('.tmp')), []);
});

test("npx takes over a dead holder's lock at once, waits for a live one, then allows with one line", { skip }, () => {
  const dir = fresh();
  hook('npx', dir, pre('s', 't0'));
  const lock = join(dir, 'claude-code-s.json.lock');
  writeFileSync(lock, String(spawnSync('true').pid));
  assert.equal(hook('npx', dir, pre('s', 't1')).stderr, '');
  assert.ok(!existsSync(lock));
  writeFileSync(lock, String(process.pid));
  const t = Date.now();
  const r = hook('npx', dir, pre('s', 't2'));
  assert.match(r.stderr, /held by another process; allowing the call/);
  assert.ok(Date.now() - t >= 2500, `waited ${Date.now() - t} ms`);
});

test('npx: bad hook input or arguments allow the call with one line, exit 0, as natively', { skip }, () => {
  const dir = fresh();
  for (const [args, input] of [
    [['hook', 'claude-code', '--state-dir', dir], 'not json'],
    [['hook', 'gemini-cli', '--state-dir', dir], '{"session_id":"s","hook_event_name":"SomethingNew"}'],
    [['hook', 'claude-code', '--no-such-flag'], pre('s', 't')],
  ]) {
    const [a, b] = ['native', 'npx'].map((cli) => {
      const [cmd, ...pre_] = CLIS[cli];
      return spawnSync(cmd, [...pre_, ...args], { input, encoding: 'utf8' });
    });
    assert.equal(a.status, 0);
    assert.equal(b.status, 0);
    assert.equal(b.stdout, a.stdout, String(args));
    assert.equal(b.stderr, a.stderr, String(args));
    assert.equal(a.stderr.split('\n').filter(Boolean).length, 1, a.stderr);
  }
});

test('npx doomloop hook copilot denies the third identical failing call and ends the session at the sixth permission request, as the native hook does', { skip }, () => {
  // Copilot CLI's events for one shell call (its PascalCase payloads; the
  // permission request always camelCase), as 1.0.102 sends them
  const input = (n) => ({ command: 'sh fail.sh', description: `attempt ${n}` });
  // (the n-th response's calls stamped with its time).
  const event = (name, n, fields) => JSON.stringify({ hook_event_name: name, session_id: 'cp', timestamp: `2026-12-06T14:19:${String(n).padStart(2, '0')}.934Z`, cwd: '/w', ...fields });
  const permission = JSON.stringify({ hookName: 'permissionRequest', sessionId: 'cp', timestamp: 1, cwd: '/w', toolName: 'bash', toolInput: { command: 'sh fail.sh' }, permissionSuggestions: [] });
  const run = (cli) => {
    const dir = fresh();
    const answers = [];
    for (let n = 1; n <= 6; n++) {
      const pre = hook(cli, dir, event('PreToolUse', n, { tool_name: 'Bash', tool_input: input(n) }), 'copilot', ['--option', 'true']).stdout;
      if (pre) { answers.push(JSON.parse(pre).permissionDecision); continue; }
      const asked = hook(cli, dir, permission, 'copilot', ['--option', 'true']).stdout;
      if (asked) { answers.push(JSON.parse(asked).interrupt ? 'interrupt' : asked); continue; }
      answers.push('allow');
      const output = `cat: missing.txt: No such file or directory\n<shellId: ${n} completed with exit code 1>`;
      hook(cli, dir, event('PostToolUse', n, { tool_name: 'Bash', tool_input: input(n), tool_result: { result_type: 'success', text_result_for_llm: output } }), 'copilot', ['--option', 'true']);
    }
    return { answers, state: readFileSync(join(dir, 'copilot-cp.json'), 'utf8') };
  };
  const native = run('native');
  assert.deepEqual(native.answers, ['allow', 'allow', 'deny', 'deny', 'deny', 'interrupt']);
  const npm = run('npx');
  assert.deepEqual(npm.answers, native.answers);
  assert.equal(timeless(npm.state), timeless(native.state));
});

test('npx doomloop hook reads the same config files as the native hook: the project file over the user file, an MCP loop key, a malformed file', { skip }, () => {
  const base = fresh();
  const home = join(base, 'home');
  const project = join(base, 'project');
  mkdirSync(join(home, '.config/doomloop'), { recursive: true });
  mkdirSync(join(project, 'src'), { recursive: true });
  // The user's file turns the guard off; the project's turns the reference ladder on and keys the MCP tool.
  writeFileSync(join(home, '.config/doomloop/config.toml'), 'option = false\n');
  writeFileSync(join(project, '.doomloop.toml'), 'option = true\n[loop_keys]\n"mcp__github__get_issue" = ["owner", "repo", "issue_number"]\n');
  const event = (name, id, extra) => JSON.stringify({ session_id: 'cfg', cwd: join(project, 'src'), hook_event_name: name, tool_use_id: id, ...extra });
  const call = (i) => ({ tool_name: 'mcp__github__get_issue', tool_input: { owner: 'o', repo: 'r', issue_number: 7, request_id: `req-${i}` } });
  const run = (cli, input) => {
    const [cmd, ...pre_] = CLIS[cli];
    const r = spawnSync(cmd, [...pre_, 'hook', 'claude-code', '--state-dir', join(base, `state-${cli}`)], { input, encoding: 'utf8', env: { ...process.env, HOME: home, XDG_CONFIG_HOME: '', DOOMLOOP_CONFIG: '' } });
    assert.equal(r.status, 0, `${cli}: ${r.stderr}`);
    return r;
  };
  for (const cli of ['native', 'npx']) {
    const answers = [];
    for (let i = 1; i <= 3; i++) {
      answers.push(answer(run(cli, event('PreToolUse', `m${i}`, call(i))).stdout));
      assert.equal(run(cli, event('PostToolBatch', `m${i}`, { tool_calls: [{ ...call(i), tool_use_id: `m${i}`, tool_response: 'not found' }] })).stderr, '');
    }
    // Three calls differing only in request_id are one call: the third is refused.
    assert.deepEqual(answers, ['allow', 'allow', 'deny'], cli);
  }
  writeFileSync(join(project, '.doomloop.toml'), 'option = true\n[loop_keys]\n"mcp__github__get_issue" = "owner"\n');
  const lines = ['native', 'npx'].map((cli) => {
    const r = run(cli, event('PreToolUse', 'm9', call(9)));
    assert.equal(r.stdout, '', cli);
    return r.stderr;
  });
  assert.match(lines[0], /^doomloop hook: .*\/project\/\.doomloop\.toml:3: key `loop_keys\.mcp__github__get_issue`: .*allowing the call\n$/);
  assert.equal(lines[1], lines[0]);
});

test('npx doomloop hook log lists what the guard did in the loop scenario, as the native CLI does from the same state', { skip }, () => {
  const dir = fresh();
  // Under the default option: refused from the third call, stopped at the twelfth.
  const answers = loop(dir, 'logged', 12, () => 'npx');
  assert.deepEqual(answers.slice(0, 3), ['allow', 'allow', 'deny']);
  assert.equal(answers[11], 'stop');
  const log = (cli, args) => {
    const [cmd, ...pre_] = CLIS[cli];
    const r = spawnSync(cmd, [...pre_, 'hook', 'log', '--state-dir', dir, ...args], { encoding: 'utf8' });
    assert.equal(r.status, 0, `${cli}: ${r.stderr}`);
    return r.stdout;
  };
  const text = log('npx', []);
  assert.equal(log('native', []), text);
  assert.match(text, /^claude-code session logged \(last event /);
  assert.match(text, / block +Bash cat missing\.txt\n +Doom loop suspected: tool "Bash" was invoked in 3 consecutive rounds/);
  const json = JSON.parse(log('npx', ['claude-code', '--session', 'logged', '--json']));
  assert.deepEqual(JSON.parse(log('native', ['claude-code', '--session', 'logged', '--json'])), json);
  const rungs = json.sessions[0].interventions.map((i) => i.rung);
  assert.deepEqual(rungs, ['observe', ...Array(9).fill('block'), 'stop']);
  assert.match(json.sessions[0].interventions.at(-1).text, /invoked in 12 consecutive rounds/);
});
