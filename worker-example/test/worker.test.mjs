// End-to-end tests of the Worker example: the Worker is bundled (the way
// wrangler does: esbuild with the `workerd` export condition, the .wasm kept
// as a separate CompiledWasm module) and run in workerd through miniflare 4,
// with its Durable Objects, against the repo's scripted Responses server
// playing the model. Everything listens on 127.0.0.1 only.
//
// Needs the built package in pkg/ (`bash scripts/build-pkg.sh`) and the repo's
// dev dependencies (`bash scripts/install-tools.sh npm`).
//
// WORKER_EXAMPLE_BUNDLER=wrangler bundles with `wrangler deploy --dry-run`
// instead (wrangler then contacts the npm registry for its update check).
// WORKER_EXAMPLE_VERBOSE=1 echoes the Worker's console output.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { copyFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const HERE = dirname(fileURLToPath(import.meta.url));
const EXAMPLE = resolve(HERE, '..');
const ROOT = resolve(EXAMPLE, '..');
const PKG = join(ROOT, 'pkg');

const { startScriptedServer, functionCall, functionCallOutputs, text } = await import(join(ROOT, 'tests/e2e/scripted-server.mjs'));

const INVOICE = 'INV-2291';
const TIMEOUT_ERROR = `Billing service timed out after 30000ms while fetching invoice ${INVOICE}`;
const GIVE_UP = `I could not retrieve invoice ${INVOICE}: the billing service keeps timing out.`;
const INVALID_STATE_WARNING = '[DoomLoop] Ignoring invalid persisted doom-loop state';
const REQUEST_TIMEOUT_MS = 30_000;

/** The billing "model": calls get_invoice({invoice_id: INV-2291}) every turn unless tools are forbidden. */
const billingModel = (body) =>
  body.tool_choice === 'none' ? text(GIVE_UP) : functionCall('get_invoice', { invoice_id: INVOICE });

const compatibilityDate = /^compatibility_date\s*=\s*"([0-9-]+)"/m.exec(readFileSync(join(EXAMPLE, 'wrangler.toml'), 'utf8'))[1];

let mf;
let srv;
let workDir;
let model = billingModel; // the scripted model of the current test
const logs = []; // the Worker's console output, {level, message}

/** Bundles src/index.js into `outdir` as wrangler would; returns the bundle's file name. */
async function bundle(outdir) {
  if (process.env.WORKER_EXAMPLE_BUNDLER === 'wrangler') {
    // wrangler resolves the package from worker-example/node_modules, as after `npm install`.
    const link = join(EXAMPLE, 'node_modules', 'doom-loop-wasm');
    if (!existsSync(link)) {
      mkdirSync(dirname(link), { recursive: true });
      symlinkSync(relative(dirname(link), PKG), link, 'dir');
    }
    await promisify(execFile)(join(ROOT, 'node_modules/.bin/wrangler'), ['deploy', '--dry-run', '--outdir', outdir], {
      cwd: EXAMPLE,
      env: { ...process.env, WRANGLER_SEND_METRICS: 'false', CI: '1' },
      timeout: 90_000,
    });
    return 'index.js';
  }
  // The package is found the way `npm install` (file:../pkg) lays it out:
  // node_modules/doom-loop-wasm -> pkg, here in a scratch directory.
  const modules = join(workDir, 'node_modules');
  mkdirSync(modules, { recursive: true });
  symlinkSync(PKG, join(modules, 'doom-loop-wasm'), 'dir');
  const { build } = await import('esbuild');
  await build({
    entryPoints: [join(EXAMPLE, 'src/index.js')],
    outfile: join(outdir, 'index.js'),
    bundle: true,
    format: 'esm',
    target: 'es2022',
    conditions: ['workerd', 'worker', 'browser'], // wrangler's build conditions
    nodePaths: [modules],
    external: ['cloudflare:*'],
    logLevel: 'silent',
    plugins: [
      {
        // What wrangler does with a CompiledWasm import: keep it a separate module next to the bundle.
        name: 'compiled-wasm',
        setup(b) {
          b.onResolve({ filter: /\.wasm$/ }, async (args) => {
            const source = resolve(args.resolveDir, args.path);
            await copyFile(source, join(outdir, basename(source)));
            return { path: `./${basename(source)}`, external: true };
          });
        },
      },
    ],
  });
  return 'index.js';
}

/** POSTs /chat; returns {status, body}. */
async function chat(conversationId, message) {
  const res = await mf.dispatchFetch('http://worker.test/chat', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ conversationId, message }),
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  return { status: res.status, body: await res.json() };
}

async function getState(conversationId) {
  const res = await mf.dispatchFetch(`http://worker.test/state/${encodeURIComponent(conversationId)}`, {
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  return { status: res.status, body: await res.json() };
}

/** Runs `fn` and returns what it returned plus the scripted-server requests it caused. */
async function counting(fn) {
  const from = srv.requests.length;
  const value = await fn();
  return { value, requests: srv.requests.slice(from) };
}

async function durableObject(conversationId) {
  const ns = await mf.getDurableObjectNamespace('CONVERSATIONS');
  return ns.get(ns.idFromName(conversationId));
}

const actions = (verdicts) => verdicts.map((v) => `${v.action}@${v.streak}`);

before(async () => {
  for (const file of ['workerd.mjs', 'doom_loop.js', 'doom_loop_bg.wasm', 'api.js', 'session.js', 'adapters/openrouter.js']) {
    assert.ok(existsSync(join(PKG, file)), `pkg/${file} is missing: run \`bash scripts/build-pkg.sh\` first`);
  }
  workDir = mkdtempSync(join(tmpdir(), 'doom-loop-worker-'));
  const outdir = join(workDir, 'dist');
  mkdirSync(outdir);
  const main = await bundle(outdir);
  // The workerd entry of the package was picked: its .wasm is a module beside the bundle.
  // (wrangler prefixes the file name with a content hash.)
  assert.ok(
    readdirSync(outdir).some((f) => f.endsWith('doom_loop_bg.wasm')),
    'the bundle should import doom_loop_bg.wasm as a module',
  );
  srv = await startScriptedServer((body, i) => model(body, i));
  const { Miniflare } = await import('miniflare');
  mf = new Miniflare({
    host: '127.0.0.1',
    port: 0,
    cf: false, // otherwise miniflare downloads request.cf data from the internet
    telemetry: { enabled: false },
    modules: true,
    scriptPath: join(outdir, main),
    modulesRoot: outdir,
    modulesRules: [
      { type: 'ESModule', include: ['**/*.js'] },
      { type: 'CompiledWasm', include: ['**/*.wasm'] },
    ],
    compatibilityDate,
    durableObjects: { CONVERSATIONS: { className: 'Conversation', useSQLite: true } },
    bindings: {
      OPENROUTER_BASE_URL: srv.url,
      OPENROUTER_API_KEY: 'test-key',
      OPENROUTER_MODEL: 'openai/gpt-4o-mini',
      MAX_TOOL_ROUNDS: '12',
      MODEL_TIMEOUT_MS: '10000',
    },
    structuredWorkerdLogs: true,
    handleStructuredLogs: ({ level, message }) => {
      logs.push({ level, message });
      if (process.env.WORKER_EXAMPLE_VERBOSE) process.stderr.write(`[workerd ${level}] ${message}\n`);
    },
  });
  await mf.ready;
}, { timeout: 120_000 });

after(async () => {
  await mf?.dispose();
  await srv?.close();
  if (workDir) rmSync(workDir, { recursive: true, force: true });
}, { timeout: 30_000 });

describe('worker-example in workerd (miniflare 4, Durable Objects)', { timeout: 120_000 }, () => {
  test('billing loop: 3rd identical call blocked, run stopped with reason doom_loop', { timeout: 60_000 }, async () => {
    model = billingModel;
    const { value: res, requests } = await counting(() => chat('billing-1', `Why was I charged twice? Look up invoice ${INVOICE}.`));
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const out = res.body;
    assert.equal(out.endReason, 'doom_loop');
    assert.deepEqual(actions(out.verdicts), ['observe@2', 'block@3', 'block@4', 'block@5', 'stop@6']);
    assert.equal(out.stopVerdict.action, 'stop');
    assert.equal(out.stopVerdict.toolName, 'get_invoice');
    // #0 initial, #1..#5 after rounds 1-5, #6 the SDK's forced final answer.
    assert.equal(requests.length, 7);
    assert.equal(out.modelRequests, 7);
    assert.deepEqual(requests.map((b) => b.tool_choice), [...Array(6).fill(undefined), 'none']);
    assert.equal(out.text, GIVE_UP);
    // Only the first two calls ran; the 3rd identical call was the first refused.
    assert.equal(out.toolExecutions, 2);
    assert.deepEqual(out.toolCalls.map((c) => c.status), ['executed', 'executed', 'refused', 'refused', 'refused', 'refused']);
    assert.equal(out.toolCalls[1].error, TIMEOUT_ERROR);
    assert.match(out.toolCalls[2].error, /^Doom loop suspected: tool "get_invoice" was invoked in 3 consecutive rounds/);
    assert.deepEqual(out.toolCalls[0].arguments, { invoice_id: INVOICE });
    // The model saw the verdict instead of an execution from round 3 on.
    const lastOutput = (body) => JSON.parse(body.input.filter((i) => i.type === 'function_call_output').at(-1).output).error;
    assert.equal(lastOutput(requests[2]), TIMEOUT_ERROR);
    assert.equal(lastOutput(requests[3]), out.verdicts[1].message);

    // GET /state returns the persisted blob: the monitor's state plus the stop verdict.
    const state = await getState('billing-1');
    assert.equal(state.status, 200);
    assert.deepEqual(state.body, out.doomLoop);
    assert.equal(state.body.tools.get_invoice.streak, 6);
    assert.deepEqual(state.body.stopVerdict, out.stopVerdict);
    assert.deepEqual(Object.keys(state.body).sort(), ['stopVerdict', 'tools']);
  });

  test('the Durable Object keeps the evidence: the next request continues the streak', { timeout: 60_000 }, async () => {
    // Request 1: two rounds of the same call, then the model answers in text.
    model = (body) => (functionCallOutputs(body).length >= 2 ? text('The billing service is down, sorry.') : billingModel(body));
    const first = await counting(() => chat('resume-1', `Look up invoice ${INVOICE}.`));
    assert.equal(first.value.status, 200, JSON.stringify(first.value.body));
    assert.equal(first.value.body.endReason, 'complete');
    assert.equal(first.value.body.toolExecutions, 2);
    assert.deepEqual(actions(first.value.body.verdicts), ['observe@2']);
    assert.equal(first.requests.length, 3);
    assert.equal((await getState('resume-1')).body.tools.get_invoice.streak, 2);

    // Request 2, same conversation: its first repeat is streak 3 (blocked), not 1.
    model = billingModel;
    const second = await counting(() => chat('resume-1', 'Please try again.'));
    assert.equal(second.value.status, 200, JSON.stringify(second.value.body));
    const out = second.value.body;
    assert.deepEqual(actions(out.verdicts), ['block@3', 'block@4', 'block@5', 'stop@6']);
    assert.equal(out.toolExecutions, 0);
    assert.equal(out.toolCalls[0].status, 'refused');
    assert.equal(out.endReason, 'doom_loop');
    // The request carried the conversation so far (history + the new message).
    assert.ok(second.requests[0].input.some((i) => i.role === 'user' && i.content === 'Please try again.'));
    assert.equal(second.requests[0].input.filter((i) => i.type === 'function_call_output').length, 2);

    // A different conversation is a different Durable Object: it starts at 1.
    const other = await chat('resume-2', `Look up invoice ${INVOICE}.`);
    assert.deepEqual(actions(other.body.verdicts), ['observe@2', 'block@3', 'block@4', 'block@5', 'stop@6']);
    assert.equal(other.body.toolExecutions, 2);
  });

  test('a stopped conversation stays suspicious: the next turn is stopped at its first reissue', { timeout: 60_000 }, async () => {
    model = billingModel;
    assert.equal((await chat('stopped-1', `Look up invoice ${INVOICE}.`)).body.endReason, 'doom_loop');
    const { value: res, requests } = await counting(() => chat('stopped-1', 'Please try the invoice again.'));
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(actions(res.body.verdicts), ['stop@7']);
    assert.equal(res.body.endReason, 'doom_loop');
    assert.equal(res.body.toolExecutions, 0);
    assert.equal(requests.length, 2);
    assert.equal(requests[1].tool_choice, 'none');
    assert.equal((await getState('stopped-1')).body.tools.get_invoice.streak, 7);
  });

  test('a corrupt stored blob is ignored with the reference warning; the request still succeeds', { timeout: 60_000 }, async () => {
    // A real stored conversation from an ordinary turn...
    model = () => text('Hello! How can I help?');
    const warm = await chat('corrupt-1', 'hi');
    assert.equal(warm.status, 200, JSON.stringify(warm.body));
    assert.equal(warm.body.endReason, 'complete');
    const stub = await durableObject('corrupt-1');
    const stored = await stub.conversationState();
    assert.ok(Array.isArray(stored.messages));

    for (const corrupt of ['not a blob', [1, 2, 3]]) {
      // ...whose detector blob is then corrupted in storage.
      await stub.replaceConversationState({ ...stored, doomLoop: corrupt });
      assert.deepEqual((await getState('corrupt-1')).body, corrupt);
      model = billingModel;
      const seen = logs.length;
      const { value: res, requests } = await counting(() => chat('corrupt-1', `Look up invoice ${INVOICE}.`));
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const warnings = logs.slice(seen).filter((l) => l.level === 'warn').map((l) => l.message);
      assert.deepEqual(warnings, [INVALID_STATE_WARNING]);
      // Judged afresh: the same ladder as a new conversation.
      assert.equal(res.body.endReason, 'doom_loop');
      assert.deepEqual(actions(res.body.verdicts), ['observe@2', 'block@3', 'block@4', 'block@5', 'stop@6']);
      assert.equal(res.body.toolExecutions, 2);
      assert.equal(requests.length, 7);
      const state = await getState('corrupt-1');
      assert.equal(state.body.tools.get_invoice.streak, 6);
    }
  });

  test('bad requests and unknown state', { timeout: 30_000 }, async () => {
    const bad = await mf.dispatchFetch('http://worker.test/chat', { method: 'POST', body: 'nope', signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
    assert.equal(bad.status, 400);
    await bad.arrayBuffer();
    assert.equal((await chat('', 'hi')).status, 400);
    assert.equal((await chat('x', '')).status, 400);
    assert.equal((await getState('never-seen')).status, 404);
    const wrong = await mf.dispatchFetch('http://worker.test/elsewhere', { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
    assert.equal(wrong.status, 404);
    await wrong.arrayBuffer();
  });
});
