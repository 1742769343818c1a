// doom-loop-wasm/claude-agent-sdk against the real Claude Agent SDK query()
// (0.3.333) and the Claude Code binary it ships, offline against the local
// scripted Anthropic Messages server (only the model is scripted).

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { messagesText, startAnthropicServer, toolResults, toolResultText, toolUse } from '../anthropic-server.mjs';
import { BILLING_TIMEOUT_MESSAGE, billingAgent, callsIssued, editThenTestAgent, loadAdapter, pagingAgent, runQuery } from './agents.mjs';

const { doomLoopHooks, checkClaudeCodeVersion, SUPPORTED_VERSIONS, UnsupportedClaudeCodeVersionError } = await loadAdapter();
const { RECOMMENDED_DOOM_LOOP_OPTION } = await import(process.env.DOOM_LOOP_MAIN ?? new URL('../../../pkg/node.mjs', import.meta.url).href);

const lastResult = (body) => toolResultText(toolResults(body).at(-1));

describe('claude-agent-sdk: billing agent', () => {
  test('doomLoop: true — calls 1–2 run, 3–5 denied with the verdict text, 6 ends the run (continue: false): 6 requests, 2 executions', async () => {
    const scenario = billingAgent();
    const verdicts = [];
    const dl = doomLoopHooks({ doomLoop: true, onDetected: (v) => verdicts.push(v) });
    const run = await runQuery(scenario, { hooks: dl.hooks });
    checkClaudeCodeVersion(run.init);
    assert.equal(run.srv.requests.length, 6);
    assert.equal(callsIssued(run.srv), 6);
    assert.equal(scenario.executions.length, 2);
    for (const k of [1, 2]) assert.equal(lastResult(run.srv.requests[k]), BILLING_TIMEOUT_MESSAGE);
    for (const k of [3, 4, 5]) assert.ok(lastResult(run.srv.requests[k]).endsWith(verdicts.find((v) => v.streak === k).message));
    const halt = dl.haltVerdict(run.sessionId);
    assert.equal(halt.action, 'stop');
    assert.equal(halt.streak, 6);
    assert.deepEqual(run.srv.errors, []);
  });

  test('a parallel fan-out of identical calls in one response counts once', async () => {
    const scenario = billingAgent({ fanOut: 3 });
    const dl = doomLoopHooks({ doomLoop: true });
    const run = await runQuery(scenario, { hooks: dl.hooks });
    assert.equal(scenario.executions.length, 6); // rounds 1 and 2 run all three
    assert.equal(run.srv.requests.length, 6);
    assert.equal(dl.haltVerdict(run.sessionId).streak, 6);
  });
});

describe('claude-agent-sdk: agents that work complete under RECOMMENDED_DOOM_LOOP_OPTION', () => {
  test('paging agent', async () => {
    const agent = pagingAgent();
    const dl = doomLoopHooks({ doomLoop: RECOMMENDED_DOOM_LOOP_OPTION });
    const run = await runQuery(agent, { hooks: dl.hooks });
    assert.equal(agent.executions.length, 10);
    assert.equal(run.result.result, 'Found the bug in part 10.');
    assert.equal(dl.haltVerdict(run.sessionId), null);
    // The run ended: its detector was freed at the SDK's end events (Stop, SessionEnd).
    assert.equal(dl.liveSessions(), 0);
  });

  test('edit-then-test agent', async () => {
    const agent = editThenTestAgent();
    const dl = doomLoopHooks({ doomLoop: RECOMMENDED_DOOM_LOOP_OPTION });
    const run = await runQuery(agent, { hooks: dl.hooks });
    assert.equal(agent.executions.filter((e) => e === 'run_tests').length, 6);
    assert.equal(run.result.result, 'All tests pass.');
  });
});

describe('claude-agent-sdk: steer', () => {
  test('steer guidance reaches the model with the next request (PostToolBatch additionalContext)', async () => {
    const scenario = billingAgent();
    const verdicts = [];
    const dl = doomLoopHooks({ doomLoop: { ladder: { observe: false, steer: 2, block: 4, stop: 5 } }, onDetected: (v) => verdicts.push(v) });
    const run = await runQuery(scenario, { hooks: dl.hooks });
    const steer = verdicts.find((v) => v.action === 'steer');
    assert.equal(steer.streak, 2);
    assert.equal(messagesText(run.srv.requests[1]).includes(steer.message), false);
    assert.ok(messagesText(run.srv.requests[2]).includes(steer.message));
    assert.equal(dl.haltVerdict(run.sessionId).streak, 5);
  });
});

describe('claude-agent-sdk: state by session id', () => {
  test('a session persisted mid-streak and resumed (resume: sessionId, new hooks, stored JSON) continues the streak', async () => {
    const script = (body, i) => (i === 2 ? 'The billing service is down; I will retry.' : toolUse('mcp__billing__get_invoice', { invoice_id: 'INV-2291' }));
    const srv = await startAnthropicServer(script);
    const home = mkdtempSync(join(tmpdir(), 'doomloop-cc-'));
    try {
      const saved = new Map();
      const store = { get: (id) => (saved.has(id) ? JSON.parse(saved.get(id)) : undefined), set: (id, state) => void saved.set(id, JSON.stringify(state)) };
      const first = billingAgent();
      const run1 = await runQuery(first, { hooks: doomLoopHooks({ doomLoop: true, store }).hooks, srv, home });
      assert.equal(first.executions.length, 2);
      assert.ok(saved.has(run1.sessionId));

      const second = billingAgent();
      const verdicts = [];
      const dl = doomLoopHooks({ doomLoop: true, store, onDetected: (v) => verdicts.push(v) });
      const run2 = await runQuery(second, { hooks: dl.hooks, srv, home, resume: run1.sessionId, prompt: 'Please try again.' });
      assert.equal(run2.sessionId, run1.sessionId);
      assert.equal(second.executions.length, 0);
      assert.deepEqual(verdicts.map((v) => v.streak), [3, 4, 5, 6]);
      assert.equal(dl.haltVerdict(run1.sessionId).action, 'stop');
    } finally {
      await srv.close();
      rmSync(home, { recursive: true, force: true });
    }
  });

  test('a corrupt stored state restores fail-open', async () => {
    const scenario = billingAgent();
    const dl = doomLoopHooks({ doomLoop: true, store: { get: () => ({ tools: 'garbage', version: -1 }), set: () => {} } });
    const run = await runQuery(scenario, { hooks: dl.hooks });
    assert.equal(scenario.executions.length, 2);
    assert.equal(run.srv.requests.length, 6);
  });
});

describe('claude-agent-sdk: bad input', () => {
  test('an internal error turns detection off with one warning; the run continues', async (t) => {
    const warn = t.mock.method(console, 'warn', () => {});
    const scenario = billingAgent({ giveUpAfter: 8 });
    const store = { get: () => undefined, set: () => { throw new Error('store down'); } };
    const run = await runQuery(scenario, { hooks: doomLoopHooks({ doomLoop: true, store }).hooks });
    assert.equal(scenario.executions.length, 8);
    assert.equal(run.srv.requests.length, 9);
    const ours = warn.mock.calls.filter((c) => String(c.arguments[0]).includes('doom-loop-wasm/claude-agent-sdk'));
    assert.equal(ours.length, 1);
    assert.match(String(ours[0].arguments[0]), /store down/);
  });

  test('a Claude Code outside the supported range: an error naming the supported versions', () => {
    assert.equal(SUPPORTED_VERSIONS['claude-code'], '>=2.1.0 <2.2.0');
    assert.throws(() => checkClaudeCodeVersion({ type: 'system', subtype: 'init', claude_code_version: '1.0.128' }), (e) => e instanceof UnsupportedClaudeCodeVersionError && /Claude Code >=2\.1\.0 <2\.2\.0/.test(e.message) && /1\.0\.128/.test(e.message));
    checkClaudeCodeVersion({ type: 'system', subtype: 'init', claude_code_version: '2.1.333' });
  });
});
