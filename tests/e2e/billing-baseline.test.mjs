// Baseline: the real @openrouter/agent@0.8.0 callModel loop, over real HTTP,
// against the scripted Responses server - no mocks, no detector. The billing
// model re-issues the identical failing call every round, so the only thing
// that ends the run is `stopWhen: stepCountIs(40)`.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DEFAULT_FINAL_RESPONSE_DIRECTIVE, OpenRouter, stepCountIs } from '@openrouter/agent';
import { startScriptedServer } from './scripted-server.mjs';
import {
  BILLING_GIVE_UP_TEXT,
  BILLING_INVOICE_ID,
  BILLING_TIMEOUT_MESSAGE,
  billingScenario,
} from './scenarios.mjs';

const STEP_LIMIT = 40;

async function runBilling({ allowFinalResponse } = {}) {
  const scenario = billingScenario();
  const srv = await startScriptedServer(scenario.model);
  const client = new OpenRouter({ apiKey: 'test-key', serverURL: srv.url });
  const turnStarts = [];
  const turnEnds = [];
  const sessionEnds = [];
  const preToolUse = [];
  try {
    const result = client.callModel({
      model: 'openai/gpt-4o-mini',
      instructions: scenario.instructions,
      input: scenario.input,
      tools: scenario.tools,
      stopWhen: stepCountIs(STEP_LIMIT),
      ...(allowFinalResponse !== undefined && { allowFinalResponse }),
      onTurnStart: (ctx) => turnStarts.push(ctx.numberOfTurns),
      onTurnEnd: (ctx, response) => turnEnds.push({ turn: ctx.numberOfTurns, id: response.id }),
      hooks: {
        PreToolUse: [{ handler: (p) => void preToolUse.push(p) }],
        SessionEnd: [{ handler: (p) => void sessionEnds.push(p) }],
      },
    });
    const text = await result.getText();
    const response = await result.getResponse();
    return { scenario, srv, text, response, turnStarts, turnEnds, sessionEnds, preToolUse };
  } finally {
    await srv.close();
  }
}

function getInvoiceOutputs(body) {
  const calls = new Map(
    body.input.filter((i) => i.type === 'function_call').map((i) => [i.call_id, i]),
  );
  return body.input
    .filter((i) => i.type === 'function_call_output')
    .map((o) => ({ call: calls.get(o.call_id), output: JSON.parse(o.output) }));
}

describe('billing agent, no detector (baseline)', () => {
  let run;
  before(async () => {
    run = await runBilling();
  });

  test('runs until stepCountIs(40): 42 model requests, 41 tool executions', () => {
    const { srv, scenario } = run;
    // 1 initial request + 40 follow-ups (one per executed round) + 1 forced
    // final turn (tool_choice "none") that the SDK makes after stopWhen fires.
    assert.equal(srv.requests.length, STEP_LIMIT + 2);
    // 40 rounds inside the loop + the pending call of the 40th follow-up
    // response, which the SDK executes before its forced final turn.
    assert.equal(scenario.executions.length, STEP_LIMIT + 1);
    assert.ok(scenario.executions.every((e) => e.invoice_id === BILLING_INVOICE_ID));
    assert.deepEqual(
      scenario.executions.map((e) => e.turn),
      Array.from({ length: STEP_LIMIT + 1 }, (_, i) => i + 1),
    );
    assert.equal(run.preToolUse.length, STEP_LIMIT + 1);
    assert.deepEqual(srv.errors, []);
    assert.ok(srv.log.every((l) => !l.unexpected && !l.error));
  });

  test('every request is a streaming POST /api/v1/responses from callModel', () => {
    for (const entry of run.srv.log) {
      assert.equal(entry.method, 'POST');
      assert.equal(entry.path, '/api/v1/responses');
      assert.equal(entry.stream, true);
      assert.equal(entry.body.stream, true);
      assert.equal(entry.headers.accept, 'text/event-stream');
      assert.equal(entry.headers.authorization, 'Bearer test-key');
      assert.equal(entry.headers['x-openrouter-callmodel'], 'true');
      assert.equal(entry.body.model, 'openai/gpt-4o-mini');
      assert.deepEqual(entry.body.tools.map((t) => t.name), ['get_invoice']);
    }
    assert.equal(run.srv.requests[0].input, run.scenario.input);
  });

  test('the model sees every identical failed call: N calls + N timeout outputs in request N', () => {
    const { requests } = run.srv;
    for (let n = 1; n < requests.length; n++) {
      const outputs = getInvoiceOutputs(requests[n]);
      assert.equal(outputs.length, n, `request ${n} should carry ${n} tool outputs`);
      for (const { call, output } of outputs) {
        assert.equal(call.name, 'get_invoice');
        assert.equal(call.arguments, JSON.stringify({ invoice_id: BILLING_INVOICE_ID }));
        // Tool errors go back to the model as a function_call_output `{"error": message}`.
        assert.deepEqual(output, { error: BILLING_TIMEOUT_MESSAGE });
      }
    }
  });

  test('stopWhen ends the loop with a forced tool_choice:"none" final turn', () => {
    const { requests } = run.srv;
    const last = requests.at(-1);
    assert.ok(requests.slice(0, -1).every((b) => b.tool_choice === undefined));
    assert.equal(last.tool_choice, 'none');
    assert.deepEqual(last.input.at(-1), { role: 'user', content: DEFAULT_FINAL_RESPONSE_DIRECTIVE });
    assert.equal(run.text, BILLING_GIVE_UP_TEXT);
    assert.equal(run.response.id, 'resp_0041');
    assert.deepEqual(run.sessionEnds.map((p) => p.reason), ['max_turns']);
    assert.equal(run.sessionEnds[0].totalUsage.modelCalls, STEP_LIMIT + 2);
    // onTurnStart/onTurnEnd: once per executed tool round (40 in-loop + 1 final).
    assert.deepEqual(run.turnStarts, Array.from({ length: STEP_LIMIT + 1 }, (_, i) => i + 1));
    assert.equal(run.turnEnds.length, STEP_LIMIT + 1);
    assert.deepEqual(run.turnEnds.at(-1), { turn: STEP_LIMIT + 1, id: 'resp_0041' });
  });

  test('token spend grows every round (the cost of the doom loop)', () => {
    const inputTokens = run.srv.responses.map((r) => r.usage.input_tokens);
    for (let i = 1; i < inputTokens.length; i++) assert.ok(inputTokens[i] > inputTokens[i - 1]);
    const total = run.srv.responses.reduce((s, r) => s + r.usage.total_tokens, 0);
    assert.equal(run.sessionEnds[0].totalUsage.totalTokens, total);
  });
});

describe('billing agent, no detector, allowFinalResponse:false', () => {
  test('41 model requests, 40 tool executions, run ends on a dangling function_call', async () => {
    const run = await runBilling({ allowFinalResponse: false });
    assert.equal(run.srv.requests.length, STEP_LIMIT + 1);
    assert.equal(run.scenario.executions.length, STEP_LIMIT);
    assert.ok(run.srv.requests.every((b) => b.tool_choice === undefined));
    // The final response is the 40th follow-up, still asking for get_invoice.
    assert.equal(run.response.id, 'resp_0040');
    assert.deepEqual(run.response.output.map((o) => o.type), ['function_call']);
    assert.equal(run.text, '');
    assert.deepEqual(run.sessionEnds.map((p) => p.reason), ['max_turns']);
  });
});
