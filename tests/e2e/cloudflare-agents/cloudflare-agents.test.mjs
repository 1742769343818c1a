// doom-loop-wasm/cloudflare-agents in Node: the state plumbing of
// doomLoopChat (the agent's state and setState) around the real AI SDK loop,
// with a stand-in agent. The real AIChatAgent (`agents` + @cloudflare/ai-chat)
// in workerd is worker-example/test/worker.test.mjs. Needs the built package.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { generateText, stepCountIs, tool } from 'ai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { startChatServer } from '../chat-completions-server.mjs';
import { billingScenario } from '../neutral-scenarios.mjs';
import { captureWarnings } from '../ai-sdk/cases.mjs';

const { doomLoopChat, SUPPORTED_AGENTS_VERSIONS } = await import(new URL('../../../pkg/cloudflare-agents.mjs', import.meta.url));

/** A stand-in for an Agent: its state and setState, with every write kept. */
function fakeAgent(state = {}) {
  const writes = [];
  return {
    state,
    writes,
    setState(next) {
      writes.push(structuredClone(next));
      this.state = next;
    },
  };
}

async function turn(agent, scenario, { steps = 40, options = {} } = {}) {
  const srv = await startChatServer(scenario.model);
  const provider = createOpenAICompatible({ name: 'scripted', baseURL: srv.url, apiKey: 'k', includeUsage: true });
  const tools = Object.fromEntries(scenario.tools.map((t) => [t.name, tool({ inputSchema: t.schema, execute: t.run })]));
  try {
    const guard = doomLoopChat(agent, { doomLoop: true, ...options });
    let finished = false;
    await generateText(
      guard.wrap({ model: provider('m'), prompt: scenario.input, tools, stopWhen: stepCountIs(steps), onFinish: () => void (finished = true) }),
    );
    return { guard, requests: srv.requests.length, finished };
  } finally {
    await srv.close();
  }
}

describe('Cloudflare agents adapter (doom-loop-wasm/cloudflare-agents), state in the agent', () => {
  test('the detector blob is written into agent.state.doomLoop after every step; other state is kept', async () => {
    const agent = fakeAgent({ plan: 'pro' });
    const scenario = billingScenario();
    const r = await turn(agent, scenario);
    assert.equal(r.finished, true); // the caller's onFinish still runs
    assert.equal(r.requests, 6);
    assert.equal(scenario.executions.length, 2);
    assert.equal(agent.state.plan, 'pro');
    assert.equal(agent.state.doomLoop.tools.get_invoice.streak, 6);
    assert.deepEqual(agent.writes.map((w) => w.doomLoop.tools.get_invoice.streak).slice(0, 6), [1, 2, 3, 4, 5, 6]);
  });

  test('the next turn resumes from the agent state: the streak continues', async () => {
    const agent = fakeAgent();
    await turn(agent, billingScenario(), { steps: 2 });
    assert.equal(agent.state.doomLoop.tools.get_invoice.streak, 2);
    const second = billingScenario();
    const r = await turn(agent, second);
    assert.equal(second.executions.length, 0);
    assert.equal(r.requests, 4);
    assert.equal(r.guard.haltVerdict()?.streak, 6);
  });

  test('a custom state key, and a corrupt blob: the reference warning, then a fresh ladder', async () => {
    const agent = fakeAgent({ detector: 'garbage' });
    const scenario = billingScenario();
    const { value: r, warnings } = await captureWarnings(() => turn(agent, scenario, { options: { stateKey: 'detector' } }));
    assert.deepEqual(warnings, ['[DoomLoop] Ignoring invalid persisted doom-loop state']);
    assert.equal(r.requests, 6);
    assert.equal(agent.state.detector.tools.get_invoice.streak, 6);
    assert.equal(agent.state.doomLoop, undefined);
  });

  test('not an Agent: a clear error naming the supported versions', () => {
    assert.throws(() => doomLoopChat({ state: {} }), new RegExp(`AIChatAgent of \`agents\` ${SUPPORTED_AGENTS_VERSIONS.replace(/\./g, '\\.')}`));
  });
});
