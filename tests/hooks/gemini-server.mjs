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

import http from 'node:http';

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

export async function startGeminiServer(script) {
  const requests = [];
  const log = [];
  let turn = 0;
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', async () => {
      let body = null;
      try { body = JSON.parse(Buffer.concat(chunks).toString('utf8') || 'null'); } catch { body = null; }
      const path = (req.url || '').split('?')[0];
      log.push(`${req.method} ${req.url}`);
      if (req.method === 'POST' && path.endsWith(':countTokens')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ totalTokens: 10 }));
        return;
      }
      const stream = path.endsWith(':streamGenerateContent');
      if (req.method !== 'POST' || !(stream || path.endsWith(':generateContent'))) {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { code: 404, message: `no ${req.method} ${path}`, status: 'NOT_FOUND' } }));
        return;
      }
      const main = declaredNames(body).includes('run_shell_command');
      let answer;
      if (main) {
        requests.push(body);
        try { answer = await script(body, turn++); } catch (e) { answer = `script error: ${e && e.message}`; }
      } else {
        answer = { text: '{"reasoning":"scripted","next_speaker":"user"}' };
      }
      if (typeof answer === 'string') answer = { text: answer };
      const parts = [];
      if (answer.text) parts.push({ text: answer.text });
      for (const c of answer.calls || []) parts.push({ functionCall: { name: c.name, args: c.args || {} } });
      const response = {
        candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }],
        usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 },
        modelVersion: 'scripted',
      };
      if (!stream) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(response));
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify(response)}\r\n\r\n`);
      res.end();
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    log,
    get turns() { return turn; },
    close: () => new Promise((resolve) => { server.closeAllConnections?.(); server.close(() => resolve()); }),
  };
}
