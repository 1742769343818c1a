// The session's persisted state through the JS face, as a host keeps it:
// `getState()` written as JSON text, read back, and given to a new
// `DoomLoopSession({ state })` at a round boundary. The resumed session must
// go on exactly as the live one — the same decisions, verdicts and halts for
// the following responses, the same next request (guidance, escalation
// model), the same state — over random runs: repeats, in-round duplicates,
// results (with outcomes for the opt-in detectors), texts, escalation,
// the reference's defaults and RECOMMENDED. The oracle is the live session
// itself (the `session` fuzz target checks the same in Rust; this covers the
// shim's lowering of the state and of the calls, and the compact answers).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { DoomLoopSession, RECOMMENDED_DOOM_LOOP_OPTION } from '../../pkg/node.mjs';
import { quietly } from './quiet.mjs';

const OPTIONS = [
  true,
  RECOMMENDED_DOOM_LOOP_OPTION,
  { ladder: { observe: 2, steer: 3, escalate: 4, block: 5, stop: 7 }, escalation: { model: 'big', maxEscalations: 2 } },
  { ladder: { observe: 2, steer: 2, block: false, stop: 4 }, outcomes: true, ledger: true, failures: true },
];

const call = fc.record({
  tool: fc.constantFrom('read', 'grep', 'ls'),
  args: fc.constantFrom({}, { path: 'a' }, { path: 'b' }, { q: 'x', n: 1 }),
});
const step = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('response'), calls: fc.array(call, { maxLength: 3 }), text: fc.option(fc.constantFrom('Let me try again.', 'Done.'), { nil: undefined }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('results'), outcome: fc.constantFrom('same', 'changed', 'failed') }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('request') }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('persist') }) },
);

/** Runs one step on a session; what it answered, as JSON text (the comparison). */
function run(session, s, ids, n) {
  switch (s.kind) {
    case 'response': {
      const calls = s.calls.map((c, i) => ({ id: `c${n}-${i}`, toolName: c.tool, args: structuredClone(c.args) }));
      ids.splice(0, ids.length, ...calls.map((c) => c.id));
      return JSON.stringify(session.onResponse({ text: s.text, calls }));
    }
    case 'results':
      return JSON.stringify(
        ids.map((id, i) => (s.outcome === 'failed' ? session.onResult(id, undefined, { error: 'boom' }) : session.onResult(id, s.outcome === 'same' ? 'ok' : `page ${n}-${i}`))),
      );
    case 'request':
      return JSON.stringify(session.nextRequest());
    default:
      return '';
  }
}

test('a session resumed from getState() at a round boundary goes on as the live one', () => {
  let resumes = 0;
  let verdicts = 0;
  fc.assert(
    fc.property(fc.constantFrom(...OPTIONS.keys()), fc.array(step, { minLength: 4, maxLength: 24 }), (which, steps) => {
      const doomLoop = OPTIONS[which];
      const live = quietly(() => new DoomLoopSession({ doomLoop }));
      let resumed = null;
      const ids = [];
      try {
        steps.forEach((s, n) => {
          if (s.kind === 'persist') {
            if (live.haltVerdict() !== null) return; // a halt is kept aside on resume (docs/session.md)
            // Not mid-round: a state persisted there resumes into a new round (docs/limits.md).
            live.endRound();
            resumed?.endRound();
            resumed?.free();
            const text = JSON.stringify(live.getState());
            resumed = quietly(() => new DoomLoopSession({ doomLoop, state: JSON.parse(text) }));
            assert.deepEqual(resumed.getState(), JSON.parse(text), 'restored state');
            resumes++;
            return;
          }
          const expected = quietly(() => run(live, s, ids, n));
          if (resumed !== null) {
            assert.equal(quietly(() => run(resumed, s, [...ids], n)), expected, `step ${n} (${s.kind}) after a resume`);
            assert.deepEqual(resumed.getState(), live.getState(), `state after step ${n}`);
          }
        });
        verdicts += live.verdicts().length;
      } finally {
        live.free();
        resumed?.free();
      }
    }),
    { numRuns: 300, seed: 20261204 },
  );
  assert.ok(resumes > 200, `${resumes} resumes`);
  assert.ok(verdicts > 300, `${verdicts} verdicts`);
});

test('regression: restore() in place forgets the declaration of a round before it', () => {
  // Found by the `session` fuzz target (tests/session.rs has the Rust twin):
  // the rounds start over after an in-place restore, and a lone call that
  // opened a round of the same number as an earlier response's was scored
  // against that response's declared calls.
  const call = (id, args) => ({ id, toolName: 't', args });
  const live = new DoomLoopSession({});
  live.onResponse({ calls: [call('a', 'x'), call('b', [1, 2])] });
  live.restore({ tools: {} });
  const fresh = new DoomLoopSession({ state: { tools: {} } });
  assert.deepEqual(live.onCall(call('c', 'x')), fresh.onCall(call('c', 'x')));
  assert.deepEqual(live.getState(), fresh.getState());
});
