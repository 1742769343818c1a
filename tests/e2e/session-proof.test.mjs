// The proof that `replayTranscript` / `doomloop eval` measure what an adapter
// does: a real `@openrouter/agent@0.8.0` run through `withDoomLoop` (scripted
// model on 127.0.0.1) is recorded as a transcript — each response's text and
// calls, each call's result as the model read it — and replayed; the replay
// reaches the same decisions call for call: the same verdicts in the same
// order, the same refusals with the same text, the same halting round and
// stop verdict. Both run the one session engine (src/session/).
//
// Also the adapter's regressions of issue 20 item 6: an async loopOutputKey
// is awaited, and one request reused by two concurrent runs warns when the
// second starts.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { OpenRouter, stepCountIs, tool } from '@openrouter/agent';
import { z } from 'zod';
import { RECOMMENDED_DOOM_LOOP_OPTION, replayTranscript, withDoomLoop, withLoopKey } from '../../pkg/node.mjs';
import { functionCall, startScriptedServer, text } from './scripted-server.mjs';

const MODEL = 'openai/gpt-4o-mini';

function memoryState() {
  let stored = null;
  return { load: async () => stored, save: async (state) => void (stored = state) };
}

/** Parallel duplicates, a paging tool, a malformed call, repeated text. */
function proofAgent() {
  let page = 0;
  const getInvoice = tool({
    name: 'get_invoice',
    inputSchema: z.object({ invoice_id: z.string() }),
    execute: async ({ invoice_id }) => ({ invoice_id, status: 'timeout' }),
  });
  const scrollDown = tool({
    name: 'scroll_down',
    inputSchema: z.object({}),
    execute: async () => ({ lines: `${++page * 100 - 99}-${page * 100}` }),
  });
  const model = (body, i) => {
    if (body.tool_choice === 'none') return text('The billing service keeps timing out.');
    const calls = [
      functionCall('get_invoice', { invoice_id: 'INV-2291' }, `inv_${i}_a`),
      functionCall('get_invoice', { invoice_id: 'INV-2291' }, `inv_${i}_b`),
      functionCall('scroll_down', {}, `scroll_${i}`),
    ];
    if (i === 2) calls.push(functionCall('get_invoice', '{"invoice_id": INV', `bad_${i}`));
    return [text(i < 3 ? `Checking invoice INV-2291 (attempt ${i + 1}).` : 'Checking the invoice again.'), ...calls];
  };
  return { tools: [getInvoice, scrollDown], model };
}

/** The run as a transcript in the rounds format: what each response asked, what each call returned. */
function transcriptOf(srv) {
  const outputs = new Map();
  for (const body of srv.requests) {
    for (const item of Array.isArray(body.input) ? body.input : []) {
      if (item?.type === 'function_call_output') outputs.set(item.call_id, JSON.parse(item.output));
    }
  }
  const rounds = [];
  for (const response of srv.responses) {
    const calls = response.output.filter((item) => item.type === 'function_call');
    if (calls.length === 0) continue;
    const messageText = response.output
      .filter((item) => item.type === 'message')
      .flatMap((item) => item.content.map((part) => part.text))
      .join('');
    rounds.push({
      text: messageText,
      calls: calls.map((call) => {
        let args;
        let malformed = false;
        try {
          args = JSON.parse(call.arguments);
        } catch {
          args = call.arguments;
          malformed = true;
        }
        return { toolName: call.name, args, malformed, callId: call.call_id, result: outputs.get(call.call_id) ?? null };
      }),
    });
  }
  return { outputs, rounds };
}

const isRefusal = (output) => typeof output?.error === 'string' && /^(Doom loop suspected|Not executed)/.test(output.error);
const verdictKey = (v) => `${v.detector}:${v.action}@${v.streak}:${v.fingerprint}`;

describe('session engine: an adapter run replays to the same decisions', () => {
  test('recorded withDoomLoop run (real SDK) → replayTranscript: same verdicts, refusals, halt', async () => {
    const agent = proofAgent();
    const srv = await startScriptedServer(agent.model);
    const request = withDoomLoop(
      { model: MODEL, input: 'What is the status of INV-2291?', tools: agent.tools, stopWhen: stepCountIs(20), state: memoryState() },
      { doomLoop: RECOMMENDED_DOOM_LOOP_OPTION },
    );
    try {
      await new OpenRouter({ apiKey: 'k', serverURL: srv.url }).callModel(request).getText();
      assert.deepEqual(srv.errors, []);
    } finally {
      await srv.close();
    }
    assert.equal(request.getDoomLoopEndReason(), 'doom_loop');
    const { rounds } = transcriptOf(srv);
    // Refused calls have no result to feed (the session ignores them anyway).
    const transcript = {
      doomLoop: RECOMMENDED_DOOM_LOOP_OPTION,
      rounds: rounds.map((round) => ({
        text: round.text,
        calls: round.calls.map(({ toolName, args, malformed, result }) => ({
          toolName,
          args,
          malformed,
          result: malformed || isRefusal(result) ? null : result,
        })),
      })),
    };
    const timeline = replayTranscript(transcript);

    // The same halt: the same stop verdict, at the last round the adapter recorded.
    assert.deepEqual(timeline.stopVerdict, request.getDoomLoopVerdict());
    assert.equal(timeline.rounds.length, rounds.length);
    // The same verdicts in the same order (text, then each round's calls; duplicates once).
    const replayed = timeline.rounds.flatMap((round) => [
      ...(round.textVerdict ? [round.textVerdict] : []),
      ...round.calls.filter((c) => c.verdict && !c.duplicateInRound).map((c) => c.verdict),
    ]);
    assert.deepEqual(replayed.map(verdictKey), request.getDoomLoopVerdicts().map(verdictKey));
    // Call for call: refused live ⇔ refused in the replay, with the same text.
    let refusals = 0;
    timeline.rounds.forEach((round, r) => {
      round.calls.forEach((call, c) => {
        const live = rounds[r].calls[c];
        if (live.malformed) return; // 0.8.0 answers it itself; no hook fires
        const refusedLive = isRefusal(live.result);
        const refusedReplay = call.verdict !== null && ['block', 'stop'].includes(call.verdict.action);
        const sealed = round.textVerdict?.action === 'stop';
        assert.equal(refusedReplay || sealed, refusedLive, `round ${r + 1} call ${c + 1} (${call.toolName})`);
        if (refusedLive && !sealed) {
          refusals++;
          assert.equal(live.result.error, call.verdict.message);
        }
      });
    });
    assert.ok(refusals >= 3, `the run refused calls (${refusals})`);
    // The paging tool, whose every page is new, was never refused.
    assert.ok(timeline.rounds.every((round) => round.calls.every((c) => c.toolName !== 'scroll_down' || !['block', 'stop'].includes(c.verdict?.action))));
  });
});

describe('adapter regressions (issue 20 item 6)', () => {
  async function pagingRun(loopOutputKey) {
    let page = 0;
    const srv = await startScriptedServer((body, i) => (body.tool_choice === 'none' || i > 8 ? text('done') : functionCall('scroll_down', {})));
    const scroll = withLoopKey(
      tool({ name: 'scroll_down', inputSchema: z.object({}), execute: async () => ({ lines: `${++page * 100 - 99}-${page * 100}` }) }),
      { loopOutputKey },
    );
    const request = withDoomLoop({ model: MODEL, input: 'read the file', tools: [scroll], stopWhen: stepCountIs(12) }, { doomLoop: RECOMMENDED_DOOM_LOOP_OPTION });
    try {
      await new OpenRouter({ apiKey: 'k', serverURL: srv.url }).callModel(request).getText();
    } finally {
      await srv.close();
    }
    return { pages: page, verdicts: request.getDoomLoopVerdicts().map((v) => v.action) };
  }

  test('regression: an async loopOutputKey is awaited (adapter_async_loopoutputkey.mjs)', async () => {
    const sync = await pagingRun((result) => result.lines);
    const asyncKey = await pagingRun(async (result) => result.lines);
    assert.deepEqual(asyncKey, sync);
    assert.ok(!sync.verdicts.includes('block') && !sync.verdicts.includes('stop'));
  });

  test('regression: one request reused by two concurrent runs warns at the second start (adapter_concurrent_reuse_silent.mjs)', async () => {
    const warnings = [];
    const warn = console.warn;
    console.warn = (...args) => warnings.push(args.map(String).join(' '));
    try {
      const model = (delay) => async (body, i) => {
        await new Promise((resolve) => setTimeout(resolve, delay));
        return body.tool_choice === 'none' || i >= 4 ? text('done') : functionCall('next_page', { id: 'A' });
      };
      let page = 0;
      const nextPage = tool({ name: 'next_page', inputSchema: z.object({ id: z.string() }), execute: async ({ id }) => ({ id, page: ++page }) });
      const request = withDoomLoop({ model: MODEL, input: 'read', tools: [nextPage], stopWhen: stepCountIs(8) }, { doomLoop: RECOMMENDED_DOOM_LOOP_OPTION });
      const servers = [await startScriptedServer(model(2)), await startScriptedServer(model(3))];
      try {
        await Promise.all(servers.map((srv) => new OpenRouter({ apiKey: 'k', serverURL: srv.url }).callModel(request).getText()));
      } finally {
        await Promise.all(servers.map((srv) => srv.close()));
      }
    } finally {
      console.warn = warn;
    }
    const reuse = warnings.filter((w) => w.includes('already served'));
    assert.equal(reuse.length, 1);
    assert.match(reuse[0], /a second callModel\(\) run started while the first is still running/);
  });
});
