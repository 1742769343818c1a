// The e2e scenarios as Claude Agent SDK runs: the real `query()` of
// @anthropic-ai/claude-agent-sdk 0.3.333 spawning the real Claude Code binary
// it ships (@anthropic-ai/claude-agent-sdk-linux-x64), offline against the
// local scripted Anthropic Messages server; the tools are an in-process SDK
// MCP server. Only the model is scripted.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSdkMcpServer, query, tool } from '@anthropic-ai/claude-agent-sdk';
import { z } from 'zod';
import { startAnthropicServer, toolResults, toolResultText, toolUse, toolUses } from '../anthropic-server.mjs';
import { BILLING_GIVE_UP_TEXT, BILLING_INVOICE_ID, BILLING_TIMEOUT_MESSAGE } from '../scenarios.mjs';

export { BILLING_GIVE_UP_TEXT, BILLING_INVOICE_ID, BILLING_TIMEOUT_MESSAGE };
export const MAX_TURNS = 40;

/** The adapter under test: the built package's `./claude-agent-sdk` entry. */
export async function loadAdapter() {
  return import(process.env.DOOM_LOOP_CLAUDE ?? new URL('../../../pkg/claude-agent-sdk.mjs', import.meta.url).href);
}

const mcpName = (server, name) => `mcp__${server}__${name}`;
const text = (value) => ({ content: [{ type: 'text', text: typeof value === 'string' ? value : JSON.stringify(value) }] });

export function billingAgent({ fanOut = 1, giveUpAfter = Infinity } = {}) {
  const executions = [];
  const getInvoice = tool('get_invoice', 'Fetch an invoice from the billing service by id.', { invoice_id: z.string() }, async ({ invoice_id }) => {
    executions.push(invoice_id);
    throw new Error(BILLING_TIMEOUT_MESSAGE.replace(BILLING_INVOICE_ID, invoice_id));
  });
  const name = mcpName('billing', 'get_invoice');
  const model = (body, i) => {
    if (i >= giveUpAfter) return BILLING_GIVE_UP_TEXT;
    if (fanOut === 1) return toolUse(name, { invoice_id: BILLING_INVOICE_ID });
    return toolUses(...Array.from({ length: fanOut }, () => [name, { invoice_id: BILLING_INVOICE_ID }]));
  };
  return { server: 'billing', tools: [getInvoice], toolNames: [name], model, executions, input: `Customer asks: why was I charged twice? Look up invoice ${BILLING_INVOICE_ID}.` };
}

export function pagingAgent() {
  const executions = [];
  const scrollDown = tool('scroll_down', 'Show the next page of the open file.', {}, async () => {
    executions.push('scroll_down');
    const page = executions.length;
    return text({ lines: `${page * 100 - 99}-${page * 100} of billing.py`, text: `def part_${page}(): ...` });
  });
  const name = mcpName('files', 'scroll_down');
  const model = (body) => (toolResults(body).length >= 10 ? 'Found the bug in part 10.' : toolUse(name, {}));
  return { server: 'files', tools: [scrollDown], toolNames: [name], model, executions, input: 'Find the bug in billing.py.' };
}

export function editThenTestAgent(failing = [5, 4, 3, 2, 1, 0]) {
  const executions = [];
  let runs = 0;
  const editFile = tool('edit_file', 'Apply a patch to a file.', { path: z.string(), patch: z.string() }, async ({ patch }) => {
    executions.push(patch);
    return text({ ok: true });
  });
  const runTests = tool('run_tests', 'Run the test suite.', {}, async () => {
    executions.push('run_tests');
    const n = failing[runs++];
    return text({ passing: 10 - n, failing: n });
  });
  const model = (body) => {
    const results = toolResults(body);
    if (results.some((r) => toolResultText(r).includes('"failing":0'))) return 'All tests pass.';
    const n = results.length;
    return n % 2 === 0 ? toolUse(mcpName('dev', 'edit_file'), { path: 'src/billing.ts', patch: `fix ${n / 2 + 1}` }) : toolUse(mcpName('dev', 'run_tests'), {});
  };
  return { server: 'dev', tools: [editFile, runTests], toolNames: [mcpName('dev', 'edit_file'), mcpName('dev', 'run_tests')], model, executions, input: 'Make the test suite pass.' };
}

/**
 * One `query()` of `scenario` with `hooks` (or none). Returns the server, the SDK's
 * messages and its result message.
 */
export async function runQuery(scenario, { hooks, srv: given, resume, prompt, home: givenHome } = {}) {
  const srv = given ?? (await startAnthropicServer(scenario.model));
  const home = givenHome ?? mkdtempSync(join(tmpdir(), 'doomloop-cc-'));
  const messages = [];
  try {
    const q = query({
      prompt: prompt ?? scenario.input,
      options: {
        mcpServers: { [scenario.server]: createSdkMcpServer({ name: scenario.server, version: '1.0.0', tools: scenario.tools }) },
        allowedTools: scenario.toolNames,
        tools: [],
        model: 'claude-scripted',
        cwd: home,
        maxTurns: MAX_TURNS,
        settingSources: [],
        ...(resume && { resume }),
        ...(hooks && { hooks }),
        env: {
          PATH: process.env.PATH,
          HOME: home,
          CLAUDE_CONFIG_DIR: join(home, '.claude'),
          ANTHROPIC_BASE_URL: srv.url,
          ANTHROPIC_API_KEY: 'test-key',
          CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
        },
      },
    });
    for await (const m of q) messages.push(m);
    const result = messages.findLast((m) => m.type === 'result');
    const init = messages.find((m) => m.type === 'system' && m.subtype === 'init');
    return { srv, messages, result, init, sessionId: init?.session_id, home };
  } finally {
    if (!given) await srv.close();
    if (!givenHome) rmSync(home, { recursive: true, force: true });
  }
}

export const callsIssued = (srv) => srv.responses.reduce((n, r) => n + r.content.filter((c) => c.type === 'tool_use').length, 0);
