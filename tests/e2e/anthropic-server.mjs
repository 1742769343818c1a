// Scripted Anthropic Messages API server for end-to-end tests (node:http only).
//
// Speaks `POST /v1/messages` (with or without `?beta=true`) for the real
// `@anthropic-ai/sdk` client (LangChain's ChatAnthropic) and for the Claude
// Code binary the Claude Agent SDK spawns: a JSON message, or Server-Sent
// Events when the body says `"stream": true`. `POST /v1/messages/count_tokens`
// answers an estimate; any other route is logged and answered 404.
//
//   const srv = await startAnthropicServer((body, i) => toolUse('get_invoice', { invoice_id: 'INV-2291' }));
//   // ChatAnthropic: new ChatAnthropic({ apiKey: 'k', anthropicApiUrl: srv.url, model: 'claude-x' })
//   // Claude Code:  ANTHROPIC_BASE_URL=srv.url
//   await srv.close();
//
// A script is an array of turns or `(body, turnIndex) => turn`. A turn is a
// string (assistant text), or `{ text?, calls?: [{ name, input, id? }], usage? }`.
// Token usage is estimated deterministically (characters / 4) from what was
// sent, so runs can be compared by the tokens they cost.

import http from 'node:http';

/** One tool_use call. */
export function toolUse(name, input = {}, id) {
  return { calls: [{ name, input, ...(id !== undefined && { id }) }] };
}

/** Several tool_use calls in one response (a parallel fan-out). */
export function toolUses(...calls) {
  return { calls: calls.map(([name, input, id]) => ({ name, input, ...(id !== undefined && { id }) })) };
}

/** Everything textual in a request's messages (text blocks, tool inputs, tool results). */
export function messagesText(body) {
  const parts = [];
  const walk = (c) => {
    if (typeof c === 'string') parts.push(c);
    else if (Array.isArray(c)) c.forEach(walk);
    else if (c && typeof c === 'object') {
      if (typeof c.text === 'string') parts.push(c.text);
      if (c.type === 'tool_use') parts.push(JSON.stringify(c.input));
      if (c.type === 'tool_result') walk(c.content);
    }
  };
  for (const m of body?.messages ?? []) walk(m.content);
  return parts.join('\n');
}

/** The tool_result blocks of a request's messages, in order. */
export function toolResults(body) {
  const out = [];
  for (const m of body?.messages ?? []) {
    if (Array.isArray(m.content)) for (const c of m.content) if (c?.type === 'tool_result') out.push(c);
  }
  return out;
}

/** The text of a tool_result block's content. */
export function toolResultText(block) {
  const c = block?.content;
  if (typeof c === 'string') return c;
  if (Array.isArray(c)) return c.map((x) => (typeof x?.text === 'string' ? x.text : '')).join('');
  return '';
}

const estimate = (v) => (v === undefined || v === null ? 0 : Math.max(1, Math.ceil((typeof v === 'string' ? v : JSON.stringify(v)).length / 4)));

/**
 * Start the server on 127.0.0.1 (ephemeral port).
 * @param {Array|Function} script
 * @param {{ onExhausted?: 'error'|'repeat-last' }} [options]
 */
export async function startAnthropicServer(script, options = {}) {
  const { onExhausted = 'error' } = options;
  const requests = []; // model requests (bodies), in order
  const responses = []; // full message objects served
  const log = [];
  const errors = [];
  let counter = 0;
  let callCounter = 0;

  async function nextTurn(body, i) {
    if (typeof script === 'function') return script(body, i);
    if (i < script.length) return script[i];
    if (onExhausted === 'repeat-last' && script.length) return script[script.length - 1];
    throw new Error(`anthropic server: script exhausted at request #${i}`);
  }

  const server = http.createServer((req, res) => {
    handle(req, res).catch((err) => {
      errors.push(err);
      if (!res.headersSent) send(res, 400, { type: 'error', error: { type: 'invalid_request_error', message: String(err?.message ?? err) } });
      else res.end();
    });
  });

  async function handle(req, res) {
    const url = new URL(req.url, 'http://127.0.0.1');
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const raw = Buffer.concat(chunks).toString('utf8');
    if (req.method === 'POST' && url.pathname === '/v1/messages/count_tokens') {
      const body = JSON.parse(raw || '{}');
      log.push({ path: url.pathname, countTokens: true });
      return send(res, 200, { input_tokens: estimate(body.messages) + estimate(body.system) + estimate(body.tools) });
    }
    if (req.method !== 'POST' || url.pathname !== '/v1/messages') {
      log.push({ method: req.method, path: url.pathname, unexpected: true });
      return send(res, 404, { type: 'error', error: { type: 'not_found_error', message: `no route ${req.method} ${url.pathname}` } });
    }
    const body = JSON.parse(raw);
    const i = counter++;
    requests.push(body);
    log.push({ path: url.pathname, stream: body.stream === true, headers: req.headers });
    let turn = await nextTurn(body, i);
    if (typeof turn === 'string') turn = { text: turn };
    const content = [];
    if (turn.text) content.push({ type: 'text', text: String(turn.text) });
    for (const c of turn.calls ?? []) content.push({ type: 'tool_use', id: c.id ?? `toolu_${String(i).padStart(3, '0')}_${callCounter++}`, name: c.name, input: c.input ?? {} });
    const usage = {
      input_tokens: turn.usage?.input_tokens ?? estimate(body.messages) + estimate(body.system) + estimate(body.tools),
      output_tokens: turn.usage?.output_tokens ?? estimate(content),
    };
    const message = {
      id: `msg_${String(i).padStart(4, '0')}`,
      type: 'message',
      role: 'assistant',
      model: body.model ?? 'scripted-model',
      content,
      stop_reason: content.some((c) => c.type === 'tool_use') ? 'tool_use' : 'end_turn',
      stop_sequence: null,
      usage,
    };
    responses.push(message);
    if (body.stream !== true) return send(res, 200, message);
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    const ev = (type, data) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
    ev('message_start', { message: { ...message, content: [], stop_reason: null, usage: { input_tokens: usage.input_tokens, output_tokens: 1 } } });
    content.forEach((block, index) => {
      if (block.type === 'text') {
        ev('content_block_start', { index, content_block: { type: 'text', text: '' } });
        ev('content_block_delta', { index, delta: { type: 'text_delta', text: block.text } });
      } else {
        ev('content_block_start', { index, content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} } });
        ev('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) } });
      }
      ev('content_block_stop', { index });
    });
    ev('message_delta', { delta: { stop_reason: message.stop_reason, stop_sequence: null }, usage: { output_tokens: usage.output_tokens } });
    ev('message_stop', {});
    res.end();
  }

  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    responses,
    log,
    errors,
    inputTokens: () => responses.reduce((s, r) => s + r.usage.input_tokens, 0),
    close: () => new Promise((resolve) => { server.closeAllConnections?.(); server.close(() => resolve()); }),
  };
}

function send(res, status, obj) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(obj));
}
