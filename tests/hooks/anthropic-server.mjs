// Scripted Anthropic Messages API server (127.0.0.1 only) for the Claude Code
// hook tests: the real `claude -p` talks to it through ANTHROPIC_BASE_URL.
//
// Dependency-free (node:http). `POST /v1/messages` answers with the next turn
// of a scripted model, as Server-Sent Events when the request asks for a
// stream (Claude Code always does), else as one JSON message. Only requests
// of the agent's main loop (they carry the `Bash` tool) reach the script;
// any side request (titles, summaries) gets a short text answer, and
// `POST /v1/messages/count_tokens` a small count.
//
//   const srv = await startAnthropicServer((body, turn) => ({ calls: [{ name: 'Bash', input: { command: 'ls' } }] }));
//   ... ANTHROPIC_BASE_URL=srv.url ...
//   await srv.close();
//
// A turn is { text?, calls?: [{ name, input, id? }] } or a string (text only).
// A turn with calls ends with stop_reason "tool_use", otherwise "end_turn".

import { sendJson, startScriptedServer } from './scripted-server.mjs';

/**
 * The tool_result blocks of the last user message of a request (what the
 * tools answered; a system reminder Claude Code appends after it is skipped).
 */
export function lastToolResults(body) {
  const msgs = Array.isArray(body?.messages) ? body.messages : [];
  const last = msgs.findLast((m) => m && m.role !== 'system');
  if (!last || last.role !== 'user' || !Array.isArray(last.content)) return [];
  return last.content.filter((b) => b && b.type === 'tool_result').map((b) => ({
    id: b.tool_use_id,
    isError: b.is_error === true,
    text: typeof b.content === 'string' ? b.content
      : Array.isArray(b.content) ? b.content.map((c) => (c && typeof c.text === 'string' ? c.text : '')).join('\n') : '',
  }));
}

function sse(res, event, data) {
  res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

function utility(method, path) {
  if (method === 'POST' && path.endsWith('/count_tokens')) return { body: { input_tokens: 10 } };
  if (method !== 'POST' || !path.endsWith('/v1/messages')) {
    return { status: 404, body: { type: 'error', error: { type: 'not_found_error', message: `no ${method} ${path}` } } };
  }
  return null;
}

export async function startAnthropicServer(script) {
  let idSeq = 0;
  const respond = async (res, answer, { body }) => {
    const content = [];
    if (answer.text) content.push({ type: 'text', text: answer.text });
    for (const c of answer.calls || []) content.push({ type: 'tool_use', id: c.id || `toolu_${String(++idSeq).padStart(4, '0')}`, name: c.name, input: c.input || {} });
    const stop = (answer.calls || []).length ? 'tool_use' : 'end_turn';
    const message = { id: `msg_${String(++idSeq).padStart(4, '0')}`, type: 'message', role: 'assistant', model: body?.model || 'scripted', content, stop_reason: stop, stop_sequence: null, usage: { input_tokens: 10, output_tokens: 5 } };
    if (!body?.stream) return sendJson(res, 200, message);
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    sse(res, 'message_start', { type: 'message_start', message: { ...message, content: [], stop_reason: null, usage: { input_tokens: 10, output_tokens: 1 } } });
    for (let index = 0; index < content.length; index++) {
      const block = content[index];
      if (index > 0 && answer.blockDelayMs) await new Promise((r) => setTimeout(r, answer.blockDelayMs));
      if (block.type === 'text') {
        sse(res, 'content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
        sse(res, 'content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text: block.text } });
      } else {
        sse(res, 'content_block_start', { type: 'content_block_start', index, content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} } });
        sse(res, 'content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) } });
      }
      sse(res, 'content_block_stop', { type: 'content_block_stop', index });
    }
    sse(res, 'message_delta', { type: 'message_delta', delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 5 } });
    sse(res, 'message_stop', { type: 'message_stop' });
    res.end();
  };
  const isMain = (body) => Array.isArray(body?.tools) && body.tools.some((t) => t && t.name === 'Bash');
  const server = await startScriptedServer(script, { utility, isMain, sideAnswer: 'ok', respond });
  return Object.assign(server, { url: `http://127.0.0.1:${server.port}` });
}
