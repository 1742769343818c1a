// `benches/js/targets.mjs` (make bench's scoreboard of performance goals):
// each goal is judged from the run's own numbers, on the right side of its
// bound, and a goal the run did not measure is reported as such — never met.

import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { FINGERPRINT_ROWS, FLOOR_GOAL, SESSION_ROW, obstacle, readNative, score, scoreOtherWays, slowestPeer } from '../../benches/js/targets.mjs';

const fingerprintRow = (operation, ratio, strictFloorMultiple) => ({
  operation,
  vsNodeCrypto: ratio,
  vsNoble: ratio + 1,
  vsReference: ratio + 2,
  strictFloorMultiple,
  times: { package: 1000, lowering: 400, stringify: 300, hash: 200, strictFloor: 1000 / strictFloorMultiple },
});

function run({ ratio = 1, floor = FLOOR_GOAL, session = 2, load = 1.5, gzip = 130_000, nativeRatio = 2, hookMs = 2 } = {}) {
  const peers = {
    rows: [...FINGERPRINT_ROWS.map((name) => fingerprintRow(name, ratio, floor)), { operation: SESSION_ROW, times: { package: 1000 * session, fingerprint: 800, crossing: 200 } }],
  };
  const startup = {
    gzip,
    sizeGuard: 130_000,
    loads: { require: { ms: 3 * load, compileOnlyMs: 3, ratio: load }, import: { ms: 6 * load, compileOnlyMs: 6, ratio: load } },
    sessions: { require: { ms: 4 * load, compileOnlyMs: 4, ratio: load }, import: { ms: 8 * load, compileOnlyMs: 8, ratio: load } },
  };
  const native = { small: { package: 100, baseline: 100 * nativeRatio }, large: { package: 1e6, baseline: 1e6 * nativeRatio } };
  const hook = { paths: [{ name: 'native', baseline: '/bin/true', cpuOverBaselineMs: hookMs, goalMs: 2 }, { name: 'no goal', cpuOverBaselineMs: 9 }] };
  return score(peers, startup, native, hook);
}

test('every goal at its bound is met, and one step past it is not', () => {
  const atBound = run();
  assert.equal(atBound.length, 4 * 2 + 1 + 4 + 1 + 2 + 1, atBound.map((r) => r.target).join('\n'));
  assert.deepEqual(atBound.filter((r) => r.met !== true), []);
  const past = run({ ratio: 0.99, floor: FLOOR_GOAL + 0.01, session: 2.01, load: 1.51, gzip: 130_001, nativeRatio: 1.99, hookMs: 2.01 });
  assert.deepEqual(past.filter((r) => r.met !== false), []);
});

test('the peer guard names the slowest peer, and needs all three', () => {
  assert.deepEqual(slowestPeer({ vsNodeCrypto: 1.4, vsNoble: 3, vsReference: 1.2 }), { ratio: 1.2, label: 'the reference' });
  assert.equal(slowestPeer({ vsNodeCrypto: 1.4, vsNoble: 3 }), undefined);
  const rows = run({ ratio: 1.3 });
  assert.match(rows[0].measured, /^1\.30× canonicalize \+ node:crypto$/);
});

test("the floor goal prints the parity check's share and, when missed, the work in its way", () => {
  const rows = run({ floor: 4 });
  const floor = rows.find((r) => r.target.startsWith('150 B object: within'));
  assert.equal(floor.measured, '4.00× (parity check 10 % of the time)');
  assert.equal(floor.met, false);
  // 300 + 100 + 200 ns of the 250 × 2.5 = 625 ns allowed.
  assert.equal(floor.bound.bounded, false);
  assert.match(floor.bound.text, /^JSON\.stringify 300 ns \+ the parity check 100 ns \+ one SHA-256 of the canonical text 200 ns = 600 ns of the 625 ns it allows/);
});

test('a goal the run did not measure is reported, not met; a hook path without a goal is left out', () => {
  const rows = score({ rows: [] }, undefined, {}, undefined);
  assert.ok(rows.length > 0);
  for (const r of rows) assert.deepEqual([r.measured, r.met], ['not measured', null], r.target);
  assert.equal(run().filter((r) => r.target.includes('no goal')).length, 0);
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

test('a missed goal names the work in its way, out of reach only when that work alone exceeds what the goal allows', () => {
  const us = (x) => `${x} µs`;
  assert.deepEqual(obstacle(4, [['a', 1], ['b', 3.5]], us), { text: 'a 1 µs + b 3.5 µs = 4.5 µs, more than the 4 µs it allows: out of reach', bounded: true });
  assert.equal(obstacle(4, [['a', 1], ['b', 3]], us).bounded, false, 'exactly the allowance is not out of reach');
  assert.equal(obstacle(4, [['a', 1]], us).text, 'a 1 µs of the 4 µs it allows, 3 µs left for the rest');
  assert.equal(obstacle(4, [['a', 1]], us, 7).text, 'a 1 µs of the 4 µs it allows, 3 µs left for the rest; the rest takes 6 µs, 2.0× that');
  assert.match(obstacle(4, [['a', 3.9]], us, 7).text, /the rest takes 3\.1 µs, over 10× that$/);
  assert.deepEqual(obstacle(4, [['a', 1], ['b', undefined]], us), { text: 'not timed by this run', bounded: null });
  assert.deepEqual(obstacle(Number.NaN, [['a', 1]], us).bounded, null);
});

test('the session goal is anchored on a bare fingerprint plus one wasm round trip, and a miss says what the rest takes', () => {
  const [hit] = run({ session: 1.5 }).filter((r) => r.target.startsWith('one call through the session engine'));
  assert.equal(hit.met, true);
  assert.equal(hit.measured, '1.50× (1.50 µs vs 800 ns + 200 ns)');
  const [miss] = run({ session: 3 }).filter((r) => r.target.startsWith('one call through the session engine'));
  assert.equal(miss.met, false);
  assert.equal(miss.bound.bounded, false);
  assert.equal(
    miss.bound.text,
    'the fingerprint of its arguments 800 ns + one wasm round trip with the response 200 ns = 1.00 µs of the 2.00 µs it allows, 1.00 µs left for the rest; the rest takes 2.00 µs, 2.0× that',
  );
  const unmeasured = score({ rows: [{ operation: SESSION_ROW, times: { package: 1000, fingerprint: 800 } }] }, undefined, {}).find((r) => r.target.startsWith('one call'));
  assert.equal(unmeasured.met, null);
});

test('a load whose compile-only process measured no slower than a bare one is not measured, never met', () => {
  const startup = { gzip: 1, sizeGuard: 2, loads: { require: { ms: 20, compileOnlyMs: -2, ratio: null }, import: { ms: 20, compileOnlyMs: 10, ratio: 2 } } };
  const loads = score(undefined, startup, {}).filter((r) => r.target.includes('first fingerprint'));
  assert.deepEqual(loads.map((r) => r.met), [null, false]);
});

test("the gateway's added latency is judged against a bare relay's, the wheel against the faster Python peer", () => {
  const gateway = { rows: [{ rounds: 100, addedWarmMs: 2, relayAddedMs: 1, decideWarmMs: 0.5 }, { rounds: 1000, addedWarmMs: 7, relayAddedMs: 1 }, { rounds: 10, addedWarmMs: 1 }] };
  const python = {
    rows: [
      { shape: '150 B', wheelText: 1, wheelValue: 2, jcs: 3, canonicaljson: 2, floor: 1.5 },
      { shape: '1 MB string', wheelText: 1, wheelValue: 1.2, jcs: 0.9, canonicaljson: 5, floor: 1 },
    ],
  };
  const [atBound, past, unmeasured, text, atPeer, slowerText, slowerValue] = scoreOtherWays(gateway, python);
  assert.equal(atBound.met, true);
  assert.equal(atBound.measured, '2.00× (+2.00 ms vs +1.00 ms)');
  assert.equal(past.met, false);
  assert.match(past.bound.text, /^a bare relay 1\.00 ms of the 2\.00 ms it allows, 1\.00 ms left for the rest; the rest takes 6\.00 ms/);
  assert.equal(unmeasured.met, null);
  // Each input against the faster peer (canonicaljson, 2 s).
  assert.deepEqual(text, { target: 'Python wheel, 150 B, from argument text: no slower than jcs or canonicaljson + hashlib', measured: '2.00× canonicaljson + hashlib', met: true });
  assert.deepEqual(atPeer, { target: 'Python wheel, 150 B, from a value: no slower than jcs or canonicaljson + hashlib', measured: '1.00× canonicaljson + hashlib', met: true });
  assert.equal(slowerText.met, false);
  assert.equal(slowerText.measured, '0.90× jcs + hashlib');
  assert.equal(slowerText.bound, undefined);
  // A value's miss names the floor: json.dumps + SHA-256 (1 s) beside the peer's 0.9 s.
  assert.equal(slowerValue.met, false);
  assert.equal(slowerValue.bound.bounded, true);
  assert.match(slowerValue.bound.text, /^json\.dumps of the value \+ one SHA-256 \(the floor\) 1000\.00 ms, more than the 900\.00 ms it allows/);
  assert.deepEqual(scoreOtherWays(undefined, undefined), []);
});
