// `benches/js/targets.mjs` (make bench's scoreboard of issue 18): each
// target is judged from the run's own numbers, on the right side of its
// bound, and a row the run did not measure is reported as such — never met.

import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { FINGERPRINT_ROWS, RECORD_ROWS, readNative, score } from '../../benches/js/targets.mjs';

const fingerprintRow = (operation, ratio, floorMultiple) => ({
  operation,
  vsNodeCrypto: ratio,
  vsNoble: ratio,
  vsReference: ratio,
  floorMultiple,
});

function run({ ratio = 2, floor = 3, record = 20, nativeRatio = 2, gzip = 65536, coldMs = 5 } = {}) {
  const peers = {
    rows: [
      ...FINGERPRINT_ROWS.map(([name]) => fingerprintRow(name, ratio, floor)),
      ...RECORD_ROWS.map((operation) => ({ operation, vsReference: record })),
    ],
  };
  const native = { small: { package: 100, baseline: 100 * nativeRatio }, large: { package: 1e6, baseline: 1e6 * nativeRatio } };
  return score(peers, { gzip, sizeTarget: 65536, coldMs, coldTargetMs: 5 }, native);
}

test('every target at its bound is met, and one step past it is not', () => {
  const atBound = run();
  assert.ok(atBound.length >= 4 * 3 + 2 + 2 + 2 + 2, `${atBound.length} rows`);
  assert.deepEqual(atBound.filter((r) => r.met !== true), []);
  const past = run({ ratio: 1.99, floor: 3.01, record: 19.9, nativeRatio: 1.99, gzip: 65537, coldMs: 5.01 });
  assert.deepEqual(past.filter((r) => r.met !== false), []);
});

test('the floor applies to the large rows only', () => {
  const rows = run({ floor: 10 });
  const floorRows = rows.filter((r) => r.target.includes('the floor'));
  assert.deepEqual(
    floorRows.map((r) => [r.target.split(':')[0], r.met]),
    [
      ['1.4 MB, 20k rows × 4 fields', false],
      ['1 MB string argument', false],
    ],
  );
});

test('a row the run did not measure is reported, not met', () => {
  const rows = score({ rows: [] }, undefined, {});
  assert.ok(rows.length > 0);
  for (const r of rows) assert.deepEqual([r.measured, r.met], ['not measured', null], r.target);
});

test("Criterion's medians are read from its estimates, and a group that did not run is left out", () => {
  const dir = mkdtempSync(join(tmpdir(), 'doomloop-criterion-'));
  try {
    for (const [name, ns] of [
      ['doom_loop', 500],
      ['serde_jcs_sha2', 2000],
    ]) {
      mkdirSync(join(dir, 'serde_json_value_small', name, 'new'), { recursive: true });
      writeFileSync(join(dir, 'serde_json_value_small', name, 'new', 'estimates.json'), JSON.stringify({ median: { point_estimate: ns } }));
    }
    assert.deepEqual(readNative(dir), { small: { package: 500, baseline: 2000 } });
    const native = score(undefined, undefined, readNative(dir)).filter((r) => r.target.startsWith('native'));
    assert.deepEqual(
      native.map((r) => r.met),
      [true, null],
    );
    assert.match(native[0].measured, /^4\.00×/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
