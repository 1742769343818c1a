// The one local server skeleton behind the scripted model servers of the
// hook tests (anthropic-server.mjs, gemini-server.mjs, openai-server.mjs):
// each agent speaks its own wire format, but reading a request, telling the
// agent's main loop from its side requests, asking the script for the next
// turn and listening on 127.0.0.1 only are the same for all three.
//
// Dependency-free (node:http).
//
//   startScriptedServer(script, {
//     utility(method, path, body),  // { status?, body } for a fixed JSON answer (counts, 404s), else null
//     isMain(body),                 // a request of the agent's main loop: the script answers it
//     sideAnswer,                   // the turn every other request gets
//     respond(res, turn, context),  // writes the turn in the agent's format; context: { body, main, path }
//   })
//
// A turn is { text?, calls? } or a string (text only); a script that throws
// answers "script error: …", so a broken script shows in the agent's output
// instead of hanging it.

import http from 'node:http';

/** Writes one JSON answer. */
export function sendJson(res, status, value) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(value));
}

function readBody(req) {
  return new Promise((resolve) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      try { resolve(JSON.parse(Buffer.concat(chunks).toString('utf8') || 'null')); } catch { resolve(null); }
    });
  });
}

/**
 * Starts a scripted model server on 127.0.0.1 (a free port).
 *
 * @returns {Promise<{ port: number, requests: object[], log: string[], turns: number, close(): Promise<void> }>}
 */
export async function startScriptedServer(script, { utility, isMain, sideAnswer, respond }) {
  const requests = [];
  const log = [];
  let turn = 0;
  const server = http.createServer(async (req, res) => {
    const body = await readBody(req);
    const path = (req.url || '').split('?')[0];
    log.push(`${req.method} ${req.url}`);
    const fixed = utility(req.method, path, body);
    if (fixed) return sendJson(res, fixed.status ?? 200, fixed.body);
    const main = isMain(body);
    let answer = sideAnswer;
    if (main) {
      requests.push(body);
      try { answer = await script(body, turn++); } catch (e) { answer = `script error: ${e && e.message}`; }
    }
    if (typeof answer === 'string') answer = { text: answer };
    await respond(res, answer, { body, main, path });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: server.address().port,
    requests,
    log,
    get turns() { return turn; },
    close: () => new Promise((resolve) => { server.closeAllConnections?.(); server.close(() => resolve()); }),
  };
}
