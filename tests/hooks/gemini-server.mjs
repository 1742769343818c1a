// Scripted Gemini API server (127.0.0.1 only) for the Gemini CLI hook tests:
// the real `gemini -p` talks to it through GOOGLE_GEMINI_BASE_URL (its
// "gateway" auth type, read in the CLI's createContentGeneratorConfig).
//
// Dependency-free (node:http). `POST /v1beta/models/M:streamGenerateContent`
// (SSE, `?alt=sse`) and `:generateContent` answer requests of the agent's
// main loop (they carry function declarations including `run_shell_command`)
// with the next scripted turn; any other request (the CLI's own utility
// calls) gets a short text answer; `:countTokens` a small count.
//
// A turn is { text?, calls?: [{ name, args }] } or a string (text only).

import { sendJson, startScriptedServer } from './scripted-server.mjs';

/** The functionResponse parts of the last user content of a request. */
export function lastFunctionResponses(body) {
  const contents = Array.isArray(body?.contents) ? body.contents : [];
  const last = contents[contents.length - 1];
  if (!last || !Array.isArray(last.parts)) return [];
  return last.parts.filter((p) => p && p.functionResponse).map((p) => ({ name: p.functionResponse.name, response: p.functionResponse.response }));
}

function declaredNames(body) {
  const names = [];
  for (const t of Array.isArray(body?.tools) ? body.tools : []) {
    for (const f of Array.isArray(t?.functionDeclarations) ? t.functionDeclarations : []) if (f && f.name) names.push(f.name);
  }
  return names;
}

function utility(method, path) {
  if (method === 'POST' && path.endsWith(':countTokens')) return { body: { totalTokens: 10 } };
  if (method !== 'POST' || !(path.endsWith(':streamGenerateContent') || path.endsWith(':generateContent'))) {
    return { status: 404, body: { error: { code: 404, message: `no ${method} ${path}`, status: 'NOT_FOUND' } } };
  }
  return null;
}

function respond(res, answer, { path }) {
  const stream = path.endsWith(':streamGenerateContent');
  const parts = [];
  if (answer.text) parts.push({ text: answer.text });
  for (const c of answer.calls || []) parts.push({ functionCall: { name: c.name, args: c.args || {} } });
  const response = {
    candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }],
    usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 },
    modelVersion: 'scripted',
  };
  if (!stream) return sendJson(res, 200, response);
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.write(`data: ${JSON.stringify(response)}\r\n\r\n`);
  res.end();
}

export async function startGeminiServer(script) {
  const server = await startScriptedServer(script, {
    utility,
    isMain: (body) => declaredNames(body).includes('run_shell_command'),
    sideAnswer: { text: '{"reasoning":"scripted","next_speaker":"user"}' },
    respond,
  });
  return Object.assign(server, { url: `http://127.0.0.1:${server.port}` });
}
