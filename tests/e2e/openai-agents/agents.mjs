// The e2e scenarios as OpenAI Agents SDK runs: the real Runner of
// @openai/agents 0.20.0 with its OpenAI Responses model (the real `openai`
// client) against the local scripted Responses server
// (tests/e2e/scripted-server.mjs). Only the model is scripted.

import { Agent, OpenAIProvider, Runner, tool } from '@openai/agents';
import { z } from 'zod';
import { functionCall, functionCallOutputs, startScriptedServer, text } from '../scripted-server.mjs';
import { BILLING_GIVE_UP_TEXT, BILLING_INVOICE_ID, BILLING_TIMEOUT_MESSAGE } from '../scenarios.mjs';

export { BILLING_GIVE_UP_TEXT, BILLING_INVOICE_ID, BILLING_TIMEOUT_MESSAGE };
export const MAX_TURNS = 40;
/** What the SDK's default tool error handler tells the model. */
export const SDK_TOOL_ERROR = 'An error occurred while running the tool. Please try again.';

/** The adapter under test: the built package's `./openai-agents` entry. */
export async function loadAdapter() {
  return import(process.env.DOOM_LOOP_OPENAI_AGENTS ?? new URL('../../../pkg/openai-agents.mjs', import.meta.url).href);
}

export function runnerFor(srv) {
  return new Runner({ modelProvider: new OpenAIProvider({ apiKey: 'test-key', baseURL: srv.url, useResponses: true }), tracingDisabled: true });
}

export function billingAgent({ fanOut = 1, giveUpAfter = Infinity } = {}) {
  const executions = [];
  const getInvoice = tool({
    name: 'get_invoice',
    description: 'Fetch an invoice from the billing service by id.',
    parameters: z.object({ invoice_id: z.string() }),
    execute: async ({ invoice_id }) => {
      executions.push(invoice_id);
      throw new Error(BILLING_TIMEOUT_MESSAGE.replace(BILLING_INVOICE_ID, invoice_id));
    },
  });
  const model = (body, i) => {
    if (i >= giveUpAfter) return text(BILLING_GIVE_UP_TEXT);
    return Array.from({ length: fanOut }, () => functionCall('get_invoice', { invoice_id: BILLING_INVOICE_ID }));
  };
  const agent = new Agent({ name: 'billing', instructions: 'You are a billing support agent. Use get_invoice to look up invoices.', tools: [getInvoice], model: 'gpt-4o-mini' });
  return { agent, model, executions, input: `Customer asks: why was I charged twice? Look up invoice ${BILLING_INVOICE_ID}.` };
}

export function pagingAgent() {
  const executions = [];
  const scrollDown = tool({
    name: 'scroll_down',
    description: 'Show the next page of the open file.',
    parameters: z.object({}),
    execute: async () => {
      executions.push('scroll_down');
      const page = executions.length;
      return { lines: `${page * 100 - 99}-${page * 100} of billing.py`, text: `def part_${page}(): ...` };
    },
  });
  const model = (body) => (functionCallOutputs(body).length >= 10 ? text('Found the bug in part 10.') : functionCall('scroll_down', {}));
  const agent = new Agent({ name: 'reader', instructions: 'Read files.', tools: [scrollDown], model: 'gpt-4o-mini' });
  return { agent, model, executions, input: 'Find the bug in billing.py.' };
}

export function editThenTestAgent(failing = [5, 4, 3, 2, 1, 0]) {
  const executions = [];
  let runs = 0;
  const editFile = tool({
    name: 'edit_file',
    description: 'Apply a patch to a file.',
    parameters: z.object({ path: z.string(), patch: z.string() }),
    execute: async ({ patch }) => {
      executions.push(patch);
      return { ok: true };
    },
  });
  const runTests = tool({
    name: 'run_tests',
    description: 'Run the test suite.',
    parameters: z.object({}),
    execute: async () => {
      executions.push('run_tests');
      const n = failing[runs++];
      return { passing: 10 - n, failing: n };
    },
  });
  const model = (body) => {
    const outputs = functionCallOutputs(body);
    if (outputs.some((o) => String(o.output).includes('"failing":0'))) return text('All tests pass.');
    const n = outputs.length;
    return n % 2 === 0 ? functionCall('edit_file', { path: 'src/billing.ts', patch: `fix ${n / 2 + 1}` }) : functionCall('run_tests', {});
  };
  const agent = new Agent({ name: 'dev', instructions: 'Fix the code.', tools: [editFile, runTests], model: 'gpt-4o-mini' });
  return { agent, model, executions, input: 'Make the test suite pass.' };
}

/** One run of `agent` (the scenario's, or a wrapped one) against a scripted server. */
export async function runAgent(scenario, agent, { srv: given, input, context = {}, maxTurns = MAX_TURNS } = {}) {
  const srv = given ?? (await startScriptedServer(scenario.model));
  try {
    let result;
    let error;
    try {
      result = await runnerFor(srv).run(agent, input ?? scenario.input, { context, maxTurns });
    } catch (e) {
      error = e;
    }
    return { srv, result, error };
  } finally {
    if (!given) await srv.close();
  }
}

export const callsIssued = (srv) => srv.responses.reduce((n, r) => n + r.output.filter((o) => o.type === 'function_call').length, 0);
export const lastOutput = (body) => String(functionCallOutputs(body).at(-1)?.output ?? '');
