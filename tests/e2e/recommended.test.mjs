// End-to-end: `doomLoop: RECOMMENDED_DOOM_LOOP_OPTION` through the callModel
// adapter of the built package, against the real @openrouter/agent@0.8.0 loop
// over real HTTP to the scripted Responses server. The two shapes the
// reference interrupts although the agent makes progress — paging with a
// no-argument command, and edit-then-test through separate edit and test
// tools — stay quiet (same requests on the wire as a run without detection,
// every call executed); a call returning the same output every time is still
// stopped, exactly as the reference stops it.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { OpenRouter, stepCountIs, tool } from '@openrouter/agent';
import { z } from 'zod';
import { RECOMMENDED_DOOM_LOOP_OPTION, replayTranscript, withDoomLoop } from '../../pkg/node.mjs';
import { functionCall, inputText, startScriptedServer, text } from './scripted-server.mjs';
import { editThenTestAgent, pagingAgent } from './scenarios.mjs';

const MODEL = 'openai/gpt-4o-mini';

async function runCallModel({ script, request, doomLoop }) {
  const srv = await startScriptedServer(script);
  const client = new OpenRouter({ apiKey: 'test-key', serverURL: srv.url });
  const base = { model: MODEL, ...request };
  const input = doomLoop === undefined ? base : withDoomLoop(base, { doomLoop });
  try {
    const textOut = await client.callModel(input).getText();
    assert.deepEqual(srv.errors, [], 'scripted server errors');
    return { srv, input, text: textOut };
  } finally {
    await srv.close();
  }
}

const verdictsOf = (input) => input.getDoomLoopVerdicts().map((v) => `${v.detector}:${v.action}@${v.streak}`);
const interventions = (input) => verdictsOf(input).filter((v) => /:(block|stop)@/.test(v));

/** The same lookup with the same answer, forever. */
function sameOutputAgent() {
  const executions = [];
  const getInvoice = tool({
    name: 'get_invoice',
    inputSchema: z.object({ invoice_id: z.string() }),
    execute: async ({ invoice_id }) => {
      executions.push(invoice_id);
      return { invoice_id, status: 'not_found' };
    },
  });
  const model = (body) =>
    body.tool_choice === 'none' ? text('I could not find the invoice.') : functionCall('get_invoice', { invoice_id: 'INV-9' });
  return { executions, tools: [getInvoice], model, input: 'What is the status of INV-9?' };
}

const request = (agent) => ({ input: agent.input, tools: agent.tools, stopWhen: stepCountIs(40) });

/** The agent's run with RECOMMENDED is the run without detection: same wire, same executions. */
async function assertQuiet(make, expectedExecutions) {
  const plainAgent = make();
  const plain = await runCallModel({ script: plainAgent.model, request: request(plainAgent) });
  const agent = make();
  const run = await runCallModel({ script: agent.model, request: request(agent), doomLoop: RECOMMENDED_DOOM_LOOP_OPTION });
  assert.deepEqual(interventions(run.input), []);
  assert.equal(run.input.getDoomLoopEndReason(), 'complete');
  assert.deepEqual(run.srv.requests, plain.srv.requests);
  assert.deepEqual(agent.executions, plainAgent.executions);
  assert.equal(agent.executions.length, expectedExecutions);
  return run;
}

describe('RECOMMENDED_DOOM_LOOP_OPTION through the real SDK', () => {
  test('is a frozen plain option object, the Rust crate constant, left unmodified by a run', async () => {
    const source = readFileSync(new URL('../../src/wiring.rs', import.meta.url), 'utf8');
    const rust = /pub const RECOMMENDED_DOOM_LOOP_OPTION: &str =\s*r#"(.*)"#;/.exec(source);
    assert.ok(rust, 'the Rust constant');
    assert.deepEqual(RECOMMENDED_DOOM_LOOP_OPTION, JSON.parse(rust[1]));
    assert.ok(Object.isFrozen(RECOMMENDED_DOOM_LOOP_OPTION));
    assert.equal(Object.getPrototypeOf(RECOMMENDED_DOOM_LOOP_OPTION), Object.prototype);
    await assertQuiet(pagingAgent, 10);
    assert.deepEqual(RECOMMENDED_DOOM_LOOP_OPTION, JSON.parse(rust[1]));
  });

  test('paging with a no-argument scroll_down: the reference stops it at the 6th page; RECOMMENDED stays quiet', async () => {
    const ref = pagingAgent();
    const reference = await runCallModel({ script: ref.model, request: request(ref), doomLoop: true });
    assert.deepEqual(interventions(reference.input), [
      'tool-fingerprint:block@3',
      'tool-fingerprint:block@4',
      'tool-fingerprint:block@5',
      'tool-fingerprint:stop@6',
    ]);
    assert.equal(reference.input.getDoomLoopEndReason(), 'doom_loop');
    assert.equal(ref.executions.length, 2);

    const run = await assertQuiet(pagingAgent, 10);
    assert.equal(run.text, 'Found the bug in part 10.');
    // The second page is scored 2 (observe) before it is seen; from then on each new page
    // (novelty) restarts the streak before the next call: scored 1, no verdict.
    assert.deepEqual(verdictsOf(run.input), ['tool-fingerprint:observe@2']);
    assert.ok(run.input.getDoomLoopState().beyond.outcomes.scroll_down, 'outcome evidence is persisted under beyond');
  });

  test('edit_file then the identical run_tests: the reference blocks the 3rd test run; RECOMMENDED stays quiet', async () => {
    const ref = editThenTestAgent();
    const reference = await runCallModel({ script: ref.model, request: request(ref), doomLoop: true });
    assert.deepEqual(interventions(reference.input), [
      'tool-fingerprint:block@3',
      'tool-fingerprint:block@4',
      'tool-fingerprint:block@5',
      'tool-fingerprint:stop@6',
    ]);
    assert.deepEqual(ref.executions, ['fix 1', 'run_tests', 'fix 2', 'run_tests', 'fix 3', 'fix 4', 'fix 5', 'fix 6']);

    const run = await assertQuiet(editThenTestAgent, 12);
    assert.equal(run.text, 'All tests pass.');
  });

  test('edit_file then run_tests printing a failure it printed before: outcomes alone block it; RECOMMENDED completes', async () => {
    // The shape of agents with separate edit and test tools: the failure count
    // comes back to an earlier one (4, 3, 4, 3, …) while every edit is new.
    const failing = [4, 3, 4, 3, 2, 3, 1, 0];
    const make = () => editThenTestAgent(failing, { showEdit: true });
    const ref = make();
    const reference = await runCallModel({ script: ref.model, request: request(ref), doomLoop: true });
    assert.equal(reference.input.getDoomLoopEndReason(), 'doom_loop');
    const old = make();
    const outcomesOnly = await runCallModel({ script: old.model, request: request(old), doomLoop: { outcomes: true } });
    assert.ok(interventions(outcomesOnly.input).includes('tool-fingerprint:block@3'), verdictsOf(outcomesOnly.input).join(' '));

    const run = await assertQuiet(make, 16);
    assert.equal(run.text, 'All tests pass.');
    const state = run.input.getDoomLoopState();
    assert.ok(state.beyond.novelty.tools.edit_file.seen.length >= 2, 'novelty evidence is persisted under beyond');
  });

  test('the same call with the same output is still stopped; blocked from the 3rd call as by the reference, stopped at the 12th', async () => {
    const ref = sameOutputAgent();
    const reference = await runCallModel({ script: ref.model, request: request(ref), doomLoop: true });
    const agent = sameOutputAgent();
    const run = await runCallModel({ script: agent.model, request: request(agent), doomLoop: RECOMMENDED_DOOM_LOOP_OPTION });
    assert.deepEqual(verdictsOf(run.input), [
      'tool-fingerprint:observe@2',
      ...[3, 4, 5, 6, 7, 8, 9, 10, 11].map((n) => `tool-fingerprint:block@${n}`),
      'tool-fingerprint:stop@12',
    ]);
    assert.deepEqual(verdictsOf(run.input).slice(0, 4), verdictsOf(reference.input).slice(0, 4));
    assert.equal(run.input.getDoomLoopEndReason(), 'doom_loop');
    // The same wire up to where the reference stopped (its last request is the forced
    // final turn after the stop): the blocks are the same.
    const before = reference.srv.requests.length - 1;
    assert.deepEqual(run.srv.requests.slice(0, before), reference.srv.requests.slice(0, before));
    assert.equal(run.srv.requests.at(-1).tool_choice, 'none');
    assert.deepEqual(agent.executions, ['INV-9', 'INV-9']);
  });
});

describe('RECOMMENDED_DOOM_LOOP_OPTION in a replayed transcript', () => {
  // The shared trajectory layout: each round's `results` holds one opaque output string per call.
  const rounds = (outputs) =>
    outputs.map((output) => ({ calls: [{ toolName: 'bash', args: '{"command":"scroll_down"}' }], results: [output] }));
  const actions = (timeline) => timeline.rounds.flatMap((r) => r.calls.map((c) => c.verdict?.action ?? '-'));

  test('paging with new output each time: the defaults stop at the 6th page, RECOMMENDED observes the 2nd only', () => {
    const pages = ['a1/b1', 'a2/b2', 'a3/b3', 'a4/b4', 'a5/b5', 'a6/b6', 'a7/b7', 'a8/b8'];
    const defaults = replayTranscript({ doomLoop: true, rounds: rounds(pages) });
    assert.deepEqual(actions(defaults), ['-', 'observe', 'block', 'block', 'block', 'stop']);
    const recommended = replayTranscript({ doomLoop: RECOMMENDED_DOOM_LOOP_OPTION, rounds: rounds(pages) });
    assert.deepEqual(actions(recommended), ['-', 'observe', ...Array(6).fill('-')]);
    assert.equal(recommended.stopVerdict, null);
  });

  test('the same output every time: RECOMMENDED blocks where the defaults block, and stops at the 12th call', () => {
    const same = Array(14).fill('a1/b1');
    assert.deepEqual(actions(replayTranscript({ doomLoop: true, rounds: rounds(same) })), ['-', 'observe', 'block', 'block', 'block', 'stop']);
    assert.deepEqual(actions(replayTranscript({ doomLoop: RECOMMENDED_DOOM_LOOP_OPTION, rounds: rounds(same) })), [
      '-',
      'observe',
      ...Array(9).fill('block'),
      'stop',
    ]);
  });
});
