// doom-loop-wasm/openai-agents against the real @openai/agents 0.20.0 Runner
// and its Responses model, only the model scripted (local Responses server).

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { RunState } from '@openai/agents';
import { functionCall, startScriptedServer } from '../scripted-server.mjs';
import { MAX_TURNS, SDK_TOOL_ERROR, billingAgent, callsIssued, editThenTestAgent, lastOutput, loadAdapter, pagingAgent, runAgent, runnerFor } from './agents.mjs';

const { withDoomLoop, checkRunStateVersion, SUPPORTED_VERSIONS, UnsupportedOpenAIAgentsVersionError } = await loadAdapter();
const { RECOMMENDED_DOOM_LOOP_OPTION } = await import(process.env.DOOM_LOOP_MAIN ?? new URL('../../../pkg/node.mjs', import.meta.url).href);

describe('openai-agents: billing agent', () => {
  test('without the adapter the run goes to maxTurns (40 requests, 40 executions)', async () => {
    const scenario = billingAgent();
    const { srv, error } = await runAgent(scenario, scenario.agent);
    assert.equal(error?.name, 'MaxTurnsExceededError');
    assert.equal(srv.requests.length, MAX_TURNS);
    assert.equal(scenario.executions.length, MAX_TURNS);
  });

  test('doomLoop: true — calls 1–2 run, 3–5 refused with the verdict text, 6 ends the run with the verdict: 6 requests, 2 executions', async () => {
    const scenario = billingAgent();
    const verdicts = [];
    const agent = withDoomLoop(scenario.agent, { doomLoop: true, onDetected: (v) => verdicts.push(v) });
    const { srv, result, error } = await runAgent(scenario, agent);
    assert.equal(error, undefined);
    assert.equal(srv.requests.length, 6);
    assert.equal(callsIssued(srv), 6);
    assert.equal(scenario.executions.length, 2);
    for (const k of [1, 2]) assert.equal(lastOutput(srv.requests[k]), SDK_TOOL_ERROR);
    for (const k of [3, 4, 5]) assert.equal(lastOutput(srv.requests[k]), verdicts.find((v) => v.streak === k).message);
    const stop = verdicts.at(-1);
    assert.equal(stop.action, 'stop');
    assert.equal(stop.streak, 6);
    // The run ends with the verdict as its final output; the state rides in the run context.
    assert.ok(typeof result.finalOutput === 'string' && result.finalOutput.length > 0);
    assert.equal(typeof JSON.parse(result.state.toString()).context.context.doomLoop, 'object');
  });

  test('a parallel fan-out of identical calls in one response counts once', async () => {
    const scenario = billingAgent({ fanOut: 3 });
    const verdicts = [];
    const { srv } = await runAgent(scenario, withDoomLoop(scenario.agent, { onDetected: (v) => verdicts.push(v) }));
    assert.equal(scenario.executions.length, 6);
    assert.equal(srv.requests.length, 6);
    assert.equal(verdicts.at(-1).streak, 6);
  });
});

describe('openai-agents: agents that work complete under RECOMMENDED_DOOM_LOOP_OPTION', () => {
  test('paging agent', async () => {
    const scenario = pagingAgent();
    const { result } = await runAgent(scenario, withDoomLoop(scenario.agent, { doomLoop: RECOMMENDED_DOOM_LOOP_OPTION }));
    assert.equal(scenario.executions.length, 10);
    assert.equal(result.finalOutput, 'Found the bug in part 10.');
  });

  test('edit-then-test agent', async () => {
    const scenario = editThenTestAgent();
    const { result } = await runAgent(scenario, withDoomLoop(scenario.agent, { doomLoop: RECOMMENDED_DOOM_LOOP_OPTION }));
    assert.equal(scenario.executions.filter((e) => e === 'run_tests').length, 6);
    assert.equal(result.finalOutput, 'All tests pass.');
  });
});

describe('openai-agents: steer, and escalate (not available)', () => {
  test('steer guidance goes into the next request\'s instructions only; an escalating option warns the rung is dead', async (t) => {
    const warn = t.mock.method(console, 'warn', () => {});
    const scenario = billingAgent();
    const verdicts = [];
    const agent = withDoomLoop(scenario.agent, {
      doomLoop: { ladder: { observe: false, steer: 2, escalate: 3, block: false, stop: 5 }, escalation: { model: 'frontier/model' } },
      onDetected: (v) => verdicts.push(v),
    });
    const { srv } = await runAgent(scenario, agent);
    assert.ok(warn.mock.calls.some((c) => /escalat/i.test(String(c.arguments.join(' ')))));
    const steer = verdicts.find((v) => v.action === 'steer');
    assert.equal(steer.streak, 2);
    const base = 'You are a billing support agent. Use get_invoice to look up invoices.';
    assert.equal(srv.requests[0].instructions, base);
    assert.equal(srv.requests[2].instructions, `${base}\n\n${steer.message}`);
    assert.equal(verdicts.at(-1).action, 'stop');
    assert.ok(srv.requests.every((b) => b.model === 'gpt-4o-mini'));
  });
});

describe('openai-agents: state in the RunState', () => {
  test('a run serialized mid-streak (RunState.toString) and resumed by a new wrapped agent continues the streak', async () => {
    const srv = await startScriptedServer(() => functionCall('get_invoice', { invoice_id: 'INV-2291' }));
    try {
      const first = billingAgent();
      const run1 = await runAgent(first, withDoomLoop(first.agent), { srv, maxTurns: 2 });
      assert.equal(run1.error?.name, 'MaxTurnsExceededError');
      assert.equal(first.executions.length, 2);
      const saved = run1.error.state.toString();
      checkRunStateVersion(saved);
      assert.equal(typeof JSON.parse(saved).context.context.doomLoop, 'object');

      const second = billingAgent();
      const verdicts = [];
      const agent = withDoomLoop(second.agent, { onDetected: (v) => verdicts.push(v) });
      const state = await RunState.fromString(agent, saved);
      const result = await runnerFor(srv).run(agent, state, { maxTurns: MAX_TURNS });
      assert.equal(second.executions.length, 0);
      assert.deepEqual(verdicts.map((v) => v.streak), [3, 4, 5, 6]);
      assert.equal(verdicts.at(-1).action, 'stop');
      assert.equal(typeof result.finalOutput, 'string');
    } finally {
      await srv.close();
    }
  });

  test('a corrupt state in the run context restores fail-open', async () => {
    const scenario = billingAgent();
    const { srv } = await runAgent(scenario, withDoomLoop(scenario.agent), { context: { doomLoop: { tools: [1, 2, 3], round: 'x' } } });
    assert.equal(scenario.executions.length, 2);
    assert.equal(srv.requests.length, 6);
  });
});

describe('openai-agents: bad input', () => {
  test('an internal error turns detection off with one warning; the run continues', async (t) => {
    const warn = t.mock.method(console, 'warn', () => {});
    const scenario = billingAgent({ giveUpAfter: 8 });
    // A context whose doomLoop cannot be written: the adapter's first save throws.
    const context = Object.freeze({ user: 'u-1' });
    const { srv, result } = await runAgent(scenario, withDoomLoop(scenario.agent), { context });
    assert.equal(scenario.executions.length, 8);
    assert.equal(srv.requests.length, 9);
    assert.equal(typeof result.finalOutput, 'string');
    const ours = warn.mock.calls.filter((c) => String(c.arguments[0]).includes('doom-loop-wasm/openai-agents'));
    assert.equal(ours.length, 1);
  });

  test('a RunState of another schema, or a non-agent: an error naming the supported versions', () => {
    assert.equal(SUPPORTED_VERSIONS['@openai/agents'], '>=0.20.0 <0.21.0');
    assert.throws(() => checkRunStateVersion(JSON.stringify({ $schemaVersion: '1.0' })), (e) => e instanceof UnsupportedOpenAIAgentsVersionError && /@openai\/agents >=0\.20\.0 <0\.21\.0/.test(e.message));
    assert.throws(() => withDoomLoop({ name: 'old' }), /supports @openai\/agents >=0\.20\.0/);
  });
});
