// Opt-in verdicts pass the reference engine's `DoomLoopDetected` payload
// validation. `@openrouter/agent@0.8.0` on npm has no built-in
// DoomLoopDetected hook (see SDK-NOTES.md), so the hook is registered as a
// custom hook of the real 0.8.0 `HooksManager` — the same validation path
// ("Invalid payload for hook …") its built-in hooks take — with the payload
// schema the reference's engine declares (hooks-schemas.ts of
// OpenRouterTeam/typescript-agent), transcribed here field by field.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { HooksManager } from '@openrouter/agent';
import { z } from 'zod';
import { DoomLoopMonitor, resolveDoomLoopOption } from '../../pkg/node.mjs';

const ACTIONS = ['observe', 'steer', 'escalate', 'block', 'stop'];
const DoomLoopDetectedPayload = z.object({
  detector: z.enum(['tool-fingerprint', 'server-tool-fingerprint', 'text-repetition', 'text-streak']),
  action: z.enum(ACTIONS),
  streak: z.number(),
  fingerprint: z.string(),
  toolName: z.string().optional(),
  toolInput: z.record(z.string(), z.unknown()).optional(),
  message: z.string(),
});
const DoomLoopDetectedResult = z.object({ overrideAction: z.enum(ACTIONS).optional() });

function strictHooks() {
  return new HooksManager(
    { DoomLoopDetected: { payload: DoomLoopDetectedPayload, result: DoomLoopDetectedResult } },
    { throwOnHandlerError: true },
  );
}

/** Every opt-in verdict the monitor raises on an INV-2291 / "inv-2291 " alternation with an unchanged result, a failing tool and a budget. */
function optInVerdicts() {
  const monitor = new DoomLoopMonitor(
    resolveDoomLoopOption({ cycles: true, ledger: true, failures: true, budget: { maxSpend: 100 } }),
  );
  const verdicts = [];
  for (let round = 1; round <= 12; round++) {
    const args = { invoice_id: round % 2 ? 'INV-2291' : 'inv-2291 ' };
    const record = monitor.recordToolCallSync('get_invoice', args, round);
    if (record.verdict) verdicts.push({ ...record.verdict, toolInput: args });
    const unchanged = monitor.recordToolResultSync('get_invoice', record.fingerprint, { status: 'pending' }, false, round);
    if (unchanged) verdicts.push(unchanged);
    const pay = monitor.recordToolCallSync('pay', { attempt: round }, round);
    const failure = monitor.recordToolResultSync('pay', pay.fingerprint, { error: `timeout ${round}` }, true, round);
    if (failure) verdicts.push(failure);
  }
  const budget = monitor.recordSpend(500);
  if (budget) verdicts.push(budget);
  monitor.free();
  return verdicts;
}

test('a tool-cycle verdict passes the reference engine\'s DoomLoopDetected payload schema', async () => {
  const verdicts = optInVerdicts();
  const kinds = new Set(verdicts.map((v) => v.optInDetector));
  assert.deepEqual([...kinds].sort(), ['budget', 'no-progress', 'tool-cycle', 'tool-failure']);
  const stop = verdicts.find((v) => v.optInDetector === 'tool-cycle' && v.action === 'stop');
  assert.ok(stop, 'the alternation is stopped as a cycle');
  for (const verdict of verdicts) {
    const hooks = strictHooks();
    const seen = [];
    hooks.on('DoomLoopDetected', { handler: (payload) => void seen.push(payload) });
    const { finalPayload } = await hooks.emit('DoomLoopDetected', verdict);
    assert.equal(seen.length, 1, `the handler ran for ${verdict.optInDetector}`);
    assert.equal(finalPayload.detector, verdict.detector);
    assert.equal(finalPayload.message, verdict.message);
    // Unknown keys are stripped by the schema: the engine never sees the added field.
    assert.equal(finalPayload.optInDetector, undefined);
    assert.ok(verdict.optInDetector !== undefined);
  }
});

test('the previous shape (detector: "tool-cycle") is what the schema rejects', async () => {
  const [verdict] = optInVerdicts().filter((v) => v.optInDetector === 'tool-cycle');
  const hooks = strictHooks();
  let ran = false;
  hooks.on('DoomLoopDetected', { handler: () => void (ran = true) });
  await assert.rejects(hooks.emit('DoomLoopDetected', { ...verdict, detector: 'tool-cycle' }), /Invalid payload for hook "DoomLoopDetected"/);
  assert.equal(ran, false);
});
