// The AI SDK adapter's e2e suite, for one major of `ai` (ai-sdk-v6.test.mjs,
// ai-sdk-v7.test.mjs): the real generateText / streamText / ToolLoopAgent
// loop, the real @ai-sdk/openai-compatible provider over HTTP, against the
// scripted Chat Completions server on 127.0.0.1. Needs the built package (pkg/).

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { startChatServer, toolMessages } from '../chat-completions-server.mjs';
import {
  BILLING_INVOICE_ID,
  BILLING_TIMEOUT_MESSAGE,
  billingScenario,
  editThenTestAgent,
  pagingAgent,
} from '../neutral-scenarios.mjs';

const PKG = new URL('../../../pkg/', import.meta.url);

/** Captures console.warn while `fn` runs. */
export async function captureWarnings(fn) {
  const warnings = [];
  const original = console.warn;
  console.warn = (...args) => warnings.push(args.map(String).join(' '));
  try {
    return { value: await fn(), warnings };
  } finally {
    console.warn = original;
  }
}

/**
 * @param {{ label: string, ai: any, createOpenAICompatible: Function, skip?: string | false }} env
 */
export function defineAiSdkSuite({ label, ai, createOpenAICompatible, skip = false }) {
  const { generateText, streamText, ToolLoopAgent, tool } = ai ?? {};
  const stepCountIs = ai?.isStepCount ?? ai?.stepCountIs;
  const adapter = () => import(new URL('ai-sdk.mjs', PKG));
  const main = () => import(new URL('node.mjs', PKG));

  const toolsOf = (scenario) =>
    Object.fromEntries(scenario.tools.map((t) => [t.name, tool({ description: t.description, inputSchema: t.schema, execute: t.run })]));

  /** One run of `scenario` through `api` ('generate' | 'stream' | 'agent'), guarded by `guard` (or not). */
  async function run(scenario, { guard, api = 'generate', steps = 40, extra = {}, onProvider } = {}) {
    const srv = await startChatServer(scenario.model);
    const provider = createOpenAICompatible({ name: 'scripted', baseURL: srv.url, apiKey: 'test-key', includeUsage: true });
    onProvider?.(provider);
    const base = {
      model: provider('scripted-model'),
      tools: toolsOf(scenario),
      stopWhen: stepCountIs(steps),
      ...extra,
    };
    try {
      let result;
      if (api === 'agent') {
        const settings = { ...base, instructions: scenario.instructions };
        const agent = new ToolLoopAgent(guard ? guard.wrapAgent(settings) : settings);
        result = await agent.generate({ prompt: scenario.input });
      } else {
        const options = { ...base, system: scenario.instructions, prompt: scenario.input };
        const wrapped = guard ? guard.wrap(options) : options;
        if (api === 'stream') {
          const stream = streamText(wrapped);
          await stream.consumeStream();
          result = { steps: await stream.steps, text: await stream.text };
        } else {
          result = await generateText(wrapped);
        }
      }
      assert.deepEqual(srv.errors, []);
      const calls = srv.responses.reduce((n, r) => n + (r.choices[0].message.tool_calls?.length ?? 0), 0);
      const inputTokens = srv.responses.reduce((n, r) => n + r.usage.prompt_tokens, 0);
      return { result, srv, calls, requests: srv.requests.length, inputTokens };
    } finally {
      await srv.close();
    }
  }

  describe(`AI SDK ${label} adapter (doom-loop-wasm/ai-sdk)`, { skip }, () => {
    test('billing agent, no detection: runs to stopWhen (40 requests, 40 failed calls)', async () => {
      const scenario = billingScenario();
      const r = await run(scenario);
      assert.equal(r.requests, 40);
      assert.equal(scenario.executions.length, 40);
    });

    for (const api of ['generate', 'stream', 'agent']) {
      test(`billing agent (${api}): two calls run, three refused, stopped at the reference's turn (streak 6), 6 requests`, async () => {
        const { createDoomLoop } = await adapter();
        const scenario = billingScenario();
        const guard = createDoomLoop({ doomLoop: true });
        const r = await run(scenario, { guard, api });
        assert.equal(r.requests, 6);
        assert.equal(r.calls, 6);
        assert.equal(scenario.executions.length, 2);
        const halt = guard.haltVerdict();
        assert.equal(halt?.action, 'stop');
        assert.equal(halt.streak, 6);
        assert.deepEqual(guard.verdicts().map((v) => `${v.action}@${v.streak}`), ['observe@2', 'block@3', 'block@4', 'block@5', 'stop@6']);
        // What the model read: two timeouts, then the verdict text for each refused call.
        const last = r.srv.requests.at(-1);
        const outputs = toolMessages(last).map((m) => m.content);
        assert.equal(outputs.length, 5);
        assert.ok(outputs.slice(0, 2).every((o) => o.includes(BILLING_TIMEOUT_MESSAGE)));
        assert.ok(outputs.slice(2).every((o) => o.includes('get_invoice') && !o.includes('timed out')), outputs[2]);
        assert.equal(guard.getState().tools.get_invoice.streak, 6);
      });
    }

    test('a parallel fan-out of three identical calls counts once per response', async () => {
      const { createDoomLoop } = await adapter();
      const scenario = billingScenario({ fanOut: 3 });
      const guard = createDoomLoop({ doomLoop: true });
      const r = await run(scenario, { guard });
      assert.equal(r.requests, 6);
      assert.equal(scenario.executions.length, 6); // rounds 1 and 2, three calls each
      assert.equal(guard.haltVerdict()?.streak, 6);
      assert.equal(guard.getState().tools.get_invoice.streak, 6);
    });

    test('paging agent: stopped after two pages by the defaults, completes under RECOMMENDED_DOOM_LOOP_OPTION', async () => {
      const { createDoomLoop } = await adapter();
      const { RECOMMENDED_DOOM_LOOP_OPTION } = await main();
      const plain = pagingAgent();
      const guardDefaults = createDoomLoop({ doomLoop: true });
      await run(plain, { guard: guardDefaults });
      assert.equal(plain.executions.length, 2);
      assert.equal(guardDefaults.haltVerdict()?.action, 'stop');

      const agent = pagingAgent();
      const guard = createDoomLoop({ doomLoop: RECOMMENDED_DOOM_LOOP_OPTION });
      const r = await run(agent, { guard });
      assert.equal(agent.executions.length, 10);
      assert.equal(r.result.text, 'Found the bug in part 10.');
      assert.equal(guard.haltVerdict(), null);
      assert.ok(guard.verdicts().every((v) => v.action === 'observe'), JSON.stringify(guard.verdicts()));
    });

    test('edit-then-test agent: the reference defaults refuse the 3rd run_tests, RECOMMENDED_DOOM_LOOP_OPTION completes', async () => {
      const { createDoomLoop } = await adapter();
      const { RECOMMENDED_DOOM_LOOP_OPTION } = await main();
      const ref = editThenTestAgent();
      const refGuard = createDoomLoop({ doomLoop: true });
      await run(ref, { guard: refGuard });
      assert.deepEqual(ref.executions, ['fix 1', 'run_tests', 'fix 2', 'run_tests', 'fix 3', 'fix 4', 'fix 5', 'fix 6']);
      assert.equal(refGuard.haltVerdict()?.streak, 6);

      const agent = editThenTestAgent();
      const guard = createDoomLoop({ doomLoop: RECOMMENDED_DOOM_LOOP_OPTION });
      const r = await run(agent, { guard, api: 'stream' });
      assert.equal(r.result.text, 'All tests pass.');
      assert.equal(agent.executions.filter((e) => e === 'run_tests').length, 6);
      assert.equal(guard.haltVerdict(), null);
    });

    test('a run persisted mid-streak and resumed continues the streak', async () => {
      const { createDoomLoop } = await adapter();
      const first = billingScenario();
      const guard1 = createDoomLoop({ doomLoop: true });
      await run(first, { guard: guard1, steps: 2 });
      assert.equal(first.executions.length, 2);
      const saved = JSON.parse(JSON.stringify(guard1.getState()));
      assert.equal(saved.tools.get_invoice.streak, 2);

      const second = billingScenario();
      const guard2 = createDoomLoop({ doomLoop: true, state: saved });
      const r = await run(second, { guard: guard2 });
      assert.equal(second.executions.length, 0); // streak 3, 4, 5 refused, 6 stops
      assert.equal(r.requests, 4);
      assert.equal(guard2.haltVerdict()?.streak, 6);
    });

    test('a corrupt persisted state: fail-open restore (one warning), then detection as from scratch', async () => {
      const { createDoomLoop } = await adapter();
      const scenario = billingScenario();
      const { value: r, warnings } = await captureWarnings(async () => {
        const guard = createDoomLoop({ doomLoop: true, state: 'not a detector state' });
        const out = await run(scenario, { guard });
        return { ...out, guard };
      });
      assert.deepEqual(warnings, ['[DoomLoop] Ignoring invalid persisted doom-loop state']);
      assert.equal(scenario.executions.length, 2);
      assert.equal(r.requests, 6);
      assert.equal(r.guard.haltVerdict()?.streak, 6);
    });

    test('an internal error: observe-only for the run, one warning, the run continues', async () => {
      const { createDoomLoop } = await adapter();
      const scenario = billingScenario();
      const guard = createDoomLoop({ doomLoop: true });
      guard.session.onResponse = () => {
        throw new Error('injected');
      };
      const { value: r, warnings } = await captureWarnings(() => run(scenario, { guard, steps: 8 }));
      assert.equal(warnings.length, 1, warnings.join('\n'));
      assert.match(warnings[0], /internal error/);
      assert.equal(r.requests, 8);
      assert.equal(scenario.executions.length, 8);
    });

    test('an `ai` major outside 6.x / 7.x: a clear error naming the supported versions', async () => {
      const { createDoomLoop } = await adapter();
      const guard = createDoomLoop();
      const model = guard.wrapModel({ specificationVersion: 'v3', provider: 'p', modelId: 'm', doGenerate: async () => ({ content: [] }) });
      await assert.rejects(model.doGenerate({ headers: { 'user-agent': 'ai/5.0.44' }, prompt: [] }), /supports the AI SDK \(`ai`\) 6\.x, 7\.x; this run uses ai 5\.x/);
      // Streaming calls carry no user agent: the step's model specification (ai 5 resolves to v2) is checked first.
      const prepare = createDoomLoop().wrap({}).prepareStep;
      await assert.rejects(prepare({ model: { specificationVersion: 'v2', doGenerate() {} }, stepNumber: 0, steps: [], messages: [] }), /6\.x, 7\.x; this run uses ai 5\.x \(language model specification v2\)/);
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
      // steer@3 and escalate@4 each add their verdict text to exactly the next request.
      const systems = r.srv.requests.map((b) => b.messages[0].content);
      const steered = systems.map((s, i) => [s, i]).filter(([s]) => s !== scenario.instructions);
      assert.deepEqual(steered.map(([, i]) => i), [3, 4], JSON.stringify(systems));
      const [steer, escalate] = guard.verdicts().filter((v) => v.action === 'steer' || v.action === 'escalate');
      assert.equal(steered[0][0], `${scenario.instructions}\n\n${steer.message}`);
      assert.ok(steered[1][0].startsWith(`${scenario.instructions}\n\n${escalate.message}`));
      // The escalated request, and only it, runs on the escalation model.
      const models = r.srv.requests.map((b) => b.model);
      assert.deepEqual(models.map((m, i) => [m, i]).filter(([m]) => m === 'strong-model').map(([, i]) => i), [4], JSON.stringify(models));
      assert.equal(guard.haltVerdict()?.streak, 7);
    });
  });
}

export { BILLING_INVOICE_ID };
