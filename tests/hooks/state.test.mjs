// `doomloop hook` as a process: what it does with bad input, a corrupt or
// old state file, a lock left by a dead process, a process killed while it
// writes; and `doomloop hook install` merging settings. No agent needed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, readFileSync, existsSync, readdirSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { doomloop } from './agents.mjs';

const skip = existsSync(doomloop) ? false : `no ${doomloop} (cargo build --release -p doom-loop-cli --bin doomloop)`;
const fresh = () => mkdtempSync(join(tmpdir(), 'doomloop-state-'));
const pre = (session, id, command = 'cat missing.txt') => JSON.stringify({
  session_id: session, transcript_path: '/nonexistent', cwd: '/tmp', hook_event_name: 'PreToolUse',
  tool_name: 'Bash', tool_input: { command }, tool_use_id: id,
});
const batch = (session, ids) => JSON.stringify({
  session_id: session, hook_event_name: 'PostToolBatch',
  tool_calls: ids.map((id) => ({ tool_name: 'Bash', tool_input: { command: 'cat missing.txt' }, tool_use_id: id, tool_response: 'Exit code 1\ncat: missing.txt: No such file or directory' })),
});
function hook(dir, input, agent = 'claude-code', args = []) {
  const r = spawnSync(doomloop, ['hook', agent, '--state-dir', dir, ...args], { input, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return r;
}
const warnings = (r) => r.stderr.split('\n').filter(Boolean);

test('bad input allows the call with one line on stderr, exit 0', { skip }, () => {
  const dir = fresh();
  for (const [input, why] of [
    ['not json', /not JSON/],
    [Buffer.from([0xff, 0xfe, 0x00]), /not UTF-8/],
    ['[1,2]', /not a JSON object/],
    ['{"hook_event_name":"PreToolUse","tool_name":"Bash"}', /session_id/],
    ['{"session_id":"s","tool_name":"Bash"}', /hook_event_name/],
    [(agent) => `{"session_id":"s","hook_event_name":"${agent === 'gemini-cli' ? 'BeforeTool' : 'PreToolUse'}"}`, /tool_name/],
    ['{"session_id":"s","hook_event_name":"SomethingNew"}', /SomethingNew event/],
    ['', /not JSON/],
  ]) {
    for (const agent of ['claude-code', 'gemini-cli', 'codex']) {
      const r = hook(dir, typeof input === 'function' ? input(agent) : input, agent);
      assert.equal(r.stdout, agent === 'gemini-cli' ? '{}\n' : '', `${agent} ${input}`);
      assert.equal(warnings(r).length, 1, r.stderr);
      assert.match(r.stderr, why);
    }
  }
  // A bad command line is not exit 2 (which every agent reads as "block").
  const r = spawnSync(doomloop, ['hook', 'claude-code', '--no-such-flag'], { input: pre('s', 't'), encoding: 'utf8' });
  assert.equal(r.status, 0);
  assert.equal(r.stdout, '');
  assert.match(r.stderr, /allowing the call/);
  // A bad --option falls back to the default with one line.
  const bad = hook(dir, pre('opt', 't1'), 'claude-code', ['--option', '{nope']);
  assert.match(bad.stderr, /--option is not valid JSON/);
});

test('a corrupt or old state file starts that session over, and no other session loses its state', { skip }, () => {
  const dir = fresh();
  hook(dir, pre('keep', 'k1'));
  const other = join(dir, 'claude-code-keep.json');
  const before = readFileSync(other, 'utf8');
  for (const text of ['{"doomloopHook":1,"agent":"claude-code","base":', '{"doomloopHook":0,"state":{}}', '"just a string"', '{"doomloopHook":1,"agent":"gemini-cli"}']) {
    writeFileSync(join(dir, 'claude-code-bad.json'), text);
    const r = hook(dir, pre('bad', 'b1'));
    assert.equal(r.stdout, '');
    assert.equal(warnings(r).length, 1, r.stderr);
    assert.match(r.stderr, /starting this session's detection over/);
    const state = JSON.parse(readFileSync(join(dir, 'claude-code-bad.json'), 'utf8'));
    assert.equal(state.doomloopHook, 1);
    assert.equal(hook(dir, pre('bad', 'b2')).stderr, '');
  }
  assert.equal(readFileSync(other, 'utf8'), before);
});

test('a lock left by a dead process is taken over at once; a live holder is waited for, then the call allowed', { skip }, () => {
  const dir = fresh();
  hook(dir, pre('s', 't0'));
  const dead = spawnSync('true').pid;
  writeFileSync(join(dir, 'claude-code-s.json.lock'), String(dead));
  let t = Date.now();
  assert.equal(hook(dir, pre('s', 't1')).stderr, '');
  assert.ok(Date.now() - t < 1000, `took ${Date.now() - t} ms`);
  assert.ok(!existsSync(join(dir, 'claude-code-s.json.lock')));
  writeFileSync(join(dir, 'claude-code-s.json.lock'), String(process.pid));
  t = Date.now();
  const r = hook(dir, pre('s', 't2'));
  assert.match(r.stderr, /held by another process; allowing the call/);
  assert.ok(Date.now() - t >= 2500);
});

test('a hook process killed mid-write leaves a state file that still loads', { skip }, async () => {
  const dir = fresh();
  const session = 'killed';
  const file = join(dir, `claude-code-${session}.json`);
  let killed = 0;
  for (let i = 0; i < 60; i++) {
    const child = spawn(doomloop, ['hook', 'claude-code', '--state-dir', dir], { stdio: ['pipe', 'ignore', 'ignore'] });
    const closed = new Promise((r) => child.on('close', r));
    child.stdin.on('error', () => {});
    child.stdin.end(i % 2 ? batch(session, [`c${i - 1}`]) : pre(session, `c${i}`));
    // Kill it somewhere between start and exit (the write is in there).
    await new Promise((r) => setTimeout(r, (i * 7) % 5));
    if (child.exitCode === null && child.kill('SIGKILL')) killed++;
    await closed;
    if (existsSync(file)) assert.equal(JSON.parse(readFileSync(file, 'utf8')).doomloopHook, 1, `after kill ${i}`);
  }
  assert.ok(killed > 0);
  // The next invocation loads it: no warning, no wait on the dead holders' locks.
  const t = Date.now();
  const r = hook(dir, pre(session, 'after'));
  assert.equal(r.stderr, '');
  assert.ok(Date.now() - t < 1500, `took ${Date.now() - t} ms`);
  assert.deepEqual(readdirSync(dir).filter((f) => f.endsWith('.lock')), []);
});

test('parallel hook processes of one message lose no call', { skip }, async () => {
  const dir = fresh();
  const ids = Array.from({ length: 8 }, (_, i) => `p${i}`);
  // As installed (UserPromptSubmit beside PostToolBatch): one round, not inferred ones.
  hook(dir, JSON.stringify({ session_id: 'par', hook_event_name: 'UserPromptSubmit', prompt: 'go' }));
  await Promise.all(ids.map((id) => new Promise((resolve) => {
    const child = spawn(doomloop, ['hook', 'claude-code', '--state-dir', dir], { stdio: ['pipe', 'ignore', 'inherit'] });
    child.stdin.end(pre('par', id, `echo ${id}`));
    child.on('close', resolve);
  })));
  const state = JSON.parse(readFileSync(join(dir, 'claude-code-par.json'), 'utf8'));
  assert.deepEqual(state.round.calls.map((c) => c.id).sort(), ids);
});

test('hook install merges into existing settings, keeps other hooks, and is idempotent', { skip }, () => {
  const home = fresh();
  mkdirSync(join(home, '.claude'));
  const mine = { type: 'command', command: '/usr/local/bin/my-audit-hook' };
  writeFileSync(join(home, '.claude/settings.json'), JSON.stringify({
    model: 'opus', hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [mine] }], Stop: [{ hooks: [mine] }] },
  }));
  const install = (...args) => spawnSync(doomloop, ['hook', 'install', 'claude-code', ...args], { env: { ...process.env, HOME: home }, encoding: 'utf8' });
  const printed = install('--print');
  assert.equal(printed.status, 0, printed.stderr);
  assert.equal(JSON.parse(readFileSync(join(home, '.claude/settings.json'), 'utf8')).hooks.PostToolBatch, undefined, '--print writes nothing');
  for (let i = 0; i < 2; i++) assert.equal(install().status, 0);
  const settings = JSON.parse(readFileSync(join(home, '.claude/settings.json'), 'utf8'));
  assert.deepEqual(settings, JSON.parse(printed.stdout));
  assert.equal(settings.model, 'opus');
  assert.deepEqual(settings.hooks.Stop, [{ hooks: [mine] }]);
  assert.equal(settings.hooks.PreToolUse.length, 2);
  assert.deepEqual(settings.hooks.PreToolUse[0], { matcher: 'Bash', hooks: [mine] });
  assert.match(settings.hooks.PreToolUse[1].hooks[0].command, /doomloop hook claude-code$/);
  for (const ev of ['PostToolUseFailure', 'PostToolBatch', 'UserPromptSubmit']) assert.equal(settings.hooks[ev].length, 1, ev);
  // Gemini CLI: a project's settings file, created.
  const project = fresh();
  // The option goes in the config file now, never into the command line.
  const withOption = spawnSync(doomloop, ['hook', 'install', 'gemini-cli', '--project', '--option', '{"outcomes":true}'], { cwd: project, encoding: 'utf8' });
  assert.equal(withOption.status, 2);
  assert.match(withOption.stderr, /no longer writes --option .*config\.toml/);
  assert.ok(!existsSync(join(project, '.gemini')));
  const g = spawnSync(doomloop, ['hook', 'install', 'gemini-cli', '--project'], { cwd: project, encoding: 'utf8' });
  assert.equal(g.status, 0, g.stderr);
  assert.match(g.stdout, /settings .* go in .*config\.toml/);
  const gs = JSON.parse(readFileSync(join(project, '.gemini/settings.json'), 'utf8'));
  assert.deepEqual(Object.keys(gs.hooks), ['BeforeTool', 'AfterTool', 'BeforeModel', 'BeforeAgent']);
  assert.match(gs.hooks.BeforeTool[0].hooks[0].command, /doomloop hook gemini-cli$/);
  // Settings that are not JSON are left alone.
  writeFileSync(join(home, '.claude/settings.json'), '{ not json');
  const r = install();
  assert.equal(r.status, 2);
  assert.match(r.stderr, /not JSON/);
  assert.equal(readFileSync(join(home, '.claude/settings.json'), 'utf8'), '{ not json');
});

test('with no --option the hook runs RECOMMENDED_DOOM_LOOP_OPTION: a loop on unchanged output is refused at the third call and halted at its stop rung', { skip }, async () => {
  const { RECOMMENDED_DOOM_LOOP_OPTION } = await import('../../pkg/node.mjs');
  const stopAt = RECOMMENDED_DOOM_LOOP_OPTION.ladder?.stop ?? 6;
  const dir = fresh();
  const answers = [];
  for (let call = 1; call <= stopAt; call++) {
    const id = `c${call}`;
    const r = hook(dir, pre('loop', id));
    answers.push(r.stdout === '' ? 'allow' : JSON.parse(r.stdout).continue === false ? 'stop' : 'deny');
    hook(dir, batch('loop', [id]));
  }
  assert.deepEqual(answers.slice(0, 3), ['allow', 'allow', 'deny']);
  assert.deepEqual(answers.slice(3, -1), Array(stopAt - 4).fill('deny'));
  assert.equal(answers.at(-1), 'stop', answers.join(' '));
});
