// Scripted OpenAI-compatible Chat Completions server for the framework e2e
// tests (AI SDK through @ai-sdk/openai-compatible, Mastra, Cloudflare agents).
//
// Dependency-free (node:http only), listens on 127.0.0.1. Every
// `POST …/chat/completions` gets the next turn of a scripted "model", as one
// JSON `chat.completion`, or streamed as `chat.completion.chunk` Server-Sent
// Events when the body says `"stream": true`.
//
// A script is a function `(body, turnIndex) => turn` (may be async) or an
// array of turns. A turn is
//   - a string                              -> assistant text
//   - { calls: [{ name, args, id? }], text? } -> tool calls (args: object or raw JSON text)
//   - { httpError: { status, body? } }      -> that HTTP error
//
// `requests` keeps every request body as sent; `responses` every completion
// served (with its `usage`, estimated from the request size like the
// Responses server's, so token counts grow as the conversation grows).

import http from 'node:http';

const BASE_TIME = 1_700_000_000;

/** A tool call of a scripted turn. */
export function call(name, args = {}, id) {
  return { name, args, ...(id !== undefined && { id }) };
}

/**
 * Everything textual in a Chat Completions request (message contents, tool
 * call arguments, tool results) as one string, for `includes()` checks.
 */
export function chatInputText(body) {
  const parts = [];
  for (const message of Array.isArray(body?.messages) ? body.messages : []) {
    if (typeof message?.content === 'string') parts.push(message.content);
    else if (Array.isArray(message?.content)) {
      for (const part of message.content) if (typeof part?.text === 'string') parts.push(part.text);
    }
    for (const tc of Array.isArray(message?.tool_calls) ? message.tool_calls : []) {
      if (typeof tc?.function?.arguments === 'string') parts.push(tc.function.arguments);
    }
  }
  return parts.join('\n');
}

/** The `tool` messages of a request, in order. */
export function toolMessages(body) {
  return Array.isArray(body?.messages) ? body.messages.filter((m) => m?.role === 'tool') : [];
}

function estimateTokens(value) {
  if (value === undefined || value === null) return 0;
  const s = typeof value === 'string' ? value : JSON.stringify(value);
  return Math.max(1, Math.ceil(s.length / 4));
}

function normalizeTurn(turn, turnIndex) {
  if (typeof turn === 'string') return { text: turn, calls: [] };
  if (!turn || typeof turn !== 'object') throw new Error(`chat server: no turn for request #${turnIndex}`);
  if (turn.httpError) return { httpError: turn.httpError, calls: [] };
  const calls = (turn.calls ?? []).map((c, i) => ({
    id: c.id ?? `call_${turnIndex}_${i}`,
    type: 'function',
    function: { name: c.name, arguments: typeof c.args === 'string' ? c.args : JSON.stringify(c.args ?? {}) },
  }));
  return { text: turn.text ?? null, calls };
}

/**
 * Starts the server on 127.0.0.1 (ephemeral port).
 *
 * @param {Function|Array} script
 * @returns {Promise<{ url: string, origin: string, requests: object[], responses: object[], errors: Error[], close: () => Promise<void> }>}
 */
export async function startChatServer(script) {
  const requests = [];
  const responses = [];
  const errors = [];
  let turns = 0;
  const next = async (body, i) => {
    if (typeof script === 'function') return script(body, i);
    if (i < script.length) return script[i];
    throw new Error(`chat server: script exhausted at request #${i}`);
  };
  const server = http.createServer(async (req, res) => {
    try {
      const chunks = [];
      for await (const c of req) chunks.push(c);
      const raw = Buffer.concat(chunks).toString('utf8');
      if (req.method !== 'POST' || !req.url.endsWith('/chat/completions')) {
        return send(res, 404, { error: { message: `chat server: no route ${req.method} ${req.url}` } });
      }
      const body = JSON.parse(raw);
      const turnIndex = turns++;
      requests.push(body);
      const turn = normalizeTurn(await next(body, turnIndex), turnIndex);
      if (turn.httpError) return send(res, turn.httpError.status, turn.httpError.body ?? { error: { message: 'scripted error' } });
      if (body.tool_choice === 'none' && turn.calls.length > 0) {
        throw new Error(`chat server: turn ${turnIndex} calls tools under tool_choice "none"`);
      }
      const prompt = estimateTokens(body.messages) + estimateTokens(body.tools);
      const completion = estimateTokens(turn.text) + estimateTokens(turn.calls);
      const response = {
        id: `chatcmpl-${String(turnIndex).padStart(4, '0')}`,
        object: 'chat.completion',
        created: BASE_TIME + turnIndex,
        model: body.model ?? 'scripted/model',
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content: turn.text, ...(turn.calls.length > 0 && { tool_calls: turn.calls }) },
            finish_reason: turn.calls.length > 0 ? 'tool_calls' : 'stop',
          },
        ],
        usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion },
      };
      responses.push(response);
      if (body.stream !== true) return send(res, 200, response);
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      const base = { id: response.id, object: 'chat.completion.chunk', created: response.created, model: response.model };
      const chunk = (delta, finish = null) => res.write(`data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`);
      chunk({ role: 'assistant', content: '' });
      if (turn.text) for (let i = 0; i < turn.text.length; i += 16) chunk({ content: turn.text.slice(i, i + 16) });
      turn.calls.forEach((tc, index) => {
        chunk({ tool_calls: [{ index, id: tc.id, type: 'function', function: { name: tc.function.name, arguments: '' } }] });
        chunk({ tool_calls: [{ index, function: { arguments: tc.function.arguments } }] });
      });
      chunk({}, response.choices[0].finish_reason);
      res.write(`data: ${JSON.stringify({ ...base, choices: [], usage: response.usage })}\n\n`);
      res.end('data: [DONE]\n\n');
    } catch (error) {
      errors.push(error);
      if (!res.headersSent) send(res, 400, { error: { message: `chat server: ${error.message}` } });
      else res.end();
    }
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${server.address().port}`;
  return {
    url: `${origin}/v1`,
    origin,
    requests,
    responses,
    errors,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections?.();
      }),
  };
}

function send(res, status, obj) {
  const payload = JSON.stringify(obj);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) });
  res.end(payload);
}
