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

// The session reads a response tree-free (each call's arguments
// fingerprinted from their text as the binding reads them) unless a call
// needs the tree: one malformed call sends the whole response down the
// tree path. So the oracle is the same run with a malformed call of a tool
// of its own added to every response (its arguments never repeat, so it
// never loops): on random runs the two must agree on every outcome of the
// other calls and on their state. Arguments repeat across rounds (a loop
// to catch), some carry long strings (which cross raw) and JS-only values.
const TOOLS = ['read', 'bash', '__proto__', 'bad\ud800name'];
const longText = fc.string({ minLength: 512, maxLength: 700 });
const argument = fc.oneof(
  { weight: 5, arbitrary: fc.jsonValue({ maxDepth: 4 }) },
  { weight: 1, arbitrary: fc.record({ path: fc.string(), content: longText }) },
  { weight: 1, arbitrary: fc.array(fc.oneof(fc.constant(undefined), fc.constant(-0), fc.double(), fc.string()), { maxLength: 4 }) },
);
const planned = fc.record({
  pool: fc.array(fc.record({ tool: fc.constantFrom(...TOOLS), args: argument }), { minLength: 1, maxLength: 5 }),
  rounds: fc.array(
    fc.record({ picks: fc.array(fc.nat(4), { minLength: 1, maxLength: 4 }), text: fc.option(fc.string(), { nil: undefined }) }),
    { minLength: 1, maxLength: 8 },
  ),
});

/** The state without the oracle's own tool. */
function withoutOracle(state) {
  const copy = structuredClone(state);
  delete copy.tools?.['zz-oracle'];
  if (copy.session?.inflight) {
    copy.session.inflight = copy.session.inflight.filter((call) => call.toolName !== 'zz-oracle');
    // An empty list is not written at all.
    if (copy.session.inflight.length === 0) delete copy.session.inflight;
  }
  return copy;
}

test('a session reading responses tree-free decides exactly as the tree decides', () => {
  fc.assert(
    fc.property(planned, ({ pool, rounds }) => {
      const fast = new api.DoomLoopSession({});
      const tree = new api.DoomLoopSession({});
      rounds.forEach(({ picks, text }, round) => {
        const calls = () =>
          picks.map((pick, k) => {
            const { tool, args } = pool[pick % pool.length];
            return { id: `${round}-${k}\udc00`, toolName: tool, args: structuredClone(args) };
          });
        const a = fast.onResponse({ text, calls: calls() });
        const b = tree.onResponse({ text, calls: [...calls(), { id: `${round}-oracle`, toolName: 'zz-oracle', args: `{not json ${round}` }] });
        assert.equal(b.decisions.at(-1).malformed, true);
        assert.deepEqual(a, { ...b, decisions: b.decisions.slice(0, -1) }, `round ${round + 1}`);
      });
      assert.deepEqual(fast.getState(), withoutOracle(tree.getState()));
      fast.free();
      tree.free();
    }),
    { numRuns: 300 },
  );
});
