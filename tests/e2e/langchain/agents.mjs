// The e2e scenarios (tests/e2e/scenarios.mjs) as LangChain v1 agents: the
// real `createAgent` loop of langchain 1.5.14 with the real ChatAnthropic
// (@langchain/anthropic) against the local scripted Anthropic Messages server;
// only the model is scripted. Shared by the tests and scripts/demo-langchain.mjs.

import { createAgent, modelCallLimitMiddleware, tool } from 'langchain';
import { ChatAnthropic } from '@langchain/anthropic';
import { z } from 'zod';
import { startAnthropicServer, toolResults, toolResultText, toolUse, toolUses } from '../anthropic-server.mjs';
import { BILLING_GIVE_UP_TEXT, BILLING_INVOICE_ID, BILLING_TIMEOUT_MESSAGE } from '../scenarios.mjs';

export { BILLING_INVOICE_ID, BILLING_TIMEOUT_MESSAGE, BILLING_GIVE_UP_TEXT };
/** The model-call cap of the runs (LangChain's own guard), like stepCountIs(40) in the demo. */
export const MODEL_CALL_LIMIT = 40;

/** The adapter under test: the built package's `./langchain` entry. */
export async function loadAdapter() {
  return import(process.env.DOOM_LOOP_LANGCHAIN ?? new URL('../../../pkg/langchain.mjs', import.meta.url).href);
}

export function chatModel(srv) {
  return new ChatAnthropic({ apiKey: 'test-key', anthropicApiUrl: srv.url, model: 'claude-scripted', maxRetries: 0 });
}

/** Billing agent: get_invoice always times out; the model re-issues the identical call every response. */
export function billingAgent({ fanOut = 1, giveUpAfter = Infinity, alternate = false } = {}) {
  const executions = [];
  const getInvoice = tool(
    async ({ invoice_id }) => {
      executions.push(invoice_id);
      throw new Error(BILLING_TIMEOUT_MESSAGE.replace(BILLING_INVOICE_ID, invoice_id));
    },
    { name: 'get_invoice', description: 'Fetch an invoice from the billing service by id.', schema: z.object({ invoice_id: z.string() }) },
  );
  const model = (body, i) => {
    if (i >= giveUpAfter) return BILLING_GIVE_UP_TEXT;
    // `alternate`: the id written two ways, "INV-2291" / "inv-2291 " (the full arguments differ).
    if (alternate) return toolUse('get_invoice', { invoice_id: i % 2 === 0 ? BILLING_INVOICE_ID : 'inv-2291 ' });
    if (fanOut === 1) return toolUse('get_invoice', { invoice_id: BILLING_INVOICE_ID });
    return toolUses(...Array.from({ length: fanOut }, () => ['get_invoice', { invoice_id: BILLING_INVOICE_ID }]));
  };
  return { tools: [getInvoice], model, executions, input: `Customer asks: why was I charged twice? Look up invoice ${BILLING_INVOICE_ID}.`, systemPrompt: 'You are a billing support agent. Use get_invoice to look up invoices.' };
}

/** Paging agent: a no-argument scroll_down, a new page each call; done after 10 pages. */
export function pagingAgent() {
  const executions = [];
  const scrollDown = tool(
    async () => {
      executions.push('scroll_down');
      const page = executions.length;
      return JSON.stringify({ lines: `${page * 100 - 99}-${page * 100} of billing.py`, text: `def part_${page}(): ...` });
    },
    { name: 'scroll_down', description: 'Show the next page of the open file.', schema: z.object({}) },
  );
  const model = (body) => (toolResults(body).length >= 10 ? 'Found the bug in part 10.' : toolUse('scroll_down', {}));
  return { tools: [scrollDown], model, executions, input: 'Find the bug in billing.py.' };
}

/** Edit-then-test agent: edit_file and run_tests alternate; the failures go down until the suite passes. */
export function editThenTestAgent(failing = [5, 4, 3, 2, 1, 0]) {
  const executions = [];
  let runs = 0;
  const editFile = tool(
    async ({ patch }) => {
      executions.push(patch);
      return JSON.stringify({ ok: true });
    },
    { name: 'edit_file', description: 'Apply a patch to a file.', schema: z.object({ path: z.string(), patch: z.string() }) },
  );
  const runTests = tool(
    async () => {
      executions.push('run_tests');
      const n = failing[runs++];
      return JSON.stringify({ passing: 10 - n, failing: n });
    },
    { name: 'run_tests', description: 'Run the test suite.', schema: z.object({}) },
  );
  const model = (body) => {
    const results = toolResults(body);
    if (results.some((r) => toolResultText(r).includes('"failing":0'))) return 'All tests pass.';
    const n = results.length;
    return n % 2 === 0 ? toolUse('edit_file', { path: 'src/billing.ts', patch: `fix ${n / 2 + 1}` }) : toolUse('run_tests', {});
  };
  return { tools: [editFile, runTests], model, executions, input: 'Make the test suite pass.' };
}

/**
 * Run `scenario` once through createAgent: `middleware` (or none) plus LangChain's
 * own model-call cap. Returns what the demo table needs and the raw pieces.
 */
export async function runAgent(scenario, { middleware = [], checkpointer, threadId, input, srv: given } = {}) {
  const srv = given ?? (await startAnthropicServer(scenario.model));
  const agent = createAgent({
    model: chatModel(srv),
    tools: scenario.tools,
    ...(scenario.systemPrompt && { systemPrompt: scenario.systemPrompt }),
    middleware: [...middleware, modelCallLimitMiddleware({ runLimit: MODEL_CALL_LIMIT, exitBehavior: 'end' })],
    ...(checkpointer && { checkpointer }),
  });
  try {
    const result = await agent.invoke(
      { messages: [{ role: 'user', content: input ?? scenario.input }] },
      { recursionLimit: 1000, ...(threadId && { configurable: { thread_id: threadId } }) },
    );
    return { srv, result, agent };
  } finally {
    if (!given) await srv.close();
  }
}

/** The tool calls the model issued, from the server's responses. */
export const callsIssued = (srv) => srv.responses.reduce((n, r) => n + r.content.filter((c) => c.type === 'tool_use').length, 0);
