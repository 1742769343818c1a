// `doomloop hook codex` in front of the real Codex CLI (the pinned
// @openai/codex, `codex exec`), its real shell tool (`exec_command`, which
// Codex's hooks see as `Bash`) and free-form `apply_patch` in a scratch directory, the model scripted by
// a local Responses API server. Plus `doomloop hook install codex` merging
// a user's hooks.json (no agent needed).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCodex, codexBin, doomloop, editAndRetestScript, failing, parallelThenRepeatScript, failsUntilFour, runs, stateFiles, why } from './agents.mjs';
import { developerTexts, issuedOutputs as answers } from './openai-server.mjs';

const noDoomloop = existsSync(doomloop) ? false : `no ${doomloop} (cargo build --release -p doom-loop-cli --bin doomloop)`;
const skip = !existsSync(codexBin) ? `no ${codexBin} (npm ci)` : noDoomloop;
const shell = (cmd) => ({ name: 'exec_command', args: { cmd } });
const BLOCKED = 'Command blocked by PreToolUse hook: ';
const REFUSED = /^Command blocked by PreToolUse hook: Doom loop suspected: tool "Bash" was invoked in (\d+) consecutive rounds/;
const lastMessage = (run) => run.events.filter((e) => e.type === 'item.completed' && e.item?.type === 'agent_message').at(-1)?.item.text;

describe('Codex CLI', { concurrency: 3, timeout: 120_000 }, () => {
  test('under the reference ladder (--option true) an identical failing command re-issued every turn is refused at the third call and stopped at the sixth: no call of it runs again', { skip }, async () => {
    const turns = 8;
    const run = await runCodex((body, turn) => (turn < turns ? { calls: [shell('sh fail.sh')] } : 'giving up'), { files: failing, hookArgs: ['--option', 'true'] });
    assert.equal(run.code, 0, why(run));
    const seen = answers(run).map((r) => r[0]);
    assert.equal(seen.length, turns, why(run));
    assert.match(seen[0], /No such file or directory/, why(run));
    assert.match(seen[1], /No such file or directory/);
    for (const [i, streak] of [[2, '3'], [3, '4'], [4, '5']]) {
      assert.equal(seen[i].match(REFUSED)?.[1], streak, `call ${i + 1}: ${seen[i]}`);
    }
    // The sixth call reaches the stop: it and every later call are refused
    // with the stop verdict (Codex 0.169's hooks cannot end a turn).
    const [file] = stateFiles(run.dirs);
    assert.match(file.state.halted, /invoked in 6 consecutive rounds/);
    for (const text of seen.slice(5)) {
      assert.ok(text.startsWith(BLOCKED) && text.includes(file.state.halted.replace(/\.$/, '')), text);
    }
    assert.equal(runs(run.dirs), 2, 'the command ran at the first two calls only');
    assert.equal(lastMessage(run), 'giving up');
  });

  test('paging through a file with the same command completes (the outcome changes every page)', { skip }, async () => {
    const pages = 6;
    const files = {
      'next-page.sh': '#!/bin/sh\nn=$(cat .page 2>/dev/null || echo 0); n=$((n+1)); echo $n > .page\nsed -n "$((n*3-2)),$((n*3))p" book.txt\n',
      'book.txt': Array.from({ length: pages * 3 }, (_, i) => `line ${i + 1} of the book`).join('\n') + '\n',
    };
    const run = await runCodex((body, turn) => (turn < pages ? { calls: [shell('sh next-page.sh')] } : 'read it all'), { files });
    assert.equal(run.code, 0, why(run));
    assert.equal(run.requests.length, pages + 1, why(run));
    answers(run).forEach(([text], i) => assert.match(text, new RegExp(`line ${i * 3 + 1} of the book`), `page ${i + 1}: ${text}`));
    assert.equal(lastMessage(run), 'read it all');
  });

  test('editing and re-running a failing test until it passes completes', { skip }, async () => {
    const files = {
      'value.txt': '1\n',
      'test.sh': '#!/bin/sh\nv=$(cat value.txt)\nif [ "$v" = 4 ]; then echo "ok: 1 passed"; else echo "FAIL: expected 4, got $v"; exit 1; fi\n',
    };
    const run = await runCodex((body, turn) => {
      if (turn >= 7) return 'the test passes';
      if (turn % 2 === 0) return { calls: [shell('sh test.sh')] };
      const from = (turn + 1) / 2;
      return { calls: [shell(`sed -i 's/^${from}$/${from + 1}/' value.txt`)] };
    }, { files });
    assert.equal(run.code, 0, why(run));
    const texts = answers(run).flat();
    assert.ok(!texts.some((t) => t.startsWith(BLOCKED)), texts.join('\n'));
    assert.match(texts.at(-1), /ok: 1 passed/, texts.join('\n'));
    assert.equal(run.requests.length, 8);
    assert.equal(lastMessage(run), 'the test passes');
  });

  // The test fails the same way until value.txt holds 4; `edit(from)`
  // changes it from `from` to `from + 1` before each re-run.
  const editAndRetest = (edit, hookArgs = []) => runCodex(editAndRetestScript(shell('sh test.sh'), edit), {
    files: failsUntilFour,
    // 0.169's bundled catalog gives gpt-5.5 the free-form apply_patch tool.
    model: 'gpt-5.5',
    hookArgs,
  });
  const patch = (from) => ({ name: 'apply_patch', input: `*** Begin Patch\n*** Update File: value.txt\n@@\n-${from}\n+${from + 1}\n*** End Patch\n` });

  test('an apply_patch edit before each identically failing test run is progress under the default option: the session completes', { skip }, async () => {
    const run = await editAndRetest(patch);
    assert.equal(run.code, 0, why(run));
    const texts = answers(run).flat();
    assert.ok(!texts.some((t) => t.startsWith(BLOCKED)), texts.join('\n'));
    assert.deepEqual(texts.filter((t) => /FAIL: expected 4/.test(t)).length, 3, texts.join('\n'));
    assert.match(texts.at(-1), /ok: 1 passed/, texts.join('\n'));
    assert.equal(lastMessage(run), 'the test passes');
    // What the hook saw: Codex sends the free-form call to its hooks as
    // `apply_patch` (the patch text as `command`), the declared write: the
    // session counted three writes, each a new one.
    const [file] = stateFiles(run.dirs);
    const effects = file?.state.base?.beyond?.effects;
    assert.equal(effects?.writes, 3, JSON.stringify(file?.state));
    assert.equal(effects.seen.apply_patch.length, 3, JSON.stringify(effects));
  });

  test('without the effects detector (the default option less effects) the same session is refused at its third test run', { skip }, async () => {
    const option = { outcomes: true, novelty: true, repetition: true, ladder: { stop: 12 } };
    const run = await editAndRetest(patch, ['--option', `'${JSON.stringify(option)}'`]);
    assert.equal(run.code, 0, why(run));
    const tests = answers(run).flat().filter((t) => !/Updated the following files/.test(t));
    assert.match(tests[1], /FAIL: expected 4/, tests.join('\n'));
    assert.equal(tests[2].match(REFUSED)?.[1], '3', tests.join('\n'));
  });

  test('two parallel identical calls in one response count once', { skip }, async () => {
    const run = await runCodex(parallelThenRepeatScript(shell('sh fail.sh')), { files: failing, hookArgs: ['--option', 'true'] });
    assert.equal(run.code, 0, why(run));
    const seen = answers(run);
    assert.equal(seen[0].length, 2, why(run));
    for (const text of seen[0]) assert.match(text, /No such file or directory/);
    assert.match(seen[1][0], /No such file or directory/);
    assert.equal(seen[2][0].match(REFUSED)?.[1], '3', seen[2][0]);
    assert.equal(runs(run.dirs), 3);
  });

  test('steer: from the second identical call on, the guidance reaches the model once per round, as the developer message Codex makes of additionalContext', { skip }, async () => {
    const run = await runCodex((body, turn) => (turn < 4 ? { calls: [shell('sh fail.sh')] } : 'done'), {
      files: failing,
      hookArgs: ['--option', `'${JSON.stringify({ ladder: { observe: false, steer: 2, block: false, stop: false } })}'`],
    });
    assert.equal(run.code, 0, why(run));
    // Each request carries the whole history: count what each round added.
    const guided = run.requests.map((body) => developerTexts(body).filter((t) => /Doom loop suspected/.test(t)).length);
    const added = guided.map((n, i) => n - (guided[i - 1] ?? 0));
    assert.deepEqual(added, [0, 0, 1, 1, 1], `guidance per request: ${JSON.stringify(developerTexts(run.requests.at(-1)))}`);
    assert.equal(runs(run.dirs), 4, 'steer refuses nothing');
  });
});

test('install codex: merges ~/.codex/hooks.json (CODEX_HOME) or .codex/hooks.json, keeps the user\'s hooks, is idempotent', { skip: noDoomloop }, () => {
  const base = mkdtempSync(join(tmpdir(), 'doomloop-codex-install-'));
  const codexHome = join(base, 'codex-home');
  mkdirSync(codexHome);
  const mine = { matcher: '^Bash$', hooks: [{ type: 'command', command: 'my-audit.sh', timeout: 5 }] };
  writeFileSync(join(codexHome, 'hooks.json'), JSON.stringify({ hooks: { PreToolUse: [mine], Stop: [{ hooks: [{ type: 'command', command: 'notify.sh' }] }] }, note: 'kept' }));
  const install = (args, cwd = base) => spawnSync(doomloop, ['hook', 'install', 'codex', ...args], { cwd, env: { ...process.env, HOME: base, CODEX_HOME: codexHome }, encoding: 'utf8' });
  const first = install(['--user']);
  assert.equal(first.status, 0, first.stderr);
  assert.match(first.stdout, /hooks\.json: runs `.*doomloop hook codex`/);
  assert.match(first.stdout, /review/);
  const once = readFileSync(join(codexHome, 'hooks.json'), 'utf8');
  const again = install(['--user']);
  assert.equal(again.status, 0, again.stderr);
  assert.equal(readFileSync(join(codexHome, 'hooks.json'), 'utf8'), once, 'a second install changes nothing');
  const hooks = JSON.parse(once);
  assert.equal(hooks.note, 'kept');
  assert.deepEqual(hooks.hooks.PreToolUse[0], mine);
  assert.equal(hooks.hooks.Stop[0].hooks[0].command, 'notify.sh');
  for (const event of ['PreToolUse', 'PostToolUse', 'PreModelRequest', 'UserPromptSubmit']) {
    const ours = hooks.hooks[event].filter((e) => /doomloop hook codex/.test(e.hooks[0].command));
    assert.equal(ours.length, 1, event);
    assert.equal(ours[0].matcher, event.endsWith('ToolUse') ? '*' : undefined, event);
  }
  // --project writes the current directory's .codex/hooks.json; --print only prints.
  const project = join(base, 'project');
  mkdirSync(project);
  const printed = install(['--project', '--print', '--state-dir', '/var/doomloop'], project);
  assert.equal(printed.status, 0, printed.stderr);
  assert.match(JSON.parse(printed.stdout).hooks.PreToolUse[0].hooks[0].command, /doomloop hook codex --state-dir \/var\/doomloop$/);
  assert.ok(!existsSync(join(project, '.codex')));
  assert.equal(install(['--project'], project).status, 0);
  assert.ok(existsSync(join(project, '.codex', 'hooks.json')));
});
