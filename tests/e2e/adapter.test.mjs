// End-to-end tests of the callModel adapter (`withDoomLoop`) of the built
// package, against the real @openrouter/agent@0.8.0 loop over real HTTP to
// the scripted Responses server. Every scenario asserts exact counts: model
// requests the server received, tool executions, rounds, and the request
// bodies where the adapter acts on them (instructions, model, tool_choice).
//
// Round n = the n-th tool round the SDK executes (onTurnStart(n)); request #k
// = the k-th POST the server received (#0 is the initial request).

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DEFAULT_FINAL_RESPONSE_DIRECTIVE, HooksManager, OpenRouter, stepCountIs, tool } from '@openrouter/agent';
import { z } from 'zod';
import { fingerprintToolCallSync, withDoomLoop } from '../../pkg/node.mjs';
import { functionCall, functionCallOutputs, inputText, startScriptedServer, text } from './scripted-server.mjs';
import {
  BILLING_GIVE_UP_TEXT,
  BILLING_INVOICE_ID,
  BILLING_TIMEOUT_MESSAGE,
  billingScenario,
} from './scenarios.mjs';

const MODEL = 'openai/gpt-4o-mini';
const repeatInvoice = (id = BILLING_INVOICE_ID) => functionCall('get_invoice', { invoice_id: id });

/** Runs one callModel against a fresh scripted server; returns everything a test asserts on. */
async function runCallModel({ script, request, adapter, serverOptions }) {
  const srv = await startScriptedServer(script, serverOptions);
  const client = new OpenRouter({ apiKey: 'test-key', serverURL: srv.url });
  const trace = { turnStarts: [], sessionEnds: [], preToolUse: [] };
  const userHooks = request.hooks ?? {
    PreToolUse: [{ handler: (p) => void trace.preToolUse.push(p.toolName) }],
    SessionEnd: [{ handler: (p) => void trace.sessionEnds.push(p.reason) }],
  };
  const base = {
    model: MODEL,
    ...request,
    onTurnStart: (ctx) => void trace.turnStarts.push(ctx.numberOfTurns),
    hooks: userHooks,
  };
  const input = adapter === undefined ? base : withDoomLoop(base, adapter);
  try {
    const result = client.callModel(input);
    const textOut = await result.getText();
    const response = await result.getResponse();
    assert.deepEqual(srv.errors, [], 'scripted server errors');
    return { srv, input, result, text: textOut, response, trace };
  } finally {
    await srv.close();
  }
}

/** In-memory StateAccessor that stores copies, like a real database would. */
function memoryState(initial = null) {
  let stored = initial === null ? null : structuredClone(initial);
  return {
    accessor: {
      load: async () => (stored === null ? null : structuredClone(stored)),
      save: async (state) => {
        stored = structuredClone(state);
      },
    },
    get: () => stored,
    set: (value) => {
      stored = value;
    },
  };
}

/** Collects console.warn output while `fn` runs. */
async function captureWarnings(fn) {
  const warnings = [];
  const original = console.warn;
  console.warn = (...args) => warnings.push(args.map((a) => (a instanceof Error ? a.message : String(a))).join(' '));
  try {
    return { value: await fn(), warnings };
  } finally {
    console.warn = original;
  }
}

/** The error text the model received for the last tool output of request #k. */
const lastOutputError = (body) => JSON.parse(functionCallOutputs(body).at(-1).output).error;
const actionsOf = (input) => input.getDoomLoopVerdicts().map((v) => `${v.action}@${v.streak}`);
const range = (from, to) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

function billingRequest(scenario, extra = {}) {
  return {
    instructions: scenario.instructions,
    input: scenario.input,
    tools: scenario.tools,
    stopWhen: stepCountIs(40),
    ...extra,
  };
}

// ---------------------------------------------------------------------------

describe('(a) billing agent: a tool that always times out', () => {
  test('baseline without the adapter runs until stepCountIs(40): 42 requests, 41 executions', async () => {
    const scenario = billingScenario();
    const run = await runCallModel({ script: scenario.model, request: billingRequest(scenario) });
    assert.equal(run.srv.requests.length, 42);
    assert.equal(scenario.executions.length, 41);
    assert.deepEqual(run.trace.sessionEnds, ['max_turns']);
    assert.equal(run.text, BILLING_GIVE_UP_TEXT);
  });

  test('doomLoop: true — 3rd identical call blocked, stopped before round 6 runs: 7 requests, 2 executions', async () => {
    const scenario = billingScenario();
    const detected = [];
    const run = await runCallModel({
      script: scenario.model,
      request: billingRequest(scenario),
      adapter: { doomLoop: true, onDetected: (verdict) => void detected.push(verdict) },
    });
    assert.deepEqual(detected, run.input.getDoomLoopVerdicts());
    const { requests } = run.srv;
    // #0 initial, #1..#5 after rounds 1-5, #6 the SDK's forced final answer (tool_choice none).
    assert.equal(requests.length, 7);
    assert.deepEqual(scenario.executions.map((e) => e.turn), [1, 2]);
    assert.deepEqual(run.trace.turnStarts, range(1, 6));
    // The caller's PreToolUse never sees a refused call (the adapter's check runs first).
    assert.deepEqual(run.trace.preToolUse, ['get_invoice', 'get_invoice']);
    assert.deepEqual(actionsOf(run.input), ['observe@2', 'block@3', 'block@4', 'block@5', 'stop@6']);

    // Rounds 1-2: the real timeout; rounds 3-6: the verdict text instead of an execution.
    assert.equal(lastOutputError(requests[1]), BILLING_TIMEOUT_MESSAGE);
    assert.equal(lastOutputError(requests[2]), BILLING_TIMEOUT_MESSAGE);
    const verdicts = run.input.getDoomLoopVerdicts();
    for (const k of [3, 4, 5]) assert.equal(lastOutputError(requests[k]), verdicts[k - 2].message);
    assert.match(lastOutputError(requests[3]), /^Doom loop suspected: tool "get_invoice" was invoked in 3 consecutive rounds/);
    assert.equal(lastOutputError(requests[6]), verdicts[4].message);

    // Only the final request forbids tools; it carries the SDK's final directive.
    assert.deepEqual(requests.map((b) => b.tool_choice), [...Array(6).fill(undefined), 'none']);
    assert.deepEqual(requests[6].input.at(-1), { role: 'user', content: DEFAULT_FINAL_RESPONSE_DIRECTIVE });
    assert.equal(run.text, BILLING_GIVE_UP_TEXT);

    const stop = run.input.getDoomLoopVerdict();
    assert.equal(stop.action, 'stop');
    assert.equal(stop.streak, 6);
    assert.equal(stop.detector, 'tool-fingerprint');
    assert.equal(stop.toolName, 'get_invoice');
    assert.equal(stop.fingerprint, fingerprintToolCallSync('get_invoice', { invoice_id: BILLING_INVOICE_ID }));
    assert.equal(run.input.getDoomLoopEndReason(), 'doom_loop');
    // 0.8.0 reports 'max_turns'; the caller's inline SessionEnd handler is given 'doom_loop'.
    assert.deepEqual(run.trace.sessionEnds, ['doom_loop']);
  });

  test('nothing of the adapter reaches the wire but its effects', async () => {
    const scenario = billingScenario();
    const run = await runCallModel({
      script: scenario.model,
      request: { ...billingRequest(scenario), doomLoop: true },
      adapter: {},
    });
    for (const body of run.srv.requests) {
      assert.equal(body.model, MODEL);
      assert.equal(body.instructions, scenario.instructions);
      for (const key of ['doomLoop', 'getDoomLoopVerdict', 'getDoomLoopEndReason', 'getDoomLoopVerdicts', 'getDoomLoopState']) {
        assert.ok(!(key in body), key);
      }
    }
    assert.equal(run.input.getDoomLoopEndReason(), 'doom_loop');
  });

  test('allowFinalResponse:false — exactly the reference request count: 6 requests, no final turn, state sealed', async () => {
    const scenario = billingScenario();
    const store = memoryState();
    const run = await runCallModel({
      script: scenario.model,
      request: billingRequest(scenario, { allowFinalResponse: false, state: store.accessor }),
      adapter: { doomLoop: true },
    });
    assert.equal(run.srv.requests.length, 6);
    assert.equal(scenario.executions.length, 2);
    assert.deepEqual(run.trace.turnStarts, range(1, 5));
    assert.ok(run.srv.requests.every((b) => b.tool_choice === undefined));
    assert.equal(run.response.id, 'resp_0005');
    assert.equal(run.text, '');
    assert.equal(run.input.getDoomLoopEndReason(), 'doom_loop');
    // The persisted conversation has no call without an output, and carries the verdict.
    const saved = store.get();
    assert.equal(saved.status, 'complete');
    const last = saved.messages.at(-1);
    assert.equal(last.type, 'function_call_output');
    assert.equal(last.callId, 'call_5_0');
    assert.match(JSON.parse(last.output).error, /^Not executed: this run was stopped by doom-loop detection\. Doom loop suspected/);
    assert.deepEqual(saved.doomLoop.stopVerdict, run.input.getDoomLoopVerdict());
    assert.equal(saved.doomLoop.tools.get_invoice.streak, 6);
  });

  test('a caller-owned HooksManager keeps working and is not modified', async () => {
    const scenario = billingScenario();
    const hooks = new HooksManager();
    const seen = [];
    hooks.on('PreToolUse', { handler: (p) => void seen.push(p.toolName) });
    hooks.on('SessionEnd', { handler: (p) => void seen.push(`end:${p.reason}`) });
    const run = await runCallModel({
      script: scenario.model,
      request: billingRequest(scenario, { hooks }),
      adapter: { doomLoop: true },
    });
    assert.equal(run.srv.requests.length, 7);
    assert.equal(scenario.executions.length, 2);
    // A manager re-validates SessionEnd payloads, so it still hears 0.8.0's own reason.
    assert.deepEqual(seen, ['get_invoice', 'get_invoice', 'end:max_turns']);
    assert.equal(run.input.getDoomLoopEndReason(), 'doom_loop');
  });
});

describe('(b) loop identity: a model alternating "INV-2291" / "inv-2291 "', () => {
  const alternating = (body, i) =>
    body.tool_choice === 'none' ? text(BILLING_GIVE_UP_TEXT) : repeatInvoice(i % 2 === 0 ? 'INV-2291' : 'inv-2291 ');
  const normalise = ({ invoice_id }) => String(invoice_id).trim().toUpperCase();

  test('evades the default identity (full arguments): runs to stepCountIs(12)', async () => {
    const scenario = billingScenario();
    const run = await runCallModel({
      script: alternating,
      request: billingRequest(scenario, { stopWhen: stepCountIs(12) }),
      adapter: { doomLoop: true },
    });
    assert.equal(run.srv.requests.length, 14);
    assert.equal(scenario.executions.length, 13);
    assert.deepEqual(run.input.getDoomLoopVerdicts(), []);
    assert.equal(run.input.getDoomLoopEndReason(), 'max_turns');
  });

  test('caught with a normalising loopKey (options.loopKeys): 7 requests, 2 executions', async () => {
    const scenario = billingScenario();
    const run = await runCallModel({
      script: alternating,
      request: billingRequest(scenario, { stopWhen: stepCountIs(12) }),
      adapter: { doomLoop: true, loopKeys: { get_invoice: normalise } },
    });
    assert.equal(run.srv.requests.length, 7);
    assert.deepEqual(scenario.executions.map((e) => e.invoice_id), ['INV-2291', 'inv-2291 ']);
    assert.deepEqual(actionsOf(run.input), ['observe@2', 'block@3', 'block@4', 'block@5', 'stop@6']);
    assert.equal(run.input.getDoomLoopVerdict().fingerprint, fingerprintToolCallSync('get_invoice', 'INV-2291'));
    assert.equal(run.input.getDoomLoopEndReason(), 'doom_loop');
  });

  test('a field list picks the identifying fields: a per-call nonce no longer hides the repeat', async () => {
    const executions = [];
    const lookup = tool({
      name: 'get_invoice',
      inputSchema: z.object({ invoice_id: z.string(), request_id: z.string() }),
      execute: async ({ invoice_id }) => {
        executions.push(invoice_id);
        throw new Error(BILLING_TIMEOUT_MESSAGE);
      },
    });
    const withNonce = (body, i) =>
      body.tool_choice === 'none'
        ? text(BILLING_GIVE_UP_TEXT)
        : functionCall('get_invoice', { invoice_id: BILLING_INVOICE_ID, request_id: `req-${i}` });
    const request = { input: 'Look up INV-2291.', tools: [lookup], stopWhen: stepCountIs(12) };
    const evading = await runCallModel({ script: withNonce, request, adapter: { doomLoop: true } });
    assert.equal(evading.srv.requests.length, 14);
    assert.deepEqual(evading.input.getDoomLoopVerdicts(), []);
    executions.length = 0;
    const caught = await runCallModel({
      script: withNonce,
      request,
      adapter: { doomLoop: true, loopKeys: { get_invoice: ['invoice_id'] } },
    });
    assert.equal(caught.srv.requests.length, 7);
    assert.equal(executions.length, 2);
    assert.equal(caught.input.getDoomLoopEndReason(), 'doom_loop');
  });

  test('caught with the loopKey set on the tool object (tool.function.loopKey)', async () => {
    const scenario = billingScenario();
    scenario.tools[0].function.loopKey = normalise;
    const run = await runCallModel({
      script: alternating,
      request: billingRequest(scenario, { stopWhen: stepCountIs(12) }),
      adapter: { doomLoop: true },
    });
    assert.equal(run.srv.requests.length, 7);
    assert.equal(scenario.executions.length, 2);
    assert.equal(run.input.getDoomLoopEndReason(), 'doom_loop');
  });
});

describe('(c) a poller that legitimately repeats its call', () => {
  function pollerScenario() {
    const executions = [];
    const getJobStatus = tool({
      name: 'get_job_status',
      inputSchema: z.object({ job_id: z.string() }),
      execute: async ({ job_id }) => {
        executions.push(job_id);
        return { job_id, status: executions.length >= 10 ? 'done' : 'running' };
      },
    });
    const model = (body) =>
      body.tool_choice === 'none' || inputText(body).includes('"status":"done"')
        ? text('Job job-7 finished.')
        : functionCall('get_job_status', { job_id: 'job-7' });
    return { executions, tools: [getJobStatus], model };
  }
  const pollRequest = (p) => ({ input: 'Wait for job-7 to finish.', tools: p.tools, stopWhen: stepCountIs(40) });

  test('loopKey: false is never flagged; the run is byte-identical to an unguarded one', async () => {
    const guardedPoller = pollerScenario();
    const guarded = await runCallModel({
      script: guardedPoller.model,
      request: pollRequest(guardedPoller),
      adapter: { doomLoop: true, loopKeys: { get_job_status: false } },
    });
    assert.equal(guarded.srv.requests.length, 11);
    assert.equal(guardedPoller.executions.length, 10);
    assert.equal(guarded.text, 'Job job-7 finished.');
    assert.deepEqual(guarded.input.getDoomLoopVerdicts(), []);
    assert.equal(guarded.input.getDoomLoopEndReason(), 'complete');
    assert.deepEqual(guarded.trace.sessionEnds, ['complete']);

    const plainPoller = pollerScenario();
    const plain = await runCallModel({ script: plainPoller.model, request: pollRequest(plainPoller) });
    assert.deepEqual(guarded.srv.requests, plain.srv.requests);
  });

  test('without the exemption the same poller is stopped (contrast)', async () => {
    const poller = pollerScenario();
    const run = await runCallModel({ script: poller.model, request: pollRequest(poller), adapter: { doomLoop: true } });
    assert.equal(poller.executions.length, 2);
    assert.equal(run.input.getDoomLoopEndReason(), 'doom_loop');
  });
});

describe('(d) parallel fan-out', () => {
  test('3 identical calls in one round count once: same ladder as a single call, 5 verdicts not 15', async () => {
    const scenario = billingScenario();
    const tripleCall = (body) =>
      body.tool_choice === 'none' ? text(BILLING_GIVE_UP_TEXT) : [repeatInvoice(), repeatInvoice(), repeatInvoice()];
    const run = await runCallModel({ script: tripleCall, request: billingRequest(scenario), adapter: { doomLoop: true } });
    assert.equal(run.srv.requests.length, 7);
    assert.deepEqual(scenario.executions.map((e) => e.turn), [1, 1, 1, 2, 2, 2]);
    assert.deepEqual(actionsOf(run.input), ['observe@2', 'block@3', 'block@4', 'block@5', 'stop@6']);
    // Every member of a refused round gets the round's one verdict text.
    for (const k of [3, 4, 5, 6]) {
      const outputs = functionCallOutputs(run.srv.requests[k]).slice(-3).map((o) => JSON.parse(o.output).error);
      assert.equal(new Set(outputs).size, 1);
      assert.match(outputs[0], /^Doom loop suspected/);
    }
    assert.equal(run.input.getDoomLoopState().tools.get_invoice.streak, 6);
  });

  test('a reissued fan-out of distinct calls is scored as one set (declared rounds)', async () => {
    const scenario = billingScenario();
    const fanOut = (body) =>
      body.tool_choice === 'none' ? text(BILLING_GIVE_UP_TEXT) : ['INV-1', 'INV-2', 'INV-3'].map((id) => repeatInvoice(id));
    const store = memoryState(); // with a state accessor the first response is seen too
    const run = await runCallModel({
      script: fanOut,
      request: billingRequest(scenario, { state: store.accessor }),
      adapter: { doomLoop: true },
    });
    assert.equal(run.srv.requests.length, 7);
    assert.equal(scenario.executions.length, 6);
    // Every member of the round reports the round's streak, with the round's one text.
    assert.deepEqual(
      actionsOf(run.input),
      ['observe@2', 'block@3', 'block@4', 'block@5', 'stop@6'].flatMap((a) => [a, a, a]),
    );
    const messages = run.input.getDoomLoopVerdicts().map((v) => v.message);
    for (let i = 0; i < messages.length; i += 3) assert.equal(new Set(messages.slice(i, i + 3)).size, 1);
    assert.match(
      run.input.getDoomLoopVerdict().message,
      /^Doom loop suspected: tool "get_invoice" was invoked in 6 consecutive rounds with the same set of 3 parallel calls/,
    );
    assert.equal(store.get().doomLoop.tools.get_invoice.roundFingerprints.length, 3);
  });
});

describe('(e) persistence through the state accessor', () => {
  test('a fresh turn on a stopped conversation: verdict cleared, evidence kept — stopped at its first reissue', async () => {
    const store = memoryState();
    const first = billingScenario();
    const run1 = await runCallModel({
      script: first.model,
      request: billingRequest(first, { state: store.accessor }),
      adapter: { doomLoop: true },
    });
    assert.equal(run1.srv.requests.length, 7);
    assert.equal(first.executions.length, 2);
    assert.equal(store.get().doomLoop.stopVerdict.streak, 6);

    const second = billingScenario();
    const run2 = await runCallModel({
      script: second.model,
      request: billingRequest(second, { input: 'Please try the invoice again.', state: store.accessor }),
      adapter: { doomLoop: true },
    });
    // #0 (history + new question) answered with the same call; the adapter stops
    // before round 1 runs; #1 is the final answer. Nothing executes.
    assert.equal(run2.srv.requests.length, 2);
    assert.equal(second.executions.length, 0);
    assert.deepEqual(actionsOf(run2.input), ['stop@7']);
    assert.equal(run2.input.getDoomLoopEndReason(), 'doom_loop');
    assert.equal(run2.srv.requests[1].tool_choice, 'none');
    assert.equal(store.get().doomLoop.tools.get_invoice.streak, 7);
  });

  test('a decision-only resume (approveToolCalls) keeps the stop verdict: no further tool round', async () => {
    const store = memoryState();
    const refunds = [];
    const refundInvoice = tool({
      name: 'refund_invoice',
      inputSchema: z.object({ invoice_id: z.string() }),
      requireApproval: true,
      execute: async ({ invoice_id }) => {
        refunds.push(invoice_id);
        return { refunded: invoice_id };
      },
    });
    // Rounds 1-5: get_invoice; response #5 also asks for an approval-gated refund.
    const model = (body, i) => {
      if (body.tool_choice === 'none') return text('Refund requested; the invoice service is down.');
      if (i === 5) return [repeatInvoice(), functionCall('refund_invoice', { invoice_id: BILLING_INVOICE_ID })];
      return repeatInvoice();
    };
    const first = billingScenario();
    const run1 = await runCallModel({
      script: model,
      request: billingRequest(first, { tools: [...first.tools, refundInvoice], state: store.accessor }),
      adapter: { doomLoop: true },
    });
    // The approval pause executes round 6's auto-approved get_invoice: it is the
    // 6th identical call, so it is refused and the stop verdict is armed.
    assert.equal(run1.srv.requests.length, 6);
    assert.equal(first.executions.length, 2);
    assert.equal(store.get().status, 'awaiting_approval');
    assert.equal(run1.input.getDoomLoopVerdict().streak, 6);
    assert.equal(run1.input.getDoomLoopEndReason(), 'complete'); // paused, not ended
    assert.deepEqual(store.get().doomLoop.stopVerdict, run1.input.getDoomLoopVerdict());
    const refundCall = store.get().pendingToolCalls[0];
    assert.equal(refundCall.name, 'refund_invoice');

    const second = billingScenario();
    const run2 = await runCallModel({
      script: model,
      request: billingRequest(second, {
        tools: [...second.tools, refundInvoice],
        state: store.accessor,
        input: [],
        approveToolCalls: [refundCall.id],
      }),
      adapter: { doomLoop: true },
    });
    // The approved call runs (the user approved it; it is not the repeated one);
    // 0.8.0 then always sends the outputs — the adapter makes that request
    // text-only, so the loop cannot start another round.
    assert.deepEqual(refunds, [BILLING_INVOICE_ID]);
    assert.equal(second.executions.length, 0);
    assert.equal(run2.srv.requests.length, 1);
    assert.equal(run2.srv.requests[0].tool_choice, 'none');
    assert.deepEqual(run2.input.getDoomLoopVerdict(), run1.input.getDoomLoopVerdict());
    assert.equal(run2.input.getDoomLoopEndReason(), 'doom_loop');
    assert.equal(run2.text, 'Refund requested; the invoice service is down.');
  });
});

describe('(f) steer and escalate rungs', () => {
  test('guidance is injected into exactly one request per verdict; the model is swapped for exactly one turn', async () => {
    const scenario = billingScenario();
    // Two identical calls per round: one piece of evidence, one guidance message.
    const doubleCall = (body) =>
      body.tool_choice === 'none' ? text(BILLING_GIVE_UP_TEXT) : [repeatInvoice(), repeatInvoice()];
    const run = await runCallModel({
      script: doubleCall,
      request: billingRequest(scenario),
      adapter: {
        doomLoop: {
          ladder: { observe: false, steer: 2, escalate: 3, block: false, stop: 5 },
          escalation: { model: 'frontier/model', maxEscalations: 1 },
        },
      },
    });
    const { requests } = run.srv;
    // #0 + follow-ups after rounds 1-4 + the final answer; round 5 is stopped.
    assert.equal(requests.length, 6);
    assert.equal(scenario.executions.length, 8);
    assert.deepEqual(actionsOf(run.input), ['steer@2', 'escalate@3', 'steer@4', 'stop@5']);
    const [steer2, escalate3, steer4] = run.input.getDoomLoopVerdicts();
    const base = scenario.instructions;
    assert.deepEqual(
      requests.map((b) => b.instructions),
      [
        base,
        base,
        `${base}\n\n${steer2.message}`,
        `${base}\n\n${escalate3.message} The next turn runs on a stronger model: use it to change course.`,
        `${base}\n\n${steer4.message}`,
        base,
      ],
    );
    // The escalation budget (1) is spent on request #3 only; round 4 falls back to steer.
    assert.deepEqual(requests.map((b) => b.model), [MODEL, MODEL, MODEL, 'frontier/model', MODEL, MODEL]);
    assert.equal(run.input.getDoomLoopState().escalationsUsed, 1);
    assert.equal(run.input.getDoomLoopEndReason(), 'doom_loop');
  });

  test('guidance is appended to per-turn (async) instructions too', async () => {
    const scenario = billingScenario();
    const run = await runCallModel({
      script: scenario.model,
      request: billingRequest(scenario, { instructions: async (ctx) => `Turn ${ctx.numberOfTurns}.` }),
      adapter: { doomLoop: { ladder: { observe: false, steer: 2, block: false, stop: 3 } } },
    });
    assert.equal(run.srv.requests.length, 4);
    const [steer2] = run.input.getDoomLoopVerdicts();
    assert.deepEqual(
      run.srv.requests.map((b) => b.instructions),
      ['Turn 0.', 'Turn 1.', `Turn 2.\n\n${steer2.message}`, 'Turn 3.'],
    );
  });
});

describe('(g) malformed tool-call JSON', () => {
  const RAW = '{"invoice_id": INV-2291';
  const malformed = (body) => (body.tool_choice === 'none' ? text('I cannot form a valid request.') : functionCall('get_invoice', RAW));

  test('a repeated unparseable call is recorded with its raw text as identity and stopped', async () => {
    const scenario = billingScenario();
    const { value: run } = await captureWarnings(() =>
      runCallModel({ script: malformed, request: billingRequest(scenario, { stopWhen: stepCountIs(12) }), adapter: { doomLoop: true } }),
    );
    // 0.8.0 fires no hook for these calls; they are seen in onTurnEnd's response,
    // so the first response's call (which no callback receives without a state
    // accessor) is missed: the stop lands one round later than the reference's.
    assert.equal(run.srv.requests.length, 8);
    assert.equal(scenario.executions.length, 0);
    assert.deepEqual(actionsOf(run.input), ['observe@2', 'block@3', 'block@4', 'block@5', 'stop@6']);
    assert.equal(run.input.getDoomLoopVerdict().fingerprint, fingerprintToolCallSync('get_invoice', RAW));
    assert.equal(run.input.getDoomLoopEndReason(), 'doom_loop');
    // The model keeps reading 0.8.0's parse error, as in the reference engine.
    assert.match(lastOutputError(run.srv.requests[5]), /^Failed to parse tool call arguments/);
  });

  test('with a state accessor the first response is seen too: stopped before round 6 runs', async () => {
    const scenario = billingScenario();
    const store = memoryState();
    const { value: run } = await captureWarnings(() =>
      runCallModel({
        script: malformed,
        request: billingRequest(scenario, { stopWhen: stepCountIs(12), state: store.accessor }),
        adapter: { doomLoop: true },
      }),
    );
    assert.equal(run.srv.requests.length, 7);
    assert.equal(run.input.getDoomLoopVerdict().streak, 6);
  });

  test('baseline: without the adapter it runs to stepCountIs(12)', async () => {
    const scenario = billingScenario();
    const { value: run } = await captureWarnings(() =>
      runCallModel({ script: malformed, request: billingRequest(scenario, { stopWhen: stepCountIs(12) }) }),
    );
    assert.equal(run.srv.requests.length, 14);
  });
});

describe('(h) never the cause of failure', () => {
  test('a throwing loopKey falls back to the full arguments with a warning; detection and the run go on', async () => {
    const scenario = billingScenario();
    let calls = 0;
    const { value: run, warnings } = await captureWarnings(() =>
      runCallModel({
        script: scenario.model,
        request: billingRequest(scenario),
        adapter: {
          doomLoop: true,
          loopKeys: {
            get_invoice: () => {
              calls++;
              throw new Error('boom');
            },
          },
        },
      }),
    );
    assert.equal(run.srv.requests.length, 7);
    assert.equal(scenario.executions.length, 2);
    assert.equal(run.input.getDoomLoopEndReason(), 'doom_loop');
    assert.equal(run.input.getDoomLoopVerdict().fingerprint, fingerprintToolCallSync('get_invoice', { invoice_id: BILLING_INVOICE_ID }));
    // Called once per call (6 rounds), never twice for one call.
    assert.equal(calls, 6);
    const fallbacks = warnings.filter((w) => w === '[DoomLoop] get_invoice: loopKey threw (boom); falling back to full arguments');
    assert.equal(fallbacks.length, 6);
  });

  test('unhashable loopKey output (bigint) falls back to the full arguments', async () => {
    const scenario = billingScenario();
    const { value: run, warnings } = await captureWarnings(() =>
      runCallModel({
        script: scenario.model,
        request: billingRequest(scenario),
        adapter: { doomLoop: true, loopKeys: { get_invoice: () => ({ id: 10n }) } },
      }),
    );
    assert.equal(run.srv.requests.length, 7);
    assert.equal(run.input.getDoomLoopEndReason(), 'doom_loop');
    assert.ok(warnings.some((w) => w.includes('cannot be fingerprinted; using its full arguments') && w.includes('bigint')));
  });

  test('a corrupt doomLoop blob in state is ignored with the reference warning; the run is judged afresh', async () => {
    // A real state from an earlier, ordinary run, with a corrupt detector blob.
    const store = memoryState();
    const warm = await runCallModel({
      script: [text('Hello! How can I help?')],
      request: { input: 'hi', state: store.accessor },
      adapter: { doomLoop: true },
    });
    assert.equal(warm.srv.requests.length, 1);
    for (const corrupt of ['not a blob', [1, 2, 3]]) {
      const base = structuredClone(store.get());
      store.set({ ...base, doomLoop: corrupt });
      const scenario = billingScenario();
      const { value: run, warnings } = await captureWarnings(() =>
        runCallModel({ script: scenario.model, request: billingRequest(scenario, { state: store.accessor }), adapter: { doomLoop: true } }),
      );
      assert.deepEqual(warnings, ['[DoomLoop] Ignoring invalid persisted doom-loop state']);
      assert.equal(run.srv.requests.length, 7);
      assert.equal(scenario.executions.length, 2);
      assert.equal(run.input.getDoomLoopEndReason(), 'doom_loop');
      assert.equal(store.get().doomLoop.tools.get_invoice.streak, 6);
      store.set(base);
    }
  });
});

describe('(i) response checkpoints: assistant text and server-tool items', () => {
  test('a response that repeats itself arms a stop: its pending call is refused, no further tool round', async () => {
    const scenario = billingScenario();
    const STUCK = 'I am stuck. '.repeat(10).trim();
    const model = (body, i) => {
      if (body.tool_choice === 'none') return text(BILLING_GIVE_UP_TEXT);
      return i === 0 ? repeatInvoice() : [text(STUCK), repeatInvoice()];
    };
    const run = await runCallModel({ script: model, request: billingRequest(scenario), adapter: { doomLoop: true } });
    // #0 → round 1 → #1 (text loop + call): stop armed from the text; round 2's
    // call is refused without being recorded; #2 is the final answer.
    assert.equal(run.srv.requests.length, 3);
    assert.equal(scenario.executions.length, 1);
    const stop = run.input.getDoomLoopVerdict();
    assert.equal(stop.detector, 'text-repetition');
    assert.equal(stop.action, 'stop');
    assert.equal(stop.streak, 10);
    assert.equal(lastOutputError(run.srv.requests[2]), `Not executed: this run was stopped by doom-loop detection. ${stop.message}`);
    assert.equal(run.input.getDoomLoopState().tools.get_invoice.streak, 1);
    assert.equal(run.input.getDoomLoopEndReason(), 'doom_loop');
  });

  test('server-tool items from onTurnEnd are recorded post-execution (no block rung) and can stop the run', async () => {
    // The scripted server speaks function calls and text only, so this drives the
    // adapter's hook points directly with response objects shaped like 0.8.0's.
    const run = withDoomLoop({ model: MODEL, input: 'search', tools: billingScenario().tools }, { doomLoop: true });
    const search = (n) => ({
      id: `resp_${n}`,
      output: [{ type: 'web_search_call', id: `ws_${n}`, status: 'completed', action: { type: 'search', query: 'invoice INV-2291' } }],
    });
    for (let n = 1; n <= 6; n++) {
      await run.onTurnStart({ numberOfTurns: n });
      await run.onTurnEnd({ numberOfTurns: n }, search(n));
    }
    assert.deepEqual(actionsOf(run), ['observe@2', 'observe@3', 'observe@4', 'observe@5', 'stop@6']);
    assert.ok(run.getDoomLoopVerdicts().every((v) => v.detector === 'server-tool-fingerprint' && v.toolName === 'server:web_search_call'));
    assert.equal(await run.stopWhen({ steps: [] }), true);
    await run.hooks.SessionEnd[0].handler({ reason: 'max_turns' });
    assert.equal(run.getDoomLoopEndReason(), 'doom_loop');
  });
});
