// End-to-end tests of the opt-in detectors beyond the reference (`cycles`,
// `ledger`, `failures`, `budget`) driven by the callModel adapter of the built
// package, against the real @openrouter/agent@0.8.0 loop over real HTTP to the
// scripted Responses server. Every scenario asserts exact counts (model
// requests, tool executions) and the exact verdict sequence; each loop is also
// run with the reference defaults (`doomLoop: true`) to show what they miss,
// and each legitimate shape is run with all four detectors on to show they
// stay silent — on the wire, byte for byte.
//
// Round n = the n-th tool round the SDK executes (onTurnStart(n)); request #k
// = the k-th POST the server received (#0 is the initial request). The calls
// of round n come from response #(n-1).

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { HooksManager, OpenRouter, stepCountIs, tool } from '@openrouter/agent';
import { z } from 'zod';
import { fingerprintKeyMaterialSync, fingerprintToolCallSync, withDoomLoop } from '../../pkg/node.mjs';
import { functionCall, functionCallOutputs, inputText, startScriptedServer, text } from './scripted-server.mjs';
import {
  BILLING_GIVE_UP_TEXT,
  BILLING_INVOICE_ID,
  billingScenario,
  editThenTestAgent,
  flakyDeployScenario,
  invoiceStatusScenario,
} from './scenarios.mjs';

const MODEL = 'openai/gpt-4o-mini';

/**
 * All four opt-in detectors. The budget trips on the first token spent while a loop
 * is suspected, so any verdict at all in a false-positive check would stop the run.
 */
const ALL_FOUR = Object.freeze({ cycles: true, ledger: true, failures: true, budget: { maxSpendWhileLooping: 1 } });

/** Runs one callModel against a fresh scripted server; returns everything a test asserts on. */
async function runCallModel({ script, request, adapter, serverOptions }) {
  const srv = await startScriptedServer(script, serverOptions);
  const client = new OpenRouter({ apiKey: 'test-key', serverURL: srv.url });
  const trace = { sessionEnds: [], postToolUse: 0, postToolUseFailure: 0, postModelCall: 0 };
  const base = {
    model: MODEL,
    ...request,
    hooks: request.hooks ?? {
      // The caller's own hooks keep firing next to the adapter's.
      PostToolUse: [{ handler: () => void trace.postToolUse++ }],
      PostToolUseFailure: [{ handler: () => void trace.postToolUseFailure++ }],
      PostModelCall: [{ handler: () => void trace.postModelCall++ }],
      SessionEnd: [{ handler: (p) => void trace.sessionEnds.push(p.reason) }],
    },
  };
  const input = adapter === undefined ? base : withDoomLoop(base, adapter);
  try {
    const result = client.callModel(input);
    const textOut = await result.getText();
    assert.deepEqual(srv.errors, [], 'scripted server errors');
    return { srv, input, text: textOut, trace };
  } finally {
    await srv.close();
  }
}

/** In-memory StateAccessor that stores copies, like a real database would. */
function memoryState() {
  let stored = null;
  return {
    accessor: {
      load: async () => (stored === null ? null : structuredClone(stored)),
      save: async (state) => {
        stored = structuredClone(state);
      },
    },
    get: () => stored,
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

// Opt-in verdicts name their detector in `optInDetector`; `detector` stays a reference kind.
const verdictsOf = (input) => input.getDoomLoopVerdicts().map((v) => `${v.optInDetector ?? v.detector}:${v.action}@${v.streak}`);
const lastOutput = (body) => JSON.parse(functionCallOutputs(body).at(-1).output);
const repeat = (n, value) => Array(n).fill(value);

// ---------------------------------------------------------------------------

describe('(1) cycles: a model alternating "INV-2291" / "inv-2291 " — no loopKey', () => {
  const alternating = (body, i) =>
    body.tool_choice === 'none'
      ? text(BILLING_GIVE_UP_TEXT)
      : functionCall('get_invoice', { invoice_id: i % 2 === 0 ? 'INV-2291' : 'inv-2291 ' });
  const request = (scenario) => ({
    instructions: scenario.instructions,
    input: scenario.input,
    tools: scenario.tools,
    stopWhen: stepCountIs(40),
  });

  test('reference defaults: never flagged, runs to stepCountIs(40): 42 requests, 41 executions', async () => {
    const scenario = billingScenario();
    const run = await runCallModel({ script: alternating, request: request(scenario), adapter: { doomLoop: true } });
    assert.equal(run.srv.requests.length, 42);
    assert.equal(scenario.executions.length, 41);
    assert.deepEqual(verdictsOf(run.input), []);
    assert.equal(run.input.getDoomLoopEndReason(), 'max_turns');
    // Nothing of the opt-in detectors is persisted or reported by default.
    // The reference's keys, plus the session engine's own bookkeeping (a key the reference ignores).
    assert.deepEqual(Object.keys(run.input.getDoomLoopState()), ['tools', 'session']);
  });

  test('cycles: true — blocked from the 3rd cycle, stopped before the 6th: 13 requests, 5 executions', async () => {
    const scenario = billingScenario();
    const run = await runCallModel({
      script: alternating,
      request: request(scenario),
      adapter: { doomLoop: { cycles: true } },
    });
    const { requests } = run.srv;
    // Round r calls A (odd r) or B (even r); a cycle is one A,B pair.
    // #0..#11 = initial + follow-ups of rounds 1-11; #12 = the forced final answer.
    assert.equal(requests.length, 13);
    assert.deepEqual(scenario.executions.map((e) => e.invoice_id), ['INV-2291', 'inv-2291 ', 'INV-2291', 'inv-2291 ', 'INV-2291']);
    assert.deepEqual(verdictsOf(run.input), [
      ...repeat(2, 'tool-cycle:observe@2'), // rounds 4-5
      ...repeat(2, 'tool-cycle:block@3'), // rounds 6-7
      ...repeat(2, 'tool-cycle:block@4'),
      ...repeat(2, 'tool-cycle:block@5'),
      'tool-cycle:stop@6', // round 12, previewed: it never runs
    ]);
    const stop = run.input.getDoomLoopVerdict();
    assert.equal(stop.optInDetector, 'tool-cycle');
    assert.equal(stop.detector, 'tool-fingerprint');
    assert.equal(stop.toolName, 'get_invoice');
    assert.equal(stop.fingerprint, fingerprintToolCallSync('get_invoice', { invoice_id: 'inv-2291 ' }));
    assert.equal(
      stop.message,
      'Doom loop suspected: tool "get_invoice" keeps cycling through the same 2 calls (6 times in a row). ' +
        'Repeating the cycle will not change the results. Take a different approach, or explain why repetition is required.',
    );
    // Rounds 6-11 get the block text instead of an execution; round 12 the halt text.
    const blocks = run.input.getDoomLoopVerdicts().filter((v) => v.action === 'block');
    for (let k = 6; k <= 11; k++) assert.equal(lastOutput(requests[k]).error, blocks[k - 6].message);
    // The round that would complete the 6th cycle is recorded and refused with the stop text.
    assert.equal(lastOutput(requests[12]).error, stop.message);
    assert.deepEqual(requests.map((b) => b.tool_choice), [...repeat(12, undefined), 'none']);
    assert.equal(run.input.getDoomLoopEndReason(), 'doom_loop');
    assert.deepEqual(run.trace.sessionEnds, ['doom_loop']);
    assert.equal(run.text, BILLING_GIVE_UP_TEXT);
    // The evidence persists under `beyond`: the last rounds' identities, per tool.
    const cycles = run.input.getDoomLoopState().beyond.cycles.get_invoice;
    assert.equal(cycles.history.length, 4);
  });
});

describe('(2) cycles: an A/B ping-pong between two argument sets', () => {
  function pingPong(paths) {
    const executions = [];
    const files = Object.fromEntries(paths.map((p, i) => [p, `// ${p}\nexport const version = ${i + 1};\n`]));
    const readFile = tool({
      name: 'read_file',
      inputSchema: z.object({ path: z.string() }),
      execute: async ({ path }) => {
        executions.push(path);
        return { path, content: files[path] };
      },
    });
    const model = (body, i) =>
      body.tool_choice === 'none'
        ? text('I could not find where the version is set.')
        : functionCall('read_file', { path: paths[i % paths.length] });
    return { executions, tools: [readFile], model };
  }
  const request = (s) => ({ input: 'Where is the version set?', tools: s.tools, stopWhen: stepCountIs(40) });

  test('reference defaults: never flagged (the streak resets every round): 42 requests', async () => {
    const s = pingPong(['src/a.ts', 'src/b.ts']);
    const run = await runCallModel({ script: s.model, request: request(s), adapter: { doomLoop: true } });
    assert.equal(run.srv.requests.length, 42);
    assert.equal(s.executions.length, 41);
    assert.deepEqual(verdictsOf(run.input), []);
  });

  test('cycles: true — caught like (1): 13 requests, 5 executions; the ledger stays silent (results alternate)', async () => {
    const s = pingPong(['src/a.ts', 'src/b.ts']);
    const run = await runCallModel({ script: s.model, request: request(s), adapter: { doomLoop: { cycles: true, ledger: true } } });
    assert.equal(run.srv.requests.length, 13);
    assert.equal(s.executions.length, 5);
    assert.deepEqual(verdictsOf(run.input), [
      ...repeat(2, 'tool-cycle:observe@2'),
      ...repeat(2, 'tool-cycle:block@3'),
      ...repeat(2, 'tool-cycle:block@4'),
      ...repeat(2, 'tool-cycle:block@5'),
      'tool-cycle:stop@6',
    ]);
  });

  test('a period-3 cycle (A,B,C) is caught with the default maxPeriod 4, not with maxPeriod 2', async () => {
    const paths = ['src/a.ts', 'src/b.ts', 'src/c.ts'];
    const s4 = pingPong(paths);
    const caught = await runCallModel({ script: s4.model, request: request(s4), adapter: { doomLoop: { cycles: true } } });
    assert.equal(caught.input.getDoomLoopVerdict().optInDetector, 'tool-cycle');
    assert.equal(caught.input.getDoomLoopVerdict().detector, 'tool-fingerprint');
    const s2 = pingPong(paths);
    const missed = await runCallModel({
      script: s2.model,
      request: request(s2),
      adapter: { doomLoop: { cycles: { maxPeriod: 2 } } },
    });
    assert.equal(missed.srv.requests.length, 42);
    assert.deepEqual(verdictsOf(missed.input), []);
  });
});

describe('(3) ledger: a nonce-varying call whose result never changes', () => {
  const request = (s) => ({ input: s.input, tools: s.tools, stopWhen: stepCountIs(40) });

  test('reference defaults: never flagged (every call has a fresh request_id): 42 requests', async () => {
    const s = invoiceStatusScenario();
    const run = await runCallModel({ script: s.model, request: request(s), adapter: { doomLoop: true } });
    assert.equal(run.srv.requests.length, 42);
    assert.equal(s.executions.length, 41);
    assert.deepEqual(verdictsOf(run.input), []);
  });

  test('ledger: true — observed from the 2nd unchanged result, stopped after the 6th: 8 requests, 6 executions', async () => {
    const s = invoiceStatusScenario();
    const run = await runCallModel({ script: s.model, request: request(s), adapter: { doomLoop: { ledger: true } } });
    const { requests } = run.srv;
    // Result verdicts are post-execution: round 6 runs, its follow-up #6 is sent,
    // then the stop trips; round 7's call is refused; #7 is the final answer.
    assert.equal(requests.length, 8);
    assert.deepEqual(s.executions, ['req-0', 'req-1', 'req-2', 'req-3', 'req-4', 'req-5']);
    assert.deepEqual(verdictsOf(run.input), [
      'no-progress:observe@2',
      'no-progress:observe@3',
      'no-progress:observe@4',
      'no-progress:observe@5',
      'no-progress:stop@6',
    ]);
    const stop = run.input.getDoomLoopVerdict();
    assert.equal(stop.toolName, 'get_invoice_status');
    // The verdict's fingerprint is the outcome's (the result the model keeps getting).
    assert.equal(stop.fingerprint, fingerprintKeyMaterialSync({ invoice_id: BILLING_INVOICE_ID, status: 'pending' }));
    assert.equal(
      stop.message,
      'Doom loop suspected: tool "get_invoice_status" returned the same result 6 times in a row while its arguments changed. ' +
        'Changing the arguments is not making progress. Take a different approach, or explain why repetition is required.',
    );
    // No block rung post-execution: the six results reached the model unchanged.
    for (let k = 1; k <= 6; k++) assert.deepEqual(lastOutput(requests[k]), { invoice_id: BILLING_INVOICE_ID, status: 'pending' });
    assert.equal(lastOutput(requests[7]).error, `Not executed: this run was stopped by doom-loop detection. ${stop.message}`);
    assert.equal(requests[7].tool_choice, 'none');
    assert.equal(run.input.getDoomLoopEndReason(), 'doom_loop');
    assert.equal(run.trace.postToolUse, 6); // the caller's own PostToolUse hook still runs
    const ledger = run.input.getDoomLoopState().beyond.ledger.get_invoice_status;
    assert.equal(ledger.streak, 6);
    assert.equal(ledger.inputsVaried, true);
  });

  // The same loop, but every result carries a fresh timestamp: the whole result
  // changes, so the ledger needs to be told which part is the outcome.
  function timestamped() {
    const s = invoiceStatusScenario();
    const original = s.tools[0].function.execute;
    s.tools[0].function.execute = async (args, ctx) => ({ ...(await original(args, ctx)), checked_at: `t+${s.executions.length}s` });
    return s;
  }

  test('loopOutputKey: a timestamp in the result hides the loop until the outcome is declared', async () => {
    const plain = timestamped();
    const missed = await runCallModel({ script: plain.model, request: request(plain), adapter: { doomLoop: { ledger: true } } });
    assert.equal(missed.srv.requests.length, 42);
    assert.deepEqual(verdictsOf(missed.input), []);

    // As an option (field list) ...
    const byOption = timestamped();
    const caught = await runCallModel({
      script: byOption.model,
      request: request(byOption),
      adapter: { doomLoop: { ledger: true }, loopOutputKeys: { get_invoice_status: ['status'] } },
    });
    assert.equal(caught.srv.requests.length, 8);
    assert.equal(byOption.executions.length, 6);
    assert.equal(caught.input.getDoomLoopVerdict().fingerprint, fingerprintKeyMaterialSync({ status: 'pending' }));

    // ... or on the tool object (a function).
    const onTool = timestamped();
    onTool.tools[0].function.loopOutputKey = (result) => result.status;
    const caughtToo = await runCallModel({ script: onTool.model, request: request(onTool), adapter: { doomLoop: { ledger: true } } });
    assert.equal(caughtToo.srv.requests.length, 8);
    assert.equal(caughtToo.input.getDoomLoopVerdict().fingerprint, fingerprintKeyMaterialSync('pending'));

    // `false` keeps a tool out of the ledger.
    const exempt = invoiceStatusScenario();
    const silent = await runCallModel({
      script: exempt.model,
      request: request(exempt),
      adapter: { doomLoop: { ledger: true }, loopOutputKeys: { get_invoice_status: false } },
    });
    assert.equal(silent.srv.requests.length, 42);
    assert.deepEqual(verdictsOf(silent.input), []);
  });
});

describe('(3b) result verdicts on the other rungs, and a caller-owned HooksManager', () => {
  const request = (s, extra = {}) => ({ input: s.input, instructions: 'Be brief.', tools: s.tools, stopWhen: stepCountIs(40), ...extra });

  test('steer / escalate from a result land in the request after the round\'s follow-up; stop after it', async () => {
    const s = invoiceStatusScenario();
    const run = await runCallModel({
      script: s.model,
      request: request(s),
      adapter: {
        doomLoop: {
          ladder: { observe: false, steer: 2, escalate: 3, block: false, stop: 5 },
          escalation: { model: 'frontier/model', maxEscalations: 1 },
          ledger: true,
        },
      },
    });
    const { requests } = run.srv;
    // Round n's result is judged after request #n's parameters were resolved, so its
    // guidance rides on request #(n+1). Round 5's stop lets #5 go out, refuses round 6.
    assert.equal(requests.length, 7);
    assert.equal(s.executions.length, 5);
    assert.deepEqual(verdictsOf(run.input), ['no-progress:steer@2', 'no-progress:escalate@3', 'no-progress:steer@4', 'no-progress:stop@5']);
    const [steer2, escalate3, steer4] = run.input.getDoomLoopVerdicts();
    assert.deepEqual(
      requests.map((b) => b.instructions),
      [
        'Be brief.',
        'Be brief.',
        'Be brief.',
        `Be brief.\n\n${steer2.message}`,
        `Be brief.\n\n${escalate3.message} The next turn runs on a stronger model: use it to change course.`,
        `Be brief.\n\n${steer4.message}`,
        'Be brief.',
      ],
    );
    assert.deepEqual(requests.map((b) => b.model), [MODEL, MODEL, MODEL, MODEL, 'frontier/model', MODEL, MODEL]);
    assert.equal(requests[6].tool_choice, 'none');
    assert.equal(run.input.getDoomLoopEndReason(), 'doom_loop');
  });

  test('a caller-owned HooksManager: the adapter observes through a view, the manager\'s own handlers still fire', async () => {
    const s = invoiceStatusScenario();
    const hooks = new HooksManager();
    const seen = [];
    hooks.on('PostToolUse', { handler: (p) => void seen.push(p.toolOutput.status) });
    hooks.on('PostModelCall', { handler: (p) => void seen.push(p.turnType) });
    const run = await runCallModel({
      script: s.model,
      request: request(s, { hooks }),
      adapter: { doomLoop: { ledger: true, budget: { maxSpend: 1e9 } } },
    });
    assert.equal(run.srv.requests.length, 8);
    assert.equal(run.input.getDoomLoopVerdict().optInDetector, 'no-progress');
    assert.equal(run.input.getDoomLoopVerdict().detector, 'tool-fingerprint');
    assert.deepEqual(seen, ['initial', ...Array.from({ length: 6 }, () => ['pending', 'tool_round']).flat(), 'final']);
    // The adapter's state saw the same 8 responses.
    assert.equal(run.input.getDoomLoopState().beyond.spent, run.srv.responses.reduce((n, r) => n + r.usage.input_tokens + r.usage.output_tokens, 0));
    // The manager itself was not modified.
    assert.equal(Object.hasOwn(hooks, 'emit'), false);
  });
});

describe('(3c) never the cause of failure', () => {
  test('a throwing loopOutputKey falls back to the whole result with a warning; the ledger goes on', async () => {
    const s = invoiceStatusScenario();
    let calls = 0;
    const { value: run, warnings } = await captureWarnings(() =>
      runCallModel({
        script: s.model,
        request: { input: s.input, tools: s.tools, stopWhen: stepCountIs(40) },
        adapter: {
          doomLoop: { ledger: true },
          loopOutputKeys: {
            get_invoice_status: () => {
              calls++;
              throw new Error('boom');
            },
          },
        },
      }),
    );
    assert.equal(run.srv.requests.length, 8);
    assert.equal(run.input.getDoomLoopVerdict().fingerprint, fingerprintKeyMaterialSync({ invoice_id: BILLING_INVOICE_ID, status: 'pending' }));
    assert.equal(calls, 6); // once per result
    assert.deepEqual(warnings, repeat(6, '[DoomLoop] get_invoice_status: loopOutputKey threw (boom); falling back to the whole result'));
  });
});

describe('(4) failure streak: an always-failing tool called with varying arguments', () => {
  const request = (s) => ({ input: s.input, tools: s.tools, stopWhen: stepCountIs(40) });

  test('reference defaults: never flagged (new version string every time): 42 requests', async () => {
    const s = flakyDeployScenario();
    const run = await runCallModel({ script: s.model, request: request(s), adapter: { doomLoop: true } });
    assert.equal(run.srv.requests.length, 42);
    assert.equal(s.executions.length, 41);
    assert.deepEqual(verdictsOf(run.input), []);
  });

  test('failures: true — stopped after the 6th failing round: 8 requests, 6 executions', async () => {
    const s = flakyDeployScenario();
    const run = await runCallModel({ script: s.model, request: request(s), adapter: { doomLoop: { failures: true } } });
    const { requests } = run.srv;
    assert.equal(requests.length, 8);
    assert.deepEqual(s.executions, ['v2.4.0', 'v2.4.1', 'v2.4.2', 'v2.4.3', 'v2.4.4', 'v2.4.5']);
    assert.deepEqual(verdictsOf(run.input), [
      'tool-failure:observe@2',
      'tool-failure:observe@3',
      'tool-failure:observe@4',
      'tool-failure:observe@5',
      'tool-failure:stop@6',
    ]);
    const stop = run.input.getDoomLoopVerdict();
    assert.equal(
      stop.message,
      'Doom loop suspected: tool "deploy" failed in 6 consecutive rounds. Retrying will not help; take a different approach, or report the failure.',
    );
    // The fingerprint is the last failing call's.
    assert.equal(stop.fingerprint, fingerprintToolCallSync('deploy', { version: 'v2.4.5' }));
    assert.equal(lastOutput(requests[6]).error, 'Deploy of v2.4.5 failed: cluster prod-eu unreachable');
    assert.equal(run.trace.postToolUseFailure, 6);
    assert.equal(run.input.getDoomLoopEndReason(), 'doom_loop');
    assert.equal(run.input.getDoomLoopState().beyond.failures.deploy, 6);
  });

  test('a tool that returns { error } instead of throwing counts as failing; a success resets the streak', async () => {
    const executions = [];
    const sync = tool({
      name: 'sync_ledger',
      inputSchema: z.object({ batch: z.number() }),
      // Batch 3 goes through; every other batch is rejected.
      execute: async ({ batch }) => {
        executions.push(batch);
        return batch === 3 ? { synced: batch } : { error: `batch ${batch} rejected by upstream` };
      },
    });
    const model = (body, i) =>
      body.tool_choice === 'none' ? text('Sync keeps failing.') : functionCall('sync_ledger', { batch: i + 1 });
    const run = await runCallModel({
      script: model,
      request: { input: 'Sync the ledger.', tools: [sync], stopWhen: stepCountIs(40) },
      adapter: { doomLoop: { failures: true } },
    });
    // Failing rounds 1-2, success in round 3 (streak reset), failing from round 4:
    // the 6th consecutive failure is round 9.
    assert.equal(run.srv.requests.length, 11);
    assert.equal(executions.length, 9);
    assert.deepEqual(verdictsOf(run.input), [
      'tool-failure:observe@2',
      'tool-failure:observe@2',
      'tool-failure:observe@3',
      'tool-failure:observe@4',
      'tool-failure:observe@5',
      'tool-failure:stop@6',
    ]);
  });
});

// ---------------------------------------------------------------------------
// False-positive checks: legitimate shapes with all four detectors on stay
// silent — no verdict, and the requests are byte-identical to an unguarded run.

/** Runs `make()`'s agent unguarded and with ALL_FOUR; asserts silence; returns the guarded run. */
async function assertSilent(make, requestOf, extraAdapter = {}) {
  const plainAgent = make();
  const plain = await runCallModel({ script: plainAgent.model, request: requestOf(plainAgent) });
  const agent = make();
  const guarded = await runCallModel({
    script: agent.model,
    request: requestOf(agent),
    adapter: { doomLoop: ALL_FOUR, ...extraAdapter },
  });
  assert.deepEqual(verdictsOf(guarded.input), []);
  assert.equal(guarded.input.getDoomLoopEndReason(), 'complete');
  assert.deepEqual(guarded.srv.requests, plain.srv.requests);
  assert.deepEqual(agent.executions, plainAgent.executions);
  return { guarded, agent };
}

describe('(5)-(7) legitimate repetition stays silent with all four detectors on', () => {
  test('(5) pagination through 8 distinct pages', async () => {
    function pager() {
      const executions = [];
      const listInvoices = tool({
        name: 'list_invoices',
        inputSchema: z.object({ customer: z.string(), page: z.number() }),
        execute: async ({ page }) => {
          executions.push(page);
          const invoices = [1, 2, 3].map((n) => `INV-${page}${n}`);
          return { page, invoices, next_page: page < 8 ? page + 1 : null };
        },
      });
      const model = (body) => {
        if (body.tool_choice === 'none') return text('Listed.');
        const outputs = functionCallOutputs(body);
        if (outputs.length === 0) return functionCall('list_invoices', { customer: 'acme', page: 1 });
        const last = JSON.parse(outputs.at(-1).output);
        return last.next_page === null
          ? text('Acme has 24 invoices.')
          : functionCall('list_invoices', { customer: 'acme', page: last.next_page });
      };
      return { executions, tools: [listInvoices], model };
    }
    const { guarded, agent } = await assertSilent(pager, (a) => ({
      input: 'How many invoices does acme have?',
      tools: a.tools,
      stopWhen: stepCountIs(40),
    }));
    assert.equal(guarded.srv.requests.length, 9);
    assert.deepEqual(agent.executions, [1, 2, 3, 4, 5, 6, 7, 8]);
    assert.equal(guarded.text, 'Acme has 24 invoices.');
  });

  function poller(statuses) {
    const executions = [];
    const getJobStatus = tool({
      name: 'get_job_status',
      inputSchema: z.object({ job_id: z.string(), poll: z.number() }),
      execute: async ({ job_id, poll }) => {
        executions.push(poll);
        return { job_id, ...statuses[Math.min(poll, statuses.length) - 1] };
      },
    });
    const model = (body, i) =>
      body.tool_choice === 'none' || inputText(body).includes('"status":"done"')
        ? text('Job job-7 finished.')
        : functionCall('get_job_status', { job_id: 'job-7', poll: i + 1 });
    return { executions, tools: [getJobStatus], model };
  }
  const pollRequest = (a) => ({ input: 'Wait for job-7.', tools: a.tools, stopWhen: stepCountIs(40) });

  test('(6) a poller whose result changes (progress 10% … done)', async () => {
    const progress = Array.from({ length: 10 }, (_, i) =>
      i < 9 ? { status: 'running', progress: (i + 1) * 10 } : { status: 'done', progress: 100 },
    );
    const { guarded, agent } = await assertSilent(() => poller(progress), pollRequest);
    assert.equal(guarded.srv.requests.length, 11);
    assert.equal(agent.executions.length, 10);
  });

  test('(6, limit) a poller whose result does NOT change: the ledger observes it, and would stop a 6th', async () => {
    // 4 identical "running" answers, then done: observe@2..4, nothing on the wire.
    const stuck = [...repeat(4, { status: 'running' }), { status: 'done' }];
    const agent = poller(stuck);
    const run = await runCallModel({ script: agent.model, request: pollRequest(agent), adapter: { doomLoop: { ledger: true } } });
    assert.equal(run.srv.requests.length, 6);
    assert.deepEqual(verdictsOf(run.input), ['no-progress:observe@2', 'no-progress:observe@3', 'no-progress:observe@4']);
    assert.equal(run.input.getDoomLoopEndReason(), 'complete');
    // 7 identical answers: stopped after the 6th, before the job is done.
    const longer = poller([...repeat(7, { status: 'running' }), { status: 'done' }]);
    const stopped = await runCallModel({ script: longer.model, request: pollRequest(longer), adapter: { doomLoop: { ledger: true } } });
    assert.equal(stopped.input.getDoomLoopVerdict().optInDetector, 'no-progress');
    assert.equal(stopped.input.getDoomLoopVerdict().detector, 'tool-fingerprint');
    assert.equal(longer.executions.length, 6);
    // The remedy for a poller: keep it out of the ledger.
    const exempt = poller([...repeat(7, { status: 'running' }), { status: 'done' }]);
    const fine = await runCallModel({
      script: exempt.model,
      request: pollRequest(exempt),
      adapter: { doomLoop: { ledger: true }, loopOutputKeys: { get_job_status: false } },
    });
    assert.deepEqual(verdictsOf(fine.input), []);
    assert.equal(exempt.executions.length, 8);
  });

  /** A single shell tool: edit, test, edit, test … `fixes` are the patch names, `failing` the test results. */
  function shellAgent(fixes, failing) {
    const executions = [];
    const sh = tool({
      name: 'sh',
      inputSchema: z.object({ cmd: z.string() }),
      execute: async ({ cmd }) => {
        executions.push(cmd);
        if (cmd.startsWith('git apply')) return { exit_code: 0, stdout: '' };
        const n = failing[executions.filter((c) => c === 'npm test').length - 1];
        return { exit_code: n > 0 ? 1 : 0, stdout: `${10 - n} passing, ${n} failing` };
      },
    });
    const model = (body, i) => {
      if (body.tool_choice === 'none' || inputText(body).includes(' 0 failing')) return text('All tests pass.');
      return functionCall('sh', { cmd: i % 2 === 0 ? `git apply ${fixes[(i / 2) % fixes.length]}` : 'npm test' });
    };
    return { executions, tools: [sh], model };
  }
  const shRequest = (a) => ({ input: 'Make the test suite pass.', tools: a.tools, stopWhen: stepCountIs(40) });

  test('(7) an edit-test-edit cycle whose failing count decreases (3, 2, 1, 0)', async () => {
    const make = () => shellAgent(['fix-1.diff', 'fix-2.diff', 'fix-3.diff', 'fix-4.diff'], [3, 2, 1, 0]);
    const { guarded, agent } = await assertSilent(make, shRequest);
    assert.equal(guarded.srv.requests.length, 9);
    assert.equal(agent.executions.length, 8);
    assert.equal(guarded.text, 'All tests pass.');
  });

  test('(7, contrast) the same cycle toggling between two patches, failing count stuck: caught as a period-4 cycle', async () => {
    const make = () => shellAgent(['fix-1.diff', 'fix-2.diff'], repeat(40, 2));
    const defaults = make();
    const missed = await runCallModel({ script: defaults.model, request: shRequest(defaults), adapter: { doomLoop: true } });
    assert.equal(missed.srv.requests.length, 42);
    assert.deepEqual(verdictsOf(missed.input), []);
    const agent = make();
    const run = await runCallModel({ script: agent.model, request: shRequest(agent), adapter: { doomLoop: { cycles: true } } });
    assert.equal(run.input.getDoomLoopVerdict().optInDetector, 'tool-cycle');
    assert.equal(run.input.getDoomLoopVerdict().detector, 'tool-fingerprint');
    assert.match(run.input.getDoomLoopVerdict().message, /cycling through the same 4 calls \(6 times in a row\)/);
    assert.equal(run.srv.requests.length, 25);
  });

  test('(7, limit) edit_file + run_tests as two tools: the reference blocks the 3rd identical run_tests; a constant edit ack feeds the ledger', async () => {
    const twoTools = () => editThenTestAgent([3, 2, 1, 0]);
    const request = (a) => ({ input: 'Make the test suite pass.', tools: a.tools, stopWhen: stepCountIs(40) });
    const ref = twoTools();
    const reference = await runCallModel({ script: ref.model, request: request(ref), adapter: { doomLoop: true } });
    // The reference itself stops this legitimate loop: run_tests({}) is identical every
    // time. Its 3rd-5th runs are refused (the model never sees "failing: 0"), the 6th stopped.
    assert.deepEqual(verdictsOf(reference.input), [
      'tool-fingerprint:observe@2',
      'tool-fingerprint:block@3',
      'tool-fingerprint:block@4',
      'tool-fingerprint:block@5',
      'tool-fingerprint:stop@6',
    ]);
    assert.equal(reference.srv.requests.length, 13);
    assert.deepEqual(ref.executions, ['fix 1', 'run_tests', 'fix 2', 'run_tests', 'fix 3', 'fix 4', 'fix 5', 'fix 6']);
    assert.equal(reference.input.getDoomLoopEndReason(), 'doom_loop');
    // Exempting run_tests (the reference's remedy) but turning the ledger on: the
    // constant { ok: true } of edit_file under changing patches reads as no progress.
    const led = twoTools();
    const ledger = await runCallModel({
      script: led.model,
      request: request(led),
      adapter: { doomLoop: { ledger: true }, loopKeys: { run_tests: false } },
    });
    assert.deepEqual(verdictsOf(ledger.input), ['no-progress:observe@2', 'no-progress:observe@3', 'no-progress:observe@4']);
    assert.equal(ledger.srv.requests.length, 9); // observe only: the run completes
    assert.equal(ledger.text, 'All tests pass.');
    // The remedy: identical test runs exempt from fingerprints, write acks out of the ledger.
    await assertSilent(twoTools, request, { loopKeys: { run_tests: false }, loopOutputKeys: { edit_file: false } });
  });
});

// ---------------------------------------------------------------------------

describe('(8) budget guard', () => {
  const USAGE = { input_tokens: 100, output_tokens: 50 }; // 150 tokens a response
  // Rounds 1-3 look up three different invoices, then the model repeats INV-9 forever.
  const script = (body, i) =>
    body.tool_choice === 'none'
      ? { text: BILLING_GIVE_UP_TEXT, usage: USAGE }
      : { calls: [{ name: 'get_invoice', arguments: { invoice_id: i < 3 ? `INV-${i + 1}` : 'INV-9' } }], usage: USAGE };
  const OBSERVE_ONLY = { observe: 2, steer: false, escalate: false, block: false, stop: false };
  const request = (s) => ({ input: s.input, tools: s.tools, stopWhen: stepCountIs(40) });

  test('an observe-only ladder never stops the loop: 42 requests', async () => {
    const s = billingScenario();
    const run = await runCallModel({ script, request: request(s), adapter: { doomLoop: { ladder: OBSERVE_ONLY } } });
    assert.equal(run.srv.requests.length, 42);
    assert.equal(s.executions.length, 41);
  });

  test('maxSpendWhileLooping: 300 tokens stops it after two looping responses; the 600 tokens before the loop do not count', async () => {
    const s = billingScenario();
    const run = await runCallModel({
      script,
      request: request(s),
      adapter: { doomLoop: { ladder: OBSERVE_ONLY, budget: { maxSpendWhileLooping: 300 } } },
    });
    // Round 5 is the first repeat (observe@2): response #5 is the first looping spend
    // (150), #6 the second (300): stop. Round 7 is refused, #7 is the final answer.
    assert.equal(run.srv.requests.length, 8);
    assert.deepEqual(s.executions.map((e) => e.invoice_id), ['INV-1', 'INV-2', 'INV-3', 'INV-9', 'INV-9', 'INV-9']);
    assert.deepEqual(verdictsOf(run.input), ['tool-fingerprint:observe@2', 'tool-fingerprint:observe@3', 'budget:stop@300']);
    const stop = run.input.getDoomLoopVerdict();
    assert.equal(stop.optInDetector, 'budget');
    assert.equal(stop.detector, 'text-streak');
    assert.equal(stop.toolName, undefined);
    assert.equal(
      stop.message,
      'Budget guard: 300 tokens spent while the run kept repeating itself (limit 300). Stopping before the loop burns the rest of the budget.',
    );
    assert.equal(lastOutput(run.srv.requests[7]).error, `Not executed: this run was stopped by doom-loop detection. ${stop.message}`);
    assert.equal(run.input.getDoomLoopEndReason(), 'doom_loop');
    // Every response is counted, the initial and the final one included.
    assert.equal(run.trace.postModelCall, 8);
    assert.deepEqual(run.input.getDoomLoopState().beyond, { spent: 1200, spentWhileLooping: 300 });
  });

  test('maxSpend in usd (usage.cost) caps the whole run', async () => {
    const s = billingScenario();
    const costly = (body, i) => ({ ...script(body, i), usage: { ...USAGE, cost: 0.25 } });
    const run = await runCallModel({
      script: costly,
      request: request(s),
      adapter: { doomLoop: { ladder: OBSERVE_ONLY, budget: { maxSpend: 1, unit: 'usd' } } },
    });
    // #0..#3 cost 1 usd: stopped before round 4 runs; #4 is the final answer.
    assert.equal(run.srv.requests.length, 5);
    assert.equal(s.executions.length, 3);
    assert.deepEqual(verdictsOf(run.input), ['budget:stop@1']);
    assert.equal(
      run.input.getDoomLoopVerdict().message,
      'Budget guard: 1 usd spent (limit 1). Stopping before the loop burns the rest of the budget.',
    );
  });
});

// ---------------------------------------------------------------------------

describe('(9) persistence: a run stopped by a new detector, saved and resumed', () => {
  test('a fresh turn keeps the beyond evidence: the next failure is the 7th in a row and stops at once', async () => {
    const store = memoryState();
    const first = flakyDeployScenario();
    const request = (s, extra = {}) => ({ input: s.input, tools: s.tools, stopWhen: stepCountIs(40), state: store.accessor, ...extra });
    const run1 = await runCallModel({ script: first.model, request: request(first), adapter: { doomLoop: { failures: true } } });
    assert.equal(run1.srv.requests.length, 8);
    assert.equal(first.executions.length, 6);
    const saved = store.get().doomLoop;
    assert.deepEqual(saved.stopVerdict, run1.input.getDoomLoopVerdict());
    assert.equal(saved.stopVerdict.optInDetector, 'tool-failure');
    assert.equal(saved.stopVerdict.detector, 'tool-fingerprint');
    assert.deepEqual(saved.beyond.failures, { deploy: 6 });
    assert.deepEqual(saved, run1.input.getDoomLoopState());

    const second = flakyDeployScenario();
    const run2 = await runCallModel({
      script: second.model,
      request: request(second, { input: 'Try the deploy once more.' }),
      adapter: { doomLoop: { failures: true } },
    });
    // #0 → round 1 fails (7th in a row: stop) → #1 → round 2 refused → #2 final.
    assert.equal(run2.srv.requests.length, 3);
    assert.equal(second.executions.length, 1);
    assert.deepEqual(verdictsOf(run2.input), ['tool-failure:stop@7']);
    assert.equal(run2.input.getDoomLoopEndReason(), 'doom_loop');
    // The streaks, and (since the session engine) the round of each last result, so a resume mid-round cannot count it twice.
    assert.deepEqual(store.get().doomLoop.beyond.failures, { deploy: 7 });
  });

  test('a decision-only resume (approveToolCalls) keeps the stop verdict and the evidence', async () => {
    const store = memoryState();
    const rollbacks = [];
    const rollback = tool({
      name: 'rollback',
      inputSchema: z.object({ version: z.string() }),
      requireApproval: true,
      execute: async ({ version }) => {
        rollbacks.push(version);
        return { rolled_back_to: version };
      },
    });
    // Rounds 1-5 deploy; response #5 also asks for an approval-gated rollback.
    const deployer = flakyDeployScenario();
    const model = (body, i) => {
      if (body.tool_choice === 'none') return text('Rolled back to v2.3.9; prod-eu is unreachable.');
      const call = deployer.model(body, i);
      return i === 5 ? [call, functionCall('rollback', { version: 'v2.3.9' })] : call;
    };
    const request = (extra = {}) => ({
      input: deployer.input,
      tools: [...deployer.tools, rollback],
      stopWhen: stepCountIs(40),
      state: store.accessor,
      ...extra,
    });
    const run1 = await runCallModel({ script: model, request: request(), adapter: { doomLoop: { failures: true } } });
    // The approval pause executes round 6's deploy: its 6th failure arms the stop.
    assert.equal(run1.srv.requests.length, 6);
    assert.equal(deployer.executions.length, 6);
    assert.equal(store.get().status, 'awaiting_approval');
    assert.deepEqual(verdictsOf(run1.input).at(-1), 'tool-failure:stop@6');
    assert.deepEqual(store.get().doomLoop.stopVerdict, run1.input.getDoomLoopVerdict());
    assert.deepEqual(store.get().doomLoop.beyond.failures, { deploy: 6 });
    const pending = store.get().pendingToolCalls[0];
    assert.equal(pending.name, 'rollback');

    const run2 = await runCallModel({
      script: model,
      request: request({ input: [], approveToolCalls: [pending.id] }),
      adapter: { doomLoop: { failures: true } },
    });
    assert.deepEqual(rollbacks, ['v2.3.9']);
    assert.equal(deployer.executions.length, 6);
    assert.equal(run2.srv.requests.length, 1);
    assert.equal(run2.srv.requests[0].tool_choice, 'none');
    assert.deepEqual(run2.input.getDoomLoopVerdict(), run1.input.getDoomLoopVerdict());
    assert.equal(run2.input.getDoomLoopEndReason(), 'doom_loop');
    // The evidence survived the round trip (the approved rollback succeeded: its streak is 0).
    assert.deepEqual(store.get().doomLoop.beyond.failures, { deploy: 6, rollback: 0 });
    assert.deepEqual(store.get().doomLoop.stopVerdict, run1.input.getDoomLoopVerdict());
  });
});
