// The package beside other agents' loop guards on the shared real runs
// (../shared/trajectories, read at test time, never copied): the shared
// harness ../shared/trajectories/peers/bench-detectors.mjs replays every run
// through the built package (defaults, and RECOMMENDED_DOOM_LOOP_OPTION with
// each call's recorded result) and through every peer's rule, with the same
// columns for all. The package's RECOMMENDED row must keep its lead: no peer
// both interrupts fewer runs on changing output and catches more loops on
// unchanged output. Skips with a message when ../shared is absent.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const data = join(root, '..', 'shared', 'trajectories');
const bench = join(data, 'peers', 'bench-detectors.mjs');
const OURS = 'pkg-recommended+results';

test('RECOMMENDED keeps its lead over every peer on the shared runs', { timeout: 600_000 }, (t) => {
  if (!existsSync(bench)) {
    t.skip(`../shared/trajectories/peers is absent: the peer comparison is measured on it (${bench})`);
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), 'doomloop-peers-'));
  try {
    const out = join(dir, 'bench.json');
    const table = execFileSync(process.execPath, [bench, '--pkg', join(root, 'pkg', 'node.cjs'), '--data', data, '--json', out], {
      encoding: 'utf8',
      maxBuffer: 64 << 20,
    });
    t.diagnostic(table.split('\n\n')[1] ?? table);
    const report = JSON.parse(readFileSync(out, 'utf8'));
    const [group] = report.groups;
    const ours = group.summary[OURS];
    assert.ok(ours, `the bench has a ${OURS} row`);
    // Issue #17's targets, on the bench's own columns.
    assert.ok(ours.changing <= 1, `interventions on changing output: ${ours.changing} > 1`);
    assert.ok(ours.unchanged >= 30, `loops caught on unchanged output: ${ours.unchanged} < 30`);
    assert.equal(ours.haltedRes, 0, 'successful runs halted');
    const ahead = [];
    for (const [name, s] of Object.entries(group.summary)) {
      if (name.startsWith('pkg-')) continue;
      ahead.push(name);
      assert.ok(
        !(s.changing < ours.changing && s.unchanged > ours.unchanged),
        `${name} interrupts fewer runs on changing output (${s.changing} < ${ours.changing}) and catches more loops (${s.unchanged} > ${ours.unchanged})`,
      );
    }
    assert.ok(ahead.length >= 7, `peers compared: ${ahead.join(', ')}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
