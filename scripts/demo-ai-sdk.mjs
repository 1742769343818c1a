#!/usr/bin/env node
// The billing agent through the Vercel AI SDK (`ai` 6.x generateText, the
// real @ai-sdk/openai-compatible provider) against the local scripted Chat
// Completions server — without detection, or guarded by doom-loop-wasm/ai-sdk.
// `billingRun(option)` is one run (`option`: undefined/false = no detection,
// else the `doomLoop` option); run this file for the side-by-side table.
// Needs the built package: `bash scripts/build-pkg.sh` first.

import { generateText, stepCountIs, tool } from 'ai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { fileURLToPath } from 'node:url';
import { createDoomLoop } from '../pkg/ai-sdk.mjs';
import { startChatServer } from '../tests/e2e/chat-completions-server.mjs';
import { billingScenario } from '../tests/e2e/neutral-scenarios.mjs';

export const STEP_LIMIT = 40;

/**
 * One billing run through the AI SDK.
 *
 * @param {unknown} [option] the `doomLoop` option; `undefined` / `false`: no detection
 * @returns {Promise<{ callsIssued: number, executed: number, refused: number, requests: number, inputTokens: number, endedBy: string, because: string }>}
 */
export async function billingRun(option) {
  const scenario = billingScenario();
  const srv = await startChatServer(scenario.model);
  const provider = createOpenAICompatible({ name: 'scripted', baseURL: srv.url, apiKey: 'demo-key', includeUsage: true });
  const guard = option === undefined || option === false ? null : createDoomLoop({ doomLoop: option });
  const tools = Object.fromEntries(scenario.tools.map((t) => [t.name, tool({ description: t.description, inputSchema: t.schema, execute: t.run })]));
  const options = {
    model: provider('openai/gpt-4o-mini'),
    system: scenario.instructions,
    prompt: scenario.input,
    tools,
    stopWhen: stepCountIs(STEP_LIMIT),
  };
  try {
    const result = await generateText(guard ? guard.wrap(options) : options);
    const callsIssued = result.steps.reduce((n, step) => n + step.toolCalls.length, 0);
    const halt = guard?.haltVerdict() ?? null;
    return {
      callsIssued,
      executed: scenario.executions.length,
      refused: callsIssued - scenario.executions.length,
      requests: srv.requests.length,
      inputTokens: srv.responses.reduce((n, r) => n + r.usage.prompt_tokens, 0),
      endedBy: halt ? 'doom_loop' : result.steps.length >= STEP_LIMIT ? 'max_steps' : 'complete',
      because: halt ? `stop verdict, streak ${halt.streak}` : `stopWhen stepCountIs(${STEP_LIMIT})`,
    };
  } finally {
    await srv.close();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const plain = await billingRun(undefined);
  const guarded = await billingRun(true);
  const rows = [
    ['tool calls issued by the model', 'callsIssued'],
    ['  executed (each fails: timeout)', 'executed'],
    ['  refused with the verdict text', 'refused'],
    ['model requests', 'requests'],
    ['input tokens sent (server usage)', 'inputTokens'],
    ['how the run ended', 'endedBy'],
    ['  because', 'because'],
  ];
  const fmt = (v) => (typeof v === 'number' ? v.toLocaleString('en-US') : String(v));
  const w0 = Math.max(...rows.map((r) => r[0].length));
  const w1 = Math.max('without detection'.length, ...rows.map(([, k]) => fmt(plain[k]).length));
  const w2 = Math.max('doom-loop-wasm/ai-sdk'.length, ...rows.map(([, k]) => fmt(guarded[k]).length));
  const line = (a, b, c) => `${a.padEnd(w0)}  ${b.padStart(w1)}  ${c.padStart(w2)}`;
  console.log('Billing agent through the Vercel AI SDK (ai 6, generateText), local scripted Chat Completions server.\n');
  console.log(line('', 'without detection', 'doom-loop-wasm/ai-sdk'));
  console.log(line('-'.repeat(w0), '-'.repeat(w1), '-'.repeat(w2)));
  for (const [label, k] of rows) console.log(line(label, fmt(plain[k]), fmt(guarded[k])));
  console.log(`\nInput tokens saved: ${((1 - guarded.inputTokens / plain.inputTokens) * 100).toFixed(1)}%.`);
}
