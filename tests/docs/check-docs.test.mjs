// The docs checker itself: it finds every block of README.md as it is, it
// rejects the mistakes issue 10 found (fixtures/broken.md), and it accepts the
// corrected README blocks (fixtures/corrected.md). Needs `make build`.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { classify, codeBlocks, expectedOutput, kindOf, outputMatches } from './markdown.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../..');

test('every fence of README.md and js/README.md is found, with its language', () => {
  for (const file of ['README.md', 'js/README.md']) {
    const markdown = readFileSync(join(root, file), 'utf8');
    const fences = markdown.split('\n').filter((line) => /^ {0,3}```/.test(line)).length;
    const blocks = codeBlocks(markdown);
    assert.equal(blocks.length * 2, fences, `${file}: every opened fence is closed and counted`);
    assert.ok(blocks.some((b) => kindOf(b.lang) === 'js' || kindOf(b.lang) === 'ts'), `${file} has code to check`);
  }
  const readme = codeBlocks(readFileSync(join(root, 'README.md'), 'utf8'));
  assert.ok(readme.some((b) => b.lang === 'rust') && readme.some((b) => b.lang === 'sh') && readme.some((b) => b.lang === 'text'));
});

test('every block says what it is: bare fences and unknown languages fail, no-run is explicit', () => {
  const of = (info) => classify({ lang: info.split(/[\s,]/)[0].toLowerCase(), info });
  assert.deepEqual(of('js'), { kind: 'js', run: true });
  assert.deepEqual(of('ts no-run'), { kind: 'ts', run: false });
  assert.deepEqual(of('text'), { kind: 'illustration', run: false });
  assert.deepEqual(of('json'), { kind: 'json', run: false });
  assert.deepEqual(of('rust'), { kind: 'rust', run: false });
  assert.deepEqual(of('toml'), { kind: 'toml', run: false });
  assert.deepEqual(of('toml other'), { kind: 'illustration', run: false });
  assert.equal(of('').kind, 'error');
  assert.match(of('').problem, /without an info string/);
  assert.match(of('jsx').problem, /unknown code block language `jsx`/);
});

test('a block shows its output in the trailing comments of a console.log block', () => {
  assert.deepEqual(expectedOutput("console.log(1);\n// 1\n"), ['1']);
  assert.equal(expectedOutput('const a = 1;\n// a note\n'), null);
  assert.equal(expectedOutput('console.log(1);\n// shows\nconsole.log(2);'), null);
  assert.ok(outputMatches('block Doom loop suspected: this exact call', 'block   Doom loop suspected: …'));
  assert.ok(!outputMatches('observe Doom loop suspected: this exact call', 'block Doom loop suspected: …'));
});

test('the checker rejects the mistakes issue 10 found and accepts the corrected README blocks', () => {
  const run = spawnSync(
    process.execPath,
    [join(here, 'check-docs.mjs'), join(here, 'fixtures/broken.md'), join(here, 'fixtures/corrected.md')],
    { cwd: root, encoding: 'utf8' },
  );
  const out = run.stdout + run.stderr;
  assert.equal(run.status, 1, out);
  assert.match(out, /\n2 passed, 3 failed\n/, out);
  assert.match(out, /ok {3}tests\/docs\/fixtures\/corrected\.md:7 \(js/);
  assert.match(out, /ok {3}tests\/docs\/fixtures\/corrected\.md:19 \(ts/);
  assert.match(out, /FAIL tests\/docs\/fixtures\/broken\.md:7 \(js\)\n {2}tests\/docs\/fixtures\/broken\.md:7: the output shown is not what the block prints/);
  for (const mode of ['bundler', 'node16', 'nodenext']) {
    assert.match(out, new RegExp(`broken\\.md:25: error TS2304: Cannot find name 'round'\\. \\[${mode}\\]`));
    assert.match(out, new RegExp(`broken\\.md:26: error TS1108: .*\\[${mode}\\]`));
    assert.match(out, new RegExp(`broken\\.md:41: error TS2339: Property 'loopKey' does not exist .*\\[${mode}\\]`));
    assert.match(out, new RegExp(`broken\\.md:45: error TS18046: 'invoice_id' is of type 'unknown'\\. \\[${mode}\\]`));
    assert.match(out, new RegExp(`broken\\.md:48: error TS2531: Object is possibly 'null'\\. \\[${mode}\\]`));
  }
  assert.match(out, /SyntaxError: Illegal return statement/);
  assert.doesNotMatch(out, /broken\.md:(5[0-9]|6[0-9])/, 'sh and rust blocks are not checked');
});
