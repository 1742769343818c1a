// End-to-end tests of the Worker example: the Worker is bundled (the way
// wrangler does: esbuild with the `workerd` export condition, Node built-ins
// left to workerd's nodejs_compat, the .wasm kept as a separate CompiledWasm
// module) and run in workerd through miniflare 4, with its Durable Objects
// (the Cloudflare `agents` AIChatAgent), against the repo's scripted Chat
// Completions server playing the model. Everything listens on 127.0.0.1 only.
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
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const HERE = dirname(fileURLToPath(import.meta.url));
const EXAMPLE = resolve(HERE, '..');
const ROOT = resolve(EXAMPLE, '..');
const PKG = join(ROOT, 'pkg');

const { startChatServer, toolMessages } = await import(join(ROOT, 'tests/e2e/chat-completions-server.mjs'));
const { bundleLikeWrangler } = await import(join(ROOT, 'tests/e2e/workerd-bundle.mjs'));

const INVOICE = 'INV-2291';
const TIMEOUT_ERROR = `Billing service timed out after 30000ms while fetching invoice ${INVOICE}`;
const GIVE_UP = `I could not retrieve invoice ${INVOICE}: the billing service keeps timing out.`;
const INVALID_STATE_WARNING = '[DoomLoop] Ignoring invalid persisted doom-loop state';
const REQUEST_TIMEOUT_MS = 30_000;

/** The billing "model": calls get_invoice({invoice_id: INV-2291}) every turn unless tools are forbidden. */
const billingModel = (body) =>
  body.tool_choice === 'none' ? GIVE_UP : { calls: [{ name: 'get_invoice', args: { invoice_id: INVOICE } }] };

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
  return bundleLikeWrangler({ entry: join(EXAMPLE, 'src/index.js'), outdir, workDir, pkg: PKG });
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

/** The conversation's BillingAgent (already named by an earlier /chat through getAgentByName). */
async function durableObject(conversationId) {
  const ns = await mf.getDurableObjectNamespace('BillingAgent');
  return ns.get(ns.idFromName(conversationId));
}

const actions = (verdicts) => verdicts.map((v) => `${v.action}@${v.streak}`);

before(async () => {
  for (const file of ['workerd.mjs', 'doom_loop.js', 'doom_loop_bg.wasm', 'session.js', 'cloudflare-agents.mjs', 'ai-sdk.mjs']) {
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
  srv = await startChatServer((body, i) => model(body, i));
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
    compatibilityFlags: ['nodejs_compat'],
    durableObjects: { BillingAgent: { className: 'BillingAgent', useSQLite: true } },
    bindings: {
      OPENROUTER_BASE_URL: srv.url,
      OPENROUTER_API_KEY: 'test-key',
      OPENROUTER_MODEL: 'openai/gpt-4o-mini',
      MAX_TOOL_ROUNDS: '12',
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

describe('worker-example in workerd (miniflare 4, a Cloudflare agents AIChatAgent)', { timeout: 120_000 }, () => {
  test('billing loop: 3rd identical call refused, the run stopped at the 6th (reason doom_loop)', { timeout: 60_000 }, async () => {
    model = billingModel;
    const { value: res, requests } = await counting(() => chat('billing-1', `Why was I charged twice? Look up invoice ${INVOICE}.`));
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const out = res.body;
    assert.equal(out.endReason, 'doom_loop');
    assert.deepEqual(actions(out.verdicts), ['observe@2', 'block@3', 'block@4', 'block@5', 'stop@6']);
    assert.equal(out.stopVerdict.action, 'stop');
    assert.equal(out.stopVerdict.toolName, 'get_invoice');
    // Six responses, each one call; the 6th call is refused and no 7th request is made.
    assert.equal(requests.length, 6);
    assert.equal(out.modelRequests, 6);
    assert.equal(out.toolExecutions, 2);
    assert.deepEqual(out.toolCalls.map((c) => c.status), ['executed', 'executed', 'refused', 'refused', 'refused', 'refused']);
    assert.ok(out.toolCalls[1].output.includes(TIMEOUT_ERROR), out.toolCalls[1].output);
    assert.match(out.toolCalls[2].output, /^Doom loop suspected: tool "get_invoice" was invoked in 3 consecutive rounds/);
    assert.deepEqual(out.toolCalls[0].arguments, { invoice_id: INVOICE });
    // The model read the verdict instead of an execution from round 3 on.
    const lastOutput = (body) => toolMessages(body).at(-1).content;
    assert.ok(lastOutput(requests[2]).includes(TIMEOUT_ERROR));
    assert.equal(lastOutput(requests[3]), out.verdicts[1].message);

    // GET /state returns the blob the agent keeps in its own state.
    const state = await getState('billing-1');
    assert.equal(state.status, 200);
    assert.deepEqual(state.body, out.doomLoop);
    assert.equal(state.body.tools.get_invoice.streak, 6);
    assert.deepEqual(state.body.stopVerdict, out.stopVerdict);
  });

  test('the agent state keeps the evidence: the next turn continues the streak', { timeout: 60_000 }, async () => {
    // Turn 1: two rounds of the same call, then the model answers in text.
    model = (body) => (toolMessages(body).length >= 2 ? 'The billing service is down, sorry.' : billingModel(body));
    const first = await counting(() => chat('resume-1', `Look up invoice ${INVOICE}.`));
    assert.equal(first.value.status, 200, JSON.stringify(first.value.body));
    assert.equal(first.value.body.endReason, 'complete');
    assert.equal(first.value.body.text, 'The billing service is down, sorry.');
    assert.equal(first.value.body.toolExecutions, 2);
    assert.deepEqual(actions(first.value.body.verdicts), ['observe@2']);
    assert.equal(first.requests.length, 3);
    assert.equal((await getState('resume-1')).body.tools.get_invoice.streak, 2);

    // Turn 2, same conversation: its first repeat is streak 3 (refused), not 1.
    model = billingModel;
    const second = await counting(() => chat('resume-1', 'Please try again.'));
    assert.equal(second.value.status, 200, JSON.stringify(second.value.body));
    const out = second.value.body;
    assert.deepEqual(actions(out.verdicts), ['block@3', 'block@4', 'block@5', 'stop@6']);
    assert.equal(out.toolExecutions, 0);
    assert.equal(out.toolCalls[0].status, 'refused');
    assert.equal(out.endReason, 'doom_loop');
    // The request carried the conversation so far (the agent's messages + the new one).
    assert.ok(second.requests[0].messages.some((m) => m.role === 'user' && JSON.stringify(m.content).includes('Please try again.')));
    assert.equal(toolMessages(second.requests[0]).length, 2);

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
    assert.equal(requests.length, 1);
    assert.equal((await getState('stopped-1')).body.tools.get_invoice.streak, 7);
  });

  test('a corrupt stored blob is ignored with the reference warning; the turn still succeeds', { timeout: 60_000 }, async () => {
    model = () => 'Hello! How can I help?';
    const warm = await chat('corrupt-1', 'hi');
    assert.equal(warm.status, 200, JSON.stringify(warm.body));
    assert.equal(warm.body.endReason, 'complete');
    const stub = await durableObject('corrupt-1');

    for (const corrupt of ['not a blob', [1, 2, 3]]) {
      await stub.replaceDoomLoopState(corrupt);
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
      assert.equal(requests.length, 6);
      assert.equal((await getState('corrupt-1')).body.tools.get_invoice.streak, 6);
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
