// Real API clients through the gateway (`doomloop proxy`) to a scripted chat
// completions upstream on 127.0.0.1: the AI SDK (`ai` + the OpenAI-compatible
// provider) and the Python `openai` package (from PyPI, in a scratch venv) —
// the billing loop stopped at the reference's turn — and agents that make
// progress (paging, edit-then-retest with changing output) completing under
// the default option.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateText, stepCountIs, tool } from 'ai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { z } from 'zod';
import { startProxy } from '../../pkg/proxy.mjs';
import { startChatServer, call } from '../e2e/chat-completions-server.mjs';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const STOPPED = 'This run was stopped by doom-loop detection.';
const PYTHON_OPENAI = 'openai==3.63.0';

async function through(script, config, body) {
  const upstream = await startChatServer(script);
  const lines = [];
  const proxy = await startProxy({ upstream: upstream.url.replace(/\/v1$/, ''), port: 0, log: (l) => lines.push(l), ...config });
  try {
    return await body({ upstream, proxy, lines });
  } finally {
    await proxy.close();
    await upstream.close();
  }
}

const invoiceLoop = () => ({ calls: [call('get_invoice', { invoice_id: 'INV-2291' })] });

/** A chat completions agent loop (plain fetch) whose tool answers `answer(turn)`. */
async function agent(baseUrl, tools, answer, maxTurns = 20) {
  const messages = [{ role: 'user', content: 'Do the task.' }];
  for (let turn = 0; turn < maxTurns; turn++) {
    const res = await fetch(`${baseUrl}/v1/chat/completions`, { method: 'POST', body: JSON.stringify({ model: 'm', messages, tools }) });
    const message = (await res.json()).choices[0].message;
    messages.push({ role: 'assistant', content: message.content ?? null, ...(message.tool_calls?.length && { tool_calls: message.tool_calls }) });
    if (!message.tool_calls?.length) return { final: message.content, messages };
    for (const tc of message.tool_calls) messages.push({ role: 'tool', tool_call_id: tc.id, content: answer(turn, tc) });
  }
  return { final: undefined, messages };
}

const refusals = (upstream) => upstream.requests.flatMap((b) => b.messages.filter((m) => m.role === 'tool' && /Doom loop suspected/.test(m.content)));

describe('gateway: real clients', () => {
  test('the AI SDK (generateText, OpenAI-compatible provider) through the gateway: the billing loop stops at the seventh request', async () => {
    await through(invoiceLoop, { option: true }, async ({ upstream, proxy }) => {
      const provider = createOpenAICompatible({ name: 'gateway', baseURL: `${proxy.url}/v1`, apiKey: 'sk-test' });
      let executed = 0;
      const result = await generateText({
        model: provider('gpt-test'),
        prompt: 'Refund invoice INV-2291.',
        tools: {
          get_invoice: tool({
            inputSchema: z.object({ invoice_id: z.string() }),
            execute: async () => {
              executed++;
              return 'error: invoice INV-2291 not found';
            },
          }),
        },
        stopWhen: stepCountIs(20),
      });
      assert.equal(upstream.requests.length, 6);
      assert.equal(executed, 6, 'the tool ran six times: a gateway cannot stop a call, only what the model reads of it');
      assert.ok(result.text.startsWith(STOPPED), result.text);
      assert.equal(refusals(upstream).length, 3 + 2 + 1, 'the refusals of calls 3, 4 and 5, as the later requests carry them');
    });
  });

  test('a paging agent (the same call, a new page each time) completes under the default option', async () => {
    const pages = 9;
    await through((body, turn) => (turn < pages ? { calls: [call('read_page', { file: 'book.txt', next: true })] } : 'read it all'), {}, async ({ upstream, proxy }) => {
      const run = await agent(proxy.url, undefined, (turn) => `page ${turn + 1}: lines ${turn * 40 + 1}-${turn * 40 + 40}`);
      assert.equal(run.final, 'read it all');
      assert.equal(upstream.requests.length, pages + 1);
      assert.equal(refusals(upstream).length, 0);
    });
  });

  test('an edit-then-retest agent whose test output changes after each edit completes under the default option', async () => {
    const script = (body, turn) => {
      if (turn >= 8) return 'the test passes';
      return turn % 2 === 0 ? { calls: [call('run_tests', { path: 'tests/test_x.py' })] } : { calls: [call('edit_file', { path: 'x.py', new: `v${turn}` })] };
    };
    await through(script, {}, async ({ upstream, proxy }) => {
      const run = await agent(proxy.url, undefined, (turn) => (turn % 2 === 0 ? `FAILED test_x: expected 4, got ${turn / 2 + 1}` : `x.py updated (${turn})`));
      assert.equal(run.final, 'the test passes');
      assert.equal(refusals(upstream).length, 0);
    });
  });

  const venv = join(ROOT, 'target/gateway-python');
  const python = join(venv, 'bin/python');
  const pythonSkip = (() => {
    if (existsSync(python) && spawnSync(python, ['-c', 'import openai'], { encoding: 'utf8' }).status === 0) return false;
    mkdirSync(join(ROOT, 'target'), { recursive: true });
    const made = spawnSync('python3', ['-m', 'venv', venv], { encoding: 'utf8' });
    if (made.status !== 0) return `no venv: ${made.stderr}`;
    const pip = spawnSync(python, ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', PYTHON_OPENAI], { encoding: 'utf8', timeout: 300_000 });
    return pip.status === 0 ? false : `pip install ${PYTHON_OPENAI} failed: ${pip.stderr.slice(-500)}`;
  })();

  test(`the Python openai package (${PYTHON_OPENAI}) through the gateway: the billing loop stops at the seventh request`, { skip: pythonSkip }, async () => {
    await through(invoiceLoop, { option: true }, async ({ upstream, proxy }) => {
      const source = `
import json, sys
from openai import OpenAI
client = OpenAI(base_url=sys.argv[1], api_key="sk-test")
messages = [{"role": "user", "content": "Refund invoice INV-2291."}]
tools = [{"type": "function", "function": {"name": "get_invoice", "parameters": {"type": "object", "properties": {"invoice_id": {"type": "string"}}}}}]
for turn in range(12):
    message = client.chat.completions.create(model="gpt-test", messages=messages, tools=tools).choices[0].message
    messages.append(message.model_dump(exclude_none=True))
    if not message.tool_calls:
        print(json.dumps({"turns": turn + 1, "final": message.content}))
        break
    for tc in message.tool_calls:
        messages.append({"role": "tool", "tool_call_id": tc.id, "content": "error: invoice INV-2291 not found"})
`;
      const { spawn } = await import('node:child_process');
      const child = spawn(python, ['-c', source, `${proxy.url}/v1`], { stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => { stdout += d; });
      child.stderr.on('data', (d) => { stderr += d; });
      const code = await new Promise((resolve) => child.on('close', resolve));
      assert.equal(code, 0, stderr);
      const out = JSON.parse(stdout);
      assert.equal(out.turns, 7);
      assert.ok(out.final.startsWith(STOPPED), out.final);
      assert.equal(upstream.requests.length, 6);
    });
  });
});
