// `doomloop hook gemini-cli` in front of the real Gemini CLI (the pinned
// @google/gemini-cli, `gemini -p`), its real run_shell_command/read_file/
// replace tools in a scratch directory, the model scripted by a local
// Gemini API server.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { runGemini, geminiJs, doomloop, stateFiles } from './agents.mjs';
import { lastFunctionResponses } from './gemini-server.mjs';

const skip = !existsSync(geminiJs) ? `no ${geminiJs} (npm ci)` : !existsSync(doomloop) ? `no ${doomloop} (cargo build --release -p doom-loop-cli --bin doomloop)` : false;
const shell = (command) => ({ name: 'run_shell_command', args: { command } });
const REFUSED = /^Tool execution blocked: Doom loop suspected: tool "run_shell_command" was invoked in (\d+) consecutive rounds/;

/** The text a function response carries (Gemini CLI: `output`, or `error`). */
/** Runs `sh test.sh`, then raises value.txt by one with `replace` before each re-run, until turn `done`. */
const raiseAndRetest = (done) => (body, turn, dirs) => {
  if (turn >= done) return 'the test passes';
  if (turn % 2 === 0) return { calls: [shell('sh test.sh')] };
  const from = (turn + 1) / 2;
  return { calls: [{ name: 'replace', args: { file_path: `${dirs.scratch}/value.txt`, old_string: String(from), new_string: String(from + 1), instruction: 'raise the value by one' } }] };
};
const textOf = (r) => {
  const resp = r?.response ?? {};
  return typeof resp.output === 'string' ? resp.output : typeof resp.error === 'string' ? resp.error : JSON.stringify(resp);
};
/** Per model request: what the tools answered to the previous response. */
const answers = (run) => run.requests.map(lastFunctionResponses);

describe('Gemini CLI', { concurrency: 3 }, () => {
  test('under the reference ladder (--option true) an identical failing command re-issued every turn is refused at the third call and the session ends at the sixth', { skip }, async () => {
    const run = await runGemini(() => ({ calls: [shell('cat missing.txt')] }), { hookArgs: ['--option', 'true'] });
    const seen = answers(run).slice(1).map((r) => textOf(r[0]));
    assert.match(seen[0], /No such file or directory/, run.stderr);
    assert.match(seen[1], /No such file or directory/);
    for (const [i, streak] of [[2, '3'], [3, '4'], [4, '5']]) {
      assert.equal(seen[i].match(REFUSED)?.[1], streak, `call ${i + 1}: ${seen[i]}`);
    }
    // The sixth call halts the session: no seventh model request.
    assert.equal(run.requests.length, 6, seen.join('\n'));
    const [file] = stateFiles(run.dirs);
    assert.match(file.state.halted, /invoked in 6 consecutive rounds/);
  });

  test('paging through a file with the same command completes (the outcome changes every page)', { skip }, async () => {
    const pages = 6;
    const files = {
      'next-page.sh': '#!/bin/sh\nn=$(cat .page 2>/dev/null || echo 0); n=$((n+1)); echo $n > .page\nsed -n "$((n*3-2)),$((n*3))p" book.txt\n',
      'book.txt': Array.from({ length: pages * 3 }, (_, i) => `line ${i + 1} of the book`).join('\n') + '\n',
    };
    const run = await runGemini((body, turn) => (turn < pages ? { calls: [shell('sh next-page.sh')] } : 'read it all'), { files });
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.requests.length, pages + 1);
    const seen = answers(run).slice(1).map((r) => textOf(r[0]));
    seen.forEach((text, i) => assert.match(text, new RegExp(`line ${i * 3 + 1} of the book`), `page ${i + 1}: ${text}`));
    assert.equal(run.result?.response, 'read it all');
  });

  test('editing and re-running a failing test until it passes completes', { skip }, async () => {
    const files = {
      'value.txt': '1\n',
      'test.sh': '#!/bin/sh\nv=$(cat value.txt)\nif [ "$v" = 4 ]; then echo "ok: 1 passed"; else echo "FAIL: expected 4, got $v"; exit 1; fi\n',
    };
    const run = await runGemini(raiseAndRetest(7), { files });
    assert.equal(run.code, 0, run.stderr);
    const texts = answers(run).flat().map(textOf);
    assert.ok(!texts.some((t) => REFUSED.test(t)), texts.join('\n'));
    assert.ok(texts.some((t) => t.includes('ok: 1 passed')), texts.join('\n'));
    assert.equal(run.requests.length, 8);
  });

  test('a test failing the same way twice with a replace between each run completes (the edits are writes)', { skip }, async () => {
    const files = {
      'value.txt': '1\n',
      'test.sh': '#!/bin/sh\nif [ "$(cat value.txt)" = 3 ]; then echo "ok: 1 passed"; else echo "FAIL: the value is too small"; exit 1; fi\n',
    };
    const run = await runGemini(raiseAndRetest(5), { files });
    assert.equal(run.code, 0, run.stderr);
    const texts = answers(run).flat().map(textOf);
    assert.equal(texts.filter((t) => t.includes('FAIL: the value is too small')).length, 2, texts.join('\n'));
    assert.ok(!texts.some((t) => REFUSED.test(t)), texts.join('\n'));
    assert.ok(texts.some((t) => t.includes('ok: 1 passed')), texts.join('\n'));
    assert.equal(run.requests.length, 6);
  });

  test('two parallel identical calls in one response count once', { skip }, async () => {
    const run = await runGemini((body, turn) => {
      if (turn === 0) return { calls: [shell('cat missing.txt'), shell('cat missing.txt')] };
      return { calls: [shell('cat missing.txt')] };
    });
    const seen = answers(run).slice(1);
    assert.equal(seen[0].length, 2);
    for (const r of seen[0]) assert.match(textOf(r), /No such file or directory/);
    assert.match(textOf(seen[1][0]), /No such file or directory/);
    assert.equal(textOf(seen[2][0]).match(REFUSED)?.[1], '3', textOf(seen[2][0]));
  });
});
