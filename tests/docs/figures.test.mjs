// The README's figures are generated, not drawn: each committed
// docs/assets/<name>.svg is exactly what scripts/render-figures.mjs renders
// from the committed docs/assets/<name>.json, and rendering is deterministic.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { check, qualityData, renderBench, renderQuality } from '../../scripts/render-figures.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const assets = join(root, 'docs/assets');

test('every committed figure matches its committed data', () => {
  for (const name of ['bench', 'quality']) {
    assert.ok(existsSync(join(assets, `${name}.json`)) && existsSync(join(assets, `${name}.svg`)), `docs/assets/${name}.{json,svg}`);
  }
  assert.deepEqual(check(assets), [], 'run `node scripts/render-figures.mjs --rerender` after changing the script, or regenerate from a measurement');
});

test('the README embeds the figures and says how to regenerate them', () => {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  for (const name of ['bench', 'quality']) {
    assert.match(readme, new RegExp(`docs/assets/${name}\\.svg`));
    assert.match(readme, new RegExp(`node scripts/render-figures\\.mjs ${name} `));
  }
});

test('rendering is a function of the data: same data, same bytes; other data, other bytes', () => {
  const bench = JSON.parse(readFileSync(join(assets, 'bench.json'), 'utf8'));
  assert.equal(renderBench(bench), renderBench(structuredClone(bench)));
  const slower = structuredClone(bench);
  slower.rows[0].ratio = 0.5;
  assert.notEqual(renderBench(slower), renderBench(bench));
  assert.match(renderBench(slower), /class="slower"/);
  const report = {
    options: [
      { label: 'defaults', sources: { a: {} }, total: { runs: 3, resolved: 1, blocked: 2, stopped: 1, firstIntervention: { unchanged: 1, changing: 1 }, firstInterventionResolved: { unchanged: 0, changing: 1 } } },
    ],
  };
  const data = qualityData(report, 'doomloop eval --compare --json DIR');
  assert.equal(data.rows[0].label, 'reference defaults (doomLoop: true)');
  assert.match(renderQuality(data), /1 \(1 successful\)/);
  for (const svg of [renderBench(bench), renderQuality(data)]) {
    assert.doesNotMatch(svg, /https?:\/\/(?!www\.w3\.org\/2000\/svg)/, 'no external resource');
    assert.match(svg, /prefers-color-scheme: dark/);
  }
});
