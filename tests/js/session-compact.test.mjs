// The session engine's compact answer (wasm/src/session.rs, js/core.js
// readCompact): an outcome where every call runs with no verdict and no
// warning comes back as numbers and digits in the I/O buffer, and the shim
// builds the decisions itself. They must be the very objects the JSON
// answer parses to — the same keys in the same order, the same values —
// which `session.decision(id)` still answers from the core's JSON writer:
// that is the oracle here, over random runs (repeats, in-round duplicates,
// exempt and malformed calls, ids and tool names with lone surrogates).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import fc from 'fast-check';
import { DoomLoopSession, RECOMMENDED_DOOM_LOOP_OPTION } from '../../pkg/node.mjs';
import { quietly } from './quiet.mjs';

/** Counts `JSON.parse` calls made while `fn` runs. */
function countingParses(fn) {
  const parse = JSON.parse;
  let count = 0;
  JSON.parse = function counted(...args) {
    count++;
    return parse.apply(this, args);
  };
  try {
    return { value: fn(), parses: count };
  } finally {
    JSON.parse = parse;
  }
}

test('a response where every call runs parses no JSON answer, and a verdict still does', () => {
  const session = new DoomLoopSession({});
  const first = countingParses(() => session.onResponse({ calls: [{ id: 'a', toolName: 'ls', args: { path: '.' } }] }));
  assert.equal(first.parses, 0, 'the compact answer was not taken');
  assert.equal(first.value.decisions[0].streak, 1);
  assert.equal(first.value.decisions[0].fingerprint.length, 64);
  // The reference's ladder observes at 2 and blocks at 3: a verdict, so JSON.
  quietly(() => session.onResponse({ calls: [{ id: 'b', toolName: 'ls', args: { path: '.' } }] }));
  const third = quietly(() => countingParses(() => session.onResponse({ calls: [{ id: 'c', toolName: 'ls', args: { path: '.' } }] })));
  assert.ok(third.parses > 0);
  assert.equal(third.value.decisions[0].action, 'refuse');
  session.free();
});

test('onCall alone answers compact too', () => {
  const session = new DoomLoopSession({});
  const { value, parses } = countingParses(() => session.onCall({ id: 'x', toolName: 'grep', args: { q: 'TODO' } }));
  assert.equal(parses, 0);
  assert.equal(JSON.stringify(value), JSON.stringify(session.decision('x')));
  session.free();
});

const names = fc.constantFrom('ls', 'grep', 'edit', 'skip', 'naïve\u{1F600}', 'lone\uD800');
const argsOf = fc.oneof(
  fc.constantFrom({ path: '.' }, { path: 'src' }, { q: 'TODO', n: 3 }, {}),
  fc.constant('{not json'),
  fc.constant('   '),
  fc.record({ path: fc.constantFrom('a', 'b'), body: fc.constantFrom('x'.repeat(600), 'y') }),
);
const idSuffix = fc.constantFrom('', '\uDC00', 'é', ' ');

test('compact decisions equal the JSON answer over random runs', () => {
  fc.assert(
    fc.property(
      fc.array(fc.array(fc.tuple(names, argsOf, idSuffix), { maxLength: 4 }), { minLength: 1, maxLength: 12 }),
      fc.boolean(),
      fc.boolean(),
      (responses, recommended, lone) => {
        const session = quietly(
          () => new DoomLoopSession({ doomLoop: recommended ? RECOMMENDED_DOOM_LOOP_OPTION : true, loopKeys: { skip: false } }),
        );
        let n = 0;
        try {
          for (const [r, calls] of responses.entries()) {
            const lowered = calls.map(([toolName, args, suffix]) => ({ id: `c${n++}${suffix}`, toolName, args }));
            const useOnCall = lone && lowered.length === 1;
            const decisions = quietly(() =>
              useOnCall ? [session.onCall(lowered[0])] : session.onResponse({ calls: lowered }).decisions,
            );
            assert.equal(decisions.length, lowered.length, `response ${r}`);
            for (const decision of decisions) {
              const oracle = quietly(() => session.decision(decision.id));
              assert.equal(JSON.stringify(decision), JSON.stringify(oracle), `response ${r}, call ${decision.id}`);
              assert.deepEqual(decision, oracle);
            }
            if (useOnCall) session.endRound();
          }
        } finally {
          session.free();
        }
      },
    ),
    { numRuns: 300, seed: 18 },
  );
});

test('the compact round is the session round', () => {
  const session = new DoomLoopSession({});
  for (let i = 1; i <= 5; i++) {
    const outcome = session.onResponse({ calls: [{ id: `r${i}`, toolName: 'read', args: { page: i } }] });
    assert.equal(outcome.round, i);
    assert.equal(session.round, i);
    assert.deepEqual(Object.keys(outcome), ['round', 'textVerdict', 'decisions', 'halt']);
  }
  // A response without calls answers compact too.
  const empty = countingParses(() => session.onResponse({ calls: [] }));
  assert.equal(empty.parses, 0);
  assert.deepEqual(empty.value, { round: 6, textVerdict: null, decisions: [], halt: null });
  session.free();
});

// Regression (found by the property above): the core grows — and so may
// move — the I/O buffer to write a compact answer longer than any before,
// while the shim's view of it still covered the first record, which was
// then read from the freed block (a streak of 4e-312). A fresh process, so
// that the buffer and the view are still the size a one-call answer made.
test('a compact answer that grew the buffer is read where it now is', () => {
  const source = `
    const { DoomLoopSession } = await import(${JSON.stringify(new URL('../../pkg/node.mjs', import.meta.url).href)});
    console.warn = () => {};
    // One-call answers (the view: one record), then a refusal (JSON; the
    // allocations around the buffer then force it to move when it grows).
    const first = new DoomLoopSession({});
    for (const id of ['a', 'b', 'c']) first.onResponse({ calls: [{ id, toolName: 'ls', args: { path: '.' } }] });
    first.free();
    const session = new DoomLoopSession({});
    const calls = Array.from({ length: 4 }, (_, i) => ({ id: 'c' + i, toolName: 'read', args: { page: i } }));
    const { decisions } = session.onResponse({ calls });
    const wrong = decisions.filter((d) => JSON.stringify(d) !== JSON.stringify(session.decision(d.id)));
    console.log(JSON.stringify({ wrong: wrong.length, streaks: decisions.map((d) => d.streak) }));`;
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', source], { encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  assert.deepEqual(JSON.parse(run.stdout), { wrong: 0, streaks: [1, 1, 1, 1] });
});
