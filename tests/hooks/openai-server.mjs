// Scripted OpenAI Responses API server (127.0.0.1 only) for the Codex CLI
// hook tests: the real `codex exec` talks to it through a custom model
// provider (`model_providers.<id>.base_url`, `wire_api = "responses"`).
//
// Dependency-free (node:http). `POST …/responses` answers with the next turn
// of a scripted model as Server-Sent Events (`response.created`, one
// `response.output_item.done` per output item, `response.completed`). Only
// requests of the agent's main loop (they declare tools) reach the script;
// any other request gets a short text answer; `GET …/models` an empty list.
//
// A turn is { text?, calls?: [{ name, args, id? }] } or a string (text only).

import http from 'node:http';

/** What each call returned, by call id, in a request's input (`function_call_output` items). */
export function callOutputs(body) {
  const out = {};
  for (const i of Array.isArray(body?.input) ? body.input : []) {
    if (i && (i.type === 'function_call_output' || i.type === 'custom_tool_call_output')) out[i.call_id] = outputText(i.output);
  }
  return out;
}

/** The texts of the developer messages of a request's input (where Codex puts a hook's additionalContext). */
export function developerTexts(body) {
  return (Array.isArray(body?.input) ? body.input : [])
    .filter((i) => i && i.type === 'message' && i.role === 'developer' && Array.isArray(i.content))
    .map((i) => i.content.map((c) => (c && typeof c.text === 'string' ? c.text : '')).join('\n'));
}

/** What a function_call_output says: a string, or the text of its content items. */
export function outputText(output) {
  if (typeof output === 'string') return output;
  if (Array.isArray(output)) return output.map((c) => (c && typeof c.text === 'string' ? c.text : '')).join('\n');
  if (output && typeof output.content === 'string') return output.content;
  return JSON.stringify(output);
}

/** The names of the tools a request declares. */
export function declaredTools(body) {
  return (Array.isArray(body?.tools) ? body.tools : []).map((t) => t?.name ?? t?.type).filter(Boolean);
}

function sse(res, data) {
  res.write(`event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`);
}

export async function startResponsesServer(script) {
  const requests = [];
  /** Per main-loop turn: the call ids the scripted response issued. */
  const issued = [];
  const log = [];
  let turn = 0;
  let seq = 0;
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', async () => {
      let body = null;
      try { body = JSON.parse(Buffer.concat(chunks).toString('utf8') || 'null'); } catch { body = null; }
      const path = (req.url || '').split('?')[0];
      log.push(`${req.method} ${path}`);
      if (req.method === 'GET' && path.endsWith('/models')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ object: 'list', data: [], models: [] }));
        return;
      }
      if (req.method !== 'POST' || !path.endsWith('/responses')) {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: `no ${req.method} ${path}`, type: 'not_found' } }));
        return;
      }
      const main = declaredTools(body).length > 0;
      let answer;
      if (main) {
        requests.push(body);
        try { answer = await script(body, turn++); } catch (e) { answer = `script error: ${e && e.message}`; }
      } else {
        answer = 'scripted';
      }
      if (typeof answer === 'string') answer = { text: answer };
      const id = `resp_${++seq}`;
      const calls = (answer.calls || []).map((c, i) => ({ ...c, id: c.id || `call_${seq}_${i}` }));
      if (main) issued.push(calls.map((c) => c.id));
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      sse(res, { type: 'response.created', response: { id } });
      if (answer.text) {
        sse(res, {
          type: 'response.output_item.done',
          item: { type: 'message', role: 'assistant', id: `msg_${seq}`, content: [{ type: 'output_text', text: answer.text }] },
        });
      }
      calls.forEach((c, i) => {
        sse(res, {
          type: 'response.output_item.done',
          item: { type: 'function_call', id: `fc_${seq}_${i}`, call_id: c.id, name: c.name, arguments: JSON.stringify(c.args || {}) },
        });
      });
      sse(res, {
        type: 'response.completed',
        response: { id, usage: { input_tokens: 10, input_tokens_details: null, output_tokens: 5, output_tokens_details: null, total_tokens: 15 } },
      });
      res.end();
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    issued,
    log,
    get turns() { return turn; },
    close: () => new Promise((resolve) => { server.closeAllConnections?.(); server.close(() => resolve()); }),
  };
}
