// Reusable e2e scenarios: tools + scripted "models" for the scripted server.
// A scenario bundles what a test needs so a detector/adapter test can run the
// exact same agent as the no-detector baseline and compare the counts.

import { tool } from '@openrouter/agent';
import { z } from 'zod';
import { functionCall, inputText, text } from './scripted-server.mjs';

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

/**
 * "Status checker": `get_invoice_status({invoice_id, request_id})` always answers
 * `{invoice_id, status: 'pending'}`, and a model that asks again every turn with a
 * fresh `request_id` nonce — so no two calls fingerprint alike, though nothing changes.
 */
export function invoiceStatusScenario() {
  const executions = [];
  const getInvoiceStatus = tool({
    name: 'get_invoice_status',
    description: 'Current settlement status of an invoice.',
    inputSchema: z.object({ invoice_id: z.string(), request_id: z.string() }),
    execute: async ({ invoice_id, request_id }) => {
      executions.push(request_id);
      return { invoice_id, status: 'pending' };
    },
  });
  const model = (body, i) =>
    body.tool_choice === 'none'
      ? text(`Invoice ${BILLING_INVOICE_ID} is still pending.`)
      : functionCall('get_invoice_status', { invoice_id: BILLING_INVOICE_ID, request_id: `req-${i}` });
  return { tools: [getInvoiceStatus], model, executions, input: `Has invoice ${BILLING_INVOICE_ID} settled yet?` };
}

/**
 * "Deployer": `deploy({version})` always fails (the cluster is unreachable), and a
 * model that retries with a new version string every turn — different arguments and
 * different error texts each time, the same failure.
 */
export function flakyDeployScenario() {
  const executions = [];
  const deploy = tool({
    name: 'deploy',
    description: 'Deploy a release to production.',
    inputSchema: z.object({ version: z.string() }),
    execute: async ({ version }) => {
      executions.push(version);
      throw new Error(`Deploy of ${version} failed: cluster prod-eu unreachable`);
    },
  });
  const model = (body, i) =>
    body.tool_choice === 'none'
      ? text('The deploy keeps failing: prod-eu is unreachable.')
      : functionCall('deploy', { version: `v2.4.${i}` });
  return { tools: [deploy], model, executions, input: 'Ship release 2.4 to production.' };
}

/** A reader paging through a file with a no-argument tool: each page is new. */
export function pagingAgent() {
  const executions = [];
  const scrollDown = tool({
    name: 'scroll_down',
    inputSchema: z.object({}),
    execute: async () => {
      executions.push('scroll_down');
      const page = executions.length;
      return { lines: `${page * 100 - 99}-${page * 100} of billing.py`, text: `def part_${page}(): ...` };
    },
  });
  const model = (body, i) =>
    body.tool_choice === 'none' || i >= 10 ? text('Found the bug in part 10.') : functionCall('scroll_down', {});
  return { executions, tools: [scrollDown], model, input: 'Find the bug in billing.py.' };
}

/**
 * An editor tool and a test tool: the identical run_tests({}) after every
 * edit, the failures following `failing` until the suite passes (a count may
 * come back: the test prints a failure it printed before). With `showEdit`
 * the editor answers with the edited region, as real editors do (new after
 * every edit); without, `{ ok: true }` every time.
 */
export function editThenTestAgent(failing = [5, 4, 3, 2, 1, 0], { showEdit = false } = {}) {
  const executions = [];
  let runs = 0;
  const editFile = tool({
    name: 'edit_file',
    inputSchema: z.object({ path: z.string(), patch: z.string() }),
    execute: async ({ path, patch }) => {
      executions.push(patch);
      return showEdit ? { ok: true, edited: `${path}: ${patch}` } : { ok: true };
    },
  });
  const runTests = tool({
    name: 'run_tests',
    inputSchema: z.object({}),
    execute: async () => {
      executions.push('run_tests');
      const n = failing[runs++];
      return { passing: 10 - n, failing: n };
    },
  });
  const model = (body, i) => {
    if (body.tool_choice === 'none' || inputText(body).includes('"failing":0')) return text('All tests pass.');
    return i % 2 === 0
      ? functionCall('edit_file', { path: 'src/billing.ts', patch: `fix ${i / 2 + 1}` })
      : functionCall('run_tests', {});
  };
  return { executions, tools: [editFile, runTests], model, input: 'Make the test suite pass.' };
}
