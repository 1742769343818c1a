// The e2e scenarios of tests/e2e/scenarios.mjs (billing, paging, edit-then-test,
// fan-out), framework-neutral: each tool is `{ name, description, schema (zod),
// run(args) }` for a framework test to wrap in its own tool type, and each
// model a script for tests/e2e/chat-completions-server.mjs.

import { z } from 'zod';
import { chatInputText } from './chat-completions-server.mjs';

export const BILLING_INVOICE_ID = 'INV-2291';
export const BILLING_TIMEOUT_MESSAGE = `Billing service timed out after 30000ms while fetching invoice ${BILLING_INVOICE_ID}`;
export const BILLING_GIVE_UP_TEXT = `I could not retrieve invoice ${BILLING_INVOICE_ID}: the billing service keeps timing out.`;
export const BILLING_INSTRUCTIONS = 'You are a billing support agent. Use get_invoice to look up invoices.';
export const BILLING_INPUT = `Customer asks: why was I charged twice? Look up invoice ${BILLING_INVOICE_ID}.`;

/**
 * The billing agent: `get_invoice` always times out, and the model re-issues
 * the identical call every turn (`fanOut` identical calls per response), unless
 * tools are forbidden.
 */
export function billingScenario({ fanOut = 1 } = {}) {
  const executions = [];
  const tools = [
    {
      name: 'get_invoice',
      description: 'Fetch an invoice from the billing service by id.',
      schema: z.object({ invoice_id: z.string() }),
      run: async ({ invoice_id }) => {
        executions.push(invoice_id);
        throw new Error(BILLING_TIMEOUT_MESSAGE.replace(BILLING_INVOICE_ID, invoice_id));
      },
    },
  ];
  const model = (body) =>
    body.tool_choice === 'none'
      ? BILLING_GIVE_UP_TEXT
      : { calls: Array.from({ length: fanOut }, () => ({ name: 'get_invoice', args: { invoice_id: BILLING_INVOICE_ID } })) };
  return { tools, model, executions, instructions: BILLING_INSTRUCTIONS, input: BILLING_INPUT };
}

/** The paging agent: a no-argument `scroll_down`, a new page every call; done after 10 pages. */
export function pagingAgent() {
  const executions = [];
  const tools = [
    {
      name: 'scroll_down',
      description: 'Show the next page of the open file.',
      schema: z.object({}),
      run: async () => {
        executions.push('scroll_down');
        const page = executions.length;
        return { lines: `${page * 100 - 99}-${page * 100} of billing.py`, text: `def part_${page}(): ...` };
      },
    },
  ];
  const model = (body, i) =>
    body.tool_choice === 'none' || i >= 10 ? 'Found the bug in part 10.' : { calls: [{ name: 'scroll_down', args: {} }] };
  return { tools, model, executions, input: 'Find the bug in billing.py.' };
}

/**
 * The edit-then-test agent: `edit({path, patch})` then the identical
 * `run_tests({})`, the same call after every edit, its failure count going
 * down through `failing` until the suite passes.
 */
export function editThenTestAgent(failing = [5, 4, 3, 2, 1, 0]) {
  const executions = [];
  let runs = 0;
  const tools = [
    {
      name: 'edit',
      description: 'Apply a patch to a file.',
      schema: z.object({ path: z.string(), patch: z.string() }),
      run: async ({ patch }) => {
        executions.push(patch);
        return { ok: true };
      },
    },
    {
      name: 'run_tests',
      description: 'Run the test suite.',
      schema: z.object({}),
      run: async () => {
        executions.push('run_tests');
        const n = failing[runs++];
        return { passing: 10 - n, failing: n };
      },
    },
  ];
  const model = (body, i) => {
    if (body.tool_choice === 'none' || chatInputText(body).includes('"failing":0')) return 'All tests pass.';
    return i % 2 === 0
      ? { calls: [{ name: 'edit', args: { path: 'src/billing.ts', patch: `fix ${i / 2 + 1}` } }] }
      : { calls: [{ name: 'run_tests', args: {} }] };
  };
  return { tools, model, executions, input: 'Make the test suite pass.' };
}
