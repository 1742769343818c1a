// The billing agent as a Cloudflare `agents` AIChatAgent (@cloudflare/ai-chat):
// one Durable Object per conversation, whose chat turns run the AI SDK's
// streamText against an OpenAI-compatible endpoint (OpenRouter by default),
// guarded by doom-loop-wasm's Cloudflare agents adapter.
//
// The detector's memory lives in the agent's own state (`this.state.doomLoop`,
// written with `this.setState` after every step), so it is persisted with the
// Durable Object and every turn of the conversation continues the streaks.

import { AIChatAgent } from '@cloudflare/ai-chat';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { convertToModelMessages, stepCountIs, streamText, tool } from 'ai';
import { z } from 'zod';
// Resolved through the package's `workerd` export condition: the detector's
// .wasm is imported as a CompiledWasm module and instantiated at import time.
import { doomLoopChat } from 'doom-loop-wasm/cloudflare-agents';

export const DEFAULT_BASE_URL = 'https://openrouter.ai/api/v1';
export const DEFAULT_MODEL = 'openai/gpt-4o-mini';
export const INSTRUCTIONS = 'You are a billing support agent. Use get_invoice to look up invoices.';

/** The demo tool: like the billing agent's, it always times out. */
function billingTools(executions) {
  return {
    get_invoice: tool({
      description: 'Fetch an invoice from the billing service by id.',
      inputSchema: z.object({ invoice_id: z.string() }),
      execute: async ({ invoice_id }) => {
        executions.push(invoice_id);
        throw new Error(`Billing service timed out after 30000ms while fetching invoice ${invoice_id}`);
      },
    }),
  };
}

const positiveInt = (value, fallback) => {
  const n = Number(value);
  return Number.isInteger(n) && n > 0 ? n : fallback;
};

export class ConfigError extends Error {}

export class BillingAgent extends AIChatAgent {
  /** The summary of the last finished turn (for the HTTP /chat route). */
  #lastTurn = null;

  async onChatMessage(onFinish, options) {
    const env = this.env;
    if (typeof env.OPENROUTER_API_KEY !== 'string' || env.OPENROUTER_API_KEY === '') {
      throw new ConfigError('OPENROUTER_API_KEY is not set (wrangler secret put OPENROUTER_API_KEY, or .dev.vars locally)');
    }
    const provider = createOpenAICompatible({
      name: 'openrouter',
      baseURL: env.OPENROUTER_BASE_URL || DEFAULT_BASE_URL,
      apiKey: env.OPENROUTER_API_KEY,
      includeUsage: true,
    });
    const executions = [];
    const maxRounds = positiveInt(env.MAX_TOOL_ROUNDS, 12);
    // Restored from this.state.doomLoop; saved back with this.setState after every step.
    const guard = doomLoopChat(this, { doomLoop: true });
    const result = streamText(
      guard.wrap({
        model: provider(env.OPENROUTER_MODEL || DEFAULT_MODEL),
        system: INSTRUCTIONS,
        messages: await convertToModelMessages(this.messages),
        tools: billingTools(executions),
        stopWhen: stepCountIs(maxRounds),
        maxRetries: 2,
        abortSignal: options?.abortSignal,
        onFinish: async (event) => {
          this.#lastTurn = summarize(event, guard, executions, maxRounds);
          await onFinish?.(event);
        },
      }),
    );
    return result.toUIMessageStreamResponse();
  }

  /**
   * RPC: one chat turn without a WebSocket client (the /chat route): the
   * user message is persisted and the turn runs through onChatMessage, as a
   * message from `useAgentChat` would.
   */
  async chat(message) {
    this.#lastTurn = null;
    const { status } = await this.saveMessages((messages) => [
      ...messages,
      { id: crypto.randomUUID(), role: 'user', parts: [{ type: 'text', text: message }] },
    ]);
    if (this.#lastTurn === null) throw new Error(`the chat turn did not finish (status ${status})`);
    return this.#lastTurn;
  }

  /** RPC: the persisted detector blob (`this.state.doomLoop`), or null. */
  doomLoopState() {
    return this.state?.doomLoop ?? null;
  }

  /** RPC (maintenance, tests; not routed from HTTP): replaces the stored detector blob. */
  replaceDoomLoopState(blob) {
    this.setState({ ...(this.state ?? {}), doomLoop: blob });
  }
}

/** What a turn did: how it ended, the verdicts, and each tool call's fate. */
function summarize(event, guard, executions, maxRounds) {
  const verdicts = guard.verdicts();
  const halt = guard.haltVerdict();
  const texts = verdicts.map((v) => v.message);
  const toolCalls = [];
  for (const step of event.steps) {
    for (const part of step.content) {
      if (part.type !== 'tool-result' && part.type !== 'tool-error') continue;
      const output = part.type === 'tool-error' ? String(part.error?.message ?? part.error) : part.output;
      const refused = typeof output === 'string' && texts.some((m) => output === m || output.endsWith(` ${m}`));
      toolCalls.push({
        callId: part.toolCallId,
        name: part.toolName,
        arguments: part.input,
        status: refused ? 'refused' : 'executed',
        ...(typeof output === 'string' && { output }),
      });
    }
  }
  return {
    endReason: halt ? 'doom_loop' : event.steps.length >= maxRounds && event.finishReason === 'tool-calls' ? 'max_turns' : 'complete',
    text: event.text,
    modelRequests: event.steps.length,
    toolExecutions: executions.length,
    toolCalls,
    verdicts: verdicts.map(({ detector, action, streak, toolName, message }) => ({ detector, action, streak, toolName, message })),
    stopVerdict: halt ?? null,
    doomLoop: guard.getState() ?? null,
  };
}
