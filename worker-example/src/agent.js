// One agent turn of a conversation: the @openrouter/agent@0.8.0 callModel
// loop (which runs unchanged inside workerd), guarded by the doom-loop
// adapter of doom-loop-wasm, with the conversation persisted through a
// StateAccessor over the Durable Object's storage.
//
// The detector's memory rides on the stored ConversationState as `doomLoop`
// (the monitor's getState() plus stopVerdict/pendingSteer — the shape the
// reference engine persists), so a conversation's evidence survives between
// requests: the next /chat of the same conversation continues the streaks.

import { OpenRouter, stepCountIs, tool } from '@openrouter/agent';
import { z } from 'zod';
// Resolved through the package's `workerd` export condition (pkg/workerd.mjs),
// which imports ./doom_loop_bg.wasm as a CompiledWasm module and instantiates
// it synchronously at import time: no `await init()` is needed here.
import { withDoomLoop } from 'doom-loop-wasm';

export const STATE_KEY = 'conversation';
export const DEFAULT_BASE_URL = 'https://openrouter.ai/api/v1';
export const DEFAULT_MODEL = 'openai/gpt-4o-mini';
export const INSTRUCTIONS = 'You are a billing support agent. Use get_invoice to look up invoices.';

/** The demo tool: like the billing agent's, it always times out. */
function billingTools(executions) {
  const getInvoice = tool({
    name: 'get_invoice',
    description: 'Fetch an invoice from the billing service by id.',
    inputSchema: z.object({ invoice_id: z.string() }),
    execute: async ({ invoice_id }, ctx) => {
      executions.push({ invoice_id, round: ctx?.numberOfTurns });
      throw new Error(`Billing service timed out after 30000ms while fetching invoice ${invoice_id}`);
    },
  });
  return [getInvoice];
}

const positiveInt = (value, fallback) => {
  const n = Number(value);
  return Number.isInteger(n) && n > 0 ? n : fallback;
};

/**
 * Runs one /chat turn. `storage` is the Durable Object's storage (only
 * get/put of one key are used); the caller serialises turns per conversation.
 *
 * @param {{ env: Record<string, string>, storage: DurableObjectStorage, message: string }} args
 */
export async function runAgentTurn({ env, storage, message }) {
  const apiKey = env.OPENROUTER_API_KEY;
  if (typeof apiKey !== 'string' || apiKey === '') {
    throw new ConfigError('OPENROUTER_API_KEY is not set (wrangler secret put OPENROUTER_API_KEY, or .dev.vars locally)');
  }
  const before = await storage.get(STATE_KEY);
  const messagesBefore = Array.isArray(before?.messages) ? before.messages.length : 0;

  const executions = [];
  let modelRequests = 0;
  const client = new OpenRouter({
    apiKey,
    serverURL: env.OPENROUTER_BASE_URL || DEFAULT_BASE_URL,
    timeoutMs: positiveInt(env.MODEL_TIMEOUT_MS, 60_000),
    // The SDK's default retries 5XX for up to an hour; a request must not.
    retryConfig: {
      strategy: 'backoff',
      backoff: { initialInterval: 500, maxInterval: 5_000, exponent: 1.5, maxElapsedTime: 20_000 },
      retryConnectionErrors: true,
    },
  });

  const run = withDoomLoop(
    {
      model: env.OPENROUTER_MODEL || DEFAULT_MODEL,
      instructions: INSTRUCTIONS,
      input: message,
      tools: billingTools(executions),
      stopWhen: stepCountIs(positiveInt(env.MAX_TOOL_ROUNDS, 12)),
      // Loaded at the start and before every round, saved after every
      // response and tool batch; the adapter adds `doomLoop` to each save.
      state: {
        load: async () => (await storage.get(STATE_KEY)) ?? null,
        save: async (state) => {
          await storage.put(STATE_KEY, state);
        },
      },
      hooks: {
        // One per request the model endpoint answered (initial, tool rounds, final answer).
        PostModelCall: [{ handler: () => void modelRequests++ }],
      },
    },
    { doomLoop: true },
  );

  const result = client.callModel(run);
  const text = await result.getText();

  const saved = (await storage.get(STATE_KEY)) ?? {};
  const verdicts = run.getDoomLoopVerdicts();
  const stop = run.getDoomLoopVerdict();
  return {
    endReason: run.getDoomLoopEndReason() ?? null,
    text,
    modelRequests,
    toolExecutions: executions.length,
    toolCalls: toolCallsOf(Array.isArray(saved.messages) ? saved.messages.slice(messagesBefore) : [], verdicts),
    verdicts: verdicts.map(({ detector, action, streak, toolName, message }) => ({ detector, action, streak, toolName, message })),
    stopVerdict: stop ?? null,
    doomLoop: saved.doomLoop ?? null,
  };
}

export class ConfigError extends Error {}

/**
 * The function calls of this turn with their outputs. `refused` = the model got
 * a doom-loop verdict (or the stop's "Not executed" note) instead of an execution.
 */
function toolCallsOf(messages, verdicts) {
  const outputs = new Map();
  for (const item of messages) {
    if (item?.type === 'function_call_output') outputs.set(item.callId ?? item.call_id, item.output);
  }
  const verdictTexts = verdicts.map((v) => v.message);
  const calls = [];
  for (const item of messages) {
    if (item?.type !== 'function_call') continue;
    const callId = item.callId ?? item.call_id;
    const output = outputs.get(callId);
    let error;
    try {
      error = typeof output === 'string' ? JSON.parse(output)?.error : undefined;
    } catch {
      error = undefined;
    }
    const refused = typeof error === 'string' && verdictTexts.some((m) => error === m || error.endsWith(` ${m}`));
    calls.push({
      callId,
      name: item.name,
      arguments: parseJson(item.arguments),
      status: output === undefined ? 'pending' : refused ? 'refused' : 'executed',
      ...(error !== undefined && { error }),
    });
  }
  return calls;
}

function parseJson(text) {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
