// `doomloop hook claude-code` in front of the real Claude Code CLI (the
// pinned @anthropic-ai/claude-code, `claude -p`), its real Bash/Read/Edit
// tools in a scratch directory, the model scripted by a local server.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { runClaude, claudeBin, doomloop, stateFiles, writeHooks } from './agents.mjs';
import { lastToolResults } from './anthropic-server.mjs';

const skip = !existsSync(claudeBin) ? `no ${claudeBin} (npm ci)` : !existsSync(doomloop) ? `no ${doomloop} (cargo build --release -p doom-loop-cli --bin doomloop)` : false;
const bash = (command) => ({ name: 'Bash', input: { command, description: 'run it' } });
const REFUSED = /^PreToolUse:Bash hook error: Doom loop suspected: tool "Bash" was invoked in (\d+) consecutive rounds/;

/** Per model request: what the tools answered to the previous response. */
const answers = (run) => run.requests.map(lastToolResults);

/** Read value.txt, then: run the test, edit the value one up, … until the test passes. */
function editAndRetest(body, turn, dirs) {
  const file = `${dirs.scratch}/value.txt`;
  if (turn === 0) return { calls: [{ name: 'Read', input: { file_path: file } }] };
  if (turn >= 8) return 'the test passes';
  if (turn % 2 === 1) return { calls: [bash('sh test.sh')] };
  const from = turn / 2;
  return { calls: [{ name: 'Edit', input: { file_path: file, old_string: String(from), new_string: String(from + 1) } }] };
}
const testFiles = {
  'value.txt': '1\n',
  'test.sh': '#!/bin/sh\nv=$(cat value.txt)\nif [ "$v" = 4 ]; then echo "ok: 1 passed"; else echo "FAIL: expected 4, got $v"; exit 1; fi\n',
};

/** The loop of one identical failing call per response under the reference ladder: runs twice, refused at the 3rd to 5th, the 6th ends the session. */
function refusedAtTheThirdStoppedAtTheSixth(run) {
  assert.equal(run.code, 0, run.stderr);
  // Six responses, each one call; the sixth halts the session: no seventh request.
  assert.equal(run.requests.length, 6);
  const seen = answers(run).slice(1).map((results) => results[0]?.text ?? '');
  assert.match(seen[0], /No such file or directory/);
  assert.match(seen[1], /No such file or directory/);
  for (const [i, streak] of [[2, '3'], [3, '4'], [4, '5']]) {
    assert.equal(seen[i].match(REFUSED)?.[1], streak, `call ${i + 1}: ${seen[i]}`);
  }
  assert.equal(run.result?.terminal_reason, 'hook_stopped', run.stdout);
}

describe('Claude Code', { concurrency: 3 }, () => {
  test('under the reference ladder (--option true) an identical failing command re-issued every turn is refused at the third call and the session ends at the sixth', { skip }, async () => {
    const run = await runClaude(() => ({ calls: [bash('cat missing.txt')] }), { hookArgs: ['--option', 'true'] });
    refusedAtTheThirdStoppedAtTheSixth(run);
    const [file] = stateFiles(run.dirs);
    assert.match(file.state.halted, /invoked in 6 consecutive rounds/);
  });

  test('with hooks written by hand (PreToolUse and PostToolUse only, no PostToolBatch) the identical failing command is still refused at the third call and stopped at the sixth, the user is told once, and hook log lists it', { skip }, async () => {
    const run = await runClaude(() => ({ calls: [bash('cat missing.txt')] }), {
      stream: true,
      setup: (dirs) => ({ args: ['--settings', writeHooks(dirs, ['PreToolUse', 'PostToolUse'], ['--option', 'true'])] }),
    });
    refusedAtTheThirdStoppedAtTheSixth(run);
    const [file] = stateFiles(run.dirs);
    assert.equal(file.state.roundEndMissing, true);
    // Claude Code shows the hook's systemMessage to the user, once.
    const told = run.events.filter((e) => e.type === 'system' && /hooks lack the PostToolBatch event.*doomloop hook install claude-code/.test(e.content ?? ''));
    assert.equal(told.length, 1, run.stdout);
    const log = spawnSync(doomloop, ['hook', 'log', '--state-dir', run.dirs.state], { encoding: 'utf8' });
    assert.equal(log.status, 0, log.stderr);
    assert.match(log.stdout, /note: this claude-code session's hooks lack the PostToolBatch event/);
    assert.deepEqual(log.stdout.match(/ (observe|block|stop) +Bash cat missing\.txt/g).map((l) => l.trim().split(/ +/)[0]), ['observe', 'block', 'block', 'block', 'stop']);
    assert.match(log.stdout, /stop +Bash cat missing\.txt\n +Doom loop suspected: tool "Bash" was invoked in 6 consecutive rounds/);
  });

  test('paging through a file with the same command completes (the outcome changes every page)', { skip }, async () => {
    const pages = 8;
    const files = {
      'next-page.sh': '#!/bin/sh\nn=$(cat .page 2>/dev/null || echo 0); n=$((n+1)); echo $n > .page\nsed -n "$((n*3-2)),$((n*3))p" book.txt\n',
      'book.txt': Array.from({ length: pages * 3 }, (_, i) => `line ${i + 1} of the book`).join('\n') + '\n',
    };
    const run = await runClaude((body, turn) => (turn < pages ? { calls: [bash('sh next-page.sh')] } : 'read it all'), { files });
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.requests.length, pages + 1);
    const seen = answers(run).slice(1).map((results) => results[0]?.text ?? '');
    seen.forEach((text, i) => assert.match(text, new RegExp(`line ${i * 3 + 1} of the book`), `page ${i + 1}`));
    assert.equal(run.result?.result, 'read it all');
  });

  test('editing and re-running a failing test until it passes completes', { skip }, async () => {
    const run = await runClaude(editAndRetest, { files: testFiles });
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.requests.length, 9);
    const texts = answers(run).flat().map((r) => r.text);
    assert.ok(!texts.some((t) => REFUSED.test(t)), texts.join('\n'));
    assert.ok(texts.some((t) => t.includes('ok: 1 passed')), texts.join('\n'));
    assert.equal(run.result?.result, 'the test passes');
  });

  test('a test failing the same way twice with an Edit between each run completes (the edits are writes)', { skip }, async () => {
    const files = {
      'value.txt': '1\n',
      'test.sh': '#!/bin/sh\nif [ "$(cat value.txt)" = 3 ]; then echo "ok: 1 passed"; else echo "FAIL: the value is too small"; exit 1; fi\n',
    };
    const run = await runClaude((body, turn, dirs) => {
      if (turn >= 5) return 'the test passes';
      if (turn % 2 === 0) return { calls: [bash('sh test.sh')] };
      const from = (turn + 1) / 2;
      return { calls: [{ name: 'Edit', input: { file_path: `${dirs.scratch}/value.txt`, old_string: String(from), new_string: String(from + 1) } }] };
    }, { files });
    assert.equal(run.code, 0, run.stderr);
    const texts = answers(run).flat().map((r) => r.text);
    assert.equal(texts.filter((t) => t.includes('FAIL: the value is too small')).length, 2, texts.join('\n'));
    assert.ok(!texts.some((t) => REFUSED.test(t)), texts.join('\n'));
    assert.ok(texts.some((t) => t.includes('ok: 1 passed')), texts.join('\n'));
    assert.equal(run.result?.result, 'the test passes');
  });

  test('under the reference defaults (--option true) the same session is refused at the third test run', { skip }, async () => {
    const run = await runClaude(editAndRetest, { files: testFiles, hookArgs: ['--option', 'true'] });
    assert.equal(run.code, 0, run.stderr);
    const texts = answers(run).flat().map((r) => r.text);
    const refused = texts.findIndex((t) => REFUSED.test(t));
    assert.ok(refused >= 0, texts.join('\n'));
    assert.match(texts[refused], /in 3 consecutive rounds/);
  });

  for (const [name, blockDelayMs] of [['together', 0], ['streamed apart (the first runs before the second arrives)', 1500]]) {
    test(`two parallel identical calls in one message count once (${name})`, { skip }, async () => {
      const run = await runClaude((body, turn) => {
        if (turn === 0) return { calls: [bash('cat missing.txt'), bash('cat missing.txt')], blockDelayMs };
        return { calls: [bash('cat missing.txt')] };
      }, { hookArgs: ['--option', 'true'] });
      assert.equal(run.code, 0, run.stderr);
      const seen = answers(run).slice(1);
      // The reference ladder (--option true), so the run ends at the sixth
      // round. Both parallel calls ran; the next round is the second, the one after it the third (refused).
      assert.equal(seen[0].length, 2);
      for (const r of seen[0]) assert.match(r.text, /No such file or directory/);
      assert.match(seen[1][0].text, /No such file or directory/);
      assert.equal(seen[2][0].text.match(REFUSED)?.[1], '3', seen[2][0].text);
      assert.equal(run.requests.length, 6);
    });
  }
});
