// doom-loop-wasm/langchain against the real LangChain v1 agent loop
// (langchain 1.5.14 createAgent, @langchain/anthropic ChatAnthropic, LangGraph
// MemorySaver), only the model scripted by a local Anthropic Messages server.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { MemorySaver } from '@langchain/langgraph';
import { startAnthropicServer, toolResults, toolResultText, toolUse } from '../anthropic-server.mjs';
import {
  BILLING_GIVE_UP_TEXT,
  BILLING_TIMEOUT_MESSAGE,
  MODEL_CALL_LIMIT,
  billingAgent,
  callsIssued,
  editThenTestAgent,
  loadAdapter,
  pagingAgent,
  runAgent,
} from './agents.mjs';
import { billingRun } from '../../../scripts/demo-langchain.mjs';

const { doomLoopMiddleware, SUPPORTED_VERSIONS, UnsupportedLangChainVersionError } = await loadAdapter();
const { RECOMMENDED_DOOM_LOOP_OPTION, DoomLoopSession } = await import(process.env.DOOM_LOOP_MAIN ?? new URL('../../../pkg/node.mjs', import.meta.url).href);

const guarded = (doomLoop, extra = {}) => {
  const verdicts = [];
  return { verdicts, middleware: doomLoopMiddleware({ doomLoop, onDetected: (v) => verdicts.push(v), ...extra }) };
};

describe('langchain: billing agent (the identical failing call every response)', () => {
  let baselineTokens;
  test('without the middleware LangChain runs to its model-call cap: 40 requests, 40 executions', async () => {
    const scenario = billingAgent();
    const { srv } = await runAgent(scenario);
    baselineTokens = srv.inputTokens();
    assert.equal(srv.requests.length, MODEL_CALL_LIMIT);
    assert.equal(scenario.executions.length, MODEL_CALL_LIMIT);
    // LangChain's own error text reaches the model.
    assert.equal(toolResultText(toolResults(srv.requests[1])[0]), `Error: ${BILLING_TIMEOUT_MESSAGE}\n Please fix your mistakes.`);
  });

  test('doomLoop: true — calls 1–2 run, 3–5 refused with the verdict text, 6 stops the run: 6 requests, 2 executions', async () => {
    const scenario = billingAgent();
    const { verdicts, middleware } = guarded(true);
    const { srv, result } = await runAgent(scenario, { middleware: [middleware] });
    assert.equal(srv.requests.length, 6);
    assert.equal(callsIssued(srv), 6);
    assert.equal(scenario.executions.length, 2);
    for (const k of [1, 2]) assert.equal(toolResultText(toolResults(srv.requests[k]).at(-1)), `Error: ${BILLING_TIMEOUT_MESSAGE}\n Please fix your mistakes.`);
    // Calls 3–5 never ran: the model read the verdict of its streak instead.
    for (const k of [3, 4, 5]) assert.equal(toolResultText(toolResults(srv.requests[k]).at(-1)), verdicts.find((v) => v.streak === k).message);
    const stop = verdicts.at(-1);
    assert.equal(stop.action, 'stop');
    assert.equal(stop.streak, 6);
    assert.equal(stop.toolName, 'get_invoice');
    // The thread ends well formed: the pending call answered, then an AI message with the verdict.
    const [toolMsg, aiMsg] = result.messages.slice(-2);
    assert.equal(toolMsg.type, 'tool');
    assert.equal(toolMsg.status, 'error');
    assert.equal(aiMsg.type, 'ai');
    assert.equal(aiMsg.content, toolMsg.content);
    assert.equal(typeof result.doomLoop, 'object');
  });

  test('the demo row: billingRun(true) (the run without is the first test here)', async () => {
    const on = await billingRun(true);
    assert.deepEqual({ ...on, inputTokens: undefined }, { callsIssued: 6, executed: 2, refused: 4, requests: 6, inputTokens: undefined, endedBy: 'doom_loop', because: 'stop verdict, streak 6' });
    assert.ok(on.inputTokens * 10 < baselineTokens);
  });

  test('a parallel fan-out of identical calls in one response counts once', async () => {
    const scenario = billingAgent({ fanOut: 3 });
    const { verdicts, middleware } = guarded(true);
    const { srv } = await runAgent(scenario, { middleware: [middleware] });
    // Rounds 1 and 2 run all three calls; the round (not the call) is what the streak counts.
    assert.equal(scenario.executions.length, 6);
    assert.equal(srv.requests.length, 6);
    assert.equal(verdicts.at(-1).streak, 6);
    assert.equal(verdicts.at(-1).action, 'stop');
  });
});

describe('langchain: one middleware serving concurrent threads', () => {
  test('two threads of one agent whose responses reuse call ids (call_0) are judged apart: the looping one is stopped, the other runs to its end', async () => {
    const { createAgent, tool } = await import('langchain');
    const { z } = await import('zod');
    const { chatModel } = await import('./agents.mjs');
    const billing = billingAgent();
    const pages = [];
    const readPage = tool(async ({ page }) => { pages.push(page); return `page ${page}: lines ${page * 50}-${page * 50 + 49}`; }, {
      name: 'read_page', description: 'Read one page of the log.', schema: z.object({ page: z.number() }),
    });
    const PAGES = 8;
    // Every response numbers its call `call_0`, as providers and proxies that number calls per response do.
    const script = (body) => {
      const first = body.messages[0];
      const question = typeof first.content === 'string' ? first.content : first.content.map((c) => c.text ?? '').join('');
      if (question.includes('invoice')) return toolUse('get_invoice', { invoice_id: 'INV-2291' }, 'call_0');
      const read = toolResults(body).length;
      return read >= PAGES ? `Read all ${PAGES} pages.` : toolUse('read_page', { page: read + 1 }, 'call_0');
    };
    // Both threads' responses of a step are declared before either's tools run: each tool
    // call waits (in a middleware outside ours) for the other thread's call of that step.
    const { createMiddleware } = await import('langchain');
    const waiting = new Map(); // step → the releases of the calls waiting at it
    let threads = 2;
    const release = () => {
      for (const [step, list] of waiting) if (list.length >= threads) { waiting.delete(step); list.forEach((go) => go()); }
    };
    const lockstep = createMiddleware({
      name: 'Lockstep',
      wrapToolCall: async (request, handler) => {
        const step = request.state.messages.filter((m) => m.type === 'ai' || m._getType?.() === 'ai').length;
        await new Promise((go) => { waiting.set(step, [...(waiting.get(step) ?? []), go]); release(); });
        return handler(request);
      },
    });
    const srv = await startAnthropicServer(script);
    try {
      const verdicts = [];
      const middleware = doomLoopMiddleware({ doomLoop: true, onDetected: (v) => verdicts.push(v) });
      const agent = createAgent({ model: chatModel(srv), tools: [...billing.tools, readPage], middleware: [lockstep, middleware] });
      const ask = (content) => agent.invoke({ messages: [{ role: 'user', content }] }, { recursionLimit: 200 }).finally(() => { threads--; release(); });
      const [a, b] = await Promise.all([ask(billing.input), ask('Read the log, page by page.')]);
      // The looping thread: calls 1–2 run, 3–5 refused, the 6th stops it — as when it runs alone.
      assert.equal(billing.executions.length, 2);
      assert.equal(a.messages.at(-1).content, verdicts.find((v) => v.action === 'stop').message);
      assert.deepEqual(verdicts.map((v) => `${v.toolName}@${v.streak}`), ['get_invoice@2', 'get_invoice@3', 'get_invoice@4', 'get_invoice@5', 'get_invoice@6']);
      // The paging thread: every page read, none refused, none of the other thread's results.
      assert.deepEqual(pages, Array.from({ length: PAGES }, (_, i) => i + 1));
      assert.equal(b.messages.at(-1).content, `Read all ${PAGES} pages.`);
      assert.ok(!b.messages.some((m) => m.type === 'tool' && m.status === 'error'));
    } finally {
      await srv.close();
    }
  });

  test("two threads whose last message is one shared object: each model request gets its own thread's guidance", async () => {
    // The hooks driven as LangChain drives them (each hook's state update applied).
    const mw = doomLoopMiddleware({ doomLoop: { ladder: { observe: false, steer: 2, block: false, stop: 10 } } });
    const apply = (state, update) => (update?.doomLoop !== undefined ? { ...state, doomLoop: update.doomLoop } : state);
    let a = { messages: [{ type: 'human', content: 'why was I charged twice?' }] };
    a = apply(a, mw.beforeAgent(a));
    for (let step = 1; step <= 2; step++) {
      a = apply(a, mw.beforeModel(a));
      const call = { id: `call_${step}`, name: 'get_invoice', args: { invoice_id: 'INV-2291' } };
      a = { ...a, messages: [...a.messages, { type: 'ai', content: '', tool_calls: [call] }] };
      a = apply(a, mw.afterModel.hook(a));
      const msg = await mw.wrapToolCall({ toolCall: call, state: a }, async () => ({ type: 'tool', content: 'error: timed out', tool_call_id: call.id, status: 'success' }));
      a = { ...a, messages: [...a.messages, msg] };
    }
    // Thread A now has steer guidance queued. One message object ends both threads' input.
    const shared = { type: 'human', content: 'Please go on.' };
    a = { ...a, messages: [...a.messages, shared] };
    let b = { messages: [shared] };
    a = apply(a, mw.beforeAgent(a));
    b = apply(b, mw.beforeAgent(b));
    a = apply(a, mw.beforeModel(a));
    b = apply(b, mw.beforeModel(b));
    const prompts = {};
    for (const [name, state] of [['a', a], ['b', b]]) {
      await mw.wrapModelCall({ messages: state.messages, state, systemPrompt: 'You are a billing agent.' }, async (request) => { prompts[name] = request.systemPrompt; return { type: 'ai', content: 'ok' }; });
    }
    assert.ok(prompts.a.startsWith('You are a billing agent.\n\n'), prompts.a);
    assert.match(prompts.a, /get_invoice/);
    assert.equal(prompts.b, 'You are a billing agent.');
  });
});

describe('langchain: per-tool loop identity (loopKeys)', () => {
  test('a model alternating "INV-2291" / "inv-2291 " evades the default identity, a normalising loopKey catches it', async () => {
    const evading = billingAgent({ alternate: true, giveUpAfter: 12 });
    await runAgent(evading, { middleware: [doomLoopMiddleware({ doomLoop: true })] });
    assert.equal(evading.executions.length, 12);
    const caught = billingAgent({ alternate: true });
    const { srv } = await runAgent(caught, { middleware: [doomLoopMiddleware({ doomLoop: true, loopKeys: { get_invoice: (args) => String(args.invoice_id).trim().toUpperCase() } })] });
    assert.equal(caught.executions.length, 2);
    assert.equal(srv.requests.length, 6);
  });

  test('loopKey false exempts a tool', async () => {
    const scenario = billingAgent({ giveUpAfter: 10 });
    await runAgent(scenario, { middleware: [doomLoopMiddleware({ doomLoop: true, loopKeys: { get_invoice: false } })] });
    assert.equal(scenario.executions.length, 10);
  });
});

describe('langchain: agents that work complete under RECOMMENDED_DOOM_LOOP_OPTION', () => {
  test('paging agent (no-argument scroll_down, a new page each call)', async () => {
    const agent = pagingAgent();
    const { verdicts, middleware } = guarded(RECOMMENDED_DOOM_LOOP_OPTION);
    const { srv, result } = await runAgent(agent, { middleware: [middleware] });
    assert.equal(agent.executions.length, 10);
    assert.equal(srv.requests.length, 11);
    assert.equal(result.messages.at(-1).content, 'Found the bug in part 10.');
    assert.ok(!verdicts.some((v) => v.action === 'stop' || v.action === 'block'));
  });

  test('paging agent under the reference defaults is refused (contrast)', async () => {
    const agent = pagingAgent();
    const { middleware } = guarded(true);
    await runAgent(agent, { middleware: [middleware] });
    assert.ok(agent.executions.length < 10);
  });

  test('edit-then-test agent (separate edit_file and run_tests)', async () => {
    const agent = editThenTestAgent();
    const { verdicts, middleware } = guarded(RECOMMENDED_DOOM_LOOP_OPTION);
    const { result } = await runAgent(agent, { middleware: [middleware] });
    assert.equal(agent.executions.filter((e) => e === 'run_tests').length, 6);
    assert.equal(result.messages.at(-1).content, 'All tests pass.');
    assert.ok(!verdicts.some((v) => v.action === 'stop' || v.action === 'block'));
  });
});

describe('langchain: steer and escalate', () => {
  test('steer guidance goes into the next system prompt only; escalate runs one request on the named model', async () => {
    const scenario = billingAgent();
    const srv = await startAnthropicServer(scenario.model);
    try {
      const { chatModel } = await import('./agents.mjs');
      const { ChatAnthropic } = await import('@langchain/anthropic');
      const frontier = new ChatAnthropic({ apiKey: 'test-key', anthropicApiUrl: srv.url, model: 'claude-frontier', maxRetries: 0 });
      const verdicts = [];
      const middleware = doomLoopMiddleware({
        doomLoop: { ladder: { observe: false, steer: 2, escalate: 3, block: false, stop: 5 }, escalation: { model: 'frontier/model', maxEscalations: 1 } },
        models: { 'frontier/model': frontier },
        onDetected: (v) => verdicts.push(v),
      });
      const { createAgent } = await import('langchain');
      const agent = createAgent({ model: chatModel(srv), tools: scenario.tools, systemPrompt: scenario.systemPrompt, middleware: [middleware] });
      await agent.invoke({ messages: [{ role: 'user', content: scenario.input }] });
      assert.deepEqual(verdicts.map((v) => `${v.action}@${v.streak}`), ['steer@2', 'escalate@3', 'steer@4', 'stop@5']);
      const system = (body) => (typeof body.system === 'string' ? body.system : (body.system ?? []).map((b) => b.text).join(''));
      assert.equal(srv.requests.length, 5);
      assert.equal(system(srv.requests[0]), scenario.systemPrompt);
      assert.ok(system(srv.requests[2]).startsWith(`${scenario.systemPrompt}\n\n`));
      assert.ok(system(srv.requests[2]).includes(verdicts[0].message));
      assert.ok(system(srv.requests[3]).includes(verdicts[1].message));
      assert.equal(system(srv.requests[4]).includes(verdicts[1].message), false);
      assert.deepEqual(srv.requests.map((b) => b.model), ['claude-scripted', 'claude-scripted', 'claude-scripted', 'claude-frontier', 'claude-scripted']);
    } finally {
      await srv.close();
    }
  });
});

describe('langchain: state persisted by a LangGraph checkpointer', () => {
  test('a thread persisted mid-streak and resumed (new agent, new middleware) continues the streak', async () => {
    const checkpointer = new MemorySaver();
    // Requests 0–1: the identical call; 2: the model gives up for now; then it tries again.
    const script = (body, i) => (i === 2 ? 'The billing service is down; I will retry.' : toolUse('get_invoice', { invoice_id: 'INV-2291' }));
    const srv = await startAnthropicServer(script);
    try {
      const first = billingAgent();
      await runAgent(first, { middleware: [doomLoopMiddleware({ doomLoop: true })], checkpointer, threadId: 'customer-7', srv });
      assert.equal(first.executions.length, 2);
      assert.equal(srv.requests.length, 3);

      const second = billingAgent();
      const verdicts = [];
      const { result } = await runAgent(second, {
        middleware: [doomLoopMiddleware({ doomLoop: true, onDetected: (v) => verdicts.push(v) })],
        checkpointer,
        threadId: 'customer-7',
        input: 'Please try again.',
        srv,
      });
      // The streak goes on at 3: refused at once, stopped at 6.
      assert.equal(second.executions.length, 0);
      assert.equal(srv.requests.length, 3 + 4);
      assert.deepEqual(verdicts.map((v) => v.streak), [3, 4, 5, 6]);
      assert.equal(verdicts.at(-1).action, 'stop');
      assert.equal(typeof result.doomLoop, 'object');
    } finally {
      await srv.close();
    }
  });

  test('a corrupt state blob restores fail-open (a fresh detector; the run goes on)', async () => {
    const scenario = billingAgent();
    const srv = await startAnthropicServer(scenario.model);
    try {
      const { createAgent } = await import('langchain');
      const { chatModel } = await import('./agents.mjs');
      const agent = createAgent({ model: chatModel(srv), tools: scenario.tools, middleware: [doomLoopMiddleware({ doomLoop: true })] });
      await agent.invoke({ messages: [{ role: 'user', content: scenario.input }], doomLoop: { version: 'nonsense', tools: 42 } });
      assert.equal(scenario.executions.length, 2);
      assert.equal(srv.requests.length, 6);
    } finally {
      await srv.close();
    }
  });
});

describe('langchain: bad input', () => {
  test('an internal error turns detection off for the run with one warning; the run continues', async (t) => {
    const warn = t.mock.method(console, 'warn', () => {});
    const original = DoomLoopSession.prototype.onResponse;
    DoomLoopSession.prototype.onResponse = function () {
      throw new Error('injected');
    };
    try {
      const scenario = billingAgent({ giveUpAfter: 8 });
      const { srv, result } = await runAgent(scenario, { middleware: [doomLoopMiddleware({ doomLoop: true })] });
      assert.equal(srv.requests.length, 9);
      assert.equal(scenario.executions.length, 8);
      assert.equal(result.messages.at(-1).content, BILLING_GIVE_UP_TEXT);
    } finally {
      DoomLoopSession.prototype.onResponse = original;
    }
    const ours = warn.mock.calls.filter((c) => String(c.arguments[0]).includes('doom-loop-wasm/langchain'));
    assert.equal(ours.length, 1);
    assert.match(String(ours[0].arguments[0]), /injected/);
  });

  test('a LangChain without the v1 hook shapes gets an error naming the supported versions', () => {
    const mw = doomLoopMiddleware();
    assert.equal(SUPPORTED_VERSIONS.langchain, '>=1.0.0 <2.0.0');
    // LangChain 0.x agents kept tool calls in additional_kwargs; v1 hooks always see `tool_calls`.
    const legacy = { messages: [{ type: 'ai', content: '', additional_kwargs: { tool_calls: [] } }] };
    assert.throws(() => mw.afterModel.hook(legacy, {}), (e) => e instanceof UnsupportedLangChainVersionError && /langchain >=1\.0\.0 <2\.0\.0/.test(e.message));
    assert.throws(() => mw.beforeAgent({}), /supports langchain >=1\.0\.0 <2\.0\.0/);
  });

  test('doomLoop: false is a middleware that does nothing', async () => {
    const scenario = billingAgent({ giveUpAfter: 8 });
    const { srv } = await runAgent(scenario, { middleware: [doomLoopMiddleware({ doomLoop: false })] });
    assert.equal(srv.requests.length, 9);
  });
});
