#!/usr/bin/env node
// Demo, through the real @openrouter/agent@0.8.0 callModel against the local
// scripted Responses server:
// 1. the billing agent (its only tool always times out, and the model
//    retries the identical call forever) — once as is, once wrapped with
//    withDoomLoop — and a side-by-side summary;
// 2. an agent that works: it pages through a file with a no-argument
//    `scroll_down`, each call showing the next page — as is, with the
//    reference's defaults, and with RECOMMENDED_DOOM_LOOP_OPTION.
// 3. the billing agent through the Vercel AI SDK and LangChain adapters.
// Needs the built package: `bash scripts/build-pkg.sh` first.

import { OpenRouter, stepCountIs } from '@openrouter/agent';
import { RECOMMENDED_DOOM_LOOP_OPTION, withDoomLoop } from '../pkg/node.mjs';
import { startScriptedServer } from '../tests/e2e/scripted-server.mjs';
import { billingScenario, pagingAgent } from '../tests/e2e/scenarios.mjs';

const STEP_LIMIT = 40;

async function runBilling(guarded) {
  const scenario = billingScenario();
  const srv = await startScriptedServer(scenario.model);
  const client = new OpenRouter({ apiKey: 'demo-key', serverURL: srv.url });
  let sessionEnd;
  const request = {
    model: 'openai/gpt-4o-mini',
    instructions: scenario.instructions,
    input: scenario.input,
    tools: scenario.tools,
    stopWhen: stepCountIs(STEP_LIMIT),
    hooks: { SessionEnd: [{ handler: (payload) => void (sessionEnd = payload.reason) }] },
  };
  const input = guarded ? withDoomLoop(request, { doomLoop: true }) : request;
  try {
    const text = await client.callModel(input).getText();
    const calls = srv.responses.flatMap((r) => r.output.filter((item) => item.type === 'function_call'));
    const stop = guarded ? input.getDoomLoopVerdict() : null;
    return {
      calls: calls.length,
      executed: scenario.executions.length,
      requests: srv.requests.length,
      inputTokens: srv.responses.reduce((sum, r) => sum + r.usage.input_tokens, 0),
      requestBytes: srv.log.reduce((sum, entry) => sum + Buffer.byteLength(JSON.stringify(entry.body)), 0),
      ended: guarded ? input.getDoomLoopEndReason() : sessionEnd,
      why: stop ? `stop verdict, streak ${stop.streak}` : `stopWhen stepCountIs(${STEP_LIMIT})`,
      text,
    };
  } finally {
    await srv.close();
  }
}

const plain = await runBilling(false);
const guarded = await runBilling(true);

const rows = [
  ['tool calls issued by the model', plain.calls, guarded.calls],
  ['  executed (each fails: timeout)', plain.executed, guarded.executed],
  ['  refused with the verdict text', plain.calls - plain.executed, guarded.calls - guarded.executed],
  ['model requests', plain.requests, guarded.requests],
  ['input tokens sent (server usage)', plain.inputTokens, guarded.inputTokens],
  ['request bytes sent', plain.requestBytes, guarded.requestBytes],
  ['how the run ended', plain.ended, guarded.ended],
  ['  because', plain.why, guarded.why],
];
const fmt = (v) => (typeof v === 'number' ? v.toLocaleString('en-US') : String(v));
const w0 = Math.max(...rows.map((r) => r[0].length));
const w1 = Math.max('without detection'.length, ...rows.map((r) => fmt(r[1]).length));
const w2 = Math.max('withDoomLoop'.length, ...rows.map((r) => fmt(r[2]).length));
const line = (a, b, c) => `${a.padEnd(w0)}  ${b.padStart(w1)}  ${c.padStart(w2)}`;

console.log('Billing agent: get_invoice always times out; the model retries the identical call.');
console.log('Real @openrouter/agent 0.8.0 callModel, local scripted Responses server.\n');
console.log(line('', 'without detection', 'withDoomLoop'));
console.log(line('-'.repeat(w0), '-'.repeat(w1), '-'.repeat(w2)));
for (const [label, a, b] of rows) console.log(line(label, fmt(a), fmt(b)));
const saved = 1 - guarded.inputTokens / plain.inputTokens;
console.log(`\nInput tokens saved: ${(saved * 100).toFixed(1)}%.`);
console.log(`Final answer, without / with: "${plain.text}" / "${guarded.text}"`);

/** The paging agent under `doomLoop` (undefined: no detection). */
async function runPaging(doomLoop) {
  const agent = pagingAgent();
  const srv = await startScriptedServer(agent.model);
  const client = new OpenRouter({ apiKey: 'demo-key', serverURL: srv.url });
  const request = { model: 'openai/gpt-4o-mini', input: agent.input, tools: agent.tools, stopWhen: stepCountIs(STEP_LIMIT) };
  const input = doomLoop === undefined ? request : withDoomLoop(request, { doomLoop });
  try {
    await client.callModel(input).getText();
    const calls = srv.responses.flatMap((r) => r.output.filter((item) => item.type === 'function_call')).length;
    const verdicts = doomLoop === undefined ? [] : input.getDoomLoopVerdicts();
    const strongest = ['stop', 'block', 'observe'].find((a) => verdicts.some((v) => v.action === a)) ?? 'none';
    const ended = (doomLoop === undefined ? null : input.getDoomLoopEndReason()) ?? 'complete';
    return [calls, agent.executions.length, calls - agent.executions.length, strongest, ended];
  } finally {
    await srv.close();
  }
}

const paging = [await runPaging(undefined), await runPaging(true), await runPaging(RECOMMENDED_DOOM_LOOP_OPTION)];
const pagingRows = [
  ['scroll_down calls issued', 0],
  ['  executed (a new page each)', 1],
  ['  refused with the verdict text', 2],
  ['strongest verdict', 3],
  ['how the run ended', 4],
];
const heads = ['without detection', 'doomLoop: true', 'RECOMMENDED'];
const pw = pagingRows.reduce((w, [label]) => Math.max(w, label.length), 0);
const cw = heads.map((h, i) => Math.max(h.length, ...pagingRows.map(([, k]) => fmt(paging[i][k]).length)));
const pline = (label, cells) => [label.padEnd(pw), ...cells.map((c, i) => c.padStart(cw[i]))].join('  ');
console.log('\nPaging agent: reads a file with a no-argument scroll_down, a new page every call (progress).');
console.log(pline('', heads));
console.log(pline('-'.repeat(pw), cw.map((w) => '-'.repeat(w))));
for (const [label, k] of pagingRows) console.log(pline(label, paging.map((r) => fmt(r[k]))));

// 3. The same billing agent through two of the frameworks' adapters, each
//    against its provider's protocol on 127.0.0.1 (the AI SDK: Chat
//    Completions; LangChain: Anthropic Messages), without and with detection.
const { billingRun: aiSdkBilling } = await import('./demo-ai-sdk.mjs');
const { billingRun: langchainBilling } = await import('./demo-langchain.mjs');
const frameworks = [
  ['AI SDK', await aiSdkBilling(undefined), await aiSdkBilling(true)],
  ['LangChain', await langchainBilling(undefined), await langchainBilling(true)],
];
const frameworkRows = [
  ['tool calls issued by the model', 'callsIssued'],
  ['  executed (each fails: timeout)', 'executed'],
  ['  refused with the verdict text', 'refused'],
  ['model requests', 'requests'],
  ['input tokens sent (server usage)', 'inputTokens'],
  ['how the run ended', 'endedBy'],
  ['  because', 'because'],
];
const fheads = frameworks.flatMap(([name]) => [`${name}, as is`, `${name} + adapter`]);
const fcells = (k) => frameworks.flatMap(([, plain, guarded]) => [fmt(plain[k]), fmt(guarded[k])]);
const fw = frameworkRows.reduce((w, [label]) => Math.max(w, label.length), 0);
const fcw = fheads.map((h, i) => Math.max(h.length, ...frameworkRows.map(([, k]) => fcells(k)[i].length)));
const fline = (label, cells) => [label.padEnd(fw), ...cells.map((c, i) => c.padStart(fcw[i]))].join('  ');
console.log('\nThe billing agent through the Vercel AI SDK (doom-loop-wasm/ai-sdk) and LangChain (doom-loop-wasm/langchain).');
console.log(fline('', fheads));
console.log(fline('-'.repeat(fw), fcw.map((w) => '-'.repeat(w))));
for (const [label, k] of frameworkRows) console.log(fline(label, fcells(k)));
for (const [name, plain, guarded] of frameworks) {
  console.log(`${name}: input tokens saved ${((1 - guarded.inputTokens / plain.inputTokens) * 100).toFixed(1)}%.`);
}
