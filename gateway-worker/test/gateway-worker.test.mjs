// The gateway Worker template in workerd (miniflare 4): bundled as wrangler
// bundles it (esbuild, the `workerd` condition, the full .wasm kept as a
// CompiledWasm module), in front of the repo's scripted chat completions
// server on 127.0.0.1; a billing agent's loop talks to the Worker.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));
const TEMPLATE = resolve(HERE, '..');
const ROOT = resolve(TEMPLATE, '..');
const PKG = join(ROOT, 'pkg');
const { startChatServer, call } = await import(join(ROOT, 'tests/e2e/chat-completions-server.mjs'));
const { bundleLikeWrangler } = await import(join(ROOT, 'tests/e2e/workerd-bundle.mjs'));
const compatibilityDate = /^compatibility_date\s*=\s*"([0-9-]+)"/m.exec(readFileSync(join(TEMPLATE, 'wrangler.toml'), 'utf8'))[1];
const REFUSED = /Doom loop suspected: tool "get_invoice" was invoked in (\d+) consecutive rounds/;

let mf;
let srv;
let workDir;
const logs = [];

/** The billing agent's loop over chat completions, through the Worker. */
async function billingAgent(maxTurns = 12) {
  const messages = [{ role: 'user', content: 'Refund invoice INV-2291.' }];
  const tools = [{ type: 'function', function: { name: 'get_invoice', parameters: { type: 'object', properties: { invoice_id: { type: 'string' } } } } }];
  for (let turn = 0; turn < maxTurns; turn++) {
    const res = await mf.dispatchFetch('http://gateway.test/v1/chat/completions', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer sk-test' },
      body: JSON.stringify({ model: 'gpt-test', messages, tools }),
    });
    assert.equal(res.status, 200);
    const message = (await res.json()).choices[0].message;
    messages.push({ role: 'assistant', content: message.content ?? null, ...(message.tool_calls?.length && { tool_calls: message.tool_calls }) });
    if (!message.tool_calls?.length) return { final: message.content, turns: turn + 1, verdict: res.headers.get('x-doomloop-verdict') };
    for (const tc of message.tool_calls) messages.push({ role: 'tool', tool_call_id: tc.id, content: 'error: invoice INV-2291 not found' });
  }
  return { final: undefined, turns: maxTurns };
}

before(async () => {
  for (const file of ['gateway.mjs', 'replay-workerd.mjs', 'doom_loop_full_bg.wasm']) {
    assert.ok(existsSync(join(PKG, file)), `pkg/${file} is missing: run \`make build\` first`);
  }
  workDir = mkdtempSync(join(tmpdir(), 'doom-loop-gateway-worker-'));
  const outdir = join(workDir, 'dist');
  mkdirSync(outdir);
  await bundleLikeWrangler({ entry: join(TEMPLATE, 'src/index.js'), outdir, workDir, pkg: PKG });
  assert.ok(readdirSync(outdir).includes('doom_loop_full_bg.wasm'), 'the bundle imports the full module as a CompiledWasm module');
  srv = await startChatServer(() => ({ calls: [call('get_invoice', { invoice_id: 'INV-2291' })] }));
  const { Miniflare } = await import('miniflare');
  mf = new Miniflare({
    host: '127.0.0.1',
    port: 0,
    cf: false,
    telemetry: { enabled: false },
    modules: true,
    scriptPath: join(outdir, 'index.js'),
    modulesRoot: outdir,
    modulesRules: [
      { type: 'ESModule', include: ['**/*.js'] },
      { type: 'CompiledWasm', include: ['**/*.wasm'] },
    ],
    compatibilityDate,
    bindings: { UPSTREAM: srv.url.replace(/\/v1$/, ''), DOOM_LOOP_OPTION: 'true' },
    structuredWorkerdLogs: true,
    handleStructuredLogs: ({ level, message }) => {
      logs.push({ level, message });
    },
  });
  await mf.ready;
}, { timeout: 120_000 });

after(async () => {
  await mf?.dispose();
  await srv?.close();
  if (workDir) rmSync(workDir, { recursive: true, force: true });
}, { timeout: 30_000 });

describe('the gateway Worker in workerd', { timeout: 120_000 }, () => {
  test('the billing loop: refused from the third call, the seventh request answered by the Worker with the stop', async () => {
    const run = await billingAgent();
    assert.equal(srv.requests.length, 6, `${srv.requests.length} model requests`);
    assert.equal(run.turns, 7);
    assert.ok(run.final?.startsWith('This run was stopped by doom-loop detection.'), run.final);
    assert.equal(run.verdict, 'stop');
    const results = srv.requests.map((body) => body.messages.filter((m) => m.role === 'tool').map((m) => m.content));
    for (const [request, streak] of [[3, '3'], [4, '4'], [5, '5']]) {
      assert.equal(results[request][request - 1].match(REFUSED)?.[1], streak, `request ${request + 1}`);
    }
    assert.ok(logs.some((l) => l.message.includes('answered by the gateway')), JSON.stringify(logs));
  });
});
