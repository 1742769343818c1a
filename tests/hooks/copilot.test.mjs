// `doomloop hook copilot` in front of the real GitHub Copilot CLI (the pinned
// @github/copilot, `copilot -p` in its offline mode), its real shell tool
// (`bash`, which its PascalCase hook payloads name `Bash`) in a scratch
// directory, the model scripted by a local Responses API server. Plus
// `doomloop hook install copilot` writing its own hooks file (no agent needed).
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCopilot, copilotBin, copilotCache, doomloop, editAndRetestScript, failing, parallelThenRepeatScript, failsUntilFour, runs, stateFiles, why } from './agents.mjs';
import { issuedOutputs as answers } from './openai-server.mjs';

const noDoomloop = existsSync(doomloop) ? false : `no ${doomloop} (cargo build --release -p doom-loop-cli --bin doomloop)`;
const skip = !existsSync(copilotBin) ? `no ${copilotBin} (npm ci)` : noDoomloop;
const shell = (command) => ({ name: 'bash', args: { command, description: 'Run the script' } });
const DENIED = 'Denied by preToolUse hook: ';
const REFUSED = /^Denied by preToolUse hook: Doom loop suspected: tool "Bash" was invoked in (\d+) consecutive rounds/;

describe('GitHub Copilot CLI', { concurrency: 3, timeout: 120_000 }, () => {
  // The binary unpacks itself on its first start (about 240 MB): once, before the runs.
  before(() => {
    if (skip) return;
    const home = mkdtempSync(join(tmpdir(), 'doomloop-copilot-unpack-'));
    spawnSync(copilotBin, ['--version'], { env: { PATH: process.env.PATH, HOME: home, XDG_CACHE_HOME: copilotCache }, stdio: 'ignore', timeout: 120_000 });
  });

  test('under the reference ladder (--option true) an identical failing command re-issued every turn is refused at the third call and the session ends at the sixth', { skip }, async () => {
    const run = await runCopilot((body, turn) => (turn < 8 ? { calls: [shell('sh fail.sh')] } : 'giving up'), { files: failing, hookArgs: ['--option', 'true'] });
    assert.equal(run.code, 0, why(run));
    const seen = answers(run).map((r) => r[0]);
    // Six model requests: the sixth call's permission request ended the session (no seventh).
    assert.equal(run.requests.length, 6, why(run));
    assert.match(seen[0], /No such file or directory/, why(run));
    assert.match(seen[1], /No such file or directory/);
    for (const [i, streak] of [[2, '3'], [3, '4'], [4, '5']]) {
      assert.equal(seen[i].match(REFUSED)?.[1], streak, `call ${i + 1}: ${seen[i]}`);
    }
    const [file] = stateFiles(run.dirs);
    assert.match(file.state.halted, /invoked in 6 consecutive rounds/);
    assert.deepEqual(file.state.asked, ['bash']);
    assert.equal(runs(run.dirs), 2, 'the command ran at the first two calls only');
    assert.ok(!run.stdout.includes('giving up'));
  });

  test('paging through a file with the same command completes (the outcome changes every page)', { skip }, async () => {
    const pages = 6;
    const files = {
      'next-page.sh': '#!/bin/sh\nn=$(cat .page 2>/dev/null || echo 0); n=$((n+1)); echo $n > .page\nsed -n "$((n*3-2)),$((n*3))p" book.txt\n',
      'book.txt': Array.from({ length: pages * 3 }, (_, i) => `line ${i + 1} of the book`).join('\n') + '\n',
    };
    const run = await runCopilot((body, turn) => (turn < pages ? { calls: [shell('sh next-page.sh')] } : 'read it all'), { files });
    assert.equal(run.code, 0, why(run));
    assert.equal(run.requests.length, pages + 1, why(run));
    answers(run).forEach(([text], i) => assert.match(text, new RegExp(`line ${i * 3 + 1} of the book`), `page ${i + 1}: ${text}`));
  });

  test('by default a repeated failure is refused at the third call although each output names a new shell', { skip }, async () => {
    const run = await runCopilot((body, turn) => (turn < 3 ? { calls: [shell('sh fail.sh')] } : 'done'), { files: failing });
    assert.equal(run.code, 0, why(run));
    const seen = answers(run).map((r) => r[0]);
    assert.match(seen[0], /<shellId: 0 completed with exit code 1>/, why(run));
    assert.match(seen[1], /<shellId: 1 completed with exit code 1>/);
    assert.equal(seen[2].match(REFUSED)?.[1], '3', seen[2]);
    assert.equal(runs(run.dirs), 2);
  });

  test('installed in the repository (.github/hooks/doom-loop.json of a folder trusted with --trust-folder), the same loop is refused at the third call', { skip }, async () => {
    const run = await runCopilot((body, turn) => (turn < 3 ? { calls: [shell('sh fail.sh')] } : 'done'), { files: failing, hookArgs: ['--option', 'true'], project: true });
    assert.equal(run.code, 0, why(run));
    assert.ok(existsSync(run.hooks));
    const seen = answers(run).map((r) => r[0]);
    assert.equal(seen[2].match(REFUSED)?.[1], '3', seen[2]);
    assert.equal(runs(run.dirs), 2);
  });

  test('an edit before each identically failing test run is progress under the default option: the session completes (Copilot\'s edit tool, which its hooks name Edit, is a declared write)', { skip }, async () => {
    const edit = (from, dirs) => ({ name: 'edit', args: { path: join(dirs.scratch, 'value.txt'), old_str: `${from}`, new_str: `${from + 1}` } });
    const run = await runCopilot(editAndRetestScript(shell('sh test.sh'), edit), { files: failsUntilFour });
    assert.equal(run.code, 0, why(run));
    const texts = answers(run).flat();
    assert.ok(!texts.some((t) => /^Denied by preToolUse hook/.test(t)), texts.join('\n'));
    assert.equal(texts.filter((t) => /FAIL: expected 4/.test(t)).length, 3, texts.join('\n'));
    assert.match(texts.at(-1), /ok: 1 passed/, texts.join('\n'));
    const [file] = stateFiles(run.dirs);
    assert.equal(file?.state.base?.beyond?.effects?.writes, 3, JSON.stringify(file?.state));
  });

  test('two parallel identical calls in one response count once', { skip }, async () => {
    const run = await runCopilot(parallelThenRepeatScript(shell('sh fail.sh')), { files: failing, hookArgs: ['--option', 'true'] });
    assert.equal(run.code, 0, why(run));
    const seen = answers(run);
    assert.equal(seen[0].length, 2, why(run));
    for (const text of seen[0]) assert.match(text, /No such file or directory/);
    assert.match(seen[1][0], /No such file or directory/);
    assert.equal(seen[2][0].match(REFUSED)?.[1], '3', seen[2][0]);
    assert.ok(seen[2][0].startsWith(DENIED));
    assert.equal(runs(run.dirs), 3);
  });
});

test('install copilot: writes ~/.copilot/hooks/doom-loop.json ($COPILOT_HOME/hooks) or .github/hooks/doom-loop.json, keeps what else the file holds, is idempotent', { skip: noDoomloop }, () => {
  const base = mkdtempSync(join(tmpdir(), 'doomloop-copilot-install-'));
  const install = (args, { cwd = base, copilotHome = '' } = {}) => spawnSync(doomloop, ['hook', 'install', 'copilot', ...args], { cwd, env: { ...process.env, HOME: base, COPILOT_HOME: copilotHome }, encoding: 'utf8' });
  const user = join(base, '.copilot', 'hooks', 'doom-loop.json');
  mkdirSync(join(base, '.copilot', 'hooks'), { recursive: true });
  const mine = { type: 'command', bash: 'my-audit.sh', timeoutSec: 5 };
  writeFileSync(user, JSON.stringify({ version: 1, hooks: { PreToolUse: [mine] }, note: 'kept' }));
  const first = install([]);
  assert.equal(first.status, 0, first.stderr);
  assert.match(first.stdout, /doom-loop\.json: runs `.*doomloop hook copilot`/);
  const once = readFileSync(user, 'utf8');
  assert.equal(install(['--user']).status, 0);
  assert.equal(readFileSync(user, 'utf8'), once, 'a second install changes nothing');
  const file = JSON.parse(once);
  assert.equal(file.version, 1);
  assert.equal(file.note, 'kept');
  assert.deepEqual(file.hooks.PreToolUse[0], mine);
  for (const event of ['PreToolUse', 'PostToolUse', 'PostToolUseFailure', 'PermissionRequest', 'UserPromptSubmit']) {
    const ours = file.hooks[event].filter((e) => /doomloop hook copilot/.test(e.bash));
    assert.equal(ours.length, 1, event);
    assert.deepEqual(Object.keys(ours[0]), ['type', 'bash'], event);
  }
  // COPILOT_HOME moves the user's directory.
  const copilotHome = join(base, 'copilot-home');
  assert.equal(install([], { copilotHome }).status, 0);
  assert.ok(existsSync(join(copilotHome, 'hooks', 'doom-loop.json')));
  // --project writes the repository's .github/hooks/doom-loop.json; --print only prints.
  const project = join(base, 'project');
  mkdirSync(project);
  const printed = install(['--project', '--print', '--state-dir', '/var/doomloop'], { cwd: project });
  assert.equal(printed.status, 0, printed.stderr);
  assert.match(JSON.parse(printed.stdout).hooks.PreToolUse[0].bash, /doomloop hook copilot --state-dir \/var\/doomloop$/);
  assert.ok(!existsSync(join(project, '.github')));
  const written = install(['--project'], { cwd: project });
  assert.equal(written.status, 0, written.stderr);
  assert.match(written.stdout, /trust/);
  assert.ok(existsSync(join(project, '.github', 'hooks', 'doom-loop.json')));
});
