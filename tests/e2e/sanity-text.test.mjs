// Sanity: a model that answers with plain text and ends; plus self-checks that
// the scripted server's wire format is what @openrouter/sdk validates.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { OpenRouter } from '@openrouter/agent';
import { OpenResponsesResult$inboundSchema, StreamEvents$inboundSchema } from '@openrouter/sdk/models';
import { functionCall, sseEventsFor, startScriptedServer, text } from './scripted-server.mjs';

const ANSWER = 'Your invoice INV-2291 was charged once; the second line is a pending authorization.';

test('plain-text answer: one request, no tools, getText/getResponse/getTextStream', async () => {
  const srv = await startScriptedServer([text(ANSWER)]);
  try {
    const client = new OpenRouter({ apiKey: 'test-key', serverURL: srv.url });
    const result = client.callModel({ model: 'openai/gpt-4o-mini', input: 'Was I charged twice?' });
    const deltas = [];
    for await (const d of result.getTextStream()) deltas.push(d);
    assert.ok(deltas.length > 1, 'text should arrive as several SSE deltas');
    assert.equal(deltas.join(''), ANSWER);
    assert.equal(await result.getText(), ANSWER);
    const response = await result.getResponse();
    assert.equal(response.status, 'completed');
    assert.equal(response.usage.totalTokens, response.usage.inputTokens + response.usage.outputTokens);
    assert.ok(response.usage.inputTokens > 0 && response.usage.outputTokens > 0);

    assert.equal(srv.requests.length, 1);
    const [body] = srv.requests;
    assert.equal(body.stream, true);
    assert.equal(body.input, 'Was I charged twice?');
    assert.equal(body.tools, undefined);
    assert.deepEqual(srv.errors, []);
  } finally {
    await srv.close();
  }
});

test('plain-text answer with tools declared: loop ends after the first turn', async () => {
  const srv = await startScriptedServer([ANSWER]); // bare string turn = text
  try {
    const client = new OpenRouter({ apiKey: 'test-key', serverURL: srv.url });
    let turnStarts = 0;
    const { billingScenario } = await import('./scenarios.mjs');
    const scenario = billingScenario();
    const result = client.callModel({
      model: 'openai/gpt-4o-mini',
      input: 'hi',
      tools: scenario.tools,
      onTurnStart: () => void turnStarts++,
    });
    assert.equal(await result.getText(), ANSWER);
    assert.equal(srv.requests.length, 1);
    assert.equal(scenario.executions.length, 0);
    assert.equal(turnStarts, 0);
  } finally {
    await srv.close();
  }
});

test('wire format self-check: every SSE event and response passes the SDK schemas', async () => {
  const srv = await startScriptedServer([
    [functionCall('get_invoice', { invoice_id: 'INV-2291' }), text('checking that for you now')],
    'plain text',
  ]);
  try {
    // Non-streaming JSON mode (no `stream`, Accept: application/json).
    const res = await fetch(`${srv.url}/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({
        model: 'm',
        input: 'x',
        tools: [{ type: 'function', name: 'get_invoice', parameters: {}, strict: null, description: null }],
      }),
    });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type'), /application\/json/);
    const json = await res.json();
    OpenResponsesResult$inboundSchema.parse(json);

    // Streaming mode.
    const sse = await fetch(`${srv.url}/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ model: 'm', input: 'y', stream: true }),
    });
    assert.match(sse.headers.get('content-type'), /text\/event-stream/);
    const raw = await sse.text();
    assert.ok(raw.trimEnd().endsWith('data: [DONE]'));

    for (const response of srv.responses) {
      OpenResponsesResult$inboundSchema.parse(response);
      const events = sseEventsFor(response);
      for (const ev of events) {
        // The SDK's discriminated union does not throw on a bad event: it turns it
        // into an `isUnknown` placeholder, and a bad `response.completed` then
        // surfaces as "Stream ended without completion event". Check explicitly.
        const parsed = StreamEvents$inboundSchema.parse(ev);
        assert.ok(!parsed.isUnknown, `event ${ev.type} failed SDK validation`);
      }
      assert.equal(events.at(-1).type, 'response.completed');
    }

    // Unknown routes are 404, never 5XX (the SDK would retry a 5XX with backoff).
    const miss = await fetch(`${srv.url}/chat/completions`, { method: 'POST', body: '{}' });
    assert.equal(miss.status, 404);
    // An exhausted array script answers 400 and records the error.
    const over = await fetch(`${srv.url}/responses`, { method: 'POST', body: '{"model":"m","input":"z"}' });
    assert.equal(over.status, 400);
    assert.equal(srv.errors.length, 1);
  } finally {
    await srv.close();
  }
});
