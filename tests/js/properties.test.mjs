// Property tests (fast-check) for the package: fingerprints ignore key
// order, the sync and async APIs agree, and state survives
// getState → JSON.stringify → JSON.parse → restore with the monitor then
// continuing exactly as the original does.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import * as api from '../../pkg/node.mjs';

const json = fc.jsonValue({ maxDepth: 4 });

function shuffleKeys(value, seed) {
  if (Array.isArray(value)) return value.map((v) => shuffleKeys(v, seed));
  if (value === null || typeof value !== 'object') return value;
  const keys = Object.keys(value);
  // fromEntries defines own properties, so an own "__proto__" stays data.
  return Object.fromEntries(
    keys
      .map((k, i) => [k, (i * 7919 + seed) % (keys.length + 3)])
      .sort((a, b) => a[1] - b[1])
      .map(([k]) => [k, shuffleKeys(value[k], seed)]),
  );
}

test('key order never changes a fingerprint', () => {
  fc.assert(
    fc.property(json, fc.nat(), (value, seed) => {
      assert.equal(
        api.fingerprintToolCallSync('t', value),
        api.fingerprintToolCallSync('t', shuffleKeys(value, seed)),
      );
    }),
    { numRuns: 500 },
  );
});

test('the sync and async APIs agree', async () => {
  await fc.assert(
    fc.asyncProperty(fc.string(), json, async (tool, value) => {
      assert.equal(await api.fingerprintToolCall(tool, value), api.fingerprintToolCallSync(tool, value));
      assert.equal(await api.fingerprintKeyMaterial(value), api.fingerprintKeyMaterialSync(value));
      const a = new api.DoomLoopMonitor(api.resolveDoomLoopOption(true));
      const b = new api.DoomLoopMonitor(api.resolveDoomLoopOption(true));
      for (let round = 1; round <= 4; round++) {
        assert.deepEqual(await a.recordToolCall(tool, value, round), b.recordToolCallSync(tool, value, round));
      }
      assert.deepEqual(await a.recordAssistantText(tool), b.recordAssistantTextSync(tool));
    }),
    { numRuns: 200 },
  );
});

const step = fc.oneof(
  fc.record({
    kind: fc.constant('round'),
    calls: fc.array(fc.record({ tool: fc.constantFrom('a', 'b', '__proto__'), arg: fc.nat(3) }), {
      minLength: 1,
      maxLength: 4,
    }),
  }),
  fc.record({ kind: fc.constant('text'), text: fc.constantFrom('', 'stuck', 'stuck stuck stuck stuck', 'ok') }),
  fc.record({ kind: fc.constant('escalate') }),
);

function apply(monitor, s, round) {
  if (s.kind === 'round') {
    const calls = s.calls.map((c) => ({ toolName: c.tool, keyMaterial: { arg: c.arg } }));
    monitor.declareRoundSync(round, calls);
    return calls.map((c) => monitor.recordToolCallSync(c.toolName, c.keyMaterial, round));
  }
  if (s.kind === 'text') return monitor.recordAssistantTextSync(s.text) ?? null;
  monitor.consumeEscalation();
  return monitor.canEscalate();
}

test('state survives JSON and the monitor continues identically', () => {
  const option = { escalation: { model: 'm' }, ladder: { escalate: 2 } };
  const config = api.resolveDoomLoopOption(option);
  fc.assert(
    fc.property(fc.array(step, { maxLength: 12 }), fc.array(step, { minLength: 1, maxLength: 12 }), (before, after) => {
      const original = new api.DoomLoopMonitor(config);
      before.forEach((s, i) => apply(original, s, i + 1));
      const blob = JSON.parse(JSON.stringify(original.getState()));
      const resumed = new api.DoomLoopMonitor(config, blob);
      assert.deepEqual(resumed.getState(), original.getState());
      after.forEach((s, i) => {
        const round = before.length + i + 1;
        assert.deepEqual(apply(resumed, s, round), apply(original, s, round));
      });
      assert.deepEqual(resumed.getState(), original.getState());
    }),
    { numRuns: 300 },
  );
});
