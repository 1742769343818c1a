// The adapter's types against the real @openrouter/agent@0.8.0 and zod:
// loop keys typed from a tool's input schema, nullable results, and the
// wrapped request still accepted by callModel. `@ts-expect-error` lines must
// fail to compile (tsc reports an unused directive otherwise).
import { OpenRouter, stepCountIs, tool } from '@openrouter/agent';
import { z } from 'zod';
import {
  withDoomLoop,
  withLoopKey,
  type DoomLoopVerdict,
  type LoopKey,
  type ToolArgs,
  type ToolResult,
} from 'doom-loop-wasm';

const getInvoice = tool({
  name: 'get_invoice',
  inputSchema: z.object({ invoice_id: z.string(), verbose: z.boolean().optional() }),
  execute: async ({ invoice_id }) => ({ invoice_id, status: 'open' as const, amount: 12 }),
});

// The schema's types reach the callbacks.
type Args = ToolArgs<typeof getInvoice>;
export const args: Args = { invoice_id: 'INV-1' };
type Result = ToolResult<typeof getInvoice>;
export const result: Result = { invoice_id: 'INV-1', status: 'open', amount: 1 };

const keyed = withLoopKey(getInvoice, {
  loopKey: ({ invoice_id }) => invoice_id.trim().toUpperCase(),
  loopOutputKey: (out) => out.status,
});
// The copy is still a tool, and its loop keys are typed.
export const fnKey = keyed.function.loopKey;
withLoopKey(getInvoice, { loopKey: ['invoice_id'] });
withLoopKey(getInvoice, { loopKey: false, loopOutputKey: ['status', 'amount'] });
withLoopKey(getInvoice, { loopKey: ({ invoice_id }) => (invoice_id === '' ? null : invoice_id) });
// @ts-expect-error invoice_id is a string
withLoopKey(getInvoice, { loopKey: ({ invoice_id }) => invoice_id.toFixed(2) });
// @ts-expect-error not a field of the input
withLoopKey(getInvoice, { loopKey: ['invoiceId'] });
// @ts-expect-error not a field of the result
withLoopKey(getInvoice, { loopOutputKey: ['state'] });

const client = new OpenRouter({ apiKey: 'k' });
const request = withDoomLoop(
  { model: 'openai/gpt-4o-mini', input: 'hi', tools: [keyed], stopWhen: stepCountIs(40) },
  {
    doomLoop: { cycles: true, budget: { maxSpendWhileLooping: 5000 } },
    loopKeys: {
      // Untyped by name: annotate, or use `unknown` values.
      get_invoice: ({ invoice_id }: { invoice_id: string }) => invoice_id.trim(),
      bash: ['command', 'cwd'],
      poll: false,
      other: (a) => (typeof a.id === 'string' ? a.id : null),
    },
    loopOutputKeys: { get_invoice: ['status'] },
    onDetected: (verdict) => void verdict.optInDetector,
  },
);
export const pending = client.callModel(request).getText();

const verdict = request.getDoomLoopVerdict();
// @ts-expect-error null unless detection stopped the run
export const unchecked: string = verdict.message;
export const checked: string | undefined = verdict?.message;
export const reason: 'doom_loop' | 'complete' | 'max_turns' | 'error' | 'user' | undefined = request.getDoomLoopEndReason();
export const all: DoomLoopVerdict[] = request.getDoomLoopVerdicts();

// A `LoopKey` for a known argument type checks its field list.
export const fields: LoopKey<{ command: string; cwd: string }> = ['command', 'cwd'];
// @ts-expect-error not a field
export const wrongFields: LoopKey<{ command: string }> = ['cwd'];
