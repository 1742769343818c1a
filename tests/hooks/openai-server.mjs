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
// A turn is { text?, calls?: [{ name, args, id? }] } or a string (text only);
// a call with a string `input` instead of `args` is a free-form tool's
// `custom_tool_call` (Codex's apply_patch).
//
// `{ completedOutput: true }` also lists the output items in
// `response.completed` (GitHub Copilot CLI reads them there; Codex reads
// the `output_item.done` events).

import { startScriptedServer } from './scripted-server.mjs';

/** What each call returned, by call id, in a request's input (`function_call_output` items). */
export function callOutputs(body) {
  const out = {};
  for (const i of Array.isArray(body?.input) ? body.input : []) {
    if (i && (i.type === 'function_call_output' || i.type === 'custom_tool_call_output')) out[i.call_id] = outputText(i.output);
  }
  return out;
}

/** Per model request after the first: what each call of the previous response returned, in the order the server issued them. */
export function issuedOutputs(run) {
  return run.requests.slice(1).map((body, i) => {
    const outputs = callOutputs(body);
    return (run.server.issued[i] || []).map((id) => outputs[id]);
  });
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

function utility(method, path) {
  if (method === 'GET' && path.endsWith('/models')) return { body: { object: 'list', data: [], models: [] } };
  if (method !== 'POST' || !path.endsWith('/responses')) {
    return { status: 404, body: { error: { message: `no ${method} ${path}`, type: 'not_found' } } };
  }
  return null;
}

export async function startResponsesServer(script, { completedOutput = false } = {}) {
  /** Per main-loop turn: the call ids the scripted response issued. */
  const issued = [];
  let seq = 0;
  const respond = (res, answer, { main }) => {
    const id = `resp_${++seq}`;
    const output = [];
    const item = (value) => {
      output.push(value);
      sse(res, { type: 'response.output_item.done', output_index: output.length - 1, item: value });
    };
    const calls = (answer.calls || []).map((c, i) => ({ ...c, id: c.id || `call_${seq}_${i}` }));
    if (main) issued.push(calls.map((c) => c.id));
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    sse(res, { type: 'response.created', response: { id } });
    if (answer.text) {
      item({ type: 'message', role: 'assistant', id: `msg_${seq}`, content: [{ type: 'output_text', text: answer.text }] });
    }
    calls.forEach((c, i) => {
      // A free-form (custom) tool's call carries its raw text as `input`.
      if (typeof c.input === 'string') item({ type: 'custom_tool_call', id: `ctc_${seq}_${i}`, call_id: c.id, name: c.name, input: c.input });
      else item({ type: 'function_call', id: `fc_${seq}_${i}`, call_id: c.id, name: c.name, arguments: JSON.stringify(c.args || {}) });
    });
    const usage = { input_tokens: 10, input_tokens_details: null, output_tokens: 5, output_tokens_details: null, total_tokens: 15 };
    sse(res, {
      type: 'response.completed',
      response: completedOutput ? { id, object: 'response', status: 'completed', output, usage } : { id, usage },
    });
    res.end();
  };
  const server = await startScriptedServer(script, { utility, isMain: (body) => declaredTools(body).length > 0, sideAnswer: 'scripted', respond });
  return Object.assign(server, { url: `http://127.0.0.1:${server.port}/v1`, issued });
}
