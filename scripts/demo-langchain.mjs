#!/usr/bin/env node
// The billing agent through LangChain v1: the real createAgent loop of
// langchain 1.5.14 and ChatAnthropic, against the local scripted Anthropic
// Messages server; LangChain's own guard (modelCallLimitMiddleware, 40 model
// calls) in both runs, the doom-loop middleware in the guarded one.
// Needs the built package (`make build`). Run alone it prints the table;
// `make demo` imports billingRun.

import { fileURLToPath } from 'node:url';
import { BILLING_INVOICE_ID, MODEL_CALL_LIMIT, billingAgent, callsIssued, loadAdapter, runAgent } from '../tests/e2e/langchain/agents.mjs';

/**
 * The billing agent once through LangChain: `option` is the middleware's `doomLoop`
 * option, or `undefined` for a run without the middleware.
 * @returns {Promise<{ callsIssued: number, executed: number, refused: number, requests: number, inputTokens: number, endedBy: string, because: string }>}
 */
export async function billingRun(option) {
  const scenario = billingAgent();
  const middleware = [];
  const verdicts = [];
  if (option !== undefined) {
    const { doomLoopMiddleware } = await loadAdapter();
    middleware.push(doomLoopMiddleware({ doomLoop: option, onDetected: (v) => verdicts.push(v) }));
  }
  const { srv, result } = await runAgent(scenario, { middleware });
  const issued = callsIssued(srv);
  const stop = verdicts.findLast((v) => v.action === 'stop');
  const halted = stop !== undefined && result.messages.at(-1)?.content === stop.message; // the middleware's jumpTo: 'end'
  return {
    callsIssued: issued,
    executed: scenario.executions.length,
    refused: issued - scenario.executions.length,
    requests: srv.requests.length,
    inputTokens: srv.inputTokens(),
    endedBy: halted ? 'doom_loop' : 'model call limit',
    because: halted ? `stop verdict, streak ${stop.streak}` : `modelCallLimitMiddleware({ runLimit: ${MODEL_CALL_LIMIT} })`,
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const plain = await billingRun(undefined);
  const guarded = await billingRun(true);
  const rows = [
    ['tool calls issued by the model', plain.callsIssued, guarded.callsIssued],
    ['  executed (each fails: timeout)', plain.executed, guarded.executed],
    ['  refused with the verdict text', plain.refused, guarded.refused],
    ['model requests', plain.requests, guarded.requests],
    ['input tokens sent (server usage)', plain.inputTokens, guarded.inputTokens],
    ['how the run ended', plain.endedBy, guarded.endedBy],
    ['  because', plain.because, guarded.because],
  ];
  const w0 = Math.max(...rows.map((r) => r[0].length));
  const fmt = (v) => (typeof v === 'number' ? v.toLocaleString('en-US') : String(v));
  const w1 = Math.max('without detection'.length, ...rows.map((r) => fmt(r[1]).length));
  const w2 = Math.max('doomLoopMiddleware'.length, ...rows.map((r) => fmt(r[2]).length));
  const line = (a, b, c) => `${a.padEnd(w0)}  ${b.padStart(w1)}  ${c.padStart(w2)}`;
  console.log(`Billing agent (invoice ${BILLING_INVOICE_ID}) through LangChain 1.5.14 createAgent + ChatAnthropic, local scripted Messages server.\n`);
  console.log(line('', 'without detection', 'doomLoopMiddleware'));
  console.log(line('-'.repeat(w0), '-'.repeat(w1), '-'.repeat(w2)));
  for (const [label, a, b] of rows) console.log(line(label, fmt(a), fmt(b)));
  console.log(`\nInput tokens saved: ${((1 - guarded.inputTokens / plain.inputTokens) * 100).toFixed(1)}%.`);
}
