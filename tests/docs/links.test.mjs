// The link checker itself (tests/docs/links.mjs): GitHub's heading slugs, and
// on fixtures/links/ exactly the links marked "broken" are reported.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { anchors, links, slug } from './links.mjs';

const here = dirname(fileURLToPath(import.meta.url));

test('headings get GitHub slugs', () => {
  assert.equal(slug('Where the two CLIs still differ (deliberately small)'), 'where-the-two-clis-still-differ-deliberately-small');
  assert.equal(slug('`RECOMMENDED_DOOM_LOOP_OPTION`'), 'recommended_doom_loop_option');
  assert.equal(slug('Outcome-aware streaks (`outcomes`)'), 'outcome-aware-streaks-outcomes');
  assert.equal(slug('Speed: 1.6 MB → 0.8× **slower**'), 'speed-16-mb--08-slower');
  assert.equal(slug('[Linked](x.md) heading'), 'linked-heading');
  assert.deepEqual([...anchors('# A\n## A\n```\n# not a heading\n```\n<a name="n"></a>\n')], ['a', 'a-1', 'n']);
});

test('links are read outside code, with their lines', () => {
  const found = links('[a](x.md)\n`[b](y.md)`\n```\n[c](z.md)\n```\n[d]: w.md\n<img src="i.svg"> <source srcset="s.svg 1x, t.svg 2x">\n');
  assert.deepEqual(found.map((l) => `${l.line}:${l.target}`), ['1:x.md', '6:w.md', '7:i.svg', '7:s.svg', '7:t.svg']);
});

test('exactly the broken links of the fixture are reported', () => {
  const run = spawnSync(process.execPath, [join(here, 'links.mjs'), join(here, 'fixtures/links')], { encoding: 'utf8' });
  assert.equal(run.status, 1, run.stdout + run.stderr);
  const broken = run.stdout.split('\n').filter((line) => line.startsWith('BROKEN '));
  assert.deepEqual(
    broken.map((line) => /page\.md:(\d+)/.exec(line)?.[1]),
    ['22', '23', '24', '25', '27', '29', '31'],
    run.stdout,
  );
  assert.match(run.stdout, /sub\/missing\.md does not exist/);
  assert.match(run.stdout, /no heading or id `not-there` in tests\/docs\/fixtures\/links\/sub\/other\.md/);
  assert.match(run.stdout, /points outside the repository/);
  assert.match(run.stdout, /\n\d+ links checked in 2 files, 7 broken\n$/);
});
