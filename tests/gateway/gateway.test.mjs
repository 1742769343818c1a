// The gateway (`doomloop proxy`, doom-loop-wasm/gateway) between real clients
// and a scripted upstream on 127.0.0.1: the real `claude -p` (Anthropic
// Messages, streamed) and `codex exec` (Responses) pointed at it by their base
// URL, the OpenAI chat completions wire as an agent loop speaks it (plain
// fetch, streamed and not), and requests it must pass through untouched.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { startProxy } from '../../pkg/proxy.mjs';
import { sandbox, claudeBin, codexBin, collect } from '../hooks/agents.mjs';
import { startAnthropicServer, lastToolResults } from '../hooks/anthropic-server.mjs';
import { startResponsesServer, callOutputs } from '../hooks/openai-server.mjs';
import { startChatServer, call } from '../e2e/chat-completions-server.mjs';
import { spawn } from 'node:child_process';
import OpenAI from 'openai';

const REFUSED = /Doom loop suspected: tool "(Bash|get_invoice|shell|exec_command)" was invoked in (\d+) consecutive rounds/;
const STOPPED = 'This run was stopped by doom-loop detection.';

async function withProxy(upstreamUrl, config, body) {
  const lines = [];
  const proxy = await startProxy({ upstream: upstreamUrl, port: 0, log: (line) => lines.push(line), ...config });
  try {
    return await body(proxy, lines);
  } finally {
    await proxy.close();
  }
}

const run = (bin, args, env, cwd) => collect(spawn(bin, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH, ...env } }));

/** A billing agent's loop with the `openai` npm SDK: call the tool the model asks for, until it answers. */
async function billingAgent(baseURL, { stream = false, maxTurns = 12 } = {}) {
  const client = new OpenAI({ baseURL, apiKey: 'sk-test-secret', maxRetries: 0 });
  const messages = [{ role: 'system', content: 'You are a billing agent.' }, { role: 'user', content: 'Refund invoice INV-2291.' }];
  const tools = [{ type: 'function', function: { name: 'get_invoice', parameters: { type: 'object', properties: { invoice_id: { type: 'string' } } } } }];
  for (let turn = 0; turn < maxTurns; turn++) {
    const request = { model: 'gpt-test', messages, tools };
    let message;
    let verdict;
    if (stream) {
      const { data, response } = await client.chat.completions.create({ ...request, stream: true }).withResponse();
      verdict = response.headers.get('x-doomloop-verdict');
      message = { content: '', tool_calls: [] };
      for await (const chunk of data) {
        const delta = chunk.choices[0]?.delta ?? {};
        if (delta.content) message.content += delta.content;
        for (const tc of delta.tool_calls ?? []) {
          const slot = (message.tool_calls[tc.index] ??= { id: tc.id, type: 'function', function: { name: '', arguments: '' } });
          if (tc.id) slot.id = tc.id;
          if (tc.function?.name) slot.function.name += tc.function.name;
          if (tc.function?.arguments) slot.function.arguments += tc.function.arguments;
        }
      }
    } else {
      const { data, response } = await client.chat.completions.create(request).withResponse();
      verdict = response.headers.get('x-doomloop-verdict');
      message = data.choices[0].message;
    }
    messages.push({ role: 'assistant', content: message.content || null, ...(message.tool_calls?.length && { tool_calls: message.tool_calls }) });
    if (!message.tool_calls?.length) return { final: message.content, messages, turns: turn + 1, verdict };
    for (const tc of message.tool_calls) messages.push({ role: 'tool', tool_call_id: tc.id, content: 'error: invoice INV-2291 not found' });
  }
  return { final: undefined, messages, turns: maxTurns };
}

const invoiceLoop = () => ({ calls: [call('get_invoice', { invoice_id: 'INV-2291' })] });

describe('gateway: chat completions with the openai SDK', () => {
  for (const stream of [false, true]) {
    test(`the billing loop is refused from the third call and answered with the stop at the seventh request (stream: ${stream})`, async () => {
      const upstream = await startChatServer(invoiceLoop);
      try {
        await withProxy(upstream.url, { option: true }, async (proxy, lines) => {
          const run = await billingAgent(`${proxy.url}/v1`, { stream });
          // Six requests reached the model; the seventh was answered by the gateway.
          assert.equal(upstream.requests.length, 6);
          assert.equal(run.turns, 7);
          assert.ok(run.final.startsWith(STOPPED), run.final);
          assert.equal(run.verdict, 'stop');
          // What the model read for calls 3–5: the refusal, not the result.
          const results = upstream.requests.map((body) => body.messages.filter((m) => m.role === 'tool').map((m) => m.content));
          assert.deepEqual(results[2], ['error: invoice INV-2291 not found', 'error: invoice INV-2291 not found']);
          for (const [request, streak] of [[3, '3'], [4, '4'], [5, '5']]) {
            assert.equal(results[request][request - 1].match(REFUSED)?.[2], streak, `request ${request + 1}`);
          }
          assert.ok(lines.some((l) => l.includes('answered by the gateway')), lines.join('\n'));
          assert.ok(!lines.join('\n').includes('sk-test-secret'), 'no header value is logged');
        });
      } finally {
        await upstream.close();
      }
    });
  }

  test('without the gateway the same loop runs until the agent gives up', async () => {
    const upstream = await startChatServer(invoiceLoop);
    try {
      const run = await billingAgent(upstream.url, { maxTurns: 12 });
      assert.equal(run.final, undefined);
      assert.equal(upstream.requests.length, 12);
    } finally {
      await upstream.close();
    }
  });

  test('requests it does not guard pass through byte for byte: other paths, bodies it cannot read, and the authorization header', async () => {
    const seen = [];
    const http = await import('node:http');
    const server = http.createServer((req, res) => {
      const chunks = [];
      req.on('data', (c) => chunks.push(c));
      req.on('end', () => {
        seen.push({ method: req.method, url: req.url, auth: req.headers.authorization, body: Buffer.concat(chunks) });
        res.writeHead(207, { 'content-type': 'application/octet-stream', 'x-upstream': 'yes' });
        res.end(Buffer.from([0, 1, 2, 255]));
      });
    });
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    const upstreamUrl = `http://127.0.0.1:${server.address().port}/base`;
    try {
      await withProxy(upstreamUrl, {}, async (proxy, lines) => {
        const odd = Buffer.from('{"messages": [ not json', 'utf8');
        for (const [method, path, body] of [['GET', '/v1/models', undefined], ['POST', '/v1/chat/completions', odd], ['POST', '/v1/embeddings', Buffer.from('{"input":"x"}')]]) {
          const res = await fetch(`${proxy.url}${path}?q=1`, { method, body, headers: { authorization: 'Bearer secret-token' } });
          assert.equal(res.status, 207);
          assert.equal(res.headers.get('x-upstream'), 'yes');
          assert.deepEqual([...new Uint8Array(await res.arrayBuffer())], [0, 1, 2, 255]);
          const last = seen.at(-1);
          assert.equal(last.url, `/base${path}?q=1`);
          assert.equal(last.auth, 'Bearer secret-token');
          assert.deepEqual(last.body, body ?? Buffer.alloc(0));
        }
        assert.equal(lines.length, 1, lines.join('\n'));
        assert.match(lines[0], /forwarded unguarded: the body is not JSON/);
        // Never to a host the request names.
        const res = await fetch(`${proxy.url}/v1/models`, { headers: { host: 'evil.example' } });
        assert.equal(res.status, 207);
        assert.equal(seen.at(-1).url, '/base/v1/models');
      });
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

const claudeSkip = !existsSync(claudeBin) && `no ${claudeBin} (npm ci)`;
const codexSkip = !existsSync(codexBin) && `no ${codexBin} (npm ci)`;

describe('gateway: real coding agents', { concurrency: 2 }, () => {
  test('claude -p through the gateway (ANTHROPIC_BASE_URL): an identical failing command is refused from the third call and the session ends at the sixth', { skip: claudeSkip }, async () => {
    const dirs = sandbox();
    const upstream = await startAnthropicServer(() => ({ calls: [{ name: 'Bash', input: { command: 'cat missing.txt', description: 'read it' } }] }));
    try {
      await withProxy(upstream.url, { option: true }, async (proxy) => {
        const result = await run(
          claudeBin,
          ['-p', 'Do the task.', '--allowedTools', 'Bash', '--output-format', 'json'],
          { HOME: dirs.home, ANTHROPIC_BASE_URL: proxy.url, ANTHROPIC_API_KEY: 'sk-ant-scripted-test-key', CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', DISABLE_AUTOUPDATER: '1' },
          dirs.scratch,
        );
        assert.equal(result.code, 0, result.stderr);
        // Six responses reached Claude Code from the model; the seventh request was answered by the gateway.
        const main = upstream.requests;
        assert.equal(main.length, 6, `${main.length} model requests`);
        const seen = main.slice(1).map((body) => lastToolResults(body)[0]?.text ?? '');
        assert.match(seen[0], /No such file or directory/);
        assert.match(seen[1], /No such file or directory/);
        for (const [i, streak] of [[2, '3'], [3, '4'], [4, '5']]) assert.equal(seen[i].match(REFUSED)?.[2], streak, `call ${i + 1}: ${seen[i]}`);
        const out = JSON.parse(result.stdout);
        assert.ok(out.result.startsWith(STOPPED), result.stdout);
      });
    } finally {
      await upstream.close();
    }
  });

  test('codex exec through the gateway (a Responses provider): the same loop is refused from the third call and ended at the sixth', { skip: codexSkip }, async () => {
    const dirs = sandbox();
    mkdirSync(join(dirs.home, '.codex'), { recursive: true });
    const upstream = await startResponsesServer(() => ({ calls: [{ name: 'exec_command', args: { cmd: 'cat missing.txt' } }] }));
    try {
      await withProxy(upstream.url, { option: true }, async (proxy) => {
        const provider = (key, value) => ['-c', `model_providers.scripted.${key}=${JSON.stringify(value)}`];
        const result = await run(
          codexBin,
          [
            'exec', '--json', '--skip-git-repo-check', '--dangerously-bypass-approvals-and-sandbox', '-m', 'gpt-5.1-codex',
            '-c', 'model_provider="scripted"', ...provider('name', 'scripted'), ...provider('base_url', `${proxy.url}/v1`), ...provider('wire_api', 'responses'), ...provider('env_key', 'SCRIPTED_API_KEY'),
            '-c', 'check_for_update_on_startup=false', '-c', 'analytics.enabled=false', '--disable', 'plugins', '--disable', 'remote_plugin', '--disable', 'apps',
            'Do the task.',
          ],
          { HOME: dirs.home, CODEX_HOME: join(dirs.home, '.codex'), SCRIPTED_API_KEY: 'scripted-test-key' },
          dirs.scratch,
        );
        assert.equal(result.code, 0, result.stderr);
        assert.equal(upstream.requests.length, 6, `${upstream.requests.length} model requests`);
        const outputs = upstream.requests.slice(1).map((body) => Object.values(callOutputs(body)).at(-1) ?? '');
        for (const i of [2, 3, 4]) assert.match(outputs[i], REFUSED, `call ${i + 1}: ${outputs[i]}`);
        assert.ok(result.stdout.includes(STOPPED), result.stdout.slice(-2000));
      });
    } finally {
      await upstream.close();
    }
  });
});
