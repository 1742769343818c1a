// `benches/js/targets.mjs` (make bench's scoreboard of issue 18): each
// target is judged from the run's own numbers, on the right side of its
// bound, and a row the run did not measure is reported as such — never met.

import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { FINGERPRINT_ROWS, RECORD_ROWS, obstacle, readNative, score } from '../../benches/js/targets.mjs';

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

test('a missed target names the work in its way, out of reach only when that work alone exceeds what the target allows', () => {
  const us = (x) => `${x} µs`;
  assert.deepEqual(obstacle(4, [['a', 1], ['b', 3.5]], us), { text: 'a 1 µs + b 3.5 µs = 4.5 µs, more than the 4 µs it allows: out of reach', bounded: true });
  assert.equal(obstacle(4, [['a', 1], ['b', 3]], us).bounded, false, 'exactly the allowance is not out of reach');
  assert.equal(obstacle(4, [['a', 1]], us).text, 'a 1 µs of the 4 µs it allows, 3 µs left for the rest');
  // With the package's own time: how much faster the rest would have to get.
  assert.equal(obstacle(4, [['a', 1]], us, 7).text, 'a 1 µs of the 4 µs it allows, 3 µs left for the rest; the rest takes 6 µs, 2.0× that');
  assert.match(obstacle(4, [['a', 3.9]], us, 7).text, /the rest takes 3\.1 µs, over 10× that$/);
  assert.deepEqual(obstacle(4, [['a', 1], ['b', undefined]], us), { text: 'not timed by this run', bounded: null });
  assert.deepEqual(obstacle(Number.NaN, [['a', 1]], us).bounded, null);
});

test("the bounds come from the row's own times: half a peer's time for 2×, a twentieth of the reference's for a record, 5 ms for a cold start", () => {
  const times = { lowering: 3000, hash: 1500, 'canonicalize+node:crypto': 8000, 'canonicalize+noble': 20000, reference: 100000, floor: 1000 };
  const peers = {
    rows: [
      { operation: 'fingerprint, 150 B object', vsNodeCrypto: 1.5, vsNoble: 2.5, vsReference: 10, times },
      { operation: 'fingerprint, 1 MB string argument', vsNodeCrypto: 3, vsNoble: 3, vsReference: 3, floorMultiple: 4, times },
      { operation: RECORD_ROWS[0], vsReference: 10, times: { lowering: 3000, hash: 500, reference: 60000 } },
      { operation: RECORD_ROWS[1], vsReference: 10, times: { lowering: 3000, hash: 500, reference: 80000 } },
    ],
  };
  const startup = { gzip: 70000, sizeTarget: 65536, coldMs: 9, coldTargetMs: 5, emptyImportMs: 4, compileMs: 1.5 };
  const rows = Object.fromEntries(score(peers, startup, {}).map((r) => [r.target, r]));
  // 150 B: 3 + 1.5 µs against 8 µs / 2 = 4 µs.
  assert.equal(rows['150 B object: ≥ 2× canonicalize + node:crypto'].bound.bounded, true);
  assert.equal(rows['150 B object: ≥ 2× canonicalize + @noble/hashes'].bound, undefined, 'a met target has no bound');
  // Within 3× the floor: 4.5 µs against 3 µs.
  assert.equal(rows['1 MB string argument: within 3× the floor'].bound.bounded, true);
  // Records: 3.5 µs against 60 / 20 = 3 µs, and against 80 / 20 = 4 µs.
  assert.equal(rows[`${RECORD_ROWS[0]}: ≥ 20× the reference`].bound.bounded, true);
  assert.equal(rows[`${RECORD_ROWS[1]}: ≥ 20× the reference`].bound.bounded, false);
  assert.match(rows[`${RECORD_ROWS[1]}: ≥ 20× the reference`].bound.text, /500 ns left for the rest$/);
  // Cold start: 4 + 1.5 ms against 5 ms.
  assert.equal(rows['cold import + first fingerprint ≤ 5 ms'].bound.bounded, true);
  assert.equal(rows['detector module ≤ 64 KiB gzipped'].bound.bounded, null);
  // A run without the bound's times says so rather than guessing.
  const bare = score({ rows: [{ operation: 'fingerprint, 150 B object', vsNodeCrypto: 1.5, vsNoble: 3, vsReference: 10 }] }, undefined, {});
  assert.deepEqual(bare[0].bound, { text: 'not timed by this run', bounded: null });
});
