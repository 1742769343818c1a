// Reusable e2e scenarios: tools + scripted "models" for the scripted server.
// A scenario bundles what a test needs so a detector/adapter test can run the
// exact same agent as the no-detector baseline and compare the counts.

import { tool } from '@openrouter/agent';
import { z } from 'zod';
import { functionCall, text } from './scripted-server.mjs';

export const BILLING_INVOICE_ID = 'INV-2291';
export const BILLING_TIMEOUT_MESSAGE = `Billing service timed out after 30000ms while fetching invoice ${BILLING_INVOICE_ID}`;
export const BILLING_GIVE_UP_TEXT = `I could not retrieve invoice ${BILLING_INVOICE_ID}: the billing service keeps timing out.`;

/**
 * "Billing agent": one tool `get_invoice({invoice_id})` that always throws a
 * timeout, and a model that calls `get_invoice({"invoice_id":"INV-2291"})`
 * every turn, forever, whatever it is told. The only time it does not call the
 * tool is when the request forbids tools (`tool_choice: "none"`, which is what
 * the SDK sends on its forced final turn) - as a real provider would enforce.
 */
export function billingScenario() {
  const executions = []; // one entry per get_invoice execute() call
  const getInvoice = tool({
    name: 'get_invoice',
    description: 'Fetch an invoice from the billing service by id.',
    inputSchema: z.object({ invoice_id: z.string() }),
    execute: async ({ invoice_id }, ctx) => {
      executions.push({ invoice_id, turn: ctx?.numberOfTurns });
      throw new Error(BILLING_TIMEOUT_MESSAGE.replace(BILLING_INVOICE_ID, invoice_id));
    },
  });
  const model = (body) =>
    body.tool_choice === 'none'
      ? text(BILLING_GIVE_UP_TEXT)
      : functionCall('get_invoice', { invoice_id: BILLING_INVOICE_ID });
  return {
    tools: [getInvoice],
    model,
    executions,
    input: `Customer asks: why was I charged twice? Look up invoice ${BILLING_INVOICE_ID}.`,
    instructions: 'You are a billing support agent. Use get_invoice to look up invoices.',
  };
}
